//! AF_PACKET raw-frame sender, like netsniff-ng's trafgen: whole Ethernet frames (built
//! by `packet::UdpTemplate`) handed to one interface with `sendmmsg(2)`.
//!
//! Owns: the packet socket, its options, and the reusable `iovec`/`mmsghdr` arrays.
//! Must not: build frames, pace, or count anything beyond what the kernel returns.
//! This is the only file of the raw sender with `unsafe`; each block says why it holds.

use crate::TrafficError;
use std::ffi::CString;
use std::io;
use std::mem;
use std::os::fd::{AsRawFd, FromRawFd, OwnedFd};

/// `PACKET_QDISC_BYPASS` from `<linux/if_packet.h>` (Linux 3.14+).
const PACKET_QDISC_BYPASS: libc::c_int = 20;
/// The send buffer asked for (`SO_SNDBUFFORCE`, needing CAP_NET_ADMIN, else
/// `SO_SNDBUF`). The kernel doubles it for bookkeeping; without CAP_NET_ADMIN it is
/// capped at `net.core.wmem_max`.
const SNDBUF_TARGET: usize = 16 << 20;
/// `sendmmsg(2)` takes at most `UIO_MAXIOV` messages per call.
const MAX_BATCH: usize = 1024;

/// A send-only AF_PACKET socket bound to one interface.
pub struct RawSender {
    fd: OwnedFd,
    ifname: String,
    ifindex: u32,
    qdisc_bypass: bool,
    sndbuf: usize,
    /// One `iovec` per message; re-pointed at the caller's frames on every call.
    iovecs: Vec<libc::iovec>,
    /// One `mmsghdr` per message, each pointing at its `iovec`.
    msgs: Vec<libc::mmsghdr>,
}

impl std::fmt::Debug for RawSender {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RawSender")
            .field("fd", &self.fd)
            .field("ifname", &self.ifname)
            .field("ifindex", &self.ifindex)
            .field("qdisc_bypass", &self.qdisc_bypass)
            .field("sndbuf", &self.sndbuf)
            .finish_non_exhaustive()
    }
}

// SAFETY: the raw pointers inside `iovecs` and `msgs` are scratch space: `send_batch`
// sets every one it passes to the kernel from its own arguments (and `msgs` to
// `iovecs`, which the struct owns) before the call, and nothing reads them otherwise.
// Moving the sender to another thread therefore shares no data with the old one.
unsafe impl Send for RawSender {}

impl RawSender {
    /// Open an AF_PACKET/SOCK_RAW socket with protocol 0 (it sends, and receives
    /// nothing), bound to `ifname`. Turns on `PACKET_QDISC_BYPASS` if the kernel allows
    /// (frames then go straight to the driver, as with trafgen) and raises the send
    /// buffer as far as allowed (`SO_SNDBUFFORCE`, else `SO_SNDBUF`). Needs CAP_NET_RAW.
    pub fn open(ifname: &str) -> Result<RawSender, TrafficError> {
        if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ {
            return Err(TrafficError::BadSpec(format!(
                "bad interface name {ifname:?}: must be 1 to {} bytes",
                libc::IFNAMSIZ - 1
            )));
        }
        let cname = CString::new(ifname).map_err(|_| {
            TrafficError::BadSpec(format!("bad interface name {ifname:?}: contains NUL"))
        })?;
        // SAFETY: `cname` is a valid NUL-terminated string that outlives the call.
        let ifindex = unsafe { libc::if_nametoindex(cname.as_ptr()) };
        if ifindex == 0 {
            return Err(TrafficError::io(
                format!("interface {ifname}"),
                io::Error::last_os_error(),
            ));
        }

        // SAFETY: plain syscall with constant arguments; the result is checked below.
        let raw = unsafe {
            libc::socket(
                libc::AF_PACKET,
                libc::SOCK_RAW | libc::SOCK_CLOEXEC,
                0, // protocol 0: no frames are delivered to this socket
            )
        };
        if raw < 0 {
            return Err(TrafficError::io(
                format!("socket(AF_PACKET, SOCK_RAW) for {ifname} (needs CAP_NET_RAW)"),
                io::Error::last_os_error(),
            ));
        }
        // SAFETY: `raw` is a freshly created descriptor that nothing else owns.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };

        // SAFETY: all-zero is a valid `sockaddr_ll` (plain integers and a byte array).
        let mut sll: libc::sockaddr_ll = unsafe { mem::zeroed() };
        sll.sll_family = libc::AF_PACKET as libc::c_ushort;
        sll.sll_protocol = 0;
        sll.sll_ifindex = ifindex as libc::c_int;
        // SAFETY: `sll` is a valid `sockaddr_ll` and the length passed is its size.
        let rc = unsafe {
            libc::bind(
                fd.as_raw_fd(),
                (&sll as *const libc::sockaddr_ll).cast::<libc::sockaddr>(),
                mem::size_of::<libc::sockaddr_ll>() as libc::socklen_t,
            )
        };
        if rc < 0 {
            return Err(TrafficError::io(
                format!("bind AF_PACKET socket to {ifname}"),
                io::Error::last_os_error(),
            ));
        }

        // Optional: an old kernel or a restricted one keeps the qdisc path.
        let qdisc_bypass =
            super::set_int_option(&fd, libc::SOL_PACKET, PACKET_QDISC_BYPASS, 1).is_ok();
        // Optional: a smaller buffer only means more ENOBUFS retries.
        let _ = super::force_buffer(&fd, false, SNDBUF_TARGET);
        let sndbuf = get_int(&fd, libc::SOL_SOCKET, libc::SO_SNDBUF)
            .map(|v| usize::try_from(v).unwrap_or(0))
            .unwrap_or(0);

        Ok(RawSender {
            fd,
            ifname: ifname.to_owned(),
            ifindex,
            qdisc_bypass,
            sndbuf,
            iovecs: Vec::new(),
            msgs: Vec::new(),
        })
    }

    /// The interface the sender is bound to.
    pub fn ifname(&self) -> &str {
        &self.ifname
    }

    /// Whether `PACKET_QDISC_BYPASS` was accepted.
    pub fn qdisc_bypass(&self) -> bool {
        self.qdisc_bypass
    }

    /// The socket's send buffer in bytes as the kernel reports it (0 if unknown).
    pub fn sndbuf(&self) -> usize {
        self.sndbuf
    }

    /// Send up to `frames.len()` whole Ethernet frames (without FCS) with one
    /// `sendmmsg(2)` call (at most 1024 frames per call); returns how many the
    /// kernel took, in order. ENOBUFS and EAGAIN (queue or buffer full) give `Ok(0)`
    /// and the caller retries; EINTR is retried here; other errors (e.g. EMSGSIZE
    /// for a frame longer than the MTU, ENETDOWN) are returned.
    ///
    /// Allocates only when a batch is larger than any before it.
    pub fn send_batch(&mut self, frames: &[&[u8]]) -> io::Result<usize> {
        let n = frames.len().min(MAX_BATCH);
        if n == 0 {
            return Ok(0);
        }
        if self.iovecs.len() < n {
            // SAFETY: all-zero is a valid `iovec` and `mmsghdr` (null pointers and
            // zero lengths); every one used is set below before the syscall.
            let (iov, msg) = unsafe { (mem::zeroed(), mem::zeroed()) };
            self.iovecs.resize(n, iov);
            self.msgs.resize(n, msg);
        }
        // No resizing from here on, so the pointers into `iovecs` stay valid.
        for ((iov, msg), frame) in self.iovecs.iter_mut().zip(&mut self.msgs).zip(frames) {
            iov.iov_base = frame.as_ptr() as *mut libc::c_void;
            iov.iov_len = frame.len();
            let hdr = &mut msg.msg_hdr;
            hdr.msg_name = std::ptr::null_mut(); // the bound interface is the destination
            hdr.msg_namelen = 0;
            hdr.msg_iov = iov;
            hdr.msg_iovlen = 1;
            hdr.msg_control = std::ptr::null_mut();
            hdr.msg_controllen = 0;
            hdr.msg_flags = 0;
            msg.msg_len = 0;
        }
        loop {
            // SAFETY: `msgs[..n]` are initialised `mmsghdr`s whose single `iovec`
            // each points at a frame borrowed from `frames` for the whole call; the
            // kernel only reads the frames and writes `msg_len`. `n <= msgs.len()`.
            let rc = unsafe {
                libc::sendmmsg(
                    self.fd.as_raw_fd(),
                    self.msgs.as_mut_ptr(),
                    n as libc::c_uint,
                    0,
                )
            };
            if rc >= 0 {
                return Ok(rc as usize);
            }
            let err = io::Error::last_os_error();
            match err.raw_os_error() {
                Some(libc::EINTR) => continue,
                Some(libc::ENOBUFS) | Some(libc::EAGAIN) => return Ok(0),
                _ => return Err(err),
            }
        }
    }
}

fn get_int(fd: &OwnedFd, level: libc::c_int, name: libc::c_int) -> io::Result<libc::c_int> {
    let mut value: libc::c_int = 0;
    let mut len = mem::size_of::<libc::c_int>() as libc::socklen_t;
    // SAFETY: `value` and `len` are live, writable and sized as the kernel expects.
    let rc = unsafe {
        libc::getsockopt(
            fd.as_raw_fd(),
            level,
            name,
            (&mut value as *mut libc::c_int).cast::<libc::c_void>(),
            &mut len,
        )
    };
    if rc < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(value)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bad_interface_names_are_bad_spec() {
        for name in ["", "a-name-that-is-too-long", "nul\0x"] {
            match RawSender::open(name) {
                Err(TrafficError::BadSpec(m)) => assert!(m.contains("interface name"), "{m}"),
                other => panic!("{name:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn missing_interface_is_io_error() {
        match RawSender::open("fwbt-nonexist") {
            Err(TrafficError::Io { what, source }) => {
                assert!(what.contains("fwbt-nonexist"), "{what}");
                assert_eq!(source.raw_os_error(), Some(libc::ENODEV));
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn sender_is_send() {
        fn is_send<T: Send>() {}
        is_send::<RawSender>();
    }
}
