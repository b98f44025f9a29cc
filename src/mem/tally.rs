//! Per-process RMR tallies: the RMRs and accesses each process made, split by the section of
//! its passage it was in, and the sums and maxima over its completed passages. Written by the
//! counting memory on each access, and by the gate for spins it charges without running them.

use std::sync::atomic::{AtomicU64, AtomicU8, Ordering};

/// The four sections of a passage.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u8)]
pub enum Section {
    /// From the request to the doorway's end (the bounded prefix that fixes the request's place).
    Doorway = 0,
    /// From the doorway's end until inside.
    Waiting = 1,
    /// Inside the critical section.
    Cs = 2,
    /// The exit code.
    Exit = 3,
}

impl Section {
    /// All sections in passage order.
    pub const ALL: [Section; 4] = [
        Section::Doorway,
        Section::Waiting,
        Section::Cs,
        Section::Exit,
    ];

    /// The name used in reports (`by_section` keys).
    pub fn name(self) -> &'static str {
        match self {
            Section::Doorway => "doorway",
            Section::Waiting => "waiting",
            Section::Cs => "cs",
            Section::Exit => "exit",
        }
    }
}

/// Per-process counters. Written only by the process itself, on its own thread or as a coroutine
/// of the gate (or by the gate on its behalf while it is blocked), so relaxed loads and stores
/// suffice.
#[derive(Debug, Default)]
pub(crate) struct ProcStats {
    section: AtomicU8,
    /// Cumulative RMRs per section.
    pub(super) rmr: [AtomicU64; 4],
    /// Cumulative accesses.
    pub(super) accesses: AtomicU64,
    /// `rmr` at the start of the current passage.
    start: [AtomicU64; 4],
    pub(super) passages: AtomicU64,
    /// Sum over completed passages, per section.
    pub(super) sum: [AtomicU64; 4],
    /// Largest passage total.
    pub(super) max: AtomicU64,
    /// Largest per section.
    pub(super) max_section: [AtomicU64; 4],
}

fn bump(a: &AtomicU64, by: u64) {
    a.store(a.load(Ordering::Relaxed) + by, Ordering::Relaxed);
}

impl ProcStats {
    pub(crate) fn charge(&self, remote: u64, accesses: u64) {
        let s = self.section.load(Ordering::Relaxed) as usize;
        if remote > 0 {
            bump(&self.rmr[s], remote);
        }
        bump(&self.accesses, accesses);
    }

    /// A passage starts (its doorway).
    pub(crate) fn begin_passage(&self) {
        for i in 0..4 {
            self.start[i].store(self.rmr[i].load(Ordering::Relaxed), Ordering::Relaxed);
        }
        self.section
            .store(Section::Doorway as u8, Ordering::Relaxed);
    }

    /// The process enters section `sec` of its passage.
    pub(crate) fn set_section(&self, sec: Section) {
        self.section.store(sec as u8, Ordering::Relaxed);
    }

    /// Forgets the completed passages; cumulative counts stay.
    pub(crate) fn reset_passages(&self) {
        for i in 0..4 {
            self.sum[i].store(0, Ordering::Relaxed);
            self.max_section[i].store(0, Ordering::Relaxed);
        }
        self.max.store(0, Ordering::Relaxed);
        self.passages.store(0, Ordering::Relaxed);
        self.accesses.store(0, Ordering::Relaxed);
    }

    /// The entry so far counts as waiting: the doorway's RMRs of this passage move to waiting.
    pub(crate) fn doorway_unobserved(&self) {
        let d = self.rmr[0].load(Ordering::Relaxed) - self.start[0].load(Ordering::Relaxed);
        self.rmr[0].store(self.rmr[0].load(Ordering::Relaxed) - d, Ordering::Relaxed);
        bump(&self.rmr[1], d);
    }

    /// The passage completed; returns its RMRs.
    pub(crate) fn end_passage(&self) -> u64 {
        let mut total = 0;
        for i in 0..4 {
            let d = self.rmr[i].load(Ordering::Relaxed) - self.start[i].load(Ordering::Relaxed);
            bump(&self.sum[i], d);
            if d > self.max_section[i].load(Ordering::Relaxed) {
                self.max_section[i].store(d, Ordering::Relaxed);
            }
            total += d;
        }
        if total > self.max.load(Ordering::Relaxed) {
            self.max.store(total, Ordering::Relaxed);
        }
        bump(&self.passages, 1);
        total
    }

    /// RMRs so far, per section (cumulative).
    pub(crate) fn rmrs(&self) -> [u64; 4] {
        std::array::from_fn(|i| self.rmr[i].load(Ordering::Relaxed))
    }
}
