//! The agent speaks the control protocol on stdin/stdout: phases enforced, errors
//! typed, and a closed stdin makes it undo its setup and exit. No root needed.

mod util;

use proto::{
    encode, Decoder, EchoServerSpec, ErrorKind, FromAgent, Proto, RoleSpec, ServerMode, ToAgent,
    PROTOCOL_VERSION,
};
use std::io::{Read, Write};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

struct Peer {
    child: Child,
    dec: Decoder,
}

impl Peer {
    fn start() -> Peer {
        let child = Command::new(util::bin())
            .arg("agent")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Peer {
            child,
            dec: Decoder::new(),
        }
    }
    fn send_raw(&mut self, b: &[u8]) {
        let w = self.child.stdin.as_mut().unwrap();
        w.write_all(b).unwrap();
        w.flush().unwrap();
    }
    fn send(&mut self, m: &ToAgent) {
        self.send_raw(&encode(m).unwrap());
    }
    fn recv(&mut self) -> FromAgent {
        let out = self.child.stdout.as_mut().unwrap();
        let mut buf = [0u8; 4096];
        loop {
            if let Some(m) = self.dec.next_frame::<FromAgent>().unwrap() {
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
