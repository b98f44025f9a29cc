//! Seed 003 §5.1's two-hop property of multi-type requests, as a result: what the simulator
//! measured ([`TwoHop`]) and the run's multi-type figures ([`MultiType`]). The simulator's
//! tracker that fills them is in `sim/hops.rs`.

use serde::Serialize;

/// Seed 003 §5.1's two-hop property, measured on a run of multi-type requests: "if all
/// pending requests in the system are compatible with the type of the current session in
/// progress and no conflicting request is ever generated, then all requesting processes enter
/// their critical sections within two message hops (of making the request)".
///
/// The run is a *two-hop scenario* when the type of its first session (the type of its first
/// entry) is in every request's set: then no request conflicts with it, the session never
/// ends (TokenGME starts a session only for a queued conflicting request), and the premise
/// holds from the moment the first session starts. The requests made from then on are in
/// scope. Each one's wait is measured twice: in hops (the longest causal chain, `sim/hops.rs`,
/// up to n = [`crate::mp::sim::HOPS_MAX_N`]) and in time. With a constant channel delay D, "within two hops"
/// is exactly "entered at most 2·D after asking" (a message takes D; a longer chain, or a
/// wait for something else, such as another process's critical section, takes longer), and
/// the property is judged so: a request in scope fails when it waits more than two hops or
/// more than 2·D, or is never served. Under random delays neither measure is exact (the
/// longest chain also counts a chain through a third process's later REQUEST that the entry
/// did not wait for), so the figures are reported and not judged.
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct TwoHop {
    /// Whether the run is a two-hop scenario.
    pub scenario: bool,
    /// Whether the property was judged (a scenario with a constant channel delay).
    pub judged: bool,
    /// Why not, if not.
    pub why_not: Option<String>,
    /// Requests in scope (made once the first session had started) that entered.
    pub requests: u64,
    /// The most hops one of them waited (null: hops not tracked).
    pub hops_max: Option<u64>,
    /// The longest wait of one of them, in time units.
    pub wait_max: f64,
    /// The constant channel delay D, if constant.
    pub channel_delay: Option<f64>,
    /// Requests in scope that waited more than two hops (or, with a constant delay, more
    /// than 2·D).
    pub over_two: u64,
    /// Requests in scope not served when the run ended.
    pub unserved: u64,
    /// The first request over two hops, described.
    pub first_over: Option<String>,
}

impl TwoHop {
    /// Whether the property was judged and failed.
    pub fn failed(&self) -> bool {
        self.judged && (self.over_two > 0 || self.unserved > 0)
    }
}

/// Seed 003 §5.1 on a run of multi-type requests (`sim --types-per-request G`, G ≥ 2).
#[derive(Clone, Debug, Default, Serialize, PartialEq)]
pub struct MultiType {
    /// G, the types each request names.
    pub types_per_request: usize,
    /// The two-hop property.
    pub two_hop: TwoHop,
}
