//! The integers a message carries as it would travel (seed 003's message size, Theorem 9),
//! counted by a serde [`Serializer`] that writes nothing and allocates nothing: it visits the
//! message as `serde_json` would write it and counts the numbers outside strings.
//!
//! What counts is what a JSON encoding of the message shows as a number: every integer and
//! every finite float (`serde_json` writes NaN and infinities as `null`), each byte of a byte
//! string; not booleans, units, `None`, strings, characters, field and variant names, nor map
//! keys (JSON writes a key as a string). The largest is over the non-negative integers
//! (a float is written with a point or an exponent, so it is never one).

use serde::ser::{self, Serialize, Serializer};

/// Integers counted so far, and the largest non-negative one.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct IntCount {
    /// Numbers seen.
    pub ints: u64,
    /// The largest non-negative integer seen.
    pub largest: u64,
}

impl IntCount {
    /// The numbers of `value` as `serde_json` would write it.
    pub fn of<T: Serialize + ?Sized>(value: &T) -> Self {
        let mut c = IntCount::default();
        // The serializer never fails on its own; a value's own error leaves what was counted.
        let _ = value.serialize(&mut c);
        c
    }

    #[inline]
    fn int(&mut self, v: u64) {
        self.ints += 1;
        self.largest = self.largest.max(v);
    }

    #[inline]
    fn signed(&mut self, v: i64) {
        match u64::try_from(v) {
            Ok(v) => self.int(v),
            Err(_) => self.ints += 1,
        }
    }
}

/// The error a value's own `Serialize` may raise through the counter.
#[derive(Debug)]
pub struct CountError(String);

impl std::fmt::Display for CountError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl std::error::Error for CountError {}

impl ser::Error for CountError {
    fn custom<T: std::fmt::Display>(msg: T) -> Self {
        CountError(msg.to_string())
    }
}

type R = Result<(), CountError>;

impl Serializer for &mut IntCount {
    type Ok = ();
    type Error = CountError;
    type SerializeSeq = Self;
    type SerializeTuple = Self;
    type SerializeTupleStruct = Self;
    type SerializeTupleVariant = Self;
    type SerializeMap = Self;
    type SerializeStruct = Self;
    type SerializeStructVariant = Self;

    fn serialize_bool(self, _: bool) -> R {
        Ok(())
    }
    fn serialize_i8(self, v: i8) -> R {
        self.signed(v.into());
        Ok(())
    }
    fn serialize_i16(self, v: i16) -> R {
        self.signed(v.into());
        Ok(())
    }
    fn serialize_i32(self, v: i32) -> R {
        self.signed(v.into());
        Ok(())
    }
    fn serialize_i64(self, v: i64) -> R {
        self.signed(v);
        Ok(())
    }
    fn serialize_i128(self, v: i128) -> R {
        match u128::try_from(v) {
            Ok(v) => self.int(u64::try_from(v).unwrap_or(u64::MAX)),
            Err(_) => self.ints += 1,
        }
        Ok(())
    }
    fn serialize_u8(self, v: u8) -> R {
        self.int(v.into());
        Ok(())
    }
    fn serialize_u16(self, v: u16) -> R {
        self.int(v.into());
        Ok(())
    }
    fn serialize_u32(self, v: u32) -> R {
        self.int(v.into());
        Ok(())
    }
    fn serialize_u64(self, v: u64) -> R {
        self.int(v);
        Ok(())
    }
    fn serialize_u128(self, v: u128) -> R {
        self.int(u64::try_from(v).unwrap_or(u64::MAX));
        Ok(())
    }
    fn serialize_f32(self, v: f32) -> R {
        self.ints += u64::from(v.is_finite());
        Ok(())
    }
    fn serialize_f64(self, v: f64) -> R {
        self.ints += u64::from(v.is_finite());
        Ok(())
    }
    fn serialize_char(self, _: char) -> R {
        Ok(())
    }
    fn serialize_str(self, _: &str) -> R {
        Ok(())
    }
    fn serialize_bytes(self, v: &[u8]) -> R {
        for &b in v {
            self.int(b.into());
        }
        Ok(())
    }
    fn serialize_none(self) -> R {
        Ok(())
    }
    fn serialize_some<T: Serialize + ?Sized>(self, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_unit(self) -> R {
        Ok(())
    }
    fn serialize_unit_struct(self, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_unit_variant(self, _: &'static str, _: u32, _: &'static str) -> R {
        Ok(())
    }
    fn serialize_newtype_struct<T: Serialize + ?Sized>(self, _: &'static str, v: &T) -> R {
        v.serialize(self)
    }
    fn serialize_newtype_variant<T: Serialize + ?Sized>(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        v: &T,
    ) -> R {
        v.serialize(self)
    }
    fn serialize_seq(self, _: Option<usize>) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_tuple(self, _: usize) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_tuple_struct(self, _: &'static str, _: usize) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_tuple_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_map(self, _: Option<usize>) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_struct(self, _: &'static str, _: usize) -> Result<Self, CountError> {
        Ok(self)
    }
    fn serialize_struct_variant(
        self,
        _: &'static str,
        _: u32,
        _: &'static str,
        _: usize,
    ) -> Result<Self, CountError> {
        Ok(self)
    }
}

/// One element, field or value: counted; a map key is written as a string: not.
macro_rules! counts_elements {
    ($($tr:ident :: $f:ident),*) => {$(
        impl ser::$tr for &mut IntCount {
            type Ok = ();
            type Error = CountError;
            fn $f<T: Serialize + ?Sized>(&mut self, v: &T) -> R {
                v.serialize(&mut **self)
            }
            fn end(self) -> R {
                Ok(())
            }
        }
    )*};
}
counts_elements!(
    SerializeSeq::serialize_element,
    SerializeTuple::serialize_element,
    SerializeTupleStruct::serialize_field,
    SerializeTupleVariant::serialize_field
);

impl ser::SerializeMap for &mut IntCount {
    type Ok = ();
    type Error = CountError;
    fn serialize_key<T: Serialize + ?Sized>(&mut self, _: &T) -> R {
        Ok(())
    }
    fn serialize_value<T: Serialize + ?Sized>(&mut self, v: &T) -> R {
        v.serialize(&mut **self)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeStruct for &mut IntCount {
    type Ok = ();
    type Error = CountError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> R {
        v.serialize(&mut **self)
    }
    fn end(self) -> R {
        Ok(())
    }
}

impl ser::SerializeStructVariant for &mut IntCount {
    type Ok = ();
    type Error = CountError;
    fn serialize_field<T: Serialize + ?Sized>(&mut self, _: &'static str, v: &T) -> R {
        v.serialize(&mut **self)
    }
    fn end(self) -> R {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeMap;

    use super::*;

    /// The numbers in `json` outside its strings, and the largest non-negative integer: how
    /// the counts were read before, from the bytes `serde_json` wrote.
    fn numbers_in(json: &[u8]) -> (u64, u64) {
        let (mut n, mut in_str, mut esc, mut in_num) = (0, false, false, false);
        let (mut value, mut plain, mut largest) = (0u64, true, 0u64);
        for &b in json {
            if in_str {
                match (esc, b) {
                    (true, _) => esc = false,
                    (false, b'\\') => esc = true,
                    (false, b'"') => in_str = false,
                    _ => {}
                }
                continue;
            }
            let digit = b.is_ascii_digit() || (b == b'-' && !in_num);
            if digit && !in_num {
                n += 1;
                (value, plain) = (0, b != b'-');
            }
            let was = in_num;
            in_num = digit || (in_num && matches!(b, b'.' | b'e' | b'E' | b'+' | b'-'));
            if in_num {
                if b.is_ascii_digit() {
                    value = value.saturating_mul(10).saturating_add(u64::from(b - b'0'));
                } else if was {
                    plain = false;
                }
            } else if was && plain {
                largest = largest.max(value);
            }
            in_str = b == b'"';
        }
        if in_num && plain {
            largest = largest.max(value);
        }
        (n, largest)
    }

    fn same<T: Serialize>(v: &T) {
        let json = serde_json::to_vec(v).unwrap();
        let c = IntCount::of(v);
        assert_eq!(
            (c.ints, c.largest),
            numbers_in(&json),
            "{}",
            String::from_utf8_lossy(&json)
        );
    }

    #[derive(serde::Serialize)]
    enum Msg {
        Unit,
        Token {
            a: Vec<(u64, i32)>,
            b: bool,
            c: Option<u8>,
            d: String,
            e: f64,
        },
        Pair(u128, i128),
        Keys(BTreeMap<u64, Vec<u64>>),
    }

    #[test]
    fn it_counts_what_serde_json_writes_as_numbers() {
        same(&Msg::Unit);
        same(&Msg::Token {
            a: vec![(3, -4), (12, 0)],
            b: true,
            c: None,
            d: "7\"9".into(),
            e: 5.5e2,
        });
        same(&Msg::Token {
            a: vec![],
            b: false,
            c: Some(200),
            d: String::new(),
            e: f64::NAN,
        });
        same(&Msg::Pair(u128::MAX, -1));
        same(&Msg::Pair(42, 7));
        same(&Msg::Keys(BTreeMap::from([
            (99, vec![1, 2]),
            (1000, vec![]),
        ])));
        same(&[u64::MAX, 0]);
        same(&(1.0f32, 'x', ()));
    }

    #[test]
    fn every_message_of_a_token_gme_run_counts_as_its_json() {
        use crate::mp::algo::token_gme::TgMsg;
        for m in [
            TgMsg::Request(1, 0),
            TgMsg::Release(3),
            TgMsg::Notify(vec![3, 7]),
            TgMsg::Restart(2, vec![0, 3]),
            TgMsg::Done(1, Some(2)),
            TgMsg::Done(1, None),
            TgMsg::Start(1, vec![vec![2], vec![4, 5]]),
            TgMsg::Leave(1, vec![vec![2]], 0),
            TgMsg::Resume(9),
            TgMsg::RequestAny(3, vec![0, 2]),
            TgMsg::Inst(2, Box::new(TgMsg::Request(5, 1))),
            TgMsg::Token(Box::new(crate::mp::algo::token_gme::Token {
                primary: true,
                ty: 2,
                session: 41,
                fulfilled: vec![3, 0, 17],
                old_no_of_tokens: 2,
                no_of_tokens_issued: 1,
                queue: Default::default(),
                total_issued: Some(80),
                epochs: Some(vec![true, false, false]),
            })),
        ] {
            same(&m);
        }
    }
}
