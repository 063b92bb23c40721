//! Packet-rate workloads: UDP flood and paced flows (seeds 001, 002), ping (seed 003).
//!
//! Owns: packet sizes and rates (parsing, printing, wire arithmetic) and the role
//! specs and results of the UDP source, UDP sink, ping and reflector.
//! Must not: import the role enums or messages (`role`, `msg`) that carry these types;
//! it builds only on `param` and `measure`.

use crate::measure::{Counter, IfCounters, RttSummary};
use crate::param::{Family, ParseSpecError};
use serde::{Deserialize, Serialize};
use std::fmt;
use std::net::IpAddr;
use std::str::FromStr;

/// Ethernet II header (14) plus frame check sequence (4): the L2 bytes RFC 2544
/// frame sizes include on top of the IP packet.
pub const ETH_OVERHEAD: u32 = 18;
pub const UDP_HEADER: u32 = 8;
/// Largest IP packet the testbed's veth links carry without fragmentation (MTU).
pub const LINK_MTU: u32 = 1500;
/// Largest UDP payload of one datagram (IPv4: 65535 − 20 − 8).
pub const MAX_UDP_DATAGRAM_PAYLOAD: u32 = 65_507;

pub fn ip_header(family: Family) -> u32 {
    match family {
        Family::V4 => 20,
        Family::V6 => 40,
    }
}

/// Size of every packet of a packet-rate workload, as the user gave it.
///
/// * `Payload(n)`: UDP payload bytes — what iperf3 `-l` and the seeds' "128-byte UDP
///   packets" mean. Written `128` or `payload:128`.
/// * `Frame(n)`: Ethernet frame bytes including the 4-byte FCS, excluding preamble
///   and inter-frame gap — RFC 2544's frame sizes (64, 128, 256, 512, 1024, 1280,
///   1518). Written `frame:64` (or `64f`).
/// * `Mix(m)`: Ethernet frames of several sizes in fixed proportions (IMIX; see
///   [`crate::mix`]). Written `imix`, `csit-imix` or `64:7,576:4,1500:1`; stored as
///   `{"mix": "imix"}`. Where one size is asked of a mix ([`PacketSize::payload`],
///   [`PacketSize::frame`]) it answers its largest (buffers are sized by it); rates
///   and bit rates use the mean ([`PacketSize::mean_rate_bytes`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PacketSize {
    Payload(u32),
    Frame(u32),
    Mix(crate::mix::SizeMix),
}

impl PacketSize {
    /// UDP payload bytes for `family`, or why this size cannot be sent unfragmented.
    pub fn payload(&self, family: Family) -> Result<u32, ParseSpecError> {
        self.payload_with(family, false)
    }

    /// UDP payload bytes; with `fragment`, datagrams above the MTU are allowed (the
    /// kernel fragments them) up to the largest UDP payload.
    pub fn payload_with(&self, family: Family, fragment: bool) -> Result<u32, ParseSpecError> {
        let hdr = ETH_OVERHEAD + ip_header(family) + UDP_HEADER;
        let payload = match *self {
            PacketSize::Payload(n) => n,
            PacketSize::Mix(m) => {
                let mut largest = 0;
                for (f, _) in m.parts() {
                    let p = PacketSize::Frame(f)
                        .payload_with(family, fragment)
                        .map_err(|e| ParseSpecError(format!("size mix {m}: {}", e.0)))?;
                    largest = largest.max(p);
                }
                return Ok(largest);
            }
            PacketSize::Frame(f) => {
                if f < hdr {
                    return Err(ParseSpecError(format!(
                        "frame size {f} is below the {hdr} bytes of Ethernet, IPv{family} and UDP headers"
                    )));
                }
                f - hdr
            }
        };
        let ip = payload + UDP_HEADER + ip_header(family);
        if fragment {
            if payload > MAX_UDP_DATAGRAM_PAYLOAD {
                return Err(ParseSpecError(format!(
                    "{self} is above the largest UDP payload ({MAX_UDP_DATAGRAM_PAYLOAD} bytes)"
                )));
            }
            return Ok(payload);
        }
        if ip > LINK_MTU {
            return Err(ParseSpecError(format!(
                "{self} makes a {ip}-byte IPv{family} packet, above the {LINK_MTU}-byte MTU \
                 (largest unfragmented UDP payload {}, frame {}; --fragment allows IP fragments)",
                LINK_MTU - UDP_HEADER - ip_header(family),
                LINK_MTU + ETH_OVERHEAD
            )));
        }
        Ok(payload)
    }

    /// Ethernet frame bytes (with FCS) of a packet with this size.
    pub fn frame(&self, family: Family) -> Result<u32, ParseSpecError> {
        Ok(self.payload(family)? + ETH_OVERHEAD + ip_header(family) + UDP_HEADER)
    }

    /// Ethernet bytes (FCS included) of all frames a datagram with `payload` bytes
    /// needs: one frame, or IP fragments of at most the MTU each.
    pub fn wire_bytes(payload: u32, family: Family) -> u32 {
        let datagram = payload + UDP_HEADER;
        let hdr = ip_header(family);
        match PacketSize::frames(payload, family) {
            1 => datagram + hdr + ETH_OVERHEAD,
            n => {
                let frag_hdr = if family == Family::V6 { 8 } else { 0 };
                datagram + n * (hdr + frag_hdr + ETH_OVERHEAD)
            }
        }
    }

    /// Frames a datagram with `payload` bytes needs: 1, or its IP fragments of at most
    /// the MTU each (what the interfaces count).
    pub fn frames(payload: u32, family: Family) -> u32 {
        let datagram = payload + UDP_HEADER;
        let hdr = ip_header(family);
        if datagram + hdr <= LINK_MTU {
            return 1;
        }
        // Fragment data is a multiple of 8 bytes; IPv6 adds an 8-byte fragment header.
        let per = match family {
            Family::V4 => (LINK_MTU - 20) / 8 * 8,
            Family::V6 => (LINK_MTU - 48) / 8 * 8,
        };
        datagram.div_ceil(per)
    }

    /// Bytes a bit rate given for this size counts per packet: the payload when the
    /// size is a payload (as iperf3 counts), the frame when it is a frame (RFC 2544).
    /// For a mix, its mean frame rounded (see [`PacketSize::mean_rate_bytes`]).
    pub fn rate_bytes(&self, family: Family) -> Result<u32, ParseSpecError> {
        match self {
            PacketSize::Payload(_) => self.payload(family),
            PacketSize::Frame(_) => self.frame(family),
            PacketSize::Mix(_) => Ok(self.mean_rate_bytes(family)?.round() as u32),
        }
    }

    /// Bytes a bit rate counts per packet on average: `rate_bytes`, or for a mix the
    /// mean of its frames weighted by their shares (a mix's sizes are frames).
    pub fn mean_rate_bytes(&self, family: Family) -> Result<f64, ParseSpecError> {
        match self {
            PacketSize::Payload(_) | PacketSize::Frame(_) => Ok(self.rate_bytes(family)? as f64),
            PacketSize::Mix(m) => {
                self.payload(family)?;
                Ok(m.mean(|f| f))
            }
        }
    }

    /// The mix's parts as a sender is told them (UDP payload bytes and weights); empty
    /// for one size.
    pub fn mix_parts(&self, family: Family) -> Result<Vec<crate::mix::MixPart>, ParseSpecError> {
        match self {
            PacketSize::Payload(_) | PacketSize::Frame(_) => Ok(Vec::new()),
            PacketSize::Mix(m) => m
                .parts()
                .map(|(f, w)| {
                    Ok(crate::mix::MixPart {
                        payload: PacketSize::Frame(f).payload(family)?,
                        weight: w,
                    })
                })
                .collect(),
        }
    }
}

impl FromStr for PacketSize {
    type Err = ParseSpecError;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t = s.trim().to_ascii_lowercase();
        let fixed = t.starts_with("frame:") || t.starts_with("payload:");
        if !fixed && (t.contains(':') || t.contains(',') || t.contains("imix")) {
            return Ok(PacketSize::Mix(t.parse()?));
        }
        let (frame, num) = if let Some(n) = t.strip_prefix("frame:") {
            (true, n)
        } else if let Some(n) = t.strip_prefix("payload:") {
            (false, n)
        } else if let Some(n) = t.strip_suffix('f') {
            (true, n)
        } else {
            (false, t.as_str())
        };
        let n: u32 = num.trim().trim_end_matches('b').parse().map_err(|_| {
            ParseSpecError(format!(
                "size '{s}' is not a number of bytes (UDP payload like 128, or an Ethernet frame like frame:64)"
            ))
        })?;
        if n > 65_535 {
            return Err(ParseSpecError(format!("size '{s}' is above 65535 bytes")));
        }
        Ok(if frame {
            PacketSize::Frame(n)
        } else {
            PacketSize::Payload(n)
        })
    }
}

impl fmt::Display for PacketSize {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            PacketSize::Payload(n) => write!(f, "payload:{n}"),
            PacketSize::Frame(n) => write!(f, "frame:{n}"),
            PacketSize::Mix(m) => write!(f, "{m}"),
        }
    }
}

/// Offered load of a packet-rate workload.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rate {
    /// As fast as the sender can.
    Max,
    /// Bits per second of the packet size as given (see `PacketSize::rate_bytes`).
    Bps(f64),
    Pps(f64),
}

impl Rate {
    /// Packets per second for packets of `bytes` bytes; `None` for `Max`.
    pub fn pps(&self, bytes: u32) -> Option<f64> {
        self.pps_mean(bytes as f64)
    }

    /// Packets per second for packets of `bytes` bytes on average (a size mix).
    pub fn pps_mean(&self, bytes: f64) -> Option<f64> {
        match *self {
            Rate::Max => None,
            Rate::Pps(p) => Some(p),
            Rate::Bps(b) => Some(b / (bytes.max(1.0) * 8.0)),
        }
    }
}

/// Largest rate accepted: far above what any software path here reaches.
pub const MAX_PPS: f64 = 100e6;

impl FromStr for Rate {
    type Err = ParseSpecError;
    /// As iperf3 users write them: `max`; bits per second by default — `15M` `15Mbit`
    /// `15Mb/s` `15Mbps` `2.5G` `800k` (decimal prefixes); bytes per second with a
    /// capital `B` — `10MB/s` `10MBps` `10MB` (= 80 Mbit/s); packets per second —
    /// `100kpps` `1.2Mpps` `5000pps`. Byte rates become bit rates (the canonical value).
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        let t: String = s.trim().chars().filter(|c| *c != ' ').collect();
        let lower = t.to_ascii_lowercase();
        if lower == "max" {
            return Ok(Rate::Max);
        }
        if t.parse::<f64>() == Ok(0.0) {
            return Err(ParseSpecError(format!(
                "rate '{s}' is zero: give a rate, or max for as fast as possible"
            )));
        }
        let bad = || {
            ParseSpecError(format!(
                "rate '{s}' is not a rate: give bits/s like 15M, 800k, 1.5G (or 15Mbit, 15Mb/s), \
                 bytes/s like 10MB/s (= 80 Mbit/s), packets/s like 100kpps, or max"
            ))
        };
        // (number with prefix, unit): the unit decides bits, bytes or packets.
        enum Unit {
            Bits,
            Bytes,
            Packets,
        }
        let (body, unit) = if let Some(b) = lower.strip_suffix("pps") {
            (b.to_string(), Unit::Packets)
        } else if let Some(b) = ["Bytes/s", "Byte/s", "B/s", "Bps", "B"]
            .iter()
            .find_map(|u| t.strip_suffix(u))
        {
            // A capital B is a byte (iperf3 -f B/K/M/G); `bps` in lower case is bits.
            (b.to_ascii_lowercase(), Unit::Bytes)
        } else {
            let mut b = lower.clone();
            for suffix in ["bits/s", "bit/s", "bps", "b/s", "bits", "bit", "b"] {
                if let Some(x) = b.strip_suffix(suffix) {
                    b = x.to_string();
                    break;
                }
            }
            (b, Unit::Bits)
        };
        let (num, mult) = match body.chars().last() {
            Some('k') => (&body[..body.len() - 1], 1e3),
            Some('m') => (&body[..body.len() - 1], 1e6),
            Some('g') => (&body[..body.len() - 1], 1e9),
            _ => (body.as_str(), 1.0),
        };
        let v: f64 = num.parse().map_err(|_| bad())?;
        if !v.is_finite() || v <= 0.0 {
            return Err(ParseSpecError(format!(
                "rate '{s}' must be greater than zero"
            )));
        }
        let v = v * mult;
        match unit {
            Unit::Packets if v > MAX_PPS => Err(ParseSpecError(format!(
                "rate '{s}' is above {MAX_PPS:.0} packets/s"
            ))),
            Unit::Packets => Ok(Rate::Pps(v)),
            Unit::Bits | Unit::Bytes => {
                let bits = if matches!(unit, Unit::Bytes) {
                    v * 8.0
                } else {
                    v
                };
                if bits > 1e12 {
                    return Err(ParseSpecError(format!("rate '{s}' is above 1 Tbit/s")));
                }
                Ok(Rate::Bps(bits))
            }
        }
    }
}

impl fmt::Display for Rate {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Rate::Max => f.write_str("max"),
            Rate::Bps(b) if b.fract() != 0.0 && b >= 1e3 => write!(f, "{b:.0}"),
            Rate::Pps(p) if p.fract() != 0.0 && p >= 1e3 => write!(f, "{p:.0}pps"),
            Rate::Bps(b) => write!(f, "{}", si(b, "")),
            Rate::Pps(p) => write!(f, "{}pps", si(p, "")),
        }
    }
}

/// `15000000` → `15M`, `1500` → `1.5k`; exact (shortest float text).
fn si(v: f64, unit: &str) -> String {
    for (m, p) in [(1e9, "G"), (1e6, "M"), (1e3, "k")] {
        if v >= m {
            return format!("{}{p}{unit}", v / m);
        }
    }
    format!("{v}{unit}")
}

/// Raw-frame path of a UDP source: frames built by the sender and written to the
/// client's interface with AF_PACKET (as trafgen does), bypassing the UDP socket layer.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct RawPath {
    pub ifname: String,
    /// Next hop's MAC (the gateway's, or the server's on a direct testbed).
    pub dst_mac: String,
    /// Write the frames with AF_XDP (`--sender xdp`, the kernel picks zero-copy or
    /// copy mode) instead of AF_PACKET; absent (the wire as before): AF_PACKET.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub xdp: bool,
}

/// The sending side of a flood or paced flow.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UdpSourceSpec {
    /// Flow `i` (0-based, of this source's `flows`) sends from `sources[i % len]`;
    /// its number in the trial is `first_flow + i` ([`UdpSourceSpec::flow_number`]):
    /// port `src_port + number`, stamped with that number.
    pub sources: Vec<IpAddr>,
    pub src_port: u16,
    pub dst: IpAddr,
    /// Destinations the flows are spread over: flow number `n` goes to
    /// `dsts[n % len]`; empty: every flow to `dst`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub dsts: Vec<IpAddr>,
    pub dst_port: u16,
    pub flows: u32,
    /// The trial's number of this source's first flow: a trial whose client role is
    /// spread over several hosts gives each host a block of the flows (0: the first).
    #[serde(default, skip_serializing_if = "is_zero32")]
    pub first_flow: u32,
    /// UDP payload bytes of every packet (of a mix: its largest).
    pub payload: u32,
    /// A size mix (absent: every packet has `payload` bytes): each sender thread sends
    /// the sizes in the order [`crate::MixOrder`] gives for `mix_seed`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub mix: Vec<crate::mix::MixPart>,
    #[serde(default, skip_serializing_if = "is_zero")]
    pub mix_seed: u64,
    /// Total offered packets/s over all flows and threads; `None` = as fast as possible.
    pub pps: Option<f64>,
    pub threads: u32,
    /// Packets per sendmmsg(2) call.
    pub batch: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub raw: Option<RawPath>,
    /// New flows (conntrack workloads): every flow sends exactly one datagram, from a
    /// socket opened for it, so each packet is a new 5-tuple; flow `i` then sends from
    /// `sources[i % len]`, port `src_port + i / len`, and its datagram is stamped flow 0,
    /// sequence `i` (the sink sees one sequence: give it `flows: 1`). The source ends
    /// when all flows have sent.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub new_flows: bool,
}

impl UdpSourceSpec {
    /// The trial's number of this source's flow `i` (stamped, and its port offset).
    pub fn flow_number(&self, i: u32) -> u32 {
        self.first_flow + i
    }
}

/// The receiving side: `threads` sockets sharing the port (SO_REUSEPORT), recvmmsg(2).
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct UdpSinkSpec {
    pub listen: IpAddr,
    pub port: u16,
    pub threads: u32,
    pub flows: u32,
    /// Largest UDP payload expected (receive buffers are sized for it).
    #[serde(default = "default_sink_payload")]
    pub payload: u32,
    /// Keep per-flow time bins of this width, ns (0: none; gateway events).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub bin_ns: u64,
    /// Receive with AF_XDP on this interface (`--sink xdp`; one socket per thread,
    /// queues 0..threads) instead of UDP sockets; absent: sockets.
    pub xdp: Option<String>,
    /// Count packets per source address (the NAT models' check: the server sees the
    /// translated source); sockets only.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub sources: bool,
    /// Return the one-way delays as histograms per group of flows, group `g` being the
    /// flows numbered `owd_groups[g]` up to the next group's first (the flows of one
    /// source host, whose clock the controller corrects them by); empty: none.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owd_groups: Vec<u32>,
    /// The sink runs in the gateway's namespace (topology input). It leaves that
    /// namespace's receive steering (RPS) to the gateway's agent (a pinned gateway's:
    /// to its CPUs, where the rules then run); and it times each datagram when it
    /// reads it, not by the kernel's receive stamp, which is taken on arrival, before
    /// the gateway's rules. Absent (false): the sink steers its namespace's receive
    /// processing to its own CPUs and takes the kernel's stamps.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_gateway: bool,
}

/// The one-way delays of a group of flows (see [`UdpSinkSpec::owd_groups`]) as a
/// histogram: (delay ns, packets) per recorded bucket, ascending.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct OwdGroup {
    pub first_flow: u32,
    pub buckets: Vec<(u64, u64)>,
}

/// Packets the sink received from one source address.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SourceRx {
    pub addr: IpAddr,
    pub packets: u64,
}

/// Most distinct source addresses a sink counts (the rest are summed as `other`).
pub const MAX_SOURCES: usize = 64;

/// Add `n` packets from `addr` to the per-source counts (at most [`MAX_SOURCES`]
/// addresses; the rest in `other`).
pub fn count_source(sources: &mut Vec<SourceRx>, other: &mut u64, addr: IpAddr, n: u64) {
    if let Some(s) = sources.iter_mut().find(|s| s.addr == addr) {
        s.packets += n;
    } else if sources.len() < MAX_SOURCES {
        sources.push(SourceRx { addr, packets: n });
    } else {
        *other += n;
    }
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

fn is_zero32(n: &u32) -> bool {
    *n == 0
}

fn default_sink_payload() -> u32 {
    LINK_MTU
}

/// Per-flow figures at the sink.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct FlowRx {
    /// 0-based flow number from the packet header.
    pub flow: u32,
    /// Distinct packets received (duplicates not counted).
    pub received: u64,
    pub bytes: u64,
    pub duplicates: u64,
    /// Arrived after a packet with a higher sequence number.
    pub reordered: u64,
    /// One-way delay: receive time minus *intended* send time (open loop, so sender
    /// lateness counts). Needs a clock shared by both ends (true on the local testbed).
    pub owd: RttSummary,
    /// RFC 3550 interarrival jitter estimate at the end of the trial, ns.
    pub jitter_ns: f64,
    /// Fine time bins (when the sink was asked for them).
    pub bins: Option<Box<crate::event::FlowBins>>,
}

/// Kernel's own counters in the sink's namespace over the trial (/proc/net/snmp{,6}).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct UdpKernelCounters {
    pub in_datagrams: u64,
    pub no_ports: u64,
    pub in_errors: u64,
    pub rcvbuf_errors: u64,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UdpSinkResults {
    pub received: Counter,
    /// Packets without a readable fwbench header (payloads under 8 bytes carry none).
    pub unstamped: u64,
    pub flows: Vec<FlowRx>,
    /// Merged over all flows.
    pub owd: RttSummary,
    /// Time from the first to the last packet received, ns (0 if fewer than two).
    pub active_ns: u64,
    pub kernel: UdpKernelCounters,
    /// The sink namespace's interfaces over the trial (filled in by the agent).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub interfaces: Vec<IfCounters>,
    /// Packets received per UDP payload size (stamped or not, duplicates included:
    /// every datagram the sink took), ascending.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sizes: Vec<crate::mix::SizeCount>,
    /// Packets per source address (when the spec asked for `sources`), at most
    /// [`MAX_SOURCES`] addresses, most packets first.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sources: Vec<SourceRx>,
    /// Packets from sources past the first [`MAX_SOURCES`].
    #[serde(default, skip_serializing_if = "is_zero")]
    pub other_sources: u64,
    /// The AF_XDP sink's sockets (absent: a socket sink).
    pub xdp: Option<Box<XdpSockets>>,
    /// The one-way delays per group of flows, when the spec asked for groups.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub owd_groups: Vec<OwdGroup>,
}

/// How an AF_XDP sender or sink ran, read back from its sockets after bind.
#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct XdpSockets {
    pub ifname: String,
    /// Queues used, one socket and thread each.
    pub queues: u32,
    /// `zero-copy` or `copy`, as the kernel reports it (`XDP_OPTIONS`).
    pub mode: String,
    /// Bound with `XDP_USE_NEED_WAKEUP`.
    pub need_wakeup: bool,
    /// The sink's XDP program: `native` or `generic` (absent for a sender).
    pub attach: Option<String>,
    /// Sink: frames the kernel dropped before the sockets, all queues, as its
    /// `XDP_STATISTICS` define them: `rx_ring_full` (the RX ring was full) plus
    /// `rx_dropped` (every other drop, those for want of a fill-ring buffer among them;
    /// `rx_fill_ring_empty_descs` counts those same events again and is not added).
    pub kernel_drops: Option<u64>,
    /// Sender: `sendto` kicks the kernel cut short (copy mode sends a budget per call)
    /// or found the device busy, each retried: not refused sends, nothing lost.
    pub kicks_again: Option<u64>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct UdpSourceResults {
    /// Packets (and UDP payload bytes) the kernel accepted.
    pub sent: Counter,
    /// Per flow, 0-based.
    pub sent_per_flow: Vec<u64>,
    /// Packets the pacer scheduled up to the stop (equals `sent` unless the sender fell behind).
    pub scheduled: u64,
    /// Time spent sending, ns: from the start until the last send returned (a batch
    /// under way at the stop is counted with its time).
    pub elapsed_ns: u64,
    /// Largest lag of an actual send behind its intended time, ns (paced only).
    pub max_lag_ns: u64,
    /// Sends refused by the kernel (ENOBUFS and the like), retried.
    pub send_errors: u64,
    /// Packets sent per UDP payload size, ascending (a size mix only).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub sent_sizes: Vec<crate::mix::SizeCount>,
    /// The AF_XDP sender's sockets (absent: a socket sender).
    pub xdp: Option<Box<XdpSockets>>,
}

/// UDP echo with nanosecond timing (seed 003's UDP round trips): one probe at a time.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PingSpec {
    pub source: IpAddr,
    pub server: IpAddr,
    pub port: u16,
    /// UDP payload bytes (8 and 1000 in seed 003); at least 8 (the sequence number).
    pub payload: u32,
    /// Stop after this many probes; `None`: until stopped.
    pub count: Option<u64>,
    /// Gap between probe sends, ns (0: next probe as soon as the reply arrives).
    pub interval_ns: u64,
    pub timeout_ms: u32,
    /// Gateway events: record the transactions in fine time bins (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub events: Option<crate::event::StreamEventsSpec>,
}

#[serde_with::skip_serializing_none]
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct PingResults {
    pub sent: u64,
    pub received: u64,
    /// Replies not received within the timeout.
    pub lost: u64,
    /// Replies with a wrong sequence number or size (late replies of lost probes).
    pub invalid: u64,
    pub rtt: RttSummary,
    pub elapsed_ns: u64,
    /// True once `count` probes are done.
    pub finished: bool,
    /// Gateway events: the transactions in fine time bins (when asked for).
    pub events: Option<Box<crate::event::TxnStreams>>,
}

/// The UDP reflector a ping talks to: echoes every datagram back unchanged.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ReflectorSpec {
    pub listen: IpAddr,
    pub port: u16,
}

#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
pub struct ReflectorResults {
    pub echoed: Counter,
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sizes_payload_and_frame() {
        let p: PacketSize = "128".parse().unwrap();
        assert_eq!(p, PacketSize::Payload(128));
        assert_eq!(p.frame(Family::V4).unwrap(), 128 + 46);
        let f: PacketSize = "frame:64".parse().unwrap();
        assert_eq!(f, PacketSize::Frame(64));
        assert_eq!(f.payload(Family::V4).unwrap(), 18);
        assert_eq!("64f".parse::<PacketSize>().unwrap(), f);
        let e = f.payload(Family::V6).unwrap_err().0;
        assert!(e.contains("below the 66 bytes"), "{e}");
        assert_eq!(
            "frame:1518"
                .parse::<PacketSize>()
                .unwrap()
                .payload(Family::V4),
            Ok(1472)
        );
        let e = "1473"
            .parse::<PacketSize>()
            .unwrap()
            .payload(Family::V4)
            .unwrap_err()
            .0;
        assert!(e.contains("above the 1500-byte MTU"), "{e}");
        assert!("1453"
            .parse::<PacketSize>()
            .unwrap()
            .payload(Family::V6)
            .is_err());
        assert_eq!(p.to_string().parse::<PacketSize>().unwrap(), p);
        assert_eq!(f.to_string().parse::<PacketSize>().unwrap(), f);
        for bad in ["", "x", "-1", "frame:", "70000"] {
            assert!(bad.parse::<PacketSize>().is_err(), "{bad}");
        }
    }

    #[test]
    fn fragments_on_the_wire() {
        let big: PacketSize = "8000".parse().unwrap();
        assert!(big.payload(Family::V4).is_err());
        assert_eq!(big.payload_with(Family::V4, true), Ok(8000));
        assert!("70000".parse::<PacketSize>().is_err());
        // 8008-byte datagram: 6 fragments of ≤ 1480 data bytes, 20 + 18 each.
        assert_eq!(PacketSize::wire_bytes(8000, Family::V4), 8008 + 6 * 38);
        assert_eq!(PacketSize::wire_bytes(18, Family::V4), 64);
        // IPv6: ≤ 1448 data bytes per fragment, 40 + 8 + 18 each.
        assert_eq!(PacketSize::wire_bytes(8000, Family::V6), 8008 + 6 * 66);
        assert_eq!(PacketSize::wire_bytes(1452, Family::V6), 1460 + 40 + 18);
        assert_eq!(PacketSize::frames(8000, Family::V4), 6);
        assert_eq!(PacketSize::frames(8000, Family::V6), 6);
        assert_eq!(PacketSize::frames(18, Family::V4), 1);
        // The largest datagram: 65 515 bytes in 45 IPv4 fragments.
        assert_eq!(PacketSize::frames(65507, Family::V4), 45);
    }

    #[test]
    fn rates_with_units() {
        assert_eq!("15M".parse::<Rate>().unwrap(), Rate::Bps(15e6));
        assert_eq!("15Mbit".parse::<Rate>().unwrap(), Rate::Bps(15e6));
        assert_eq!("15 Mb/s".parse::<Rate>().unwrap(), Rate::Bps(15e6));
        assert_eq!("2.5G".parse::<Rate>().unwrap(), Rate::Bps(2.5e9));
        assert_eq!("100kpps".parse::<Rate>().unwrap(), Rate::Pps(1e5));
        assert_eq!("1.2Mpps".parse::<Rate>().unwrap(), Rate::Pps(1.2e6));
        assert_eq!("max".parse::<Rate>().unwrap(), Rate::Max);
        assert_eq!(Rate::Bps(15e6).to_string(), "15M");
        assert_eq!(Rate::Pps(1.5e3).to_string(), "1.5kpps");
        for r in ["15M", "100kpps", "max", "1.5G", "800"] {
            let v: Rate = r.parse().unwrap();
            assert_eq!(v.to_string().parse::<Rate>().unwrap(), v, "{r}");
        }
        // 15 Mb/s of 128-byte payloads is 14 648 packets/s.
        let pps = Rate::Bps(15e6).pps(128).unwrap();
        assert!((pps - 14_648.437_5).abs() < 1e-6);
        // 0 never means max (it did: `flood -r 0` flooded, `--max-rate 0` lifted the cap).
        for bad in [
            "", "fast", "15X", "-1M", "0pps", "1e9Mpps", "nanM", "0", "0.0", "0M", "MB/s", "-1MB/s",
        ] {
            assert!(bad.parse::<Rate>().is_err(), "{bad}");
        }
    }

    /// iperf3's conventions: bits by default, a capital B for bytes (8 bits), decimal
    /// prefixes; the canonical value is bits/s, so equal rates compare equal.
    #[test]
    fn byte_rates_are_eight_bits_each() {
        let r = |t: &str| t.parse::<Rate>().unwrap_or_else(|e| panic!("{t}: {}", e.0));
        assert_eq!(r("10M"), Rate::Bps(10e6));
        assert_eq!(r("10Mbps"), Rate::Bps(10e6));
        for bytes in [
            "10MB/s",
            "10MBps",
            "10MB",
            "10 MB/s",
            "10000kB/s",
            "0.01GB/s",
            "10MBytes/s",
        ] {
            assert_eq!(r(bytes), Rate::Bps(80e6), "{bytes}");
            assert_eq!(r(bytes), r("80Mbit"), "{bytes}");
        }
        assert_eq!(r("1250000B/s"), Rate::Bps(10e6));
        assert_eq!(r("1.5kB"), Rate::Bps(12e3));
        // Packets: any case of the prefix.
        assert_eq!(r("50kpps"), Rate::Pps(50e3));
        assert_eq!(r("2Mpps"), Rate::Pps(2e6));
        // Shown in bits: the text a byte rate round-trips through.
        assert_eq!(r("10MB/s").to_string(), "80M");
        assert_eq!(r("125GB/s"), Rate::Bps(1e12));
        assert!("126GB/s".parse::<Rate>().is_err(), "above 1 Tbit/s");
    }
}
