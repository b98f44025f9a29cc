//! What `sim` and `mp-run` print: the results as a table or JSON, and the exit code they
//! imply (1 when any run broke safety or liveness).

use super::metrics::MpResult;
use crate::opts::Format;
use crate::table::{Align, Table};

/// 1 when any run broke safety or liveness, else 0 (and a line on stderr saying which).
pub fn exit_code(results: &[MpResult]) -> i32 {
    let mut code = 0;
    for r in results {
        if r.safety_violations > 0 {
            crate::opts::io::errln!(
                "error: {} seed {}: {} safety violations, first: {}",
                r.algo,
                r.seed,
                r.safety_violations,
                r.violations.first().map_or("", String::as_str)
            );
            code = 1;
        }
        if let Some(l) = &r.liveness_failure {
            crate::opts::io::errln!("error: {} seed {}: liveness: {l}", r.algo, r.seed);
            code = 1;
        }
        // Sessions observed from the entries (never the algorithm's own count) where the
        // simulator observes them.
        let passed = r.sessions_passed_max.or(r.starvation_sessions_max);
        if let (Some(w), Some(b)) = (passed, r.starvation_bound) {
            if w > b {
                crate::opts::io::errln!(
                    "error: {} seed {}: a request was passed over by {w} sessions > bound {b}: {}",
                    r.algo,
                    r.seed,
                    r.sessions_passed_worst.as_deref().unwrap_or("")
                );
                code = 1;
            }
        }
        if let Some(b) = r.unnecessary_blocking.filter(|&b| b > 0) {
            crate::opts::io::errln!(
                "error: {} seed {}: a request blocked unnecessarily after {b} events (seed 003 §5.1), first: {}",
                r.algo,
                r.seed,
                r.unnecessary_blocking_first.as_deref().unwrap_or("")
            );
            code = 1;
        }
        if let Some(t) = r
            .multi_type
            .as_ref()
            .map(|x| &x.two_hop)
            .filter(|t| t.failed())
        {
            crate::opts::io::errln!(
                "error: {} seed {}: {} requests waited more than two message hops and {} were never served in a two-hop scenario (seed 003 §5.1), first: {}",
                r.algo,
                r.seed,
                t.over_two,
                t.unserved,
                t.first_over.as_deref().unwrap_or("")
            );
            code = 1;
        }
        for line in r.recovery.iter().flat_map(|rec| rec.failures()) {
            crate::opts::io::errln!("error: {} seed {}: {line}", r.algo, r.seed);
            code = 1;
        }
    }
    code
}

/// The results as a table or JSON array.
pub fn render(results: &[MpResult], format: Format) -> String {
    if format == Format::Json {
        return serde_json::to_string_pretty(results).expect("serializable") + "\n";
    }
    let opt = |x: Option<f64>| x.map_or("-".to_string(), |v| format!("{v:.2}"));
    let rows: Vec<Vec<String>> = results
        .iter()
        .map(|r| {
            vec![
                r.algo.clone(),
                r.n.to_string(),
                r.m.to_string(),
                r.seed.to_string(),
                format!("{:.2}", r.messages_per_request_mean),
                r.messages_per_request_max.to_string(),
                format!("{:.2}", r.message_size_mean),
                format!("{:.2}", r.waiting_time_mean),
                opt(r.waiting_time_path_hops),
                opt(r.waiting_time_hops),
                opt(r.sync_delay_mean),
                format!("{:.4}", r.throughput),
                format!("{:.2}/{}", r.concurrency_mean, r.concurrency_max),
                if r.safety_violations == 0 && r.liveness_failure.is_none() {
                    "ok".into()
                } else if r.safety_violations > 0 {
                    format!("{} VIOL", r.safety_violations)
                } else {
                    "STUCK".into()
                },
                format!("{:.2}", r.wall_seconds),
                r.events_per_sec
                    .map_or("-".into(), |e| format!("{:.1}", e / 1e6)),
            ]
        })
        .collect();
    let head = [
        "algo", "n", "m", "seed", "msg/req", "max", "size", "wait", "path", "chain", "sync",
        "thrpt", "inside", "safety", "wall s", "Mev/s",
    ];
    let mut out = String::new();
    if let Some(r) = results.first() {
        out.push_str(&format!(
            "runtime {}; ncs {}, cs {}, delay {}, mix {}, {} requests per process; times in {}\n",
            r.runtime,
            r.ncs,
            r.cs,
            r.delay,
            r.mix,
            r.requests_per_process,
            if r.runtime == "sim" {
                "simulated units"
            } else {
                "ms"
            }
        ));
    }
    let mut t = Table::new(|i| if i == 0 { Align::Left } else { Align::Right });
    t.row(head).rule();
    for row in rows {
        t.row(row);
    }
    out.push_str(&t.render());
    if !results.is_empty() {
        out.push_str(&legend(results[0].runtime == "sim"));
    }
    out.push_str(&waits(results));
    out.push_str(&lemma6(results));
    out.push_str(&recovery(results));
    out.push_str(&multi_type(results));
    out
}

/// What each column of the table holds, with its unit.
fn legend(sim: bool) -> String {
    let (unit, per) = if sim {
        ("simulated time units", "time unit")
    } else {
        ("ms", "ms")
    };
    format!(
        "n: processes; m: session types; msg/req: messages between distinct processes per request, mean;\n\
         max: their most for one request; size: integers per message, mean;\n\
         wait: request → entry, {unit}, mean; path: the hops of the messages the entry waited for, mean;\n\
         chain: the longest causal chain of messages before the entry, mean (simulator, n ≤ 64);\n\
         sync: last exit with someone waiting → next entry, {unit}, mean;\n\
         thrpt: critical sections per {per}; inside: processes inside while anyone is, mean/most;\n\
         safety: ok, N VIOL (safety violations) or STUCK (no progress); wall s: the run's wall-clock seconds;\n\
         Mev/s: the simulator's million events per wall-clock second\n"
    )
}

/// Per run of multi-type requests (seed 003 §5.1): unnecessary blocking and two hops.
fn multi_type(results: &[MpResult]) -> String {
    let mut out = String::new();
    for r in results {
        let Some(x) = &r.multi_type else {
            continue;
        };
        let t = &x.two_hop;
        let hops = t.hops_max.map_or("-".into(), |h| h.to_string());
        let two = match &t.why_not {
            None => format!(
                "{} requests after the first session, at most {hops} hops and {:.2} time units (2·D = {}), {} over two, {} unserved",
                t.requests,
                t.wait_max,
                2.0 * t.channel_delay.unwrap_or(0.0),
                t.over_two,
                t.unserved
            ),
            Some(why) => format!("not judged ({why}; at most {hops} hops)"),
        };
        out.push_str(&format!(
            "{} seed {}: {} types per request (§5.1); blocked unnecessarily after {} events; two hops: {two}\n",
            r.algo,
            r.seed,
            x.types_per_request,
            r.unnecessary_blocking.unwrap_or(0),
        ));
    }
    out
}

/// Per run with crashes (seed 003 §5.3): the restart operations against 5(n − 1) each, and
/// the whole run against (2n − 1) r + 5(n − 1) f.
fn recovery(results: &[MpResult]) -> String {
    results
        .iter()
        .filter_map(|r| r.recovery.as_ref().map(|rec| rec.render(&r.algo, r.seed)))
        .collect()
}

/// Per result, how waiting is spread over the processes: the worst process by longest wait.
fn waits(results: &[MpResult]) -> String {
    let mut t = Table::new(|i| if i == 0 { Align::Left } else { Align::Right });
    t.row([
        "algo",
        "seed",
        "wait mean",
        "wait max",
        "worst",
        "its mean",
        "its waits",
    ])
    .rule();
    let mut any = false;
    for r in results {
        let Some(w) = r
            .waiting_by_process
            .iter()
            .max_by(|a, b| a.max.total_cmp(&b.max))
        else {
            continue;
        };
        any = true;
        t.row([
            r.algo.clone(),
            r.seed.to_string(),
            format!("{:.2}", r.waiting_time_mean),
            format!("{:.2}", r.waiting_time_max),
            format!("p{}", w.process),
            format!("{:.2}", w.mean),
            w.waits.to_string(),
        ]);
    }
    if !any {
        return String::new();
    }
    format!(
        "\nwaiting per process (the process with the longest wait; every process in JSON \
         `waiting_by_process`)\n{}",
        t.render()
    )
}

/// Seed 004's Lemma 6 by path, for the results that have it.
fn lemma6(results: &[MpResult]) -> String {
    let mut t = Table::new(|i| if i <= 2 { Align::Left } else { Align::Right });
    t.row([
        "algo",
        "seed",
        "path",
        "bound",
        "trans",
        "max",
        "mean",
        "bound max/mean",
        "over",
        "worst",
        "by kind (mean)",
    ])
    .rule();
    let mut blocked = String::new();
    let mut any = false;
    for r in results {
        let Some(l) = &r.lemma6 else { continue };
        any = true;
        for p in &l.paths {
            let kinds: Vec<String> = p
                .by_kind
                .iter()
                .map(|k| format!("{} {:.2}", k.kind, k.per_transition))
                .collect();
            let opt = |x: Option<u64>| x.map_or("-".into(), |v| v.to_string());
            t.row([
                r.algo.clone(),
                r.seed.to_string(),
                p.path.clone(),
                p.bound.clone().unwrap_or_else(|| "-".into()),
                p.transitions.to_string(),
                p.messages_max.to_string(),
                format!("{:.2}", p.messages_mean),
                match (p.bound_max, p.bound_mean) {
                    (Some(b), Some(m)) => format!("{b}/{m:.2}"),
                    _ => "-".into(),
                },
                opt(p.over_bound),
                match (p.worst_process, p.worst_transition) {
                    (Some(w), Some(i)) => format!("p{w}#{i}"),
                    _ => "-".into(),
                },
                kinds.join(", "),
            ]);
        }
        blocked.push_str(&format!(
            "{} seed {}: {} transitions waited on the configuration, mean {:.2}, max {:.2}\n",
            r.algo, r.seed, l.blocked_transitions, l.blocked_wait_mean, l.blocked_wait_max
        ));
    }
    if !any {
        return String::new();
    }
    format!(
        "\nseed 004 Lemma 6: messages per transition by path, self-messages included \
         (bound max/mean: the largest and the mean of the bounds at its transitions' own \
         processes; over: transitions above their own \
         process's bound; worst: the costliest, as process#transition)\n{}{blocked}",
        t.render()
    )
}
