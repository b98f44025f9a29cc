//! The safety monitor the simulator and the threaded runtime share: who is inside, by group
//! and by closed neighbourhood, checked at every entry and exit against the run's problem
//! (mutual exclusion, GME, l_i ≤ |CS_i| ≤ k_i); the violations found; and the concurrency
//! figures (time-integral of the number inside, its maximum). The MPI runtime checks the same
//! properties from logs afterwards (`mpi::check`).

use super::run_config::RunConfig;
use super::{Group, Pid, Problem};

/// Seed 003 §5.1: `p` entered for type `ty`, which must be one of the types its request
/// named (`asked`); the GME check then counts it in `ty` ([`Safety::enter`]). The violation, if
/// not.
pub fn not_asked(p: Pid, ty: Group, asked: &[Group]) -> Option<String> {
    (!asked.contains(&ty))
        .then(|| format!("p{p} entered type {ty}, which its request {asked:?} did not name"))
}

/// At most this many violations are described (all are counted).
const DESCRIBED: usize = 5;

/// The global view of who is inside.
#[derive(Clone, Debug)]
pub struct Safety {
    problem: Problem,
    inside: usize,
    by_group: Vec<usize>,
    groups_inside: usize,
    closed: Vec<Vec<Pid>>,
    count_in: Vec<usize>,
    l: Vec<usize>,
    k: Vec<usize>,
    /// Violations found.
    pub violations: u64,
    /// The first few, described.
    pub described: Vec<String>,
    /// The most processes inside at once.
    pub inside_max: usize,
    /// The integral over time of the number inside.
    pub inside_integral: f64,
    /// The time with someone inside.
    pub busy_time: f64,
    last_change: f64,
}

impl Safety {
    /// Nobody inside yet, at time 0.
    pub fn new(cfg: &RunConfig) -> Self {
        let n = cfg.setup.n;
        Safety {
            problem: cfg.problem,
            inside: 0,
            by_group: vec![0; cfg.groups()],
            groups_inside: 0,
            closed: cfg.closed_neighbourhoods(),
            count_in: vec![0; n],
            l: cfg.setup.l.clone(),
            k: cfg.setup.k.clone(),
            violations: 0,
            described: Vec::new(),
            inside_max: 0,
            inside_integral: 0.0,
            busy_time: 0.0,
            last_change: 0.0,
        }
    }

    /// How many processes are inside.
    #[inline]
    pub fn inside(&self) -> usize {
        self.inside
    }

    /// Counts one violation, and describes it if it is among the first few.
    pub fn record(&mut self, what: String) {
        self.violations += 1;
        if self.described.len() < DESCRIBED {
            self.described.push(what);
        }
    }

    /// `p` is inside in the initial configuration (seed 004); no check.
    pub fn start_inside(&mut self, p: Pid) {
        self.inside += 1;
        for &u in &self.closed[p] {
            self.count_in[u] += 1;
        }
    }

    /// Local CS: the neighbourhoods the initial configuration leaves outside [l, k].
    pub fn initial_violations(&self) -> Vec<String> {
        if self.problem != Problem::LocalCs {
            return Vec::new();
        }
        (0..self.count_in.len())
            .filter(|&u| self.count_in[u] < self.l[u] || self.count_in[u] > self.k[u])
            .map(|u| format!("initial |CS_{u}| = {} outside [l, k]", self.count_in[u]))
            .collect()
    }

    /// Advances the concurrency integral to `now`.
    #[inline]
    pub fn tick(&mut self, now: f64) {
        let dt = now - self.last_change;
        if self.inside > 0 {
            self.inside_integral += dt * self.inside as f64;
            self.busy_time += dt;
        }
        self.last_change = now;
    }

    /// `p` enters in group `g`: the violations this entry makes.
    pub fn enter(&mut self, p: Pid, g: Group) -> Vec<String> {
        let mut found = Vec::new();
        match self.problem {
            Problem::Mutex => {
                if self.inside > 0 {
                    found.push(format!("p{p} entered with {} inside", self.inside));
                }
            }
            Problem::Gme => {
                if self.groups_inside > 0 && self.by_group[g] == 0 {
                    found.push(format!(
                        "p{p} entered group {g} while another group is inside"
                    ));
                }
                if self.by_group[g] == 0 {
                    self.groups_inside += 1;
                }
                self.by_group[g] += 1;
            }
            Problem::LocalCs => self.local_change(p, true, &mut found),
        }
        self.inside += 1;
        self.inside_max = self.inside_max.max(self.inside);
        found
    }

    /// `p` leaves group `g`: the violations this exit makes.
    pub fn exit(&mut self, p: Pid, g: Group) -> Vec<String> {
        let mut found = Vec::new();
        self.inside -= 1;
        match self.problem {
            Problem::Gme => {
                self.by_group[g] -= 1;
                if self.by_group[g] == 0 {
                    self.groups_inside -= 1;
                }
            }
            Problem::LocalCs => self.local_change(p, false, &mut found),
            Problem::Mutex => {}
        }
        found
    }

    /// l_i ≤ |CS_i| ≤ k_i for every closed neighbourhood containing `p`.
    fn local_change(&mut self, p: Pid, entering: bool, found: &mut Vec<String>) {
        for &u in &self.closed[p] {
            if entering {
                self.count_in[u] += 1;
                if self.count_in[u] > self.k[u] {
                    let c = self.count_in[u];
                    found.push(format!("|CS_{u}| = {c} > k = {}", self.k[u]));
                }
            } else {
                self.count_in[u] -= 1;
                if self.count_in[u] < self.l[u] {
                    let c = self.count_in[u];
                    found.push(format!("|CS_{u}| = {c} < l = {}", self.l[u]));
                }
            }
        }
    }

    /// Local CS: the processes whose entering or leaving alone keeps l_i ≤ |CS_i| ≤ k_i in
    /// every closed neighbourhood (`is_inside` says where each is). None at all is a frozen
    /// configuration, which no algorithm that moves one process at a time can leave.
    pub fn movable(&self, is_inside: impl Fn(Pid) -> bool) -> Vec<Pid> {
        (0..self.closed.len())
            .filter(|&p| {
                let inside = is_inside(p);
                self.closed[p].iter().all(|&u| {
                    if inside {
                        self.count_in[u] > self.l[u]
                    } else {
                        self.count_in[u] < self.k[u]
                    }
                })
            })
            .collect()
    }
}
