//! Coherence event presets: the hardware events that count cache-line transfers between cores,
//! chosen for the running CPU from `/proc/cpuinfo`.
//!
//! `--counters coherence` expands to the preset of this machine's CPU (it may be combined with
//! other counters: `--counters cycles,coherence`). Each event is a raw code, named after the
//! vendor's event so results read as perf's own names; every code below carries its source.
//! Results record the raw encoding of each counter (`counters[].event`) and the preset it came
//! from (`counters[].preset`).
//!
//! What the events see, against the model's RMRs:
//! - a CC-model remote read is a load whose line was last written by another core: a demand
//!   data-cache fill from another core's cache (AMD `ls_*_fills_from_sys` with a cache source,
//!   Intel `XSNP_HITM`/`XSNP_FWD` and their remote-socket twins, Arm `L1D_CACHE_REFILL_INNER`
//!   or `_OUTER`);
//! - a remote write or read-modify-write is a request for ownership of a line others hold:
//!   AMD `l2_request_g1.change_to_x` (shared → writable upgrades), Intel's demand-RFO offcore
//!   response that hit a modified line in another core, Arm `L1D_CACHE_INVAL` on the losing
//!   side.
//!
//! The hardware counts whole cache lines, so two registers on one line (false sharing) are one
//! line to it; lockbench's native memory pads every register to its own line, so the two count
//! the same things. Hardware also counts what the model does not (the harness's own lines,
//! prefetches, evictions by capacity): read correlations, not equalities.

use super::spec::CounterSpec;

/// One event of a preset.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PresetEvent {
    /// The vendor's event name (perf's spelling), used as the counter's name in results.
    pub name: &'static str,
    /// The raw `config`: on x86 `umask << 8 | event`, as perf's `rUUEE`; on Arm the event
    /// number.
    pub code: u64,
    /// The raw `config1` (Intel's offcore response mask); 0 when the event takes none.
    pub config1: u64,
}

/// A set of coherence events for one CPU family.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Preset {
    /// Short id recorded in results: `amd-zen2`, `intel-icx`, `generic`, ...
    pub id: &'static str,
    /// The CPUs it is for, for people.
    pub cpus: &'static str,
    /// The events. Empty for the generic preset, which uses `cache-misses`.
    pub events: &'static [PresetEvent],
}

const fn ev(name: &'static str, code: u64) -> PresetEvent {
    PresetEvent {
        name,
        code,
        config1: 0,
    }
}

/// AMD Zen 2 (family 0x17, models 0x30 and up). Source: Linux
/// tools/perf/pmu-events/arch/x86/amdzen2/cache.json (mapfile `AuthenticAMD-23-[[:xdigit:]]+`
/// after Zen 1's models 0x00-0x2F).
pub const AMD_ZEN2: Preset = Preset {
    id: "amd-zen2",
    cpus: "AMD Zen 2 (family 17h, models 30h and up)",
    events: &[
        // ls_refills_from_sys.ls_mabresp_lcl_cache, EventCode 0x43 UMask 0x02: demand fills
        // that hit in a cache of another CCX (or this one's L3) on this die.
        ev("ls_refills_from_sys.ls_mabresp_lcl_cache", 0x0243),
        // ls_refills_from_sys.ls_mabresp_rmt_cache, EventCode 0x43 UMask 0x10: demand fills
        // from a cache of a CCX whose home node is on another die.
        ev("ls_refills_from_sys.ls_mabresp_rmt_cache", 0x1043),
        // l2_request_g1.change_to_x, EventCode 0x60 UMask 0x08: data-cache state change to
        // writable (a store or RMW on a line held shared).
        ev("l2_request_g1.change_to_x", 0x0860),
    ],
};

/// AMD Zen 3 (family 0x19, models 0x00-0x0F and 0x20-0x5F). Source: Linux
/// tools/perf/pmu-events/arch/x86/amdzen3/cache.json (mapfile
/// `AuthenticAMD-25-([245][[:xdigit:]]|[[:xdigit:]])`).
pub const AMD_ZEN3: Preset = Preset {
    id: "amd-zen3",
    cpus: "AMD Zen 3 (family 19h, models 00h-0Fh, 20h-5Fh)",
    events: &[
        // ls_dmnd_fills_from_sys.int_cache, EventCode 0x43 UMask 0x02: demand fills from the
        // L3 or another L2 in the same CCX.
        ev("ls_dmnd_fills_from_sys.int_cache", 0x0243),
        // ls_dmnd_fills_from_sys.ext_cache_local, EventCode 0x43 UMask 0x04: from a cache of
        // another CCX in the same node.
        ev("ls_dmnd_fills_from_sys.ext_cache_local", 0x0443),
        // ls_dmnd_fills_from_sys.ext_cache_remote, EventCode 0x43 UMask 0x10: from a cache of
        // a CCX in another node.
        ev("ls_dmnd_fills_from_sys.ext_cache_remote", 0x1043),
        // l2_request_g1.change_to_x, EventCode 0x60 UMask 0x08 (amdzen3/cache.json).
        ev("l2_request_g1.change_to_x", 0x0860),
    ],
};

/// AMD Zen 4 (family 0x19, every model not Zen 3's: 0x10-0x1F, 0x60-0xAF). Source: Linux
/// tools/perf/pmu-events/arch/x86/amdzen4/cache.json (mapfile `AuthenticAMD-25-[[:xdigit:]]+`
/// after Zen 3's).
pub const AMD_ZEN4: Preset = Preset {
    id: "amd-zen4",
    cpus: "AMD Zen 4 (family 19h, models 10h-1Fh, 60h-AFh)",
    events: &[
        // ls_dmnd_fills_from_sys.local_ccx, EventCode 0x43 UMask 0x02: demand fills from the
        // L3 or a different L2 in the same CCX.
        ev("ls_dmnd_fills_from_sys.local_ccx", 0x0243),
        // ls_dmnd_fills_from_sys.near_cache, EventCode 0x43 UMask 0x04: from a cache of
        // another CCX, address in the same NUMA node.
        ev("ls_dmnd_fills_from_sys.near_cache", 0x0443),
        // ls_dmnd_fills_from_sys.far_cache, EventCode 0x43 UMask 0x10: from a cache of
        // another CCX, address in a different NUMA node.
        ev("ls_dmnd_fills_from_sys.far_cache", 0x1043),
        // l2_request_g1.change_to_x, EventCode 0x60 UMask 0x08: data-cache state change to
        // writable, check L2 for current state.
        ev("l2_request_g1.change_to_x", 0x0860),
    ],
};

/// The demand-RFO offcore response mask that hit a line modified in another core:
/// `OFFCORE_RESPONSE.DEMAND_RFO.L3_HIT.HITM_OTHER_CORE` (SKX) and
/// `OCR.DEMAND_RFO.L3_HIT.SNOOP_HITM` (ICX, SPR), MSRValue 0x10003C0002 in Intel's perfmon data
/// and Linux's pmu-events (skylakex/cache.json, icelakex/cache.json,
/// sapphirerapids/cache.json). The kernel programs it into MSR_OFFCORE_RSP_0 from `config1`.
const RFO_HITM_RSP: u64 = 0x10_003C_0002;

/// Intel Skylake-SP / Cascade Lake-SP (family 6, model 0x55). Source: Intel perfmon SKX
/// core events and Linux tools/perf/pmu-events/arch/x86/skylakex/ (cache.json, memory.json).
pub const INTEL_SKX: Preset = Preset {
    id: "intel-skx",
    cpus: "Intel Skylake-SP / Cascade Lake (family 6, model 55h)",
    events: &[
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_HITM, EventCode 0xD2 UMask 0x04: retired loads that hit
        // the L3 and a sibling core's modified copy.
        ev("mem_load_l3_hit_retired.xsnp_hitm", 0x04d2),
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_HIT, EventCode 0xD2 UMask 0x02: ... a sibling core's
        // clean copy, not forwarded.
        ev("mem_load_l3_hit_retired.xsnp_hit", 0x02d2),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM, EventCode 0xD3 UMask 0x04: retired loads whose
        // line came modified from a remote socket's cache.
        ev("mem_load_l3_miss_retired.remote_hitm", 0x04d3),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD, EventCode 0xD3 UMask 0x08: ... forwarded clean
        // from a remote cache.
        ev("mem_load_l3_miss_retired.remote_fwd", 0x08d3),
        // OFFCORE_RESPONSE.DEMAND_RFO.L3_HIT.HITM_OTHER_CORE, EventCode 0xB7 UMask 0x01 with
        // the response mask in config1: stores and RMWs that took a modified line from
        // another core (the loads above count retired loads only).
        PresetEvent {
            name: "offcore_response.demand_rfo.l3_hit.hitm_other_core",
            code: 0x01b7,
            config1: RFO_HITM_RSP,
        },
    ],
};

/// Intel Ice Lake-SP (family 6, models 0x6A, 0x6C). Source: Intel perfmon ICX core events and
/// Linux tools/perf/pmu-events/arch/x86/icelakex/ (memory.json, cache.json).
pub const INTEL_ICX: Preset = Preset {
    id: "intel-icx",
    cpus: "Intel Ice Lake-SP (family 6, models 6Ah, 6Ch)",
    events: &[
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_FWD, EventCode 0xD2 UMask 0x04 (SKX's XSNP_HITM renamed).
        ev("mem_load_l3_hit_retired.xsnp_fwd", 0x04d2),
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_NO_FWD, EventCode 0xD2 UMask 0x02.
        ev("mem_load_l3_hit_retired.xsnp_no_fwd", 0x02d2),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM, EventCode 0xD3 UMask 0x04.
        ev("mem_load_l3_miss_retired.remote_hitm", 0x04d3),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD, EventCode 0xD3 UMask 0x08.
        ev("mem_load_l3_miss_retired.remote_fwd", 0x08d3),
        // OCR.DEMAND_RFO.L3_HIT.SNOOP_HITM, EventCode 0xB7 UMask 0x01, MSRValue in config1.
        PresetEvent {
            name: "ocr.demand_rfo.l3_hit.snoop_hitm",
            code: 0x01b7,
            config1: RFO_HITM_RSP,
        },
    ],
};

/// Intel Sapphire Rapids (family 6, model 0x8F). Source: Intel perfmon SPR core events and
/// Linux tools/perf/pmu-events/arch/x86/sapphirerapids/ (memory.json, cache.json).
pub const INTEL_SPR: Preset = Preset {
    id: "intel-spr",
    cpus: "Intel Sapphire Rapids (family 6, model 8Fh)",
    events: &[
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_FWD, EventCode 0xD2 UMask 0x04.
        ev("mem_load_l3_hit_retired.xsnp_fwd", 0x04d2),
        // MEM_LOAD_L3_HIT_RETIRED.XSNP_NO_FWD, EventCode 0xD2 UMask 0x02.
        ev("mem_load_l3_hit_retired.xsnp_no_fwd", 0x02d2),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_HITM, EventCode 0xD3 UMask 0x04.
        ev("mem_load_l3_miss_retired.remote_hitm", 0x04d3),
        // MEM_LOAD_L3_MISS_RETIRED.REMOTE_FWD, EventCode 0xD3 UMask 0x08.
        ev("mem_load_l3_miss_retired.remote_fwd", 0x08d3),
        // OCR.DEMAND_RFO.L3_HIT.SNOOP_HITM: on SPR the offcore events moved to EventCode 0x2A
        // (UMask 0x01, MSR_OFFCORE_RSP_0); same response mask, in config1.
        PresetEvent {
            name: "ocr.demand_rfo.l3_hit.snoop_hitm",
            code: 0x012a,
            config1: RFO_HITM_RSP,
        },
    ],
};

/// Arm Neoverse N1 (MIDR part 0xD0C) and V1 (0xD40): Armv8 common events. Source: Linux
/// tools/perf/pmu-events/arch/arm64/arm/neoverse-n1/l1d_cache.json and bus.json (and
/// neoverse-v1), event numbers from arch/arm64/common-and-microarch.json.
pub const ARM_NEOVERSE: Preset = Preset {
    id: "arm-neoverse",
    cpus: "Arm Neoverse N1 / V1",
    events: &[
        // L1D_CACHE_REFILL_INNER, 0x44: L1D refills from caches inside the core's cluster.
        ev("l1d_cache_refill_inner", 0x0044),
        // L1D_CACHE_REFILL_OUTER, 0x45: L1D refills from outside the cluster (SLC, another
        // cluster, DRAM).
        ev("l1d_cache_refill_outer", 0x0045),
        // L1D_CACHE_INVAL, 0x48: L1D lines invalidated by another CPU's coherence traffic
        // (or by-VA cache maintenance).
        ev("l1d_cache_inval", 0x0048),
        // BUS_ACCESS, 0x19: accesses on the bus out of the core.
        ev("bus_access", 0x0019),
    ],
};

/// Any other CPU: the generic `cache-misses` event.
pub const GENERIC: Preset = Preset {
    id: "generic",
    cpus: "any CPU without a preset (generic cache-misses)",
    events: &[],
};

/// Every preset, for listing.
pub const ALL: [Preset; 8] = [
    AMD_ZEN2,
    AMD_ZEN3,
    AMD_ZEN4,
    INTEL_SKX,
    INTEL_ICX,
    INTEL_SPR,
    ARM_NEOVERSE,
    GENERIC,
];

/// The CPU identity that selects a preset, as `/proc/cpuinfo` states it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CpuId {
    /// `vendor_id` (x86): `AuthenticAMD`, `GenuineIntel`.
    pub vendor: Option<String>,
    /// `cpu family` (x86, decimal).
    pub family: Option<u32>,
    /// `model` (x86, decimal).
    pub model: Option<u32>,
    /// `CPU implementer` (arm64, hex).
    pub implementer: Option<u32>,
    /// `CPU part` (arm64, hex).
    pub part: Option<u32>,
}

fn parse_num(v: &str) -> Option<u32> {
    let v = v.trim();
    match v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        Some(hex) => u32::from_str_radix(hex, 16).ok(),
        None => v.parse().ok(),
    }
}

impl CpuId {
    /// The first processor's identity in a `/proc/cpuinfo` text.
    pub fn parse(cpuinfo: &str) -> CpuId {
        let mut id = CpuId::default();
        for line in cpuinfo.lines() {
            let Some((key, value)) = line.split_once(':') else {
                continue;
            };
            let value = value.trim();
            match key.trim() {
                "vendor_id" if id.vendor.is_none() => id.vendor = Some(value.to_string()),
                "cpu family" if id.family.is_none() => id.family = parse_num(value),
                "model" if id.model.is_none() => id.model = parse_num(value),
                "CPU implementer" if id.implementer.is_none() => id.implementer = parse_num(value),
                "CPU part" if id.part.is_none() => id.part = parse_num(value),
                _ => {}
            }
        }
        id
    }

    /// This machine's identity (empty when `/proc/cpuinfo` cannot be read).
    pub fn detect() -> CpuId {
        crate::opts::io::read_system("/proc/cpuinfo")
            .map(|text| CpuId::parse(&text))
            .unwrap_or_default()
    }

    /// The preset for this CPU; [`GENERIC`] for any CPU without one.
    pub fn preset(&self) -> Preset {
        match (self.vendor.as_deref(), self.family, self.model) {
            // Zen 1 is family 0x17 models 0x00-0x2F (mapfile amdzen1); the rest is Zen 2.
            (Some("AuthenticAMD"), Some(0x17), Some(m)) if m >= 0x30 => AMD_ZEN2,
            (Some("AuthenticAMD"), Some(0x19), Some(m))
                if m <= 0x0f || (0x20..=0x5f).contains(&m) =>
            {
                AMD_ZEN3
            }
            (Some("AuthenticAMD"), Some(0x19), Some(_)) => AMD_ZEN4,
            (Some("GenuineIntel"), Some(6), Some(0x55)) => INTEL_SKX,
            (Some("GenuineIntel"), Some(6), Some(0x6a | 0x6c)) => INTEL_ICX,
            (Some("GenuineIntel"), Some(6), Some(0x8f)) => INTEL_SPR,
            _ => match (self.implementer, self.part) {
                (Some(0x41), Some(0xd0c | 0xd40)) => ARM_NEOVERSE,
                _ => GENERIC,
            },
        }
    }

    #[cfg(test)]
    /// One line naming the CPU, for messages: `AuthenticAMD family 0x19 model 0x11`.
    pub fn describe(&self) -> String {
        match (
            &self.vendor,
            self.family,
            self.model,
            self.implementer,
            self.part,
        ) {
            (Some(v), Some(f), Some(m), _, _) => format!("{v} family {f:#x} model {m:#x}"),
            (_, _, _, Some(i), Some(p)) => format!("implementer {i:#x} part {p:#x}"),
            _ => "unknown CPU".to_string(),
        }
    }
}

impl Preset {
    /// The counters of this preset, each named after its event and tagged with the preset.
    pub fn specs(&self) -> Vec<CounterSpec> {
        if self.events.is_empty() {
            return vec![CounterSpec::CacheMisses];
        }
        self.events
            .iter()
            .map(|e| CounterSpec::Raw {
                code: e.code,
                config1: e.config1,
                name: e.name.to_string(),
            })
            .collect()
    }
}

/// The preset of the running CPU.
pub fn detect() -> Preset {
    CpuId::detect().preset()
}

/// The id of the coherence preset the raw event `spec` belongs to, if any (a user's own raw
/// code that happens to equal a preset's is not a preset event: the name must match too).
pub fn preset_id(spec: &CounterSpec) -> Option<&'static str> {
    let CounterSpec::Raw {
        code,
        config1,
        name,
    } = spec
    else {
        return None;
    };
    ALL.iter().find_map(|preset| {
        preset
            .events
            .iter()
            .any(|e| e.code == *code && e.config1 == *config1 && e.name == name)
            .then_some(preset.id)
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn x86(vendor: &str, family: u32, model: u32) -> String {
        format!(
            "processor\t: 0\nvendor_id\t: {vendor}\ncpu family\t: {family}\nmodel\t\t: {model}\n\
             model name\t: test\nstepping\t: 1\n\nprocessor\t: 1\nvendor_id\t: {vendor}\n\
             cpu family\t: {family}\nmodel\t\t: {model}\n"
        )
    }

    fn arm(part: u32) -> String {
        format!(
            "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm\n\
             CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x3\n\
             CPU part\t: {part:#05x}\nCPU revision\t: 1\n"
        )
    }

    fn preset_of(cpuinfo: &str) -> &'static str {
        CpuId::parse(cpuinfo).preset().id
    }

    #[test]
    fn amd_models_select_their_zen() {
        // EPYC 7002 Rome (17h/31h), Ryzen 3000 Matisse (17h/71h): Zen 2. Zen 1 Naples (17h/01h)
        // has no preset.
        assert_eq!(preset_of(&x86("AuthenticAMD", 23, 0x31)), "amd-zen2");
        assert_eq!(preset_of(&x86("AuthenticAMD", 23, 0x71)), "amd-zen2");
        assert_eq!(preset_of(&x86("AuthenticAMD", 23, 0x01)), "generic");
        // EPYC 7003 Milan (19h/01h), Ryzen 5000 Vermeer (19h/21h), Cezanne (19h/50h): Zen 3.
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0x01)), "amd-zen3");
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0x21)), "amd-zen3");
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0x50)), "amd-zen3");
        // EPYC 9004 Genoa (19h/11h), Ryzen 7000 Raphael (19h/61h), Bergamo (19h/A0h): Zen 4.
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0x11)), "amd-zen4");
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0x61)), "amd-zen4");
        assert_eq!(preset_of(&x86("AuthenticAMD", 25, 0xa0)), "amd-zen4");
        // Zen 5 (1Ah) has no preset yet.
        assert_eq!(preset_of(&x86("AuthenticAMD", 26, 0x02)), "generic");
    }

    #[test]
    fn intel_models_select_their_server_core() {
        assert_eq!(preset_of(&x86("GenuineIntel", 6, 85)), "intel-skx");
        assert_eq!(preset_of(&x86("GenuineIntel", 6, 106)), "intel-icx");
        assert_eq!(preset_of(&x86("GenuineIntel", 6, 108)), "intel-icx");
        assert_eq!(preset_of(&x86("GenuineIntel", 6, 143)), "intel-spr");
        // A client Skylake (6/5Eh) and an unknown family fall back.
        assert_eq!(preset_of(&x86("GenuineIntel", 6, 0x5e)), "generic");
        assert_eq!(preset_of(&x86("GenuineIntel", 19, 1)), "generic");
    }

    #[test]
    fn neoverse_parts_select_the_arm_preset() {
        assert_eq!(preset_of(&arm(0xd0c)), "arm-neoverse");
        assert_eq!(preset_of(&arm(0xd40)), "arm-neoverse");
        // Cortex-A72 (0xD08) and an empty text fall back.
        assert_eq!(preset_of(&arm(0xd08)), "generic");
        assert_eq!(preset_of(""), "generic");
        assert_eq!(
            CpuId::parse(&arm(0xd0c)).describe(),
            "implementer 0x41 part 0xd0c"
        );
    }

    #[test]
    fn parses_the_first_processor() {
        let id = CpuId::parse(&x86("AuthenticAMD", 25, 17));
        assert_eq!(id.vendor.as_deref(), Some("AuthenticAMD"));
        assert_eq!((id.family, id.model), (Some(25), Some(17)));
        assert_eq!(id.describe(), "AuthenticAMD family 0x19 model 0x11");
    }

    #[test]
    fn presets_give_raw_counters_or_cache_misses() {
        let specs = INTEL_ICX.specs();
        assert_eq!(specs.len(), 5);
        assert_eq!(
            specs[4],
            CounterSpec::Raw {
                code: 0x01b7,
                config1: 0x10_003c_0002,
                name: "ocr.demand_rfo.l3_hit.snoop_hitm".into()
            }
        );
        assert_eq!(
            specs[4].event().as_deref(),
            Some("r01b7,config1=0x10003c0002")
        );
        assert_eq!(specs[0].event().as_deref(), Some("r04d2"));
        assert_eq!(GENERIC.specs(), vec![CounterSpec::CacheMisses]);
        for preset in ALL {
            let specs = preset.specs();
            let mut names: Vec<&str> = specs.iter().map(CounterSpec::name).collect();
            names.sort_unstable();
            names.dedup();
            assert_eq!(names.len(), specs.len(), "{}", preset.id);
            // Every name is a valid label, so the spec round-trips through the parser.
            for spec in specs
                .iter()
                .filter(|s| matches!(s, CounterSpec::Raw { config1: 0, .. }))
            {
                assert_eq!(spec.to_string().parse::<CounterSpec>().as_ref(), Ok(spec));
            }
        }
        // Offcore events are the only ones with a config1, and only on Intel.
        for preset in ALL {
            for e in preset.events {
                assert_eq!(
                    e.config1 != 0,
                    (e.code & 0xff) == 0xb7 || (e.code & 0xff) == 0x2a
                );
            }
        }
    }
}
