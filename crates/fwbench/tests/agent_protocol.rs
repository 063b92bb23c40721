//! The agent speaks the control protocol on stdin/stdout: phases enforced, errors
//! typed, and a closed stdin makes it undo its setup and exit. No root needed.

mod util;

use proto::{
    encode, Decoder, EchoServerSpec, ErrorKind, FromAgent, Proto, Reply, Request, RoleSpec,
    ServerMode, ToAgent, PROTOCOL_VERSION,
};
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Peer {
    child: Child,
    dec: Decoder,
    /// Id of the last request sent.
    id: u64,
}

impl Peer {
    fn start() -> Peer {
        Peer::start_with(&[])
    }
    fn start_with(env: &[(&str, &str)]) -> Peer {
        let child = Command::new(util::bin())
            .arg("agent")
            .envs(env.iter().copied())
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Peer {
            child,
            dec: Decoder::new(),
            id: 0,
        }
    }
    fn send_raw(&mut self, b: &[u8]) {
        let w = self.child.stdin.as_mut().unwrap();
        w.write_all(b).unwrap();
        w.flush().unwrap();
    }
    fn send(&mut self, m: &ToAgent) {
        self.id += 1;
        let r = Request {
            id: self.id,
            msg: m.clone(),
        };
        self.send_raw(&encode(&r).unwrap());
    }
    /// The next reply; it must answer the last request (or be about the stream: 0).
    fn recv(&mut self) -> FromAgent {
        let r = self.recv_reply();
        assert!(
            r.id == self.id || r.id == 0,
            "reply {} to request {}",
            r.id,
            self.id
        );
        r.msg
    }
    fn recv_reply(&mut self) -> Reply {
        let out = self.child.stdout.as_mut().unwrap();
        let mut buf = [0u8; 65536];
        loop {
            if let Some(m) = self.dec.next_frame::<Reply>().unwrap() {
                return m;
            }
            let n = out.read(&mut buf).unwrap();
            assert!(n > 0, "agent closed stdout");
            self.dec.push(&buf[..n]);
        }
    }
    fn exits_within(&mut self, secs: u64) -> bool {
        util::wait_for(secs as f64, || matches!(self.child.try_wait(), Ok(Some(_))))
    }
}

fn kind(m: FromAgent) -> ErrorKind {
    match m {
        FromAgent::Error(e) => e.kind,
        other => panic!("expected an error, got {other:?}"),
    }
}

#[test]
fn phases_enforced_and_errors_typed() {
    let mut a = Peer::start();
    a.send(&ToAgent::Start);
    assert_eq!(kind(a.recv()), ErrorKind::Protocol);
    a.send(&ToAgent::Hello {
        version: PROTOCOL_VERSION + 1,
    });
    assert_eq!(kind(a.recv()), ErrorKind::Protocol);
    a.send(&ToAgent::Hello {
        version: PROTOCOL_VERSION,
    });
    assert!(matches!(
        a.recv(),
        FromAgent::Hello {
            version: PROTOCOL_VERSION,
            ..
        }
    ));
    // A bad setup is a typed error and the agent stays usable.
    a.send(&ToAgent::Setup(RoleSpec::EchoServer(EchoServerSpec {
        proto: Proto::Tcp,
        mode: ServerMode::Epoll,
        listen: "127.0.0.1".parse().unwrap(),
        port: 1,
        clients: 0,
        max_frame: 64,
        timeout_ms: 500,
    })));
    assert_eq!(kind(a.recv()), ErrorKind::BadSetup);
    a.send(&ToAgent::Teardown);
    assert_eq!(a.recv(), FromAgent::Done);
    assert!(a.exits_within(5));
}

#[test]
fn stdin_close_undoes_setup_and_exits() {
    let port = {
        let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let mut a = Peer::start();
    a.send(&ToAgent::Hello {
        version: PROTOCOL_VERSION,
    });
    a.recv();
    a.send(&ToAgent::Setup(RoleSpec::EchoServer(EchoServerSpec {
        proto: Proto::Tcp,
        mode: ServerMode::Threads,
        listen: "127.0.0.1".parse().unwrap(),
        port,
        clients: 2,
        max_frame: 64,
        timeout_ms: 500,
    })));
    assert_eq!(a.recv(), FromAgent::Ready);
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_ok(),
        "server listening"
    );
    drop(a.child.stdin.take());
    assert!(a.exits_within(5), "agent did not exit on stdin EOF");
    std::thread::sleep(Duration::from_millis(100));
    assert!(
        std::net::TcpStream::connect(("127.0.0.1", port)).is_err(),
        "listener released"
    );
}

#[test]
fn garbage_and_oversized_frames_rejected() {
    let mut a = Peer::start();
    a.send_raw(&[0, 0, 0, 3, b'{', b'x', b'}']);
    assert_eq!(kind(a.recv()), ErrorKind::Protocol);
    assert!(
        a.exits_within(5),
        "cannot resync after a bad frame: agent must exit"
    );
    let mut b = Peer::start();
    b.send_raw(&u32::MAX.to_be_bytes());
    match b.recv() {
        FromAgent::Error(e) => assert!(e.message.contains("exceeds"), "{}", e.message),
        other => panic!("{other:?}"),
    }
    assert!(b.exits_within(5));
}

fn echo_server(port: u16) -> ToAgent {
    ToAgent::Setup(RoleSpec::EchoServer(EchoServerSpec {
        proto: Proto::Tcp,
        mode: ServerMode::Threads,
        listen: "127.0.0.1".parse().unwrap(),
        port,
        clients: 1,
        max_frame: 64,
        timeout_ms: 500,
    }))
}

fn free_port() -> u16 {
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    l.local_addr().unwrap().port()
}

/// Results far over one 4-MiB frame (here ~3 × 4 MiB of samples, from the agent's
/// test hook) arrive intact, in chunks, as the answer to `stop`.
#[test]
fn results_over_four_mib_arrive_intact() {
    let n = 250_000;
    let mut a = Peer::start_with(&[("FWBENCH_TEST_AGENT_SAMPLES", &n.to_string())]);
    a.send(&ToAgent::Hello {
        version: PROTOCOL_VERSION,
    });
    a.recv();
    a.send(&echo_server(free_port()));
    assert_eq!(a.recv(), FromAgent::Ready);
    a.send(&ToAgent::Start);
    assert_eq!(a.recv(), FromAgent::Started);
    a.send(&ToAgent::Stop);
    let FromAgent::Results { samples, .. } = a.recv() else {
        panic!("no results")
    };
    let hooked: Vec<_> = samples
        .iter()
        .filter(|s| s.metric.starts_with("test."))
        .collect();
    assert_eq!(hooked.len(), n);
    for (i, s) in hooked.iter().enumerate() {
        assert_eq!(s.t_s, i as f64 / 8.0);
        assert_eq!(s.metric, format!("test.cpu{}", i % 64));
        assert_eq!(s.value, (i % 1000) as f64 / 4.0);
    }
    let size = serde_json::to_vec(&samples).unwrap().len();
    assert!(size > 2 * proto::MAX_FRAME_LEN, "only {size} bytes");
    a.send(&ToAgent::Teardown);
    assert_eq!(a.recv(), FromAgent::Done);
    assert!(a.exits_within(5));
}

/// Every reply echoes the id of its request, also errors.
#[test]
fn replies_echo_request_ids() {
    let mut a = Peer::start();
    a.send(&ToAgent::Hello {
        version: PROTOCOL_VERSION,
    });
    assert_eq!(a.recv_reply().id, 1);
    a.send(&ToAgent::Time);
    assert_eq!(a.recv_reply().id, 2);
    a.send(&ToAgent::Start); // not allowed before setup: an error, with its id
    let r = a.recv_reply();
    assert_eq!(r.id, 3);
    assert!(matches!(r.msg, FromAgent::Error(_)));
    a.send(&ToAgent::Teardown);
    assert_eq!(
        a.recv_reply(),
        Reply {
            id: 4,
            msg: FromAgent::Done
        }
    );
}

/// An agent that cannot send its reply (the controller closed its end) exits
/// non-zero with the reason on stderr, never silently with 0.
#[test]
fn an_agent_that_cannot_send_fails_loudly() {
    let mut child = Command::new(util::bin())
        .arg("agent")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    drop(child.stdout.take());
    let hello = Request {
        id: 1,
        msg: ToAgent::Hello {
            version: PROTOCOL_VERSION,
        },
    };
    let mut stdin = child.stdin.take().unwrap();
    stdin.write_all(&encode(&hello).unwrap()).unwrap();
    stdin.flush().unwrap();
    let out = {
        // Keep stdin open until the agent has exited: its exit must come from the
        // failed send, not from the end of its input.
        let status = util::wait_for(10.0, || matches!(child.try_wait(), Ok(Some(_))));
        assert!(status, "agent did not exit after a failed send");
        drop(stdin);
        child.wait_with_output().unwrap()
    };
    assert_ne!(out.status.code(), Some(0), "{:?}", out.status);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("cannot send the hello reply"), "{err}");
}
