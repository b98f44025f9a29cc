//! Multi-word registers: one atomic register holding a fixed number of `i64` words, read and
//! written whole. Seed 001's bounded concurrent timestamp system keeps O(n) such registers of
//! O(n log n) bits each (its Section IV: "O(n) variables that require O(n log n) space"), and
//! counts one access to one of them as one step; so does every memory here.
//!
//! - Counting memory: the words live beside the register's cell and are copied inside the
//!   cell's own lock, so one wide access is one charged access (one RMR at most).
//! - Scheduled memory: one scheduling point before the access, then the copy, with nothing
//!   yielding in between (the same atomic step as a one-word register).
//! - Native memory: a single-writer seqlock ([`NativeWide`]); see its ordering argument.

use std::sync::atomic::{fence, AtomicI64, AtomicU64, Ordering};

use crossbeam_utils::CachePadded;

/// An atomic multi-word register. Its writer is one process (the register's home): the native
/// seqlock relies on that.
///
/// # Examples
///
/// ```
/// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
/// let w = NativeMemory::default().wide(Home::Process(0), 2, 0);
/// w.write(0, &[4, 1]); // process 0 publishes a two-word label at once
/// let mut label = [0; 2];
/// w.read(1, &mut label);
/// assert_eq!(label, [4, 1]);
/// ```
pub trait WideRegister: Send + Sync {
    /// The number of words.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// let w = NativeMemory::default().wide(Home::Process(0), 2, 0);
    /// assert_eq!(w.words(), 2);
    /// ```
    fn words(&self) -> usize;
    /// Atomic read of all words by process `p` into `out` (`out.len() == words()`).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// let w = NativeMemory::default().wide(Home::Process(0), 2, 0);
    /// let mut out = [9; 2];
    /// w.read(1, &mut out);
    /// assert_eq!(out, [0, 0]);
    /// ```
    fn read(&self, p: usize, out: &mut [i64]);
    /// Atomic write of all words by process `p` (`v.len() == words()`).
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// let w = NativeMemory::default().wide(Home::Process(0), 2, 0);
    /// w.write(0, &[7, 8]);
    /// let mut out = [0; 2];
    /// w.peek(&mut out);
    /// assert_eq!(out, [7, 8]);
    /// ```
    fn write(&self, p: usize, v: &[i64]);
    /// The words without counting, scheduling or ordering guarantees: for observers only.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::{Home, Memory, NativeMemory, WideRegister};
    /// let w = NativeMemory::default().wide(Home::Process(0), 2, 0);
    /// let mut out = [1; 2];
    /// w.peek(&mut out);
    /// assert_eq!(out, [0, 0]);
    /// ```
    fn peek(&self, out: &mut [i64]);
}

/// Words per padded chunk of a native wide register (128 bytes: one line pair).
const CHUNK: usize = 16;

/// A native wide register: a sequence counter and the words, each on cache lines of its own,
/// written by one process only.
///
/// Ordering (the seqlock of Boehm, "Can seqlocks get along with programming language memory
/// models?", MSPC 2012, with the outer accesses strengthened to SeqCst):
/// - write: `seq ← s+1` (odd, relaxed), release fence, the words (relaxed), `seq ← s+2`
///   (SeqCst). The release fence keeps the word stores after the odd store; the final store
///   publishes them.
/// - read: `s1 ← seq` (SeqCst), the words (relaxed), acquire fence, `s2 ← seq` (relaxed); retry
///   unless `s1 = s2` and even. A reader that sees any word of a later write sees (through the
///   fence, which synchronises with the release fence) its odd store, so `s2 ≠ s1`.
///
/// Linearisation: a write at its final SeqCst store, a read at its last `s1` load (it returns
/// exactly the words of the write whose final store that load read, and no later write had
/// begun when `s2` was read). Both points are SeqCst accesses, so the register takes its place
/// in the single total order of the papers' sequentially consistent memory: a write followed by
/// a read of another register by the same process stays in that order, which every doorway
/// needs. The reader is lock-free, not wait-free: it retries while its writer keeps writing
/// (at most once per write it overlaps); under the counting and scheduled memories, where the
/// papers' step counts are taken, a read is one step.
#[derive(Debug)]
pub struct NativeWide {
    seq: CachePadded<AtomicU64>,
    words: usize,
    chunks: Box<[CachePadded<[AtomicI64; CHUNK]>]>,
}

impl NativeWide {
    /// A register of `words` words, each `init`.
    pub fn new(words: usize, init: i64) -> Self {
        let chunks = (0..words.div_ceil(CHUNK).max(1))
            .map(|_| CachePadded::new(std::array::from_fn(|_| AtomicI64::new(init))))
            .collect();
        NativeWide {
            seq: CachePadded::new(AtomicU64::new(0)),
            words,
            chunks,
        }
    }

    #[inline(always)]
    fn word(&self, i: usize) -> &AtomicI64 {
        &self.chunks[i / CHUNK][i % CHUNK]
    }
}

impl WideRegister for NativeWide {
    fn words(&self) -> usize {
        self.words
    }

    #[inline]
    fn read(&self, _p: usize, out: &mut [i64]) {
        loop {
            let s1 = self.seq.load(Ordering::SeqCst);
            for (i, o) in out.iter_mut().enumerate() {
                *o = self.word(i).load(Ordering::Relaxed);
            }
            fence(Ordering::Acquire);
            let s2 = self.seq.load(Ordering::Relaxed);
            if s1 == s2 && s1.is_multiple_of(2) {
                return;
            }
            std::hint::spin_loop();
        }
    }

    #[inline]
    fn write(&self, _p: usize, v: &[i64]) {
        // Single writer: nobody else moves `seq`, so a relaxed read of it is the writer's own.
        let s = self.seq.load(Ordering::Relaxed);
        self.seq.store(s + 1, Ordering::Relaxed);
        fence(Ordering::Release);
        for (i, &x) in v.iter().enumerate() {
            self.word(i).store(x, Ordering::Relaxed);
        }
        self.seq.store(s + 2, Ordering::SeqCst);
    }

    fn peek(&self, out: &mut [i64]) {
        for (i, o) in out.iter_mut().enumerate() {
            *o = self.word(i).load(Ordering::Relaxed);
        }
    }
}

#[cfg(test)]
mod tests {
    use std::sync::Arc;

    use super::*;

    /// A reader never sees a torn value: the writer writes (k, k, …, k) for growing k.
    #[test]
    fn native_reads_are_never_torn() {
        let r = Arc::new(NativeWide::new(40, 0));
        let w = r.clone();
        let writer = std::thread::spawn(move || {
            for k in 1..20_000 {
                w.write(0, &[k; 40]);
            }
        });
        let mut out = [0; 40];
        let mut last = 0;
        while last < 19_999 {
            r.read(1, &mut out);
            assert!(out.iter().all(|&x| x == out[0]), "torn read {out:?}");
            assert!(out[0] >= last, "went back from {last} to {}", out[0]);
            last = out[0];
        }
        writer.join().unwrap();
    }
}
