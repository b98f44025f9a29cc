//! The rule sets a user can pick for LKCS and LMUTIN (`sim --lkcs-rules`): ours (every
//! runtime's default) or the seed's text as far as it runs.

use super::leader::{tightened, tightened_c0};
use super::{Mutant, Rules, Variant};
use crate::mp::algo::Setup;

/// Which rules LKCS and LMUTIN run.
///
/// `printed` is Algorithms 2–7 with the seed's leader (Algorithms 6–7, the macros L_i, K_i
/// within distance 2 of P_LDR) and without our parking (LK-15). It keeps the rules that read
/// the text where it is silent or slipped, which the algorithm cannot run without: LK-1
/// (initial grants), LK-2 (grant sets, FIFO), LK-3 and LK-4 (stale Preempt / Relinquish),
/// LK-7 (serving while Cond_i holds), LK-11 (preempt only unused grants), LK-13 (grant
/// identity) and LK-16 (the logical clock the seed names); the leader's readings LK-14a…f
/// (`leader.rs`). `printed-at-capacity` reads Algorithm 6's tests at Cond_i's limits
/// (LK-14g). LMUTIN has no leader: for it `printed` only drops LK-15, which it never uses.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, clap::ValueEnum)]
pub enum RuleSet {
    /// LK-14 (no leader), LK-15 (parking), LK-16 (logical clock): every runtime's default.
    #[default]
    Ours,
    /// The seed's leader, no parking.
    Printed,
    /// As `printed`, Algorithm 6's tests at Cond_i's limits (LK-14g).
    PrintedAtCapacity,
    /// `ours` with Cond_i's MUTEX test off by one (k_i + 1 inside): a broken algorithm for
    /// testing the checks.
    #[value(hide = true)]
    MutantKPlusOne,
    /// `ours` with Cond_i's MUTIN test off by one (l_i − 1 inside): a broken algorithm for
    /// testing the checks.
    #[value(hide = true)]
    MutantLMinusOne,
}

impl RuleSet {
    /// Its command-line name.
    pub fn name(self) -> &'static str {
        match self {
            RuleSet::Ours => "ours",
            RuleSet::Printed => "printed",
            RuleSet::PrintedAtCapacity => "printed-at-capacity",
            RuleSet::MutantKPlusOne => "mutant-k-plus-one",
            RuleSet::MutantLMinusOne => "mutant-l-minus-one",
        }
    }

    /// The switches it sets.
    pub fn rules(self) -> Rules {
        match self {
            RuleSet::Ours => Rules::default(),
            RuleSet::Printed | RuleSet::PrintedAtCapacity => Rules {
                park: false,
                clock: true,
                leader: true,
                at_capacity: self == RuleSet::PrintedAtCapacity,
                mutant: None,
            },
            RuleSet::MutantKPlusOne => Rules {
                mutant: Some(Mutant::KPlusOne),
                ..Rules::default()
            },
            RuleSet::MutantLMinusOne => Rules {
                mutant: Some(Mutant::LMinusOne),
                ..Rules::default()
            },
        }
    }

    /// Moves `setup`'s initial configuration within the leader's tightened bounds when this
    /// rule set runs the leader (LKCS with `printed*`; the seed's invariant holds only from
    /// there); Err, one line, when no such configuration is found.
    pub fn prepare(self, variant: Variant, setup: &mut Setup, seed: u64) -> Result<(), String> {
        if !self.rules().leader || variant != Variant::Lkcs {
            return Ok(());
        }
        let bounds = (&setup.l[..], &setup.k[..]);
        match tightened_c0(&setup.graph, &setup.initial_in, bounds, setup.leader, seed) {
            Some(c) => {
                setup.initial_in = c;
                Ok(())
            }
            None => {
                let (tl, tk) = tightened(&setup.graph, &setup.l, &setup.k, setup.leader);
                let why = match (0..tl.len()).find(|&i| tl[i] > tk[i]) {
                    Some(i) => format!(
                        "process {i} within distance 2 of P_LDR = p{} gets L_i = {} > K_i = {}",
                        setup.leader, tl[i], tk[i]
                    ),
                    None => "a search of 200000 moves found none".into(),
                };
                Err(format!(
                    "--lkcs-rules {}: no initial configuration within the leader's bounds L_i = l_i + 1, K_i = k_i - 1 ({why}); use k - l >= 2 near p{}, or --lkcs-rules ours",
                    self.name(),
                    setup.leader
                ))
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::topo::{Graph, Topology};

    fn setup(topology: Topology, n: usize, l: usize, k: usize) -> Setup {
        let graph = Graph::build(&topology, n, 1);
        let (l, k) = (vec![l; n], vec![k; n]);
        let initial_in = graph.initial_configuration(&l, &k, 1).unwrap();
        Setup {
            n,
            m: 1,
            graph,
            l,
            k,
            initial_in,
            leader: 0,
        }
    }

    #[test]
    fn ours_is_the_default_and_printed_runs_the_leader_without_parking() {
        assert_eq!(RuleSet::default().rules(), Rules::default());
        let p = RuleSet::Printed.rules();
        assert!(p.leader && !p.park && p.clock && !p.at_capacity);
        assert!(RuleSet::PrintedAtCapacity.rules().at_capacity);
    }

    #[test]
    fn the_leader_starts_within_its_tightened_bounds_or_is_refused() {
        let mut s = setup(Topology::Ring, 9, 0, 3);
        let before = s.initial_in.clone();
        RuleSet::Ours.prepare(Variant::Lkcs, &mut s, 1).unwrap();
        assert_eq!(s.initial_in, before);
        RuleSet::Printed.prepare(Variant::Lkcs, &mut s, 1).unwrap();
        let (tl, tk) = tightened(&s.graph, &s.l, &s.k, 0);
        assert!(
            s.graph.within(&s.initial_in, &tl, &tk),
            "{:?}",
            s.initial_in
        );
        // k − l = 1: L_i = 2 > K_i = 1 near p0.
        let mut s = setup(Topology::Ring, 9, 1, 2);
        let e = RuleSet::Printed
            .prepare(Variant::Lkcs, &mut s, 1)
            .unwrap_err();
        assert!(e.contains("L_i = 2 > K_i = 1") && !e.contains('\n'), "{e}");
        // LMUTIN has no leader.
        RuleSet::Printed
            .prepare(Variant::Lmutin, &mut s, 1)
            .unwrap();
    }
}
