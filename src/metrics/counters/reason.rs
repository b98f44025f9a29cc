//! Why a counter could not be opened: one short line per `perf_event_open` failure, saying
//! what is missing and what to do (no PMU, `perf_event_paranoid`, an unknown raw code, ...).

use std::io;
use std::sync::OnceLock;

use perf_event::events::Raw;
use perf_event::Builder;

use super::spec::{raw_name, CounterSpec};

/// The errno's symbolic name, for reasons.
fn errno_name(code: i32) -> String {
    let name = match code {
        libc::ENOENT => "ENOENT",
        libc::EACCES => "EACCES",
        libc::EPERM => "EPERM",
        libc::EOPNOTSUPP => "EOPNOTSUPP",
        libc::EINVAL => "EINVAL",
        libc::ENODEV => "ENODEV",
        libc::EMFILE => "EMFILE",
        libc::ENOSYS => "ENOSYS",
        libc::EBUSY => "EBUSY",
        libc::E2BIG => "E2BIG",
        libc::ENOSPC => "ENOSPC",
        _ => return format!("errno {code}"),
    };
    name.to_string()
}

/// Whether a core PMU is registered (a `/sys/bus/event_source` device of type
/// `PERF_TYPE_RAW`, such as x86's `cpu`); `None` when sysfs cannot tell.
pub(super) fn core_pmu_present() -> Option<bool> {
    static PRESENT: OnceLock<Option<bool>> = OnceLock::new();
    *PRESENT.get_or_init(|| {
        let devices = std::fs::read_dir("/sys/bus/event_source/devices").ok()?;
        let raw_type = Builder::new(Raw::new(0)).attrs().type_;
        Some(devices.flatten().any(|device| {
            crate::opts::io::read_system(device.path().join("type"))
                .and_then(|t| t.trim().parse::<u32>().ok())
                == Some(raw_type)
        }))
    })
}

/// "not permitted" with what to do about it.
fn permission_reason(code: i32) -> String {
    // SAFETY: geteuid has no preconditions and cannot fail.
    let euid = unsafe { libc::geteuid() };
    if euid == 0 {
        return format!(
            "not permitted even as root (perf_event_open: {}): a seccomp profile or security \
             module blocks it; allow perf_event_open (e.g. in the container's seccomp profile)",
            errno_name(code)
        );
    }
    let paranoid = crate::opts::io::read_system("/proc/sys/kernel/perf_event_paranoid")
        .map(|s| s.trim().to_string())
        .unwrap_or_else(|| "unreadable".to_string());
    format!(
        "not permitted: /proc/sys/kernel/perf_event_paranoid is {paranoid}; run as root or lower it"
    )
}

/// One short, actionable line for a failed `perf_event_open` of `spec`.
pub(super) fn open_error_reason(spec: &CounterSpec, err: &io::Error) -> String {
    let raw = match spec {
        CounterSpec::Raw { code, name, .. } if *name == raw_name(*code) => Some(name.clone()),
        CounterSpec::Raw { name, .. } => {
            Some(format!("{name} ({})", spec.event().unwrap_or_default()))
        }
        _ => None,
    };
    let Some(code) = err.raw_os_error() else {
        if err.kind() == io::ErrorKind::Unsupported {
            return "this kernel does not know the perf_event_attr size the program uses \
                    (perf_event_open: E2BIG); use a newer kernel"
                .to_string();
        }
        return format!("perf_event_open failed: {err}");
    };
    match code {
        libc::ENOENT if spec.is_hardware() && core_pmu_present() == Some(false) => {
            "no hardware PMU on this machine (perf_event_open: ENOENT); on a VM enable the \
             virtual PMU"
                .to_string()
        }
        libc::ENOENT | libc::EINVAL if raw.is_some() => format!(
            "raw event {} not supported by this CPU (perf_event_open: {})",
            raw.unwrap_or_default(),
            errno_name(code)
        ),
        libc::ENOENT => {
            "event not supported by this CPU's PMU (perf_event_open: ENOENT)".to_string()
        }
        libc::EACCES | libc::EPERM if spec.kernel_only() => {
            format!("counted only in kernel mode, {}", permission_reason(code))
        }
        libc::EACCES | libc::EPERM => permission_reason(code),
        libc::EOPNOTSUPP => "the PMU does not support this event with these options \
                             (perf_event_open: EOPNOTSUPP)"
            .to_string(),
        libc::EINVAL => {
            "rejected by the kernel as invalid on this CPU (perf_event_open: EINVAL)".to_string()
        }
        libc::ENODEV => {
            "no PMU on this machine provides this event (perf_event_open: ENODEV)".to_string()
        }
        libc::EMFILE => {
            "too many open files (perf_event_open: EMFILE); raise the limit with ulimit -n"
                .to_string()
        }
        libc::ENOSYS => {
            "this kernel has no perf_event_open (ENOSYS); enable CONFIG_PERF_EVENTS".to_string()
        }
        _ => format!("perf_event_open: {err} ({})", errno_name(code)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_are_short_and_actionable() {
        let enoent = io::Error::from_raw_os_error(libc::ENOENT);
        let raw = CounterSpec::Raw {
            code: 0x443,
            config1: 0,
            name: "r0443".into(),
        };
        let einval = io::Error::from_raw_os_error(libc::EINVAL);
        assert_eq!(
            open_error_reason(&raw, &einval),
            "raw event r0443 not supported by this CPU (perf_event_open: EINVAL)"
        );
        let reason = open_error_reason(&CounterSpec::Cycles, &enoent);
        match core_pmu_present() {
            Some(false) => assert_eq!(
                reason,
                "no hardware PMU on this machine (perf_event_open: ENOENT); on a VM enable the \
                 virtual PMU"
            ),
            _ => assert!(reason.contains("ENOENT"), "{reason}"),
        }
        let eacces = io::Error::from_raw_os_error(libc::EACCES);
        let reason = open_error_reason(&CounterSpec::Cycles, &eacces);
        assert!(reason.starts_with("not permitted"), "{reason}");
        let reason = open_error_reason(&CounterSpec::ContextSwitches, &eacces);
        assert!(
            reason.starts_with("counted only in kernel mode, not permitted"),
            "{reason}"
        );
        let reason = open_error_reason(
            &CounterSpec::Cycles,
            &io::Error::from_raw_os_error(libc::EBUSY),
        );
        assert!(reason.contains("EBUSY"), "{reason}");
        for reason in [
            open_error_reason(&CounterSpec::Cycles, &einval),
            open_error_reason(
                &CounterSpec::Cycles,
                &io::Error::from_raw_os_error(libc::EOPNOTSUPP),
            ),
        ] {
            assert!(
                !reason.contains('\n') && reason.contains("perf_event_open"),
                "{reason}"
            );
        }
    }
}
