//! Packet-size mixes (IMIX): several Ethernet frame sizes in fixed proportions.
//!
//! Owns: the mix as the user gives it (`imix`, `csit-imix`, `64:7,576:4,1500:1`), its
//! text and JSON form, its arithmetic (mean frame bytes), the per-size counts a source
//! and a sink report, and the deterministic order the senders follow.
//! Must not: do I/O; it builds only on `param`.
//!
//! **Sizes are Ethernet frames**, FCS included, preamble and gap not (RFC 2544's frame
//! size, as `frame:64`): the IMIX definitions are given at layer 2. A mix is sent as UDP
//! datagrams whose payload makes each frame that long: 64 B frames carry 18 B of UDP
//! payload over IPv4 (18 = 64 − 18 Ethernet − 20 IPv4 − 8 UDP).
//!
//! * `imix`, the simple IMIX: 64, 576 and 1500 B frames, 7:4:1 (mean 354.33 B).
//! * `csit-imix`, FD.io CSIT's IMIX (`IMIX_v4_1`): 64, 570 and 1518 B frames, 7:4:1
//!   (mean 353.83 B), as the CSIT report's "Packet sizes" section and its TRex IMIX
//!   profiles define it (CSIT, csit.fd.io, methodology: "packet sizes").
//! * a user's distribution `FRAME:WEIGHT,…`: up to [`MAX_MIX_SIZES`] sizes, weights
//!   1 .. [`MAX_MIX_WEIGHT`].
//!
//! **Order.** Each sender thread repeats one *period* of Σweights packets in which size
//! `i` appears exactly `weight_i` times, in an order shuffled once from a fixed seed
//! ([`MixOrder`]): reruns send the same sequence, and any whole number of periods has
//! the mix's proportions exactly (a run's counts differ from them by less than one
//! period per sender thread).

use crate::param::ParseSpecError;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use std::fmt;
use std::str::FromStr;

/// Most sizes in one mix.
pub const MAX_MIX_SIZES: usize = 8;
/// Largest weight of one size (a period is at most 8 × 1000 packets).
pub const MAX_MIX_WEIGHT: u16 = 1000;
/// Seed of the order of every mix's period (fixed: reruns are comparable).
pub const MIX_SEED: u64 = 0x1A1F_2026;

/// Which mix, by name.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum MixName {
    /// `imix`: 64/576/1500 B frames, 7:4:1.
    Simple,
    /// `csit-imix`: 64/570/1518 B frames, 7:4:1.
    Csit,
    /// A user's `FRAME:WEIGHT,…`.
    Given,
}

/// Ethernet frame sizes (FCS included) and their weights; `Copy` (a fixed array) so a
/// [`crate::PacketSize`] holding one stays `Copy`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SizeMix {
    name: MixName,
    len: u8,
    frames: [u16; MAX_MIX_SIZES],
    weights: [u16; MAX_MIX_SIZES],
}

impl SizeMix {
    fn of(name: MixName, parts: &[(u16, u16)]) -> SizeMix {
        let mut m = SizeMix {
            name,
            len: parts.len() as u8,
            frames: [0; MAX_MIX_SIZES],
            weights: [0; MAX_MIX_SIZES],
        };
        for (i, (f, w)) in parts.iter().enumerate() {
            m.frames[i] = *f;
            m.weights[i] = *w;
        }
        m
    }

    /// The simple IMIX: 64, 576, 1500 B frames, 7:4:1.
    pub fn imix() -> SizeMix {
        SizeMix::of(MixName::Simple, &[(64, 7), (576, 4), (1500, 1)])
    }

    /// FD.io CSIT's IMIX: 64, 570, 1518 B frames, 7:4:1.
    pub fn csit_imix() -> SizeMix {
        SizeMix::of(MixName::Csit, &[(64, 7), (570, 4), (1518, 1)])
    }

    /// (frame bytes, weight) of each size, in the order given.
    pub fn parts(&self) -> impl Iterator<Item = (u32, u32)> + '_ {
        (0..self.len as usize).map(|i| (u32::from(self.frames[i]), u32::from(self.weights[i])))
    }

    /// Packets in one period (Σ weights).
    pub fn period(&self) -> u32 {
        self.parts().map(|(_, w)| w).sum()
    }

    /// Mean of `bytes(frame)` over the mix's packets (weighted).
    pub fn mean(&self, bytes: impl Fn(u32) -> u32) -> f64 {
        let sum: f64 = self.parts().map(|(f, w)| bytes(f) as f64 * w as f64).sum();
        sum / f64::from(self.period().max(1))
    }

    /// Largest frame of the mix.
    pub fn largest(&self) -> u32 {
        self.parts().map(|(f, _)| f).max().unwrap_or(0)
    }

    /// Smallest frame of the mix.
    pub fn smallest(&self) -> u32 {
        self.parts().map(|(f, _)| f).min().unwrap_or(0)
    }
}

impl FromStr for SizeMix {
    type Err = ParseSpecError;
    /// `imix`, `csit-imix`, or `FRAME:WEIGHT,…` (frames in bytes, FCS included).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        match t.as_str() {
            "imix" => return Ok(SizeMix::imix()),
            "csit-imix" | "csit_imix" => return Ok(SizeMix::csit_imix()),
            _ => {}
        }
        let mut parts = Vec::new();
        for item in t.split(',') {
            let bad = || {
                ParseSpecError(format!(
                    "size mix '{s}': '{}' is not FRAME:WEIGHT (an Ethernet frame size in bytes \
                     and a whole weight, e.g. 64:7,576:4,1500:1; or imix, csit-imix)",
                    item.trim()
                ))
            };
            let (f, w) = item.split_once(':').ok_or_else(bad)?;
            let f: u16 = f.trim().trim_end_matches('b').parse().map_err(|_| bad())?;
            let w: u16 = w.trim().parse().map_err(|_| bad())?;
            if w == 0 || w > MAX_MIX_WEIGHT {
                return Err(ParseSpecError(format!(
                    "size mix '{s}': weight {w} of {f} B is not 1 .. {MAX_MIX_WEIGHT}"
                )));
            }
            if parts.iter().any(|(g, _)| *g == f) {
                return Err(ParseSpecError(format!(
                    "size mix '{s}': frame size {f} is given twice"
                )));
            }
            parts.push((f, w));
        }
        if parts.len() > MAX_MIX_SIZES {
            return Err(ParseSpecError(format!(
                "size mix '{s}' has {} sizes: at most {MAX_MIX_SIZES}",
                parts.len()
            )));
        }
        Ok(SizeMix::of(MixName::Given, &parts))
    }
}

impl fmt::Display for SizeMix {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.name {
            MixName::Simple => f.write_str("imix"),
            MixName::Csit => f.write_str("csit-imix"),
            MixName::Given => {
                for (i, (fr, w)) in self.parts().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{fr}:{w}")?;
                }
                Ok(())
            }
        }
    }
}

/// Stored and sent as its text (`"imix"`, `"64:7,576:4,1500:1"`).
impl Serialize for SizeMix {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SizeMix {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let t = String::deserialize(d)?;
        t.parse()
            .map_err(|e: ParseSpecError| serde::de::Error::custom(e.0))
    }
}

/// One size of a mix as a sender is told it: UDP payload bytes and weight.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct MixPart {
    pub payload: u32,
    pub weight: u32,
}

/// Packets of one UDP payload size (a source's sent or a sink's received histogram).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct SizeCount {
    pub payload: u32,
    pub packets: u64,
}

/// Add `n` packets of `payload` bytes to a histogram kept as a short list (a mix has
/// at most eight sizes; a linear scan beats a map at that length).
pub fn count_size(h: &mut Vec<SizeCount>, payload: u32, n: u64) {
    match h.iter_mut().find(|c| c.payload == payload) {
        Some(c) => c.packets += n,
        None => {
            h.push(SizeCount {
                payload,
                packets: n,
            });
            h.sort_by_key(|c| c.payload);
        }
    }
}

/// The sizes of a period in sending order: index `i` of `parts` appears `weight_i`
/// times, shuffled (Fisher–Yates) by splitmix64 from `seed`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MixOrder {
    payloads: Vec<u32>,
}

impl MixOrder {
    pub fn new(parts: &[MixPart], seed: u64) -> MixOrder {
        let mut payloads: Vec<u32> = parts
            .iter()
            .flat_map(|p| std::iter::repeat_n(p.payload, p.weight as usize))
            .collect();
        let mut x = seed;
        let mut next = || {
            x = x.wrapping_add(0x9E37_79B9_7F4A_7C15);
            let mut z = x;
            z = (z ^ (z >> 30)).wrapping_mul(0xBF58_476D_1CE4_E5B9);
            z = (z ^ (z >> 27)).wrapping_mul(0x94D0_49BB_1331_11EB);
            z ^ (z >> 31)
        };
        for i in (1..payloads.len()).rev() {
            let j = (next() % (i as u64 + 1)) as usize;
            payloads.swap(i, j);
        }
        MixOrder { payloads }
    }

    /// UDP payload of the `n`-th packet (0-based) of a sender thread.
    pub fn at(&self, n: u64) -> u32 {
        self.payloads[(n % self.payloads.len() as u64) as usize]
    }

    pub fn period(&self) -> usize {
        self.payloads.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mixes_parse_print_and_serialize_as_text() {
        for t in ["imix", "csit-imix", "64:7,576:4,1500:1", "128:1"] {
            let m: SizeMix = t.parse().unwrap();
            assert_eq!(m.to_string(), t);
            let j = serde_json::to_string(&m).unwrap();
            assert_eq!(j, format!("\"{t}\""));
            assert_eq!(serde_json::from_str::<SizeMix>(&j).unwrap(), m);
        }
        let m = SizeMix::imix();
        assert_eq!(m.period(), 12);
        assert!((m.mean(|f| f) - 4252.0 / 12.0).abs() < 1e-9);
        assert!((SizeMix::csit_imix().mean(|f| f) - 353.833).abs() < 1e-3);
        assert_eq!((m.smallest(), m.largest()), (64, 1500));
        for (bad, says) in [
            ("64:0", "weight 0"),
            ("64:7,64:1", "given twice"),
            ("64", "not FRAME:WEIGHT"),
            ("64:x", "not FRAME:WEIGHT"),
            ("1:1,2:1,3:1,4:1,5:1,6:1,7:1,8:1,9:1", "at most 8"),
        ] {
            let e = bad.parse::<SizeMix>().unwrap_err().0;
            assert!(e.contains(says), "{bad}: {e}");
        }
    }

    #[test]
    fn the_order_is_seeded_and_each_period_holds_the_weights_exactly() {
        let parts = [
            MixPart {
                payload: 18,
                weight: 7,
            },
            MixPart {
                payload: 530,
                weight: 4,
            },
            MixPart {
                payload: 1454,
                weight: 1,
            },
        ];
        let a = MixOrder::new(&parts, MIX_SEED);
        assert_eq!(a, MixOrder::new(&parts, MIX_SEED));
        assert_ne!(a, MixOrder::new(&parts, MIX_SEED + 1));
        let mut h = Vec::new();
        for n in 0..120 {
            count_size(&mut h, a.at(n), 1);
        }
        let counts: Vec<u64> = h.iter().map(|c| c.packets).collect();
        assert_eq!(counts, [70, 40, 10]);
        // Not sent in runs of one size.
        let first: Vec<u32> = (0..12).map(|n| a.at(n)).collect();
        assert_ne!(first[..7], [18; 7]);
    }
}
