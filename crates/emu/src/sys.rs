//! The only unsafe code of the emulator: thin wrappers over the system
//! calls it needs (TUN devices, namespaces, epoll, timerfd, the monotonic
//! clock). Each returns an `io::Result` and owns what it opens.
#![allow(unsafe_code)]

use std::io;
use std::os::fd::{AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

fn check(r: libc::c_int) -> io::Result<libc::c_int> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn check_size(r: libc::ssize_t) -> io::Result<usize> {
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r as usize)
    }
}

/// CLOCK_MONOTONIC in nanoseconds.
pub fn monotonic_ns() -> u64 {
    clock_ns(libc::CLOCK_MONOTONIC)
}

/// CLOCK_REALTIME, the clock of the kernel's receive timestamps.
pub fn realtime_ns() -> u64 {
    clock_ns(libc::CLOCK_REALTIME)
}

fn clock_ns(clock: libc::clockid_t) -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec; both clocks always exist.
    unsafe { libc::clock_gettime(clock, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Asks the kernel to stamp each datagram socket `fd` receives with the
/// instant its stack received it (SO_TIMESTAMPNS).
pub fn enable_rx_timestamps(fd: RawFd) -> io::Result<()> {
    let on: libc::c_int = 1;
    // SAFETY: the option value is a c_int that outlives the call.
    check(unsafe {
        libc::setsockopt(fd, libc::SOL_SOCKET, libc::SO_TIMESTAMPNS, (&on as *const libc::c_int).cast(), size_of::<libc::c_int>() as libc::socklen_t)
    })
    .map_err(|e| io::Error::new(e.kind(), format!("setsockopt SO_TIMESTAMPNS: {e}")))?;
    Ok(())
}

/// Receives one datagram into `buf`: its length and, if the socket asked
/// for them, the kernel's receive time on CLOCK_REALTIME (ns).
pub fn recv_stamped(fd: RawFd, buf: &mut [u8]) -> io::Result<(usize, Option<u64>)> {
    let mut iov = libc::iovec { iov_base: buf.as_mut_ptr().cast(), iov_len: buf.len() };
    let mut control = [0u64; 8];
    // SAFETY: an all-zero msghdr is valid; its pointers are set below to
    // buffers that outlive the call.
    let mut msg: libc::msghdr = unsafe { std::mem::zeroed() };
    msg.msg_iov = &mut iov;
    msg.msg_iovlen = 1;
    msg.msg_control = control.as_mut_ptr().cast();
    msg.msg_controllen = size_of_val(&control) as _;
    // SAFETY: `msg` describes valid buffers.
    let n = check_size(unsafe { libc::recvmsg(fd, &mut msg, 0) })?;
    let mut stamp = None;
    // SAFETY: the CMSG macros walk the control buffer the kernel filled,
    // within msg_controllen; a SCM_TIMESTAMPNS payload is a timespec.
    unsafe {
        let mut c = libc::CMSG_FIRSTHDR(&msg);
        while !c.is_null() {
            if (*c).cmsg_level == libc::SOL_SOCKET && (*c).cmsg_type == libc::SCM_TIMESTAMPNS {
                let ts: libc::timespec = std::ptr::read_unaligned(libc::CMSG_DATA(c).cast());
                stamp = Some(ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64);
            }
            c = libc::CMSG_NXTHDR(&msg, c);
        }
    }
    Ok((n, stamp))
}

/// Opens a TUN device named `name` (IFF_TUN, no packet information,
/// non-blocking) in the calling thread's network namespace.
pub fn open_tun(name: &str) -> io::Result<OwnedFd> {
    let path = c"/dev/net/tun";
    // SAFETY: a valid NUL-terminated path.
    let fd = check(unsafe { libc::open(path.as_ptr(), libc::O_RDWR | libc::O_NONBLOCK | libc::O_CLOEXEC) })?;
    // SAFETY: `fd` was just opened and is owned by nobody else.
    let fd = unsafe { OwnedFd::from_raw_fd(fd) };
    if name.len() >= libc::IFNAMSIZ {
        return Err(io::Error::new(io::ErrorKind::InvalidInput, format!("interface name {name:?} is longer than {} bytes", libc::IFNAMSIZ - 1)));
    }
    // SAFETY: an all-zero ifreq is valid.
    let mut req: libc::ifreq = unsafe { std::mem::zeroed() };
    for (d, s) in req.ifr_name.iter_mut().zip(name.bytes()) {
        *d = s as libc::c_char;
    }
    req.ifr_ifru.ifru_flags = (libc::IFF_TUN | libc::IFF_NO_PI) as libc::c_short;
    // SAFETY: TUNSETIFF takes a pointer to an ifreq, which outlives the call.
    check(unsafe { libc::ioctl(fd.as_raw_fd(), libc::TUNSETIFF as _, &mut req as *mut libc::ifreq) })?;
    Ok(fd)
}

/// Moves the calling thread into the network namespace open as `ns`.
pub fn enter_netns(ns: BorrowedFd<'_>) -> io::Result<()> {
    // SAFETY: setns only reads the descriptor.
    check(unsafe { libc::setns(ns.as_raw_fd(), libc::CLONE_NEWNET) })?;
    Ok(())
}

/// Reads one packet; `Ok(None)` when none is waiting.
pub fn read(fd: RawFd, buf: &mut [u8]) -> io::Result<Option<usize>> {
    // SAFETY: `buf` is valid for writes of its length.
    match check_size(unsafe { libc::read(fd, buf.as_mut_ptr().cast(), buf.len()) }) {
        Ok(n) => Ok(Some(n)),
        Err(e) if e.kind() == io::ErrorKind::WouldBlock => Ok(None),
        Err(e) => Err(e),
    }
}

/// Writes one packet.
pub fn write(fd: RawFd, buf: &[u8]) -> io::Result<usize> {
    // SAFETY: `buf` is valid for reads of its length.
    check_size(unsafe { libc::write(fd, buf.as_ptr().cast(), buf.len()) })
}

/// An epoll instance.
pub struct Epoll(OwnedFd);

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: no pointers.
        let fd = check(unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) })?;
        // SAFETY: just created, owned here.
        Ok(Epoll(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    /// Watches `fd` for input, reporting `token`.
    pub fn add(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event { events: libc::EPOLLIN as u32, u64: token };
        // SAFETY: `ev` outlives the call.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Watches `fd` edge-triggered for input, output and the peer's
    /// shutdown, reporting `token`: a change of readiness is reported once,
    /// so the caller reads and writes until the kernel says it would block
    /// (and need not switch output interest on and off as a buffer fills).
    pub fn add_edge(&self, fd: RawFd, token: u64) -> io::Result<()> {
        let events = (libc::EPOLLIN | libc::EPOLLOUT | libc::EPOLLRDHUP | libc::EPOLLET) as u32;
        let mut ev = libc::epoll_event { events, u64: token };
        // SAFETY: `ev` outlives the call.
        check(unsafe { libc::epoll_ctl(self.0.as_raw_fd(), libc::EPOLL_CTL_ADD, fd, &mut ev) })?;
        Ok(())
    }

    /// Waits up to `timeout_ms` (-1: for ever) for input; the tokens ready.
    pub fn wait(&self, out: &mut Vec<u64>, timeout_ms: i32) -> io::Result<()> {
        let mut evs = [libc::epoll_event { events: 0, u64: 0 }; 16];
        // SAFETY: `evs` is valid for 16 entries.
        let n = match check(unsafe { libc::epoll_wait(self.0.as_raw_fd(), evs.as_mut_ptr(), evs.len() as i32, timeout_ms) }) {
            Ok(n) => n as usize,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => 0,
            Err(e) => return Err(e),
        };
        out.clear();
        out.extend(evs[..n].iter().map(|e| e.u64));
        Ok(())
    }
}

/// A timerfd on CLOCK_MONOTONIC, armed at absolute deadlines.
pub struct TimerFd(OwnedFd);

impl TimerFd {
    pub fn new() -> io::Result<TimerFd> {
        // SAFETY: no pointers.
        let fd = check(unsafe { libc::timerfd_create(libc::CLOCK_MONOTONIC, libc::TFD_NONBLOCK | libc::TFD_CLOEXEC) })?;
        // SAFETY: just created, owned here.
        Ok(TimerFd(unsafe { OwnedFd::from_raw_fd(fd) }))
    }

    pub fn raw(&self) -> RawFd {
        self.0.as_raw_fd()
    }

    /// Fires at `at_ns` on CLOCK_MONOTONIC (0 disarms it).
    pub fn set(&self, at_ns: u64) -> io::Result<()> {
        let ts = libc::timespec { tv_sec: (at_ns / 1_000_000_000) as _, tv_nsec: (at_ns % 1_000_000_000) as _ };
        let spec = libc::itimerspec { it_interval: libc::timespec { tv_sec: 0, tv_nsec: 0 }, it_value: ts };
        // SAFETY: `spec` outlives the call; the old value is not asked for.
        check(unsafe { libc::timerfd_settime(self.0.as_raw_fd(), libc::TFD_TIMER_ABSTIME, &spec, std::ptr::null_mut()) })?;
        Ok(())
    }

    /// Clears an expiry so that epoll stops reporting it.
    pub fn clear(&self) {
        let mut n = [0u8; 8];
        let _ = read(self.0.as_raw_fd(), &mut n);
    }
}

/// What TCP_INFO tells of a TCP socket that the emulator keeps.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpInfo {
    /// Segments retransmitted over the connection's life.
    pub total_retrans: u32,
    /// Segments sent, retransmissions included.
    pub segs_out: u32,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    /// Smoothed round-trip time in microseconds (0 without a sample).
    pub rtt_us: u32,
}

/// Reads TCP_INFO of the TCP socket `fd`.
pub fn tcp_info(fd: RawFd) -> io::Result<TcpInfo> {
    // SAFETY: an all-zero tcp_info is valid.
    let mut info: libc::tcp_info = unsafe { std::mem::zeroed() };
    let mut len = std::mem::size_of::<libc::tcp_info>() as libc::socklen_t;
    let ptr = (&mut info as *mut libc::tcp_info).cast();
    // SAFETY: `info` is valid for writes of `len` bytes, and the kernel
    // writes at most `len` (a newer kernel's longer struct is cut short).
    check(unsafe { libc::getsockopt(fd, libc::IPPROTO_TCP, libc::TCP_INFO, ptr, &mut len) })?;
    Ok(TcpInfo {
        total_retrans: info.tcpi_total_retrans,
        segs_out: info.tcpi_segs_out,
        bytes_acked: info.tcpi_bytes_acked,
        bytes_received: info.tcpi_bytes_received,
        rtt_us: info.tcpi_rtt,
    })
}

/// Sets the calling thread's timer slack (how late the kernel may wake it
/// to batch wake-ups; 50 µs by default).
pub fn set_timer_slack_ns(ns: u64) -> io::Result<()> {
    // SAFETY: PR_SET_TIMERSLACK takes an integer.
    check(unsafe { libc::prctl(libc::PR_SET_TIMERSLACK, ns as libc::c_ulong) })?;
    Ok(())
}

/// Whether a process `pid` exists.
pub fn process_exists(pid: u32) -> bool {
    // SAFETY: signal 0 checks existence and sends nothing.
    let r = unsafe { libc::kill(pid as libc::pid_t, 0) };
    r == 0 || io::Error::last_os_error().raw_os_error() == Some(libc::EPERM)
}

/// The effective user id is root's (the emulator needs CAP_NET_ADMIN).
pub fn is_root() -> bool {
    // SAFETY: no arguments.
    unsafe { libc::geteuid() == 0 }
}

/// CPU time the calling thread has used (user and system), in nanoseconds.
pub fn thread_cpu_ns() -> u64 {
    let mut ts = libc::timespec { tv_sec: 0, tv_nsec: 0 };
    // SAFETY: `ts` is a valid timespec.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as u64 * 1_000_000_000 + ts.tv_nsec as u64
}

/// Sends `signal` to every process of process group `pgid`.
pub fn signal_group(pgid: u32, signal: i32) -> io::Result<()> {
    // SAFETY: no pointers; a negative pid names the group.
    check(unsafe { libc::kill(-(pgid as libc::pid_t), signal) })?;
    Ok(())
}

pub const SIGTERM: i32 = libc::SIGTERM;
pub const SIGKILL: i32 = libc::SIGKILL;

/// Runs the calling thread under SCHED_FIFO at `priority` (1-99), so that
/// ordinary threads cannot delay its wake-ups.
pub fn set_realtime(priority: i32) -> io::Result<()> {
    let param = libc::sched_param { sched_priority: priority };
    // SAFETY: `param` outlives the call; 0 names the calling thread.
    check(unsafe { libc::sched_setscheduler(0, libc::SCHED_FIFO, &param) })?;
    Ok(())
}

/// The calling thread under SCHED_FIFO while this lives (if the privilege
/// allows), back to the ordinary scheduler when dropped.
pub struct Fifo(bool);

impl Fifo {
    pub fn enter(priority: i32) -> Fifo {
        Fifo(set_realtime(priority).is_ok())
    }
}

impl Drop for Fifo {
    fn drop(&mut self) {
        if self.0 {
            let param = libc::sched_param { sched_priority: 0 };
            // SAFETY: `param` outlives the call; 0 names the calling thread.
            let _ = unsafe { libc::sched_setscheduler(0, libc::SCHED_OTHER, &param) };
        }
    }
}

/// Sends `signal` to process `pid`.
pub fn signal_process(pid: u32, signal: i32) -> io::Result<()> {
    // SAFETY: no pointers.
    check(unsafe { libc::kill(pid as libc::pid_t, signal) })?;
    Ok(())
}
