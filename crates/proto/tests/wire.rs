//! The control protocol's JSON, pinned: one representative frame of every message,
//! role spec and role result kind, encoded and decoded against fixed text.
//!
//! Owns: the wire fixtures. A change here is a protocol change (bump
//! `PROTOCOL_VERSION`, and think of the results databases that store this JSON).
//! Must not: build values from the fixtures alone; each value is written out in Rust
//! so a renamed field or tag fails to compile or to match.

use proto::*;
use std::net::IpAddr;

/// A rule request as the controller sends it (typed: `fwmodel::Request`).
fn rule_request() -> fwmodel::Request {
    use fwmodel::models::{Addressing, Chain, Model, ModelSpec, Position};
    use fwmodel::{Engine, Ip, NftFamily, Prefix, L4};
    fwmodel::Request {
        engine: Engine::NftSet,
        ip: Ip::V4,
        spec: Some(ModelSpec {
            model: Model::Linear,
            count: 10,
            position: Position::Last,
            chain: Chain::Forward,
            l4: L4::Udp,
            ip: Ip::V4,
            one_way: true,
            dport: None,
            nat_to: None,
        }),
        addressing: Some(Addressing {
            clients: vec![ip("198.18.0.2")],
            client_net: Prefix {
                addr: ip("198.18.0.0"),
                len: 16,
            },
            server: ip("198.19.0.2"),
            server_net: Prefix {
                addr: ip("198.19.0.0"),
                len: 16,
            },
            gateway_client: None,
            gateway_server: None,
        }),
        imported: None,
        nft_family: NftFamily::Ip,
    }
}

/// The gateway's firewall report (typed: `fwmodel::Report`).
fn firewall_report() -> fwmodel::Report {
    fwmodel::Report {
        engine: fwmodel::Engine::NftSet,
        rules: 2,
        elements: 10,
        install_ms: 1.5,
        remove_ms: Some(0.5),
        remove_error: None,
        verdicts: Some(fwmodel::Verdicts {
            matched_packets: 7,
            ok: true,
            ..Default::default()
        }),
        verdicts_error: None,
        settings: fwmodel::Settings {
            table: Some("ip fwbench".into()),
            ..Default::default()
        },
    }
}

fn ip(s: &str) -> IpAddr {
    s.parse().unwrap()
}

fn rtt(base: u64) -> RttSummary {
    RttSummary {
        count: 3,
        min_ns: base,
        mean_ns: base as f64 * 1.5,
        p50_ns: base + 1,
        p90_ns: base + 2,
        p99_ns: base + 3,
        p999_ns: base + 4,
        max_ns: base + 5,
    }
}

fn durations(base: u64) -> Durations {
    Durations {
        count: 2,
        min_ns: base,
        mean_ns: base as f64 + 0.5,
        sd_ns: 0.25,
        p50_ns: base + 1,
        p90_ns: base + 2,
        p99_ns: base + 3,
        max_ns: base + 4,
    }
}

fn if_counters(name: &str) -> IfCounters {
    IfCounters {
        name: name.into(),
        rx_packets: 1,
        rx_bytes: 2,
        rx_dropped: 3,
        tx_packets: 4,
        tx_bytes: 5,
        tx_dropped: 6,
    }
}

fn validation() -> Validation {
    Validation {
        malformed: 1,
        wrong_client: 2,
        wrong_size: 3,
        gaps: 4,
        duplicates: 5,
        reordered: 6,
    }
}

fn role_specs() -> Vec<RoleSpec> {
    vec![
        RoleSpec::EchoServer(EchoServerSpec {
            proto: Proto::Tcp,
            mode: ServerMode::Epoll,
            listen: ip("198.19.0.1"),
            port: 5000,
            clients: 2,
            max_frame: 1024,
            timeout_ms: 500,
        }),
        RoleSpec::EchoClient(EchoClientSpec {
            proto: Proto::Udp,
            sources: vec![ip("198.18.0.2"), ip("2001:2::2")],
            server: ip("198.19.0.1"),
            port: 5000,
            frame: FrameSize::Ranged { lo: 64, hi: 1024 },
            seed: 42,
            timeout_ms: 500,
            // None: the pinned frame below stays what older controllers send.
            events: None,
        }),
        RoleSpec::Gateway(GatewaySpec {
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            firewall: Some(Box::new(rule_request())),
            steer_cpus: Some("1".into()),
            proxy: Some(ProxySpec {
                listen: ip("198.18.0.1"),
                port: 8080,
                upstream: ip("198.19.0.2"),
                upstream_port: 80,
                buffer: 16384,
            }),
            // Empty: the pinned frame below stays what older controllers send.
            events: vec![],
            conntrack: None,
        }),
        RoleSpec::UdpSource(UdpSourceSpec {
            sources: vec![ip("198.18.0.2")],
            src_port: 40000,
            dst: ip("198.19.0.2"),
            dsts: vec![],
            dst_port: 9000,
            flows: 4,
            payload: 128,
            // Empty/zero: one size, the pinned frame below unchanged.
            mix: vec![],
            mix_seed: 0,
            pps: Some(1000.5),
            threads: 2,
            batch: 32,
            raw: Some(RawPath {
                ifname: "c0".into(),
                dst_mac: "02:00:00:00:00:01".into(),
                xdp: false,
            }),
            first_flow: 0,
            new_flows: false,
        }),
        RoleSpec::UdpSink(UdpSinkSpec {
            listen: ip("2001:2::1"),
            port: 9000,
            threads: 1,
            flows: 4,
            xdp: None,
            payload: 1500,
            bin_ns: 0,
            sources: false,
            owd_groups: vec![],
            in_gateway: false,
        }),
        RoleSpec::Ping(PingSpec {
            source: ip("198.18.0.2"),
            server: ip("198.19.0.2"),
            port: 7,
            payload: 8,
            count: Some(100),
            interval_ns: 1_000_000,
            timeout_ms: 500,
            events: None,
        }),
        RoleSpec::Reflector(ReflectorSpec {
            listen: ip("198.19.0.2"),
            port: 7,
        }),
        RoleSpec::TcpServer(TcpServerSpec {
            listen: ip("198.19.0.2"),
            port: 8000,
            backlog: 1024,
            external: Some("nginx".into()),
            objects: vec![1000, 1_000_000],
        }),
        RoleSpec::SessionClient(SessionClientSpec {
            mode: ConnMode::Bulk,
            server: ip("198.19.0.2"),
            port: 8000,
            source: Some(ip("198.18.0.2")),
            sources: Vec::new(),
            parallel: 4,
            count: None,
            request: 16,
            response: 1_000_000,
            timeout_ms: 2000,
            overhead_sessions: 10,
            hold_limit: 0,
            verify: true,
            external: None,
            events: None,
        }),
    ]
}

fn role_results() -> Vec<RoleResults> {
    let mut c = Counter::default();
    c.add(100);
    vec![
        RoleResults::EchoClient(EchoClientResults {
            clients: vec![EchoClientStats {
                client: 1,
                source: "198.18.0.2".into(),
                mp1: c,
                mp4: c,
                unsent: 1,
                lost: 2,
                validation: validation(),
                rtt: rtt(1000),
                elapsed_ns: 5,
                error: Some("connection reset".into()),
            }],
            rtt: rtt(1000),
            elapsed_ns: 6,
            // None: the pinned frame below is what older agents send, unchanged.
            events: None,
        }),
        RoleResults::EchoServer(EchoServerResults {
            clients: vec![EchoServerStats {
                client: 1,
                mp2: c,
                mp3: c,
                unsent: 0,
                validation: Validation::default(),
                error: None,
            }],
        }),
        RoleResults::Gateway(GatewayResults {
            sysctls: vec![("net.ipv4.ip_forward".into(), "1".into())],
            firewall: Some(Box::new(firewall_report())),
            interfaces: vec![if_counters("g0")],
            proxy: Some(ProxyResults {
                connections: 1,
                upstream_failures: 2,
                bytes_up: 3,
                bytes_down: 4,
                max_open: 5,
                errors: 6,
                first_error: Some("refused".into()),
            }),
            // None: the pinned frame below is what older agents send, unchanged.
            residue: None,
            // Empty: likewise (no events scheduled).
            updates: vec![],
            // None: likewise (no conntrack workload).
            conntrack: None,
        }),
        RoleResults::UdpSource(UdpSourceResults {
            sent: c,
            sent_per_flow: vec![1, 0],
            scheduled: 2,
            elapsed_ns: 3,
            max_lag_ns: 4,
            send_errors: 5,
            sent_sizes: vec![],
            // None: the pinned frame below is what older agents send, unchanged.
            xdp: None,
        }),
        RoleResults::UdpSink(UdpSinkResults {
            received: c,
            unstamped: 1,
            flows: vec![FlowRx {
                flow: 0,
                received: 1,
                bytes: 100,
                duplicates: 0,
                reordered: 0,
                owd: rtt(2000),
                jitter_ns: 12.5,
                bins: None,
            }],
            owd: rtt(2000),
            active_ns: 7,
            kernel: UdpKernelCounters {
                in_datagrams: 1,
                no_ports: 2,
                in_errors: 3,
                rcvbuf_errors: 4,
            },
            interfaces: vec![if_counters("s0")],
            sizes: vec![],
            sources: vec![],
            other_sources: 0,
            xdp: None,
            // Empty: the pinned frame below unchanged.
            owd_groups: vec![],
        }),
        RoleResults::Ping(PingResults {
            sent: 3,
            received: 2,
            lost: 1,
            invalid: 0,
            rtt: rtt(3000),
            elapsed_ns: 9,
            finished: true,
            events: None,
        }),
        RoleResults::Reflector(ReflectorResults { echoed: c }),
        RoleResults::TcpServer(TcpServerResults {
            accepted: 1,
            sessions: 2,
            http_requests: 3,
            bytes_sent: 4,
            bytes_received: 5,
            bad_requests: 0,
            errors: 0,
            first_error: None,
            max_open: 6,
            accept_errors: 0,
            external: Some("nginx 1.22.1".into()),
        }),
        RoleResults::SessionClient(Box::new(SessionClientResults {
            mode: ConnMode::Hold,
            parallel: 1,
            sessions: 2,
            failed: 1,
            errors: vec![("timed out".into(), 1)],
            elapsed_ns: 3,
            bytes: 4,
            corrupt: 0,
            session: durations(10),
            connect: durations(20),
            ttfb: durations(30),
            ttlb: durations(40),
            overhead: Some(durations(50)),
            session_us: vec![11, 12],
            hold: Some(HoldResults {
                reached: 5,
                limit: 10,
                alive_at_stop: 5,
                limiter: "limit".into(),
                errno: Some(24),
                open_ms: 1.25,
                // Pinned frame of an older agent: the limits are optional.
                nofile_before: None,
                nofile: None,
            }),
            external: None,
            events: None,
        })),
    ]
}

fn to_agent() -> Vec<ToAgent> {
    let mut v = vec![ToAgent::Hello { version: 3 }];
    v.extend(role_specs().into_iter().map(ToAgent::Setup));
    v.extend([
        ToAgent::Start,
        ToAgent::Poll,
        ToAgent::Tally,
        ToAgent::Stop,
        ToAgent::Teardown,
    ]);
    v
}

fn from_agent() -> Vec<FromAgent> {
    let mut v = vec![
        FromAgent::Hello {
            version: 3,
            agent: AgentInfo {
                fwbench_version: "0.1.0".into(),
                pid: 42,
                hostname: "bench".into(),
                kernel: "6.1.0".into(),
                cpus: "0-1".into(),
            },
        },
        FromAgent::Ready,
        FromAgent::Started,
        FromAgent::Progress {
            count: 7,
            done: false,
        },
        FromAgent::Progress {
            count: 8,
            done: true,
        },
        FromAgent::Tally(Tally {
            t_ns: 1_000_000_000,
            count: 20_000,
            bytes: 360_000,
            rtt_sum_ns: 0,
        }),
        FromAgent::Tally(Tally {
            t_ns: 5,
            count: 2,
            bytes: 128,
            rtt_sum_ns: 90_000,
        }),
    ];
    for (i, results) in role_results().into_iter().enumerate() {
        let samples = if i == 0 {
            vec![MetricSample {
                t_s: 0.2,
                metric: "cpu1.softirq".into(),
                value: 12.5,
            }]
        } else {
            vec![]
        };
        v.push(FromAgent::Results { results, samples });
    }
    v.push(FromAgent::Error(AgentError {
        kind: ErrorKind::Unavailable,
        message: "SCTP is not available".into(),
    }));
    v.push(FromAgent::Done);
    v
}

/// Encode each message, check each frame's body is the one in `want` exactly (as many
/// as messages), and decode it back.
fn pinned<T>(msgs: &[T], want: &[&str])
where
    T: serde::Serialize + serde::de::DeserializeOwned + PartialEq + std::fmt::Debug,
{
    assert_eq!(msgs.len(), want.len());
    for (msg, want) in msgs.iter().zip(want) {
        let frame = encode(msg).unwrap();
        let body = std::str::from_utf8(&frame[4..]).unwrap();
        assert_eq!(body, *want);
        let mut d = Decoder::new();
        d.push(&frame);
        assert_eq!(d.next_frame::<T>().unwrap().as_ref(), Some(msg));
        d.finish().unwrap();
    }
}

#[test]
fn controller_frames_are_pinned() {
    pinned(&to_agent(), TO_AGENT);
}

#[test]
fn agent_frames_are_pinned() {
    pinned(&from_agent(), FROM_AGENT);
}

#[test]
fn fixtures_cover_every_kind() {
    let mut to: Vec<&str> = to_agent().iter().map(ToAgent::name).collect();
    to.dedup();
    assert_eq!(
        to,
        ["hello", "setup", "start", "poll", "tally", "stop", "teardown"]
    );
    let mut from: Vec<&str> = from_agent().iter().map(FromAgent::name).collect();
    from.dedup();
    assert_eq!(
        from,
        ["hello", "ready", "started", "progress", "tally", "results", "error", "done"]
    );
    // One of each role spec and role result variant.
    assert_eq!(role_specs().len(), 9);
    assert_eq!(role_results().len(), 9);
}

/// Gateway events of a request–response client: the spec's bins and marker source,
/// and the results' transaction bins, through the codec and back.
#[test]
fn stream_events_round_trip() {
    let spec = RoleSpec::SessionClient(SessionClientSpec {
        mode: ConnMode::Sessions,
        server: ip("198.19.0.2"),
        port: 21000,
        source: Some(ip("198.18.1.1")),
        sources: Vec::new(),
        parallel: 2,
        count: None,
        request: 64,
        response: 512,
        timeout_ms: 5000,
        overhead_sessions: 0,
        hold_limit: 0,
        verify: true,
        external: None,
        events: Some(StreamEventsSpec {
            bin_ns: 1_000_000,
            marker_source: Some(ip("198.18.1.2")),
        }),
    });
    let bins = TxnBins {
        width_ns: 1_000_000,
        origin_ns: 1_700_000_000_000_000_000,
        done: vec![3, 0],
        failed: vec![0, 2],
        latency_sum_us: vec![90, 0],
        latency_max_us: vec![40, 0],
        first_done: Some((1_700_000_000_000_000_100, 30_000)),
        last_done: Some((1_700_000_000_000_900_000, 20_000)),
        failed_after_last: Some(1_700_000_000_001_000_000),
        failed_before_first: 0,
    };
    let results = RoleResults::Ping(PingResults {
        sent: 5,
        received: 3,
        lost: 2,
        invalid: 0,
        rtt: rtt(3000),
        elapsed_ns: 9,
        finished: false,
        events: Some(Box::new(TxnStreams {
            marker_source: Some(ip("198.18.1.2")),
            marker: bins.clone(),
            background: bins,
            background_streams: 1,
        })),
    });
    let msg = ToAgent::Setup(spec);
    let mut d = Decoder::new();
    d.push(&encode(&msg).unwrap());
    assert_eq!(d.next_frame::<ToAgent>().unwrap(), Some(msg));
    let msg = FromAgent::Results {
        results,
        samples: vec![],
    };
    let frame = encode(&msg).unwrap();
    assert!(std::str::from_utf8(&frame[4..])
        .unwrap()
        .contains(r#""failed_after_last":1700000000001000000"#));
    let mut d = Decoder::new();
    d.push(&frame);
    assert_eq!(d.next_frame::<FromAgent>().unwrap(), Some(msg));
}

/// Frame bodies (JSON text) the controller sends, in the order of `to_agent()`.
const TO_AGENT: &[&str] = &[
    r#"{"type":"hello","version":3}"#,
    r#"{"type":"setup","role":"echo_server","proto":"tcp","mode":"epoll","listen":"198.19.0.1","port":5000,"clients":2,"max_frame":1024,"timeout_ms":500}"#,
    r#"{"type":"setup","role":"echo_client","proto":"udp","sources":["198.18.0.2","2001:2::2"],"server":"198.19.0.1","port":5000,"frame":{"kind":"ranged","lo":64,"hi":1024},"seed":42,"timeout_ms":500}"#,
    r#"{"type":"setup","role":"gateway","sysctls":[["net.ipv4.ip_forward","1"]],"firewall":{"engine":"nft-set","ip":"V4","spec":{"model":"linear","count":10,"position":"last","chain":"forward","l4":"udp","ip":"V4","one_way":true},"addressing":{"clients":["198.18.0.2"],"client_net":{"addr":"198.18.0.0","len":16},"server":"198.19.0.2","server_net":{"addr":"198.19.0.0","len":16}},"imported":null,"nft_family":"ip"},"steer_cpus":"1","proxy":{"listen":"198.18.0.1","port":8080,"upstream":"198.19.0.2","upstream_port":80,"buffer":16384}}"#,
    r#"{"type":"setup","role":"udp_source","sources":["198.18.0.2"],"src_port":40000,"dst":"198.19.0.2","dst_port":9000,"flows":4,"payload":128,"pps":1000.5,"threads":2,"batch":32,"raw":{"ifname":"c0","dst_mac":"02:00:00:00:00:01"}}"#,
    r#"{"type":"setup","role":"udp_sink","listen":"2001:2::1","port":9000,"threads":1,"flows":4,"payload":1500}"#,
    r#"{"type":"setup","role":"ping","source":"198.18.0.2","server":"198.19.0.2","port":7,"payload":8,"count":100,"interval_ns":1000000,"timeout_ms":500}"#,
    r#"{"type":"setup","role":"reflector","listen":"198.19.0.2","port":7}"#,
    r#"{"type":"setup","role":"tcp_server","listen":"198.19.0.2","port":8000,"backlog":1024,"external":"nginx","objects":[1000,1000000]}"#,
    r#"{"type":"setup","role":"session_client","mode":"bulk","server":"198.19.0.2","port":8000,"source":"198.18.0.2","parallel":4,"request":16,"response":1000000,"timeout_ms":2000,"overhead_sessions":10,"hold_limit":0,"verify":true}"#,
    r#"{"type":"start"}"#,
    r#"{"type":"poll"}"#,
    r#"{"type":"tally"}"#,
    r#"{"type":"stop"}"#,
    r#"{"type":"teardown"}"#,
];

/// Frame bodies (JSON text) agents send, in the order of `from_agent()`.
const FROM_AGENT: &[&str] = &[
    r#"{"type":"hello","version":3,"agent":{"fwbench_version":"0.1.0","pid":42,"hostname":"bench","kernel":"6.1.0","cpus":"0-1"}}"#,
    r#"{"type":"ready"}"#,
    r#"{"type":"started"}"#,
    r#"{"type":"progress","count":7}"#,
    r#"{"type":"progress","count":8,"done":true}"#,
    r#"{"type":"tally","t_ns":1000000000,"count":20000,"bytes":360000}"#,
    r#"{"type":"tally","t_ns":5,"count":2,"bytes":128,"rtt_sum_ns":90000}"#,
    r#"{"type":"results","results":{"role":"echo_client","clients":[{"client":1,"source":"198.18.0.2","mp1":{"frames":1,"bytes":100},"mp4":{"frames":1,"bytes":100},"unsent":1,"lost":2,"validation":{"malformed":1,"wrong_client":2,"wrong_size":3,"gaps":4,"duplicates":5,"reordered":6},"rtt":{"count":3,"min_ns":1000,"mean_ns":1500.0,"p50_ns":1001,"p90_ns":1002,"p99_ns":1003,"p999_ns":1004,"max_ns":1005},"elapsed_ns":5,"error":"connection reset"}],"rtt":{"count":3,"min_ns":1000,"mean_ns":1500.0,"p50_ns":1001,"p90_ns":1002,"p99_ns":1003,"p999_ns":1004,"max_ns":1005},"elapsed_ns":6},"samples":[{"t_s":0.2,"metric":"cpu1.softirq","value":12.5}]}"#,
    r#"{"type":"results","results":{"role":"echo_server","clients":[{"client":1,"mp2":{"frames":1,"bytes":100},"mp3":{"frames":1,"bytes":100},"unsent":0,"validation":{"malformed":0,"wrong_client":0,"wrong_size":0,"gaps":0,"duplicates":0,"reordered":0}}]}}"#,
    r#"{"type":"results","results":{"role":"gateway","sysctls":[["net.ipv4.ip_forward","1"]],"firewall":{"engine":"nft-set","rules":2,"elements":10,"install_ms":1.5,"remove_ms":0.5,"remove_error":null,"verdicts":{"matched_packets":7,"idle_match_rules":0,"filler_packets":0,"policy_drops":0,"ok":true,"problems":[]},"verdicts_error":null,"settings":{"table":"ip fwbench"}},"interfaces":[{"name":"g0","rx_packets":1,"rx_bytes":2,"rx_dropped":3,"tx_packets":4,"tx_bytes":5,"tx_dropped":6}],"proxy":{"connections":1,"upstream_failures":2,"bytes_up":3,"bytes_down":4,"max_open":5,"errors":6,"first_error":"refused"}}}"#,
    r#"{"type":"results","results":{"role":"udp_source","sent":{"frames":1,"bytes":100},"sent_per_flow":[1,0],"scheduled":2,"elapsed_ns":3,"max_lag_ns":4,"send_errors":5}}"#,
    r#"{"type":"results","results":{"role":"udp_sink","received":{"frames":1,"bytes":100},"unstamped":1,"flows":[{"flow":0,"received":1,"bytes":100,"duplicates":0,"reordered":0,"owd":{"count":3,"min_ns":2000,"mean_ns":3000.0,"p50_ns":2001,"p90_ns":2002,"p99_ns":2003,"p999_ns":2004,"max_ns":2005},"jitter_ns":12.5}],"owd":{"count":3,"min_ns":2000,"mean_ns":3000.0,"p50_ns":2001,"p90_ns":2002,"p99_ns":2003,"p999_ns":2004,"max_ns":2005},"active_ns":7,"kernel":{"in_datagrams":1,"no_ports":2,"in_errors":3,"rcvbuf_errors":4},"interfaces":[{"name":"s0","rx_packets":1,"rx_bytes":2,"rx_dropped":3,"tx_packets":4,"tx_bytes":5,"tx_dropped":6}]}}"#,
    r#"{"type":"results","results":{"role":"ping","sent":3,"received":2,"lost":1,"invalid":0,"rtt":{"count":3,"min_ns":3000,"mean_ns":4500.0,"p50_ns":3001,"p90_ns":3002,"p99_ns":3003,"p999_ns":3004,"max_ns":3005},"elapsed_ns":9,"finished":true}}"#,
    r#"{"type":"results","results":{"role":"reflector","echoed":{"frames":1,"bytes":100}}}"#,
    r#"{"type":"results","results":{"role":"tcp_server","accepted":1,"sessions":2,"http_requests":3,"bytes_sent":4,"bytes_received":5,"bad_requests":0,"errors":0,"max_open":6,"accept_errors":0,"external":"nginx 1.22.1"}}"#,
    r#"{"type":"results","results":{"role":"session_client","mode":"hold","parallel":1,"sessions":2,"failed":1,"errors":[["timed out",1]],"elapsed_ns":3,"bytes":4,"corrupt":0,"session":{"count":2,"min_ns":10,"mean_ns":10.5,"sd_ns":0.25,"p50_ns":11,"p90_ns":12,"p99_ns":13,"max_ns":14},"connect":{"count":2,"min_ns":20,"mean_ns":20.5,"sd_ns":0.25,"p50_ns":21,"p90_ns":22,"p99_ns":23,"max_ns":24},"ttfb":{"count":2,"min_ns":30,"mean_ns":30.5,"sd_ns":0.25,"p50_ns":31,"p90_ns":32,"p99_ns":33,"max_ns":34},"ttlb":{"count":2,"min_ns":40,"mean_ns":40.5,"sd_ns":0.25,"p50_ns":41,"p90_ns":42,"p99_ns":43,"max_ns":44},"overhead":{"count":2,"min_ns":50,"mean_ns":50.5,"sd_ns":0.25,"p50_ns":51,"p90_ns":52,"p99_ns":53,"max_ns":54},"session_us":[11,12],"hold":{"reached":5,"limit":10,"alive_at_stop":5,"limiter":"limit","errno":24,"open_ms":1.25}}}"#,
    r#"{"type":"error","kind":"unavailable","message":"SCTP is not available"}"#,
    r#"{"type":"done"}"#,
];
