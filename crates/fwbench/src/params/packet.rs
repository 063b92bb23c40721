//! Parameters of the packet-rate workloads (flood, flow, ping): sizes, rates, flows,
//! sender and sink, and the ports their traffic uses.

use crate::params::value_error::ValueError;
use proto::{Family, PacketSize, Rate};
use serde::{Deserialize, Serialize};

/// Smallest Ethernet frame (FCS included); RFC 2544's smallest test size.
pub const MIN_ETHERNET_FRAME: u32 = 64;

/// First source port of flood/flow flows; flow `i` uses `SRC_PORT + i`.
pub const SRC_PORT: u16 = 30_000;
/// Destination port of floods and flows (the sink's), and of pings (the reflector's).
pub const SINK_PORT: u16 = 9_000;

/// How packets leave the client.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SenderPath {
    /// UDP sockets, sendmmsg(2).
    #[default]
    Udp,
    /// Complete Ethernet frames through AF_PACKET (as trafgen), bypassing the UDP layer.
    Raw,
    /// Complete Ethernet frames through AF_XDP (zero-copy where the driver has it, copy
    /// mode otherwise; issue 28); refused where AF_XDP is unavailable.
    Xdp,
}

/// Where arriving packets are counted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum SinkKind {
    /// A UDP sink on the server (recvmmsg): loss, order, delay.
    #[default]
    Socket,
    /// No receiver: packets the gateway took in on its ingress interface are counted
    /// (seed 001's drop tests, where the firewall drops everything).
    Gateway,
    /// An AF_XDP sink on the server's interface (issue 28): counts, sequences and
    /// delays as the socket sink, at rates sockets cannot receive.
    Xdp,
}

fwmodel::named!(SenderPath, "sender", { Udp => "udp", Raw => "raw", Xdp => "xdp" });
fwmodel::named!(SinkKind, "sink", { Socket => "socket", Gateway => "gateway", Xdp => "xdp" });

/// Parameters of flood, flow and ping trials.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PacketParams {
    pub size: PacketSize,
    pub rate: Rate,
    pub flows: u32,
    /// Destination addresses the flows are spread over (`--dsts`; flow `i` goes to
    /// destination `i mod dsts`: the server's address, then 198.19.1.1 …); 1: the server's.
    #[serde(default = "one", skip_serializing_if = "is_one")]
    pub dsts: u32,
    /// Sender threads.
    pub threads: u32,
    pub sink_threads: u32,
    /// Packets per sendmmsg(2) call.
    pub batch: u32,
    pub sender: SenderPath,
    pub sink: SinkKind,
    /// Ping: probes to send (`None`: for the trial duration).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub count: Option<u64>,
    /// Ping: gap between probes, ns (0: back to back).
    #[serde(default)]
    pub interval_ns: u64,
    /// Allow datagrams above the MTU (the kernel sends IP fragments).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub fragment: bool,
    /// Destination ports (`--dport 5000-6000`; the sink listens on the first).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dport: Option<(u16, u16)>,
    /// Source ports (`--sport`; flow `i` uses the first + i, within the range).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sport: Option<(u16, u16)>,
    /// Source address: one of the testbed's clients (`--src`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub src: Option<std::net::IpAddr>,
    /// Destination address: the testbed's server (`--dst`, a check).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub dst: Option<std::net::IpAddr>,
    /// Aim at a rule of the imported ruleset: `N` or `CHAIN:N` (`--aim`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub aim: Option<String>,
    /// The gateway's conntrack table for the trial (`--ct-max`, `--ct-buckets`,
    /// `--ct-udp-timeout`; absent: as found). Serialized by `params::PacketKey` only,
    /// after the trial's gateway event (where the key form has always had them).
    #[serde(default, skip_serializing)]
    pub ct_max: Option<u32>,
    #[serde(default, skip_serializing)]
    pub ct_buckets: Option<u32>,
    #[serde(default, skip_serializing)]
    pub ct_udp_timeout: Option<u32>,
    /// Idle entries put in the gateway's table before the trial (`--ct-fill`).
    #[serde(default, skip_serializing)]
    pub ct_fill: Option<u32>,
}

fn one() -> u32 {
    1
}

fn is_one(n: &u32) -> bool {
    *n == 1
}

/// A port or an inclusive range, `80`, `5000-6000` or `5000:6000`.
pub fn parse_ports(t: &str) -> Result<(u16, u16), ValueError> {
    let port = |s: &str| {
        s.trim()
            .parse::<u16>()
            .ok()
            .filter(|p| *p > 0)
            .ok_or_else(|| ValueError::Other(format!("port '{s}' is not 1 .. 65535")))
    };
    let (lo, hi) = match t.split_once(['-', ':']) {
        Some((a, b)) => (port(a)?, port(b)?),
        None => (port(t)?, port(t)?),
    };
    if lo > hi {
        return Err(ValueError::Other(format!(
            "port range '{t}' ends before it starts"
        )));
    }
    Ok((lo, hi))
}

/// `N` or `CHAIN:N` (N from 1), as `--aim` takes it.
pub fn parse_aim(t: &str) -> Result<String, ValueError> {
    let n = t.rsplit_once(':').map_or(t, |(_, n)| n);
    match n.parse::<usize>() {
        Ok(n) if n >= 1 => Ok(t.to_owned()),
        _ => Err(ValueError::Other(format!(
            "--aim '{t}': give a rule number N (from 1, as `fwbench rules render --import` \
             lists them) or CHAIN:N"
        ))),
    }
}

impl PacketParams {
    /// UDP payload bytes (bad input as a message).
    pub fn payload(&self, family: Family) -> Result<u32, ValueError> {
        self.size
            .payload_with(family, self.fragment)
            .map_err(|e| ValueError::Other(e.0))
    }

    /// Ethernet bytes on the wire per datagram (all fragments, FCS included).
    pub fn wire_bytes(&self, family: Family) -> Result<u32, ValueError> {
        Ok(PacketSize::wire_bytes(self.payload(family)?, family))
    }

    /// Bytes a bit rate counts per packet: the payload for `--size`, the wire bytes for
    /// `--frame`; for a mix, its mean frame rounded (see `mean_rate_bytes`).
    pub fn rate_bytes(&self, family: Family) -> Result<u32, ValueError> {
        match self.size {
            PacketSize::Payload(_) => self.payload(family),
            PacketSize::Frame(_) => self.wire_bytes(family),
            PacketSize::Mix(_) => Ok(self.mean_rate_bytes(family)?.round() as u32),
        }
    }

    /// Bytes a bit rate counts per packet on average: `rate_bytes`, or for a size mix
    /// the mean of its frames (FCS included) weighted by their shares.
    pub fn mean_rate_bytes(&self, family: Family) -> Result<f64, ValueError> {
        match self.size {
            PacketSize::Payload(_) | PacketSize::Frame(_) => Ok(self.rate_bytes(family)? as f64),
            PacketSize::Mix(_) => self
                .size
                .mean_rate_bytes(family)
                .map_err(|e| ValueError::Other(e.0)),
        }
    }

    /// Mean (UDP payload bytes, Ethernet bytes on the wire) per packet: the one size's,
    /// or a mix's weighted by their shares.
    pub fn mean_bytes(&self, family: Family) -> Result<(f64, f64), ValueError> {
        match self.size {
            PacketSize::Payload(_) | PacketSize::Frame(_) => Ok((
                self.payload(family)? as f64,
                self.wire_bytes(family)? as f64,
            )),
            PacketSize::Mix(m) => {
                self.payload(family)?;
                let payload =
                    |f| f - (proto::ETH_OVERHEAD + proto::ip_header(family) + proto::UDP_HEADER);
                Ok((m.mean(payload), m.mean(|f| f)))
            }
        }
    }
}

impl Default for PacketParams {
    fn default() -> Self {
        PacketParams {
            size: PacketSize::Payload(18),
            rate: Rate::Max,
            flows: 1,
            dsts: 1,
            threads: 1,
            sink_threads: 1,
            batch: 64,
            sender: SenderPath::Udp,
            sink: SinkKind::Socket,
            count: None,
            interval_ns: 0,
            fragment: false,
            dport: None,
            sport: None,
            src: None,
            dst: None,
            aim: None,
            ct_max: None,
            ct_buckets: None,
            ct_udp_timeout: None,
            ct_fill: None,
        }
    }
}

/// A ping trial's duration: at least long enough for `count` probes every
/// `interval_ns` plus the last reply's timeout (the client stops after the last one).
pub fn ping_duration(
    duration_s: f64,
    count: Option<u64>,
    interval_ns: u64,
    timeout_ms: u32,
) -> f64 {
    match count {
        Some(c) if interval_ns > 0 => {
            duration_s.max(c as f64 * interval_ns as f64 / 1e9 + timeout_ms as f64 / 1e3)
        }
        _ => duration_s,
    }
}

/// Most threads the controller accepts: more than the host's CPUs only adds contention.
pub fn max_threads() -> u32 {
    let cpus = std::thread::available_parallelism()
        .map(|n| n.get() as u32)
        .unwrap_or(1);
    (cpus * 4).min(traffic::udp::MAX_THREADS)
}

#[cfg(test)]
mod port_tests {
    use super::*;

    #[test]
    fn a_mix_counts_its_mean_frame_for_rates_and_its_largest_for_buffers() {
        let k = PacketParams {
            size: "imix".parse().unwrap(),
            ..Default::default()
        };
        let b = k.mean_rate_bytes(Family::V4).unwrap();
        assert!((b - 4252.0 / 12.0).abs() < 1e-9, "{b}");
        let (p, l2) = k.mean_bytes(Family::V4).unwrap();
        assert!(
            (l2 - b).abs() < 1e-9 && (p - (b - 46.0)).abs() < 1e-9,
            "{p} {l2}"
        );
        assert_eq!(k.payload(Family::V4), Ok(1454));
        let pps = proto::Rate::Bps(b * 8.0 * 20_000.0).pps_mean(b).unwrap();
        assert!((pps - 20_000.0).abs() < 1e-6, "{pps}");
        assert!(k
            .payload(Family::V6)
            .unwrap_err()
            .to_string()
            .contains("size mix imix"));
    }

    #[test]
    fn ports_and_ranges_parse() {
        assert_eq!(parse_ports("80"), Ok((80, 80)));
        assert_eq!(parse_ports("5000-6000"), Ok((5000, 6000)));
        assert_eq!(parse_ports("5000:6000"), Ok((5000, 6000)));
        assert!(parse_ports("6000-5000")
            .unwrap_err()
            .to_string()
            .contains("ends before"));
        assert!(parse_ports("0").is_err());
        assert!(parse_ports("70000").is_err());
        assert_eq!(parse_aim("INPUT:3"), Ok("INPUT:3".into()));
        assert_eq!(parse_aim("ufw-user-input:1"), Ok("ufw-user-input:1".into()));
        assert!(parse_aim("INPUT:0").is_err());
        assert!(parse_aim("first").is_err());
    }
}
