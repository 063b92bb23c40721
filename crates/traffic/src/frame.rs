//! The payload header every echo frame starts with.
//!
//! Layout (28 bytes, network byte order):
//!
//! ```text
//!  0      2  3  4          8          12                  20                  28
//!  | "FB" |v |fl| client   | size     | sequence          | send time (ns)    | filler…
//! ```
//!
//! `client` is 1-based, `size` is the whole frame including this header, `sequence`
//! starts at 1 and grows by one per cycle, `send time` is the sender's monotonic
//! clock (meaningful to the sender, or across roles sharing one clock).

use proto::MIN_FRAME;

pub const MAGIC: [u8; 2] = *b"FB";
pub const VERSION: u8 = 1;
pub const HEADER_LEN: usize = 28;
const _: () = assert!(HEADER_LEN == MIN_FRAME as usize);

#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum FrameError {
    #[error("frame of {0} bytes is shorter than the {HEADER_LEN}-byte header")]
    Truncated(usize),
    #[error("frame does not start with the fwbench magic")]
    BadMagic,
    #[error("frame header version {0} is not {VERSION}")]
    BadVersion(u8),
    #[error("frame header claims size {0}, below the header itself")]
    BadSize(u32),
}

/// Zero-copy view of a buffer holding a frame header.
#[derive(Debug, Clone, Copy)]
pub struct Packet<T: AsRef<[u8]>> {
    buf: T,
}

impl<T: AsRef<[u8]>> Packet<T> {
    /// Wrap without checks; accessors may panic on short buffers. Prefer `new_checked`.
    pub fn new_unchecked(buf: T) -> Self {
        Packet { buf }
    }

    /// Wrap after checking length, magic, version and the size field.
    pub fn new_checked(buf: T) -> Result<Self, FrameError> {
        let b = buf.as_ref();
        if b.len() < HEADER_LEN {
            return Err(FrameError::Truncated(b.len()));
        }
        let p = Packet { buf };
        if p.magic() != MAGIC {
            return Err(FrameError::BadMagic);
        }
        if p.version() != VERSION {
            return Err(FrameError::BadVersion(p.version()));
        }
        if (p.size() as usize) < HEADER_LEN {
            return Err(FrameError::BadSize(p.size()));
        }
        Ok(p)
    }

    fn field<const N: usize>(&self, at: usize) -> [u8; N] {
        let mut out = [0u8; N];
        out.copy_from_slice(&self.buf.as_ref()[at..at + N]);
        out
    }
    pub fn magic(&self) -> [u8; 2] {
        self.field(0)
    }
    pub fn version(&self) -> u8 {
        self.buf.as_ref()[2]
    }
    pub fn client(&self) -> u32 {
        u32::from_be_bytes(self.field(4))
    }
    pub fn size(&self) -> u32 {
        u32::from_be_bytes(self.field(8))
    }
    pub fn seq(&self) -> u64 {
        u64::from_be_bytes(self.field(12))
    }
    pub fn send_ns(&self) -> u64 {
        u64::from_be_bytes(self.field(20))
    }
}

/// Validated, owned view of a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Repr {
    pub client: u32,
    pub size: u32,
    pub seq: u64,
    pub send_ns: u64,
}

impl Repr {
    pub fn parse(buf: &[u8]) -> Result<Repr, FrameError> {
        let p = Packet::new_checked(buf)?;
        Ok(Repr {
            client: p.client(),
            size: p.size(),
            seq: p.seq(),
            send_ns: p.send_ns(),
        })
    }

    /// Write the header into the first `HEADER_LEN` bytes of `buf`.
    /// Panics if `buf` is shorter: callers size frames from `MIN_FRAME` up.
    pub fn emit(&self, buf: &mut [u8]) {
        let b = &mut buf[..HEADER_LEN];
        b[0..2].copy_from_slice(&MAGIC);
        b[2] = VERSION;
        b[3] = 0;
        b[4..8].copy_from_slice(&self.client.to_be_bytes());
        b[8..12].copy_from_slice(&self.size.to_be_bytes());
        b[12..20].copy_from_slice(&self.seq.to_be_bytes());
        b[20..28].copy_from_slice(&self.send_ns.to_be_bytes());
    }
}

/// Fill the body after the header with a pattern derived from the sequence number,
/// so that a corrupted or misdirected body is visible in a capture.
pub fn fill_body(buf: &mut [u8], seq: u64) {
    for (i, b) in buf.iter_mut().enumerate().skip(HEADER_LEN) {
        *b = (seq as u8).wrapping_add(i as u8);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const FIXTURE: [u8; 28] = [
        b'F', b'B', 1, 0, // magic, version, flags
        0, 0, 0, 7, // client 7
        0, 0, 0x04, 0x00, // size 1024
        0, 0, 0, 0, 0, 0, 0x01, 0x02, // seq 258
        0, 0, 0, 0, 0x3b, 0x9a, 0xca, 0x00, // 1 s
    ];

    #[test]
    fn parse_fixture() {
        let r = Repr::parse(&FIXTURE).unwrap();
        assert_eq!(
            r,
            Repr {
                client: 7,
                size: 1024,
                seq: 258,
                send_ns: 1_000_000_000
            }
        );
    }

    #[test]
    fn emit_matches_fixture() {
        let mut buf = [0xffu8; 28];
        Repr {
            client: 7,
            size: 1024,
            seq: 258,
            send_ns: 1_000_000_000,
        }
        .emit(&mut buf);
        assert_eq!(buf, FIXTURE);
    }

    #[test]
    fn checked_parse_refuses_garbage() {
        for n in 0..HEADER_LEN {
            assert_eq!(Repr::parse(&FIXTURE[..n]), Err(FrameError::Truncated(n)));
        }
        let mut b = FIXTURE;
        b[0] = b'X';
        assert_eq!(Repr::parse(&b), Err(FrameError::BadMagic));
        let mut b = FIXTURE;
        b[2] = 9;
        assert_eq!(Repr::parse(&b), Err(FrameError::BadVersion(9)));
        let mut b = FIXTURE;
        b[8..12].copy_from_slice(&27u32.to_be_bytes());
        assert_eq!(Repr::parse(&b), Err(FrameError::BadSize(27)));
        // every single-byte corruption either parses or errors, never panics
        for i in 0..HEADER_LEN {
            for v in [0u8, 0x7f, 0xff] {
                let mut b = FIXTURE;
                b[i] = v;
                let _ = Repr::parse(&b);
            }
        }
    }

    #[test]
    fn body_pattern_depends_on_seq() {
        let mut a = vec![0u8; 64];
        let mut b = vec![0u8; 64];
        fill_body(&mut a, 1);
        fill_body(&mut b, 2);
        assert_eq!(&a[..HEADER_LEN], &[0u8; HEADER_LEN][..]);
        assert_ne!(a, b);
    }
}
