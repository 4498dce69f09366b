//! TCP connections: each a non-blocking kernel socket with a small staging
//! buffer in front (the frames of [`super::framing`]), and the handles
//! applications hold.
//!
//! What an application may write at a time is what the staging buffer has
//! room for ([`STAGING`]); the kernel's own send buffer lies behind it. A
//! write that does not fit whole is short, and `Writable` follows once a
//! third of the staging buffer is free again (when Linux wakes a blocked
//! writer: a third of its buffer free, `sk_stream_is_writeable`).

use super::framing::{Garbled, Incoming, Outgoing};
use crate::sys;
use rundir::ConnRow;
use socket2::SockRef;
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::os::fd::AsRawFd;
use std::time::Duration;
use traffic::{ConnId, HostId};
use units::Time;

/// Bytes a connection stages in user space before the kernel takes them.
pub const STAGING: u64 = 32 * 1024;
/// Reads of one connection per turn of the loop, so that a fast sender
/// cannot starve the others; the rest waits for the next turn.
const READS_PER_TURN: usize = 8;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Phase {
    /// connect(2) is under way.
    Connecting,
    Open,
}

/// How a connection's reading went.
#[derive(Debug)]
pub enum Reading {
    /// Everything the kernel held was read.
    Drained,
    /// There may be more: read again next turn.
    More,
    /// The peer closed its direction.
    Eof,
    /// The peer sent something that is not frames.
    Garbled,
    Failed,
}

/// One end of a TCP connection.
pub struct Conn {
    pub stream: TcpStream,
    pub app: u32,
    pub host: HostId,
    pub peer: HostId,
    pub phase: Phase,
    /// Accepted from a listener, rather than opened by `connect`.
    pub passive: bool,
    pub out: Outgoing,
    inc: Incoming,
    pub greedy: bool,
    pub want_writable: bool,
    /// The application closed its direction (the FIN goes once the staged
    /// bytes have), which is then shut down.
    pub closing: bool,
    pub wr_shut: bool,
    pub rd_eof: bool,
    /// Queued for a flush after the application's callback.
    pub dirty: bool,
    pub opened: Time,
    /// Bytes the application wrote; bytes the kernel took and gave.
    pub written: u64,
    pub wire_sent: u64,
    pub wire_received: u64,
}

impl Conn {
    pub fn new(stream: TcpStream, app: u32, host: HostId, peer: HostId, phase: Phase, opened: Time) -> Conn {
        Conn {
            stream,
            app,
            host,
            peer,
            phase,
            passive: phase == Phase::Open,
            out: Outgoing::default(),
            inc: Incoming::default(),
            greedy: false,
            want_writable: false,
            closing: false,
            wr_shut: false,
            rd_eof: false,
            dirty: false,
            opened,
            written: 0,
            wire_sent: 0,
            wire_received: 0,
        }
    }

    /// Room in the staging buffer for the application's writes.
    pub fn space(&self) -> u64 {
        if self.closing {
            return 0;
        }
        STAGING.saturating_sub(self.out.unsent())
    }

    /// The application writes `bytes`; how many the staging buffer took.
    pub fn write(&mut self, bytes: u64) -> u64 {
        let took = bytes.min(self.space());
        self.out.write(took);
        self.written += took;
        if took < bytes {
            self.want_writable = true;
        }
        took
    }

    /// Whether a blocked writer should now be told `Writable`.
    pub fn writable_again(&mut self) -> bool {
        let wake = self.want_writable && self.space() >= STAGING / 3;
        if wake {
            self.want_writable = false;
        }
        wake
    }

    /// The outcome of connect(2): `None` while it is under way.
    pub fn connect_result(&self) -> Option<io::Result<()>> {
        match self.stream.take_error() {
            Ok(Some(e)) | Err(e) => return Some(Err(e)),
            Ok(None) => {}
        }
        match self.stream.peer_addr() {
            Ok(_) => Some(Ok(())),
            Err(e) if e.raw_os_error() == Some(libc::ENOTCONN) => None,
            Err(e) => Some(Err(e)),
        }
    }

    /// Reads what the kernel holds (a few buffers at most), parsing frames;
    /// the marks completed go to `marks`.
    pub fn read(&mut self, buf: &mut [u8], marks: &mut Vec<u64>) -> Reading {
        for _ in 0..READS_PER_TURN {
            match (&self.stream).read(buf) {
                Ok(0) => return Reading::Eof,
                Ok(n) => {
                    self.wire_received += n as u64;
                    if let Err(Garbled) = self.inc.feed(&buf[..n], &mut |m| marks.push(m)) {
                        return Reading::Garbled;
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Reading::Drained,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return Reading::Failed,
            }
        }
        Reading::More
    }

    /// Hands staged bytes to the kernel until it would block or nothing is
    /// left, topping the staging buffer up first if the application writes
    /// for ever.
    pub fn flush(&mut self) -> io::Result<()> {
        if self.phase == Phase::Connecting {
            return Ok(());
        }
        loop {
            if self.greedy {
                let top = self.space();
                self.out.write(top);
                self.written += top;
            }
            let bytes = self.out.next_bytes();
            if bytes.is_empty() {
                return Ok(());
            }
            match (&self.stream).write(bytes) {
                Ok(n) => {
                    self.out.consumed(n);
                    self.wire_sent += n as u64;
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return Ok(()),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => return Err(e),
            }
        }
    }

    /// Sends the FIN once the application has closed and every staged byte
    /// has gone; whether it was sent now.
    pub fn shut_if_done(&mut self) -> io::Result<bool> {
        if !self.closing || self.wr_shut || !self.out.is_empty() || self.phase == Phase::Connecting {
            return Ok(false);
        }
        self.stream.shutdown(Shutdown::Write)?;
        self.wr_shut = true;
        Ok(true)
    }

    /// Makes the close send an RST and discard what is unsent.
    pub fn linger_zero(&self) {
        let _ = SockRef::from(&self.stream).set_linger(Some(Duration::ZERO));
    }

    /// The connection's record, with what the kernel counted; `closed` is
    /// when the handle ended (`None`: open at the end of the run).
    pub fn row(&self, closed: Option<Time>) -> ConnRow {
        let info = sys::tcp_info(self.stream.as_raw_fd()).unwrap_or_default();
        let remote_port = self.stream.peer_addr().map_or(0, |a| a.port());
        let local_port = self.stream.local_addr().map_or(0, |a| a.port());
        ConnRow {
            app: self.app,
            active: !self.passive,
            host: self.host,
            peer: self.peer,
            local_port,
            remote_port,
            opened_s: self.opened.as_secs_f64(),
            closed_s: closed.map_or(f64::NAN, Time::as_secs_f64),
            bytes_acked: info.bytes_acked,
            bytes_received: info.bytes_received,
            segments_sent: info.segs_out as u64,
            retransmits: info.total_retrans as u64,
            fast_recoveries: 0,
            rtos: 0,
            srtt_s: if info.rtt_us > 0 { info.rtt_us as f64 * 1e-6 } else { f64::NAN },
        }
    }
}

/// The live connections, by index, and the generation of each slot: a
/// handle is (generation, index) and stops being valid when its slot is
/// freed, even if the slot is reused.
#[derive(Default)]
pub struct Conns {
    slots: Vec<Option<Conn>>,
    gens: Vec<u32>,
    free: Vec<u32>,
}

impl Conns {
    fn slot(&mut self) -> u32 {
        self.free.pop().unwrap_or_else(|| {
            self.slots.push(None);
            self.gens.push(0);
            (self.slots.len() - 1) as u32
        })
    }

    pub fn insert(&mut self, c: Conn) -> u32 {
        let idx = self.slot();
        self.slots[idx as usize] = Some(c);
        idx
    }

    /// A handle that was never live (a connection that failed before it
    /// had a socket): the application is told `Reset` for it, and every
    /// call it makes with it does nothing.
    pub fn dead_id(&mut self) -> ConnId {
        let idx = self.slot();
        let id = self.id(idx);
        self.gens[idx as usize] = self.gens[idx as usize].wrapping_add(1);
        self.free.push(idx);
        id
    }

    pub fn id(&self, idx: u32) -> ConnId {
        ConnId((self.gens[idx as usize] as u64) << 32 | idx as u64)
    }

    /// The live connection behind a handle.
    pub fn index(&self, id: ConnId) -> Option<u32> {
        let (idx, gen) = ((id.0 & 0xffff_ffff) as u32, (id.0 >> 32) as u32);
        (self.gens.get(idx as usize) == Some(&gen) && self.slots[idx as usize].is_some()).then_some(idx)
    }

    /// The live connection whose epoll token carries `idx` and the low 24
    /// bits of its generation (an event may arrive for a slot's previous
    /// connection).
    pub fn by_token(&self, idx: u32, gen24: u32) -> Option<u32> {
        let gen = *self.gens.get(idx as usize)?;
        (gen & 0xff_ffff == gen24 && self.slots[idx as usize].is_some()).then_some(idx)
    }

    pub fn peek(&self, idx: u32) -> Option<&Conn> {
        self.slots.get(idx as usize)?.as_ref()
    }

    pub fn get(&mut self, idx: u32) -> Option<&mut Conn> {
        self.slots.get_mut(idx as usize)?.as_mut()
    }

    /// Frees the slot; the connection's handle is no longer valid.
    pub fn remove(&mut self, idx: u32) -> Option<Conn> {
        let c = self.slots.get_mut(idx as usize)?.take()?;
        self.gens[idx as usize] = self.gens[idx as usize].wrapping_add(1);
        self.free.push(idx);
        Some(c)
    }

    pub fn drain(&mut self) -> impl Iterator<Item = Conn> + '_ {
        self.slots.iter_mut().filter_map(Option::take)
    }
}
