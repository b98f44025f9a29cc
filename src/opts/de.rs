//! Serde helpers shared by option files: a duration as typed, one value standing for a list of
//! one, and enums written by their command-line names.

use std::str::FromStr;
use std::time::Duration;

use clap::ValueEnum;
use serde::{Deserialize, Deserializer, Serialize, Serializer};

use crate::workload::{format_duration, parse_duration, Mix};

/// A duration as typed (`0`, `200ns`, `1.5ms`, `2s`): parsed on the command line and in a
/// config file alike.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Dur(pub Duration);

impl FromStr for Dur {
    type Err = String;
    fn from_str(s: &str) -> Result<Dur, String> {
        parse_duration(s).map(Dur)
    }
}

impl std::fmt::Display for Dur {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&format_duration(self.0))
    }
}

impl Serialize for Dur {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for Dur {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Dur, D::Error> {
        struct V;
        impl serde::de::Visitor<'_> for V {
            type Value = Dur;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a duration as a string with its unit")
            }
            fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Dur, E> {
                s.parse().map_err(E::custom)
            }
            fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Dur, E> {
                if v == 0 {
                    Ok(Dur(Duration::ZERO))
                } else {
                    Err(E::custom(format!(
                        "the number {v} has no unit (write it as a string: \"{v}ms\")"
                    )))
                }
            }
        }
        d.deserialize_any(V)
    }
}

/// A list, or one value standing for a list of one; strings of names are split at commas
/// when `split` (as `--lock a,b`).
fn list<'de, D, T>(
    d: D,
    what: &'static str,
    split: bool,
    numbers: bool,
) -> Result<Option<Vec<T>>, D::Error>
where
    D: Deserializer<'de>,
    T: Deserialize<'de> + FromStr,
    T::Err: std::fmt::Display,
{
    struct V<T> {
        what: &'static str,
        split: bool,
        numbers: bool,
        _t: std::marker::PhantomData<T>,
    }
    impl<'de, T> serde::de::Visitor<'de> for V<T>
    where
        T: Deserialize<'de> + FromStr,
        T::Err: std::fmt::Display,
    {
        type Value = Vec<T>;
        fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
            f.write_str(self.what)
        }
        fn visit_str<E: serde::de::Error>(self, s: &str) -> Result<Vec<T>, E> {
            let parts: Vec<&str> = if self.split {
                s.split(',').collect()
            } else {
                vec![s]
            };
            parts
                .into_iter()
                .map(|p| {
                    p.trim().parse::<T>().map_err(|e| {
                        if self.numbers {
                            E::custom(format!(
                                "`{p}` is not a whole number; expected {}",
                                self.what
                            ))
                        } else {
                            E::custom(e)
                        }
                    })
                })
                .collect()
        }
        fn visit_u64<E: serde::de::Error>(self, v: u64) -> Result<Vec<T>, E> {
            if !self.numbers {
                return Err(E::custom(format!(
                    "expected {}, found the number {v}",
                    self.what
                )));
            }
            self.visit_str(&v.to_string())
        }
        fn visit_i64<E: serde::de::Error>(self, v: i64) -> Result<Vec<T>, E> {
            if !self.numbers {
                return Err(E::custom(format!(
                    "expected {}, found the number {v}",
                    self.what
                )));
            }
            self.visit_str(&v.to_string())
        }
        fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut a: A) -> Result<Vec<T>, A::Error> {
            let mut v = Vec::new();
            while let Some(x) = a.next_element::<T>()? {
                v.push(x);
            }
            Ok(v)
        }
    }
    d.deserialize_any(V {
        what,
        split,
        numbers,
        _t: std::marker::PhantomData,
    })
    .map(Some)
}

pub fn names<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<String>>, D::Error> {
    list(d, "a name or a list of names (strings)", true, false)
}

pub fn counts<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<usize>>, D::Error> {
    list(
        d,
        "a whole number at least 1 or a list of them",
        false,
        true,
    )
}

pub fn mixes<'de, D: Deserializer<'de>>(d: D) -> Result<Option<Vec<Mix>>, D::Error> {
    list(d, "a mix or a list of mixes (strings)", false, false)
}

/// An enum by its command-line name (`--pin physical`).
pub fn choice<S: Serializer, T: ValueEnum>(v: &Option<T>, s: S) -> Result<S::Ok, S::Error> {
    match v.as_ref().and_then(|v| v.to_possible_value()) {
        Some(p) => s.serialize_str(p.get_name()),
        None => s.serialize_none(),
    }
}
