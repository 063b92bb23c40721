//! AF_XDP sockets for the AF_XDP sender and sink (the `xsk` module): one socket, its UMEM
//! and its rings per queue, from the `xdp` crate.
//!
//! Owns: opening and binding a socket (copy or zero-copy, the mode read back from the
//! kernel), handing UMEM frames to the caller to fill or read, the TX kick, completions,
//! the fill ring. This is the only file of the AF_XDP path with `unsafe`; each block
//! says why it holds.
//! Must not: build frames, pace or count beyond what the rings return.

use std::io;
use std::os::fd::AsRawFd;
use xdp::slab::{HeapSlab, Slab};
use xdp::socket::{BindFlags, XdpSocket, XdpSocketBuilder};
use xdp::umem::{FrameSize, UmemCfgBuilder};
use xdp::{CompletionRing, FillRing, RingConfigBuilder, RxRing, Umem, WakableTxRing};

/// How the kernel moves frames between the UMEM and the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum XskMode {
    /// The driver reads and writes the UMEM itself (real NICs with AF_XDP support).
    ZeroCopy,
    /// The kernel copies each frame between the UMEM and an skb (veth, most virtual
    /// interfaces, drivers without zero-copy).
    Copy,
}

impl XskMode {
    pub fn name(self) -> &'static str {
        match self {
            XskMode::ZeroCopy => "zero-copy",
            XskMode::Copy => "copy",
        }
    }
}

/// What mode to ask for at bind time.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum XskModeRequest {
    /// Zero-copy where the driver has it, copy otherwise (the kernel decides).
    #[default]
    Auto,
    Copy,
    ZeroCopy,
}

/// Frames per socket's UMEM (2 KiB each: 8 MiB).
pub const UMEM_FRAMES: u32 = 4096;
/// Descriptors per ring.
pub const RING: u32 = 2048;
/// Largest frame one UMEM chunk holds (2048 minus the kernel's 256-byte headroom).
pub const MAX_FRAME: usize = 2048 - 256;

/// Why an AF_XDP socket could not be opened: a missing kernel or driver feature is
/// `Unavailable` (reported as such, never a crash), anything else `Io`.
#[derive(Debug)]
pub enum OpenError {
    Unavailable(String),
    Io(String, io::Error),
}

/// The OS error inside a `SocketError` (whose Display is its Debug form), as text.
fn os_text(e: &xdp::socket::SocketError) -> String {
    std::error::Error::source(e).map_or_else(|| e.to_string(), |s| s.to_string())
}

fn socket_err(what: &str, e: xdp::socket::SocketError) -> OpenError {
    OpenError::Io(what.into(), io::Error::other(os_text(&e)))
}

/// A ring the socket was built with, or why not (`missing`: "no TX ring").
fn ring<R>(r: Option<R>, missing: &str) -> Result<R, OpenError> {
    r.ok_or_else(|| OpenError::Io(missing.into(), io::Error::other(missing)))
}

fn umem() -> Result<Umem, OpenError> {
    let cfg = UmemCfgBuilder {
        frame_size: FrameSize::TwoK,
        frame_count: UMEM_FRAMES,
        ..Default::default()
    }
    .build()
    .map_err(|e| OpenError::Io("UMEM configuration".into(), io::Error::other(e.to_string())))?;
    Umem::map(cfg).map_err(|e| OpenError::Io("mapping the UMEM".into(), e))
}

fn builder() -> Result<XdpSocketBuilder, OpenError> {
    XdpSocketBuilder::new().map_err(|e| {
        let text = os_text(&e);
        let afnosupport = matches!(
            &e,
            xdp::socket::SocketError::SocketCreation(io)
                if io.raw_os_error() == Some(libc::EAFNOSUPPORT)
        );
        if afnosupport {
            OpenError::Unavailable(format!(
                "socket(AF_XDP) failed ({text}): the kernel has no CONFIG_XDP_SOCKETS"
            ))
        } else {
            OpenError::Io("socket(AF_XDP)".into(), io::Error::other(text))
        }
    })
}

fn bind(
    b: XdpSocketBuilder,
    mut flags: BindFlags,
    ifindex: u32,
    queue: u32,
    want: XskModeRequest,
) -> Result<(XdpSocket, XskMode), OpenError> {
    match want {
        XskModeRequest::Auto => {}
        XskModeRequest::Copy => flags.force_copy(),
        XskModeRequest::ZeroCopy => flags.force_zerocopy(),
    }
    let sock = b
        .bind(xdp::nic::NicIndex::new(ifindex), queue, flags)
        .map_err(|e| {
            let text = os_text(&e);
            let why = if want == XskModeRequest::ZeroCopy {
                "the driver has no zero-copy AF_XDP"
            } else {
                "the interface has no such queue, or its driver no AF_XDP support"
            };
            OpenError::Unavailable(format!(
                "bind to interface {ifindex} queue {queue} failed ({text}): {why}"
            ))
        })?;
    let mode = read_mode(&sock).map_err(|e| OpenError::Io("getsockopt(XDP_OPTIONS)".into(), e))?;
    Ok((sock, mode))
}

/// The mode the kernel chose, from `getsockopt(SOL_XDP, XDP_OPTIONS)`.
fn read_mode(sock: &XdpSocket) -> io::Result<XskMode> {
    let mut opts: u32 = 0;
    let mut len = std::mem::size_of::<u32>() as libc::socklen_t;
    // SAFETY: `opts` (struct xdp_options is one u32) and `len` are live locals whose
    // addresses and size are passed; the fd is an open AF_XDP socket.
    let rc = unsafe {
        libc::getsockopt(
            sock.as_raw_fd(),
            libc::SOL_XDP,
            libc::XDP_OPTIONS,
            (&mut opts as *mut u32).cast(),
            &mut len,
        )
    };
    if rc != 0 {
        return Err(io::Error::last_os_error());
    }
    Ok(if opts & libc::XDP_OPTIONS_ZEROCOPY != 0 {
        XskMode::ZeroCopy
    } else {
        XskMode::Copy
    })
}

/// A send-only AF_XDP socket on one queue, with its own UMEM.
pub struct XskTx {
    umem: Umem,
    tx: WakableTxRing,
    cq: CompletionRing,
    sock: XdpSocket,
    slab: HeapSlab,
    /// Frames handed to the kernel and not yet completed.
    outstanding: usize,
    pub mode: XskMode,
}

// SAFETY: what keeps `XskTx` from being `Send` is its slab of `xdp::Packet`s (raw
// pointers into the UMEM). The slab is empty whenever no method runs (`queue` drains it
// before returning), and the UMEM and rings the pointers would refer to move with the
// struct; no pointer into them is kept anywhere else.
unsafe impl Send for XskTx {}

impl XskTx {
    /// Open, register the UMEM, map the rings and bind to `queue` of `ifindex` with
    /// `XDP_USE_NEED_WAKEUP`. Needs CAP_NET_RAW (and CAP_IPC_LOCK or a large enough
    /// RLIMIT_MEMLOCK on old kernels).
    pub fn open(ifindex: u32, queue: u32, want: XskModeRequest) -> Result<XskTx, OpenError> {
        let umem = umem()?;
        let mut b = builder()?;
        let cfg = RingConfigBuilder {
            rx_count: 0,
            tx_count: RING,
            fill_count: 1,
            completion_count: RING,
        }
        .build()
        .map_err(|e| OpenError::Io("ring configuration".into(), io::Error::other(e.to_string())))?;
        let (rings, flags) = b
            .build_wakable_rings(&umem, cfg)
            .map_err(|e| socket_err("AF_XDP rings", e))?;
        let (sock, mode) = bind(b, flags, ifindex, queue, want)?;
        // Copy mode charges every frame in flight (an skb) to the socket's send
        // buffer; the default (~200 KiB) holds a few hundred, so a gateway a little
        // behind made most kicks fail with EAGAIN. Optional: a smaller buffer only
        // means more retried kicks.
        let _ = super::force_buffer(&sock, false, 16 << 20);
        let tx = ring(rings.tx_ring, "no TX ring")?;
        Ok(XskTx {
            umem,
            tx,
            cq: rings.completion_ring,
            sock,
            slab: HeapSlab::with_capacity(RING as usize),
            outstanding: 0,
            mode,
        })
    }

    /// Frames the kernel has not completed yet.
    pub fn outstanding(&self) -> usize {
        self.outstanding
    }

    /// Queue up to `n` frames, frame `k` of `len(k)` bytes; `fill(k, frame)` writes frame
    /// `k` in place (the frame keeps what the last frame sent from that UMEM chunk held).
    /// Returns how many were queued: fewer than `n` when the UMEM or the TX ring is full
    /// (the caller then reaps completions and kicks). `len(k)` must be at most
    /// [`MAX_FRAME`].
    pub fn queue(
        &mut self,
        n: usize,
        len: impl Fn(usize) -> usize,
        mut fill: impl FnMut(usize, &mut [u8]),
    ) -> usize {
        let n = n.min(self.umem.allocatable()).min(RING as usize);
        for k in 0..n {
            // SAFETY: the packet points into `self.umem`, which outlives it: it is either
            // handed to the TX ring below (the kernel then owns the chunk until its
            // completion) or freed back to the same UMEM.
            let Some(mut p) = (unsafe { self.umem.alloc() }) else {
                break;
            };
            if p.adjust_tail(len(k) as i32).is_err() {
                self.umem.free_packet(p);
                break;
            }
            fill(k, &mut p);
            // Slots run out only past RING, which `n` never exceeds.
            if let Some(p) = self.slab.push_front(p) {
                self.umem.free_packet(p);
                break;
            }
        }
        let ready = self.slab.len();
        // SAFETY: every packet in the slab was allocated from `self.umem`, which is
        // registered with this socket and lives as long as it; no wakeup here (`kick`),
        // so there is no syscall and no error (0 queued if one ever came).
        let queued = unsafe { self.tx.send(&mut self.slab, false) }.unwrap_or_default();
        // The ring reserves all or nothing: on a full ring, give the frames back.
        while let Some(p) = self.slab.pop_back() {
            self.umem.free_packet(p);
        }
        self.outstanding += queued;
        debug_assert!(queued == 0 || queued == ready);
        queued
    }

    /// Tell the kernel there is something to send (`sendto` with no data). In copy mode
    /// this is where the kernel transmits, at most a budget (32 by default) per call:
    /// `Ok(false)` means it stopped early (EAGAIN/EBUSY/ENOBUFS) and wants another kick.
    pub fn kick(&self) -> io::Result<bool> {
        // SAFETY: sendto with a null buffer of length 0 and no address is the documented
        // AF_XDP TX wakeup; the fd is open.
        let rc = unsafe {
            libc::sendto(
                self.sock.as_raw_fd(),
                std::ptr::null(),
                0,
                libc::MSG_DONTWAIT,
                std::ptr::null(),
                0,
            )
        };
        if rc >= 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EAGAIN) | Some(libc::EBUSY) | Some(libc::ENOBUFS) | Some(libc::EINTR) => {
                Ok(false)
            }
            _ => Err(e),
        }
    }

    /// Reap completed frames back into the UMEM; how many.
    pub fn complete(&mut self) -> usize {
        let n = self.cq.dequeue(&mut self.umem, RING as usize);
        self.outstanding -= n.min(self.outstanding);
        n
    }

    /// Descriptors the kernel found invalid (wrong length or address): must stay 0.
    pub fn tx_invalid(&self) -> u64 {
        self.sock
            .statistics()
            .map(|s| s.tx_invalid_descs)
            .unwrap_or(0)
    }
}

/// A receive-only AF_XDP socket on one queue, with its own UMEM; an XDP program must
/// redirect the queue's packets to it through an XSKMAP.
pub struct XskRx {
    umem: Umem,
    fill: FillRing,
    rx: RxRing,
    _cq: CompletionRing,
    sock: XdpSocket,
    slab: HeapSlab,
    pub mode: XskMode,
}

/// Kernel-side drops of a receive socket.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct XskRxDrops {
    /// Dropped because the RX ring was full (the sink fell behind).
    pub rx_ring_full: u64,
    /// Times the fill ring had no free UMEM frame for a frame (`rx_fill_ring_empty_descs`):
    /// those frames are also in `dropped`.
    pub fill_ring_empty: u64,
    /// Every drop but the RX ring's (`rx_dropped`): no fill-ring frame, a frame larger
    /// than a UMEM chunk …
    pub dropped: u64,
}

// SAFETY: as for `XskTx`: the slab of packets is empty between calls (`recv` frees
// every packet before returning) and everything they point into moves with the struct.
unsafe impl Send for XskRx {}

impl XskRx {
    pub fn open(ifindex: u32, queue: u32, want: XskModeRequest) -> Result<XskRx, OpenError> {
        let mut umem = umem()?;
        let mut b = builder()?;
        let cfg = RingConfigBuilder {
            rx_count: RING,
            tx_count: 0,
            fill_count: RING,
            completion_count: 1,
        }
        .build()
        .map_err(|e| OpenError::Io("ring configuration".into(), io::Error::other(e.to_string())))?;
        let (rings, flags) = b
            .build_rings(&umem, cfg)
            .map_err(|e| socket_err("AF_XDP rings", e))?;
        let mut fill = rings.fill_ring;
        // SAFETY: the fill ring takes free chunks of `umem`, registered with this socket;
        // both live in the returned struct, so the kernel's writes land in live memory.
        unsafe { fill.enqueue(&mut umem, RING as usize) };
        let (sock, mode) = bind(b, flags, ifindex, queue, want)?;
        let rx = ring(rings.rx_ring, "no RX ring")?;
        Ok(XskRx {
            umem,
            fill,
            rx,
            _cq: rings.completion_ring,
            sock,
            slab: HeapSlab::with_capacity(256),
            mode,
        })
    }

    /// Take what the RX ring holds (at most 256 frames), call `each(frame)` for each,
    /// give the chunks back to the fill ring; how many.
    pub fn recv(&mut self, mut each: impl FnMut(&[u8])) -> usize {
        // SAFETY: the packets point into `self.umem`; every one is freed back to it
        // below, before this function returns, so none outlives it.
        let n = unsafe { self.rx.recv(&self.umem, &mut self.slab) };
        while let Some(p) = self.slab.pop_back() {
            each(&p);
            self.umem.free_packet(p);
        }
        if n > 0 {
            // SAFETY: as in `open`: free chunks of our own registered UMEM.
            unsafe { self.fill.enqueue(&mut self.umem, n) };
        }
        n
    }

    /// Wait up to `ms` milliseconds for frames; whether some are ready.
    pub fn wait(&self, ms: u64) -> io::Result<bool> {
        self.sock.poll_read(xdp::socket::PollTimeout::new(Some(
            std::time::Duration::from_millis(ms),
        )))
    }

    pub fn drops(&self) -> XskRxDrops {
        self.sock
            .statistics()
            .map(|s| XskRxDrops {
                rx_ring_full: s.rx_ring_full,
                fill_ring_empty: s.rx_fill_ring_empty_descs,
                dropped: s.rx_dropped,
            })
            .unwrap_or_default()
    }
}

impl AsRawFd for XskRx {
    fn as_raw_fd(&self) -> std::os::fd::RawFd {
        self.sock.as_raw_fd()
    }
}

/// Index and MAC address of `ifname` in the calling thread's network namespace
/// (`SIOCGIFINDEX`/`SIOCGIFHWADDR` on a throwaway socket; unlike sysfs, which shows the
/// namespace that mounted it).
pub fn if_index_mac(ifname: &str) -> io::Result<(u32, [u8; 6])> {
    if ifname.is_empty() || ifname.len() >= libc::IFNAMSIZ || ifname.contains('\0') {
        return Err(io::Error::new(
            io::ErrorKind::InvalidInput,
            format!(
                "bad interface name {ifname:?}: must be 1 to {} bytes without NUL",
                libc::IFNAMSIZ - 1
            ),
        ));
    }
    // SAFETY: plain syscall with constant arguments; the result is checked.
    let raw = unsafe { libc::socket(libc::AF_INET, libc::SOCK_DGRAM | libc::SOCK_CLOEXEC, 0) };
    if raw < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `raw` is a fresh descriptor nothing else owns.
    let fd = unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(raw) };
    // SAFETY: all-zero is a valid `ifreq` (a name array and a union of plain data).
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(ifname.bytes()) {
        *d = s as libc::c_char;
    }
    // SAFETY: `req` is a live, NUL-terminated (zeroed past the name) ifreq; the ioctl
    // writes only inside it.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFINDEX, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFINDEX filled the union's `ifru_ifindex` member.
    let index = unsafe { req.ifr_ifru.ifru_ifindex } as u32;
    // SAFETY: as above; SIOCGIFHWADDR fills `ifru_hwaddr`.
    if unsafe { libc::ioctl(fd.as_raw_fd(), libc::SIOCGIFHWADDR, &mut req) } != 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: SIOCGIFHWADDR filled the union's `ifru_hwaddr` member.
    let sa = unsafe { req.ifr_ifru.ifru_hwaddr };
    let mut mac = [0u8; 6];
    for (d, s) in mac.iter_mut().zip(sa.sa_data.iter()) {
        *d = *s as u8;
    }
    Ok((index, mac))
}
