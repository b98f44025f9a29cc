//! The parts of `report.md` that say how far its figures can be trusted: whether a sweep is
//! complete, the settings and baseline the points share, the load of the host, and every
//! quality flag with its reason.

use std::fmt::Write as _;
use std::path::Path;

use super::figures::md_cell;
use super::quality;
use super::RunResult;
/// What a sweep's directory says of its points: those planned (its manifest) and those done
/// (its journal), read by the caller that knows the sweep's files.
pub struct SweepState {
    /// Every point the sweep's config plans, in its order.
    pub planned: Vec<String>,
    /// The points its journal holds whole.
    pub done: std::collections::BTreeSet<String>,
}

/// Says when a sweep did not finish (`dir` holds it): its points done against its points
/// planned. Nothing when the results are not a sweep's.
pub fn sweep_state(md: &mut String, dir: &Path, state: Option<&SweepState>) {
    let Some(SweepState { planned, done }) = state else {
        return;
    };
    let missing: Vec<&String> = planned.iter().filter(|p| !done.contains(*p)).collect();
    let planned = planned.len();
    if missing.is_empty() {
        let _ = writeln!(md, "Sweep complete: all {planned} points measured.\n");
        return;
    }
    let _ = writeln!(
        md,
        "**This sweep is incomplete: {} of {planned} points measured.** Missing: {}. Finish it with `lockbench sweep --resume {}`.\n",
        planned - missing.len(),
        missing
            .iter()
            .map(|p| format!("`{p}`"))
            .collect::<Vec<_>>()
            .join(", "),
        crate::opts::io::shown(dir)
    );
}

/// The settings the points share, their baselines, and the host's load.
pub fn settings(md: &mut String, runs: &[RunResult]) {
    let _ = writeln!(md, "## Settings\n");
    let _ = writeln!(md, "{}.\n", md_cell(&super::settings_line(runs)));
    let mut baselines: Vec<(&str, &str)> = runs
        .iter()
        .filter_map(|r| r.baseline.as_deref().map(|b| (r.problem.as_str(), b)))
        .collect();
    baselines.sort_unstable();
    baselines.dedup();
    if !baselines.is_empty() {
        let list: Vec<String> = baselines
            .iter()
            .map(|(p, b)| format!("`{b}` for the {p} locks"))
            .collect();
        let _ = writeln!(
            md,
            "Baseline: {} (every `vs base` is a ratio to it, paired round by round).\n",
            list.join(", ")
        );
    }
    let busy: Vec<crate::runner::host::Load> = runs
        .iter()
        .filter_map(|r| r.host.load.clone().filter(|l| l.busy))
        .collect();
    if let Some(w) = crate::runner::host::Load::worst(&busy) {
        let _ = writeln!(
            md,
            "**The host was busy** while {} of {} points were measured (worst: {}): those figures carry the `busy-host` flag; measure on an idle machine to trust them.\n",
            busy.len(),
            runs.len(),
            w.reasons.join(", ")
        );
    } else if runs.iter().any(|r| r.host.load.is_some()) {
        let _ = writeln!(md, "The host was idle while every point was measured.\n");
    }
}

/// Every flag of every point, with the rules.
pub fn flags(md: &mut String, runs: &[RunResult]) {
    let flagged: Vec<(&RunResult, quality::Quality)> = runs
        .iter()
        .map(|r| (r, quality::assess(r)))
        .filter(|(_, q)| !q.flags.is_empty())
        .collect();
    let _ = writeln!(md, "## Quality flags\n");
    let _ = writeln!(
        md,
        "A round of fewer than {} passages is near-empty and is not paired; a ratio needs {} paired rounds; a percentile q needs 10 / (1 − q) samples (p99: 1 000, p99.9: 10 000); a window under {} is too short; see docs/measurement.md.\n",
        quality::MIN_ROUND_PASSAGES,
        quality::MIN_PAIRED_ROUNDS,
        super::nanos(quality::MIN_WINDOW_NS)
    );
    if flagged.is_empty() {
        let _ = writeln!(md, "No figure is flagged.\n");
        return;
    }
    let _ = writeln!(md, "| lock | threads | mix | flag | figure | reason |");
    let _ = writeln!(md, "|---|---:|---|---|---|---|");
    for (r, q) in flagged {
        for f in &q.flags {
            let _ = writeln!(
                md,
                "| {} | {} | {} | {} | {} | {} |",
                md_cell(&r.lock),
                r.threads,
                md_cell(&r.mix),
                f.name,
                f.figure,
                md_cell(&f.reason)
            );
        }
    }
    md.push('\n');
}
