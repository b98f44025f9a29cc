//! The list of counters a run measures: the default set, and a comma-separated list from the
//! command line, where `coherence` stands for this CPU's coherence preset.

use super::coherence::{self, Preset};
use super::spec::{valid_help, CounterSpec};

/// Parses a comma-separated counter list such as `cycles,instructions,r0443`; `coherence`
/// stands for the coherence preset of this machine's CPU ([`coherence::detect`]).
///
/// The error is one line naming the bad item and listing the valid names.
pub fn parse_list(s: &str) -> Result<Vec<CounterSpec>, String> {
    parse_list_with(s, coherence::detect)
}

/// [`parse_list`] with `coherence` expanded to the preset `preset` returns (called only when
/// the list names it).
pub fn parse_list_with(
    s: &str,
    preset: impl FnOnce() -> Preset,
) -> Result<Vec<CounterSpec>, String> {
    let mut preset = Some(preset);
    let mut specs: Vec<CounterSpec> = Vec::new();
    for item in s.split(',') {
        if item.trim().eq_ignore_ascii_case("coherence") {
            let Some(preset) = preset.take() else {
                return Err(format!(
                    "'coherence' listed twice in '{s}'; list each counter once"
                ));
            };
            for spec in preset().specs() {
                if let Some(other) = specs.iter().position(|o| o.name() == spec.name()) {
                    if specs[other] != spec {
                        return Err(format!(
                            "counter '{}' in '{s}' is also in the coherence preset with \
                             another code; drop one",
                            spec.name()
                        ));
                    }
                    continue;
                }
                specs.push(spec);
            }
            continue;
        }
        if item.trim().is_empty() {
            return Err(format!(
                "empty counter name in list '{s}'; give names separated by commas; {}",
                valid_help()
            ));
        }
        let spec: CounterSpec = item.parse()?;
        if specs.iter().any(|other| other.name() == spec.name()) {
            return Err(format!(
                "counter '{}' listed twice in '{s}'; list each counter once",
                spec.name()
            ));
        }
        specs.push(spec);
    }
    Ok(specs)
}

/// The counters measured when the user names none: cycles, instructions, cache-misses,
/// l1d-read-misses, context-switches, task-clock.
pub fn default_specs() -> Vec<CounterSpec> {
    vec![
        CounterSpec::Cycles,
        CounterSpec::Instructions,
        CounterSpec::CacheMisses,
        CounterSpec::L1dReadMisses,
        CounterSpec::ContextSwitches,
        CounterSpec::TaskClock,
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::metrics::counters::coherence::preset_id;

    #[test]
    fn parses_lists() {
        assert_eq!(
            parse_list("cycles, instructions,r0443"),
            Ok(vec![
                CounterSpec::Cycles,
                CounterSpec::Instructions,
                CounterSpec::Raw {
                    code: 0x443,
                    config1: 0,
                    name: "r0443".into()
                }
            ])
        );
        let err = parse_list("cycles,bogus,task-clock").unwrap_err();
        assert!(err.contains("'bogus'") && err.contains("valid:"), "{err}");
        let err = parse_list("cycles,,task-clock").unwrap_err();
        assert!(err.contains("empty counter name"), "{err}");
        let err = parse_list("").unwrap_err();
        assert!(err.contains("empty counter name"), "{err}");
        let err = parse_list("cycles,cpu-cycles").unwrap_err();
        assert!(err.contains("'cycles' listed twice"), "{err}");
        let names: Vec<String> = default_specs().iter().map(|s| s.to_string()).collect();
        assert_eq!(parse_list(&names.join(",")), Ok(default_specs()));
    }

    #[test]
    fn coherence_expands_to_the_cpus_preset() {
        use crate::metrics::counters::coherence::{AMD_ZEN4, GENERIC, INTEL_SPR};
        let specs = parse_list_with("cycles,coherence", || AMD_ZEN4).unwrap();
        assert_eq!(specs[0], CounterSpec::Cycles);
        assert_eq!(&specs[1..], AMD_ZEN4.specs().as_slice());
        assert_eq!(preset_id(&specs[1]), Some("amd-zen4"));
        assert_eq!(specs[1].event().as_deref(), Some("r0243"));
        assert_eq!(preset_id(&specs[0]), None);
        // A user's own r0243 is not a preset event.
        let own: CounterSpec = "r0243".parse().unwrap();
        assert_eq!(
            (preset_id(&own), own.event().as_deref()),
            (None, Some("r0243"))
        );
        // Case does not matter; the generic preset is cache-misses, listed once.
        let generic = parse_list_with("cache-misses, Coherence", || GENERIC).unwrap();
        assert_eq!(generic, vec![CounterSpec::CacheMisses]);
        let err = parse_list_with("coherence,coherence", || INTEL_SPR).unwrap_err();
        assert!(err.contains("listed twice"), "{err}");
        // The preset is looked up only when asked for.
        let plain = parse_list_with("cycles", || panic!("not asked")).unwrap();
        assert_eq!(plain, vec![CounterSpec::Cycles]);
        let spr = parse_list_with("coherence", || INTEL_SPR).unwrap();
        assert_eq!(
            spr.last().unwrap().to_string(),
            "ocr.demand_rfo.l3_hit.snoop_hitm=r012a:config1=0x10003c0002"
        );
    }
}
