//! Registry entries of this family.

use crate::locks::LockEntry;

/// This family's entries.
pub fn entries() -> Vec<LockEntry> {
    vec![]
}
