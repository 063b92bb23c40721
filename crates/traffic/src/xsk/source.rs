//! The AF_XDP sender: a flood or paced flow written straight into the TX ring.
//!
//! Same flows, payload header ([`Probe`]) and pacing as the UDP/AF_PACKET source
//! (`crate::udp`), so the socket sink and the AF_XDP sink validate its packets alike:
//! flow `i` sends from `sources[i % len]`, port `src_port + i`, with its own sequence.
//! Thread `j` owns the socket on queue `j` and the flows `i ≡ j (mod threads)`; within a
//! batch its flows take turns packet by packet.
//!
//! Per packet only the header bytes are written into the UMEM chunk: the flow's
//! Ethernet/IP/UDP headers (one 42- or 62-byte copy), the IPv4 identification, the
//! 16-byte probe (flow, sequence, intended send time) and the two checksums, summed
//! over the probe alone ([`UdpTemplate::write_head`]). The rest of each chunk is zero
//! from the mapping on and never rewritten.

use super::{open_error, XskInfo, XskModeRequest};
use crate::pacer::Pacer;
use crate::packet::UdpTemplate;
use crate::probe::{Probe, FULL_LEN};
use crate::sys::{self, xsk::XskTx};
use crate::tally::{merge_sources, SenderPlan, SourceControl, SourceTally};
use crate::udp::{check_source, flow_addrs, idle, payload_sizes, size_at, SenderThreads};
use crate::TrafficError;
use proto::{count_size, UdpSourceResults, UdpSourceSpec};
use serde::{Deserialize, Serialize};
use std::sync::atomic::Ordering;
use std::time::Duration;

/// How long `stop` waits for the kernel to complete frames already queued.
const FLUSH_NS: u64 = 1_000_000_000;

/// What the AF_XDP sender adds to a UDP source's results.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct XskSourceResults {
    /// Same meaning as for the UDP/AF_PACKET source; `sent` counts frames the kernel
    /// completed (took off the TX ring and sent or dropped at the device).
    pub results: UdpSourceResults,
    pub xsk: XskInfo,
    /// Kicks the kernel cut short (copy mode sends a budget per `sendto`) or refused
    /// (device busy): each was retried.
    pub kicks_again: u64,
    /// Frames queued but not completed within a second of the stop.
    pub unsent: u64,
    /// Descriptors the kernel refused as invalid: 0 unless this code has a bug.
    pub tx_invalid: u64,
}

struct Flow {
    id: u16,
    seq: u32,
    sent: u64,
    /// One template per payload size (one size, or each of the mix).
    templates: Vec<UdpTemplate>,
}

impl Flow {
    fn template(&self, payload: usize) -> &UdpTemplate {
        // Templates are built for every size `size_at` yields (setup): the first is
        // a fallback that cannot be taken.
        self.templates
            .iter()
            .find(|t| t.payload_len() == payload)
            .unwrap_or(&self.templates[0])
    }
}

#[derive(Default)]
struct ThreadResult {
    tally: SourceTally,
    kicks_again: u64,
    unsent: u64,
    tx_invalid: u64,
}

/// An AF_XDP flood or paced flow, its sockets bound and waiting for [`XskSource::start`].
pub struct XskSource {
    threads: SenderThreads<ThreadResult>,
    flows: u32,
    info: XskInfo,
}

impl XskSource {
    /// Check `spec`, build every flow's frame template and open one AF_XDP socket per
    /// thread (queue `j` of `spec.raw.ifname` for thread `j`), all in the calling
    /// thread's network namespace, so that setup errors surface before the trial.
    /// `spec.raw` names the interface and the next hop's MAC, as for AF_PACKET.
    pub fn setup(spec: &UdpSourceSpec, want: XskModeRequest) -> Result<XskSource, TrafficError> {
        check_source(spec)?;
        let raw = spec.raw.as_ref().ok_or_else(|| {
            TrafficError::BadSpec(
                "the AF_XDP sender needs the interface and the next hop's MAC (the raw path)"
                    .into(),
            )
        })?;
        let (ifindex, src_mac) = sys::xsk::if_index_mac(&raw.ifname)
            .map_err(|e| TrafficError::io(format!("interface {}", raw.ifname), e))?;
        let dst_mac = crate::packet::parse_mac(&raw.dst_mac)
            .map_err(|e| TrafficError::BadSpec(format!("next-hop MAC: {e}")))?;
        let mut per_thread: Vec<Vec<Flow>> = (0..spec.threads).map(|_| Vec::new()).collect();
        for i in 0..spec.flows {
            let (src, dst) = flow_addrs(spec, i);
            let mut templates = Vec::new();
            for len in payload_sizes(spec) {
                let template = UdpTemplate::new(src_mac, dst_mac, src, dst, len as usize)
                    .map_err(TrafficError::BadSpec)?;
                if template.frame_len() > sys::xsk::MAX_FRAME {
                    return Err(TrafficError::BadSpec(format!(
                        "a {}-byte frame does not fit one {}-byte AF_XDP UMEM chunk (UDP payload at most {})",
                        template.frame_len(),
                        sys::xsk::MAX_FRAME,
                        sys::xsk::MAX_FRAME - (template.frame_len() - len as usize)
                    )));
                }
                templates.push(template);
            }
            per_thread[(i % spec.threads) as usize].push(Flow {
                id: i as u16,
                seq: 0,
                sent: 0,
                templates,
            });
        }
        let mut socks = Vec::new();
        for q in 0..spec.threads {
            socks.push(XskTx::open(ifindex, q, want).map_err(|e| open_error(&raw.ifname, e))?);
        }
        let info = XskInfo {
            ifname: raw.ifname.clone(),
            queues: spec.threads,
            mode: socks[0].mode,
        };
        let each = per_thread.into_iter().zip(socks);
        let threads = SenderThreads::spawn(spec, each, |(flows, xsk), plan, ctl| {
            Worker { flows, xsk, plan }.run(ctl)
        });
        Ok(XskSource {
            threads,
            flows: spec.flows,
            info,
        })
    }

    /// The mode the kernel chose, the interface and the queues (known from setup on).
    pub fn info(&self) -> &XskInfo {
        &self.info
    }

    /// (frames, payload bytes) queued so far.
    pub fn live(&self) -> (u64, u64) {
        self.threads.live()
    }

    pub fn start(&mut self) {
        self.threads.start();
    }

    /// Stop, let the kernel complete what is queued (at most a second), collect.
    pub fn stop(mut self) -> Result<XskSourceResults, TrafficError> {
        let (t0, stopped_ns, threads) = self.threads.stop("an AF_XDP sender thread")?;
        // Kicks cut short are the AF_XDP sender's send errors.
        let mut results =
            merge_sources(self.flows, t0, stopped_ns, threads.iter().map(|t| &t.tally));
        let sum = |f: fn(&ThreadResult) -> u64| threads.iter().map(f).sum::<u64>();
        // Refused sends: descriptors the kernel rejected. A kick cut short (copy mode's
        // budget per `sendto`) is retried and loses nothing: reported as `kicks_again`.
        results.send_errors = sum(|t| t.tx_invalid);
        Ok(XskSourceResults {
            results,
            xsk: self.info.clone(),
            kicks_again: sum(|t| t.kicks_again),
            unsent: sum(|t| t.unsent),
            tx_invalid: sum(|t| t.tx_invalid),
        })
    }
}

struct Worker {
    flows: Vec<Flow>,
    xsk: XskTx,
    plan: SenderPlan,
}

impl Worker {
    fn run(mut self, ctl: SourceControl) -> Result<ThreadResult, TrafficError> {
        let mut res = ThreadResult::default();
        if !ctl.gate.wait() || self.flows.is_empty() {
            return Ok(res);
        }
        sys::tight_timer_slack();
        // Frame `k` of a batch: the thread's packet `queued_total + k` of the size order.
        let order = self.plan.order.clone();
        let header_len =
            self.flows[0].templates[0].frame_len() - self.flows[0].templates[0].payload_len();
        let payload = self.plan.payload;
        let first_flow = self.plan.first_flow;
        let mut pacer = Pacer::new(
            ctl.started_ns.load(Ordering::SeqCst) + self.plan.phase_ns,
            self.plan.pps,
        );
        let mut last_now = 0;
        let stamp = sys::monotonic_to_realtime();
        let nflows = self.flows.len();
        let mut rr = 0usize;
        let mut ip_id: u16 = 0;
        let mut queued_total = 0u64;
        loop {
            if ctl.stop.load(Ordering::Relaxed) {
                break;
            }
            self.xsk.complete();
            let now = sys::monotonic_ns();
            last_now = now;
            let n = pacer.due(now, self.plan.batch as u64) as usize;
            if n == 0 {
                self.kick(&mut res)?;
                idle(pacer.wait_ns(now));
                continue;
            }
            let first = pacer.sent();
            res.tally.max_lag_ns = res.tally.max_lag_ns.max(pacer.lag_ns(now));
            let flows = &self.flows;
            let pacer_ref = &pacer;
            let size = |k: usize| size_at(order.as_deref(), payload, queued_total + k as u64);
            let q = self.xsk.queue(
                n,
                |k| header_len + size(k),
                |k, frame| {
                    // Packet k of the batch goes to flow (rr + k) % nflows; the packets of
                    // the batch before it with the same flow are k / nflows.
                    let f = &flows[(rr + k) % nflows];
                    let len = size(k);
                    let head_len = len.min(FULL_LEN);
                    let probe = Probe {
                        flow: first_flow + f.id,
                        seq: f.seq.wrapping_add((k / nflows) as u32),
                        tx_ns: Some(stamp(pacer_ref.stamp_ns(first + k as u64, now))),
                    };
                    let mut head = [0u8; FULL_LEN];
                    probe.emit(&mut head[..head_len]);
                    f.template(len).write_head(
                        frame,
                        &head[..head_len],
                        ip_id.wrapping_add(k as u16 + 1),
                    );
                },
            );
            if q == 0 {
                // UMEM or TX ring full: let the kernel catch up.
                self.kick(&mut res)?;
                self.xsk.complete();
                std::thread::yield_now();
                continue;
            }
            for k in 0..q {
                let f = &mut self.flows[(rr + k) % nflows];
                f.seq = f.seq.wrapping_add(1);
                f.sent += 1;
            }
            let bytes: usize = (0..q).map(size).sum();
            if order.is_some() {
                for k in 0..q {
                    count_size(&mut res.tally.sizes, size(k) as u32, 1);
                }
            }
            rr = (rr + q) % nflows;
            ip_id = ip_id.wrapping_add(q as u16);
            queued_total += q as u64;
            ctl.counted(q as u64, bytes as u64);
            pacer.advance(q as u64);
            self.kick(&mut res)?;
            res.tally.ended_ns = sys::monotonic_ns();
        }
        // Flush: what is queued goes out (or is given up after FLUSH_NS).
        let deadline = sys::monotonic_ns() + FLUSH_NS;
        while self.xsk.outstanding() > 0 && sys::monotonic_ns() < deadline {
            self.kick(&mut res)?;
            if self.xsk.complete() == 0 {
                std::thread::sleep(Duration::from_micros(100));
            }
        }
        res.unsent = self.xsk.outstanding() as u64;
        let completed = queued_total - res.unsent;
        // The frames not completed are the last queued (the ring is in order).
        let t = &mut res.tally;
        t.sent.frames = completed;
        if order.is_some() {
            for n in completed..queued_total {
                let len = size_at(order.as_deref(), payload, n) as u32;
                if let Some(c) = t.sizes.iter_mut().find(|c| c.payload == len) {
                    c.packets -= 1;
                }
            }
            t.sent.bytes = t
                .sizes
                .iter()
                .map(|c| u64::from(c.payload) * c.packets)
                .sum();
        } else {
            t.sent.bytes = completed * payload as u64;
        }
        t.scheduled = pacer.scheduled(last_now);
        res.tx_invalid = self.xsk.tx_invalid();
        res.tally.per_flow = self.flows.iter().map(|f| (f.id, f.sent)).collect();
        Ok(res)
    }

    /// Kick until the kernel has taken the whole TX ring (copy mode sends a budget per
    /// call), at most 64 times; the next round kicks again.
    fn kick(&mut self, res: &mut ThreadResult) -> Result<(), TrafficError> {
        if self.xsk.outstanding() == 0 {
            return Ok(());
        }
        for _ in 0..64 {
            match self.xsk.kick() {
                Ok(true) => return Ok(()),
                Ok(false) => {
                    res.kicks_again += 1;
                    // Nothing came back: the device is behind; retry next round
                    // rather than spin in the syscall.
                    if self.xsk.complete() == 0 {
                        return Ok(());
                    }
                }
                Err(e) => return Err(TrafficError::io("AF_XDP TX wakeup (sendto)", e)),
            }
        }
        Ok(())
    }
}
