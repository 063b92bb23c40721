//! Pieces both epoll loops (server and proxy) share: the thread that runs a loop and
//! the handle that stops it, the listening socket with its accept back-off, and a slab
//! of connections addressed by epoll token.
//!
//! Owns: starting and stopping a loop thread, listen(2) setup and the reaction to
//! accept(2) failures.
//! Must not: know what the connections carry.

use crate::sys::{self, Epoll, EventFd, EPOLLIN};
use crate::TrafficError;
use socket2::{Domain, Protocol, Socket, Type};
use std::io;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::Arc;
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

/// Token of the listening socket.
pub const LISTENER: u64 = u64::MAX;
/// Token of the stop eventfd.
pub const WAKE: u64 = u64::MAX - 1;
/// Longest epoll wait: how often a loop looks at its clock when nothing happens.
pub const TICK: Duration = Duration::from_millis(100);
/// How long the listener rests after accept(2) ran out of file descriptors or memory,
/// so that a full process does not spin at 100 % CPU on a listener that stays readable.
pub const ACCEPT_BACKOFF: Duration = Duration::from_millis(10);
/// Most connections accepted per wake-up, so open connections are served in between.
const ACCEPT_BURST: usize = 128;

/// A non-blocking TCP listener on `addr` with SO_REUSEADDR and `backlog`.
pub fn listen(addr: SocketAddr, backlog: u32) -> Result<Socket, TrafficError> {
    let ctx = |e| TrafficError::io(format!("listen on tcp/{addr}"), e);
    let s =
        Socket::new(Domain::for_address(addr), Type::STREAM, Some(Protocol::TCP)).map_err(ctx)?;
    s.set_reuse_address(true).map_err(ctx)?;
    s.bind(&addr.into()).map_err(ctx)?;
    s.listen(backlog.clamp(1, i32::MAX as u32) as i32)
        .map_err(ctx)?;
    s.set_nonblocking(true).map_err(ctx)?;
    Ok(s)
}

/// A running epoll loop thread and the handle that stops it: the stop flag and the
/// eventfd that wakes the loop to look at it, the count of open connections the loop
/// keeps, and the address it listens on. Dropping it stops the loop without waiting.
pub struct LoopThread<R> {
    stop: Arc<AtomicBool>,
    wake: Arc<EventFd>,
    open: Arc<AtomicU64>,
    addr: SocketAddr,
    worker: Option<JoinHandle<R>>,
}

impl<R: Send + 'static> LoopThread<R> {
    /// Listen on `addr` with `backlog`, register the listener and a wake eventfd with a
    /// new epoll set, and run `body(ep, acceptor, stop, open)` on the thread
    /// `conn-{what}`. `what` ("server", "proxy") also names the role in messages.
    pub fn spawn<F>(
        what: &'static str,
        addr: SocketAddr,
        backlog: u32,
        body: F,
    ) -> Result<Self, TrafficError>
    where
        F: FnOnce(Epoll, Acceptor, &AtomicBool, &AtomicU64) -> R + Send + 'static,
    {
        if let Err(e) = sys::raise_nofile_limit() {
            tracing::warn!("cannot raise RLIMIT_NOFILE: {e}; the {what} may run out of files");
        }
        let listener = listen(addr, backlog)?;
        let addr = listener
            .local_addr()
            .ok()
            .and_then(|a| a.as_socket())
            .unwrap_or(addr);
        let ep = Epoll::new().map_err(|e| TrafficError::io("epoll_create", e))?;
        let wake = Arc::new(EventFd::new().map_err(|e| TrafficError::io("eventfd", e))?);
        ep.add(&*wake, EPOLLIN, WAKE)
            .map_err(|e| TrafficError::io("epoll_ctl(eventfd)", e))?;
        let acceptor =
            Acceptor::new(listener, &ep).map_err(|e| TrafficError::io("epoll_ctl(listener)", e))?;
        let stop = Arc::new(AtomicBool::new(false));
        let open = Arc::new(AtomicU64::new(0));
        let (st, op) = (stop.clone(), open.clone());
        let worker = std::thread::Builder::new()
            .name(format!("conn-{what}"))
            .spawn(move || body(ep, acceptor, &st, &op))
            .map_err(|e| TrafficError::io(format!("spawning the {what} thread"), e))?;
        Ok(LoopThread {
            stop,
            wake,
            open,
            addr,
            worker: Some(worker),
        })
    }
}

impl<R> LoopThread<R> {
    /// The address it listens on (the real port when the spec said 0).
    pub fn local_addr(&self) -> SocketAddr {
        self.addr
    }

    /// Connections open right now, as the loop counts them.
    pub fn open_now(&self) -> u64 {
        self.open.load(Ordering::Relaxed)
    }

    /// Stop the loop and wait for its result; `on_panic` makes one if the thread
    /// panicked.
    pub fn finish(mut self, on_panic: impl FnOnce() -> R) -> R {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.wake();
        match self.worker.take().map(JoinHandle::join) {
            Some(Ok(r)) => r,
            _ => on_panic(),
        }
    }
}

impl<R> Drop for LoopThread<R> {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        self.wake.wake();
    }
}

/// The listening socket of an epoll loop.
pub struct Acceptor {
    sock: Socket,
    /// Set while the listener is out of the epoll set after a resource error.
    paused_until: Option<Instant>,
    /// accept(2) failures (EMFILE, ENFILE, ENOBUFS, …).
    pub errors: u64,
    /// The first of them, as text.
    pub first_error: Option<String>,
}

impl Acceptor {
    pub fn new(sock: Socket, ep: &Epoll) -> io::Result<Self> {
        ep.add(&sock, EPOLLIN, LISTENER)?;
        Ok(Acceptor {
            sock,
            paused_until: None,
            errors: 0,
            first_error: None,
        })
    }

    /// Accept what is waiting (at most a burst) and hand each connection, non-blocking,
    /// to `f`. A resource error takes the listener out of `ep` for [`ACCEPT_BACKOFF`].
    pub fn accept(&mut self, ep: &Epoll, now: Instant, mut f: impl FnMut(Socket)) {
        for _ in 0..ACCEPT_BURST {
            match self.sock.accept() {
                Ok((s, _)) => {
                    if s.set_nonblocking(true).is_ok() {
                        f(s)
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                // The peer gave up before we accepted, or a signal: try the next one.
                Err(e)
                    if e.kind() == io::ErrorKind::Interrupted
                        || e.raw_os_error() == Some(libc::ECONNABORTED) =>
                {
                    continue
                }
                Err(e) => {
                    self.errors += 1;
                    if self.first_error.is_none() {
                        self.first_error = Some(format!("accept: {e}"));
                    }
                    if ep.delete(&self.sock).is_ok() {
                        self.paused_until = Some(now + ACCEPT_BACKOFF);
                    }
                    return;
                }
            }
        }
    }

    /// Put a resting listener back once its back-off is over.
    pub fn resume(&mut self, ep: &Epoll, now: Instant) {
        if self.paused_until.is_some_and(|t| now >= t)
            && ep.add(&self.sock, EPOLLIN, LISTENER).is_ok()
        {
            self.paused_until = None;
        }
    }

    /// How long the loop may sleep: [`TICK`], or less while the listener rests.
    pub fn wait_for(&self, now: Instant) -> Duration {
        match self.paused_until {
            Some(t) => t.saturating_duration_since(now).min(TICK),
            None => TICK,
        }
    }
}

/// Connections by token: a vector of slots with a free list.
pub struct Slab<T> {
    slots: Vec<Option<T>>,
    free: Vec<usize>,
    len: usize,
}

impl<T> Default for Slab<T> {
    fn default() -> Self {
        Slab {
            slots: Vec::new(),
            free: Vec::new(),
            len: 0,
        }
    }
}

impl<T> Slab<T> {
    /// The token the next `insert` will use.
    pub fn next_key(&self) -> usize {
        self.free.last().copied().unwrap_or(self.slots.len())
    }

    pub fn insert(&mut self, v: T) -> usize {
        self.len += 1;
        match self.free.pop() {
            Some(k) => {
                self.slots[k] = Some(v);
                k
            }
            None => {
                self.slots.push(Some(v));
                self.slots.len() - 1
            }
        }
    }

    pub fn get_mut(&mut self, k: usize) -> Option<&mut T> {
        self.slots.get_mut(k).and_then(Option::as_mut)
    }

    pub fn remove(&mut self, k: usize) -> Option<T> {
        let v = self.slots.get_mut(k).and_then(Option::take);
        if v.is_some() {
            self.len -= 1;
            self.free.push(k);
        }
        v
    }

    pub fn len(&self) -> usize {
        self.len
    }

    pub fn iter_mut(&mut self) -> impl Iterator<Item = (usize, &mut T)> {
        self.slots
            .iter_mut()
            .enumerate()
            .filter_map(|(k, v)| v.as_mut().map(|v| (k, v)))
    }

    /// Take every connection out (at stop).
    pub fn drain(&mut self) -> impl Iterator<Item = T> + '_ {
        self.len = 0;
        self.free.clear();
        self.slots.drain(..).flatten()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn slab_reuses_keys() {
        let mut s = Slab::default();
        let a = s.insert('a');
        let b = s.insert('b');
        assert_eq!((a, b, s.len()), (0, 1, 2));
        assert_eq!(s.remove(a), Some('a'));
        assert_eq!(s.remove(a), None, "a second remove is a no-op");
        assert_eq!(s.next_key(), a);
        assert_eq!(s.insert('c'), a);
        assert_eq!(s.get_mut(b), Some(&mut 'b'));
        assert_eq!(s.get_mut(99), None);
        assert_eq!(s.len(), 2);
        let mut all: Vec<char> = s.drain().collect();
        all.sort();
        assert_eq!(all, vec!['b', 'c']);
        assert_eq!(s.len(), 0);
    }
}
