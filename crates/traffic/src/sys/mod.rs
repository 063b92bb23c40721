//! Thin, safe wrappers over the few syscalls std lacks: epoll, eventfd, CPU affinity,
//! RLIMIT_NOFILE, and stream-socket creation that recognises a kernel without SCTP.
//! Every `unsafe` block of the crate lives here, each with its `SAFETY` comment.

pub mod rawsock;
pub mod xsk;

use crate::TrafficError;
use proto::Proto;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd, RawFd};
use std::time::Duration;

pub const IPPROTO_SCTP: i32 = 132;

/// Create a stream socket (TCP or SCTP one-to-one style) for `addr`'s family.
/// A kernel without SCTP yields `TrafficError::SctpUnavailable`, never a raw errno.
pub fn stream_socket(proto: Proto, addr: &SocketAddr) -> Result<Socket, TrafficError> {
    let protocol = match proto {
        Proto::Tcp => Protocol::TCP,
        Proto::Sctp => Protocol::from(IPPROTO_SCTP),
        Proto::Udp => return Err(TrafficError::BadSpec("UDP is not a stream protocol".into())),
    };
    Socket::new(Domain::for_address(*addr), Type::STREAM, Some(protocol)).map_err(|e| {
        if proto == Proto::Sctp && is_missing_protocol(&e) {
            TrafficError::SctpUnavailable(e)
        } else {
            TrafficError::io(format!("socket({proto}, {addr})"), e)
        }
    })
}

/// Open (and close) an SCTP stream socket: [`TrafficError::SctpUnavailable`] where the
/// kernel lacks SCTP. The one probe of SCTP support: the controller's `check`, its
/// refusal of a trial before any agent starts, and [`sctp_unavailable`].
pub fn sctp_probe() -> Result<(), TrafficError> {
    stream_socket(
        Proto::Sctp,
        &"127.0.0.1:0".parse().expect("literal address"),
    )
    .map(drop)
}

/// True if the kernel lacks SCTP support.
pub fn sctp_unavailable() -> bool {
    matches!(sctp_probe(), Err(TrafficError::SctpUnavailable(_)))
}

fn is_missing_protocol(e: &io::Error) -> bool {
    matches!(
        e.raw_os_error(),
        Some(libc::EPROTONOSUPPORT) | Some(libc::ESOCKTNOSUPPORT) | Some(libc::EAFNOSUPPORT)
    )
}

pub fn udp_socket(addr: &SocketAddr) -> Result<Socket, TrafficError> {
    Socket::new(Domain::for_address(*addr), Type::DGRAM, Some(Protocol::UDP))
        .map_err(|e| TrafficError::io(format!("socket(udp, {addr})"), e))
}

pub fn set_timeouts(s: &Socket, send: Duration, recv: Duration) -> io::Result<()> {
    s.set_write_timeout(Some(send))?;
    s.set_read_timeout(Some(recv))
}

/// Interest and readiness bits.
pub const EPOLLIN: u32 = libc::EPOLLIN as u32;
pub const EPOLLOUT: u32 = libc::EPOLLOUT as u32;

/// An epoll instance with `u64` tokens.
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Self> {
        // SAFETY: epoll_create1 takes no pointers; a non-negative return is a new fd we own.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    fn ctl(&self, op: i32, fd: RawFd, events: u32, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` is a valid epoll_event for the duration of the call; the kernel copies it.
        let r = unsafe { libc::epoll_ctl(self.fd.as_raw_fd(), op, fd, &mut ev) };
        if r < 0 {
            Err(io::Error::last_os_error())
        } else {
            Ok(())
        }
    }

    pub fn add(&self, fd: &impl AsRawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_ADD, fd.as_raw_fd(), events, token)
    }

    pub fn modify(&self, fd: &impl AsRawFd, events: u32, token: u64) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_MOD, fd.as_raw_fd(), events, token)
    }

    pub fn delete(&self, fd: &impl AsRawFd) -> io::Result<()> {
        self.ctl(libc::EPOLL_CTL_DEL, fd.as_raw_fd(), 0, 0)
    }

    /// Wait up to `timeout`; fills `out` with (token, events). EINTR is an empty wake-up.
    pub fn wait(&self, out: &mut Vec<(u64, u32)>, timeout: Duration) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 64];
        // SAFETY: `evs` is a writable array of 64 epoll_event; we pass its exact length.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                evs.as_mut_ptr(),
                evs.len() as i32,
                timeout.as_millis().min(i32::MAX as u128) as i32,
            )
        };
        out.clear();
        if n < 0 {
            let e = io::Error::last_os_error();
            return if e.kind() == io::ErrorKind::Interrupted {
                Ok(())
            } else {
                Err(e)
            };
        }
        out.extend(evs[..n as usize].iter().map(|e| (e.u64, e.events)));
        Ok(())
    }
}

/// An eventfd used to wake an epoll loop from another thread.
#[derive(Debug)]
pub struct EventFd {
    fd: OwnedFd,
}

impl EventFd {
    pub fn new() -> io::Result<Self> {
        // SAFETY: eventfd takes no pointers; a non-negative return is a new fd we own.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` was just returned by the kernel and is owned by nobody else.
        Ok(EventFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    pub fn wake(&self) {
        let one: u64 = 1;
        // SAFETY: writes 8 bytes from a live u64 to our own eventfd. A full counter
        // (EAGAIN) means a wake-up is already pending, which is all we need.
        unsafe { libc::write(self.fd.as_raw_fd(), &one as *const u64 as *const _, 8) };
    }
}

impl AsRawFd for EventFd {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

/// Pin the calling thread (and threads it spawns later) to `cpus`.
pub fn set_affinity(cpus: &[usize]) -> io::Result<()> {
    // SAFETY: cpu_set_t is plain data; zeroed is its empty value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    for &c in cpus {
        if c >= libc::CPU_SETSIZE as usize {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("CPU {c} out of range"),
            ));
        }
        // SAFETY: `c` is below CPU_SETSIZE, checked above.
        unsafe { libc::CPU_SET(c, &mut set) };
    }
    // SAFETY: `set` is a valid cpu_set_t and we pass its exact size; pid 0 = this thread.
    let r = unsafe { libc::sched_setaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &set) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(())
    }
}

/// CPUs the calling thread may run on.
pub fn get_affinity() -> io::Result<Vec<usize>> {
    // SAFETY: cpu_set_t is plain data; zeroed is its empty value.
    let mut set: libc::cpu_set_t = unsafe { std::mem::zeroed() };
    // SAFETY: `set` is writable and we pass its exact size; pid 0 = this thread.
    let r = unsafe { libc::sched_getaffinity(0, std::mem::size_of::<libc::cpu_set_t>(), &mut set) };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((0..libc::CPU_SETSIZE as usize)
        // SAFETY: `c` is below CPU_SETSIZE.
        .filter(|&c| unsafe { libc::CPU_ISSET(c, &set) })
        .collect())
}

/// Format a CPU list compactly: [0,1,2,5] → "0-2,5".
pub fn format_cpus(cpus: &[usize]) -> String {
    let mut out = Vec::new();
    let mut i = 0;
    while i < cpus.len() {
        let start = cpus[i];
        while i + 1 < cpus.len() && cpus[i + 1] == cpus[i] + 1 {
            i += 1;
        }
        out.push(if cpus[i] == start {
            start.to_string()
        } else {
            format!("{start}-{}", cpus[i])
        });
        i += 1;
    }
    out.join(",")
}

/// Parse "0-2,5" into [0,1,2,5]; the inverse of [`format_cpus`].
/// Make `cmd`'s child get `SIGTERM` when the thread that spawns it exits (its parent
/// died: crashed, killed), so no program we start outlives us as an orphan. The
/// signal follows the *thread*: spawn from a thread that outlives the child (the
/// agent's main loop, a worker that waits for its child). A parent that died before
/// the child set this up is caught by comparing the parent id.
pub fn die_with_parent(cmd: &mut std::process::Command) {
    use std::os::unix::process::CommandExt;
    // SAFETY: getpid has no preconditions.
    let parent = unsafe { libc::getpid() };
    // SAFETY: the closure runs in the forked child before exec and calls only prctl,
    // getppid and kill, which are async-signal-safe; it allocates nothing.
    unsafe {
        cmd.pre_exec(move || {
            if libc::prctl(
                libc::PR_SET_PDEATHSIG,
                libc::SIGTERM as libc::c_ulong,
                0,
                0,
                0,
            ) != 0
            {
                return Err(io::Error::last_os_error());
            }
            if libc::getppid() != parent {
                libc::kill(libc::getpid(), libc::SIGTERM);
            }
            Ok(())
        });
    }
}

/// Bytes free for an unprivileged writer on the file system holding `path`.
pub fn free_bytes(path: &std::path::Path) -> io::Result<u64> {
    use std::os::unix::ffi::OsStrExt;
    let c = std::ffi::CString::new(path.as_os_str().as_bytes())
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in path"))?;
    // SAFETY: `c` is a valid NUL-terminated path; `st` is zeroed and written by the call.
    let mut st: libc::statvfs = unsafe { std::mem::zeroed() };
    // SAFETY: as above.
    if unsafe { libc::statvfs(c.as_ptr(), &mut st) } != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok((st.f_bavail as u64).saturating_mul(st.f_frsize as u64))
}

/// Highest CPU number plus one a CPU list may name: the kernel's largest `NR_CPUS`.
/// Ranges are checked against it before they are expanded.
pub const MAX_CPUS: usize = 8192;

pub fn parse_cpus(s: &str) -> Result<Vec<usize>, String> {
    let mut v = Vec::new();
    for part in s.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let num = |t: &str| {
            t.trim()
                .parse::<usize>()
                .map_err(|_| format!("'{s}' is not a CPU list like 0 or 0-1,3"))
        };
        let cpu = |t: &str| {
            num(t).and_then(|c| {
                if c < MAX_CPUS {
                    Ok(c)
                } else {
                    Err(format!(
                        "CPU {c} in '{s}' is above the largest CPU number Linux supports ({})",
                        MAX_CPUS - 1
                    ))
                }
            })
        };
        match part.split_once('-') {
            Some((a, b)) => {
                let (a, b) = (cpu(a)?, cpu(b)?);
                if a > b {
                    return Err(format!("CPU range '{part}' runs backwards"));
                }
                v.extend(a..=b);
            }
            None => v.push(cpu(part)?),
        }
    }
    if v.is_empty() {
        return Err(format!("'{s}' names no CPU"));
    }
    v.sort_unstable();
    v.dedup();
    Ok(v)
}

/// CLOCK_MONOTONIC in nanoseconds: one clock for every namespace of a host, so a
/// sender's stamp and a receiver's clock are comparable on the local testbed.
pub fn monotonic_ns() -> u64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: `ts` is a valid, writable timespec; CLOCK_MONOTONIC always exists.
    unsafe { libc::clock_gettime(libc::CLOCK_MONOTONIC, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Ask for 1 ns timer slack on the calling thread, so short sleeps of a pacer end
/// on time instead of up to 50 µs late (the default slack).
pub fn tight_timer_slack() {
    // SAFETY: PR_SET_TIMERSLACK takes an integer argument and no pointers.
    unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, 1 as libc::c_ulong, 0, 0, 0) };
}

/// The soft RLIMIT_NOFILE of this process (open files allowed).
// `rlim_t` is u64 here but narrower on some 32-bit targets: keep the casts.
#[allow(clippy::unnecessary_cast)]
pub fn nofile_limit() -> io::Result<u64> {
    Ok(nofile_rlimit()?.rlim_cur as u64)
}

/// RLIMIT_NOFILE of this process: the soft and hard limits.
fn nofile_rlimit() -> io::Result<libc::rlimit> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid, writable rlimit for the duration of the call.
    if unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(r)
}

/// Raise RLIMIT_NOFILE as far as this process may and return the soft limit now in
/// force. A privileged process (CAP_SYS_RESOURCE: the agents) raises both limits to
/// `fs.nr_open` (1 Mi by default); otherwise the soft limit goes up to the hard one,
/// which any process may do. Roles that hold thousands of sockets call this at start.
#[allow(clippy::unnecessary_cast)]
pub fn raise_nofile_limit() -> io::Result<u64> {
    let r = nofile_rlimit()?;
    // RLIMIT_NOFILE can never exceed fs.nr_open.
    let nr_open = std::fs::read_to_string("/proc/sys/fs/nr_open")
        .ok()
        .and_then(|s| s.trim().parse::<libc::rlim_t>().ok())
        .unwrap_or(1 << 20);
    if r.rlim_max != libc::RLIM_INFINITY && r.rlim_max < nr_open {
        let both = libc::rlimit {
            rlim_cur: nr_open,
            rlim_max: nr_open,
        };
        // SAFETY: `both` is a valid rlimit; the kernel only reads it. EPERM (no
        // CAP_SYS_RESOURCE) leaves the limits as they were: fall through.
        if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &both) } == 0 {
            return Ok(nr_open as u64);
        }
    }
    let target = if r.rlim_max == libc::RLIM_INFINITY {
        nr_open
    } else {
        r.rlim_max
    };
    if r.rlim_cur >= target {
        return Ok(r.rlim_cur as u64);
    }
    let new = libc::rlimit {
        rlim_cur: target,
        rlim_max: r.rlim_max,
    };
    // SAFETY: `new` is a valid rlimit; the kernel only reads it.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } < 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(target as u64)
}

/// Raise a socket buffer beyond `net.core.{r,w}mem_max` (needs CAP_NET_ADMIN, which
/// agents have); falls back to the unprivileged option.
pub fn force_buffer(fd: &impl AsRawFd, receive: bool, bytes: usize) -> io::Result<()> {
    let (force, plain) = if receive {
        (libc::SO_RCVBUFFORCE, libc::SO_RCVBUF)
    } else {
        (libc::SO_SNDBUFFORCE, libc::SO_SNDBUF)
    };
    let v = bytes.min(i32::MAX as usize) as libc::c_int;
    set_int_option(fd, libc::SOL_SOCKET, force, v)
        .or_else(|_| set_int_option(fd, libc::SOL_SOCKET, plain, v))
}

/// setsockopt(2) of an `int` option: the one such call of the crate.
pub fn set_int_option(
    fd: &impl AsRawFd,
    level: libc::c_int,
    name: libc::c_int,
    value: libc::c_int,
) -> io::Result<()> {
    // SAFETY: passes a pointer to a live c_int and its exact size.
    let r = unsafe {
        libc::setsockopt(
            fd.as_raw_fd(),
            level,
            name,
            &value as *const libc::c_int as *const libc::c_void,
            std::mem::size_of::<libc::c_int>() as libc::socklen_t,
        )
    };
    if r == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

/// IP_BIND_ADDRESS_NO_PORT: a later bind(2) to (address, 0) takes the address only
/// and connect(2) picks the source port, unique per 4-tuple instead of per address —
/// so one source address carries a port range per destination, and bind(2) does not
/// search an almost full range for a free port (minutes at 250 000 connections).
/// The option is at the IP level for IPv6 sockets too.
pub fn bind_address_no_port(fd: &impl AsRawFd) -> io::Result<()> {
    set_int_option(fd, libc::SOL_IP, libc::IP_BIND_ADDRESS_NO_PORT, 1)
}

/// Make `h` describe one datagram in the single buffer `iov` (no address), with an
/// optional control buffer.
fn point_at(h: &mut libc::mmsghdr, iov: &mut libc::iovec, ctrl: Option<&mut [u64]>) {
    h.msg_hdr.msg_name = std::ptr::null_mut();
    h.msg_hdr.msg_namelen = 0;
    h.msg_hdr.msg_iov = iov;
    h.msg_hdr.msg_iovlen = 1;
    match ctrl {
        Some(c) => {
            h.msg_hdr.msg_controllen = std::mem::size_of_val(c) as _;
            h.msg_hdr.msg_control = c.as_mut_ptr() as *mut libc::c_void;
        }
        None => {
            h.msg_hdr.msg_control = std::ptr::null_mut();
            h.msg_hdr.msg_controllen = 0;
        }
    }
    h.msg_hdr.msg_flags = 0;
    h.msg_len = 0;
}

/// Reusable sendmmsg(2) batch for a connected datagram socket.
pub struct MmsgSend {
    iov: Vec<libc::iovec>,
    hdr: Vec<libc::mmsghdr>,
}

// SAFETY: the raw pointers inside are only set and used within `send`, which borrows
// the buffers it points at for the duration of the call; between calls they dangle
// harmlessly and are never dereferenced.
unsafe impl Send for MmsgSend {}

impl MmsgSend {
    pub fn new(batch: usize) -> Self {
        MmsgSend {
            // SAFETY: iovec and mmsghdr are plain C structs; all-zero is a valid value.
            iov: vec![unsafe { std::mem::zeroed() }; batch],
            // SAFETY: as above.
            hdr: vec![unsafe { std::mem::zeroed() }; batch],
        }
    }

    /// Send `bufs` (at most the batch size) with one call; returns how many the kernel
    /// took. EINTR is retried; other errors (ENOBUFS, ECONNREFUSED …) are returned.
    pub fn send(&mut self, fd: &impl AsRawFd, bufs: &[&[u8]]) -> io::Result<usize> {
        let n = bufs.len().min(self.hdr.len());
        // One unique borrow per element: the pointers stored in earlier headers stay valid.
        for ((h, v), b) in self.hdr.iter_mut().zip(self.iov.iter_mut()).zip(bufs) {
            *v = libc::iovec {
                iov_base: b.as_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            };
            point_at(h, v, None);
        }
        loop {
            // SAFETY: `hdr[..n]` point at `iov[..n]`, which point at `bufs`, all alive
            // and unmodified for the duration of the call; the kernel only reads them
            // (and writes `msg_len`).
            let r = unsafe {
                libc::sendmmsg(fd.as_raw_fd(), self.hdr.as_mut_ptr(), n as libc::c_uint, 0)
            };
            if r >= 0 {
                return Ok(r as usize);
            }
            let e = io::Error::last_os_error();
            if e.kind() != io::ErrorKind::Interrupted {
                return Err(e);
            }
        }
    }
}

/// Control-message space per datagram, in u64 words (aligned for `cmsghdr`): room for
/// one SCM_TIMESTAMPNS (16-byte header + 16-byte timespec) and then some.
const CTRL_WORDS: usize = 8;

/// Reusable recvmmsg(2) batch: `batch` slots of `slot` bytes each, and per datagram
/// the kernel's receive time when the socket has SO_TIMESTAMPNS on.
pub struct MmsgRecv {
    buf: Vec<u8>,
    slot: usize,
    ctrl: Vec<u64>,
    /// Each datagram's source address, when asked for (`with_sources`).
    names: Vec<libc::sockaddr_storage>,
    iov: Vec<libc::iovec>,
    hdr: Vec<libc::mmsghdr>,
}

// SAFETY: the pointers inside point into `self.buf` and `self.ctrl`, whose heap blocks
// move with the struct without moving, and are re-set before every call.
unsafe impl Send for MmsgRecv {}

/// Ask the kernel to stamp every datagram received on `fd` (CLOCK_REALTIME, ns).
pub fn enable_rx_timestamps(fd: &impl AsRawFd) -> io::Result<()> {
    set_int_option(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, 1)
}

/// CLOCK_REALTIME in nanoseconds (the clock of kernel receive timestamps).
pub fn realtime_ns() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos() as u64)
        .unwrap_or(0)
}

/// CLOCK_MONOTONIC times as CLOCK_REALTIME ones, at the clocks' offset now: senders
/// schedule on the monotonic clock (it never jumps) and stamp packets in the
/// realtime one, the clock of the sink's kernel receive timestamps.
pub fn monotonic_to_realtime() -> impl Fn(u64) -> u64 + Copy {
    let offset = realtime_ns() as i128 - monotonic_ns() as i128;
    move |mono| (mono as i128 + offset) as u64
}

impl MmsgRecv {
    pub fn new(batch: usize, slot: usize) -> Self {
        MmsgRecv {
            buf: vec![0; batch * slot],
            slot,
            ctrl: vec![0; batch * CTRL_WORDS],
            names: vec![],
            // SAFETY: plain C structs; all-zero is a valid value.
            iov: vec![unsafe { std::mem::zeroed() }; batch],
            // SAFETY: as above.
            hdr: vec![unsafe { std::mem::zeroed() }; batch],
        }
    }

    /// Also learn each datagram's source address ([`MmsgRecv::source`]).
    pub fn with_sources(mut self) -> Self {
        // SAFETY: sockaddr_storage is a plain C struct; all-zero is a valid value.
        self.names = vec![unsafe { std::mem::zeroed() }; self.hdr.len()];
        self
    }

    /// Source address of datagram `i` of the last `recv` (with `with_sources`).
    pub fn source(&self, i: usize) -> Option<std::net::IpAddr> {
        let name = self.names.get(i)?;
        let len = self.hdr[i].msg_hdr.msg_namelen as usize;
        match i32::from(name.ss_family) {
            libc::AF_INET if len >= std::mem::size_of::<libc::sockaddr_in>() => {
                // SAFETY: the kernel wrote a sockaddr_in (family AF_INET, length
                // checked) into our sockaddr_storage, which is larger and aligned for it.
                let a = unsafe { &*(name as *const _ as *const libc::sockaddr_in) };
                Some(std::net::Ipv4Addr::from(u32::from_be(a.sin_addr.s_addr)).into())
            }
            libc::AF_INET6 if len >= std::mem::size_of::<libc::sockaddr_in6>() => {
                // SAFETY: as above, a sockaddr_in6.
                let a = unsafe { &*(name as *const _ as *const libc::sockaddr_in6) };
                Some(std::net::Ipv6Addr::from(a.sin6_addr.s6_addr).into())
            }
            _ => None,
        }
    }

    /// Receive up to a batch; blocks until at least one datagram arrives or the
    /// socket's receive timeout expires (then `Ok(0)`). Returns the count; read the
    /// datagrams with `get` and their receive times with `rx_ns`.
    pub fn recv(&mut self, fd: &impl AsRawFd) -> io::Result<usize> {
        let slots = self.buf.chunks_mut(self.slot);
        let ctrls = self.ctrl.chunks_mut(CTRL_WORDS);
        for (((h, v), b), c) in self
            .hdr
            .iter_mut()
            .zip(self.iov.iter_mut())
            .zip(slots)
            .zip(ctrls)
        {
            *v = libc::iovec {
                iov_base: b.as_mut_ptr() as *mut libc::c_void,
                iov_len: b.len(),
            };
            point_at(h, v, Some(c));
        }
        for (h, n) in self.hdr.iter_mut().zip(self.names.iter_mut()) {
            h.msg_hdr.msg_name = n as *mut libc::sockaddr_storage as *mut libc::c_void;
            h.msg_hdr.msg_namelen = std::mem::size_of::<libc::sockaddr_storage>() as _;
        }
        // SAFETY: every header points at its own `slot`-byte region of `buf`, its
        // own control words and (with sources) its own sockaddr_storage, alive and
        // exclusively borrowed for the call.
        // MSG_WAITFORONE: return once one datagram arrived.
        let r = unsafe {
            libc::recvmmsg(
                fd.as_raw_fd(),
                self.hdr.as_mut_ptr(),
                self.hdr.len() as libc::c_uint,
                libc::MSG_WAITFORONE,
                std::ptr::null_mut(),
            )
        };
        if r >= 0 {
            return Ok(r as usize);
        }
        let e = io::Error::last_os_error();
        match e.kind() {
            io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut | io::ErrorKind::Interrupted => {
                Ok(0)
            }
            _ => Err(e),
        }
    }

    /// Kernel receive time of datagram `i` of the last `recv` (CLOCK_REALTIME ns), if
    /// the socket has SO_TIMESTAMPNS on.
    pub fn rx_ns(&self, i: usize) -> Option<u64> {
        let h = &self.hdr[i].msg_hdr;
        if h.msg_control.is_null() || h.msg_controllen < std::mem::size_of::<libc::cmsghdr>() {
            return None;
        }
        // SAFETY: after recvmmsg, `msg_control`/`msg_controllen` describe the control
        // bytes the kernel wrote into our own `ctrl` words (aligned u64s); the CMSG
        // macros only walk within that length.
        unsafe {
            let mut c = libc::CMSG_FIRSTHDR(h);
            while !c.is_null() {
                if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                    let ts = std::ptr::read_unaligned(libc::CMSG_DATA(c) as *const libc::timespec);
                    return Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
                }
                c = libc::CMSG_NXTHDR(h, c);
            }
        }
        None
    }

    /// Datagram `i` of the last `recv` (truncated to the slot size).
    pub fn get(&self, i: usize) -> &[u8] {
        let len = (self.hdr[i].msg_len as usize).min(self.slot);
        &self.buf[i * self.slot..i * self.slot + len]
    }
}

/// Restore the default SIGPIPE disposition (terminate quietly), as command-line tools
/// do: `fwbench … | head` then ends without a "broken pipe" panic. Only for commands
/// that drive no agents: those must survive a closed pipe to clean up.
pub fn default_sigpipe() {
    // SAFETY: setting a signal disposition to SIG_DFL has no preconditions.
    unsafe { libc::signal(libc::SIGPIPE, libc::SIG_DFL) };
}

/// Send `sig` to the process `pid` or, with `group`, to every process of the process
/// group that `pid` leads. Meant for children we spawned (and have not reaped yet, so
/// the id cannot have been reused). Refuses ids ≤ 1: kill(2) would widen 0 to our own
/// group and −1 (group of 1) to every process we may signal; init is no child of ours.
pub fn send_signal(pid: u32, sig: libc::c_int, group: bool) -> io::Result<()> {
    let id = match libc::pid_t::try_from(pid) {
        Ok(id) if id > 1 => id,
        _ => {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("refusing to signal process id {pid}"),
            ))
        }
    };
    let target = if group { -id } else { id };
    // SAFETY: kill takes no pointers; `target` names exactly one process (> 1) or the
    // one process group it leads (< -1), never 0 or -1.
    if unsafe { libc::kill(target, sig) } == 0 {
        Ok(())
    } else {
        Err(io::Error::last_os_error())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_round_trip() {
        assert_eq!(parse_cpus("0-2,5").unwrap(), vec![0, 1, 2, 5]);
        assert_eq!(format_cpus(&[0, 1, 2, 5]), "0-2,5");
        assert_eq!(format_cpus(&[1]), "1");
        assert!(parse_cpus("x").is_err());
        assert!(parse_cpus("3-1").is_err());
        assert!(parse_cpus("").is_err());
        // Huge ranges are refused before they are expanded (no panic, no 8 GB).
        for huge in [
            "0-18446744073709551615",
            "0-1000000000",
            "0-99999999999",
            "8192",
        ] {
            let e = parse_cpus(huge).unwrap_err();
            assert!(
                e.contains("largest CPU number") || e.contains("not a CPU list"),
                "{e}"
            );
        }
        assert_eq!(parse_cpus("8191").unwrap(), vec![8191]);
    }

    #[test]
    fn affinity_reads_back() {
        let cpus = get_affinity().unwrap();
        assert!(!cpus.is_empty());
    }

    #[test]
    fn sctp_detection_never_panics() {
        // This kernel lacks SCTP; elsewhere it may exist. Either way: a typed answer.
        match stream_socket(Proto::Sctp, &"127.0.0.1:0".parse().unwrap()) {
            Ok(_) => assert!(!sctp_unavailable()),
            Err(TrafficError::SctpUnavailable(_)) => assert!(sctp_unavailable()),
            Err(e) => panic!("unexpected: {e}"),
        }
    }

    #[test]
    fn nofile_limit_only_goes_up() {
        let before = nofile_limit().unwrap();
        let after = raise_nofile_limit().unwrap();
        assert!(after >= before, "{before} -> {after}");
        assert_eq!(nofile_limit().unwrap(), after);
    }

    #[test]
    fn epoll_wakes_on_eventfd() {
        let ep = Epoll::new().unwrap();
        let ev = EventFd::new().unwrap();
        ep.add(&ev, EPOLLIN, 7).unwrap();
        let mut out = Vec::new();
        ep.wait(&mut out, Duration::from_millis(0)).unwrap();
        assert!(out.is_empty());
        ev.wake();
        ep.wait(&mut out, Duration::from_millis(1000)).unwrap();
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].0, 7);
    }
}
