//! The AF_XDP sink: an XDP program on the sink's interface redirects UDP packets to
//! the sink's port into one AF_XDP socket per receive queue; one thread per socket
//! counts them, checks each flow's sequence (loss, reordering, duplicates, with the
//! socket sink's own per-flow accounting) and records the one-way delay.
//!
//! Receive times are `CLOCK_REALTIME` read once per batch taken off the RX ring (at
//! most 256 frames; at 1 Mpps a batch spans well under a millisecond), against the
//! sender's intended send time in the probe: the same clocks as the socket sink's.
//! Packets that reach the socket without a readable probe (payload under 8 bytes, or
//! not ours) are counted as `unstamped`, as by the socket sink.
//!
//! The program stays attached while the [`XskSink`] lives and is detached when it is
//! stopped or dropped (aya holds it by a BPF link, so a killed agent detaches it too).

use super::{open_error, XskInfo, XskModeRequest, XskRxDrops};
use crate::sys::{self, xsk::XskRx};
use crate::tally::{join_all, merge_sinks, Drain, SinkControl, SinkTally};
use crate::TrafficError;
use aya::maps::{Array, MapData, XskMap};
use aya::programs::{Xdp, XdpMode};
use aya::{Ebpf, EbpfLoader};
use proto::UdpSinkResults;
use serde::{Deserialize, Serialize};
use std::os::fd::AsRawFd;
use std::thread::JoinHandle;

/// The XDP program, compiled by build.rs (empty when clang was missing).
static OBJECT: &[u8] = include_bytes!(concat!(env!("OUT_DIR"), "/xsk_sink.bpf.o"));

/// Most receive queues (sockets and threads) of one sink: the XSKMAP's size.
pub const MAX_QUEUES: u32 = 64;

/// The receiving side on AF_XDP.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XskSinkSpec {
    /// The interface the flood arrives on, in the calling thread's namespace.
    pub ifname: String,
    /// UDP destination port to take; other traffic goes on to the kernel.
    pub port: u16,
    /// Flows to account (flow numbers 0..flows; others count as unstamped).
    pub flows: u32,
    /// Receive queues, one socket and thread each (queues 0..queues).
    pub queues: u32,
}

/// How the XDP program was attached.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum XdpAttach {
    /// In the driver (veth has it).
    Native,
    /// In the kernel's generic path, after an skb is built (any interface).
    Generic,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XskSinkResults {
    /// Same meaning as the socket sink's; `kernel` stays zero (the packets never reach
    /// the UDP stack).
    pub results: UdpSinkResults,
    pub xsk: XskInfo,
    pub attach: XdpAttach,
    /// Frames the kernel dropped before the sockets (all queues): must be 0 for a
    /// result that measures the gateway rather than the sink.
    pub drops: XskRxDrops,
    /// Frames taken off the RX rings that were not UDP to our port (should not happen:
    /// the program filters them).
    pub not_ours: u64,
}

struct SinkThread {
    tally: SinkTally,
    not_ours: u64,
    drops: XskRxDrops,
}

/// The AF_XDP sink, receiving from `start` until `stop`.
pub struct XskSink {
    ctl: SinkControl,
    workers: Vec<JoinHandle<Result<SinkThread, TrafficError>>>,
    /// The loaded program and its maps; dropping it detaches the program.
    ebpf: Option<Ebpf>,
    info: XskInfo,
    attach: XdpAttach,
}

impl XskSink {
    /// Open the sockets, load the program, put the sockets in its XSKMAP, attach it to
    /// `spec.ifname` (native XDP, else generic) and start receiving.
    pub fn start(spec: &XskSinkSpec, want: XskModeRequest) -> Result<XskSink, TrafficError> {
        if spec.queues == 0 || spec.queues > MAX_QUEUES {
            return Err(TrafficError::BadSpec(format!(
                "AF_XDP sink queues must be 1..{MAX_QUEUES}, not {}",
                spec.queues
            )));
        }
        if OBJECT.is_empty() {
            return Err(TrafficError::XdpUnavailable(
                "the sink's XDP program was not built (clang or libbpf-dev missing at build time)"
                    .into(),
            ));
        }
        let ifname = &spec.ifname;
        let (ifindex, _) = sys::xsk::if_index_mac(ifname)
            .map_err(|e| TrafficError::io(format!("interface {ifname}"), e))?;
        let mut socks = Vec::new();
        for q in 0..spec.queues {
            socks.push(XskRx::open(ifindex, q, want).map_err(|e| open_error(ifname, e))?);
        }
        let unavailable = |what: &str, e: &dyn std::fmt::Display| {
            TrafficError::XdpUnavailable(format!("{ifname}: {what}: {e}"))
        };
        let mut ebpf = EbpfLoader::new()
            .load(OBJECT)
            .map_err(|e| unavailable("loading the XDP program", &e))?;
        {
            let map = ebpf
                .map_mut("PORT")
                .ok_or_else(|| unavailable("XDP program", &"no PORT map"))?;
            let mut port: Array<&mut MapData, u32> =
                Array::try_from(map).map_err(|e| unavailable("map PORT", &e))?;
            port.set(0, u32::from(spec.port), 0)
                .map_err(|e| unavailable("map PORT", &e))?;
        }
        {
            let map = ebpf
                .map_mut("XSKS")
                .ok_or_else(|| unavailable("XDP program", &"no XSKS map"))?;
            let mut xsks: XskMap<&mut MapData> =
                XskMap::try_from(map).map_err(|e| unavailable("map XSKS", &e))?;
            for (q, s) in socks.iter().enumerate() {
                xsks.set(q as u32, s.as_raw_fd(), 0)
                    .map_err(|e| unavailable("XSKMAP entry", &e))?;
            }
        }
        let attach = {
            let prog: &mut Xdp = ebpf
                .program_mut("fwbench_xsk")
                .ok_or_else(|| unavailable("XDP program", &"no program fwbench_xsk"))?
                .try_into()
                .map_err(|e| unavailable("XDP program", &e))?;
            prog.load().map_err(|e| unavailable("BPF verifier", &e))?;
            match prog.attach(ifname, XdpMode::Driver) {
                Ok(_) => XdpAttach::Native,
                Err(native) => match prog.attach(ifname, XdpMode::Skb) {
                    Ok(_) => XdpAttach::Generic,
                    Err(generic) => {
                        return Err(TrafficError::XdpUnavailable(format!(
                            "{ifname}: attaching XDP failed in native mode ({native}) and in generic mode ({generic})"
                        )))
                    }
                },
            }
        };
        let info = XskInfo {
            ifname: ifname.clone(),
            queues: spec.queues,
            mode: socks[0].mode,
        };
        let ctl = SinkControl::default();
        let flows = spec.flows.max(1);
        let port = spec.port;
        let workers = socks
            .into_iter()
            .map(|s| {
                let ctl = ctl.clone();
                std::thread::spawn(move || sink_loop(s, port, flows, ctl))
            })
            .collect();
        Ok(XskSink {
            ctl,
            workers,
            ebpf: Some(ebpf),
            info,
            attach,
        })
    }

    pub fn info(&self) -> &XskInfo {
        &self.info
    }

    /// Packets received so far.
    pub fn progress(&self) -> u64 {
        self.ctl.progress()
    }

    /// (packets, payload bytes) received so far.
    pub fn live(&self) -> (u64, u64) {
        self.ctl.live()
    }

    /// Drain (until 50 ms pass without a packet, at most 2.5 s), detach, collect.
    pub fn stop(mut self) -> Result<XskSinkResults, TrafficError> {
        self.ctl.halt();
        let (threads, err) = join_all(std::mem::take(&mut self.workers), "an AF_XDP sink thread");
        // Detach only now: until the threads ended, the program fed them.
        self.ebpf = None;
        if let Some(e) = err {
            return Err(e);
        }
        let mut drops = XskRxDrops::default();
        let mut not_ours = 0;
        let mut tallies = Vec::new();
        for t in threads {
            not_ours += t.not_ours;
            drops.rx_ring_full += t.drops.rx_ring_full;
            drops.fill_ring_empty += t.drops.fill_ring_empty;
            drops.dropped += t.drops.dropped;
            tallies.push(t.tally);
        }
        let r: UdpSinkResults = merge_sinks(tallies);
        Ok(XskSinkResults {
            results: r,
            xsk: self.info.clone(),
            attach: self.attach,
            drops,
            not_ours,
        })
    }
}

impl Drop for XskSink {
    fn drop(&mut self) {
        self.ctl.halt();
    }
}

fn sink_loop(
    mut s: XskRx,
    port: u16,
    flows: u32,
    ctl: SinkControl,
) -> Result<SinkThread, TrafficError> {
    let mut t = SinkThread {
        tally: SinkTally::new(flows, 0),
        not_ours: 0,
        drops: XskRxDrops::default(),
    };
    let mut drain = Drain::default();
    loop {
        let wall = sys::realtime_ns();
        let bytes_before = t.tally.received.bytes;
        let n = s.recv(|frame| match super::parse::udp_payload(frame) {
            Some(v) if v.dst_port == port => t.tally.on_datagram(v.payload, wall),
            _ => t.not_ours += 1,
        });
        let now = sys::monotonic_ns();
        drain.saw(now, n);
        if n == 0 {
            // Idle: sleep in poll(2) until frames arrive (at most 5 ms, to see the stop).
            s.wait(5)
                .map_err(|e| TrafficError::io("poll on the AF_XDP socket", e))?;
        } else {
            t.tally.saw_batch(now);
            ctl.counted(n as u64, t.tally.received.bytes - bytes_before);
        }
        if drain.done(now, ctl.stopping()) {
            t.drops = s.drops();
            return Ok(t);
        }
    }
}
