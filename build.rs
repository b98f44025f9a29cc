//! Records the build in the binary, so every result says which code measured it: the git
//! commit and whether the tree had changes (`unknown` without git or outside a checkout), the
//! rustc version, and the cargo profile.

use std::path::Path;
use std::process::Command;

fn run(cmd: &str, args: &[&str]) -> Option<String> {
    let out = Command::new(cmd).args(args).output().ok()?;
    out.status
        .success()
        .then(|| String::from_utf8_lossy(&out.stdout).trim().to_string())
}

fn main() {
    let commit = run("git", &["rev-parse", "HEAD"]).unwrap_or_else(|| "unknown".into());
    let dirty = match run("git", &["status", "--porcelain", "--untracked-files=no"]) {
        Some(s) if commit != "unknown" => (!s.is_empty()).to_string(),
        _ => "unknown".into(),
    };
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".into());
    let rustc = run(&rustc, &["--version"]).unwrap_or_else(|| "unknown".into());
    // OUT_DIR is <target>/<profile>/build/<crate>-<hash>/out: the profile's directory name
    // (`debug` for dev and test, `release`, or a custom profile's own name).
    let profile = std::env::var("OUT_DIR")
        .ok()
        .and_then(|d| {
            let p = Path::new(&d);
            Some(
                p.parent()?
                    .parent()?
                    .parent()?
                    .file_name()?
                    .to_str()?
                    .to_string(),
            )
        })
        .unwrap_or_else(|| std::env::var("PROFILE").unwrap_or_else(|_| "unknown".into()));
    println!("cargo:rustc-env=LOCKBENCH_COMMIT={commit}");
    println!("cargo:rustc-env=LOCKBENCH_DIRTY={dirty}");
    println!("cargo:rustc-env=LOCKBENCH_RUSTC={rustc}");
    println!("cargo:rustc-env=LOCKBENCH_PROFILE={profile}");
    // Again when the commit or the tracked files change.
    if let Some(git) = run("git", &["rev-parse", "--git-dir"]) {
        for f in ["HEAD", "index"] {
            println!("cargo:rerun-if-changed={git}/{f}");
        }
    }
    for p in ["src", "Cargo.toml", "build.rs", "bench-configs"] {
        println!("cargo:rerun-if-changed={p}");
    }
}
