//! `lockbench sweep CONFIG.toml [--out DIR] | --resume DIR [CONFIG.toml]`: a run config with
//! lists, run as a matrix of points (see [`crate::engine::sweep`]).

use std::path::PathBuf;

use anyhow::{Context as _, Result};
use clap::Args as ClapArgs;

use crate::engine::sweep::{self, Manifest, Start};
use crate::error::UsageError;
use crate::opts::OutOpt;
use crate::report::store::{now_secs, utc_stamp};

/// Options of `sweep`.
#[derive(ClapArgs, Debug)]
#[command(mut_arg("out", |a| a.help("Directory of the sweep (default: reports/sweep-<config name>-<UTC time>).")))]
pub struct Args {
    /// The sweep: a run config (TOML, as in bench-configs/) whose threads, mix, cs, think, k
    /// and cs-lines may be lists. With --resume it may be left out (the manifest holds it).
    pub config: Option<PathBuf>,
    /// `--out`: the directory of the sweep (default:
    /// `reports/sweep-<config name>-<UTC time>`).
    #[command(flatten)]
    pub out: OutOpt,
    /// Finish the sweep in DIR: skip the points done, refuse a config that changed.
    #[arg(long, value_name = "DIR", conflicts_with = "out")]
    pub resume: Option<PathBuf>,
    /// Use only these CPUs at every point, e.g. 0-15,32-47 (as `run --cpus`; it takes the place
    /// of the config's `cpus` key, and the manifest keeps it, so --resume runs the rest there).
    #[arg(long, value_name = "LIST")]
    pub cpus: Option<String>,
}

/// `lockbench sweep`: returns the exit code (1 when a point had a safety violation, a stall
/// or a failed run, as `run`).
pub fn exec(args: &Args) -> Result<i32> {
    let (dir, text, path, manifest) = match (&args.resume, &args.config) {
        (Some(dir), given) => {
            let m_path = dir.join("manifest.json");
            let m_bytes = crate::opts::io::read(&m_path, crate::opts::io::RESULTS_CAP).map_err(|e| {
                UsageError(if e.kind() == std::io::ErrorKind::NotFound {
                    format!(
                        "{} holds no sweep (no manifest.json): give the directory a sweep wrote, or start one with `lockbench sweep CONFIG.toml`",
                        crate::opts::io::shown(dir)
                    )
                } else {
                    format!("cannot read {}: {e}; check its permissions", crate::opts::io::shown(&m_path))
                })
            })?;
            let m: Manifest = serde_json::from_slice(&m_bytes).map_err(|e| {
                UsageError(format!(
                    "{} is damaged ({e}): the sweep cannot be resumed; start it again with --out",
                    crate::opts::io::shown(&m_path)
                ))
            })?;
            let (text, path) = match given {
                Some(p) => (
                    crate::opts::io::read_text(p, crate::opts::io::CONFIG_CAP).map_err(|e| {
                        UsageError(format!("cannot read sweep config {}: {e}", crate::opts::io::shown(p)))
                    })?,
                    p.clone(),
                ),
                None => (m.config.clone(), PathBuf::from(&m.config_path)),
            };
            (dir.clone(), text, path, Some(m))
        }
        (None, Some(p)) => {
            let text = crate::opts::io::read_text(p, crate::opts::io::CONFIG_CAP).map_err(|e| {
                UsageError(format!("cannot read sweep config {}: {e}", crate::opts::io::shown(p)))
            })?;
            let dir = args.out.out.clone().unwrap_or_else(|| {
                let name = p.file_stem().map_or("sweep".into(), |s| s.to_string_lossy().into_owned());
                PathBuf::from("reports").join(format!("sweep-{name}-{}", utc_stamp(now_secs())))
            });
            if dir.join("manifest.json").exists() {
                return Err(UsageError(format!(
                    "{} already holds a sweep: finish it with --resume {0}, or choose another --out",
                    crate::opts::io::shown(&dir)
                ))
                .into());
            }
            if text.parse::<toml::Table>().is_ok_and(|t| t.is_empty()) {
                crate::opts::io::errln!(
                    "warning: {} sets nothing: the sweep is one point of `run`'s defaults (every lock, every thread count); name what to vary (see bench-configs/quick.toml)",
                    crate::opts::io::shown(p)
                );
            }
            (dir, text, p.clone(), None)
        }
        (None, None) => {
            return Err(UsageError(
                "give the sweep's config (e.g. lockbench sweep bench-configs/quick.toml), or --resume DIR".into(),
            )
            .into())
        }
    };
    let text = match &args.cpus {
        Some(list) => {
            // Refused as `run --cpus` refuses it, and named as the user gave it.
            let topo =
                crate::runner::topology::Topology::detect().context("reading the CPU topology")?;
            crate::engine::plan::restrict_to(&topo, list, "--cpus")?;
            with_cpus(&text, list, &path)?
        }
        None => text,
    };
    sweep::run(Start {
        dir,
        text,
        path,
        manifest,
    })
}

/// The sweep config `text` with its `cpus` key set to `list` (`--cpus` on the command line
/// wins over the file, as for `run`): a line put first when the file sets none (its comments
/// and layout kept), the table rewritten when it does.
fn with_cpus(text: &str, list: &str, path: &std::path::Path) -> Result<String> {
    let mut table: toml::Table = text.parse().map_err(|e| {
        UsageError(format!(
            "{} is not valid TOML ({e}): fix it, then give --cpus again",
            crate::opts::io::shown(path)
        ))
    })?;
    if !table.contains_key("cpus") {
        let line = toml::to_string(&toml::Table::from_iter([(
            "cpus".to_string(),
            toml::Value::String(list.to_string()),
        )]))?;
        return Ok(format!("# --cpus on the command line\n{line}{text}"));
    }
    table.insert("cpus".into(), toml::Value::String(list.to_string()));
    Ok(toml::to_string(&table)?)
}

#[cfg(test)]
mod tests {
    use super::with_cpus;
    use std::path::Path;

    #[test]
    fn cpus_given_sets_or_replaces_the_config_key() {
        let p = Path::new("s.toml");
        let added = with_cpus("# mine\nthreads = [1, 2]\n[base]\nk = 1\n", "0-3", p).unwrap();
        let t: toml::Table = added.parse().unwrap();
        assert_eq!(t["cpus"].as_str(), Some("0-3"));
        assert!(added.contains("# mine"), "{added}");
        assert_eq!(t["base"]["k"].as_integer(), Some(1));
        let replaced = with_cpus("cpus = \"0-7\"\nthreads = 2\n", "4,5", p).unwrap();
        let t: toml::Table = replaced.parse().unwrap();
        assert_eq!(t["cpus"].as_str(), Some("4,5"));
        assert_eq!(t["threads"].as_integer(), Some(2));
    }
}
