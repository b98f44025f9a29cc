//! What the passage loop does inside the critical section to check safety: one [`Checker`]
//! type per oracle, so that the loop is compiled once per oracle with nothing of the others in
//! it, the oracles' shared state ([`Guards`]) and each worker's own tally ([`CheckLocal`]).

use crate::check::{Entry, Oracle, Problem, SelfCheck};

/// The checkers' shared state: both oracles (each run uses one of them).
pub(super) struct Guards {
    pub(super) counting: Oracle,
    pub(super) self_check: SelfCheck,
}

impl Guards {
    /// Both oracles for a `problem` lock of capacity `k`.
    pub(super) fn new(problem: Problem, k: usize) -> Self {
        Guards {
            counting: Oracle::new(problem, k),
            self_check: SelfCheck::new(problem),
        }
    }
}

/// A worker's own checking state.
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct CheckLocal {
    /// Processes inside at each measured entry, summed (counting oracle).
    pub(super) inside_sum: u64,
    /// The most inside at one measured entry (counting oracle).
    pub(super) inside_max: u64,
    /// Read-backs of the self-check that found another tag, over the whole run.
    pub(super) violations: u64,
    /// Passages that added this process's tag to the self-check's sum, over the whole run.
    pub(super) checked: u64,
}

/// What the passage loop does to check safety inside the critical section; one type per
/// oracle, so the loop is compiled once per oracle with nothing of the others in it.
pub(super) trait Checker {
    /// What `enter` hands to `exit`.
    type Token: Copy;
    /// The checker of the untimed passages between two sampled ones (`Self` for every oracle
    /// but the sampled self-check).
    type Light: Checker;
    /// Whether the loop runs extra checked passages between timed ones (out of line, about
    /// one in [`CHECK_GAP_MEAN`]) because `Light` checks less than `Self`.
    ///
    /// [`CHECK_GAP_MEAN`]: super::hot_loop::CHECK_GAP_MEAN
    const SPARSE: bool = false;
    /// Right after the lock let process `p` in.
    fn enter(g: &Guards, p: usize, session: usize, local: &mut CheckLocal) -> Self::Token;
    /// Right before the lock's exit section.
    fn exit(g: &Guards, token: Self::Token, local: &mut CheckLocal);
    /// Processes inside at this entry, for traces (0 when unknown).
    fn inside(token: Self::Token) -> u32;
}

/// No check (`--no-check`).
pub(super) struct NoCheck;

impl Checker for NoCheck {
    type Token = ();
    type Light = NoCheck;
    #[inline(always)]
    fn enter(_: &Guards, _: usize, _: usize, _: &mut CheckLocal) {}
    #[inline(always)]
    fn exit(_: &Guards, _: (), _: &mut CheckLocal) {}
    fn inside(_: ()) -> u32 {
        0
    }
}

/// The self-checking critical section ([`SelfCheck`]).
pub(super) struct SelfChecking;

impl Checker for SelfChecking {
    type Token = u64;
    type Light = SelfChecking;
    #[inline(always)]
    fn enter(g: &Guards, p: usize, session: usize, local: &mut CheckLocal) -> u64 {
        local.checked += 1;
        g.self_check.enter(p, session)
    }
    #[inline(always)]
    fn exit(g: &Guards, tag: u64, local: &mut CheckLocal) {
        if !g.self_check.exit(tag) {
            local.violations += 1;
        }
    }
    fn inside(_: u64) -> u32 {
        0
    }
}

/// The sampled self-check ([`OracleKind::Sampled`]): the whole check on the passages the loop
/// runs out of line (the timed ones, the ones that close a timed passage, and about one in
/// [`CHECK_GAP_MEAN`] others), a [`Peek`] on every other.
///
/// [`OracleKind::Sampled`]: crate::check::OracleKind::Sampled
/// [`CHECK_GAP_MEAN`]: super::hot_loop::CHECK_GAP_MEAN
pub(super) struct Sampled;

impl Checker for Sampled {
    /// The process, what it wrote, and whether it entered alone.
    type Token = (usize, u64, bool);
    type Light = Peek;
    const SPARSE: bool = true;
    #[inline(always)]
    fn enter(g: &Guards, p: usize, _: usize, local: &mut CheckLocal) -> Self::Token {
        local.checked += 1;
        let (wrote, alone) = g.self_check.sampled_enter(p);
        (p, wrote, alone)
    }
    #[inline(always)]
    fn exit(g: &Guards, (p, wrote, alone): Self::Token, local: &mut CheckLocal) {
        if !(g.self_check.sampled_exit(p, wrote) && alone) {
            local.violations += 1;
        }
    }
    fn inside(_: Self::Token) -> u32 {
        0
    }
}

/// An unsampled passage of the sampled self-check: one plain load of the owner word.
pub(super) struct Peek;

impl Checker for Peek {
    type Token = ();
    type Light = Peek;
    #[inline(always)]
    fn enter(g: &Guards, _: usize, _: usize, local: &mut CheckLocal) {
        if !g.self_check.peek() {
            local.violations += 1;
        }
    }
    #[inline(always)]
    fn exit(_: &Guards, _: (), _: &mut CheckLocal) {}
    fn inside(_: ()) -> u32 {
        0
    }
}

/// The exact counting oracle ([`Oracle`]).
pub(super) struct Counting;

impl Checker for Counting {
    type Token = Entry;
    type Light = Counting;
    #[inline(always)]
    fn enter(g: &Guards, _p: usize, session: usize, local: &mut CheckLocal) -> Entry {
        let e = g.counting.enter(session);
        local.inside_sum += e.inside;
        local.inside_max = local.inside_max.max(e.inside);
        e
    }
    #[inline(always)]
    fn exit(g: &Guards, e: Entry, _local: &mut CheckLocal) {
        g.counting.exit(e);
    }
    fn inside(e: Entry) -> u32 {
        e.inside as u32
    }
}
