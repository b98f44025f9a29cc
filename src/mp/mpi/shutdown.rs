//! Rank 0's side of the shutdown protocol: when every rank has told it its processes made
//! their requests, it tells them to start no more, then runs waves of counts (messages sent
//! and received over MPI, anything still held) until two waves in a row agree and show every
//! sent message received, and then stops every rank; a stuck process or the watchdog stops
//! them at once.

use std::time::{Duration, Instant};

use super::rank::Rank;
use super::wire::{words, TAG_COUNTS, TAG_DONE, TAG_PROBE, TAG_QUIESCE, TAG_STOP, TAG_STUCK};
use crate::mp::Message;

/// Time between two waves of counts.
const WAVE_GAP: Duration = Duration::from_millis(1);

/// Rank 0's side of the shutdown protocol.
#[derive(Default)]
pub(super) struct Coordinator {
    done: usize,
    quiesced: bool,
    wave: u64,
    replies: usize,
    sums: (u64, u64),
    busy: bool,
    previous: Option<(u64, u64)>,
    next_wave: Option<Instant>,
    stopped: bool,
    /// Why the run was stopped early, if it was.
    pub(super) liveness: Option<String>,
    /// When the stop was sent.
    pub(super) end: Option<Instant>,
    quiesced_at: Option<Instant>,
}

impl Coordinator {
    /// Takes a message of the protocol addressed to rank 0; false if `tag` is none of them.
    pub(super) fn receive(&mut self, tag: i32, bytes: &[u8]) -> bool {
        match tag {
            TAG_DONE => self.done += 1,
            TAG_COUNTS => {
                let c = words(bytes);
                if c[0] == self.wave {
                    self.replies += 1;
                    self.sums.0 += c[1];
                    self.sums.1 += c[2];
                    self.busy |= c[3] != 0;
                }
            }
            TAG_STUCK => {
                if self.liveness.is_none() {
                    self.liveness = Some(String::from_utf8_lossy(bytes).into_owned());
                }
            }
            _ => return false,
        }
        true
    }

    /// One step of the protocol at `now` over `size` ranks (`watchdog` in seconds).
    pub(super) fn step<M: Message>(
        &mut self,
        rk: &mut Rank<'_, M>,
        now: Instant,
        size: usize,
        watchdog: f64,
    ) {
        if self.stopped {
            return;
        }
        if self
            .quiesced_at
            .is_some_and(|t| now.duration_since(t).as_secs_f64() > watchdog)
        {
            self.liveness = Some(format!(
                "messages still moving {} s after the last request (watchdog): the processes never fell quiet",
                watchdog
            ));
        }
        if self.liveness.is_some() {
            self.stop_all(rk, now, size);
        } else if self.done == size && !self.quiesced {
            self.quiesced = true;
            self.quiesced_at = Some(now);
            for r in 0..size {
                rk.control(r, TAG_QUIESCE, &[0]);
            }
            self.next_wave = Some(now);
        } else if self.quiesced && self.replies == size {
            let sums = self.sums;
            let settled = !self.busy && sums.0 == sums.1;
            if settled && self.previous == Some(sums) {
                self.stop_all(rk, now, size);
            } else {
                self.previous = settled.then_some(sums);
                self.next_wave = Some(now + WAVE_GAP);
                self.replies = 0;
            }
        }
        if let Some(at) = self.next_wave {
            if at <= now && !self.stopped {
                self.next_wave = None;
                self.wave += 1;
                self.replies = 0;
                self.sums = (0, 0);
                self.busy = false;
                for r in 0..size {
                    rk.control(r, TAG_PROBE, &[self.wave]);
                }
            }
        }
    }

    /// Stops every rank.
    fn stop_all<M: Message>(&mut self, rk: &mut Rank<'_, M>, now: Instant, size: usize) {
        self.stopped = true;
        self.end = Some(now);
        for r in 0..size {
            rk.control(r, TAG_STOP, &[0]);
        }
    }
}
