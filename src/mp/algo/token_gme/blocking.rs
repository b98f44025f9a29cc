//! Seed 003 §5.1, freedom from unnecessary blocking, as a property checked after every event.
//!
//! §5.1 states the rule that achieves it: "a primary token holder, on receiving a request
//! compatible with the type of the token, issues a secondary token to the requesting process
//! unless there is a conflicting request already present in the primary token queue", and the
//! property that follows: if every pending request is compatible with the current session's
//! type and no conflicting request is generated, every requester enters within two message
//! hops (measured by the simulator, `sim::TwoHop`). A request names a set of types, types(r)
//! (after Manabe and Park; [`super::multi`]); it is compatible with `t` when t ∈ types(r). A
//! single-type request is the case types(r) = {type(r)}.
//!
//! **Definition (checked).** A request is *blocked unnecessarily* when the process holding the
//! primary token of type `t` keeps in its queue a request compatible with `t` while its queue
//! holds no request conflicting with `t`. Under §5.1's rule such a request gets a secondary token at once
//! (its holder then enters as soon as the token is safe, as every session's members do), so
//! queueing it delays it by at least a whole session for no conflict. Waiting for a
//! token to become safe (condition (1) ∨ (2)) is not blocking: a previous session is still
//! inside. A request the primary holder has not heard of yet is in transit, not blocked.
//!
//! The state can only arise at the primary holder and only its events change it, so looking
//! after every event of the process that ran is looking after every event. The check reads
//! each queued request's set in the token ([`super::Queued::has`]), not the holder's own
//! count of queued conflicts, so a holder that misreads sets is caught.

use super::TokenGme;

impl TokenGme {
    /// The request blocked unnecessarily here (see the module), described.
    pub(super) fn blocked_request(&self) -> Option<String> {
        let t = self.token.as_ref()?;
        if !t.primary || t.queue.iter().any(|q| !q.has(t.ty)) {
            return None;
        }
        // No conflicting request queued: every queued request is compatible.
        let q = t.queue.front()?;
        Some(format!(
            "p{} holds the primary token of type {} (session {}) with no conflicting request \
             queued, yet p{}'s request {} for {:?} waits in its queue ({} queued)",
            self.me,
            t.ty,
            t.session,
            q.pid,
            q.num,
            q.types().collect::<Vec<_>>(),
            t.queue.len()
        ))
    }

    /// The deliberately broken variant the checker must catch: a primary holder that never
    /// issues secondary tokens (every request waits for a session of its own).
    #[cfg(test)]
    pub(crate) fn without_secondaries(mut self) -> Self {
        self.admit = false;
        self
    }
}

#[cfg(test)]
mod tests {
    use crate::mp::algo::token_gme::{Selection, TokenGme};
    use crate::mp::algo::Setup;
    use crate::mp::metrics::MpResult;
    use crate::mp::run_config::RunConfig;
    use crate::mp::sim::{run, SimConfig};
    use crate::mp::workload::Dist;
    use crate::mp::Problem;

    fn sim(broken: bool, bounded: bool, seed: u64) -> MpResult {
        let n = 6;
        let cfg = SimConfig {
            run: RunConfig {
                algo: "token-gme".into(),
                problem: Problem::Gme,
                setup: Setup::complete(n, 2),
                requests: 40,
                seed,
                ncs: Dist::Exp(5.0),
                cs: Dist::Const(20.0),
                delay: Dist::Exp(3.0),
                mix: "hot:2:10,90".parse().unwrap(),
                watchdog: 1e9,
            },
            topology: "complete".into(),
            fifo: true,
            trace: false,
        };
        run(&cfg, |p, s| {
            let t = if bounded {
                TokenGme::new_bounded(p, s, Selection::Priority, 8)
            } else {
                TokenGme::new(p, s, Selection::Priority)
            };
            if broken {
                t.without_secondaries()
            } else {
                t
            }
        })
    }

    #[test]
    fn the_checker_fires_on_a_primary_that_never_issues_secondaries() {
        let r = sim(true, false, 1);
        assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
        assert!(r.unnecessary_blocking.unwrap() > 0);
        let first = r.unnecessary_blocking_first.unwrap();
        assert!(first.contains("no conflicting request queued"), "{first}");
    }

    #[test]
    fn token_gme_never_blocks_unnecessarily() {
        for seed in 1..=3 {
            for bounded in [false, true] {
                let r = sim(false, bounded, seed);
                assert_eq!(r.safety_violations, 0, "{:?}", r.violations);
                assert!(r.liveness_failure.is_none());
                assert_eq!(
                    r.unnecessary_blocking,
                    Some(0),
                    "seed {seed}, bounded {bounded}: {:?}",
                    r.unnecessary_blocking_first
                );
            }
        }
    }
}
