//! The counter-example as a numbered step trace: the failing schedule replayed once more with
//! the scheduled memory recording every access ([`crate::mem::scheduled::start_recording`]),
//! printed one line per shared-memory step (`17  p2  write  number[2]  3  line 4`) with the
//! verifier's events (request, doorway done, entry, exit) between them, ending with the line
//! where the property fails. Exploration never records: only this replay does.

use serde::Serialize;

use crate::mem::scheduled::{Recorded, Recording};

/// Steps shown by default: the last ones before the failure.
pub const DEFAULT_TRACE_STEPS: usize = 60;

/// One line of a trace: a numbered step, an event (no step number), or the failure (last).
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct TraceLine {
    /// The step's number in the execution, from 1 (None for events and the failure).
    pub step: Option<usize>,
    /// The process (None for the failure).
    pub process: Option<usize>,
    /// `read`, `write`, `fetch-add`, `swap`, `cas`; `event` or `fails`.
    pub op: String,
    /// The register, named as the lock declares it (`token[1]`), else `r` and its allocation
    /// index (`r4`).
    pub register: Option<String>,
    /// The value read or written.
    pub value: Option<String>,
    /// The figure line the process was at, when the lock tags its lines.
    pub line: Option<u32>,
    /// What happened, for an event or the failure.
    pub event: Option<String>,
}

/// A counter-example's trace, cut to its last steps.
#[derive(Clone, Debug, Serialize, PartialEq)]
pub struct Trace {
    /// Shared-memory steps of the whole execution.
    pub steps: usize,
    /// Steps shown (the last ones).
    pub shown: usize,
    /// The lines, ending with the failure.
    pub lines: Vec<TraceLine>,
}

impl Trace {
    /// The trace of `rec`, keeping the last `keep` steps (and the events among them), ended by
    /// the failure `fails`.
    pub fn new(rec: &Recording, keep: usize, fails: &str) -> Self {
        let mut lines = Vec::with_capacity(rec.entries.len() + 1);
        let mut step = 0;
        for e in &rec.entries {
            lines.push(match e {
                Recorded::Step {
                    p,
                    op,
                    reg,
                    value,
                    line,
                } => {
                    step += 1;
                    TraceLine {
                        step: Some(step),
                        process: Some(*p),
                        op: op.to_string(),
                        register: Some(
                            rec.names
                                .get(reg)
                                .cloned()
                                .unwrap_or_else(|| format!("r{reg}")),
                        ),
                        value: Some(value.clone()),
                        line: *line,
                        event: None,
                    }
                }
                Recorded::Event { p, what } => TraceLine {
                    step: None,
                    process: Some(*p),
                    op: "event".into(),
                    register: None,
                    value: None,
                    line: None,
                    event: Some(what.clone()),
                },
            });
        }
        let steps = step;
        let first = steps.saturating_sub(keep) + 1;
        // Keep from the first kept step on; events before it go with the steps cut.
        let start = lines
            .iter()
            .position(|l| l.step.is_some_and(|s| s >= first))
            .unwrap_or(lines.len());
        let start = if first == 1 { 0 } else { start };
        lines.drain(..start);
        lines.push(TraceLine {
            step: None,
            process: None,
            op: "fails".into(),
            register: None,
            value: None,
            line: None,
            event: Some(fails.to_string()),
        });
        Trace {
            steps,
            shown: steps - (first - 1),
            lines,
        }
    }
}

impl std::fmt::Display for Trace {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.shown < self.steps {
            writeln!(
                f,
                "  trace: the last {} of {} steps (--trace N or --trace-all for more):",
                self.shown, self.steps
            )?;
        } else {
            writeln!(f, "  trace: all {} steps:", self.steps)?;
        }
        let width = |get: &dyn Fn(&TraceLine) -> usize, head: usize| {
            self.lines.iter().map(get).max().unwrap_or(0).max(head)
        };
        let w_step = width(&|l| l.step.map_or(0, |s| s.to_string().len()), 1);
        let w_op = width(&|l| l.register.as_ref().map_or(0, |_| l.op.len()), 2);
        let w_reg = width(&|l| l.register.as_ref().map_or(0, |r| r.chars().count()), 8);
        let w_val = width(&|l| l.value.as_ref().map_or(0, |v| v.chars().count()), 5);
        writeln!(
            f,
            "  {:>w_step$}  proc  {:<w_op$}  {:<w_reg$}  {:<w_val$}  line",
            "#", "op", "register", "value"
        )?;
        for l in &self.lines {
            let p = l.process.map_or(String::new(), |p| format!("p{p}"));
            match (&l.register, &l.event) {
                (Some(reg), _) => writeln!(
                    f,
                    "  {:>w_step$}  {p:<4}  {:<w_op$}  {:<w_reg$}  {:<w_val$}  {}",
                    l.step.map_or(String::new(), |s| s.to_string()),
                    l.op,
                    reg,
                    l.value.as_deref().unwrap_or(""),
                    l.line.map_or("—".to_string(), |n| n.to_string()),
                )?,
                (None, Some(what)) if l.op == "fails" => {
                    writeln!(f, "  {:>w_step$}  ✗ {what}", "")?
                }
                (None, Some(what)) => writeln!(f, "  {:>w_step$}  {p:<4}  · {what}", "")?,
                (None, None) => {}
            }
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn recording() -> Recording {
        let mut rec = Recording::default();
        rec.names.insert(0, "token[0]".into());
        for i in 0..5 {
            rec.entries.push(Recorded::Event {
                p: 0,
                what: format!("event {i}"),
            });
            rec.entries.push(Recorded::Step {
                p: 0,
                op: "write",
                reg: (i % 2) as u32,
                value: i.to_string(),
                line: (i % 2 == 0).then_some(3),
            });
        }
        rec
    }

    #[test]
    fn steps_are_numbered_named_and_end_with_the_failure() {
        let t = Trace::new(&recording(), 100, "SAFETY VIOLATION: two inside");
        assert_eq!((t.steps, t.shown), (5, 5));
        assert_eq!(t.lines.len(), 11);
        assert_eq!(t.lines[1].step, Some(1));
        assert_eq!(t.lines[1].register.as_deref(), Some("token[0]"));
        assert_eq!(t.lines[3].register.as_deref(), Some("r1"));
        assert_eq!(t.lines[3].line, None);
        let last = t.lines.last().unwrap();
        assert_eq!(last.op, "fails");
        let text = t.to_string();
        assert!(text.contains("all 5 steps"), "{text}");
        assert!(text.contains("✗ SAFETY VIOLATION: two inside"), "{text}");
        assert!(text
            .lines()
            .any(|l| l.trim_start().starts_with("4  p0    write  r1")));
        assert!(text.lines().any(|l| l.trim_end().ends_with('—')));
    }

    #[test]
    fn a_long_trace_keeps_its_last_steps() {
        let t = Trace::new(&recording(), 2, "x");
        assert_eq!((t.steps, t.shown), (5, 2));
        let steps: Vec<usize> = t.lines.iter().filter_map(|l| l.step).collect();
        assert_eq!(steps, vec![4, 5]);
        // The event between the kept steps stays; those before the first kept step go.
        assert_eq!(t.lines[1].event.as_deref(), Some("event 4"));
        assert!(t.to_string().contains("the last 2 of 5 steps"));
    }
}
