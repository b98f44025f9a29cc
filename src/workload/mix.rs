//! Session mixes: which session each critical-section request asks for.
//!
//! A mix is written as a short string (`uniform:8`, `hot:50:20,80`, `zipf:16:1.2`, ...) that
//! parses with [`FromStr`], prints back with [`fmt::Display`] and serializes as that string.
//! Drawing the sessions is the sampler's job ([`super::Sampler`]).

use std::fmt;
use std::str::FromStr;

/// Which session each critical-section request asks for.
///
/// Sessions are numbered from 0; [`Mix::sessions`] bounds them for a run of `n` processes.
#[derive(Clone, Debug, PartialEq, Default)]
pub enum Mix {
    /// `single`: every request asks session 0, so a GME lock may admit everyone together.
    Single,
    /// `distinct`: process `p` always asks session `p`, so no two processes share a session and a
    /// GME lock behaves as a mutex. The default mix.
    #[default]
    Distinct,
    /// `uniform:M`: each request picks a session uniformly in `0..sessions`.
    Uniform {
        /// M, the number of sessions.
        sessions: usize,
    },
    /// `hot:M:A,B`: the non-uniform access model of Mittal and Mohan's TokenGME evaluation
    /// (seed 003, Section 4: "α% of the groups are selected β% of the times"). The first
    /// `round(A% of M)` sessions (at least 1, and at most M − 1 so the cold set is not empty
    /// when M ≥ 2) form the hot set and receive B% of the requests; the rest receive the
    /// remaining (100 − B)%. Within each set the choice is uniform.
    Hot {
        /// M, the number of sessions.
        sessions: usize,
        /// A (α), the percentage of sessions that are hot, in (0, 100).
        hot_percent: f64,
        /// B (β), the percentage of requests that go to the hot set, in [0, 100].
        hot_share: f64,
    },
    /// `zipf:M:S`: session `r` in `0..M` with probability proportional to `1/(r+1)^S`, drawn by
    /// binary search in the exact cumulative table. S = 0 is uniform.
    Zipf {
        /// M, the number of sessions.
        sessions: usize,
        /// S, the exponent, finite and ≥ 0.
        exponent: f64,
    },
    /// `fixed:M`: process `p` always asks session `p mod M`.
    Fixed {
        /// M, the number of sessions.
        sessions: usize,
    },
    /// `rw:P`: readers and writers. With probability P a request is a reader and asks session
    /// 0, which all readers share; otherwise it is a writer of process `p` and asks session
    /// `1 + p`, which conflicts with every other request in flight.
    ReadWrite {
        /// P, the probability that a request reads, in [0, 1].
        read_probability: f64,
    },
}

impl Mix {
    /// The size of the session range for `n` processes: every session this mix draws is below
    /// it, so a GME lock built for this many sessions accepts them all. It is the number of
    /// distinct sessions that can occur, except for `rw:P` with P = 0, whose writers use
    /// `1..=n` and never session 0. At least 1.
    pub fn sessions(&self, n: usize) -> usize {
        let s = match *self {
            Mix::Single => 1,
            Mix::Distinct => n,
            Mix::Uniform { sessions } | Mix::Hot { sessions, .. } | Mix::Zipf { sessions, .. } => {
                sessions
            }
            Mix::Fixed { sessions } => sessions.min(n),
            Mix::ReadWrite { read_probability } => {
                if read_probability >= 1.0 {
                    1
                } else {
                    n + 1
                }
            }
        };
        s.max(1)
    }

    /// Whether this mix, run by `n` processes, is a real group mutual-exclusion workload: two
    /// concurrent requests can ask for different sessions *and* two can ask for the same one.
    ///
    /// When it is false the sessions carry no information a simpler lock would miss: `single`
    /// (always equal), `distinct` and `fixed:M` with M ≥ n (never equal), `rw:0`, `rw:1`, one
    /// session or one process. A k-exclusion lock ignores sessions, so it can only stand in for
    /// a GME lock when this is false.
    pub fn needs_groups(&self, n: usize) -> bool {
        if n < 2 {
            return false;
        }
        match *self {
            Mix::Single | Mix::Distinct => false,
            // Random mixes: any two requests may meet in a session of positive probability, so
            // equal sessions occur; different ones need at least two such sessions.
            Mix::Uniform { sessions } | Mix::Zipf { sessions, .. } => sessions >= 2,
            Mix::Hot {
                sessions,
                hot_percent,
                hot_share,
            } => {
                let hot = hot_set(sessions, hot_percent);
                let reachable = if hot_share > 0.0 { hot } else { 0 }
                    + if hot_share < 100.0 { sessions - hot } else { 0 };
                reachable >= 2
            }
            // Processes p and p + M share a session; processes 0 and 1 differ.
            Mix::Fixed { sessions } => sessions >= 2 && n > sessions,
            // Two readers share session 0; a writer differs from everyone.
            Mix::ReadWrite { read_probability } => read_probability > 0.0 && read_probability < 1.0,
        }
    }
}

/// The size of the hot set of `hot:M:A,_`: A% of M rounded, at least 1, and at most M − 1 when
/// M ≥ 2 so that the cold set is never empty.
pub(super) fn hot_set(sessions: usize, hot_percent: f64) -> usize {
    let h = (hot_percent / 100.0 * sessions as f64).round() as usize;
    h.clamp(1, sessions.saturating_sub(1).max(1))
}

/// A mix parameter as text that parses back to the same value: the shortest decimal, or the
/// shortest exponent form (`1e308`, not 309 digits) when that is shorter.
struct Num(f64);

impl fmt::Display for Num {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let plain = format!("{}", self.0);
        let exp = format!("{:e}", self.0);
        f.write_str(if exp.len() < plain.len() {
            &exp
        } else {
            &plain
        })
    }
}

impl fmt::Display for Mix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        // Numbers print in their shortest form that parses back to the same value.
        match self {
            Mix::Single => write!(f, "single"),
            Mix::Distinct => write!(f, "distinct"),
            Mix::Uniform { sessions } => write!(f, "uniform:{sessions}"),
            Mix::Hot {
                sessions,
                hot_percent,
                hot_share,
            } => write!(
                f,
                "hot:{sessions}:{},{}",
                Num(*hot_percent),
                Num(*hot_share)
            ),
            Mix::Zipf { sessions, exponent } => write!(f, "zipf:{sessions}:{}", Num(*exponent)),
            Mix::Fixed { sessions } => write!(f, "fixed:{sessions}"),
            Mix::ReadWrite { read_probability } => write!(f, "rw:{}", Num(*read_probability)),
        }
    }
}

impl FromStr for Mix {
    type Err = String;

    fn from_str(text: &str) -> Result<Self, String> {
        let s = text.trim();
        let (name, args) = match s.split_once(':') {
            Some((name, args)) => (name, args.split(':').collect()),
            None => (s, Vec::new()),
        };
        let form = match name {
            "single" => Some(("single", 0)),
            "distinct" => Some(("distinct", 0)),
            "uniform" => Some(("uniform:8", 1)),
            "hot" => Some(("hot:50:20,80", 2)),
            "zipf" => Some(("zipf:16:1", 2)),
            "fixed" => Some(("fixed:4", 1)),
            "rw" => Some(("rw:0.9", 1)),
            _ => None,
        };
        let Some((example, arity)) = form else {
            return Err(format!(
                "invalid mix `{s}`: unknown mix (single, distinct, uniform:M, hot:M:A,B, \
                 zipf:M:S, fixed:M, rw:P); e.g. uniform:8"
            ));
        };
        let fail = |what: &str| format!("invalid mix `{s}`: {what}; e.g. {example}");
        if args.len() != arity {
            return Err(fail(&format!(
                "`{name}` takes {arity} `:`-separated argument(s)"
            )));
        }
        let sessions = |t: &str| match t.trim().parse::<usize>() {
            Ok(0) => Err(fail(
                "zero sessions; the session count M must be at least 1",
            )),
            Ok(m) => Ok(m),
            Err(_) => Err(fail(&format!("session count `{t}` is not a whole number"))),
        };
        let number = |t: &str, what: &str| match t.trim().parse::<f64>() {
            Ok(x) if x.is_finite() => Ok(x),
            _ => Err(fail(&format!("{what} `{t}` is not a finite number"))),
        };
        match name {
            "single" => Ok(Mix::Single),
            "distinct" => Ok(Mix::Distinct),
            "uniform" => Ok(Mix::Uniform {
                sessions: sessions(args[0])?,
            }),
            "fixed" => Ok(Mix::Fixed {
                sessions: sessions(args[0])?,
            }),
            "hot" => {
                let sessions = sessions(args[0])?;
                let Some((a, b)) = args[1].split_once(',') else {
                    return Err(fail(
                        "hot takes the hot percentage and its share of requests as A,B",
                    ));
                };
                let hot_percent = number(a, "hot percentage A")?;
                let hot_share = number(b, "hot share B")?;
                if !(hot_percent > 0.0 && hot_percent < 100.0) {
                    return Err(fail(&format!(
                        "hot percentage A = {a} must lie strictly between 0 and 100"
                    )));
                }
                if !(0.0..=100.0).contains(&hot_share) {
                    return Err(fail(&format!(
                        "hot share B = {b} must lie between 0 and 100"
                    )));
                }
                Ok(Mix::Hot {
                    sessions,
                    hot_percent,
                    hot_share,
                })
            }
            "zipf" => {
                let sessions = sessions(args[0])?;
                let exponent = number(args[1], "exponent S")?;
                if exponent < 0.0 {
                    return Err(fail(&format!(
                        "exponent S = {} must not be negative",
                        args[1]
                    )));
                }
                Ok(Mix::Zipf { sessions, exponent })
            }
            "rw" => {
                let p = number(args[0], "read probability P")?;
                if !(0.0..=1.0).contains(&p) {
                    return Err(fail(&format!(
                        "read probability P = {} must lie between 0 and 1",
                        args[0]
                    )));
                }
                Ok(Mix::ReadWrite {
                    read_probability: p,
                })
            }
            _ => unreachable!("unknown names were rejected above"),
        }
    }
}

impl serde::Serialize for Mix {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_str(self)
    }
}

impl<'de> serde::Deserialize<'de> for Mix {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mix(s: &str) -> Mix {
        s.parse().unwrap_or_else(|e| panic!("{e}"))
    }

    #[test]
    fn display_round_trips() {
        for text in [
            "single",
            "distinct",
            "uniform:8",
            "hot:50:20,80",
            "hot:10:12.5,0",
            "zipf:16:1",
            "zipf:4:0.99",
            "fixed:4",
            "rw:0.9",
            "rw:1",
        ] {
            let m = mix(text);
            assert_eq!(m.to_string(), text);
            assert_eq!(mix(&m.to_string()), m);
        }
        // Equivalent spellings normalize.
        assert_eq!(mix(" rw:0.50 ").to_string(), "rw:0.5");
        assert_eq!(Mix::default(), Mix::Distinct);
    }

    #[test]
    fn serializes_as_its_string() {
        let m = mix("hot:50:20,80");
        assert_eq!(serde_json::to_string(&m).unwrap(), "\"hot:50:20,80\"");
        let back: Mix = serde_json::from_str("\"zipf:4:1.5\"").unwrap();
        assert_eq!(back, mix("zipf:4:1.5"));
        assert!(serde_json::from_str::<Mix>("\"uniform:0\"").is_err());
    }

    #[test]
    fn parse_errors_say_what_was_wrong_with_an_example() {
        for (text, says, example) in [
            ("uniform:0", "zero sessions", "uniform:8"),
            ("uniform:x", "not a whole number", "uniform:8"),
            ("uniform", "takes 1", "uniform:8"),
            ("uniform:-3", "not a whole number", "uniform:8"),
            ("hot:4:50", "A,B", "hot:50:20,80"),
            ("hot:4:0,50", "strictly between 0 and 100", "hot:50:20,80"),
            ("hot:4:50,101", "between 0 and 100", "hot:50:20,80"),
            ("hot:4:50,nan", "not a finite number", "hot:50:20,80"),
            ("zipf:4:-1", "must not be negative", "zipf:16:1"),
            ("zipf:4:inf", "not a finite number", "zipf:16:1"),
            ("zipf:0:1", "zero sessions", "zipf:16:1"),
            ("fixed:0", "zero sessions", "fixed:4"),
            ("rw:1.5", "between 0 and 1", "rw:0.9"),
            ("rw", "takes 1", "rw:0.9"),
            ("single:3", "takes 0", "single"),
            ("bogus", "unknown mix", "uniform:8"),
            ("", "unknown mix", "uniform:8"),
        ] {
            let err = text.parse::<Mix>().expect_err(text);
            assert!(err.contains(says), "`{text}`: {err}");
            assert!(err.ends_with(&format!("e.g. {example}")), "`{text}`: {err}");
            assert!(!err.contains('\n'), "`{text}`: {err}");
            // The example offered is itself valid.
            example.parse::<Mix>().unwrap();
        }
    }

    #[test]
    fn session_ranges() {
        let n = 6;
        assert_eq!(mix("single").sessions(n), 1);
        assert_eq!(mix("distinct").sessions(n), 6);
        assert_eq!(mix("uniform:9").sessions(n), 9);
        assert_eq!(mix("hot:9:20,80").sessions(n), 9);
        assert_eq!(mix("zipf:9:1").sessions(n), 9);
        assert_eq!(mix("fixed:4").sessions(n), 4);
        assert_eq!(mix("fixed:9").sessions(n), 6);
        assert_eq!(mix("rw:0.5").sessions(n), 7);
        assert_eq!(mix("rw:1").sessions(n), 1);
        assert_eq!(mix("distinct").sessions(0), 1);
    }

    #[test]
    fn needs_groups_only_for_real_gme_workloads() {
        let n = 4;
        for (text, want) in [
            ("single", false),
            ("distinct", false),
            ("uniform:1", false),
            ("uniform:2", true),
            ("hot:10:20,80", true),
            ("hot:10:10,100", false),
            ("hot:2:50,0", false),
            ("hot:3:50,0", false), // 1.5 rounds to 2 hot sessions, one cold
            ("hot:4:25,0", true),
            ("zipf:1:1", false),
            ("zipf:5:1", true),
            ("fixed:1", false),
            ("fixed:2", true),
            ("fixed:4", false),
            ("fixed:8", false),
            ("rw:0", false),
            ("rw:0.5", true),
            ("rw:1", false),
        ] {
            assert_eq!(mix(text).needs_groups(n), want, "{text}");
        }
        assert!(!mix("uniform:8").needs_groups(1));
    }
}
