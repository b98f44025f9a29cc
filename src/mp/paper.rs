//! Seed 003's experiment (Fig. 6 (a)–(f), Fig. 7 (a)–(b)) as ratio tables.

use std::path::Path;

use crate::report::Format;

/// Runs the suite in `path`.
pub fn run(_path: &Path, _format: Format) -> anyhow::Result<i32> {
    anyhow::bail!("the paper suite is not built yet")
}
