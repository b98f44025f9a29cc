//! Replay strings: shuttle's encoded schedule together with everything the execution depended
//! on (lock, mutant, processes, passages, k, session plan, steps inside, step bound, strictness,
//! scheduler), so a replay under other settings is refused instead of reporting nonsense.
//!
//! Format: `key=value` fields separated by `;`, the schedule last, e.g.
//! `lock=glb;mutant=-;threads=3;passages=2;k=1;sessions=3;plan=random;cs-steps=2;max-steps=100000;witness=0;scheduler=pct;schedule=9102…`.

/// Everything one execution depends on, plus the scheduler that found it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ReplayContext {
    /// Lock name.
    pub lock: String,
    /// Mutant name, if a mutant.
    pub mutant: Option<String>,
    /// Processes.
    pub threads: usize,
    /// Passages per process.
    pub passages: usize,
    /// k.
    pub k: usize,
    /// Sessions.
    pub sessions: usize,
    /// Session plan (`random` or `fixed`).
    pub plan: String,
    /// Steps inside the critical section.
    pub cs_steps: usize,
    /// Step bound.
    pub max_steps: usize,
    /// Unclaimed properties checked as claimed.
    pub witness: bool,
    /// The scheduler that found the schedule (`pct` or `random`).
    pub scheduler: String,
    /// Shuttle's encoded schedule.
    pub schedule: String,
}

impl ReplayContext {
    /// The replay string.
    pub fn encode(&self) -> String {
        format!(
            "lock={};mutant={};threads={};passages={};k={};sessions={};plan={};cs-steps={};max-steps={};witness={};scheduler={};schedule={}",
            self.lock,
            self.mutant.as_deref().unwrap_or("-"),
            self.threads,
            self.passages,
            self.k,
            self.sessions,
            self.plan,
            self.cs_steps,
            self.max_steps,
            u8::from(self.witness),
            self.scheduler,
            self.schedule
        )
    }

    /// Parses a replay string; `Err` says what is wrong with it.
    pub fn decode(text: &str) -> Result<Self, String> {
        const HINT: &str = "pass the whole replay string a failing verify printed";
        let mut get = std::collections::HashMap::new();
        for field in text.trim().split(';') {
            let (key, value) = field.split_once('=').ok_or_else(|| {
                format!("malformed --replay: field `{field}` is not key=value; {HINT}")
            })?;
            get.insert(key.trim(), value.trim());
        }
        let field = |key: &str| -> Result<&str, String> {
            get.get(key)
                .copied()
                .ok_or_else(|| format!("malformed --replay: no `{key}` field; {HINT}"))
        };
        let number = |key: &str| -> Result<usize, String> {
            field(key)?
                .parse()
                .map_err(|_| format!("malformed --replay: `{key}` is not a number; {HINT}"))
        };
        let mutant = field("mutant")?;
        let ctx = ReplayContext {
            lock: field("lock")?.to_string(),
            mutant: (mutant != "-").then(|| mutant.to_string()),
            threads: number("threads")?,
            passages: number("passages")?,
            k: number("k")?,
            sessions: number("sessions")?,
            plan: field("plan")?.to_string(),
            cs_steps: number("cs-steps")?,
            max_steps: number("max-steps")?,
            witness: number("witness")? != 0,
            scheduler: field("scheduler")?.to_string(),
            schedule: field("schedule")?.to_string(),
        };
        if ctx.schedule.is_empty() || !ctx.schedule.chars().all(|c| c.is_ascii_hexdigit()) {
            return Err(format!(
                "malformed --replay: the schedule is not hexadecimal; {HINT}"
            ));
        }
        Ok(ctx)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replay_strings_round_trip() {
        let ctx = ReplayContext {
            lock: "glb".into(),
            mutant: Some("no-choosing-wait".into()),
            threads: 3,
            passages: 2,
            k: 1,
            sessions: 3,
            plan: "random".into(),
            cs_steps: 2,
            max_steps: 1000,
            witness: false,
            scheduler: "pct".into(),
            schedule: "91022800".into(),
        };
        assert_eq!(ReplayContext::decode(&ctx.encode()), Ok(ctx.clone()));
        let bare = ReplayContext {
            mutant: None,
            ..ctx
        };
        assert_eq!(ReplayContext::decode(&bare.encode()), Ok(bare));
        assert!(ReplayContext::decode("91022800").is_err());
        assert!(ReplayContext::decode("lock=glb;threads=x").is_err());
    }
}
