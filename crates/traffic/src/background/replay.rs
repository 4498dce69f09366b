//! Concurrent connections replayed as Tmix replays them: each side writes
//! its own data units at their own offsets from its start (the client's
//! connect, the server's accept) without waiting for the other side, so a
//! multiplexed connection's responses overlap its requests as the trace's
//! did. TCP still carries the bytes, so the replay responds to congestion:
//! a unit due while the previous one is still queued waits behind it.

use crate::timers::{token, Slots};
use crate::{ConnId, HostId, Outbox, Transport};
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use std::sync::Arc;
use units::{Dur, Time};

/// One connection's data units, per direction (0: client to server), as
/// (offset from the side's start, bytes), in time order; and how long the
/// client keeps it open, idle, once both sides are done (the trace's
/// connection stayed open that long after its last exchange).
#[derive(Debug)]
pub(crate) struct UnitPlan {
    pub class: usize,
    pub units: [Vec<(Dur, u64)>; 2],
    pub linger: Dur,
}

impl UnitPlan {
    /// Bytes direction `dir` sends.
    pub(crate) fn bytes(&self, dir: usize) -> u64 {
        self.units[dir].iter().map(|&(_, b)| b).sum()
    }
}

struct Replay {
    conn: ConnId,
    plan: Arc<UnitPlan>,
    dir: usize,
    next: usize,
    start: Time,
    out: Outbox,
    closed: bool,
    /// When the peer's side was done (its FIN arrived, after all its data).
    peer_done: Option<Time>,
}

/// The replaying sides of all concurrent connections.
pub(crate) struct Replays {
    /// Every connection the source opened and its server has not accepted
    /// yet, by (client, server, port), in connect order (handshakes on one
    /// path complete in order): the client's handle, and its plan if it is
    /// concurrent, `None` if it carries pairs. The pair connections are
    /// kept too, or a server would take one for the replay opened just
    /// after it on the same path; a connect that fails is forgotten, or the
    /// next accept on its path would take its plan.
    accepting: FxHashMap<(HostId, HostId, u16), VecDeque<Expected>>,
    /// The path of each connection awaiting its accept.
    awaiting: FxHashMap<ConnId, (HostId, HostId, u16)>,
    sides: Slots<Replay>,
    by_conn: FxHashMap<ConnId, usize>,
    /// The kind of its timers' tokens (`timers`).
    kind: u64,
}

/// A connection awaiting its accept: the client's handle, and its plan if
/// it is a replay.
type Expected = (ConnId, Option<Arc<UnitPlan>>);

/// The size of the application writes a unit of `bytes` of `class` goes out
/// in, for direction `dir`.
pub(crate) type WriteSize<'a> = dyn FnMut(usize, usize, u64) -> u64 + 'a;

impl Replays {
    pub(crate) fn new(kind: u64) -> Replays {
        Replays { accepting: FxHashMap::default(), awaiting: FxHashMap::default(), sides: Slots::default(), by_conn: FxHashMap::default(), kind }
    }

    /// A client opened connection `conn`, concurrent (`plan`) or not; a
    /// concurrent one's server side starts when it is accepted.
    pub(crate) fn expect(&mut self, conn: ConnId, client: HostId, server: HostId, port: u16, plan: Option<Arc<UnitPlan>>) {
        self.accepting.entry((client, server, port)).or_default().push_back((conn, plan));
        self.awaiting.insert(conn, (client, server, port));
    }

    /// The client side of `conn` is over: if its server never accepted it
    /// (the connect failed), the next accept on its path is not its.
    pub(crate) fn forget(&mut self, conn: ConnId) {
        let Some(key) = self.awaiting.remove(&conn) else { return };
        if let Some(q) = self.accepting.get_mut(&key) {
            q.retain(|(c, _)| *c != conn);
            if q.is_empty() {
                self.accepting.remove(&key);
            }
        }
    }

    /// The client side of `conn` connected.
    pub(crate) fn start(&mut self, conn: ConnId, plan: Arc<UnitPlan>, tp: &mut dyn Transport, ws: &mut WriteSize) {
        self.begin(conn, plan, 0, tp, ws);
    }

    /// A connection was accepted: its server side starts if it is one of
    /// ours. Returns whether it was.
    pub(crate) fn accepted(&mut self, conn: ConnId, server: HostId, port: u16, client: HostId, tp: &mut dyn Transport, ws: &mut WriteSize) -> bool {
        let key = (client, server, port);
        let Some((client_conn, next)) = self.accepting.get_mut(&key).and_then(VecDeque::pop_front) else { return false };
        if self.accepting.get(&key).is_some_and(VecDeque::is_empty) {
            self.accepting.remove(&key);
        }
        self.awaiting.remove(&client_conn);
        let Some(plan) = next else { return false };
        self.begin(conn, plan, 1, tp, ws);
        true
    }

    fn begin(&mut self, conn: ConnId, plan: Arc<UnitPlan>, dir: usize, tp: &mut dyn Transport, ws: &mut WriteSize) {
        let r = Replay { conn, plan, dir, next: 0, start: tp.now(), out: Outbox::default(), closed: false, peer_done: None };
        let slot = self.sides.put(r);
        self.by_conn.insert(conn, slot);
        self.step(slot, tp, ws);
    }

    /// Writes every unit that is due, then waits for the next one; closes
    /// the side's direction once all is written.
    fn step(&mut self, slot: usize, tp: &mut dyn Transport, ws: &mut WriteSize) {
        let Some(r) = self.sides.get_mut(slot) else { return };
        let units = &r.plan.units[r.dir];
        while let Some(&(at, bytes)) = units.get(r.next) {
            let due = r.start + at;
            if due > tp.now() {
                tp.set_timer(due, token(self.kind, slot as u64));
                return;
            }
            r.next += 1;
            r.out.send(tp, r.conn, bytes, None, ws(r.plan.class, r.dir, bytes));
        }
        if r.out.is_empty() && !r.closed {
            // A client that kept the connection open after the last
            // exchange waits for the server's side to be done, then idles.
            if r.dir == 0 && r.plan.linger > Dur::ZERO {
                let Some(done) = r.peer_done else { return };
                let at = done + r.plan.linger;
                if at > tp.now() {
                    tp.set_timer(at, token(self.kind, slot as u64));
                    return;
                }
            }
            r.closed = true;
            tp.close(r.conn);
        }
    }

    pub(crate) fn on_timer(&mut self, slot: usize, tp: &mut dyn Transport, ws: &mut WriteSize) {
        self.step(slot, tp, ws);
    }

    /// Send-buffer space on `conn`; returns whether it is a replayed side.
    pub(crate) fn writable(&mut self, conn: ConnId, tp: &mut dyn Transport, ws: &mut WriteSize) -> bool {
        let Some(&slot) = self.by_conn.get(&conn) else { return false };
        if let Some(r) = self.sides.get_mut(slot) {
            r.out.flush(tp, conn);
        }
        self.step(slot, tp, ws);
        true
    }

    /// The peer of `conn` closed its direction, all its data delivered;
    /// returns whether `conn` is a replayed side. A side closes once its own
    /// units are written, not when the other is done, but a client that
    /// lingers counts its idle time from then.
    pub(crate) fn peer_closed(&mut self, conn: ConnId, tp: &mut dyn Transport, ws: &mut WriteSize) -> bool {
        let Some(&slot) = self.by_conn.get(&conn) else { return false };
        if let Some(r) = self.sides.get_mut(slot) {
            r.peer_done.get_or_insert(tp.now());
        }
        self.step(slot, tp, ws);
        true
    }

    /// `conn` is over; returns whether it was a replayed side.
    pub(crate) fn closed(&mut self, conn: ConnId) -> bool {
        let Some(slot) = self.by_conn.remove(&conn) else { return false };
        self.sides.take(slot);
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::fake::{Fake, Op};

    /// Writes as (time, connection, bytes), timers as (time due, token), closes.
    fn writes(tp: &Fake) -> Vec<(Time, ConnId, u64)> {
        tp.calls().iter().filter_map(|c| if let Op::Write { conn, took, .. } = c.op { Some((c.at, conn, took)) } else { None }).collect()
    }
    fn timers(tp: &Fake) -> Vec<(Time, u64)> {
        tp.calls().iter().filter_map(|c| if let Op::SetTimer { at, token } = c.op { Some((at, token)) } else { None }).collect()
    }
    fn closes(tp: &Fake) -> Vec<ConnId> {
        tp.calls().iter().filter_map(|c| if let Op::Close { conn } = c.op { Some(conn) } else { None }).collect()
    }

    #[test]
    fn each_side_writes_its_units_at_their_offsets_and_then_closes() {
        let ms = Dur::from_millis;
        let plan =
            Arc::new(UnitPlan { class: 0, units: [vec![(ms(0), 500), (ms(10), 300)], vec![(ms(5), 20_000), (ms(6), 40_000)]], linger: Dur::ZERO });
        let mut r = Replays::new(7);
        let mut tp = Fake::new();
        let mut ws = |_: usize, dir: usize, b: u64| if dir == 1 { 10_000 } else { b };
        tp.listen(2, 443);
        let client = tp.connect(1, 2, 443);
        r.expect(client, 1, 2, 443, Some(Arc::clone(&plan)));
        assert!(!r.accepted(ConnId(9), 2, 80, 1, &mut tp, &mut ws), "another port: not ours");
        // The client connects at 100 ms, the server accepts at 120 ms.
        tp.run_until(Time::ZERO + ms(100));
        tp.establish(client);
        let server = tp.conn(client).peer.expect("accepted");
        r.start(client, Arc::clone(&plan), &mut tp, &mut ws);
        tp.run_until(Time::ZERO + ms(120));
        assert!(r.accepted(server, 2, 443, 1, &mut tp, &mut ws));
        assert_eq!(writes(&tp), vec![(Time::ZERO + ms(100), client, 500)]);
        assert_eq!(timers(&tp), vec![(Time::ZERO + ms(110), 7 << 56), (Time::ZERO + ms(125), 7 << 56 | 1)]);
        // Timers fire: each unit at its offset, the server's 40 kB unit
        // right after the 20 kB one, both in 10 kB writes.
        tp.run_until(Time::ZERO + ms(110));
        r.on_timer(0, &mut tp, &mut ws);
        tp.run_until(Time::ZERO + ms(125));
        r.on_timer(1, &mut tp, &mut ws);
        assert_eq!(timers(&tp).last(), Some(&(Time::ZERO + ms(126), 7 << 56 | 1)));
        tp.run_until(Time::ZERO + ms(126));
        r.on_timer(1, &mut tp, &mut ws);
        let on_server: Vec<u64> = writes(&tp).iter().filter(|w| w.1 == server).map(|w| w.2).collect();
        assert_eq!(on_server, vec![10_000; 6]);
        assert_eq!(closes(&tp), vec![client, server]);
        assert!(r.closed(client) && !r.closed(client), "a replayed side, then forgotten");
    }

    #[test]
    fn a_pair_connection_on_the_same_path_is_not_taken_for_the_replay() {
        let plan = Arc::new(UnitPlan { class: 0, units: [vec![(Dur::ZERO, 100)], vec![(Dur::ZERO, 200)]], linger: Dur::ZERO });
        let mut r = Replays::new(7);
        let mut tp = Fake::new();
        let mut ws = |_: usize, _: usize, b: u64| b;
        tp.listen(2, 443);
        // A pair connection, then a concurrent one, on one path: accepted in
        // that order, the first is the responder's and the second the replay.
        let (clients, accepted): (Vec<ConnId>, Vec<ConnId>) = (0..3)
            .map(|_| {
                let c = tp.connect(1, 2, 443);
                tp.establish(c);
                (c, tp.conn(c).peer.expect("accepted"))
            })
            .unzip();
        r.expect(clients[0], 1, 2, 443, None);
        r.expect(clients[1], 1, 2, 443, Some(Arc::clone(&plan)));
        assert!(!r.accepted(accepted[0], 2, 443, 1, &mut tp, &mut ws), "the pair connection");
        assert!(r.accepted(accepted[1], 2, 443, 1, &mut tp, &mut ws), "the replay");
        assert_eq!(writes(&tp), vec![(Time::ZERO, accepted[1], 200)]);
        assert!(!r.accepted(accepted[2], 2, 443, 1, &mut tp, &mut ws), "nothing left to expect");
    }

    #[test]
    fn a_connect_that_failed_is_forgotten_and_the_next_accept_on_its_path_is_not_its() {
        let plan = Arc::new(UnitPlan { class: 0, units: [vec![(Dur::ZERO, 100)], vec![(Dur::ZERO, 200)]], linger: Dur::ZERO });
        let mut r = Replays::new(7);
        let mut tp = Fake::new();
        let mut ws = |_: usize, _: usize, b: u64| b;
        tp.listen(2, 443);
        let refused = tp.connect(1, 2, 443);
        r.expect(refused, 1, 2, 443, None);
        let replayed = tp.connect(1, 2, 443);
        r.expect(replayed, 1, 2, 443, Some(Arc::clone(&plan)));
        r.forget(refused);
        tp.establish(replayed);
        assert!(r.accepted(tp.conn(replayed).peer.expect("accepted"), 2, 443, 1, &mut tp, &mut ws), "the replay, not the refused pair connection");
        // Forgetting an accepted connection changes nothing.
        r.forget(replayed);
        assert!(r.accepting.is_empty() && r.awaiting.is_empty());
    }

    #[test]
    fn a_client_that_stayed_connected_after_its_units_closes_that_much_later() {
        // The trace's connection idled 0.5 s after its last exchange before
        // it closed; the server's side closes once it has written, and the
        // client 0.5 s after the server's FIN arrives.
        let ms = Dur::from_millis;
        let plan = Arc::new(UnitPlan { class: 0, units: [vec![(ms(0), 100)], vec![(ms(10), 200)]], linger: ms(500) });
        let mut r = Replays::new(7);
        let mut tp = Fake::new();
        let mut ws = |_: usize, _: usize, b: u64| b;
        tp.listen(2, 443);
        let client = tp.connect(1, 2, 443);
        r.expect(client, 1, 2, 443, Some(Arc::clone(&plan)));
        tp.establish(client);
        let server = tp.conn(client).peer.expect("accepted");
        r.start(client, Arc::clone(&plan), &mut tp, &mut ws);
        assert!(r.accepted(server, 2, 443, 1, &mut tp, &mut ws));
        tp.run_until(Time::ZERO + ms(10));
        r.on_timer(1, &mut tp, &mut ws);
        assert_eq!(closes(&tp), vec![server]);
        tp.run_until(Time::ZERO + ms(30));
        assert!(r.peer_closed(client, &mut tp, &mut ws));
        assert_eq!(timers(&tp).last(), Some(&(Time::ZERO + ms(530), 7 << 56)));
        tp.run_until(Time::ZERO + ms(530));
        r.on_timer(0, &mut tp, &mut ws);
        assert_eq!(closes(&tp), vec![server, client]);
        assert_eq!(tp.calls().iter().find(|c| matches!(c.op, Op::Close { conn } if conn == client)).map(|c| c.at), Some(Time::ZERO + ms(530)));
    }
}
