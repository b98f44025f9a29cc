//! Unit tests of the changed-entries vectors: in lockstep with a plain list of pairs.

use super::vector::{Changed, Vector};
use super::Ra2Msg;
use crate::mp::{Message, Pid};
use crate::workload::rng::Rng;

/// The scheme as a list: each entry's tick of change, and the messages as the (index, value)
/// pairs changed since the last send, applied one by one.
struct Pairs {
    val: Vec<u32>,
    changed_at: Vec<u64>,
    tick: u64,
    sent: Vec<u64>,
}

impl Pairs {
    fn new(n: usize) -> Self {
        Pairs {
            val: vec![0; n],
            changed_at: vec![0; n],
            tick: 0,
            sent: vec![0; n],
        }
    }
    fn raise(&mut self, k: usize, v: u32) -> bool {
        if v <= self.val[k] {
            return false;
        }
        self.val[k] = v;
        self.tick += 1;
        self.changed_at[k] = self.tick;
        true
    }
    fn send(&mut self, to: Pid) -> Vec<(u32, u32)> {
        let since = self.sent[to];
        self.sent[to] = self.tick;
        let mut out: Vec<(u64, u32, u32)> = (0..self.val.len())
            .filter(|&k| self.changed_at[k] > since)
            .map(|k| (self.changed_at[k], k as u32, self.val[k]))
            .collect();
        out.sort_by_key(|b| std::cmp::Reverse(b.0));
        out.into_iter().map(|(_, k, v)| (k, v)).collect()
    }
    fn merge(&mut self, pairs: &[(u32, u32)]) -> u64 {
        let mut added = 0;
        for &(k, v) in pairs {
            let old = self.val[k as usize];
            if self.raise(k as usize, v) {
                added += u64::from(v - old);
            }
        }
        added
    }
}

/// A message in flight on a link: which vector, the message, its pairs.
type InFlight = (usize, Changed, Vec<(u32, u32)>);

fn sorted(mut p: Vec<(u32, u32)>) -> Vec<(u32, u32)> {
    p.sort_unstable();
    p
}

/// How the merges of a [`lockstep`] run went.
#[derive(Default)]
struct Merges {
    all: usize,
    /// Merged without ticks.
    in_order: usize,
    /// By (receiver's values wide, snapshot's values wide).
    widths: [[usize; 2]; 2],
}

/// `n` processes, each with a vector sent one receiver at a time and one broadcast; random
/// raises (by 0 to 2, or with `jumps` now and then past 65 535, the ticks starting near
/// there), sends and deliveries (in order, or any message in flight when `fifo` is false).
/// Every message, every merge's sum and every vector agree with the list of pairs.
fn lockstep(seed: u64, n: usize, fifo: bool, jumps: bool) -> Merges {
    let mut rng = Rng::new(seed, 0);
    let mut pick = |k: usize| (rng.next_f64() * k as f64) as usize;
    // With jumps, the ticks too go past 16 bits (a narrow snapshot keeps them in two halves).
    let tick = if jumps { 65_530 } else { 0 };
    let mut new: Vec<[Vector; 2]> = (0..n)
        .map(|_| [Vector::starting_at(n, tick), Vector::starting_at(n, tick)])
        .collect();
    let mut old: Vec<[Pairs; 2]> = (0..n).map(|_| [Pairs::new(n), Pairs::new(n)]).collect();
    let mut links: Vec<Vec<InFlight>> = vec![Vec::new(); n * n];
    let mut merges = Merges::default();
    for _ in 0..4000 {
        let (p, w) = (pick(n), pick(2));
        match pick(4) {
            0 => {
                let k = pick(n);
                let jump = if jumps && pick(300) == 0 { 70_000 } else { 0 };
                let v = new[p][w].get(k) + jump + pick(3) as u32;
                assert_eq!(new[p][w].raise(k, v), old[p][w].raise(k, v));
            }
            1 if w == 0 => {
                let to = (p + 1 + pick(n - 1)) % n;
                let c = new[p][0].for_one(to);
                let pairs = old[p][0].send(to);
                links[p * n + to].push((0, c, pairs));
            }
            1 => {
                let c = new[p][1].for_all();
                for to in (0..n).filter(|&j| j != p) {
                    let pairs = old[p][1].send(to);
                    links[p * n + to].push((1, c.clone(), pairs));
                }
            }
            _ => {
                let (from, to) = (pick(n), p);
                let link = &mut links[from * n + to];
                if link.is_empty() {
                    continue;
                }
                let i = if fifo { 0 } else { pick(link.len()) };
                let (w, c, pairs) = link.remove(i);
                assert_eq!(sorted(c.pairs()), sorted(pairs.clone()));
                assert_eq!(c.len(), pairs.len());
                merges.all += 1;
                merges.in_order += usize::from(new[to][w].in_order(from, &c));
                merges.widths[usize::from(new[to][w].is_wide())][usize::from(c.is_wide())] += 1;
                assert_eq!(new[to][w].merge(from, &c), old[to][w].merge(&pairs));
            }
        }
        for (a, b) in new.iter().zip(&old) {
            assert_eq!(a[0].values(), b[0].val);
            assert_eq!(a[1].values(), b[1].val);
        }
    }
    merges
}

#[test]
fn dense_vectors_agree_with_lists_of_pairs_on_fifo_links() {
    // 5 entries are merged one by one; 37 are two whole runs of the merge's and 5 more.
    for (seed, n) in (1..=4).flat_map(|seed| [(seed, 5), (seed, 37)]) {
        let m = lockstep(seed, n, true, false);
        assert!(m.all > 100);
        assert_eq!(m.in_order, m.all, "on FIFO links every merge is in order");
        assert_eq!(m.widths[0][0], m.all, "values below 65 536 stay narrow");
    }
}

#[test]
fn dense_vectors_agree_with_lists_of_pairs_on_any_links() {
    // Overtaken messages break a sender's chain: later merges take the ticks.
    let (mut merges, mut in_order) = (0, 0);
    for (seed, n) in (1..=4).flat_map(|seed| [(seed, 4), (seed, 37)]) {
        let m = lockstep(seed, n, false, false);
        (merges, in_order) = (merges + m.all, in_order + m.in_order);
    }
    assert!(in_order > 0 && in_order < merges, "{in_order} of {merges}");
}

#[test]
fn vectors_widen_past_16_bits_and_still_agree_with_lists_of_pairs() {
    // Values jump past 65 535 now and then: vectors widen one by one, so narrow and wide
    // receivers merge narrow and wide snapshots, in order and (on any links) not.
    let mut widths = [[0; 2]; 2];
    let cases = [(1, true), (2, true), (3, false), (4, false)];
    for ((seed, fifo), n) in cases.into_iter().flat_map(|c| [(c, 5), (c, 37)]) {
        let m = lockstep(seed, n, fifo, true);
        for (r, row) in m.widths.iter().enumerate() {
            for (s, count) in row.iter().enumerate() {
                widths[r][s] += count;
            }
        }
    }
    assert!(widths.iter().flatten().all(|&c| c > 0), "{widths:?}");
}

#[test]
fn changed_entries_rebuild_the_vector_on_fifo_links() {
    // A sender's vector changes between sends; each receiver, merging in order what it
    // received, holds the sender's vector as it was at the last send.
    let mut rng = Rng::new(7, 0);
    let n = 6;
    let mut v = Vector::new(n);
    let mut at = vec![vec![0u32; n]; n];
    for _ in 0..300 {
        let k = (rng.next_f64() * n as f64) as usize;
        v.raise(k, v.get(k) + 1 + (rng.next_f64() * 3.0) as u32);
        let to = 1 + (rng.next_f64() * (n - 1) as f64) as usize;
        let c = v.for_one(to);
        assert!(c
            .pairs()
            .iter()
            .all(|&(k, _)| at[to][k as usize] != v.get(k as usize)));
        let mut r = Vector::with_values(&at[to]);
        r.merge(0, &c);
        at[to] = r.values();
        assert_eq!(at[to], v.values(), "receiver {to}");
    }
    // Nothing changed since the last send: an empty message.
    let to = 1;
    v.for_one(to);
    assert!(v.for_one(to).pairs().is_empty());
    assert_eq!(Ra2Msg::Reply(1, v.for_one(to)).size_ints(), 1);
}

#[test]
fn on_the_wire_a_message_is_its_pairs() {
    let mut v = Vector::new(5);
    v.raise(3, 4);
    v.raise(1, 2);
    let first = v.for_one(2);
    v.raise(3, 6);
    let c = v.for_one(2);
    assert_eq!(first.pairs(), vec![(1, 2), (3, 4)]);
    assert_eq!(c.pairs(), vec![(3, 6)]);
    let text = serde_json::to_string(&Ra2Msg::Reply(7, c.clone())).unwrap();
    let back: Ra2Msg = serde_json::from_str(&text).unwrap();
    assert_eq!(back.size_ints(), 3);
    let Ra2Msg::Reply(7, d) = back else {
        panic!("{back:?}")
    };
    assert_eq!(d.pairs(), c.pairs());
    let mut r = Vector::new(5);
    r.merge(0, &first);
    assert_eq!(r.merge(0, &d), 2);
    assert_eq!(r.values(), v.values());
}
