//! The one table of message-passing algorithms: for each, its command-line name, how its
//! processes are built, the problem it solves, where it comes from, and the properties it
//! claims (which the runtimes check). Every lookup of an algorithm by name goes through
//! [`info`]; the runtimes get a monomorphic constructor from an entry with [`with_algo!`].
//!
//! [`with_algo!`]: crate::with_algo

use super::lkcs::{RuleSet, Variant};
use super::token_gme::Selection;
use crate::mp::Problem;

/// How an algorithm's processes are built: its type and the parameters of its constructor
/// (see [`with_algo!`](crate::with_algo)).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Make {
    /// [`super::suzuki_kasami::SuzukiKasami`].
    SuzukiKasami,
    /// [`super::ricart_agrawala::RicartAgrawala`].
    RicartAgrawala,
    /// [`super::token_gme::TokenGme`] with this type selection.
    TokenGme(Selection),
    /// [`super::token_gme::TokenGme::new_bounded`] with this type selection and smax.
    TokenGmeBounded(Selection, u64),
    /// [`super::ra1::Ra1`].
    Ra1,
    /// [`super::ra2::Ra2`].
    Ra2,
    /// [`super::lkcs::Local`], this variant under this rule set.
    Local(Variant, RuleSet),
}

/// One registered algorithm.
#[derive(Clone, Copy, Debug)]
pub struct AlgoInfo {
    /// Its command-line name.
    pub name: &'static str,
    /// How its processes are built.
    pub make: Make,
    /// The problem it solves (mutual exclusion, GME or local CS), which decides the safety
    /// check.
    pub problem: Problem,
    /// Where it comes from.
    #[expect(
        dead_code,
        reason = "each algorithm's source and summary; no command lists the message-passing algorithms yet"
    )]
    pub paper: &'static str,
    /// One line: what and where from.
    #[expect(
        dead_code,
        reason = "each algorithm's source and summary; no command lists the message-passing algorithms yet"
    )]
    pub about: &'static str,
    /// Whether it is correct on non-FIFO channels.
    pub allows_non_fifo: bool,
    /// Local CS: whether k_i is fixed to |N_i| + 1 (local mutual inclusion: only l_i binds).
    pub k_is_degree: bool,
    /// Whether it claims that a request waits at most m(n+1) − 1 sessions before a session
    /// of its type starts (seed 003's TokenGME), which the runtimes check.
    pub bounded_sessions: bool,
}

impl AlgoInfo {
    /// The most sessions a request may wait with `n` processes and `m` groups, if this
    /// algorithm claims a bound.
    pub fn sessions_bound(&self, n: usize, m: usize) -> Option<u64> {
        self.bounded_sessions
            .then(|| (m as u64) * (n as u64 + 1) - 1)
    }

    /// The rule set of LKCS / LMUTIN (None for every other algorithm).
    pub fn lkcs_rules(&self) -> Option<RuleSet> {
        match self.make {
            Make::Local(_, rules) => Some(rules),
            _ => None,
        }
    }

    /// This entry under rule set `rules` (None if it is not LKCS / LMUTIN).
    pub fn with_lkcs_rules(&self, rules: RuleSet) -> Option<AlgoInfo> {
        match self.make {
            Make::Local(variant, _) => Some(AlgoInfo {
                make: Make::Local(variant, rules),
                ..*self
            }),
            _ => None,
        }
    }
}

/// An entry with the defaults of a mutual-exclusion or GME algorithm.
const fn entry(
    name: &'static str,
    make: Make,
    problem: Problem,
    paper: &'static str,
    about: &'static str,
) -> AlgoInfo {
    AlgoInfo {
        name,
        make,
        problem,
        paper,
        about,
        allows_non_fifo: true,
        k_is_degree: false,
        bounded_sessions: false,
    }
}

/// smax of `token-gme-bounded`: request and session numbers stay in 0..=smax (seed 003 §5.2
/// allows any smax ≥ 2; a small one resets often, which the runs then exercise).
pub const TOKEN_GME_SMAX: u64 = 8;

/// Every algorithm, in the order `sim --algo all` runs them.
pub const ALGOS: &[AlgoInfo] = &[
    entry(
        "suzuki-kasami",
        Make::SuzukiKasami,
        Problem::Mutex,
        "Suzuki & Kasami 1985",
        "token mutual exclusion, n messages per CS (Suzuki & Kasami 1985; base of seed 003)",
    ),
    entry(
        "ricart-agrawala",
        Make::RicartAgrawala,
        Problem::Mutex,
        "Ricart & Agrawala 1981",
        "permission mutual exclusion, 2(n-1) messages per CS (Ricart & Agrawala 1981)",
    ),
    AlgoInfo {
        bounded_sessions: true,
        ..entry(
            "token-gme",
            Make::TokenGme(Selection::Priority),
            Problem::Gme,
            "seed 003",
            "TokenGME, priority (size + age) type selection (seed 003, reconstructed actions)",
        )
    },
    AlgoInfo {
        bounded_sessions: true,
        ..entry(
            "token-gme-fifo",
            Make::TokenGme(Selection::Fifo),
            Problem::Gme,
            "seed 003 Section 4.2",
            "TokenGME with FIFO type selection (seed 003 Section 4.2)",
        )
    },
    AlgoInfo {
        bounded_sessions: true,
        ..entry(
            "token-gme-bounded",
            Make::TokenGmeBounded(Selection::Priority, TOKEN_GME_SMAX),
            Problem::Gme,
            "seed 003 Section 5.2",
            "TokenGME with sequence numbers reset at smax = 8 (seed 003 Section 5.2)",
        )
    },
    entry(
        "ra1",
        Make::Ra1,
        Problem::Gme,
        "Joung (RA1)",
        "Joung's RA1: Ricart-Agrawala with forums, 2(n-1) messages",
    ),
    entry(
        "ra2",
        Make::Ra2,
        Problem::Gme,
        "Joung (RA2)",
        "Joung's RA2, reconstructed: leader with invited followers (rules in ra2.rs)",
    ),
    AlgoInfo {
        allows_non_fifo: false,
        k_is_degree: true,
        ..entry(
            "lmutin",
            Make::Local(Variant::Lmutin, RuleSet::Ours),
            Problem::LocalCs,
            "seed 004 Algorithm 2",
            "l_i-LMUTIN local mutual inclusion (seed 004 Algorithm 2)",
        )
    },
    AlgoInfo {
        allows_non_fifo: false,
        ..entry(
            "lkcs",
            Make::Local(Variant::Lkcs, RuleSet::Ours),
            Problem::LocalCs,
            "seed 004 Algorithms 3-7",
            "LKCS generalized local CS, l_i <= |CS_i| <= k_i (seed 004 Algorithms 3-7)",
        )
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

/// Calls `$body` with `$make` bound to the constructor `Fn(Pid, &Setup) -> A` of the
/// algorithm `$info` (an `AlgoInfo`) and returns what it gives. The runtimes are generic
/// over the algorithm, so each gets a monomorphic event loop.
#[macro_export]
macro_rules! with_algo {
    ($info:expr, |$make:ident| $body:expr) => {{
        let info: &$crate::mp::algo::AlgoInfo = $info;
        use $crate::mp::algo::{
            lkcs, ra1, ra2, ricart_agrawala, suzuki_kasami, token_gme, Make, Setup,
        };
        match info.make {
            Make::SuzukiKasami => {
                let $make = |p, s: &Setup| suzuki_kasami::SuzukiKasami::new(p, s);
                $body
            }
            Make::RicartAgrawala => {
                let $make = |p, s: &Setup| ricart_agrawala::RicartAgrawala::new(p, s);
                $body
            }
            Make::TokenGme(selection) => {
                let $make = move |p, s: &Setup| token_gme::TokenGme::new(p, s, selection);
                $body
            }
            Make::TokenGmeBounded(selection, smax) => {
                let $make =
                    move |p, s: &Setup| token_gme::TokenGme::new_bounded(p, s, selection, smax);
                $body
            }
            Make::Ra1 => {
                let $make = |p, s: &Setup| ra1::Ra1::new(p, s);
                $body
            }
            Make::Ra2 => {
                let $make = |p, s: &Setup| ra2::Ra2::new(p, s);
                $body
            }
            Make::Local(variant, rules) => {
                let rules = rules.rules();
                let $make = move |p, s: &Setup| lkcs::Local::with_rules(p, s, variant, rules);
                $body
            }
        }
    }};
}
