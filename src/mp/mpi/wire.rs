//! The MPI runtime's wire format: the tags (the runtime's own below [`FIRST_KIND_TAG`], one
//! per message kind above), and an algorithm message as a 16-byte header and JSON.

use serde::Serialize;

use crate::mp::Pid;

/// A clock-synchronisation ping (to rank 0).
pub const TAG_PING: i32 = 1;
/// Rank 0's answer to a ping: its clock.
pub const TAG_PONG: i32 = 2;
/// A rank's processes made their requests (to rank 0).
pub const TAG_DONE: i32 = 3;
/// Start no more requests (from rank 0).
pub const TAG_QUIESCE: i32 = 4;
/// A wave of counts: send yours (from rank 0).
pub const TAG_PROBE: i32 = 5;
/// A rank's counts for a wave (to rank 0).
pub const TAG_COUNTS: i32 = 6;
/// Stop (from rank 0).
pub const TAG_STOP: i32 = 7;
/// A request waited past the watchdog (to rank 0).
pub const TAG_STUCK: i32 = 8;
/// A rank's report at the end of a run (to rank 0).
pub const TAG_REPORT: i32 = 9;

/// The smallest tag of an algorithm message; tags below are the runtime's own.
pub const FIRST_KIND_TAG: i32 = 64;

/// The MPI tag of a message kind: a stable hash of its name (FNV-1a) folded into
/// [`FIRST_KIND_TAG`], `FIRST_KIND_TAG + 32000`), within the 32767 every MPI allows.
pub fn kind_tag(kind: &str) -> i32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in kind.bytes() {
        h ^= b as u32;
        h = h.wrapping_mul(0x0100_0193);
    }
    FIRST_KIND_TAG + (h % 32_000) as i32
}

/// Header bytes before the message: sender, receiver (u32 LE), drawn delay in ms (f64 LE).
pub const HEADER: usize = 16;

/// Writes one message (header and JSON) into `buf`, replacing its contents.
pub fn encode<M: Serialize>(buf: &mut Vec<u8>, from: Pid, to: Pid, delay_ms: f64, msg: &M) {
    buf.clear();
    buf.extend_from_slice(&(from as u32).to_le_bytes());
    buf.extend_from_slice(&(to as u32).to_le_bytes());
    buf.extend_from_slice(&delay_ms.to_le_bytes());
    serde_json::to_writer(&mut *buf, msg).expect("a message serializes");
}

/// Reads what [`encode`] wrote: sender, receiver, delay in ms, message.
pub fn decode<M: serde::de::DeserializeOwned>(bytes: &[u8]) -> anyhow::Result<(Pid, Pid, f64, M)> {
    anyhow::ensure!(
        bytes.len() >= HEADER,
        "a message of {} bytes is shorter than its header",
        bytes.len()
    );
    let u32_at = |i: usize| u32::from_le_bytes(bytes[i..i + 4].try_into().expect("4 bytes"));
    let delay = f64::from_le_bytes(bytes[8..16].try_into().expect("8 bytes"));
    let msg = serde_json::from_slice(&bytes[HEADER..])?;
    Ok((u32_at(0) as Pid, u32_at(4) as Pid, delay, msg))
}

/// A control message's words (little-endian u64s).
pub fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().expect("8 bytes")))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mp::algo::ra1::Ra1Msg;
    use crate::mp::Message;

    #[test]
    fn messages_round_trip_through_the_wire_format() {
        let mut buf = Vec::new();
        let msg = Ra1Msg::Request(7, 3);
        encode(&mut buf, 2, 9, 0.25, &msg);
        let (from, to, delay, back): (Pid, Pid, f64, Ra1Msg) = decode(&buf).unwrap();
        assert_eq!((from, to, delay), (2, 9, 0.25));
        assert_eq!(back.kind(), msg.kind());
        assert_eq!(format!("{back:?}"), format!("{msg:?}"));
        assert!(decode::<Ra1Msg>(&buf[..10]).is_err());
    }

    #[test]
    fn kind_tags_are_stable_distinct_and_in_range() {
        let kinds = [
            "DONE",
            "GRANT",
            "INVITE",
            "PREEMPT",
            "RELEASE",
            "RELINQUISH",
            "REPLY",
            "REQUEST",
            "REQUEST_BY_TRIGGER",
            "TOKEN",
            "TRIGGER",
        ];
        let tags: Vec<i32> = kinds.iter().map(|k| kind_tag(k)).collect();
        for (i, t) in tags.iter().enumerate() {
            assert!((FIRST_KIND_TAG..FIRST_KIND_TAG + 32_000).contains(t));
            assert!(!tags[..i].contains(t), "{} collides", kinds[i]);
        }
        assert_eq!(kind_tag("TOKEN"), kind_tag("TOKEN"));
    }
}
