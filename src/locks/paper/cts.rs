//! Concurrent timestamp systems (CTS): `Label` and `Scan`, as seed 001 (Zehavi) uses them.
//!
//! A CTS gives each process p a `Label_p`, which takes a new timestamp, and a `Scan_p`, which
//! returns the current order of all n processes. Seed 001 relies on two properties, which it
//! quotes from its reference \[3\] (Afek, Dolev, Gafni, Merritt and Shavit, TOPLAS 1994):
//!
//! 1. If p begins `Label_p` after q finishes `Label_q`, any Scan performed entirely after both
//!    and before q labels again returns an order with q < p.
//! 2. If each p in a set P executes `Label_p` and then a `Scan_p` not followed by another Label,
//!    some p in P has a last Scan ordering every other member of P before it, and no `Label_q`
//!    (q ∈ P) starts after p's last Label finishes.
//!
//! The paper takes its bounded CTS, with O(n) reads and writes per Label and per Scan, from its
//! reference \[19\] (Dwork, Herlihy, Plotkin and Waarts, "Time-lapse snapshots", SIAM J. Comput.
//! 1999); this file does not implement that construction.
//!
//! [`UnboundedCts`] is the unbounded CTS: 64-bit labels, Label = one more than the largest
//! label read, order by (label, id). It has both properties (labels only grow, and a Label that
//! starts after another finished reads it and goes above it), but its labels grow without
//! bound; a 64-bit label would take centuries of passages to wrap. The bounded CTS is
//! [`crate::locks::paper::bounded_cts::BoundedCts`], behind the same trait.
//!
//! [`Monitor`] checks Properties 1 and 2 at every step of a scheduled run, from the marks both
//! CTSs make ([`mark`]).

use std::sync::Mutex;

use crate::mem::{Memory, Register};

/// A concurrent timestamp system over memory `M`.
pub trait Timestamps<M: Memory>: Send + Sync + Sized {
    /// A CTS for `n` processes.
    fn new(mem: &M, n: usize) -> Self;
    /// `Label_p`: take a new timestamp.
    fn label(&self, p: usize);
    /// `Scan_p`: the rank of every process in the current order (0 = first); ranks are a
    /// permutation of 0..n.
    fn scan(&self, p: usize) -> Vec<usize>;
    /// Checks the CTS's own register bounds (peeking).
    fn check(&self) -> Result<(), String> {
        Ok(())
    }
    /// The largest register value the CTS can hold, for reports (None: unbounded).
    #[cfg(test)]
    fn bound(&self) -> Option<i64> {
        None
    }
    /// Checks the CTS's properties at a marked step of process `p` ([`mark`]); other lines
    /// are not the CTS's and pass.
    fn lemma_step(&self, p: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        let _ = (p, at, args);
        Ok(())
    }
}

/// The marks a CTS makes, numbered above any figure's lines.
pub mod mark {
    /// `Label_p` begins (before its first access).
    pub const LABEL_BEGIN: u32 = 101;
    /// `Label_p` has ended (after its last access).
    pub const LABEL_END: u32 = 102;
    /// `Scan_p` begins.
    pub const SCAN_BEGIN: u32 = 103;
    /// `Scan_p` has ended; args\[0\] the ranks it returned, 4 bits each ([`super::pack`]).
    pub const SCAN_END: u32 = 104;
    /// The bounded CTS left its lockstep with the unbounded one; args (x, y): the bounded
    /// Scan ordered x before y by a recorded precedence, the unbounded labels the other way.
    pub const DIVERGED: u32 = 105;
    /// A Label's read of another process's register; args (q, collect: 1 or 2).
    pub const READ: u32 = 106;

    /// Whether `line` is one of these marks.
    pub fn is_cts(line: u32) -> bool {
        (LABEL_BEGIN..=READ).contains(&line)
    }
}

/// Most processes whose Scans the marks carry (4 bits of rank each in one i64).
pub const MONITORED: usize = 16;

/// Ranks packed 4 bits each (0 when n > [`MONITORED`]: nothing is checked then).
pub fn pack(rank: &[usize]) -> i64 {
    if rank.len() > MONITORED {
        return 0;
    }
    rank.iter()
        .enumerate()
        .fold(0u64, |acc, (q, &r)| acc | ((r as u64 & 15) << (4 * q))) as i64
}

fn unpack(v: i64, n: usize) -> Vec<usize> {
    (0..n)
        .map(|q| ((v as u64 >> (4 * q)) & 15) as usize)
        .collect()
}

/// One process's history as the marks tell it, in ghost time (one tick per mark).
#[derive(Clone, Debug, Default)]
struct History {
    /// Completed Labels, (begin, end).
    labels: Vec<(u64, u64)>,
    /// The Label in progress, its begin.
    labelling: Option<u64>,
    /// The Scan in progress, its begin.
    scanning: Option<u64>,
    /// The last completed Scan: (begin, end, ranks).
    scan: Option<(u64, u64, Vec<usize>)>,
}

impl History {
    /// The last Label completed before time t.
    fn label_before(&self, t: u64) -> Option<(u64, u64)> {
        self.labels.iter().rev().find(|l| l.1 < t).copied()
    }

    /// Whether a Label began in (after, until].
    fn began_label(&self, after: u64, until: u64) -> bool {
        let began = |b: u64| b > after && b <= until;
        self.labels.iter().any(|l| began(l.0)) || self.labelling.is_some_and(began)
    }
}

/// Checks CTS Properties 1 and 2 (above) from the marks, at the end of every Scan. Ghost time
/// is the order of the marks; a mark runs in the step of the access before it, so a mark
/// interval contains the operation's accesses, and "begins after ends" between marks implies it
/// between the accesses: the checks are sound (they never ask for an order the operations did
/// not have), and miss only pairs whose marks straddle.
#[derive(Debug)]
pub struct Monitor {
    n: usize,
    ghost: Mutex<(u64, Vec<History>)>,
}

impl Monitor {
    /// A monitor of n processes.
    pub fn new(n: usize) -> Self {
        Monitor {
            n,
            ghost: Mutex::new((0, vec![History::default(); n])),
        }
    }

    /// Feeds one mark of process p; checks the properties when it ends a Scan.
    pub fn step(&self, p: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        if self.n > MONITORED || !mark::is_cts(at) {
            return Ok(());
        }
        let mut g = self.ghost.lock().unwrap_or_else(|e| e.into_inner());
        g.0 += 1;
        let now = g.0;
        let h = &mut g.1[p];
        match at {
            mark::LABEL_BEGIN => h.labelling = Some(now),
            mark::LABEL_END => {
                let b = h.labelling.take().unwrap_or(now);
                h.labels.push((b, now));
            }
            mark::SCAN_BEGIN => h.scanning = Some(now),
            mark::SCAN_END => {
                let b = h.scanning.take().unwrap_or(now);
                let rank = unpack(args[0], self.n);
                h.scan = Some((b, now, rank.clone()));
                property_1(&g.1, p, b, now, &rank)?;
                property_2(&g.1)?;
            }
            _ => {}
        }
        Ok(())
    }
}

/// Property 1 for the Scan of `s` over [sb, se] that returned `rank`.
fn property_1(hs: &[History], s: usize, sb: u64, se: u64, rank: &[usize]) -> Result<(), String> {
    for (q, hq) in hs.iter().enumerate() {
        let Some((_, qe)) = hq.label_before(sb) else {
            continue;
        };
        if hq.began_label(qe, se) {
            continue; // q labels again before the Scan ends
        }
        for (p, hp) in hs.iter().enumerate() {
            let follows = hp.label_before(sb).is_some_and(|(pb, _)| pb > qe);
            if p != q && follows && rank[q] > rank[p] {
                return Err(format!(
                    "cts: Property 1 broken: process {p} began Label after process {q} finished its Label, yet process {s}'s Scan after both orders {p} before {q} (ranks {rank:?})"
                ));
            }
        }
    }
    Ok(())
}

/// Property 2 over every set of processes whose last Label was followed by a completed Scan
/// and no Label since.
fn property_2(hs: &[History]) -> Result<(), String> {
    let settled: Vec<usize> = (0..hs.len())
        .filter(|&p| {
            let h = &hs[p];
            h.labelling.is_none()
                && match (h.labels.last(), &h.scan) {
                    (Some(l), Some(s)) => s.0 > l.1,
                    _ => false,
                }
        })
        .collect();
    for set in 1u32..(1 << settled.len()) {
        let members: Vec<usize> = (0..settled.len())
            .filter(|i| set & (1 << i) != 0)
            .map(|i| settled[i])
            .collect();
        if members.len() < 2 {
            continue;
        }
        let last = |p: usize| {
            let rank = &hs[p].scan.as_ref().expect("settled").2;
            let pe = hs[p].labels.last().expect("settled").1;
            members.iter().all(|&q| q == p || rank[q] < rank[p])
                && members
                    .iter()
                    .all(|&q| hs[q].labels.last().expect("settled").0 < pe)
        };
        if !members.iter().any(|&p| last(p)) {
            return Err(format!(
                "cts: Property 2 broken for processes {members:?}: none has a last Scan ordering the others before it with no Label of theirs starting after its last Label ended"
            ));
        }
    }
    Ok(())
}

/// Unbounded labels: `Label_p` writes 1 + the largest label it reads; `Scan` orders by
/// (label, id).
pub struct UnboundedCts<M: Memory> {
    mem: M,
    labels: Box<[M::Reg]>,
    monitor: Monitor,
}

impl<M: Memory> Timestamps<M> for UnboundedCts<M> {
    fn new(mem: &M, n: usize) -> Self {
        UnboundedCts {
            labels: mem.per_process(n, 0),
            monitor: Monitor::new(n),
            mem: mem.clone(),
        }
    }

    fn label(&self, p: usize) {
        self.mem.mark(p, mark::LABEL_BEGIN, [0, 0]);
        let max = self.labels.iter().map(|l| l.read(p)).max().unwrap_or(0);
        self.labels[p].write(p, max + 1);
        self.mem.mark(p, mark::LABEL_END, [0, 0]);
    }

    fn scan(&self, p: usize) -> Vec<usize> {
        self.mem.mark(p, mark::SCAN_BEGIN, [0, 0]);
        let seen: Vec<i64> = self.labels.iter().map(|l| l.read(p)).collect();
        let rank = ranks_by_label(&seen);
        self.mem.mark(p, mark::SCAN_END, [pack(&rank), 0]);
        rank
    }

    fn lemma_step(&self, p: usize, at: u32, args: [i64; 2]) -> Result<(), String> {
        self.monitor.step(p, at, args)
    }

    fn check(&self) -> Result<(), String> {
        for (q, l) in self.labels.iter().enumerate() {
            let v = l.peek();
            if v < 0 {
                return Err(format!("cts: label of process {q} = {v} < 0"));
            }
        }
        Ok(())
    }
}

/// The rank of every process when ordered by (label, id).
pub fn ranks_by_label(labels: &[i64]) -> Vec<usize> {
    let mut ids: Vec<usize> = (0..labels.len()).collect();
    ids.sort_by_key(|&q| (labels[q], q));
    let mut rank = vec![0; ids.len()];
    for (r, q) in ids.into_iter().enumerate() {
        rank[q] = r;
    }
    rank
}

#[cfg(test)]
mod tests {
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::{Arc, Mutex};

    use super::*;
    use crate::mem::{NativeMemory, ScheduledMemory};

    #[test]
    fn property_1_sequential() {
        let mem = NativeMemory::default();
        let cts = UnboundedCts::new(&mem, 4);
        cts.label(2);
        cts.label(0); // 0 begins after 2 finished
        cts.label(3);
        for scanner in 0..4 {
            let r = cts.scan(scanner);
            assert!(r[2] < r[0] && r[0] < r[3], "{r:?}");
            let mut sorted = r.clone();
            sorted.sort();
            assert_eq!(sorted, vec![0, 1, 2, 3], "a permutation");
        }
    }

    /// Property 1 under explored interleavings: q labels, then p labels (p begins after q
    /// finished), while a third process labels concurrently; a scan after both sees q < p.
    #[test]
    fn property_1_under_schedules() {
        shuttle::check_random(
            || {
                let cts = Arc::new(UnboundedCts::new(&ScheduledMemory, 3));
                let c = cts.clone();
                let other = shuttle::thread::spawn(move || c.label(2));
                cts.label(1);
                cts.label(0);
                let r = cts.scan(0);
                assert!(r[1] < r[0], "q = 1 labelled before p = 0 began: {r:?}");
                other.join().unwrap();
            },
            500,
        );
    }

    /// Property 2 under explored interleavings: every process labels then scans once; some
    /// process's scan orders all others before it, and no label started after its label ended.
    #[test]
    fn property_2_under_schedules() {
        shuttle::check_random(
            || {
                let n = 3;
                let cts = Arc::new(UnboundedCts::new(&ScheduledMemory, n));
                let clock = Arc::new(AtomicUsize::new(0));
                let log = Arc::new(Mutex::new(vec![(0usize, 0usize, Vec::new()); n]));
                let handles: Vec<_> = (0..n)
                    .map(|p| {
                        let (cts, clock, log) = (cts.clone(), clock.clone(), log.clone());
                        shuttle::thread::spawn(move || {
                            let start = clock.fetch_add(1, Ordering::SeqCst);
                            cts.label(p);
                            let end = clock.fetch_add(1, Ordering::SeqCst);
                            let order = cts.scan(p);
                            log.lock().unwrap()[p] = (start, end, order);
                        })
                    })
                    .collect();
                for h in handles {
                    h.join().unwrap();
                }
                let log = log.lock().unwrap();
                let ok = (0..n).any(|p| {
                    let (_, end, order) = &log[p];
                    let last = (0..n).filter(|&q| q != p).all(|q| order[q] < order[p]);
                    let none_after = (0..n).all(|q| log[q].0 < *end || q == p);
                    last && none_after
                });
                assert!(ok, "property 2 fails: {log:?}");
            },
            500,
        );
    }
}
