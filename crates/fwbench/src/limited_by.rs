//! Which role set a packet-rate trial's rate: the sender, the gateway or the sink.
//!
//! Owns: the pure judgement over one trial's counters ([`limited_by`]), and over its
//! delays whether a queue filled through it ([`queue_share`]: a rate counted that the
//! path does not sustain); it reads no clock and no host, and imports nothing of the
//! crate (any module may call it).
//! Must not: decide pass/fail of a search (that is the search's loss threshold).
//!
//! A packet lost on the way was lost at one stage; the stage that lost the most decides:
//!
//! | stage (counter → counter) | limited by |
//! |---|---|
//! | sender → gateway ingress | the gateway (its receive backlog was full), or the sender's link if the gateway's CPU had room |
//! | gateway ingress → egress | the gateway |
//! | gateway egress → sink interface | the sink (its receive backlog), or the gateway if the sink's CPU had room |
//! | sink interface → sink count | the sink |
//!
//! A gateway event's marker packets that the update's rule dropped are the experiment,
//! not a loss: they are taken out of the stages past the gateway's ingress (in path
//! order, where the firewall acts) before the stages are compared, and the verdict's
//! words say how many (issue 37: "limited by gateway" for a marker dropped on purpose).
//!
//! Nothing lost: an unpaced flood, or a paced one that fell behind its schedule, was
//! limited by the sender (it offered all it could and everything got through: the
//! gateway's limit is higher) — unless the CPU figures say otherwise: a sender with
//! room on its CPUs while the gateway's packet processing was saturated was held back
//! by the gateway (back-pressure, e.g. a shared CPU). A paced one on schedule was
//! limited by nothing (the offered rate got through).
//!
//! The CPU figures ([`role_cpus`], pure too) come from the roles' 5-Hz samples: the
//! sender's and the sink's own process (all threads) over the CPUs their threads
//! could use, and the gateway's softirq share of its busiest packet-processing CPU.
//!
//! A sender on the gateway's machine may share a CPU with the gateway's softirq (a
//! 2-core VM: the sender and the veth's receive processing both on CPU 0). Its CPU then
//! looks saturated although the gateway's packet processing took much of it: such a
//! verdict is not "sender" but `shared-cpu` ([`shared_cpu`] finds the CPU). Where the
//! gateway's packet processing is not steered to CPUs of its own, a veth packet's
//! forwarding runs on whichever CPU sent it, so the sender's CPUs always carry it —
//! an unpinned sender that moves between CPUs included, none of them saturated: a
//! trial whose gateway forwards a tenth of what the same sender got out at 0 rules is
//! never "limited by the sender". `shared-cpu` is a fact of the placement the run
//! chose, said once per run in the report, not a warning on every trial's line.

use serde::{Deserialize, Serialize};

/// Busy fractions (0..1) of each role during the traffic phase, where known.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RoleCpus {
    pub sender: Option<f64>,
    pub gateway: Option<f64>,
    pub sink: Option<f64>,
}

/// A CPU the sender and the gateway's softirq both ran on, and how busy it was.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct SharedCpu {
    pub cpu: usize,
    /// The gateway's softirq share of it (0..1).
    pub softirq: f64,
    /// Its busy share (1 − idle, 0..1).
    pub busy: f64,
}

/// A CPU's share (user + system, or the gateway's softirq) from which a role counts as
/// running there.
pub const SHARE_MIN: f64 = 0.1;

/// Where the sender ran, for [`shared_cpu`]: only a sender on the gateway's machine
/// (one kernel, one `/proc/stat`) can share a CPU with it.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum SenderPlace<'a> {
    /// Another machine: no CPU in common.
    Elsewhere,
    /// The gateway's machine; `pinned`: the CPUs the sender was pinned to (`None`: not
    /// pinned, the CPUs with its user + system time count).
    WithGateway { pinned: Option<&'a [usize]> },
}

/// The busiest CPU (by the gateway's softirq) shared by the sender and the gateway
/// (pure): among the gateway's CPUs (`gateway_cpus`, all when `None`), one where the
/// gateway's mean `cpuN.softirq` is at least [`SHARE_MIN`], the sender ran (pinned
/// there, or the client's mean `cpuN.user` + `cpuN.system` at least [`SHARE_MIN`]) and
/// that was saturated (mean `cpuN.idle` at most 1 − [`BUSY`]) — or, with the gateway
/// not steered (`gateway_cpus` `None`), saturated or not, a CPU the sender was pinned
/// to with some of the gateway's softirq, or for an unpinned sender the CPU with the
/// most of it if the sender ran there: its packet processing then runs in the
/// sender's context wherever the sender runs (a sender moving between CPUs saturates
/// none of them; at few rules its share may be small, but it is in the rate).
/// `None` when the sender ran elsewhere or no CPU qualifies.
pub fn shared_cpu(
    samples: &[(&str, u32, &proto::MetricSample)],
    place: SenderPlace,
    cpus: usize,
    gateway_cpus: Option<&[usize]>,
) -> Option<SharedCpu> {
    let pinned = match place {
        SenderPlace::Elsewhere => return None,
        SenderPlace::WithGateway { pinned } => pinned,
    };
    let mean = |role: &str, metric: &str| -> Option<f64> {
        let v: Vec<f64> = samples
            .iter()
            .filter(|(r, _, s)| *r == role && s.metric == metric)
            .map(|(_, _, s)| s.value / 100.0)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    // The largest softirq share of any CPU.
    let most = (0..cpus)
        .filter_map(|c| mean("gateway", &format!("cpu{c}.softirq")))
        .fold(0.0, f64::max);
    (0..cpus)
        .filter(|c| gateway_cpus.is_none_or(|g| g.contains(c)))
        .filter_map(|c| {
            let softirq = mean("gateway", &format!("cpu{c}.softirq"))?;
            let busy = 1.0 - mean("gateway", &format!("cpu{c}.idle"))?;
            let sender_there = match pinned {
                Some(p) => p.contains(&c),
                None => {
                    mean("client", &format!("cpu{c}.user")).unwrap_or(0.0)
                        + mean("client", &format!("cpu{c}.system")).unwrap_or(0.0)
                        >= SHARE_MIN
                }
            };
            // Not steered: the gateway's work follows the sender, in whatever share (a
            // pinned sender's CPUs; an unpinned one's, the CPU with the most of it —
            // other traffic of the machine may put softirq elsewhere); steered: a
            // saturated CPU with a share of it.
            let carried = match gateway_cpus {
                None => softirq > 0.0 && (pinned.is_some() || softirq >= most),
                Some(_) => softirq >= SHARE_MIN && busy >= BUSY,
            };
            (sender_there && carried).then_some(SharedCpu {
                cpu: c,
                softirq: softirq.clamp(0.0, 1.0),
                busy: busy.clamp(0.0, 1.0),
            })
        })
        .reduce(|a, b| if b.softirq > a.softirq { b } else { a })
}

/// The roles' busy fractions from a trial's samples (`(role, host, sample)`, roles
/// `client`, `gateway`, `server`; `host` the role's host, 0-based): the sender's and
/// sink's `proc.cpu` (% of one CPU, all threads) averaged over each host's samples and
/// divided by that host's threads (`sender_threads[host]`, at most `cpus` CPUs), the
/// busiest host's when a role has several; and the gateway's largest mean
/// `cpuN.softirq` over `gateway_cpus` (all CPUs when `None`: not steered).
pub fn role_cpus(
    samples: &[(&str, u32, &proto::MetricSample)],
    sender_threads: &[u32],
    sink_threads: &[u32],
    cpus: usize,
    gateway_cpus: Option<&[usize]>,
) -> RoleCpus {
    let mean = |role: &str, host: Option<u32>, metric: &str| -> Option<f64> {
        let v: Vec<f64> = samples
            .iter()
            .filter(|(r, h, s)| *r == role && host.is_none_or(|x| x == *h) && s.metric == metric)
            .map(|(_, _, s)| s.value)
            .collect();
        (!v.is_empty()).then(|| v.iter().sum::<f64>() / v.len() as f64)
    };
    let share = |role: &str, threads: &[u32]| {
        (0u32..)
            .zip(threads)
            .filter_map(|(h, &t)| {
                let n = (t.max(1) as usize).min(cpus.max(1)) as f64;
                mean(role, Some(h), "proc.cpu").map(|pct| (pct / 100.0 / n).clamp(0.0, 1.0))
            })
            .reduce(f64::max)
    };
    let gateway = (0..cpus)
        .filter(|c| gateway_cpus.is_none_or(|g| g.contains(c)))
        .filter_map(|c| mean("gateway", None, &format!("cpu{c}.softirq")))
        .map(|pct| (pct / 100.0).clamp(0.0, 1.0))
        .reduce(f64::max);
    RoleCpus {
        sender: share("client", sender_threads),
        gateway,
        sink: share("server", sink_threads),
    }
}

/// CPUs of a list like "1", "0-1" or "0,2-3" (`None`: not a list).
pub fn cpu_list(t: &str) -> Option<Vec<usize>> {
    let mut out = vec![];
    for part in t.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        match part.split_once('-') {
            Some((a, b)) => out.extend(a.trim().parse::<usize>().ok()?..=b.trim().parse().ok()?),
            None => out.push(part.parse().ok()?),
        }
    }
    (!out.is_empty()).then_some(out)
}

/// A CPU busier than this (fraction of the cores the role ran on) counts as saturated.
pub const BUSY: f64 = 0.9;

/// One packet-rate trial's counters, as the roles and the interfaces report them.
#[derive(Debug, Clone, Copy, PartialEq, Default)]
pub struct RateCounters {
    /// Paced (a target rate) or a flood (as fast as possible).
    pub paced: bool,
    /// Packets the pacer scheduled up to the stop (= `sent` for a flood).
    pub scheduled: u64,
    /// Packets the sender got out.
    pub sent: u64,
    /// Packets into the gateway's ingress interface; `None` without a gateway.
    pub gateway_in: Option<u64>,
    /// Packets its ingress interface dropped on receipt (`rx_dropped`: the receive
    /// backlog of the CPU processing them overflowed — the gateway's packet processing
    /// not keeping up, not the sender); `None` when not known.
    pub gateway_in_dropped: Option<u64>,
    /// Packets out of its egress interface; `None` without a gateway.
    pub gateway_out: Option<u64>,
    /// Packets at the sink's interface; `None` when not counted.
    pub sink_in: Option<u64>,
    /// Packets the sink counted (sockets or AF_XDP).
    pub received: u64,
    /// Frames each link of the path carried the other way, which a one-way trial
    /// never sends: the gateway's ingress interfaces' transmits (the client's link) and
    /// the sink's interface's (the sink's link), each interface's only as far as it is
    /// neighbour discovery ([`own_frames`]). About as many go each way (ARP, NDP: a
    /// request answered by a reply), so the counters on that link hold about as many
    /// frames that are none of the trial's, which the stage after each may show as
    /// lost: a loss is placed beyond them ([`path_stages`]), never made of them. 0: not
    /// known.
    pub back: Back,
    /// Datagrams of the gateway event's marker that the update's rule dropped, as
    /// intended (`EventsSummary::marker_dropped`): the experiment, not a limit — taken
    /// out of the losses past the gateway's ingress (where the firewall acts) before
    /// they are judged, and said. 0 without events.
    pub marker_dropped: u64,
    /// Frames per datagram the sender and sink count (`sent`, `received`): with
    /// `--fragment`, its IP fragments, which is what the interfaces count; 1 (or 0,
    /// not known) otherwise.
    pub frames_per_datagram: u64,
    /// Busy fraction (0..1) of the CPUs each role ran on, where known.
    pub sender_cpu: Option<f64>,
    pub gateway_cpu: Option<f64>,
    pub sink_cpu: Option<f64>,
    /// A saturated CPU the sender shared with the gateway's softirq, where known.
    pub shared_cpu: Option<SharedCpu>,
    /// The gateway's rules run in its ingress interface's driver (native XDP,
    /// `firewall::Backend::in_driver`): what the sender got out that its ingress did not
    /// count was dropped in front of its program (a veth's XDP ring, full: the
    /// program did not keep up) — the gateway's, however busy its steered CPUs were.
    pub in_driver: bool,
}

/// Frames a link carried back against a one-way trial ([`RateCounters::back`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct Back {
    /// Out of the gateway's ingress interfaces (the client's link).
    pub client_link: u64,
    /// Out of the sink's interface (the sink's link, which the gateway's egress feeds).
    pub sink_link: u64,
}

/// The most frames an interface may send back against a one-way trial that are taken
/// for its link's neighbour discovery: a trial of seconds resolves each neighbour once
/// or twice. More is not discovery (ICMP errors, another talker on it): none of it is
/// taken as such ([`own_frames`]).
pub const OWN_FRAMES_MAX: u64 = 16;

/// What of an interface's `sent_back` frames (against a one-way trial) is its link's
/// neighbour discovery: all of it up to [`OWN_FRAMES_MAX`], none above.
pub fn own_frames(sent_back: u64) -> u64 {
    if sent_back <= OWN_FRAMES_MAX {
        sent_back
    } else {
        0
    }
}

/// Which stage set the rate (`results::LimitedBy`, the witness's own: sender, gateway,
/// sink, nothing, shared-cpu — a sender that shared a saturated CPU with the gateway's
/// softirq, the rate the pair's, neither role's alone, a warning).
pub use results::LimitedBy;

/// The judgement and the evidence, in words for the report's warning.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Limit {
    pub by: LimitedBy,
    pub why: String,
    /// The busy fractions it was judged with (absent: not known).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sender_cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gateway_cpu: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sink_cpu: Option<f64>,
    /// The CPU the sender shared with the gateway's softirq (with `shared-cpu`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub shared_cpu: Option<usize>,
    /// The gateway's rules ran in its ingress driver (native XDP,
    /// [`RateCounters::in_driver`]): pinning does not move them (absent: false).
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_driver: bool,
    /// The counters it was judged from (judged again once the roles' CPU figures are
    /// in; not stored).
    #[serde(skip)]
    pub counters: Option<RateCounters>,
}

impl Limit {
    /// A verdict `by` with no figures behind it, for tests that plant one.
    #[cfg(test)]
    pub fn planted(by: LimitedBy) -> Limit {
        Limit {
            by,
            why: "planted".into(),
            sender_cpu: None,
            gateway_cpu: None,
            sink_cpu: None,
            shared_cpu: None,
            in_driver: false,
            counters: None,
        }
    }

    /// The verdict in a few words for a one-line summary: the role, or for a shared CPU
    /// what the rate is (the path's on one core: not a role's limit alone; the run's
    /// placement, said once in its findings, not a warning on every line).
    pub fn short(&self) -> String {
        match (self.by, self.shared_cpu) {
            (LimitedBy::SharedCpu, Some(c)) => {
                format!("sender and gateway together (shared CPU {c}: the path on one core)")
            }
            (LimitedBy::SharedCpu, None) => {
                "sender and gateway together (a shared CPU: the path on one core)".into()
            }
            (LimitedBy::Sender | LimitedBy::Gateway | LimitedBy::Sink | LimitedBy::Nothing, _) => {
                self.by.as_str().into()
            }
        }
    }

    /// A warning for people, when the verdict is not the gateway's (or not clean).
    pub fn warning(&self) -> Option<String> {
        match self.by {
            LimitedBy::Sender | LimitedBy::Sink => Some(format!(
                "this rate is fwbench's {} limit, not the gateway's",
                self.by.as_str()
            )),
            LimitedBy::SharedCpu => Some(format!(
                "the sender and the gateway's packet processing shared CPU {}: this rate is \
                 neither the sender's limit nor the gateway's ({})",
                self.shared_cpu
                    .map_or_else(|| "?".to_string(), |c| c.to_string()),
                if self.in_driver {
                    "its XDP program runs in the receive poll of a veth's sending side, which \
                     pinning does not move: the gateway's own rate needs a sender on another \
                     machine (a testbed file)"
                } else {
                    "pin them apart, --pin-client and --pin-gateway, to measure the gateway"
                }
            )),
            LimitedBy::Gateway | LimitedBy::Nothing => None,
        }
    }
}

fn busy(cpu: Option<f64>) -> bool {
    cpu.is_none_or(|c| c >= BUSY)
}

/// Judge `c`; losses up to `tolerance` (a fraction of the packets sent, e.g. 0.001)
/// count as none. The CPU fractions it used are in the answer, and in its words.
pub fn limited_by(c: &RateCounters, tolerance: f64) -> Limit {
    let (mut by, mut why) = judge(c, tolerance);
    // The sender's verdict, on a CPU it shared with the gateway's softirq: not clean.
    let shared = match (by, c.shared_cpu) {
        (LimitedBy::Sender, Some(s)) => {
            by = LimitedBy::SharedCpu;
            // Native XDP runs where the veth's receive poll runs: the sending CPU.
            let xdp = match c.in_driver {
                true => ", the gateway's XDP program in the receive poll of the sender's veth",
                false => "",
            };
            why = format!(
                "sender and gateway on CPU {} (its softirq {:.0} %, the CPU {:.0} % busy{xdp}), so the sender's verdict is not clean: {why}",
                s.cpu,
                s.softirq * 100.0,
                s.busy * 100.0
            );
            Some(s.cpu)
        }
        (
            LimitedBy::Sender
            | LimitedBy::Gateway
            | LimitedBy::Sink
            | LimitedBy::Nothing
            | LimitedBy::SharedCpu,
            _,
        ) => None,
    };
    let pct = |x: Option<f64>, what: &str| x.map(|x| format!("{what} {:.0} %", x * 100.0));
    let cpus: Vec<String> = [
        pct(c.sender_cpu, "sender CPU"),
        pct(c.gateway_cpu, "gateway softirq"),
        pct(c.sink_cpu, "sink CPU"),
    ]
    .into_iter()
    .flatten()
    .collect();
    if !cpus.is_empty() {
        why += &format!(" ({})", cpus.join(", "));
    }
    Limit {
        by,
        why,
        sender_cpu: c.sender_cpu,
        gateway_cpu: c.gateway_cpu,
        sink_cpu: c.sink_cpu,
        shared_cpu: shared,
        in_driver: c.in_driver,
        counters: Some(*c),
    }
}

/// A flood counts as overloaded (livelocked) only when the sink got less than this
/// share of what the sender got out ([`overload`]).
pub const OVERLOAD_SHARE: f64 = 0.1;

/// A flood at the maximum rate so far beyond the gateway that its rate is no capacity:
/// the sink got less than [`OVERLOAD_SHARE`] of what the sender got out, most of what
/// was lost never entered the gateway (not there, or dropped by its receive backlog on
/// receipt — a firewall's or a policer's deliberate drops are taken in first and do not
/// count), and of what it did take in it delivered less than half — the rest queued
/// behind the flood on one CPU and was dropped there (receive livelock: a veth delivers
/// on the CPU that forwarded, and the sink's receive was not steered off the gateway's
/// CPU). A gateway that delivers what it takes in, however small a share of the offered
/// rate, forwards at its maximum forwarding rate (RFC 2889), the figure a flood
/// measures (the backlog's drops at its ingress cost the sender's CPU): not flagged.
/// `None` for a paced trial, without the gateway's ingress counter, or below the
/// threshold. Pure.
pub fn overload(c: &RateCounters) -> Option<String> {
    if c.paced || c.sent == 0 {
        return None;
    }
    let n = c.frames_per_datagram.max(1);
    let (sent, received) = (c.sent * n, c.received * n);
    let g_in = c.gateway_in?;
    let refused = sent.saturating_sub(g_in);
    let lost = sent.saturating_sub(received);
    let undelivered = g_in.saturating_sub(received);
    if received as f64 >= sent as f64 * OVERLOAD_SHARE
        || refused * 2 <= lost
        || undelivered <= received
    {
        return None;
    }
    let backlog = c
        .gateway_in_dropped
        .filter(|d| *d > 0)
        .map(|d| format!(", its receive backlog dropping {d} on receipt"))
        .unwrap_or_default();
    Some(format!(
        "a flood at the maximum rate: the gateway took in {g_in} of the {sent} packets the \
         sender got out{backlog}, and delivered {received} of them ({:.2} % of those sent): \
         what it took in was lost on its way to the sink, queued behind the flood on one CPU \
         (receive livelock), so this rate is not the gateway's capacity (pin the sink to a \
         CPU of its own, or `fwbench ndr` for the rate it carries without loss)",
        // Two decimals: 231 of 505 408 is 0.05 %, not 0.0 %.
        received as f64 / sent as f64 * 100.0
    ))
}

/// The share of a shared CPU the machine's other load may take before a flood's rate
/// counts as disturbed (on a quiet machine it is a few %).
pub const OTHERS_MAX: f64 = 1.0 / 3.0;

/// A flood whose sender shared a saturated CPU with the gateway's softirq while the
/// machine's other load (other processes: a compile) took at least [`OTHERS_MAX`] of
/// it: its rate is the share the path got — a max-rate flood through 10 000 nft rules
/// sent 2 752 packets in 2 s with the sender at 19 % and the softirq at 31 % of a CPU
/// 100 % busy. The sink's share is counted as the path's too (it may share the CPU),
/// so the others' share is never overstated. `None` for a paced trial or without the
/// figures. Pure.
pub fn disturbed(c: &RateCounters) -> Option<String> {
    let s = c.shared_cpu?;
    if c.paced || s.busy < BUSY {
        return None;
    }
    let (sender, sink) = (c.sender_cpu?, c.sink_cpu.unwrap_or(0.0));
    let others = s.busy - sender - s.softirq - sink;
    if others < OTHERS_MAX {
        return None;
    }
    Some(format!(
        "the machine's other load took {:.0} % of CPU {}, which the sender and the gateway's \
         packet processing shared (sender {:.0} %, its softirq {:.0} %): the rate is the share \
         they got, neither's limit (run on a quiet machine, or pin them apart)",
        others * 100.0,
        s.cpu,
        sender * 100.0,
        s.softirq * 100.0
    ))
}

/// A queue that filled through a trial is flagged when it held more than this share of
/// what the trial counted (ndr's default precision; the floor under a search's own).
/// The default experiment's 120 floods here (2 s, up to 10 000 rules) held at most
/// 0.6 % where their delays had a queue's shape.
pub const QUEUE_SHARE_FLOOR: f64 = 0.02;

/// The share of a trial's received packets that a queue filling through it held, from
/// the one-way delays' percentiles and the trial's traffic phase (`duration_s`); `None`
/// when the delays do not show a queue that filled (or none were measured). Pure.
///
/// A rate above what the path forwards fills its queues (the gateway's receive backlog;
/// the sink's, where its stamps are taken after it): each packet waits longer than the
/// one before, so the delays spread evenly over their range `g` (from the least to the
/// 99th percentile, one late packet no measure of it) — the median half-way up, the
/// 90th percentile nine-tenths of the way. The packets sent over `T` then left over
/// `T + g`: the path forwards `g / (T + g)` less than the rate counted over `T` (RFC
/// 2544 counts a trial's frames,
/// not when they arrived) — seen with 20 000 nft rules, `ndr -t 1`: 4 125 pps found,
/// the delay at that rate rising from 0.7 to 350 ms (about 3 050 pps forwarded; `-t 5`
/// found 3 263). Not a queue that filled: a stall of the machine (a few packets
/// delayed, the median low); a queue that stands but does not grow (its delays spread
/// unevenly: a flood through 10 000 rules, median 42 % of the way up, 90th percentile
/// at 76 %); a queue that filled at once and stayed full (a shaper's, or a
/// flood's backlog: the median near the top), whose loss is the trial's measure.
pub fn queue_share(owd: &proto::RttSummary, duration_s: f64) -> Option<f64> {
    if owd.count == 0 || owd.p99_ns <= owd.min_ns || duration_s <= 0.0 {
        return None;
    }
    let range = (owd.p99_ns - owd.min_ns) as f64;
    let up = |ns: u64| ns.saturating_sub(owd.min_ns) as f64 / range;
    let g = range / 1e9;
    let even = (0.35..=0.65).contains(&up(owd.p50_ns)) && up(owd.p90_ns) >= 0.8;
    even.then_some(g / (duration_s + g))
}

/// A paced packet trial whose delays show a queue that held more than
/// [`QUEUE_SHARE_FLOOR`] of what it received ([`queue_share`]): the rate received
/// counts what that queue held, and the path forwards as little as the rest. `None`
/// otherwise; for a flood (its sender sets no rate to hold: the gateway's limit is its
/// measure); and where the sender's own lateness (`max_lag_ns`: the delays count from
/// when each packet was due) reached half the delays' growth or more — then the growth
/// may be the sender's, said by [`late_sender`] beyond its bound. Pure.
pub fn queue_filled(
    owd: &proto::RttSummary,
    elapsed_s: f64,
    c: &RateCounters,
    max_lag_ns: u64,
    received_pps: f64,
) -> Option<String> {
    if !c.paced {
        return None;
    }
    let share = queue_share(owd, elapsed_s).filter(|s| *s > QUEUE_SHARE_FLOOR)?;
    if max_lag_ns.saturating_mul(2) >= owd.p99_ns.saturating_sub(owd.min_ns) {
        return None;
    }
    let ms = |ns: u64| format!("{:.1} ms", ns as f64 / 1e6);
    Some(format!(
        "the one-way delay rose evenly through the trial, from {} to {} (99th percentile; \
         median {}): a queue on the path filled, and the rate received counts what it held \
         — the path forwards as little as {:.0} pps, {:.1} % below the {:.0} pps received \
         over the {}-s trial (a longer trial, -t, tells)",
        ms(owd.min_ns),
        ms(owd.p99_ns),
        ms(owd.p50_ns),
        received_pps * (1.0 - share),
        share * 100.0,
        received_pps,
        (elapsed_s * 100.0).round() / 100.0
    ))
}

/// One-way delays planted from their least, median, 90th and 99th percentiles and
/// greatest, µs (as the terminal prints them), over `count` packets: the figures the
/// queue's tests are written in.
#[cfg(test)]
pub(crate) fn owd_us(count: u64, us: [f64; 5]) -> proto::RttSummary {
    let ns = |us: f64| (us * 1e3).round() as u64;
    proto::RttSummary {
        count,
        min_ns: ns(us[0]),
        p50_ns: ns(us[1]),
        p90_ns: ns(us[2]),
        p99_ns: ns(us[3]),
        max_ns: ns(us[4]),
        ..Default::default()
    }
}

/// The share of a trial's traffic phase a paced sender may fall behind its schedule
/// before the trial is flagged (no events measured).
pub const LATE_SHARE: f64 = 0.1;

/// A paced sender that fell behind its schedule (`max_lag_ns`, its largest lag of a
/// send behind its intended time) by more than the trial can bear. With gateway events
/// measured (`update_before_ns`: each update's window before its commit, the baseline
/// its stall and loss are compared with): more than that window — the background of
/// the window before an update may then have left after the commit, and what the
/// update's figures say of the gateway may be the sender's lateness (a `flow` with
/// `--event add:1@1500ms` was 118.7 ms behind). Without events: more than
/// [`LATE_SHARE`] of the traffic phase (`elapsed_ns`) — a tenth of the trial's traffic
/// left on another schedule than the one asked for. `None` within the bound (an
/// unpaced sender has no lag). Pure.
pub fn late_sender(
    max_lag_ns: u64,
    elapsed_ns: u64,
    update_before_ns: Option<u64>,
) -> Option<String> {
    let ms = |ns: u64| ns as f64 / 1e6;
    match update_before_ns {
        Some(before) if max_lag_ns > before => Some(format!(
            "the sender fell behind its schedule by up to {:.1} ms, more than the {:.0} ms \
             before each update its figures are compared with: the background may not have \
             arrived on time, so the updates' stall and loss may be the sender's",
            ms(max_lag_ns),
            ms(before)
        )),
        Some(_) => None,
        None if max_lag_ns as f64 > elapsed_ns as f64 * LATE_SHARE => Some(format!(
            "the sender fell behind its schedule by up to {:.1} ms, more than {:.0} % of the \
             trial's {:.1} s of traffic: the load was not offered on the schedule asked for",
            ms(max_lag_ns),
            LATE_SHARE * 100.0,
            elapsed_ns as f64 / 1e9
        )),
        None => None,
    }
}

/// One stage of the path: the frames it lost, the role it charges, why, and how many
/// of those may be frames of a link's own (neighbour discovery, [`RateCounters::back`]):
/// those its upstream count holds beyond what its downstream count holds of its own.
type Stage = (u64, LimitedBy, String, u64);

/// The frames each stage of the path lost, in path order, with the role it charges
/// and why (the gateway's ingress backlog, the way to the gateway, its forwarding, the
/// way to the sink, the sink's count), and the index of the first stage past the
/// gateway's ingress (where the firewall acts). A stage after an interface's count may
/// show that interface's link's own frames as lost (a slow flow's 103 packets counted
/// as 106 at the sink's interface, 3 frames of neighbour discovery): each stage says
/// how many ([`Stage`]).
fn path_stages(c: &RateCounters, unit: &str) -> (Vec<Stage>, usize) {
    let n = c.frames_per_datagram.max(1);
    let (sent, received) = (c.sent * n, c.received * n);
    let mut stages: Vec<Stage> = vec![];
    let mut at = sent;
    // The frames of its link's own the count `at` holds.
    let mut own = 0;
    let mut from = "sent";
    if let Some(g_in) = c.gateway_in {
        let lost = at.saturating_sub(g_in);
        // What the gateway's ingress dropped on receipt is its own backlog's overflow.
        let backlog = c.gateway_in_dropped.unwrap_or(0).min(lost);
        stages.push((
            backlog,
            LimitedBy::Gateway,
            format!(
                "the gateway's ingress dropped {backlog} of {at} {unit} {from} on receipt \
                 (its receive backlog overflowed: its packet processing did not keep up)"
            ),
            own,
        ));
        let lost = lost - backlog;
        let (by, ahead) = match (c.in_driver, busy(c.gateway_cpu)) {
            (true, _) => (
                LimitedBy::Gateway,
                " (dropped in front of its XDP program, which did not take them in time)",
            ),
            (false, true) => (LimitedBy::Gateway, ""),
            (false, false) => (LimitedBy::Sender, ""),
        };
        stages.push((
            lost,
            by,
            format!("{lost} of {at} {unit} {from} did not reach the gateway{ahead}"),
            own,
        ));
        at = g_in;
        own = c.back.client_link;
        from = "into the gateway";
    }
    let firewall = stages.len();
    if let Some(g_out) = c.gateway_out {
        let lost = at.saturating_sub(g_out);
        stages.push((
            lost,
            LimitedBy::Gateway,
            format!("the gateway forwarded {g_out} of {at} {unit}"),
            own.saturating_sub(c.back.sink_link),
        ));
        at = g_out;
        own = c.back.sink_link;
        from = "forwarded";
    }
    if let Some(s_in) = c.sink_in {
        let lost = at.saturating_sub(s_in);
        let by = if busy(c.sink_cpu) || c.gateway_out.is_none() {
            LimitedBy::Sink
        } else {
            LimitedBy::Gateway
        };
        stages.push((
            lost,
            by,
            format!("{lost} of {at} {unit} {from} did not reach the sink's interface"),
            own.saturating_sub(c.back.sink_link),
        ));
        at = s_in;
        own = c.back.sink_link;
    }
    let lost = at.saturating_sub(received);
    let counted = match n {
        1 => format!("counted {received}"),
        _ => format!("reassembled {} datagrams ({received} {unit})", c.received),
    };
    stages.push((
        lost,
        LimitedBy::Sink,
        format!("the sink {counted} of the {at} {unit} that reached it"),
        own,
    ));
    (stages, firewall)
}

fn judge(c: &RateCounters, tolerance: f64) -> (LimitedBy, String) {
    // Along the path in frames, as the interfaces count them: fragmented datagrams as
    // their fragments.
    let n = c.frames_per_datagram.max(1);
    let (unit, datagrams) = match n {
        1 => ("packets", "packets"),
        _ => ("IP fragments", "datagrams"),
    };
    let sent = c.sent * n;
    let allowed = (sent as f64 * tolerance).floor() as u64;
    let (mut stages, firewall) = path_stages(c, unit);
    // The marker's packets the update's rule dropped: not lost, wherever past the
    // gateway's ingress they show (forwarded: between ingress and egress; input: at the
    // sink's count). `firewall` is the first stage past the ingress.
    let mut intended = c.marker_dropped * n;
    let mut excused = 0;
    for (lost, _, why, _) in stages.iter_mut().skip(firewall) {
        let take = intended.min(*lost);
        if take > 0 {
            *why += &format!(
                " ({take} of the {lost} missing there marker {unit} dropped by the update's \
                 rule, as intended)"
            );
            *lost -= take;
            intended -= take;
            excused += take;
        }
    }
    // What the trial lost, end to end (the sender's and the sink's own counts), less the
    // marker's drops where they show: the interfaces between count a few frames of
    // their links' own besides (neighbour discovery), which a stage-by-stage sum reads
    // as lost — they place a loss, they do not make one.
    let total = sent.saturating_sub(c.received * n).saturating_sub(excused);
    if total > allowed {
        // The first stage with the largest loss beyond its upstream link's own frames
        // (path order breaks ties); where none is beyond them, as counted.
        let beyond = |s: &Stage| s.0.saturating_sub(s.3);
        let max = stages.iter().map(beyond).max().unwrap_or(0);
        let pick = if max > 0 {
            stages.into_iter().find(|s| beyond(s) == max)
        } else {
            let max = stages.iter().map(|s| s.0).max().unwrap_or(0);
            stages.into_iter().find(|s| s.0 == max)
        };
        if let Some((_, by, why, _)) = pick {
            return (by, why);
        }
    }
    // What a lossless verdict says of the marker's drops.
    let besides = match excused {
        0 => String::new(),
        e => format!(" but the {e} marker {unit} the update's rule dropped, as intended"),
    };
    // A loss within the tolerance counts as none for the verdict, and is said.
    let kept = match total {
        0 => "none was lost".to_string(),
        1 => format!(
            "1 {} was lost, within the {} % a verdict counts as none",
            unit.trim_end_matches('s'),
            (tolerance * 1e5).round() / 1e3
        ),
        t => format!(
            "{t} {unit} were lost, within the {} % a verdict counts as none",
            (tolerance * 1e5).round() / 1e3
        ),
    };
    let behind = c.scheduled.saturating_sub(c.sent);
    let short = !c.paced || behind > (c.scheduled as f64 * tolerance).floor() as u64;
    // The sender had room while the gateway's packet processing was saturated: the
    // gateway held it back (its CPU, shared or not, set the pace).
    let held_back =
        c.sender_cpu.is_some_and(|s| s < BUSY) && c.gateway_cpu.is_some_and(|g| g >= BUSY);
    if short && held_back {
        return (
            LimitedBy::Gateway,
            format!(
                "of the {} {datagrams} sent {kept}{besides}, but the sender had CPU to spare while the gateway's packet processing was saturated: the gateway held it back",
                c.sent
            ),
        );
    }
    if !c.paced {
        return (
            LimitedBy::Sender,
            format!(
                "a flood: the sender got out {} {datagrams}, all as fast as it could, and {kept}{besides}",
                c.sent
            ),
        );
    }
    if short {
        return (
            LimitedBy::Sender,
            format!(
                "the sender got out {} of the {} {datagrams} scheduled, and {kept}{besides}",
                c.sent, c.scheduled
            ),
        );
    }
    let through = match (excused, total) {
        (0, 0) => format!("{} {datagrams} sent and received", c.sent),
        (_, 0) => format!(
            "{} {datagrams} sent, {} received: all{besides}",
            c.sent, c.received
        ),
        _ => format!(
            "{} {datagrams} sent, {} received: {kept}{besides}",
            c.sent, c.received
        ),
    };
    (
        LimitedBy::Nothing,
        format!("the offered rate got through: {through}"),
    )
}

#[cfg(test)]
#[path = "limited_by_tests.rs"]
mod tests;
