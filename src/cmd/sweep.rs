//! `lockbench sweep CONFIG.toml [--out DIR] | --resume DIR [CONFIG.toml]`: a run config with
//! lists, run as a matrix of points (see [`crate::engine::sweep`]).

use std::path::PathBuf;

use anyhow::Result;
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
    sweep::run(Start {
        dir,
        text,
        path,
        manifest,
    })
}
