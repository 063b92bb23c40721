//! Frame validation at a receiving measurement point (MP2 on the server, MP4 on
//! the client): client number, size and sequence (gaps, duplicates, reordering).

use crate::frame::{FrameError, Repr};
use proto::Validation;

/// What a received frame turned out to be.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// Next in sequence (possibly after a gap); the frame is good.
    InOrder,
    /// Older than the newest seen and not seen before.
    Reordered,
    /// Seen before.
    Duplicate,
    /// Wrong client, wrong size or unreadable header.
    Invalid,
}

/// Per-connection validator. Remembers the last 64 sequence numbers below the newest
/// to tell duplicates from reordered frames.
#[derive(Debug, Clone)]
pub struct Validator {
    expected_client: Option<u32>,
    max_client: u32,
    highest: u64,
    /// bit i set: frame `highest - 1 - i` was seen.
    window: u64,
    pub counts: Validation,
}

impl Validator {
    /// `expected_client`: known client number, or `None` to learn it from the first
    /// valid frame (a server accepting a stream). Client numbers are `1..=max_client`.
    pub fn new(expected_client: Option<u32>, max_client: u32) -> Self {
        Validator {
            expected_client,
            max_client,
            highest: 0,
            window: 0,
            counts: Validation::default(),
        }
    }

    pub fn client(&self) -> Option<u32> {
        self.expected_client
    }

    /// Judge a received frame: `header` is the parse result, `received_len` the bytes
    /// that actually arrived for it, `expected_size` what the receiver expects (the
    /// client knows what it sent; a server only checks consistency with the header).
    pub fn check(
        &mut self,
        header: Result<Repr, FrameError>,
        received_len: usize,
        expected_size: Option<u32>,
    ) -> Verdict {
        let h = match header {
            Ok(h) => h,
            Err(_) => {
                self.counts.malformed += 1;
                return Verdict::Invalid;
            }
        };
        let client_ok = h.client >= 1
            && h.client <= self.max_client
            && self.expected_client.is_none_or(|c| c == h.client);
        if !client_ok {
            self.counts.wrong_client += 1;
            return Verdict::Invalid;
        }
        if h.size as usize != received_len || expected_size.is_some_and(|e| e != h.size) {
            self.counts.wrong_size += 1;
            return Verdict::Invalid;
        }
        self.expected_client = Some(h.client);
        self.observe_seq(h.seq)
    }

    fn observe_seq(&mut self, seq: u64) -> Verdict {
        if seq > self.highest {
            let missing = seq - self.highest - 1;
            self.counts.gaps += missing;
            // shift the window: the old highest becomes bit (seq - old_highest - 1)
            let shift = seq - self.highest;
            self.window = if self.highest == 0 {
                0
            } else if shift >= 64 {
                if shift == 64 {
                    1 << 63
                } else {
                    0
                }
            } else {
                (self.window << shift) | (1 << (shift - 1))
            };
            self.highest = seq;
            return Verdict::InOrder;
        }
        if seq == self.highest {
            self.counts.duplicates += 1;
            return Verdict::Duplicate;
        }
        let back = self.highest - 1 - seq;
        if back < 64 && self.window & (1 << back) != 0 {
            self.counts.duplicates += 1;
            return Verdict::Duplicate;
        }
        if back < 64 {
            self.window |= 1 << back;
        }
        // It was counted as a gap when the newer frame arrived; it is late, not missing.
        self.counts.gaps = self.counts.gaps.saturating_sub(1);
        self.counts.reordered += 1;
        Verdict::Reordered
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(client: u32, size: u32, seq: u64) -> Result<Repr, FrameError> {
        Ok(Repr {
            client,
            size,
            seq,
            send_ns: 0,
        })
    }

    #[test]
    fn clean_sequence_has_no_errors() {
        let mut v = Validator::new(Some(3), 5);
        for s in 1..=1000 {
            assert_eq!(v.check(frame(3, 64, s), 64, Some(64)), Verdict::InOrder);
        }
        assert_eq!(v.counts, Validation::default());
    }

    #[test]
    fn each_error_kind_counted() {
        let mut v = Validator::new(None, 5);
        assert_eq!(v.check(frame(2, 64, 1), 64, None), Verdict::InOrder);
        assert_eq!(v.client(), Some(2));
        assert_eq!(v.check(frame(3, 64, 2), 64, None), Verdict::Invalid); // wrong client
        assert_eq!(v.check(frame(9, 64, 2), 64, None), Verdict::Invalid); // out of range
        assert_eq!(v.check(frame(2, 64, 2), 60, None), Verdict::Invalid); // short
        assert_eq!(v.check(frame(2, 64, 2), 64, Some(128)), Verdict::Invalid); // not what was sent
        assert_eq!(
            v.check(Err(FrameError::BadMagic), 64, None),
            Verdict::Invalid
        );
        assert_eq!(v.check(frame(2, 64, 2), 64, None), Verdict::InOrder);
        assert_eq!(v.check(frame(2, 64, 2), 64, None), Verdict::Duplicate);
        assert_eq!(v.check(frame(2, 64, 6), 64, None), Verdict::InOrder); // 3,4,5 missing
        assert_eq!(v.check(frame(2, 64, 4), 64, None), Verdict::Reordered); // 4 late
        assert_eq!(v.check(frame(2, 64, 4), 64, None), Verdict::Duplicate);
        assert_eq!(v.check(frame(2, 64, 1), 64, None), Verdict::Duplicate);
        assert_eq!(
            v.counts,
            Validation {
                malformed: 1,
                wrong_client: 2,
                wrong_size: 2,
                gaps: 2,
                duplicates: 3,
                reordered: 1,
            }
        );
    }

    #[test]
    fn client_zero_is_wrong() {
        let mut v = Validator::new(None, 5);
        assert_eq!(v.check(frame(0, 64, 1), 64, None), Verdict::Invalid);
        assert_eq!(v.counts.wrong_client, 1);
    }

    #[test]
    fn window_survives_large_jumps() {
        let mut v = Validator::new(Some(1), 1);
        v.check(frame(1, 64, 1), 64, None);
        v.check(frame(1, 64, 65), 64, None); // 63 missing, frame 1 is 64 back
        assert_eq!(v.counts.gaps, 63);
        assert_eq!(v.check(frame(1, 64, 1), 64, None), Verdict::Duplicate);
        v.check(frame(1, 64, 1000), 64, None);
        assert_eq!(v.check(frame(1, 64, 65), 64, None), Verdict::Reordered);
    }
}
