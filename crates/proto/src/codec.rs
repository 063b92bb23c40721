//! Length-prefixed JSON frames with a hard size cap; messages of any size in chunks.
//!
//! A message is one JSON document sent as one or more frames. Each frame is a 4-byte
//! big-endian header and a body of at most [`MAX_FRAME_LEN`] bytes: the header's top
//! bit ([`MORE`]) says "more frames of this message follow", its other 31 bits are
//! the body's length. The receiver joins the bodies and parses the whole, so a
//! message (e.g. the results of a long trial with many samples) is bounded only by
//! [`MAX_MESSAGE_LEN`], while no single frame (no single read) exceeds 4 MiB.
//!
//! Owns: framing (header, chunks, JSON body), the caps, decode errors, and
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

/// Header bit: more frames of this message follow.
pub const MORE: u32 = 1 << 31;

/// Largest message (all its frames) accepted or produced: 1 GiB. The results of a
/// trial are stored as one SQLite value, and SQLite refuses values over 10^9 bytes;
/// below that, only memory and disk limit a trial (5-Hz samples of 64 CPUs reach
/// it after about 3 hours).
pub const MAX_MESSAGE_LEN: usize = 1 << 30;

#[derive(Debug, thiserror::Error, PartialEq)]
pub enum CodecError {
    #[error("control frame of {len} bytes exceeds the {max}-byte cap")]
    TooLarge { len: usize, max: usize },
    #[error("malformed control frame: {0}")]
    Malformed(String),
    #[error("control stream ended in the middle of a frame ({0} bytes pending)")]
    Truncated(usize),
}

/// Serialise one message into its frames (headers + JSON chunks of at most
/// [`MAX_FRAME_LEN`] bytes).
pub fn encode<T: Serialize>(msg: &T) -> Result<Vec<u8>, CodecError> {
    let body = serde_json::to_vec(msg).map_err(|e| CodecError::Malformed(e.to_string()))?;
    if body.len() > MAX_MESSAGE_LEN {
        return Err(CodecError::TooLarge {
            len: body.len(),
            max: MAX_MESSAGE_LEN,
        });
    }
    let chunks = body.len().div_ceil(MAX_FRAME_LEN).max(1);
    let mut out = Vec::with_capacity(4 * chunks + body.len());
    let mut rest = &body[..];
    loop {
        let n = rest.len().min(MAX_FRAME_LEN);
        let more = if n < rest.len() { MORE } else { 0 };
        out.extend_from_slice(&(n as u32 | more).to_be_bytes());
        out.extend_from_slice(&rest[..n]);
        rest = &rest[n..];
        if more == 0 {
            return Ok(out);
        }
    }
}

/// Incremental decoder: push whatever bytes arrived, pull complete messages.
#[derive(Debug)]
pub struct Decoder {
    /// Largest message accepted ([`MAX_MESSAGE_LEN`] unless set lower).
    max_message: usize,
    buf: Vec<u8>,
    /// Where the unread bytes of `buf` start (consumed bytes are dropped lazily).
    start: usize,
    /// The bodies of a message's frames so far (frames with [`MORE`] set).
    partial: Vec<u8>,
}

impl Default for Decoder {
    fn default() -> Self {
        Decoder {
            max_message: MAX_MESSAGE_LEN,
            buf: Vec::new(),
            start: 0,
            partial: Vec::new(),
        }
    }
}

impl Decoder {
    pub fn new() -> Self {
        Self::default()
    }

    /// A decoder that refuses messages over `max` bytes (at most [`MAX_MESSAGE_LEN`]).
    pub fn with_max_message(max: usize) -> Self {
        Decoder {
            max_message: max.min(MAX_MESSAGE_LEN),
            ..Self::default()
        }
    }

    pub fn push(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start >= self.buf.len() / 2 {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Next complete message, `Ok(None)` if more bytes are needed.
    pub fn next_frame<T: DeserializeOwned>(&mut self) -> Result<Option<T>, CodecError> {
        loop {
            let b = &self.buf[self.start..];
            if b.len() < 4 {
                return Ok(None);
            }
            let header = u32::from_be_bytes([b[0], b[1], b[2], b[3]]);
            let len = (header & !MORE) as usize;
            if len > MAX_FRAME_LEN {
                return Err(CodecError::TooLarge {
                    len,
                    max: MAX_FRAME_LEN,
                });
            }
            if self.partial.len() + len > self.max_message {
                return Err(CodecError::TooLarge {
                    len: self.partial.len() + len,
                    max: self.max_message,
                });
            }
            if b.len() < 4 + len {
                return Ok(None);
            }
            let body = &b[4..4 + len];
            self.start += 4 + len;
            if header & MORE != 0 {
                self.partial.extend_from_slice(body);
                continue;
            }
            let parsed = if self.partial.is_empty() {
                serde_json::from_slice(body)
            } else {
                self.partial.extend_from_slice(body);
                let r = serde_json::from_slice(&self.partial);
                self.partial = Vec::new();
                r
            };
            return parsed
                .map(Some)
                .map_err(|e| CodecError::Malformed(e.to_string()));
        }
    }

    /// Call at end of stream: an error if a partial frame or message is left over.
    pub fn finish(&self) -> Result<(), CodecError> {
        let pending = self.buf.len() - self.start + self.partial.len();
        if pending == 0 {
            Ok(())
        } else {
            Err(CodecError::Truncated(pending))
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
        assert_eq!(frame[0] & 0x80, 0, "one frame: no MORE bit");
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

    /// A message far over one frame's cap (over 2 × 4 MiB of samples) goes out in chunks
    /// of at most 4 MiB and arrives intact, also when read in odd-sized pieces.
    #[test]
    fn messages_over_the_frame_cap_are_chunked_and_arrive_intact() {
        use crate::{MetricSample, RoleResults};
        let samples: Vec<MetricSample> = (0..200_000)
            .map(|i| MetricSample {
                // Binary fractions: exact through JSON, so equality is meaningful.
                t_s: i as f64 * 0.25,
                metric: format!("cpu{}.softirq", i % 64),
                value: (i % 1000) as f64 / 8.0,
            })
            .collect();
        let msg = FromAgent::Results {
            results: RoleResults::EchoServer(crate::EchoServerResults { clients: vec![] }),
            samples,
        };
        let bytes = encode(&msg).unwrap();
        assert!(bytes.len() > 2 * MAX_FRAME_LEN, "{}", bytes.len());
        // Walk the frames: all but the last carry MORE; none exceeds the cap.
        let mut at = 0;
        let mut frames = 0;
        loop {
            let h = u32::from_be_bytes(bytes[at..at + 4].try_into().unwrap());
            let len = (h & !MORE) as usize;
            assert!(len <= MAX_FRAME_LEN);
            at += 4 + len;
            frames += 1;
            if h & MORE == 0 {
                break;
            }
        }
        assert_eq!(at, bytes.len());
        assert!(frames >= 3, "{frames}");
        let got: Vec<_> = FrameReader::<_, FromAgent>::new(&bytes[..]).collect();
        assert!(got == [Ok(msg.clone())], "big message changed on the way");
        // Odd pieces, and a second message right behind the big one.
        let mut d = Decoder::new();
        let mut stream = bytes.clone();
        stream.extend(encode(&FromAgent::Done).unwrap());
        let mut out = Vec::new();
        for piece in stream.chunks(999_983) {
            d.push(piece);
            while let Some(m) = d.next_frame::<FromAgent>().unwrap() {
                out.push(m);
            }
        }
        d.finish().unwrap();
        assert!(out == [msg, FromAgent::Done], "messages changed on the way");
        // Cut inside the chunks: truncated, not a message.
        let got: Vec<_> = FrameReader::<_, FromAgent>::new(&bytes[..bytes.len() / 2]).collect();
        assert!(matches!(got[..], [Err(CodecError::Truncated(_))]));
    }

    #[test]
    fn a_message_over_the_message_cap_is_refused() {
        // The same check as at 1 GiB, with a 10-MiB cap to spare the test's memory.
        let max = 10 << 20;
        let mut d = Decoder::with_max_message(max);
        let chunk = vec![b' '; MAX_FRAME_LEN];
        let mut refused = 0;
        for i in 1..=4 {
            d.push(&(MAX_FRAME_LEN as u32 | MORE).to_be_bytes());
            d.push(&chunk);
            if let Err(e) = d.next_frame::<FromAgent>() {
                assert!(
                    matches!(e, CodecError::TooLarge { max: m, .. } if m == max),
                    "{e}"
                );
                refused = i;
                break;
            }
        }
        assert_eq!(refused, 3, "the third 4-MiB chunk passes 10 MiB");
    }
}
