//! Seeded mutants of the paper algorithms and their kill score: how strong `verify` is.
//!
//! Each mutant is one line of its figure changed (a wait dropped, `<` turned into `≤`, a write
//! skipped or reordered, a reset dropped). The mutation sits in the algorithm's own text behind
//! a const generic (`GlbLock<M, MUT>`, `mutant::NO_CHOOSING_WAIT`, …), so a mutant runs exactly
//! the code that is timed, with one line changed, and cannot drift from it as a copy could;
//! the registered locks are `MUT = 0`, for which every mutation branch is a compile-time
//! constant that folds away, so the native hot path is the same machine code. Mutants are not
//! in the registry (`lockbench list`, `all`); only `verify --mutants` builds them.
//!
//! A mutant is killed when `verify` finds a violation of the safety property, an invariant,
//! deadlock freedom or a property the lock claims. A survivor is either argued equivalent (the
//! `equivalent` text) or a gap in `verify`.

use serde::Serialize;

use crate::locks::paper::{burns_lamport, bw_bakery, bwb_gme, glb, lamport_bakery, ub_bakery};
use crate::locks::paper::{cts::UnboundedCts, zehavi};
use crate::locks::Builder;
use crate::mem::ScheduledMemory;
use crate::registry::{find, LockEntry};

use super::{verify, Outcome, VerifyOptions};

/// One seeded mutant.
#[derive(Clone)]
pub struct Mutant {
    /// The lock it mutates.
    pub lock: &'static str,
    /// Its name.
    pub name: &'static str,
    /// The line of the figure changed.
    pub line: &'static str,
    /// The change.
    pub change: &'static str,
    /// Why it is equivalent to the algorithm, when it is.
    pub equivalent: Option<&'static str>,
    /// Passages per process and PCT depth the mutant is tried with at least (0: the given
    /// ones), when its change can only show after that many passages and preemptions.
    pub at_least: (usize, usize),
    /// Builds it on the scheduled memory.
    pub build: Builder,
}

macro_rules! m {
    ($lock:expr, $name:expr, $line:expr, $change:expr, $eq:expr, $ty:ty) => {
        m!($lock, $name, $line, $change, $eq, $ty, (0, 0))
    };
    ($lock:expr, $name:expr, $line:expr, $change:expr, $eq:expr, $ty:ty, $at_least:expr) => {
        Mutant {
            lock: $lock,
            name: $name,
            line: $line,
            change: $change,
            equivalent: $eq,
            at_least: $at_least,
            build: std::sync::Arc::new(|p: &crate::locks::Params| -> Box<dyn crate::locks::Lock> {
                Box::new(<$ty>::new(ScheduledMemory, p))
            }),
        }
    };
}

/// Passages and PCT depth for the bounded CTS's traceable-use mutants (killed then by the
/// traceable-use invariant, which the construction keeps at the same settings). A process's
/// labels take the smallest value free of its own and of what others hold of it, so with
/// nothing held its first two labels are 0 and 1 and a value can only come back at its third
/// Label: with the default 2 passages both mutants are equivalent to the construction.
/// `no-trace` needs a process to relabel to a value another still records (three Labels);
/// `no-recheck` needs a process to label twice while another sits between its collect and its
/// announce, after a first label (three Labels, a fourth passage for the window to fall after
/// the first), a schedule of many preemptions: at 3 processes and 1500 schedules PCT found it
/// for 8 seeds of 8 at depth 10, 2 of 8 at the default depth 3.
const CTS_REUSE: (usize, usize) = (4, 10);

const IDS_DIFFER: &str = "pairs (value, id) of two different processes never tie, so ≤ and < agree";

/// Why `bwb-gme` without line 29 is equivalent.
const NO_OPPOSITE_CHECK: &str = "Lemma 9 holds without it, and it is all the safety, FCFS and bound proofs take from line 29. Let t2 be the first time GlobalColor changes a second time (c to c̄ at t1, back to c at t2) inside some P_i's window (its line 5, reading c, to the end of its exit). The flipper U has colour c̄ and, by the kept line 28 guard, a number ≥ 2; by Lemma 7 it read a conflicting V of colour c̄ with a smaller number and enters only after V's critical section. U and V read c̄ on line 5 after t1 (earlier would put two changes inside their own windows before t2). P_i conflicts with U or V; that one waits on line 17 until P_i has written colour c, then on line 23 until GlobalColor ≠ c̄, that is until t2. So U enters its critical section after t2, yet flips at t2 on leaving it: a contradiction";

/// Every mutant, by lock in listing order.
pub fn catalogue() -> Vec<Mutant> {
    use lamport_bakery::{mutant as lb, LamportBakeryLock as Lb};
    use ub_bakery::{mutant as ub, Bounded, Fig2Bakery, Unbounded};
    type S = ScheduledMemory;
    vec![
        m!("lamport-bakery", "no-gettoken", "1", "gettoken_i := true skipped", None, Lb<S, { lb::NO_GETTOKEN }>),
        m!("lamport-bakery", "no-choosing-wait", "5", "wait till gettoken_j = false dropped", None, Lb<S, { lb::NO_CHOOSING_WAIT }>),
        m!("lamport-bakery", "token-le", "6", "[token_i, i] < [token_j, j] becomes token_i ≤ token_j", None, Lb<S, { lb::TOKEN_LE }>),
        m!("lamport-bakery", "pair-le", "6", "[token_i, i] < [token_j, j] becomes ≤", Some(IDS_DIFFER), Lb<S, { lb::PAIR_LE }>),
        m!("ub-bakery", "no-x-write", "8", "X := token_i dropped", None, Fig2Bakery<S, Unbounded, { ub::NO_X_WRITE }>),
        m!("ub-bakery", "no-choosing-wait", "6", "wait till gettoken_j = false dropped", None, Fig2Bakery<S, Unbounded, { ub::NO_CHOOSING_WAIT }>),
        m!("ub-bakery", "no-increment", "4", "max(S ∪ {x}) + 1 becomes max(S ∪ {x})", None, Fig2Bakery<S, Unbounded, { ub::NO_INCREMENT }>),
        m!("ub-bakery", "no-reset", "10", "token_i := −1 dropped", None, Fig2Bakery<S, Unbounded, { ub::NO_RESET }>),
        m!("b-bakery", "no-x-write", "8", "X := token_i dropped", None, Fig2Bakery<S, Bounded, { ub::NO_X_WRITE }>),
        m!("b-bakery", "no-choosing-wait", "6", "wait till gettoken_j = false dropped", None, Fig2Bakery<S, Bounded, { ub::NO_CHOOSING_WAIT }>),
        m!("b-bakery", "no-increment", "4", "shifted max ⊕ 1 becomes the shifted max", None, Fig2Bakery<S, Bounded, { ub::NO_INCREMENT }>),
        m!("b-bakery", "no-reset", "10", "token_i := −1 dropped", None, Fig2Bakery<S, Bounded, { ub::NO_RESET }>),
        m!("b-bakery", "modulus-2n-2", "§5", "tokens modulo 2n−2 instead of 2n−1", None, Fig2Bakery<S, ub_bakery::BoundedBy<2>, 0>),
        m!("bw-bakery", "no-color-wait", "(lost)", "the different-colour wait dropped", None, bw_bakery::BwBakeryLock<S, { bw_bakery::mutant::NO_COLOR_WAIT }>),
        m!("bw-bakery", "no-choosing-wait", "8", "wait until Choosing[j] = false dropped", None, bw_bakery::BwBakeryLock<S, { bw_bakery::mutant::NO_CHOOSING_WAIT }>),
        m!("bw-bakery", "no-flip", "17–21", "GlobalColor never flipped", None, bw_bakery::BwBakeryLock<S, { bw_bakery::mutant::NO_FLIP }>),
        m!("bw-bakery", "no-reset", "22", "Token[i].number := 0 dropped", None, bw_bakery::BwBakeryLock<S, { bw_bakery::mutant::NO_RESET }>),
        m!("burns-lamport", "keep-bit", "4", "Competing[i] := false dropped", None, burns_lamport::BurnsLamportLock<S, { burns_lamport::mutant::KEEP_BIT }>),
        m!("burns-lamport", "no-higher-wait", "9–11", "wait for higher-numbered bits dropped", None, burns_lamport::BurnsLamportLock<S, { burns_lamport::mutant::NO_HIGHER_WAIT }>),
        m!("burns-lamport", "no-raise", "1", "Competing[i] := true skipped", None, burns_lamport::BurnsLamportLock<S, { burns_lamport::mutant::NO_RAISE }>),
        m!("glb", "no-choosing-wait", "8", "wait until Choosing[j] = false ∨ … dropped", None, glb::GlbLock<S, { glb::mutant::NO_CHOOSING_WAIT }>),
        m!("glb", "token-wait-ignores-session", "9", "the Session[j] ∈ {0, mysession} clause dropped", None, glb::GlbLock<S, { glb::mutant::TOKEN_WAIT_IGNORES_SESSION }>),
        m!("glb", "no-token-reset", "12", "Token[i] := 0 dropped", Some("line 13 still resets Session[i] to 0, which alone lets every wait on i pass; a stale token only delays waiters until i's next line 5 writes a larger one, which it reads above theirs"), glb::GlbLock<S, { glb::mutant::NO_TOKEN_RESET }>),
        m!("glb", "session-after-token", "4", "Session[i] := mysession moved after line 5", None, glb::GlbLock<S, { glb::mutant::SESSION_AFTER_TOKEN }>),
        m!("glb", "pair-le", "9", "(Token[i], i) < (Token[j], j) becomes ≤", Some(IDS_DIFFER), glb::GlbLock<S, { glb::mutant::PAIR_LE }>),
        m!("bwb-gme", "no-number-guard", "28", "mynumber ≠ 1 guard dropped", None, bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::NO_NUMBER_GUARD }>),
        m!("bwb-gme", "no-bottom-reset", "3", "Token[i] := (mysession, ⊥, 0) dropped", None, bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::NO_BOTTOM_RESET }>),
        m!("bwb-gme", "no-opposite-check", "29", "not OPPOSITECOLOR(mycolor) dropped", Some(NO_OPPOSITE_CHECK), bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::NO_OPPOSITE_CHECK }>),
        m!("bwb-gme", "no-choosing-wait", "17–18", "wait until Choosing[j] = false ∨ … dropped", None, bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::NO_CHOOSING_WAIT }>),
        m!("bwb-gme", "number-over-all", "9", "the session ∉ {0, mysession} clause dropped", None, bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::NUMBER_OVER_ALL }>),
        m!("bwb-gme", "pair-le", "20", "(mynumber, i) < (Token[j].number, j) becomes ≤", Some(IDS_DIFFER), bwb_gme::BwbGmeLock<S, bwb_gme::Generalized, { bwb_gme::mutant::PAIR_LE }>),
        m!("zehavi-kex", "no-allow", "12", "Allow[p][i] ← True dropped", None, zehavi::Zehavi<S, UnboundedCts<S>, { zehavi::mutant::NO_ALLOW }>),
        m!("zehavi-kex", "k-plus-one", "11", "|precede| ≥ k becomes |precede| > k", None, zehavi::Zehavi<S, UnboundedCts<S>, { zehavi::mutant::K_PLUS_ONE }>),
        m!("zehavi-kex", "no-reveal", "5", "Reveal[p] ← True dropped", None, zehavi::Zehavi<S, UnboundedCts<S>, { zehavi::mutant::NO_REVEAL }>),
        m!("zehavi-kex", "no-ignore-clear", "8", "Ignore[p][i] ← False dropped", None, zehavi::Zehavi<S, UnboundedCts<S>, { zehavi::mutant::NO_IGNORE_CLEAR }>),
        m!("zehavi-kex", "no-compete-delete", "11.a.i", "deleting processes with !Compete[i][p] dropped", None, zehavi::Zehavi<S, UnboundedCts<S>, { zehavi::mutant::NO_COMPETE_DELETE }>),
        m!("zehavi-kex-bounded", "no-recheck", "3 (Label step 3)", "the re-collect dropped: records trusted from the first collect", None, zehavi::Zehavi<S, crate::locks::paper::bounded_cts::BoundedCts<S, { crate::locks::paper::bounded_cts::mutant::NO_RECHECK }>>, CTS_REUSE),
        m!("zehavi-kex-bounded", "keep-seq", "3 (Label step 4)", "the new seq is the old one", None, zehavi::Zehavi<S, crate::locks::paper::bounded_cts::BoundedCts<S, { crate::locks::paper::bounded_cts::mutant::KEEP_SEQ }>>),
        m!("zehavi-kex-bounded", "no-trace", "3 (Label step 4)", "values others record or announce of p no longer excluded", None, zehavi::Zehavi<S, crate::locks::paper::bounded_cts::BoundedCts<S, { crate::locks::paper::bounded_cts::mutant::NO_TRACE }>>, CTS_REUSE),
        m!("zehavi-kex-bounded", "no-record", "3 (Label step 5)", "rec_p[q] ← −1 for every q", None, zehavi::Zehavi<S, crate::locks::paper::bounded_cts::BoundedCts<S, { crate::locks::paper::bounded_cts::mutant::NO_RECORD }>>),
    ]
}

/// Mutants selected by `NAME` (`lock/mutant`, a lock name for all of its mutants, or `all`).
pub fn select(name: &str) -> Result<Vec<Mutant>, String> {
    let all = catalogue();
    let chosen: Vec<Mutant> = all
        .iter()
        .filter(|m| name == "all" || name == m.lock || name == format!("{}/{}", m.lock, m.name))
        .cloned()
        .collect();
    if chosen.is_empty() {
        return Err(format!(
            "no mutant `{name}`: give all, a paper lock name, or lock/mutant (e.g. {}/{})",
            all[0].lock, all[0].name
        ));
    }
    Ok(chosen)
}

/// The registry entry of a mutant: its lock's entry with the mutant's builder.
pub fn entry(m: &Mutant) -> LockEntry {
    let mut e = find(m.lock).expect("mutants mutate registered locks");
    e.scheduled = Some(m.build.clone());
    e
}

/// How one mutant fared.
#[derive(Clone, Debug, Serialize)]
pub struct MutantResult {
    /// The lock.
    pub lock: String,
    /// The mutant.
    pub mutant: String,
    /// The line of the figure changed.
    pub line: String,
    /// The change.
    pub change: String,
    /// A violation was found.
    pub killed: bool,
    /// Argued equivalent to the algorithm (then surviving is expected).
    pub equivalent: bool,
    /// Why it is equivalent.
    pub argument: Option<String>,
    /// Schedules explored up to and including the killing one (None if it survived).
    pub schedules_to_kill: Option<usize>,
    /// Schedules explored in all.
    pub schedules_run: usize,
    /// Processes of the killing run.
    pub threads: Option<usize>,
    /// Steps inside the critical section in the killing run.
    pub cs_steps: Option<usize>,
    /// What broke.
    pub kind: Option<String>,
    /// The replay string of the kill.
    pub replay: Option<String>,
}

/// The settings a mutant is tried at, in order: thread counts smallest first (every problem
/// needs enough processes to show its violations: GME 3 for a conflict beside a shared
/// session, k-exclusion k + 1 with k = 2), each with the given steps inside the critical
/// section and then with none. Both matter under PCT: a yield inside the critical section
/// drops the holder to the lowest priority (others run while it is inside), while with none a
/// holder keeps running through its exit and its next passage while a process it overtook
/// stays parked mid-doorway (how `bwb-gme` without the line 28 guard is caught).
fn ladder(entry: &LockEntry, cs_steps: usize) -> Vec<(usize, usize)> {
    let threads = match entry.info.problem {
        crate::locks::Problem::Mutex => [2, 3, 4],
        _ => [3, 4, 5],
    };
    let mut rungs = Vec::new();
    for n in threads {
        rungs.push((n, cs_steps));
        if cs_steps != 0 {
            rungs.push((n, 0));
        }
    }
    rungs
}

/// Schedules per rung of the ladder by default: six rungs stay within 10,000 schedules.
pub const DEFAULT_SCHEDULES_PER_RUNG: usize = 1500;

/// Runs one mutant with `base`'s settings at each rung of its ladder, `base.schedules`
/// schedules each, until it is killed.
pub fn run(m: &Mutant, base: &VerifyOptions, quiet: bool) -> Result<MutantResult, String> {
    let e = entry(m);
    let mut total = 0;
    let mut result = MutantResult {
        lock: m.lock.to_string(),
        mutant: m.name.to_string(),
        line: m.line.to_string(),
        change: m.change.to_string(),
        killed: false,
        equivalent: m.equivalent.is_some(),
        argument: m.equivalent.map(String::from),
        schedules_to_kill: None,
        schedules_run: 0,
        threads: None,
        cs_steps: None,
        kind: None,
        replay: None,
    };
    for (n, cs_steps) in ladder(&e, base.cs_steps) {
        let mut o = base.clone();
        o.threads = n;
        o.k = VerifyOptions::default_k(n);
        o.cs_steps = cs_steps;
        o.passages = o.passages.max(m.at_least.0);
        o.pct_depth = o.pct_depth.max(m.at_least.1);
        o.mutant = Some(m.name.to_string());
        // The mutant table prints no trace: do not replay the kill once more to build one.
        o.trace = None;
        let r = verify(&e, &o, quiet)?;
        total += r.schedules_run;
        if let Outcome::Violation { kind, schedule } = r.outcome {
            result.killed = true;
            result.schedules_to_kill = Some(total);
            result.threads = Some(n);
            result.cs_steps = Some(cs_steps);
            result.kind = Some(kind);
            result.replay = Some(schedule);
            break;
        }
    }
    result.schedules_run = total;
    Ok(result)
}

/// The mutation score: killed / (mutants − proven equivalent), over `results`.
pub fn score(results: &[MutantResult]) -> (usize, usize) {
    let killed = results.iter().filter(|r| r.killed).count();
    let counted = results.iter().filter(|r| !r.equivalent || r.killed).count();
    (killed, counted)
}

/// The table `verify --mutants` prints.
pub fn table(results: &[MutantResult]) -> String {
    use std::fmt::Write;
    let mut out = String::new();
    let _ = writeln!(
        out,
        "{:<15} {:<27} {:<7} {:<9} {:>9} {:>3} {:>3}  what broke / why equivalent",
        "lock", "mutant", "line", "result", "schedules", "n", "cs"
    );
    for r in results {
        let verdict = if r.killed {
            "killed"
        } else if r.equivalent {
            "equiv."
        } else {
            "SURVIVED"
        };
        // The argument's first sentence (the whole is in the JSON's `argument`).
        let why = if r.killed {
            r.kind.clone().unwrap_or_default()
        } else {
            let a = r.argument.clone().unwrap_or_default();
            let end = [". ", "; "]
                .iter()
                .filter_map(|sep| a.find(sep))
                .min()
                .unwrap_or(a.len());
            a[..end].to_string()
        };
        let _ = writeln!(
            out,
            "{:<15} {:<27} {:<7} {:<9} {:>9} {:>3} {:>3}  {}",
            r.lock,
            r.mutant,
            r.line,
            verdict,
            r.schedules_to_kill
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            r.threads
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            r.cs_steps
                .map(|s| s.to_string())
                .unwrap_or_else(|| "-".into()),
            why
        );
    }
    let (killed, counted) = score(results);
    let _ = writeln!(
        out,
        "mutation score: {killed}/{counted} killed ({:.0}%), {} argued equivalent",
        if counted == 0 {
            100.0
        } else {
            100.0 * killed as f64 / counted as f64
        },
        results.iter().filter(|r| r.equivalent && !r.killed).count()
    );
    out
}
