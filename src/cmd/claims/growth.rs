//! RMR growth over N: `rmr --schedule adversarial` at each N, read as points, fitted, and set
//! against the paper's class and the bound counted from its figure.

use serde_json::Value;

use super::checks::{args, items, num, Level};
use super::ledger::{Judged, Verdict};

/// One N of an `rmr` run.
#[derive(Clone, Debug)]
pub struct Point {
    /// Processes.
    pub n: usize,
    /// Largest RMRs of one passage.
    pub max: u64,
    /// The bound at N, if the paper gives one.
    pub bound: Option<u64>,
    /// Within it.
    pub within: Option<bool>,
    /// Which schedule found the maximum.
    pub found_by: String,
    /// Registers the lock allocated at N.
    pub registers: Option<u64>,
}

/// The `rmr` command of a growth check.
pub fn command(level: &Level, lock: &str, model: &str, extra: &str) -> Vec<String> {
    args(&format!(
        "rmr --lock {lock} --threads {} --model {model} --schedule adversarial {extra}",
        level.ns()
    ))
}

/// The points of an `rmr` JSON output.
pub fn points(v: &Value) -> Vec<Point> {
    items(v)
        .into_iter()
        .map(|r| Point {
            n: num(r, "threads") as usize,
            max: num(r, "max_rmr_per_passage") as u64,
            bound: r["bound"].get("value").and_then(Value::as_u64),
            within: r["within_bound"].as_bool(),
            found_by: r
                .get("found_by")
                .or_else(|| r.get("schedule_detail"))
                .and_then(Value::as_str)
                .unwrap_or("")
                .to_string(),
            registers: r.get("registers").and_then(Value::as_u64),
        })
        .collect()
}

/// The growth class of the points (`rmr`'s fit: the highest-degree term carrying half the
/// fitted figure at the largest N).
pub fn class(pts: &[(usize, u64)]) -> &'static str {
    crate::rmr::fit(pts).class.name()
}

/// "12.1N − 3 (linear)".
pub fn describe(pts: &[(usize, u64)]) -> String {
    crate::rmr::fit(pts).to_string()
}

/// The row of "O(f(N)) RMRs per passage": holds when the measured class is `class` and every
/// N is within the bound counted from the figure.
pub fn judge(v: &Value, expected: &str) -> Result<Judged, String> {
    let pts = points(v);
    if pts.is_empty() {
        return Err("the rmr check returned no point".into());
    }
    let maxes: Vec<(usize, u64)> = pts.iter().map(|p| (p.n, p.max)).collect();
    let at: Vec<String> = pts
        .iter()
        .map(|p| match p.bound {
            Some(b) => format!("N={}: {} (bound {b})", p.n, p.max),
            None => format!("N={}: {}", p.n, p.max),
        })
        .collect();
    let fit = describe(&maxes);
    let outside: Vec<String> = pts
        .iter()
        .filter(|p| p.within == Some(false))
        .map(|p| format!("N = {}: {} > {}", p.n, p.max, p.bound.unwrap_or(0)))
        .collect();
    let found: Vec<String> = pts
        .iter()
        .map(|p| format!("N={}: {}", p.n, p.found_by))
        .collect();
    let got = class(&maxes);
    let ours = format!(
        "{fit}, {} of {} N within the bound",
        pts.len() - outside.len(),
        pts.len()
    );
    let effort = format!(
        "max RMRs per passage {}; worst schedule per N: {}",
        at.join(", "),
        found.join("; ")
    );
    let ok = got == expected && outside.is_empty();
    Ok(Judged::check(ours, effort, ok, || {
        if got != expected {
            format!("grows {got}, the paper says {expected}")
        } else {
            format!(
                "over the bound counted from the figure at {}",
                outside.join(", ")
            )
        }
    }))
}

/// The row of "O(N) shared space": registers allocated per N, fitted.
pub fn space(v: &Value) -> Result<Judged, String> {
    space_grows(v, "linear")
}

/// The row of a space claim: registers allocated per N, fitted, of class `expected`.
pub fn space_grows(v: &Value, expected: &str) -> Result<Judged, String> {
    let pts: Vec<(usize, u64)> = points(v)
        .iter()
        .filter_map(|p| p.registers.map(|r| (p.n, r)))
        .collect();
    if pts.is_empty() {
        return Ok(Judged {
            ours: "-".into(),
            effort: "-".into(),
            verdict: Verdict::Open("rmr reports no register count".into()),
        });
    }
    let at: Vec<String> = pts.iter().map(|(n, r)| format!("N={n}: {r}")).collect();
    let mut got = class(&pts);
    // The fit knows no class above quadratic: registers per N² that keep rising are faster.
    let per_n2 = |&(n, r): &(usize, u64)| r as f64 / (n * n) as f64;
    if got == "quadratic" && per_n2(&pts[pts.len() - 1]) > 1.1 * per_n2(&pts[0]) {
        got = "faster than quadratic";
    }
    Ok(Judged::check(
        format!("registers {}; {}", describe(&pts), at.join(", ")),
        "registers allocated by the lock on the counting memory".into(),
        got == expected,
        || format!("registers grow {got}, the paper says {expected}"),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn space_that_grows_faster_than_claimed_differs() {
        let v = serde_json::json!([
            {"threads": 2, "registers": 8},
            {"threads": 4, "registers": 64},
            {"threads": 8, "registers": 512}
        ]);
        let j = space_grows(&v, "quadratic").unwrap();
        assert!(
            matches!(&j.verdict, Verdict::Differs(w) if w.contains("the paper says quadratic")),
            "{:?}",
            j.verdict
        );
        let v = serde_json::json!([
            {"threads": 2, "registers": 13},
            {"threads": 4, "registers": 41},
            {"threads": 8, "registers": 145}
        ]);
        assert_eq!(
            space_grows(&v, "quadratic").unwrap().verdict,
            Verdict::Holds
        );
    }

    #[test]
    fn a_point_over_its_bound_differs() {
        let v = serde_json::json!([
            {"threads": 2, "max_rmr_per_passage": 10, "bound": {"value": 20}, "within_bound": true},
            {"threads": 8, "max_rmr_per_passage": 90, "bound": {"value": 80}, "within_bound": false}
        ]);
        let j = judge(&v, "linear").unwrap();
        assert!(matches!(j.verdict, Verdict::Differs(w) if w.contains("N = 8: 90 > 80")));
    }
}
