//! Sending a set of probe packets (the ruleset advisor's proof on a testbed): one
//! frame per probe class, every class once per round, `rounds` rounds, paced, through
//! an AF_PACKET socket on one interface to the next hop's MAC — so the source
//! addresses need not be the host's own.
//!
//! Owns: the rounds and their pacing. Must not: build frames (`packet::probe_frame`)
//! or read anything back (what arrived is counted by the firewall's rules).

use crate::pacer::Pacer;
use crate::packet::{if_mac, parse_mac, probe_frame, ProbeTuple};
use crate::sys::rawsock::RawSender;
use crate::{sys, TrafficError};

/// Frames handed to the kernel per call.
const BATCH: usize = 32;

/// Send every probe `rounds` times (round-robin, so a burst of loss hits each class
/// at most once per round) at `pps` frames per second; the frames the kernel took.
pub fn send(
    ifname: &str,
    dst_mac: &str,
    probes: &[ProbeTuple],
    rounds: u32,
    pps: f64,
) -> Result<u64, TrafficError> {
    let smac = if_mac(ifname).map_err(|e| TrafficError::io(format!("MAC of {ifname}"), e))?;
    let dmac = parse_mac(dst_mac).map_err(|e| TrafficError::BadSpec(format!("next hop: {e}")))?;
    let frames: Vec<Vec<u8>> = probes
        .iter()
        .map(|p| probe_frame(smac, dmac, p).map_err(TrafficError::BadSpec))
        .collect::<Result<_, _>>()?;
    let mut tx = RawSender::open(ifname)?;
    let total = frames.len() as u64 * u64::from(rounds);
    let mut pacer = Pacer::new(sys::monotonic_ns(), Some(pps));
    let mut sent = 0u64;
    while sent < total {
        let wait = pacer.wait_ns(sys::monotonic_ns());
        if wait > 0 {
            std::thread::sleep(std::time::Duration::from_nanos(wait));
        }
        let due = pacer.due(sys::monotonic_ns(), (total - sent).min(BATCH as u64));
        if due == 0 {
            continue;
        }
        let batch: Vec<&[u8]> = (sent..sent + due)
            .map(|k| frames[(k % frames.len() as u64) as usize].as_slice())
            .collect();
        let n = tx
            .send_batch(&batch)
            .map_err(|e| TrafficError::io(format!("sending probes on {ifname}"), e))?;
        if n == 0 {
            std::thread::sleep(std::time::Duration::from_micros(200));
        }
        pacer.advance(n as u64);
        sent += n as u64;
    }
    Ok(sent)
}
