//! The algorithms, one file each, and the registry of their names.

pub mod lkcs;
pub mod ra1;
pub mod ra2;
pub mod ricart_agrawala;
pub mod suzuki_kasami;
pub mod token_gme;

use super::topo::Graph;
use super::Problem;

/// Everything a process's state machine is built from.
#[derive(Clone, Debug)]
pub struct Setup {
    /// Processes.
    pub n: usize,
    /// Groups (types) requests are drawn from.
    pub m: usize,
    /// The communication graph (complete for every algorithm but LKCS / LMUTIN).
    pub graph: Graph,
    /// Seed 004: lower bound l_i per process.
    pub l: Vec<usize>,
    /// Seed 004: upper bound k_i per process.
    pub k: Vec<usize>,
    /// Seed 004: which processes are inside in the initial configuration C0.
    pub initial_in: Vec<bool>,
    /// Seed 004: the leader P_LDR.
    pub leader: usize,
}

/// One registered algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgoInfo {
    /// Its command-line name.
    pub name: &'static str,
    /// The problem it solves.
    pub problem: Problem,
    /// Whether it is correct on non-FIFO channels.
    pub allows_non_fifo: bool,
    /// One line: what and where from.
    pub about: &'static str,
}

/// Every algorithm, in the order `sim --algo all` runs them.
pub const ALGOS: &[AlgoInfo] = &[
    AlgoInfo {
        name: "suzuki-kasami",
        problem: Problem::Mutex,
        allows_non_fifo: true,
        about: "token mutual exclusion, n messages per CS (Suzuki & Kasami 1985; base of seed 003)",
    },
    AlgoInfo {
        name: "ricart-agrawala",
        problem: Problem::Mutex,
        allows_non_fifo: true,
        about: "permission mutual exclusion, 2(n-1) messages per CS (Ricart & Agrawala 1981)",
    },
    AlgoInfo {
        name: "token-gme",
        problem: Problem::Gme,
        allows_non_fifo: true,
        about: "TokenGME, priority (size + age) type selection (seed 003, reconstructed actions)",
    },
    AlgoInfo {
        name: "token-gme-fifo",
        problem: Problem::Gme,
        allows_non_fifo: true,
        about: "TokenGME with FIFO type selection (seed 003 Section 4.2)",
    },
    AlgoInfo {
        name: "ra1",
        problem: Problem::Gme,
        allows_non_fifo: true,
        about: "Joung's RA1: Ricart-Agrawala with forums, 2(n-1) messages",
    },
    AlgoInfo {
        name: "ra2",
        problem: Problem::Gme,
        allows_non_fifo: true,
        about: "Joung's RA2, reconstructed: leader with invited followers (rules in ra2.rs)",
    },
    AlgoInfo {
        name: "lmutin",
        problem: Problem::LocalCs,
        allows_non_fifo: false,
        about: "l_i-LMUTIN local mutual inclusion (seed 004 Algorithm 2)",
    },
    AlgoInfo {
        name: "lkcs",
        problem: Problem::LocalCs,
        allows_non_fifo: false,
        about: "LKCS generalized local CS, l_i <= |CS_i| <= k_i (seed 004 Algorithms 3-7)",
    },
];

/// The registered algorithm called `name`.
pub fn info(name: &str) -> Option<&'static AlgoInfo> {
    ALGOS.iter().find(|a| a.name == name)
}

/// The names, comma-separated, for error messages.
pub fn names() -> String {
    ALGOS.iter().map(|a| a.name).collect::<Vec<_>>().join(", ")
}

/// Calls `$body` with `$A` bound to the concrete algorithm type of `$name` and `$make` a
/// constructor `Fn(Pid, &Setup) -> $A`. The runtimes are generic over the algorithm, so each
/// gets a monomorphic event loop.
#[macro_export]
macro_rules! with_algo {
    ($name:expr, |$make:ident| $body:expr) => {{
        let name: &str = $name;
        use $crate::mp::algo::{lkcs, ra1, ra2, ricart_agrawala, suzuki_kasami, token_gme, Setup};
        match name {
            "suzuki-kasami" => {
                let $make = |p, s: &Setup| suzuki_kasami::SuzukiKasami::new(p, s);
                Some($body)
            }
            "ricart-agrawala" => {
                let $make = |p, s: &Setup| ricart_agrawala::RicartAgrawala::new(p, s);
                Some($body)
            }
            "token-gme" => {
                let $make =
                    |p, s: &Setup| token_gme::TokenGme::new(p, s, token_gme::Selection::Priority);
                Some($body)
            }
            "token-gme-fifo" => {
                let $make =
                    |p, s: &Setup| token_gme::TokenGme::new(p, s, token_gme::Selection::Fifo);
                Some($body)
            }
            "ra1" => {
                let $make = |p, s: &Setup| ra1::Ra1::new(p, s);
                Some($body)
            }
            "ra2" => {
                let $make = |p, s: &Setup| ra2::Ra2::new(p, s);
                Some($body)
            }
            "lmutin" => {
                let $make = |p, s: &Setup| lkcs::Local::new(p, s, lkcs::Variant::Lmutin);
                Some($body)
            }
            "lkcs" => {
                let $make = |p, s: &Setup| lkcs::Local::new(p, s, lkcs::Variant::Lkcs);
                Some($body)
            }
            _ => None,
        }
    }};
}
