//! Privileged tests of the AF_XDP sender and sink on a veth pair between two network
//! namespaces created (and removed, also on panic) here: copy mode, exact counts, and
//! the per-flow fields (source address and port per flow, consecutive sequences,
//! send times) as a plain socket sees them.
//!
//! Needs root (netns, veth, AF_XDP, XDP): run with `--include-ignored`. A kernel
//! without AF_XDP fails them with "AF_XDP unavailable in this kernel/interface: …".
//! Addresses come only from the benchmarking ranges 198.18.0.0/15 and 2001:2::/48.

use std::collections::BTreeMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

mod util;
use util::{in_netns, ip, End, Testbed};

use proto::{RawPath, UdpSinkSpec, UdpSourceSpec};
use traffic::probe::Probe;
use traffic::udp::UdpSink;
use traffic::xsk::{XskMode, XskModeRequest, XskSink, XskSinkSpec, XskSource};

/// Namespaces `a` (veth `xa` with `queues` queues, 198.18.0.2 and .3) and `b` (veth
/// `xb`, 198.19.0.2).
fn testbed(tag: &str, queues: u32) -> Testbed {
    let a = End {
        dev: "xa",
        addrs: &["198.18.0.2/15", "198.18.0.3/15"],
    };
    let b = End {
        dev: "xb",
        addrs: &["198.19.0.2/15"],
    };
    Testbed::veth("xsk", tag, queues, a, b)
}

const PORT: u16 = 9;

fn source_spec(bed: &Testbed, flows: u32, payload: u32, pps: f64) -> UdpSourceSpec {
    UdpSourceSpec {
        sources: vec!["198.18.0.2".parse().unwrap(), "198.18.0.3".parse().unwrap()],
        src_port: 30000,
        dst: "198.19.0.2".parse().unwrap(),
        dsts: vec![],
        dst_port: PORT,
        flows,
        payload,
        mix: vec![],
        mix_seed: 0,
        pps: Some(pps),
        threads: 1,
        batch: 64,
        raw: Some(RawPath {
            ifname: "xa".into(),
            dst_mac: Testbed::mac(&bed.b, "xb"),
            xdp: false,
        }),
        first_flow: 0,
        new_flows: false,
    }
}

/// Run an AF_XDP source with `spec` for `run` in namespace `a`.
fn send(bed: &Testbed, spec: UdpSourceSpec, run: Duration) -> traffic::xsk::XskSourceResults {
    in_netns(&bed.a, move || {
        let mut src =
            XskSource::setup(&spec, XskModeRequest::Auto).unwrap_or_else(|e| panic!("{e}"));
        assert_eq!(src.info().mode, XskMode::Copy, "veth has no zero-copy");
        src.start();
        thread::sleep(run);
        src.stop().unwrap_or_else(|e| panic!("{e}"))
    })
    .join()
    .expect("sender thread")
}

/// A sink in namespace `b` (`start` makes it, `stop` gives its results) while the
/// AF_XDP source `spec` sends for `run` from `a`: both results, and when the source
/// started (the sink was ready by then).
fn send_to_sink<S, R: Send + 'static>(
    bed: &Testbed,
    spec: UdpSourceSpec,
    run: Duration,
    start: impl FnOnce() -> S + Send + 'static,
    stop: impl FnOnce(S) -> R + Send + 'static,
) -> (traffic::xsk::XskSourceResults, R, Instant) {
    let (ready_tx, ready_rx) = mpsc::channel();
    let (stop_tx, stop_rx) = mpsc::channel::<()>();
    let sink = in_netns(&bed.b, move || {
        let sink = start();
        ready_tx.send(()).unwrap();
        stop_rx.recv().unwrap();
        stop(sink)
    });
    ready_rx.recv().unwrap();
    let started = Instant::now();
    let res = send(bed, spec, run);
    stop_tx.send(()).unwrap();
    (res, sink.join().expect("sink thread"), started)
}

/// Every flow the sink saw got exactly what the source sent it, none twice.
fn assert_flows_exact(flows: &[proto::FlowRx], sent_per_flow: &[u64]) {
    for f in flows {
        assert_eq!(
            f.received, sent_per_flow[f.flow as usize],
            "flow {}",
            f.flow
        );
        assert_eq!(f.duplicates, 0, "flow {}", f.flow);
    }
}

/// An AF_XDP sink on `xb` for `flows` flows on `queues` queues.
fn xsk_sink_spec(flows: u32, queues: u32) -> XskSinkSpec {
    XskSinkSpec {
        ifname: "xb".into(),
        port: PORT,
        flows,
        queues,
        owd_groups: vec![],
    }
}

#[test]
#[ignore = "needs root: run with --include-ignored"]
fn xsk_sender_fields_per_flow_as_a_socket_sees_them() {
    let bed = testbed("fields", 1);
    let (ready_tx, ready_rx) = mpsc::channel();
    let recv = in_netns(&bed.b, move || {
        let s = UdpSocket::bind(("198.19.0.2", PORT)).expect("bind the receiver");
        s.set_read_timeout(Some(Duration::from_millis(300)))
            .unwrap();
        ready_tx.send(()).unwrap();
        let mut got = Vec::new();
        let mut buf = [0u8; 2048];
        while let Ok((n, from)) = s.recv_from(&mut buf) {
            got.push((from, buf[..n].to_vec()));
        }
        got
    });
    ready_rx.recv().unwrap();
    let before = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_nanos() as u64;
    let spec = source_spec(&bed, 3, 64, 2000.0);
    let res = send(&bed, spec.clone(), Duration::from_millis(300));
    let got = recv.join().expect("receiver thread");
    let r = &res.results;
    assert!(r.sent.frames > 100, "sent only {}", r.sent.frames);
    assert_eq!(res.unsent, 0);
    assert_eq!(res.tx_invalid, 0);
    assert_eq!(got.len() as u64, r.sent.frames, "every frame sent arrived");
    let mut next: BTreeMap<u16, u32> = BTreeMap::new();
    for (from, payload) in &got {
        assert_eq!(payload.len(), 64);
        let p = Probe::parse(payload).expect("a probe in every payload");
        let flow = u32::from(p.flow);
        assert!(flow < 3);
        let want: SocketAddr =
            SocketAddr::new(spec.sources[flow as usize % 2], spec.src_port + p.flow);
        assert_eq!(
            *from, want,
            "flow {flow} comes from its own address and port"
        );
        let seq = next.entry(p.flow).or_insert(0);
        assert_eq!(p.seq, *seq, "flow {flow}: consecutive sequence from 0");
        *seq += 1;
        let tx = p.tx_ns.expect("a send time");
        assert!(
            tx >= before && tx < before + 10_000_000_000,
            "send time {tx}"
        );
        assert!(payload[16..].iter().all(|&b| b == 0), "body is zeros");
    }
    for f in 0..3u16 {
        assert_eq!(
            u64::from(next[&f]),
            r.sent_per_flow[f as usize],
            "flow {f}: sent_per_flow"
        );
    }
}

#[test]
#[ignore = "needs root: run with --include-ignored"]
fn xsk_sender_to_socket_sink_exact_counts() {
    let bed = testbed("udp", 1);
    let sink = UdpSinkSpec {
        listen: "198.19.0.2".parse().unwrap(),
        port: PORT,
        threads: 1,
        flows: 4,
        xdp: None,
        payload: 100,
        bin_ns: 0,
        sources: true,
        owd_groups: vec![],
        in_gateway: false,
    };
    let (res, rx, _) = send_to_sink(
        &bed,
        source_spec(&bed, 4, 100, 50_000.0),
        Duration::from_millis(500),
        move || UdpSink::start(&sink).unwrap_or_else(|e| panic!("{e}")),
        |s| s.stop().unwrap_or_else(|e| panic!("{e}")),
    );
    let r = &res.results;
    assert!(r.sent.frames > 5_000, "sent only {}", r.sent.frames);
    assert_eq!(
        rx.received.frames, r.sent.frames,
        "socket sink got every frame"
    );
    assert_eq!(rx.unstamped, 0);
    // Every packet counted under the source address its flow used (flow i sends
    // from sources[i % 2]).
    let mut sources: Vec<(String, u64)> = rx
        .sources
        .iter()
        .map(|s| (s.addr.to_string(), s.packets))
        .collect();
    sources.sort();
    let per = |i: usize| r.sent_per_flow[i] + r.sent_per_flow[i + 2];
    assert_eq!(
        sources,
        [
            ("198.18.0.2".to_string(), per(0)),
            ("198.18.0.3".to_string(), per(1))
        ]
    );
    assert_eq!(rx.other_sources, 0);
    assert_eq!(rx.flows.len(), 4);
    assert_flows_exact(&rx.flows, &r.sent_per_flow);
    assert!(rx.flows.iter().all(|f| f.reordered == 0), "{:?}", rx.flows);
}

#[test]
#[ignore = "needs root: run with --include-ignored"]
fn xsk_sender_to_xsk_sink_exact_counts_and_delay() {
    let bed = testbed("xsk", 1);
    let (res, rx, started) = send_to_sink(
        &bed,
        source_spec(&bed, 4, 18, 50_000.0),
        Duration::from_millis(500),
        || {
            let sink = XskSink::start(&xsk_sink_spec(4, 1), XskModeRequest::Auto)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sink.info().mode, XskMode::Copy);
            sink
        },
        |s| s.stop().unwrap_or_else(|e| panic!("{e}")),
    );
    let r = &res.results;
    assert!(r.sent.frames > 5_000, "sent only {}", r.sent.frames);
    assert_eq!(
        rx.drops,
        Default::default(),
        "no kernel drops before the socket"
    );
    assert_eq!(rx.not_ours, 0);
    assert_eq!(
        rx.results.received.frames, r.sent.frames,
        "AF_XDP sink got every frame"
    );
    assert_eq!(rx.results.unstamped, 0);
    assert_eq!(rx.results.flows.len(), 4);
    assert_flows_exact(&rx.results.flows, &r.sent_per_flow);
    for f in &rx.results.flows {
        assert_eq!(f.reordered, 0);
        assert_eq!(f.owd.count, f.received, "a delay per packet");
    }
    let owd = &rx.results.owd;
    assert!(
        owd.max_ns < started.elapsed().as_nanos() as u64,
        "delay {owd:?}"
    );
    // The program is gone once the sink stopped: the interface has no XDP left.
    let link = ip(&["-n", &bed.b, "-d", "link", "show", "xb"]);
    assert!(!link.contains("prog/xdp"), "XDP still attached: {link}");
}

#[test]
#[ignore = "needs root: run with --include-ignored"]
fn xsk_sink_refuses_a_missing_interface_clearly() {
    let bed = testbed("missing", 1);
    let e = in_netns(&bed.b, || {
        XskSink::start(
            &XskSinkSpec {
                ifname: "nosuchif0".into(),
                ..xsk_sink_spec(1, 1)
            },
            XskModeRequest::Auto,
        )
        .err()
        .map(|e| e.to_string())
    })
    .join()
    .unwrap()
    .expect("an error");
    assert!(e.contains("nosuchif0"), "{e}");
    // Zero-copy on veth is unavailable, and said so.
    let e = in_netns(&bed.b, || {
        XskSink::start(&xsk_sink_spec(1, 1), XskModeRequest::ZeroCopy)
            .err()
            .map(|e| e.to_string())
    })
    .join()
    .unwrap()
    .expect("an error");
    eprintln!("zero-copy on veth: {e}");
    assert!(
        e.starts_with("AF_XDP unavailable in this kernel/interface: xb:"),
        "{e}"
    );
}

#[test]
#[ignore = "needs root: run with --include-ignored"]
fn two_queues_two_sender_threads_and_two_sink_sockets() {
    let bed = testbed("mq", 2);
    let mut spec = source_spec(&bed, 6, 18, 40_000.0);
    spec.threads = 2;
    let (res, rx, _) = send_to_sink(
        &bed,
        spec,
        Duration::from_millis(500),
        || {
            let sink = XskSink::start(&xsk_sink_spec(6, 2), XskModeRequest::Copy)
                .unwrap_or_else(|e| panic!("{e}"));
            assert_eq!(sink.info().queues, 2);
            sink
        },
        |s| s.stop().unwrap_or_else(|e| panic!("{e}")),
    );
    let r = &res.results;
    assert_eq!(res.xsk.queues, 2);
    assert!(r.sent.frames > 5_000, "sent only {}", r.sent.frames);
    assert_eq!(rx.drops, Default::default());
    assert_eq!(
        rx.results.received.frames, r.sent.frames,
        "every frame, both queues"
    );
    assert_eq!(rx.results.flows.len(), 6);
    assert_flows_exact(&rx.results.flows, &r.sent_per_flow);
}
