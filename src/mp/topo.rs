//! Communication graphs for the local critical-section algorithms of seed 004, and initial
//! configurations C0 that satisfy their invariant l_i ≤ |CS_i(C0)| ≤ k_i.

use std::collections::VecDeque;
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

    /// An initial configuration (who is inside) with l_i ≤ |CS_i| ≤ k_i for every i, found by
    /// seeded randomized greedy search; `None` if none was found in a few hundred tries.
    pub fn initial_configuration(&self, l: &[usize], k: &[usize], seed: u64) -> Option<Vec<bool>> {
        let n = self.n();
        let mut rng = Rng::new(seed, 0xC0);
        for _ in 0..300 {
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
    fn initial_configuration_satisfies_bounds() {
        for t in [Topology::Ring, Topology::Grid, Topology::Random(4.0)] {
            let g = Graph::build(&t, 12, 3);
            let l = vec![1; 12];
            let k = vec![2; 12];
            let c = g.initial_configuration(&l, &k, 5).expect("found");
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
