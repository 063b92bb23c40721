//! The binary's few syscalls that neither std nor `traffic::sys` wraps: effective
//! user id, ignoring SIGINT, a new session for a detached child, and a test load of
//! a trivial XDP program, and flock(2) (for `lock`).
//!
//! Owns: every `unsafe` block of the binary, each with its `SAFETY` comment, behind a
//! small safe function. Must not: import anything of this crate (it is the floor), or
//! grow policy — callers decide what a result means. Socket syscalls and signals to
//! our children live in `traffic::sys`.

use std::io;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::CommandExt;
use std::process::Command;

/// The effective user id of this process (0 is root).
pub fn euid() -> u32 {
    // SAFETY: geteuid has no preconditions and cannot fail.
    unsafe { libc::geteuid() }
}

/// Ignore SIGINT from now on. Ctrl-C in a terminal reaches the whole foreground
/// process group; an agent leaves the decision how to stop to its controller.
pub fn ignore_sigint() {
    // SAFETY: setting a signal disposition to SIG_IGN has no preconditions.
    unsafe { libc::signal(libc::SIGINT, libc::SIG_IGN) };
}

/// Make `cmd`'s child start a new session (setsid) before it execs, so it leaves the
/// terminal's process group and a Ctrl-C aimed at us does not reach it.
pub fn new_session_on_spawn(cmd: &mut Command) {
    // SAFETY: the closure runs in the forked child before exec and only calls setsid,
    // which is async-signal-safe; it allocates nothing and touches no shared state.
    unsafe {
        cmd.pre_exec(|| {
            libc::setsid();
            Ok(())
        });
    }
}

/// The leading fields of `union bpf_attr` used by BPF_PROG_LOAD, zero-padded to 128 bytes.
#[repr(C)]
struct BpfProgLoadAttr {
    prog_type: u32,
    insn_cnt: u32,
    insns: u64,
    license: u64,
    log_level: u32,
    log_size: u32,
    log_buf: u64,
    kern_version: u32,
    prog_flags: u32,
    _pad: [u8; 128 - 48],
}

/// `struct bpf_insn`: `regs` holds dst_reg in the low nibble, src_reg in the high one.
#[repr(C)]
struct BpfInsn {
    code: u8,
    regs: u8,
    off: i16,
    imm: i32,
}

/// Load (and immediately close) the XDP program `r0 = XDP_PASS; exit` with bpf(2):
/// whether this kernel and our privileges allow XDP at all. Attaches nothing.
pub fn load_trivial_xdp() -> io::Result<()> {
    const BPF_PROG_LOAD: libc::c_long = 5;
    const BPF_PROG_TYPE_XDP: u32 = 6;
    const XDP_PASS: i32 = 2;
    let insns = [
        BpfInsn {
            code: 0xb7,
            regs: 0,
            off: 0,
            imm: XDP_PASS,
        }, // mov64 r0, XDP_PASS
        BpfInsn {
            code: 0x95,
            regs: 0,
            off: 0,
            imm: 0,
        }, // exit
    ];
    let license = b"GPL\0";
    let attr = BpfProgLoadAttr {
        prog_type: BPF_PROG_TYPE_XDP,
        insn_cnt: insns.len() as u32,
        insns: insns.as_ptr() as u64,
        license: license.as_ptr() as u64,
        log_level: 0,
        log_size: 0,
        log_buf: 0,
        kern_version: 0,
        prog_flags: 0,
        _pad: [0; 128 - 48],
    };
    let size = std::mem::size_of_val(&attr);
    // SAFETY: `attr` is a fully initialised, zero-padded prefix of `union bpf_attr` of
    // `size` bytes; its pointers refer to `insns` and `license`, alive for the call.
    let fd = unsafe {
        libc::syscall(
            libc::SYS_bpf,
            BPF_PROG_LOAD,
            &attr as *const BpfProgLoadAttr,
            size,
        )
    };
    if fd < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: `fd` is the program fd bpf(2) just returned; nothing else owns it. The
    // OwnedFd closes it once, here.
    drop(unsafe { OwnedFd::from_raw_fd(fd as libc::c_int) });
    Ok(())
}

/// flock(2) an open file shared (LOCK_SH), waiting while another holds it exclusively:
/// readers that rely on a setting hold it shared, a writer exclusively.
pub fn flock_shared(file: &std::fs::File) -> io::Result<()> {
    use std::os::fd::AsRawFd;
    loop {
        // SAFETY: flock on a file descriptor that `file` keeps open; no memory involved.
        if unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_SH) } == 0 {
            return Ok(());
        }
        let e = io::Error::last_os_error();
        if e.raw_os_error() != Some(libc::EINTR) {
            return Err(e);
        }
    }
}

/// Release a flock(2) lock held through `file` now. Closing the file alone is not
/// enough while a child forked by another thread still has a copy of the descriptor
/// (between its fork and its exec): the lock belongs to the open file, which stays
/// open until that copy is closed. LOCK_UN releases it for every copy.
pub fn flock_release(file: &std::fs::File) {
    use std::os::fd::AsRawFd;
    // SAFETY: flock on a file descriptor that `file` keeps open; no memory involved.
    // A failure (EINTR aside, none is possible on an open descriptor) leaves the
    // release to the close that follows.
    while unsafe { libc::flock(file.as_raw_fd(), libc::LOCK_UN) } != 0
        && io::Error::last_os_error().raw_os_error() == Some(libc::EINTR)
    {}
}

/// flock(2) an open file exclusively: `Ok(true)` when locked, `Ok(false)` when another
/// open file holds the lock and `wait` is false. The kernel drops the lock when the
/// file is closed or its process dies, so a lock never outlives its holder.
pub fn flock_exclusive(file: &std::fs::File, wait: bool) -> io::Result<bool> {
    use std::os::fd::AsRawFd;
    let op = libc::LOCK_EX | if wait { 0 } else { libc::LOCK_NB };
    loop {
        // SAFETY: flock on a file descriptor that `file` keeps open; no memory involved.
        if unsafe { libc::flock(file.as_raw_fd(), op) } == 0 {
            return Ok(true);
        }
        let e = io::Error::last_os_error();
        match e.raw_os_error() {
            Some(libc::EINTR) => continue,
            Some(libc::EWOULDBLOCK) => return Ok(false),
            _ => return Err(e),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bpf_attr_is_the_kernel_size() {
        assert_eq!(std::mem::size_of::<BpfProgLoadAttr>(), 128);
        assert_eq!(std::mem::size_of::<BpfInsn>(), 8);
    }

    #[test]
    fn xdp_load_answers_without_panicking() {
        // Root with BPF: Ok; otherwise a plain errno (EPERM, ENOSYS, EINVAL…).
        if let Err(e) = load_trivial_xdp() {
            assert!(e.raw_os_error().is_some(), "{e}");
        }
    }
}
