//! The build that produced a result: commit, dirty flag, rustc and profile, recorded by
//! `build.rs` at compile time.

use serde::{Deserialize, Serialize};

/// Which code measured a result.
#[derive(Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(default)]
pub struct Build {
    /// lockbench's version (Cargo.toml).
    pub version: String,
    /// The git commit built (`unknown` when built without git or outside a checkout).
    pub commit: String,
    /// Whether tracked files differed from the commit: `true`, `false` or `unknown`.
    pub dirty: String,
    /// `rustc --version` of the compiler.
    pub rustc: String,
    /// The cargo profile (`release`, `debug`, ...).
    pub profile: String,
}

impl Build {
    /// This binary's build.
    pub fn this() -> Build {
        Build {
            version: env!("CARGO_PKG_VERSION").into(),
            commit: env!("LOCKBENCH_COMMIT").into(),
            dirty: env!("LOCKBENCH_DIRTY").into(),
            rustc: env!("LOCKBENCH_RUSTC").into(),
            profile: env!("LOCKBENCH_PROFILE").into(),
        }
    }

    /// `0.1.0 a8a4dad (dirty), release, rustc 1.90.0`: what tells two builds apart.
    pub fn line(&self) -> String {
        let commit: String = self.commit.chars().take(7).collect();
        format!(
            "{} {}{}, {}, {}",
            self.version,
            commit,
            if self.dirty == "true" { " (dirty)" } else { "" },
            self.profile,
            self.rustc
                .split_whitespace()
                .take(2)
                .collect::<Vec<_>>()
                .join(" ")
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_build_names_its_profile_and_compiler() {
        let b = Build::this();
        assert_eq!(b.version, env!("CARGO_PKG_VERSION"));
        assert!(b.rustc.starts_with("rustc "), "{b:?}");
        assert!(!b.profile.is_empty() && b.profile != "unknown", "{b:?}");
        assert!(["true", "false", "unknown"].contains(&b.dirty.as_str()));
        let line = Build {
            commit: "a8a4dad1234".into(),
            dirty: "true".into(),
            ..b
        }
        .line();
        assert!(line.contains("a8a4dad (dirty)"), "{line}");
    }
}
