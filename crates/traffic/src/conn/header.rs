//! The 16-byte header of a session or held connection.
//!
//! ```text
//!  0        4                8                              16
//!  | magic  | request length | response length              |
//!  | FWBS / | u32 BE, header | u64 BE                       |
//!  | FWBH   | included, ≥ 16 |                              |
//! ```
//!
//! Owns: parsing and emitting the header. Must not: do I/O.

use proto::{HOLD_MAGIC, SESSION_HEADER, SESSION_MAGIC};
use std::fmt;

/// Length of the header in bytes.
pub const HEADER_LEN: usize = SESSION_HEADER as usize;

/// What the client asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// `FWBS`: request, response, server closes first.
    Session,
    /// `FWBH`: the server sends nothing and waits for the client's FIN.
    Hold,
}

/// A validated header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionHeader {
    pub kind: Kind,
    /// Bytes the client sends, this header included (≥ 16).
    pub request: u32,
    /// Pattern bytes the server returns.
    pub response: u64,
}

/// Why 16 bytes are not a header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum HeaderError {
    /// Fewer than 16 bytes.
    Truncated(usize),
    /// Neither `FWBS` nor `FWBH`.
    BadMagic([u8; 4]),
    /// A request length below the header's own length.
    ShortRequest(u32),
}

impl fmt::Display for HeaderError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            HeaderError::Truncated(n) => write!(f, "header truncated at {n} of 16 bytes"),
            HeaderError::BadMagic(m) => write!(f, "unknown magic {m:02x?}"),
            HeaderError::ShortRequest(n) => {
                write!(f, "request length {n} is below the 16-byte header")
            }
        }
    }
}

impl SessionHeader {
    /// A session: `request` bytes up (header included), `response` bytes down.
    pub fn session(request: u32, response: u64) -> Self {
        SessionHeader {
            kind: Kind::Session,
            request,
            response,
        }
    }

    /// A held connection: just the header, nothing back.
    pub fn hold() -> Self {
        SessionHeader {
            kind: Kind::Hold,
            request: SESSION_HEADER,
            response: 0,
        }
    }

    /// Parse the first 16 bytes of `b`.
    pub fn parse(b: &[u8]) -> Result<Self, HeaderError> {
        let Some(h) = b.get(..HEADER_LEN) else {
            return Err(HeaderError::Truncated(b.len()));
        };
        let magic = [h[0], h[1], h[2], h[3]];
        let kind = match &magic {
            m if m == SESSION_MAGIC => Kind::Session,
            m if m == HOLD_MAGIC => Kind::Hold,
            _ => return Err(HeaderError::BadMagic(magic)),
        };
        let request = u32::from_be_bytes([h[4], h[5], h[6], h[7]]);
        let mut resp = [0u8; 8];
        resp.copy_from_slice(&h[8..16]);
        let response = u64::from_be_bytes(resp);
        if request < SESSION_HEADER {
            return Err(HeaderError::ShortRequest(request));
        }
        Ok(SessionHeader {
            kind,
            request,
            response,
        })
    }

    pub fn emit(&self) -> [u8; HEADER_LEN] {
        let mut b = [0u8; HEADER_LEN];
        b[..4].copy_from_slice(match self.kind {
            Kind::Session => SESSION_MAGIC,
            Kind::Hold => HOLD_MAGIC,
        });
        b[4..8].copy_from_slice(&self.request.to_be_bytes());
        b[8..].copy_from_slice(&self.response.to_be_bytes());
        b
    }

    /// Request bytes after the header.
    pub fn body_len(&self) -> u64 {
        u64::from(self.request.saturating_sub(SESSION_HEADER))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_a_byte_fixture() {
        let fixture = [
            b'F', b'W', b'B', b'S', 0, 0, 0x01, 0x00, 0, 0, 0, 0, 0, 0x19, 0xf0, 0xa0,
        ];
        let h = SessionHeader::parse(&fixture).unwrap();
        assert_eq!(h, SessionHeader::session(256, 1_700_000));
        assert_eq!(h.body_len(), 240);
        assert_eq!(h.emit(), fixture);
    }

    #[test]
    fn hold_round_trips() {
        let h = SessionHeader::hold();
        let b = h.emit();
        assert_eq!(&b[..4], b"FWBH");
        assert_eq!(SessionHeader::parse(&b), Ok(h));
        assert_eq!(h.body_len(), 0);
    }

    #[test]
    fn rejects_bad_magic_short_requests_and_truncation() {
        let mut b = SessionHeader::session(16, 0).emit();
        b[3] = b'X';
        assert_eq!(
            SessionHeader::parse(&b),
            Err(HeaderError::BadMagic(*b"FWBX"))
        );
        let b = SessionHeader::session(15, 0).emit();
        assert_eq!(SessionHeader::parse(&b), Err(HeaderError::ShortRequest(15)));
        assert_eq!(
            SessionHeader::parse(&b[..10]),
            Err(HeaderError::Truncated(10))
        );
    }
}
