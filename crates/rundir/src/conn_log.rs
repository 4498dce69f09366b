//! Per-connection records and per-model TCP totals, as either engine
//! measures them.

/// One TCP endpoint's record.
#[derive(Clone, Copy, Debug, Default, PartialEq)]
pub struct ConnRow {
    /// The application (or background model) it belongs to.
    pub app: u32,
    /// It opened the connection.
    pub active: bool,
    pub host: u32,
    pub peer: u32,
    pub local_port: u16,
    pub remote_port: u16,
    pub opened_s: f64,
    /// NaN if still open at the end.
    pub closed_s: f64,
    pub bytes_acked: u64,
    pub bytes_received: u64,
    pub segments_sent: u64,
    pub retransmits: u64,
    pub fast_recoveries: u64,
    pub rtos: u64,
    /// NaN without an RTT sample.
    pub srtt_s: f64,
}

/// One row per TCP endpoint, written as connections.parquet.
#[derive(Default)]
pub struct ConnLog {
    pub app: Vec<i64>,
    pub active: Vec<bool>,
    pub host: Vec<i64>,
    pub peer: Vec<i64>,
    pub local_port: Vec<i64>,
    pub remote_port: Vec<i64>,
    pub opened_s: Vec<f64>,
    pub closed_s: Vec<f64>,
    pub bytes_acked: Vec<i64>,
    pub bytes_received: Vec<i64>,
    pub segments_sent: Vec<i64>,
    pub retransmits: Vec<i64>,
    pub fast_recoveries: Vec<i64>,
    pub rtos: Vec<i64>,
    pub srtt_s: Vec<f64>,
}

impl ConnLog {
    pub fn push(&mut self, r: &ConnRow) {
        self.app.push(r.app as i64);
        self.active.push(r.active);
        self.host.push(r.host as i64);
        self.peer.push(r.peer as i64);
        self.local_port.push(r.local_port as i64);
        self.remote_port.push(r.remote_port as i64);
        self.opened_s.push(r.opened_s);
        self.closed_s.push(r.closed_s);
        self.bytes_acked.push(r.bytes_acked as i64);
        self.bytes_received.push(r.bytes_received as i64);
        self.segments_sent.push(r.segments_sent as i64);
        self.retransmits.push(r.retransmits as i64);
        self.fast_recoveries.push(r.fast_recoveries as i64);
        self.rtos.push(r.rtos as i64);
        self.srtt_s.push(r.srtt_s);
    }

    pub fn len(&self) -> usize {
        self.app.len()
    }

    pub fn is_empty(&self) -> bool {
        self.app.is_empty()
    }
}

/// Whole-run TCP counters of one traffic model.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpTotals {
    pub connections: u64,
    pub segments: u64,
    pub retransmits: u64,
    pub fast_recoveries: u64,
    pub rtos: u64,
    pub resets: u64,
}
