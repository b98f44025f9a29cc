//! What a counter is: the named events and raw codes a user may ask for, how each is named in
//! results, and how one is read from the command line (`cycles`, `cs`, `r0443`, `hitm=r01d2`).

use std::fmt;
use std::str::FromStr;

/// One counter the user asked for.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CounterSpec {
    /// CPU cycles (`PERF_COUNT_HW_CPU_CYCLES`).
    Cycles,
    /// Retired instructions.
    Instructions,
    /// Cache references, as the CPU defines them (on x86: last-level cache references).
    CacheReferences,
    /// Cache misses, as the CPU defines them (on x86: last-level cache misses).
    CacheMisses,
    /// Retired branch instructions.
    Branches,
    /// Mispredicted branches.
    BranchMisses,
    /// L1 data cache read misses (`L1-dcache-load-misses`).
    L1dReadMisses,
    /// Last-level cache read misses (`LLC-load-misses`).
    LlcReadMisses,
    /// Context switches of the thread (software event).
    ContextSwitches,
    /// Migrations of the thread to another CPU (software event).
    CpuMigrations,
    /// Page faults of the thread (software event).
    PageFaults,
    /// CPU time of the thread in nanoseconds (software event).
    TaskClock,
    /// A CPU-specific event given by its raw code, as perf's `rNNNN` (e.g. coherence events).
    Raw {
        /// The raw `config` value (event select and unit mask, CPU specific).
        code: u64,
        /// The raw `config1` value (Intel's offcore response mask); 0 for most events.
        config1: u64,
        /// The name shown in results: `rNNNN`, or the label given as `label=rNNNN`.
        name: String,
    },
}

/// The named counters, in the order they are listed to users.
static NAMED: [CounterSpec; 12] = [
    CounterSpec::Cycles,
    CounterSpec::Instructions,
    CounterSpec::CacheReferences,
    CounterSpec::CacheMisses,
    CounterSpec::Branches,
    CounterSpec::BranchMisses,
    CounterSpec::L1dReadMisses,
    CounterSpec::LlcReadMisses,
    CounterSpec::ContextSwitches,
    CounterSpec::CpuMigrations,
    CounterSpec::PageFaults,
    CounterSpec::TaskClock,
];

impl CounterSpec {
    /// The name shown in results.
    pub fn name(&self) -> &str {
        match self {
            CounterSpec::Cycles => "cycles",
            CounterSpec::Instructions => "instructions",
            CounterSpec::CacheReferences => "cache-references",
            CounterSpec::CacheMisses => "cache-misses",
            CounterSpec::Branches => "branches",
            CounterSpec::BranchMisses => "branch-misses",
            CounterSpec::L1dReadMisses => "l1d-read-misses",
            CounterSpec::LlcReadMisses => "llc-read-misses",
            CounterSpec::ContextSwitches => "context-switches",
            CounterSpec::CpuMigrations => "cpu-migrations",
            CounterSpec::PageFaults => "page-faults",
            CounterSpec::TaskClock => "task-clock",
            CounterSpec::Raw { name, .. } => name,
        }
    }

    /// The raw encoding handed to the kernel, for raw events: `r0443`, or
    /// `r01b7,config1=0x10003c0002` when the event takes a `config1`. `None` for named events.
    pub fn event(&self) -> Option<String> {
        match self {
            CounterSpec::Raw {
                code, config1: 0, ..
            } => Some(raw_name(*code)),
            CounterSpec::Raw { code, config1, .. } => {
                Some(format!("{},config1={config1:#x}", raw_name(*code)))
            }
            _ => None,
        }
    }

    /// Whether the event is counted by the CPU's PMU (and so joins the hardware group).
    pub fn is_hardware(&self) -> bool {
        !matches!(
            self,
            CounterSpec::ContextSwitches
                | CounterSpec::CpuMigrations
                | CounterSpec::PageFaults
                | CounterSpec::TaskClock
        )
    }

    /// Whether the event only ever happens in kernel mode, so that counting user space only
    /// would silently give 0.
    pub(super) fn kernel_only(&self) -> bool {
        matches!(
            self,
            CounterSpec::ContextSwitches | CounterSpec::CpuMigrations
        )
    }

    /// Whether leaving the kernel out changes the count. The kernel's task clock adds up the
    /// thread's CPU time whatever the exclude bits say, so task-clock is never user-only.
    pub(super) fn mode_sensitive(&self) -> bool {
        !matches!(self, CounterSpec::TaskClock)
    }
}

impl fmt::Display for CounterSpec {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            CounterSpec::Raw {
                code,
                config1: 0,
                name,
            } if *name != raw_name(*code) => write!(f, "{name}={}", raw_name(*code)),
            CounterSpec::Raw {
                code,
                config1,
                name,
            } if *config1 != 0 => write!(f, "{name}={}:config1={config1:#x}", raw_name(*code)),
            spec => f.write_str(spec.name()),
        }
    }
}

/// perf's spelling of a raw code.
pub(super) fn raw_name(code: u64) -> String {
    format!("r{code:04x}")
}

/// The counter names `FromStr` accepts (besides raw codes and perf's aliases).
pub fn valid_names() -> Vec<&'static str> {
    NAMED.iter().map(CounterSpec::name).collect()
}

/// The tail of every parse error: what is accepted.
pub(super) fn valid_help() -> String {
    format!(
        "valid: {}, coherence (this CPU's coherence preset), or a raw event rNNNN (hex, as perf's rNNNN), optionally named label=rNNNN",
        valid_names().join(", ")
    )
}

/// Parses perf's `rNNNN` (1 to 16 hex digits after `r`).
fn parse_raw(s: &str) -> Option<u64> {
    let hex = s.strip_prefix('r')?;
    if hex.is_empty() || hex.len() > 16 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    u64::from_str_radix(hex, 16).ok()
}

impl FromStr for CounterSpec {
    type Err = String;

    /// Parses a counter name (`cycles`, `task-clock`, ...; perf's spellings such as
    /// `cpu-cycles`, `L1-dcache-load-misses` or `cs` are accepted too), a raw code `r0443`, or a
    /// named raw code `label=r0443`. Case does not matter.
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let item = s.trim().to_ascii_lowercase();
        if let Some(spec) = NAMED.iter().find(|spec| spec.name() == item) {
            return Ok(spec.clone());
        }
        let alias = match item.as_str() {
            "cpu-cycles" => Some(CounterSpec::Cycles),
            "branch-instructions" => Some(CounterSpec::Branches),
            "l1-dcache-load-misses" => Some(CounterSpec::L1dReadMisses),
            "llc-load-misses" => Some(CounterSpec::LlcReadMisses),
            "cs" => Some(CounterSpec::ContextSwitches),
            "migrations" => Some(CounterSpec::CpuMigrations),
            "faults" => Some(CounterSpec::PageFaults),
            _ => None,
        };
        if let Some(spec) = alias {
            return Ok(spec);
        }
        let (label, raw) = match item.split_once('=') {
            Some((label, raw)) => (Some(label.trim()), raw.trim()),
            None => (None, item.as_str()),
        };
        let looks_raw =
            raw.starts_with('r') && raw[1..].starts_with(|c: char| c.is_ascii_hexdigit());
        match parse_raw(raw) {
            Some(code) => {
                let name = match label {
                    None => raw_name(code),
                    Some(label) => check_label(label, s.trim())?.to_string(),
                };
                Ok(CounterSpec::Raw {
                    code,
                    config1: 0,
                    name,
                })
            }
            None if label.is_some() || looks_raw => Err(format!(
                "bad raw event '{}': expected r followed by 1 to 16 hex digits (e.g. r0443), \
                 optionally named label=rNNNN; {}",
                s.trim(),
                valid_help()
            )),
            None => Err(format!("unknown counter '{}'; {}", s.trim(), valid_help())),
        }
    }
}

/// A raw event's label must read as a name and not shadow a named counter or a raw code.
fn check_label<'a>(label: &'a str, item: &str) -> Result<&'a str, String> {
    let well_formed = label.starts_with(|c: char| c.is_ascii_alphabetic())
        && label
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    if !well_formed {
        return Err(format!(
            "bad label in '{item}': a label starts with a letter and holds letters, digits, \
             '-', '_' or '.'; {}",
            valid_help()
        ));
    }
    if NAMED.iter().any(|n| n.name() == label) || parse_raw(label).is_some() {
        return Err(format!(
            "bad label in '{item}': '{label}' is itself a counter name; pick another; {}",
            valid_help()
        ));
    }
    Ok(label)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_names_aliases_and_case() {
        for name in valid_names() {
            let spec: CounterSpec = name.parse().unwrap();
            assert_eq!(spec.name(), name);
        }
        assert_eq!("cycles".parse::<CounterSpec>(), Ok(CounterSpec::Cycles));
        assert_eq!(
            " Task-Clock ".parse::<CounterSpec>(),
            Ok(CounterSpec::TaskClock)
        );
        assert_eq!(
            "L1-dcache-load-misses".parse::<CounterSpec>(),
            Ok(CounterSpec::L1dReadMisses)
        );
        assert_eq!(
            "cs".parse::<CounterSpec>(),
            Ok(CounterSpec::ContextSwitches)
        );
        assert_eq!("cpu-cycles".parse::<CounterSpec>(), Ok(CounterSpec::Cycles));
    }

    #[test]
    fn parses_raw_codes() {
        assert_eq!(
            "r0443".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x0443,
                config1: 0,
                name: "r0443".into()
            })
        );
        assert_eq!(
            "R1D2".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x01d2,
                config1: 0,
                name: "r01d2".into()
            })
        );
        assert_eq!(
            "hitm=r01d2".parse::<CounterSpec>(),
            Ok(CounterSpec::Raw {
                code: 0x01d2,
                config1: 0,
                name: "hitm".into()
            })
        );
        let spec: CounterSpec = "hitm=r01d2".parse().unwrap();
        assert_eq!(spec.to_string(), "hitm=r01d2");
        assert_eq!(spec.to_string().parse::<CounterSpec>(), Ok(spec));
        assert!(CounterSpec::Raw {
            code: 1,
            config1: 0,
            name: "r0001".into()
        }
        .is_hardware());
        assert_eq!(
            "rffffffffffffffff"
                .parse::<CounterSpec>()
                .map(|s| s.to_string()),
            Ok("rffffffffffffffff".to_string())
        );
    }

    #[test]
    fn parse_errors_name_the_item_and_list_valid_names() {
        let err = "cyclez".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("'cyclez'"), "{err}");
        assert!(
            err.contains("cycles") && err.contains("task-clock"),
            "{err}"
        );
        assert!(!err.contains('\n'), "{err}");

        let err = "r04zz".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad raw event 'r04zz'"), "{err}");
        let err = "r".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("'r'"), "{err}");
        let err = "r12345678901234567".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("1 to 16 hex digits"), "{err}");
        let err = "cycles=r0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("itself a counter name"), "{err}");
        let err = "9x=r0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad label"), "{err}");
        let err = "hitm=0443".parse::<CounterSpec>().unwrap_err();
        assert!(err.contains("bad raw event"), "{err}");
    }
}
