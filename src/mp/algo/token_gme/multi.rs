//! Seed 003 §5.1, "Achieving unnecessary blocking freedom": multi-type requests (after Manabe
//! and Park). A request r names a set of types, types(r), and may be served by a session of
//! any one of them. The seed's rules [seed]:
//!
//! - "a pending request r belongs to all subsets corresponding to the types in types(r). A
//!   subset is assigned a priority as described earlier in Section 3.2.1 and the rest of the
//!   steps remain the same" (A6, [`TokenGme::choose`]);
//! - "a request r is said to be compatible with a type t if t ∈ types(r); otherwise r is said
//!   to conflict with t" ([`TokenGme::compatible`], [`Queued::has`]);
//! - "a primary token holder, on receiving a request compatible with the type of the token,
//!   issues a secondary token to the requesting process unless there is a conflicting request
//!   already present in the primary token queue" (A2; TG-3 is this rule).
//!
//! Inferred steps (MT-n, named here and in docs/message-passing.md):
//!
//! - **MT-1 (REQUEST carries the set)**: REQUEST(number, types(r)) is broadcast as in A1, and
//!   request_i[j] keeps the set with the number; a single type is the message it always was
//!   (REQUEST(number, type)). Size 1 + g integers.
//! - **MT-2 (entering)**: a process holding a token of a type in its set enters (once the
//!   token is safe) for that type, and tells which ([`crate::mp::Runtime::enter_as`]); one
//!   holding such a token asks nobody (A1's "holding a type-t token").
//! - **MT-3 (conflict everywhere)**: every test of "of another type" becomes "conflicting"
//!   (t ∉ types(r)): a secondary holder's release (TG-9), the primary holder's count of
//!   queued conflicts (TG-3), a primary holder's own request (TG-2).
//! - **MT-4 (queue entries carry the set)**: a queued request keeps its whole set in the
//!   primary token (4 + (g − 1) integers in the TOKEN's size), so A6 can place it in every
//!   subset.
//! - **MT-5 (tie-break)**: TG-6 over subsets: equal priorities go to the type met first when
//!   the queue is read in order, each request's types in the order it named them.
//! - **MT-6 (FIFO selection)**: §4.2's "type of the first queued request" becomes the type of
//!   the first queued request's set whose subset is largest (ties: the earlier named), so the
//!   session admits as many as the first request allows.
//! - **MT-7 (members)**: the new session serves every queued request that names its type
//!   (its subset); the rest stay queued and age.

use super::{Pid, Queued, TgMsg, Token, TokenGme};
use crate::mp::Group;

/// The further types of the multi-type requests a process knows of: per process j, types
/// of request_i[j] beyond the first (allocated by the first multi-type REQUEST received, so a
/// run of single-type requests keeps nothing more).
pub(super) type Also = Option<Box<Vec<Vec<Group>>>>;

impl TokenGme {
    /// Whether request_i[j] is compatible with type `t` (t ∈ types(r)).
    #[inline]
    pub(super) fn compatible(&self, j: Pid, t: Group) -> bool {
        self.req(j).1 == t || self.also.as_ref().is_some_and(|a| a[j].contains(&t))
    }

    /// Whether the primary holder's A2 takes request_i[j] as compatible with `t`: as
    /// [`TokenGme::compatible`], but for the deliberately broken variant that reads only the
    /// first type of a set.
    pub(super) fn admits(&self, j: Pid, t: Group) -> bool {
        if self.first_type_only {
            self.req(j).1 == t
        } else {
            self.compatible(j, t)
        }
    }

    /// Whether this process's outstanding request names `t`.
    #[inline]
    pub(super) fn wants(&self, t: Group) -> bool {
        self.want == Some(t) || (self.want.is_some() && self.want_also.contains(&t))
    }

    /// MT-1: request_i[j] gets `also`, the further types of a newer request just recorded.
    #[inline]
    pub(super) fn record_also(&mut self, j: Pid, also: &[Group]) {
        if also.is_empty() && self.also.is_none() {
            return;
        }
        let n = self.request.len();
        let a = self
            .also
            .get_or_insert_with(|| Box::new(vec![Vec::new(); n]));
        a[j].clear();
        a[j].extend_from_slice(also);
    }

    /// request_i[j]'s further types.
    pub(super) fn also_of(&self, j: Pid) -> Vec<Group> {
        self.also.as_ref().map_or_else(Vec::new, |a| a[j].clone())
    }

    /// The REQUEST of this process's request numbered `num` for `first` and `want_also`.
    pub(super) fn request_msg(&self, num: u64, first: Group) -> TgMsg {
        if self.want_also.is_empty() {
            TgMsg::Request(num, first)
        } else {
            let mut types = Vec::with_capacity(1 + self.want_also.len());
            types.push(first);
            types.extend_from_slice(&self.want_also);
            TgMsg::RequestAny(num, types)
        }
    }

    /// A6's choice of the next session's type: subsets by type, a request in the subset of
    /// each of its types (§5.1); priority(t) = Σ over S_t of (1 + age) (§3.2.1) with TG-6 /
    /// MT-5, or FIFO (§4.2, MT-6).
    pub(super) fn choose(&self, t: &Token) -> Group {
        match self.selection {
            super::Selection::Fifo => {
                let first = &t.queue[0];
                if first.also.is_empty() {
                    return first.ty;
                }
                let size = |ty| t.queue.iter().filter(|p| p.has(ty)).count();
                let mut best = (size(first.ty), first.ty);
                for ty in first.also.iter().copied() {
                    let s = size(ty);
                    if s > best.0 {
                        best = (s, ty);
                    }
                }
                best.1
            }
            super::Selection::Priority => {
                // One pass over the queue: each type's priority (1 + age summed over the
                // requests that have it) and the order types are first met in; the first met
                // of the highest wins, as when each subset was summed where its first member
                // is met (a pass per queued request, O(Q²), was 7% of the n = 500 point).
                let top = t.queue.iter().flat_map(|q| q.types()).max();
                let mut slot = vec![usize::MAX; top.expect("queue not empty") + 1];
                let mut met: Vec<(Group, u64)> = Vec::new();
                for q in &t.queue {
                    for (k, ty) in q.types().enumerate() {
                        if q.types().take(k).any(|u| u == ty) {
                            continue; // listed twice in one set: `has` counts it once
                        }
                        if slot[ty] == usize::MAX {
                            slot[ty] = met.len();
                            met.push((ty, 0));
                        }
                        met[slot[ty]].1 += 1 + q.age;
                    }
                }
                let mut best = met[0];
                for &m in &met[1..] {
                    if m.1 > best.1 {
                        best = m;
                    }
                }
                best.0
            }
        }
    }

    /// The deliberately broken variant the two checks must catch: a primary holder whose A2
    /// reads only the first type of a request's set.
    #[cfg(test)]
    pub(crate) fn reading_first_types_only(mut self) -> Self {
        self.first_type_only = true;
        self
    }
}

/// A queue entry for request `num` of `j`, with its set.
pub(super) fn queued(j: Pid, num: u64, ty: Group, also: Vec<Group>) -> Queued {
    Queued {
        pid: j,
        num,
        ty,
        age: 0,
        also,
    }
}
