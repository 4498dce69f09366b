//! Per-connection records from what the core forwards, so that any TCP
//! program is measured the same way: when its SYN left, when its last data
//! byte arrived, the bytes each way and the segments sent again.
//!
//! A segment counts as sent when the core reads it from the sender's TUN
//! (so a retransmission is seen even if the path then loses it), and as
//! arrived when the core writes it to the receiver's TUN.

use rundir::ConnRow;
use rustc_hash::FxHashMap;
use units::Time;
use wire::TcpInfo;

/// A connection, named from its opener's side: (opener, its port, peer, peer's port).
type Key = (u32, u16, u32, u16);

/// One direction of a connection.
#[derive(Clone, Copy, Debug, Default)]
struct Dir {
    /// The end of the highest sequence number sent (payload only), relative
    /// to the first data segment's sequence number.
    base: Option<u32>,
    high: u64,
    /// Payload bytes that arrived, first copies and repeats alike.
    bytes: u64,
    segments: u64,
    retransmits: u64,
    last_data_at: Option<Time>,
}

#[derive(Clone, Copy, Debug)]
struct Flow {
    syn_at: Time,
    /// Opener to peer, peer to opener.
    dirs: [Dir; 2],
    closed_at: Option<Time>,
}

/// Every TCP connection the core has seen.
#[derive(Default)]
pub struct Flows {
    flows: FxHashMap<Key, Flow>,
    /// In the order they opened.
    order: Vec<Key>,
}

/// Which way a segment goes on its connection's key.
fn key_of(src: u32, dst: u32, t: &TcpInfo, flows: &FxHashMap<Key, Flow>) -> Option<(Key, usize)> {
    let fwd = (src, t.src_port, dst, t.dst_port);
    let rev = (dst, t.dst_port, src, t.src_port);
    if flows.contains_key(&fwd) {
        Some((fwd, 0))
    } else if flows.contains_key(&rev) {
        Some((rev, 1))
    } else {
        None
    }
}

impl Flows {
    /// Host `src` sent segment `t` to `dst` at `now`.
    pub fn sent(&mut self, now: Time, src: u32, dst: u32, t: &TcpInfo) {
        let pure_syn = t.flags.syn() && !t.flags.ack();
        let found = key_of(src, dst, t, &self.flows);
        let (key, d) = match found {
            Some(kd) => kd,
            None if pure_syn => {
                let key = (src, t.src_port, dst, t.dst_port);
                self.flows.insert(key, Flow { syn_at: now, dirs: [Dir::default(); 2], closed_at: None });
                self.order.push(key);
                (key, 0)
            }
            None => return,
        };
        let f = self.flows.get_mut(&key).expect("found or inserted");
        if t.flags.fin() || t.flags.rst() {
            f.closed_at.get_or_insert(now);
        }
        if t.payload_len == 0 {
            return;
        }
        let dir = &mut f.dirs[d];
        dir.segments += 1;
        let base = *dir.base.get_or_insert(t.seq);
        let end = t.seq.wrapping_sub(base) as u64 + t.payload_len as u64;
        if end <= dir.high {
            dir.retransmits += 1;
        }
        dir.high = dir.high.max(end);
    }

    /// Segment `t` from `src` reached `dst` at `now`.
    pub fn arrived(&mut self, now: Time, src: u32, dst: u32, t: &TcpInfo) {
        if t.payload_len == 0 {
            return;
        }
        if let Some((key, d)) = key_of(src, dst, t, &self.flows) {
            let dir = &mut self.flows.get_mut(&key).expect("found").dirs[d];
            dir.bytes += t.payload_len as u64;
            dir.last_data_at = Some(now);
        }
    }

    pub fn len(&self) -> usize {
        self.order.len()
    }

    pub fn is_empty(&self) -> bool {
        self.order.is_empty()
    }

    /// Each connection's record from its opener's side (`app_of` names the
    /// application of a host), in the order they opened.
    pub fn rows(&self, app_of: impl Fn(u32) -> u32) -> Vec<ConnRow> {
        self.order
            .iter()
            .map(|k| {
                let f = &self.flows[k];
                let [out, back] = &f.dirs;
                ConnRow {
                    app: app_of(k.0),
                    active: true,
                    host: k.0,
                    peer: k.2,
                    local_port: k.1,
                    remote_port: k.3,
                    opened_s: f.syn_at.as_secs_f64(),
                    closed_s: f.closed_at.map_or(f64::NAN, Time::as_secs_f64),
                    bytes_acked: out.bytes,
                    bytes_received: back.bytes,
                    segments_sent: out.segments,
                    retransmits: out.retransmits + back.retransmits,
                    fast_recoveries: 0,
                    rtos: 0,
                    srtt_s: f64::NAN,
                }
            })
            .collect()
    }

    /// Each connection's time from its SYN to the arrival of its last data
    /// byte (either way), with its opener and the bytes it carried back;
    /// connections that carried no data are left out.
    pub fn transfers(&self) -> Vec<Transfer> {
        self.order
            .iter()
            .filter_map(|k| {
                let f = &self.flows[k];
                let last = f.dirs.iter().filter_map(|d| d.last_data_at).max()?;
                Some(Transfer {
                    opener: k.0,
                    peer: k.2,
                    opened: f.syn_at,
                    duration_s: (last - f.syn_at).as_secs_f64(),
                    bytes_out: f.dirs[0].bytes,
                    bytes_back: f.dirs[1].bytes,
                    retransmits: f.dirs[0].retransmits + f.dirs[1].retransmits,
                })
            })
            .collect()
    }
}

/// A connection that carried data.
#[derive(Clone, Copy, Debug, PartialEq)]
pub struct Transfer {
    pub opener: u32,
    pub peer: u32,
    pub opened: Time,
    pub duration_s: f64,
    pub bytes_out: u64,
    pub bytes_back: u64,
    pub retransmits: u64,
}

#[cfg(test)]
mod tests {
    use super::*;
    use wire::{TcpFlags, TcpOptions};

    fn seg(sport: u16, dport: u16, seq: u32, len: u32, flags: TcpFlags) -> TcpInfo {
        TcpInfo { src_port: sport, dst_port: dport, seq, ack: 0, flags, window: 0, header_len: 20, payload_len: len, options: TcpOptions::default() }
    }

    const MS: u64 = 1_000_000;

    #[test]
    fn a_transfer_lasts_from_its_syn_to_its_last_data_byte_and_counts_repeats_as_retransmissions() {
        let mut f = Flows::default();
        let (c, s) = (1, 2);
        f.sent(Time(0), c, s, &seg(40000, 80, 100, 0, TcpFlags::SYN));
        f.sent(Time(10 * MS), s, c, &seg(80, 40000, 500, 0, TcpFlags(TcpFlags::SYN.0 | TcpFlags::ACK.0)));
        f.sent(Time(20 * MS), c, s, &seg(40000, 80, 101, 100, TcpFlags::ACK));
        f.arrived(Time(30 * MS), c, s, &seg(40000, 80, 101, 100, TcpFlags::ACK));
        for (i, t) in [(0u32, 40), (1000, 41), (0, 90)] {
            f.sent(Time(t * MS), s, c, &seg(80, 40000, 501 + i, 1000, TcpFlags::ACK));
        }
        f.arrived(Time(50 * MS), s, c, &seg(80, 40000, 501, 1000, TcpFlags::ACK));
        f.arrived(Time(95 * MS), s, c, &seg(80, 40000, 1501, 1000, TcpFlags::ACK));
        let t = f.transfers();
        assert_eq!(t.len(), 1);
        assert_eq!((t[0].opener, t[0].peer, t[0].bytes_out, t[0].bytes_back, t[0].retransmits), (c, s, 100, 2000, 1));
        assert!((t[0].duration_s - 0.095).abs() < 1e-12);
        let rows = f.rows(|_| 7);
        assert_eq!((rows[0].app, rows[0].local_port, rows[0].remote_port, rows[0].segments_sent), (7, 40000, 80, 1));
    }

    #[test]
    fn segments_of_connections_whose_syn_was_not_seen_are_ignored() {
        let mut f = Flows::default();
        f.sent(Time(0), 1, 2, &seg(1, 2, 0, 100, TcpFlags::ACK));
        assert!(f.is_empty());
    }
}
