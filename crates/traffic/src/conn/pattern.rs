//! Pattern bytes in bulk: one precomputed buffer that senders take slices of, and the
//! running check a receiver feeds a body through.
//!
//! Owns: the layout of the buffer and the verdict on a received body (wrong byte,
//! short, long). Must not: do I/O. Byte `i` of every body is [`proto::pattern_byte`]`(i)`.

use proto::{pattern_byte, PATTERN_PERIOD};
use std::fmt;
use std::sync::OnceLock;

/// Most bytes one slice holds: a multiple of the period (251 × 1024 = 257 024 bytes).
pub const CHUNK: usize = PATTERN_PERIOD * 1024;

/// The pattern laid out over `CHUNK + PERIOD` bytes, so that a slice of up to `CHUNK`
/// bytes can begin at any phase of the period.
pub struct Pattern {
    buf: Box<[u8]>,
}

/// The process-wide pattern buffer (built once, 257 KB).
pub fn pattern() -> &'static Pattern {
    static P: OnceLock<Pattern> = OnceLock::new();
    P.get_or_init(|| Pattern {
        buf: (0..(CHUNK + PATTERN_PERIOD) as u64)
            .map(pattern_byte)
            .collect(),
    })
}

impl Pattern {
    /// Body bytes `at .. at + min(len, CHUNK)`.
    pub fn slice(&self, at: u64, len: u64) -> &[u8] {
        let phase = (at % PATTERN_PERIOD as u64) as usize;
        let n = len.min(CHUNK as u64) as usize;
        &self.buf[phase..phase + n]
    }

    /// True if `data` are exactly the body bytes at offsets `at ..`.
    pub fn matches(&self, at: u64, data: &[u8]) -> bool {
        let mut off = at;
        for piece in data.chunks(CHUNK) {
            if piece != self.slice(off, piece.len() as u64) {
                return false;
            }
            off += piece.len() as u64;
        }
        true
    }
}

/// Why a received body is not the one asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BodyError {
    /// The first byte that differs from the pattern, by body offset.
    Mismatch { at: u64 },
    /// The stream ended early.
    Short { got: u64, expected: u64 },
    /// More bytes than expected arrived.
    Long { got: u64, expected: u64 },
}

impl BodyError {
    /// A message without numbers, so that results count each kind once.
    pub fn key(&self) -> &'static str {
        match self {
            BodyError::Mismatch { .. } => "corrupt body: a byte differs from the pattern",
            BodyError::Short { .. } => "corrupt body: end of stream before the full length",
            BodyError::Long { .. } => "corrupt body: more bytes than the expected length",
        }
    }
}

impl fmt::Display for BodyError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            BodyError::Mismatch { at } => write!(f, "body byte {at} differs from the pattern"),
            BodyError::Short { got, expected } => {
                write!(f, "body ended after {got} of {expected} bytes")
            }
            BodyError::Long { got, expected } => {
                write!(f, "body has {got} bytes, {expected} expected")
            }
        }
    }
}

/// Running check of one body: its length against `expected` always, its bytes against
/// the pattern when `verify`.
#[derive(Debug, Clone)]
pub struct BodyCheck {
    expected: u64,
    got: u64,
    verify: bool,
    mismatch: Option<u64>,
}

impl BodyCheck {
    pub fn new(expected: u64, verify: bool) -> Self {
        BodyCheck {
            expected,
            got: 0,
            verify,
            mismatch: None,
        }
    }

    /// The next bytes of the body, in order.
    pub fn feed(&mut self, data: &[u8]) {
        if self.verify && self.mismatch.is_none() && self.got < self.expected {
            // Bytes beyond the expected length are a length error, not a pattern one.
            let n = data.len().min((self.expected - self.got) as usize);
            let part = &data[..n];
            if !pattern().matches(self.got, part) {
                let first = part
                    .iter()
                    .zip(self.got..)
                    .position(|(&b, i)| b != pattern_byte(i))
                    .unwrap_or(0);
                self.mismatch = Some(self.got + first as u64);
            }
        }
        self.got += data.len() as u64;
    }

    /// Bytes fed so far.
    pub fn received(&self) -> u64 {
        self.got
    }

    /// The verdict once the stream has ended: a mismatch first, then the length.
    pub fn verdict(&self) -> Result<(), BodyError> {
        if let Some(at) = self.mismatch {
            return Err(BodyError::Mismatch { at });
        }
        let (got, expected) = (self.got, self.expected);
        match got.cmp(&expected) {
            std::cmp::Ordering::Less => Err(BodyError::Short { got, expected }),
            std::cmp::Ordering::Greater => Err(BodyError::Long { got, expected }),
            std::cmp::Ordering::Equal => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn body(range: std::ops::Range<u64>) -> Vec<u8> {
        range.map(pattern_byte).collect()
    }

    #[test]
    fn slices_start_at_any_phase() {
        let p = pattern();
        for at in [0u64, 1, 250, 251, 252, 1_000_003, (1 << 40) - 1] {
            let s = p.slice(at, 1000);
            assert_eq!(s, &body(at..at + 1000)[..], "at {at}");
        }
        assert_eq!(p.slice(7, u64::MAX).len(), CHUNK);
        assert_eq!(p.slice(7, 0).len(), 0);
    }

    #[test]
    fn matches_long_and_shifted_data() {
        let p = pattern();
        let b = body(100..100 + 3 * CHUNK as u64 + 17);
        assert!(p.matches(100, &b));
        assert!(!p.matches(101, &b), "a shifted stream must not match");
        assert!(!p.matches(99, &b));
        let mut bad = b.clone();
        bad[2 * CHUNK + 5] ^= 1;
        assert!(!p.matches(100, &bad));
    }

    #[test]
    fn a_correct_body_fed_in_odd_pieces_passes() {
        let b = body(0..10_000);
        let mut c = BodyCheck::new(10_000, true);
        for piece in b.chunks(977) {
            c.feed(piece);
        }
        assert_eq!(c.verdict(), Ok(()));
        assert_eq!(c.received(), 10_000);
    }

    #[test]
    fn shifted_short_long_and_flipped_bodies_fail() {
        // The verdict on a 1000-byte body that arrived as `pieces`.
        let verdict = |pieces: &[&[u8]]| {
            let mut c = BodyCheck::new(1000, true);
            pieces.iter().for_each(|p| c.feed(p));
            c.verdict()
        };
        // Shifted by one byte (a lost first byte).
        let at = |at| Err(BodyError::Mismatch { at });
        assert_eq!(verdict(&[&body(1..1001)]), at(0));
        let short = Err(BodyError::Short {
            got: 999,
            expected: 1000,
        });
        assert_eq!(verdict(&[&body(0..999)]), short);
        // One byte too many: the length, not the pattern, is wrong.
        let long = Err(BodyError::Long {
            got: 1001,
            expected: 1000,
        });
        assert_eq!(verdict(&[&body(0..1001)]), long);

        let mut b = body(0..1000);
        b[600] = b[600].wrapping_add(1);
        let flipped = verdict(&[&b[..500], &b[500..]]);
        assert_eq!(flipped, at(600));
        assert_eq!(
            flipped.unwrap_err().key(),
            "corrupt body: a byte differs from the pattern"
        );
    }

    #[test]
    fn without_verify_only_the_length_counts() {
        let mut c = BodyCheck::new(3, false);
        c.feed(b"xyz");
        assert_eq!(c.verdict(), Ok(()));
        let mut c = BodyCheck::new(0, false);
        c.feed(b"x");
        assert!(matches!(c.verdict(), Err(BodyError::Long { .. })));
    }
}
