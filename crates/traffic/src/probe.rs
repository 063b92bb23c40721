//! The header of flood, flow and ping packets: as much of it as the payload holds.
//!
//! ```text
//!  0      2      4             8                     16
//!  | magic| flow |  sequence   | intended send time  |
//!  | FB 50| u16  |  u32 BE     | u64 BE, CLOCK_REALTIME ns
//! ```
//! Payloads of 16 bytes or more carry all of it; 8..16 bytes carry magic, flow and
//! sequence (loss, duplicates and reordering, but no delay); below 8 bytes nothing —
//! such packets are only counted. The rest of the payload is zeros.

pub const MAGIC: [u8; 2] = [0xFB, 0x50];
pub const SEQ_LEN: usize = 8;
pub const FULL_LEN: usize = 16;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Probe {
    pub flow: u16,
    pub seq: u32,
    pub tx_ns: Option<u64>,
}

impl Probe {
    /// Write into the start of `buf`, as much as fits.
    pub fn emit(&self, buf: &mut [u8]) {
        if buf.len() >= SEQ_LEN {
            buf[0..2].copy_from_slice(&MAGIC);
            buf[2..4].copy_from_slice(&self.flow.to_be_bytes());
            buf[4..8].copy_from_slice(&self.seq.to_be_bytes());
        }
        if buf.len() >= FULL_LEN {
            buf[8..16].copy_from_slice(&self.tx_ns.unwrap_or(0).to_be_bytes());
        }
    }

    /// `None` if the payload is too short or not ours.
    pub fn parse(buf: &[u8]) -> Option<Probe> {
        if buf.len() < SEQ_LEN || buf[0..2] != MAGIC {
            return None;
        }
        let tx_ns = (buf.len() >= FULL_LEN)
            .then(|| u64::from_be_bytes(buf[8..16].try_into().expect("8 bytes")));
        Some(Probe {
            flow: u16::from_be_bytes([buf[2], buf[3]]),
            seq: u32::from_be_bytes(buf[4..8].try_into().expect("4 bytes")),
            tx_ns,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip_at_every_length() {
        let p = Probe {
            flow: 513,
            seq: 0xDEAD_BEEF,
            tx_ns: Some(123_456_789),
        };
        for len in 0..40 {
            let mut b = vec![0u8; len];
            p.emit(&mut b);
            let got = Probe::parse(&b);
            match len {
                0..=7 => assert_eq!(got, None, "len {len}"),
                8..=15 => assert_eq!(got, Some(Probe { tx_ns: None, ..p }), "len {len}"),
                _ => assert_eq!(got, Some(p), "len {len}"),
            }
        }
        assert_eq!(Probe::parse(&[0u8; 16]), None, "no magic");
    }
}
