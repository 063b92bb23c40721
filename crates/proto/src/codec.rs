//! Length-prefixed JSON frames with a hard size cap.
//!
//! Owns: framing (4-byte big-endian length, JSON body), the cap, decode errors, and
//! [`FrameReader`], the one loop that pulls frames out of a byte stream.
//! Must not: open, own or choose any I/O (the reader only reads the `Read` its caller
//! hands it; the decoder itself is sans-IO), or know which message types it carries
//! (it is generic over serde).

use serde::{de::DeserializeOwned, Serialize};
use std::io::Read;
use std::marker::PhantomData;

/// Largest frame body accepted or produced (4 MiB). A peer announcing more is broken
/// or hostile; the decoder refuses it before buffering anything.
pub const MAX_FRAME_LEN: usize = 4 << 20;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecError {
    #[error("control frame of {len} bytes exceeds the {max}-byte cap")]
    TooLarge { len: usize, max: usize },
    #[error("malformed control frame: {0}")]
    Malformed(String),
    #[error("control stream ended in the middle of a frame ({0} bytes pending)")]
    Truncated(usize),
}

/// Serialise one message into a complete frame (length prefix + JSON).
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, CodecError> {
    let body = serde_json::to_vec(msg).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if body.len() > MAX_FRAME_LEN {
        return Err(CodecError::TooLarge {
            len: body.len(),
            max: MAX_FRAME_LEN,
        });
    }
    let mut out = Vec::with_capacity(4 + body.len());
    out.extend_from_slice(&(body.len() as u32).to_be_bytes());
    out.extend_from_slice(&body);
    Ok(out)
}

/// Incremental decoder: push whatever bytes arrived, pull complete messages.
#[derive(Debug, Default)]
pub struct Decoder {
    buf: Vec<u8>,
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    pub fn push(&mut self, bytes: &[u8]) {
        self.buf.extend_from_slice(bytes);
    }

    /// Next complete message, `Ok(None)` if more bytes are needed.
    pub fn next_frame<T: DeserializeOwned>(&mut self) -> Result<Option<T>, CodecError> {
        if self.buf.len() < 4 {
            return Ok(None);
        }
        let len = u32::from_be_bytes([self.buf[0], self.buf[1], self.buf[2], self.buf[3]]) as usize;
        if len > MAX_FRAME_LEN {
            return Err(CodecError::TooLarge {
                len,
                max: MAX_FRAME_LEN,
            });
        }
        if self.buf.len() < 4 + len {
            return Ok(None);
        }
        let parsed = serde_json::from_slice(&self.buf[4..4 + len])
            .map_err(|e| CodecError::Malformed(e.to_string()));
        self.buf.drain(..4 + len);
        parsed.map(Some)
    }

    /// Call at end of stream: an error if a partial frame is left over.
    pub fn finish(&self) -> Result<(), CodecError> {
        if self.buf.is_empty() {
            Ok(())
        } else {
            Err(CodecError::Truncated(self.buf.len()))
        }
    }
}

/// Decoded frames from a byte stream: an iterator that ends at end of stream.
///
/// A frame that cannot be decoded is yielded as an error and ends the iteration (the
/// stream cannot be resynchronised); so does a partial frame at end of stream
/// ([`CodecError::Truncated`]). A read error counts as the end of the stream.
pub struct FrameReader<R, T> {
    r: R,
    dec: Decoder,
    buf: Box<[u8]>,
    done: bool,
    _frames: PhantomData<fn() -> T>,
}

impl<R: Read, T: DeserializeOwned> FrameReader<R, T> {
    pub fn new(r: R) -> Self {
        FrameReader {
            r,
            dec: Decoder::new(),
            buf: vec![0; 64 * 1024].into_boxed_slice(),
            done: false,
            _frames: PhantomData,
        }
    }
}

impl<R: Read, T: DeserializeOwned> Iterator for FrameReader<R, T> {
    type Item = Result<T, CodecError>;

    fn next(&mut self) -> Option<Self::Item> {
        while !self.done {
            match self.dec.next_frame::<T>() {
                Ok(Some(m)) => return Some(Ok(m)),
                Ok(None) => {}
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
            match self.r.read(&mut self.buf) {
                Ok(n) if n > 0 => self.dec.push(&self.buf[..n]),
                Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
                Ok(_) | Err(_) => {
                    self.done = true;
                    return self.dec.finish().err().map(Err);
                }
            }
        }
        None
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::{FromAgent, ToAgent};

    #[test]
    fn round_trip_byte_by_byte() {
        let frame = encode(&ToAgent::Hello { version: 7 }).unwrap();
        assert_eq!(&frame[..4], &(frame.len() as u32 - 4).to_be_bytes());
        let mut d = Decoder::new();
        for (i, b) in frame.iter().enumerate() {
            let got: Option<ToAgent> = d.next_frame().unwrap();
            assert!(got.is_none(), "complete after {i} bytes");
            d.push(&[*b]);
        }
        assert_eq!(
            d.next_frame::<ToAgent>().unwrap(),
            Some(ToAgent::Hello { version: 7 })
        );
        d.finish().unwrap();
    }

    #[test]
    fn two_frames_in_one_push() {
        let mut bytes = encode(&ToAgent::Start).unwrap();
        bytes.extend(encode(&ToAgent::Stop).unwrap());
        let mut d = Decoder::new();
        d.push(&bytes);
        assert_eq!(d.next_frame::<ToAgent>().unwrap(), Some(ToAgent::Start));
        assert_eq!(d.next_frame::<ToAgent>().unwrap(), Some(ToAgent::Stop));
        assert_eq!(d.next_frame::<ToAgent>().unwrap(), None);
    }

    #[test]
    fn oversize_length_refused_before_buffering() {
        let mut d = Decoder::new();
        d.push(&(MAX_FRAME_LEN as u32 + 1).to_be_bytes());
        assert!(matches!(
            d.next_frame::<ToAgent>(),
            Err(CodecError::TooLarge { .. })
        ));
    }

    #[test]
    fn garbage_body_is_malformed_not_panic() {
        let mut d = Decoder::new();
        d.push(&3u32.to_be_bytes());
        d.push(b"{x}");
        assert!(matches!(
            d.next_frame::<FromAgent>(),
            Err(CodecError::Malformed(_))
        ));
        // unknown message type
        let body = br#"{"type":"launch_missiles"}"#;
        d.push(&(body.len() as u32).to_be_bytes());
        d.push(body);
        assert!(matches!(
            d.next_frame::<FromAgent>(),
            Err(CodecError::Malformed(_))
        ));
    }

    #[test]
    fn truncated_stream_reported() {
        let frame = encode(&ToAgent::Start).unwrap();
        let mut d = Decoder::new();
        d.push(&frame[..frame.len() - 1]);
        assert_eq!(d.next_frame::<ToAgent>().unwrap(), None);
        assert_eq!(d.finish(), Err(CodecError::Truncated(frame.len() - 1)));
    }

    #[test]
    fn reader_yields_frames_then_ends() {
        let mut bytes = encode(&ToAgent::Start).unwrap();
        bytes.extend(encode(&ToAgent::Stop).unwrap());
        let got: Vec<_> = FrameReader::<_, ToAgent>::new(&bytes[..]).collect();
        assert_eq!(got, [Ok(ToAgent::Start), Ok(ToAgent::Stop)]);
        let none: Vec<_> = FrameReader::<_, ToAgent>::new(&[][..]).collect();
        assert!(none.is_empty());
    }

    #[test]
    fn reader_stops_at_a_bad_or_truncated_frame() {
        let mut bytes = encode(&ToAgent::Start).unwrap();
        bytes.extend(3u32.to_be_bytes());
        bytes.extend(b"{x}");
        bytes.extend(encode(&ToAgent::Stop).unwrap());
        let got: Vec<_> = FrameReader::<_, ToAgent>::new(&bytes[..]).collect();
        assert_eq!(got.len(), 2);
        assert!(matches!(got[1], Err(CodecError::Malformed(_))));

        let frame = encode(&ToAgent::Start).unwrap();
        let cut = &frame[..frame.len() - 1];
        let got: Vec<_> = FrameReader::<_, ToAgent>::new(cut).collect();
        assert_eq!(got, [Err(CodecError::Truncated(frame.len() - 1))]);
    }
}
