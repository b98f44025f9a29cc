//! What one access to a counted register costs: the RMR models, the kinds of access, and a
//! register's cell (its value and which processes hold a valid cached copy), charged under its
//! own lock so the value and the cache state change together. Counting memory and the gate both
//! read cells; neither owns this vocabulary.

use std::sync::atomic::{AtomicU64, Ordering};

use parking_lot::Mutex;
use serde::Serialize;

use super::Home;

/// The RMR model a counting memory charges by.
///
/// # Examples
///
/// ```
/// use lockbench::mem::{CountingMemory, Home, Memory, Model, Register, WaitPolicy};
/// // A process spinning on a register it does not own: remote every time under DSM,
/// // once under CC (then its cached copy serves it).
/// for (model, rmrs) in [(Model::Dsm, 3), (Model::Cc, 1)] {
///     let mem = CountingMemory::new(model, 2, WaitPolicy::Spin, None);
///     let flag = mem.register(Home::Process(1), 0);
///     for _ in 0..3 {
///         flag.read(0);
///     }
///     assert_eq!(mem.summary().rmrs, rmrs, "{model}");
/// }
/// ```
#[derive(Clone, Copy, Debug, PartialEq, Eq, Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
#[non_exhaustive]
pub enum Model {
    /// Cache-coherent, write-through: every write is remote (seed 000 §1.1).
    Cc,
    /// Cache-coherent, write-back: a write to a line held only by the writer is local.
    CcWb,
    /// Distributed shared memory: remote unless the register's home is the accessor.
    Dsm,
}

impl Model {
    /// The model's name as on the command line.
    ///
    /// # Examples
    ///
    /// ```
    /// use lockbench::mem::Model;
    /// assert_eq!(Model::CcWb.name(), "cc-wb");
    /// ```
    pub fn name(self) -> &'static str {
        match self {
            Model::Cc => "cc",
            Model::CcWb => "cc-wb",
            Model::Dsm => "dsm",
        }
    }
}

impl std::fmt::Display for Model {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name())
    }
}

/// The kind of an access, for charging.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Access {
    /// A read.
    Read,
    /// A write.
    Write,
    /// A read-modify-write (fetch-and-add, swap, compare-and-swap).
    Rmw,
}

impl Access {
    /// Whether the access can change the register (and so invalidates other copies).
    pub fn writes(self) -> bool {
        self != Access::Read
    }
}

/// A register's value and cache state, changed together under its lock.
#[derive(Debug)]
struct Line {
    value: i64,
    /// Processes holding a valid cached copy (bit p).
    valid: u64,
}

/// One counted register: identity, home, value and cache state.
#[derive(Debug)]
pub struct Cell {
    id: usize,
    home: Home,
    line: Mutex<Line>,
    /// Writes so far (a wait re-evaluates only when something it read was written).
    version: AtomicU64,
}

impl Cell {
    /// The register's allocation index in its memory.
    pub fn id(&self) -> usize {
        self.id
    }

    /// Where the register lives.
    pub fn home(&self) -> Home {
        self.home
    }

    /// Writes to this register so far.
    pub fn version(&self) -> u64 {
        self.version.load(Ordering::Acquire)
    }

    /// The processes holding a valid cached copy (bit p).
    pub fn valid_mask(&self) -> u64 {
        self.line.lock().valid
    }

    /// Whether an access of kind `a` by `p` would be remote now under `model` (no state change).
    pub fn would_be_remote(&self, model: Model, p: usize, a: Access) -> bool {
        let l = self.line.lock();
        remote(model, self.home, l.valid, p, a)
    }
}

impl Cell {
    /// A register numbered `id`, homed at `home`, holding `init`, cached by nobody.
    pub(crate) fn new(id: usize, home: Home, init: i64) -> Cell {
        Cell {
            id,
            home,
            line: Mutex::new(Line {
                value: init,
                valid: 0,
            }),
            version: AtomicU64::new(0),
        }
    }

    /// Access of kind `a` by `p` under `model`: charges it and updates the cache state, applies
    /// `op` to the value and counts a write, all under the register's lock. Returns what `op`
    /// returned and whether the access was remote.
    #[inline]
    pub(crate) fn access(
        &self,
        model: Model,
        p: usize,
        a: Access,
        op: impl FnOnce(&mut i64) -> i64,
    ) -> (i64, bool) {
        let mut l = self.line.lock();
        let r = charge(model, self.home, &mut l, p, a);
        let v = op(&mut l.value);
        if a.writes() {
            self.version.fetch_add(1, Ordering::AcqRel);
        }
        (v, r)
    }

    /// The value, without charging anything.
    pub(crate) fn peek(&self) -> i64 {
        self.line.lock().value
    }
}

fn remote(model: Model, home: Home, valid: u64, p: usize, a: Access) -> bool {
    let me = 1u64 << p;
    match model {
        Model::Dsm => home != Home::Process(p),
        Model::Cc => a.writes() || valid & me == 0,
        Model::CcWb => {
            if a.writes() {
                valid != me
            } else {
                valid & me == 0
            }
        }
    }
}

/// Charges an access and updates the cache state; true when remote.
fn charge(model: Model, home: Home, line: &mut Line, p: usize, a: Access) -> bool {
    let r = remote(model, home, line.valid, p, a);
    let me = 1u64 << p;
    if a.writes() {
        line.valid = me;
    } else {
        line.valid |= me;
    }
    r
}
