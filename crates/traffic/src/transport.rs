use units::Time;

/// A host, as numbered by the engine.
pub type HostId = u32;

/// A connection handle. Opaque to applications; valid from `connect` (or
/// `Accepted`) until `Closed` or `Reset` is delivered for it.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ConnId(pub u64);

/// An engine may keep an optional handle in 8 bytes (`units::Opt`).
impl units::Bits for ConnId {
    fn to_bits(self) -> u64 {
        self.0
    }
    fn from_bits(b: u64) -> Self {
        ConnId(b)
    }
}

/// What the transport tells an application.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Event {
    /// An outgoing connection completed its handshake.
    Connected(ConnId),
    /// A connection to a port this application listens on completed its handshake.
    Accepted { conn: ConnId, host: HostId, port: u16, peer: HostId },
    /// Every byte the peer wrote before marking `msg` has arrived in order.
    Message { conn: ConnId, msg: u64 },
    /// Send-buffer space was freed after a short write.
    Writable(ConnId),
    /// The peer closed its direction (FIN received in order).
    PeerClosed(ConnId),
    /// Both directions are closed; the handle is no longer valid.
    Closed(ConnId),
    /// The connection was reset or aborted (handshake or data retries exhausted).
    Reset(ConnId),
    /// A timer set with [`Transport::set_timer`] fired.
    Timer(u64),
    /// A datagram arrived on a bound port.
    Datagram { host: HostId, port: u16, from: HostId, bytes: u32 },
}

/// The operations available to applications. Implemented by each engine.
pub trait Transport {
    fn now(&self) -> Time;
    /// Accept TCP connections to `port` on `host`.
    fn listen(&mut self, host: HostId, port: u16);
    /// Open a TCP connection from `from` to `to:port`.
    fn connect(&mut self, from: HostId, to: HostId, port: u16) -> ConnId;
    /// Queue `bytes` for sending; returns how many the send buffer accepted.
    /// After a short write, a `Writable` event follows when space frees up.
    fn write(&mut self, conn: ConnId, bytes: u64) -> u64;
    /// Free space in the send buffer.
    fn send_space(&self, conn: ConnId) -> u64;
    /// Keep the send buffer full for ever (a greedy, never-ending source).
    fn write_forever(&mut self, conn: ConnId);
    /// Message boundary after everything written so far (see the crate docs).
    fn mark(&mut self, conn: ConnId, msg: u64);
    /// Close our direction once all written data is sent.
    fn close(&mut self, conn: ConnId);
    /// Reset the connection.
    fn abort(&mut self, conn: ConnId);
    /// Receive datagrams sent to `host:port`.
    fn bind_udp(&mut self, host: HostId, port: u16);
    /// Send one datagram whose UDP payload is `payload` bytes.
    fn send_udp(&mut self, from: HostId, src_port: u16, to: HostId, dst_port: u16, payload: u32);
    /// Deliver `Event::Timer(token)` at `at` (or now, if `at` has passed).
    fn set_timer(&mut self, at: Time, token: u64);
}

/// A traffic source or application.
pub trait App {
    /// Called once at time zero.
    fn start(&mut self, tp: &mut dyn Transport);
    fn on_event(&mut self, ev: Event, tp: &mut dyn Transport);
    /// Records and counters for the run directory, read at the end.
    fn report(&self) -> crate::AppReport;
}
