//! Communication graphs for the local critical-section algorithms of seed 004, and initial
//! configurations C0 that satisfy their invariant l_i ≤ |CS_i(C0)| ≤ k_i.

use std::collections::{HashSet, VecDeque};
use std::fmt;
use std::str::FromStr;

use crate::workload::rng::Rng;

/// The forms of `--topology`.
pub const TOPOLOGY_FORMS: &str =
    "complete, ring, grid (as square as n allows), random:D (mean degree D, connected, seeded)";

/// A topology name.
#[derive(Clone, Debug, PartialEq)]
pub enum Topology {
    /// Every pair connected.
    Complete,
    /// A cycle 0–1–…–(n−1)–0.
    Ring,
    /// A grid of r rows, r the largest divisor of n not above √n.
    Grid,
    /// A ring plus random chords until the mean degree reaches D (so it stays connected).
    Random(f64),
}

impl FromStr for Topology {
    type Err = String;
    fn from_str(s: &str) -> Result<Self, String> {
        match s {
            "complete" => Ok(Topology::Complete),
            "ring" => Ok(Topology::Ring),
            "grid" => Ok(Topology::Grid),
            _ => {
                let bad = || format!("unknown topology `{s}`: use {TOPOLOGY_FORMS}");
                let d = s.strip_prefix("random:").ok_or_else(bad)?;
                let d: f64 = d.parse().map_err(|_| bad())?;
                if !(d.is_finite() && d >= 2.0) {
                    return Err(format!("random:D needs D >= 2, got `{s}`"));
                }
                Ok(Topology::Random(d))
            }
        }
    }
}

impl fmt::Display for Topology {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Topology::Complete => f.write_str("complete"),
            Topology::Ring => f.write_str("ring"),
            Topology::Grid => f.write_str("grid"),
            Topology::Random(d) => write!(f, "random:{d}"),
        }
    }
}

/// An undirected graph as sorted adjacency lists.
#[derive(Clone, Debug)]
pub struct Graph {
    adj: Vec<Vec<usize>>,
    complete: bool,
}

impl Graph {
    /// The graph of `t` on `n` vertices (`seed` for random ones).
    pub fn build(t: &Topology, n: usize, seed: u64) -> Graph {
        let mut adj = vec![Vec::new(); n];
        let add = |adj: &mut Vec<Vec<usize>>, a: usize, b: usize| {
            if a != b && !adj[a].contains(&b) {
                adj[a].push(b);
                adj[b].push(a);
            }
        };
        match t {
            Topology::Complete => return Graph::complete(n),
            Topology::Ring => {
                for i in 0..n {
                    add(&mut adj, i, (i + 1) % n);
                }
            }
            Topology::Grid => {
                let rows = (1..=n)
                    .filter(|&r| n.is_multiple_of(r) && r * r <= n)
                    .max()
                    .unwrap_or(1);
                let cols = n / rows;
                for r in 0..rows {
                    for c in 0..cols {
                        let i = r * cols + c;
                        if c + 1 < cols {
                            add(&mut adj, i, i + 1);
                        }
                        if r + 1 < rows {
                            add(&mut adj, i, i + cols);
                        }
                    }
                }
            }
            Topology::Random(d) => {
                for i in 0..n {
                    add(&mut adj, i, (i + 1) % n);
                }
                let target = ((d * n as f64) / 2.0).round() as usize;
                let max_edges = n * n.saturating_sub(1) / 2;
                let mut edges = adj.iter().map(Vec::len).sum::<usize>() / 2;
                let mut rng = Rng::new(seed, 0x70_90);
                while edges < target.min(max_edges) {
                    let a = rng.below(n as u64) as usize;
                    let b = rng.below(n as u64) as usize;
                    if a != b && !adj[a].contains(&b) {
                        add(&mut adj, a, b);
                        edges += 1;
                    }
                }
            }
        }
        for l in &mut adj {
            l.sort_unstable();
        }
        Graph {
            adj,
            complete: false,
        }
    }

    /// The complete graph on `n` vertices.
    pub fn complete(n: usize) -> Graph {
        Graph {
            adj: (0..n)
                .map(|i| (0..n).filter(|&j| j != i).collect())
                .collect(),
            complete: true,
        }
    }

    /// Vertices.
    pub fn n(&self) -> usize {
        self.adj.len()
    }

    /// N_i, sorted.
    pub fn neighbours(&self, i: usize) -> &[usize] {
        &self.adj[i]
    }

    /// Hop distance (usize::MAX when disconnected).
    pub fn distance(&self, a: usize, b: usize) -> usize {
        if a == b {
            return 0;
        }
        if self.complete {
            return 1;
        }
        let mut dist = vec![usize::MAX; self.n()];
        dist[a] = 0;
        let mut q = VecDeque::from([a]);
        while let Some(u) = q.pop_front() {
            for &v in &self.adj[u] {
                if dist[v] == usize::MAX {
                    dist[v] = dist[u] + 1;
                    if v == b {
                        return dist[v];
                    }
                    q.push_back(v);
                }
            }
        }
        usize::MAX
    }

    /// Whether configuration `c` (who is inside) has l_i ≤ |CS_i| ≤ k_i in every closed
    /// neighbourhood.
    pub fn within(&self, c: &[bool], l: &[usize], k: &[usize]) -> bool {
        (0..self.n()).all(|i| {
            let inside = usize::from(c[i]) + self.adj[i].iter().filter(|&&j| c[j]).count();
            l[i] <= inside && inside <= k[i]
        })
    }

    /// An initial configuration (who is inside) with l_i ≤ |CS_i| ≤ k_i for every i from which
    /// every process can enter or leave, found by seeded randomized greedy search; otherwise
    /// one line saying why none was found.
    ///
    /// Moving one process at a time between configurations within the bounds is symmetric
    /// (the move back is as legal), so the configurations reachable from C0 are C0's
    /// connected component, and a process that toggles nowhere in it can never be served by
    /// any algorithm: some bounds have no such component at all (a 3 × 3 grid with l = 1,
    /// k = 2 has one component with moves, in which the centre never moves, and four frozen
    /// configurations), others have a live one besides frozen or partly stuck ones.
    pub fn initial_configuration(
        &self,
        l: &[usize],
        k: &[usize],
        seed: u64,
    ) -> Result<Vec<bool>, String> {
        let mut stuck: Option<usize> = None;
        let mut rng = Rng::new(seed, 0xC0);
        // Components where some process is stuck are searched in full: give up after a few
        // searches' worth of configurations.
        let mut budget = 4 * self.search_cap();
        for _ in 0..300 {
            let Some(c) = self.greedy_configuration(l, k, &mut rng) else {
                continue;
            };
            match self.search(&c, l, k) {
                (None, _) => return Ok(c),
                (Some(p), seen) => {
                    stuck = Some(p);
                    budget = budget.saturating_sub(seen.max(1));
                    if budget == 0 {
                        break;
                    }
                }
            }
        }
        Err(match stuck {
            None => "no configuration with l <= |CS_i| <= k in every closed neighbourhood found"
                .to_string(),
            Some(p) => format!(
                "every configuration found within l <= |CS_i| <= k leaves a process (p{p} in the last one tried) unable \
                 ever to enter or leave (no algorithm can be live)"
            ),
        })
    }

    #[cfg(test)]
    /// A process that can never enter or leave from configuration `c` (which satisfies the
    /// bounds): one that toggles on no move of `c`'s connected component of configurations
    /// within the bounds. The search stops as soon as every process was seen to move, and
    /// trusts a component larger than `search_cap` configurations (10 000 to 300 000, fewer
    /// for more processes).
    pub fn never_moves(&self, c: &[bool], l: &[usize], k: &[usize]) -> Option<usize> {
        self.search(c, l, k).0
    }

    /// How many configurations one search may visit.
    fn search_cap(&self) -> usize {
        (4_000_000 / self.n().max(1)).clamp(10_000, 300_000)
    }

    /// `never_moves`, and how many configurations the search visited.
    fn search(&self, c: &[bool], l: &[usize], k: &[usize]) -> (Option<usize>, usize) {
        let cap = self.search_cap();
        let n = self.n();
        let pack = |c: &[bool]| -> Vec<u64> {
            let mut w = vec![0u64; n.div_ceil(64)];
            for (i, &b) in c.iter().enumerate() {
                if b {
                    w[i / 64] |= 1 << (i % 64);
                }
            }
            w
        };
        let mut moved = vec![false; n];
        let mut left = n;
        let mut seen: HashSet<Vec<u64>> = HashSet::from([pack(c)]);
        let mut queue = VecDeque::from([c.to_vec()]);
        while let Some(cur) = queue.pop_front() {
            let count: Vec<usize> = (0..n)
                .map(|u| usize::from(cur[u]) + self.adj[u].iter().filter(|&&v| cur[v]).count())
                .collect();
            for p in 0..n {
                let ok = std::iter::once(p)
                    .chain(self.adj[p].iter().copied())
                    .all(|u| {
                        if cur[p] {
                            count[u] > l[u]
                        } else {
                            count[u] < k[u]
                        }
                    });
                if !ok {
                    continue;
                }
                if !moved[p] {
                    moved[p] = true;
                    left -= 1;
                    if left == 0 {
                        return (None, seen.len());
                    }
                }
                let mut next = cur.clone();
                next[p] = !next[p];
                if seen.len() < cap && seen.insert(pack(&next)) {
                    queue.push_back(next);
                }
            }
        }
        if seen.len() >= cap {
            return (None, seen.len());
        }
        (moved.iter().position(|&m| !m), seen.len())
    }

    /// One seeded randomized greedy attempt at a configuration within the bounds.
    fn greedy_configuration(&self, l: &[usize], k: &[usize], rng: &mut Rng) -> Option<Vec<bool>> {
        let n = self.n();
        {
            let mut inside = vec![false; n];
            let mut count = vec![0usize; n];
            let mut order: Vec<usize> = (0..n).collect();
            for i in (1..n).rev() {
                order.swap(i, rng.below(i as u64 + 1) as usize);
            }
            // Add processes, most-deficient neighbourhood first, while no upper bound breaks.
            for &v in &order {
                let closed = || self.adj[v].iter().copied().chain(std::iter::once(v));
                let needed = closed().any(|u| count[u] < l[u]);
                let fits = closed().all(|u| count[u] < k[u]);
                if needed && fits {
                    inside[v] = true;
                    for u in closed() {
                        count[u] += 1;
                    }
                }
            }
            if (0..n).all(|i| l[i] <= count[i] && count[i] <= k[i]) {
                return Some(inside);
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn shapes() {
        let r = Graph::build(&Topology::Ring, 5, 1);
        assert_eq!(r.neighbours(0), &[1, 4]);
        assert_eq!(r.distance(0, 2), 2);
        let g = Graph::build(&Topology::Grid, 6, 1);
        assert_eq!(g.neighbours(0), &[1, 3]);
        assert_eq!(g.neighbours(4), &[1, 3, 5]);
        let c = Graph::complete(4);
        assert_eq!(c.neighbours(2), &[0, 1, 3]);
        let rnd = Graph::build(&Topology::Random(4.0), 20, 7);
        let deg: usize = (0..20).map(|i| rnd.neighbours(i).len()).sum();
        assert_eq!(deg, 80);
        assert!((1..20).all(|i| rnd.distance(0, i) < usize::MAX));
        assert!("random:1".parse::<Topology>().is_err());
        assert!("torus".parse::<Topology>().is_err());
    }

    #[test]
    fn configurations_where_some_process_can_never_move_are_found() {
        // Ring of 16, (1, 2): 1100 repeated is within the bounds and frozen (every process
        // inside has a neighbourhood at l, every process outside one at k).
        let ring = Graph::build(&Topology::Ring, 16, 1);
        let (l, k) = (vec![1; 16], vec![2; 16]);
        let frozen: Vec<bool> = (0..16).map(|i| i % 4 < 2).collect();
        assert_eq!(ring.never_moves(&frozen, &l, &k), Some(0));
        // 1000 repeated is not: its component lets every process move.
        let sparse: Vec<bool> = (0..16).map(|i| i % 4 == 0).collect();
        assert_eq!(ring.never_moves(&sparse, &l, &k), None);
        // A 3 × 3 grid with (1, 2) has no configuration from which the centre ever moves.
        let grid = Graph::build(&Topology::Grid, 9, 1);
        let (l, k) = (vec![1; 9], vec![2; 9]);
        let err = grid.initial_configuration(&l, &k, 1).unwrap_err();
        assert!(err.contains("unable ever to enter or leave"), "{err}");
        // With (1, 3) it has, and the search avoids its one frozen configuration.
        let k = vec![3; 9];
        for seed in 1..=5 {
            let c = grid.initial_configuration(&l, &k, seed).expect("live one");
            assert_eq!(grid.never_moves(&c, &l, &k), None);
        }
        // Bounds no configuration meets: (3, 3) puts every corner's neighbours inside, four
        // of them around the centre.
        let err = grid.initial_configuration(&[3; 9], &[3; 9], 1).unwrap_err();
        assert!(err.contains("no configuration"), "{err}");
    }

    #[test]
    fn initial_configuration_satisfies_bounds() {
        for t in [Topology::Ring, Topology::Grid, Topology::Random(4.0)] {
            let g = Graph::build(&t, 12, 3);
            let l = vec![1; 12];
            let k = vec![2; 12];
            let c = g.initial_configuration(&l, &k, 5).expect("found");
            assert_eq!(g.never_moves(&c, &l, &k), None, "{t}");
            for i in 0..12 {
                let cnt = g
                    .neighbours(i)
                    .iter()
                    .chain(std::iter::once(&i))
                    .filter(|&&j| c[j])
                    .count();
                assert!((1..=2).contains(&cnt), "{t}: {i} has {cnt}");
            }
        }
    }
}
