mod common;
use common::*;
use tcp::{Algorithm, Dur, Flags, TcpConfig, Time};

fn ms(x: u64) -> Dur {
    Dur::from_millis(x)
}

#[test]
fn delayed_ack_sends_one_ack_per_two_segments() {
    // The delayed-ACK rule alone: without the ACK at once of a pushed
    // segment (`ack_pushed`), which a Linux receiver also sends for the
    // last segment of each of the sender's multi-segment packets.
    let b = TcpConfig { ack_pushed: false, ..cfg(Algorithm::Cubic, true) };
    let mut net = Net::new(cfg(Algorithm::Cubic, true), b, ms(10)).transfer(200 * MSS, 0);
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[1].delivered, 200 * MSS);
    let acks = net.pure_acks_by(Side::B);
    assert!((100..=102).contains(&acks), "{acks} ACKs for 200 segments");
    assert_eq!(net.b().stats().acks_sent as usize, acks);
}

#[test]
fn ack_every_one_acks_every_segment() {
    let c = TcpConfig { ack_every: 1, ..cfg(Algorithm::Cubic, true) };
    let mut net = Net::new(c.clone(), c, ms(10)).transfer(200 * MSS, 0);
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.pure_acks_by(Side::B), 200);
}

#[test]
fn ack_bytes_reproduces_a_fractional_ack_frequency() {
    // A receiver measured at 1.29 full segments per ACK.
    let mss = MSS;
    let b = TcpConfig { ack_bytes: Some(mss * 129 / 100), quickack: 0, ..cfg(Algorithm::Cubic, true) };
    let mut net = Net::new(cfg(Algorithm::Cubic, true), b, ms(10)).transfer(200 * MSS, 0);
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[1].delivered, 200 * MSS);
    let acks = net.pure_acks_by(Side::B);
    // 200 / 1.29 = 155; the last segments may wait for the timer.
    assert!((150..=158).contains(&acks), "{acks} ACKs for 200 segments");
}

#[test]
fn lone_segment_is_acked_after_delack_timeout_or_once_read() {
    // By the delayed-ACK rule alone, after the timer; Linux ACKs a segment
    // that ends a write (PSH) as soon as the application has read it, unless
    // the connection is interactive.
    for (pushed, delay) in [(false, ms(40)), (true, Dur::ZERO)] {
        let c = TcpConfig { ack_pushed: pushed, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(10));
        net.start();
        net.run_until(Time::from_secs_f64(0.5));
        let sent_at = net.now;
        net.app_write(Side::A, 100);
        net.run(Time::from_secs_f64(2.0));
        let acks: Vec<Time> = net.sent_by(Side::B).filter(|w| w.t > sent_at).map(|w| w.t).collect();
        assert_eq!(acks, vec![sent_at + ms(10) + delay], "ack_pushed {pushed}");
        // The sender took an RTT sample that includes the ACK delay, if any.
        assert!(pushed || net.a().srtt().unwrap() > ms(20));
    }
}

#[test]
fn the_end_of_a_write_is_acked_once_read_unless_the_connection_is_interactive() {
    // A stream of 700-byte writes, one every 5 ms: once the size is measured
    // each segment is exactly it and carries PSH, so each is ACKed, where the
    // delayed-ACK rule alone ACKs every second (1400 bytes > one 1000-byte MSS).
    for (pushed, per_ack) in [(true, 1.0), (false, 2.0)] {
        let c = TcpConfig { ack_pushed: pushed, ..cfg(Algorithm::Cubic, true) };
        let mut net = Net::new(c.clone(), c, ms(10));
        net.start();
        net.run_until(Time::from_secs_f64(0.5));
        let from = net.now;
        for k in 0..100 {
            net.run_until(from + ms(5 * k));
            net.app_write(Side::A, 700);
        }
        net.run(from + ms(600));
        let acks = net.sent_by(Side::B).filter(|w| w.t > from).count() as f64;
        assert!((100.0 / acks - per_ack).abs() < 0.05, "ack_pushed {pushed}: {acks} ACKs for 100 segments");
    }
    // The receiver answering each segment with data of its own within the
    // delayed-ACK timeout is interactive: its ACKs ride on its data, not ahead of it.
    let mut net = Net::new(cfg(Algorithm::Cubic, true), cfg(Algorithm::Cubic, true), ms(10));
    net.start();
    net.run_until(Time::from_secs_f64(0.5));
    let from = net.now;
    for k in 0..20 {
        net.run_until(from + ms(50 * k));
        net.app_write(Side::A, 100);
        net.run_until(from + ms(50 * k + 15));
        net.app_write(Side::B, 100);
    }
    net.run(from + ms(1100));
    let pure = net.sent_by(Side::B).filter(|w| w.t > from + ms(200) && w.seg.len == 0).count();
    assert_eq!(pure, 0, "B's ACKs ride on its replies once it is interactive");
}

#[test]
fn out_of_order_and_hole_fill_are_acked_immediately() {
    let mut net = Net::new(cfg(Algorithm::NewReno, true), cfg(Algorithm::NewReno, true), ms(10)).transfer(40 * MSS, 0).dropping(drop_segments(&[5]));
    net.start();
    net.run(Time::from_secs_f64(5.0));
    assert_eq!(net.app[1].delivered, 40 * MSS);
    let rtx_at = net.log.iter().position(|w| w.seg.retransmit).unwrap();
    let rtx = net.log[rtx_at].t;
    // Every segment above the hole that reached B before the repair (sent before it on
    // the FIFO path) produced its own ACK the moment it arrived, a duplicate of ack = hole.
    let above: Vec<Time> =
        net.log[..rtx_at].iter().filter(|w| w.from == Side::A && !w.dropped && w.seg.seq > seg_seq(5)).map(|w| w.t + ms(10)).collect();
    let dups: Vec<Time> = net.sent_by(Side::B).filter(|w| w.seg.ack == seg_seq(5)).map(|w| w.t).collect();
    assert!(above.len() >= 4);
    assert_eq!(dups, above);
    // The repaired hole is acked on arrival, covering everything held out of order.
    let fill = net.sent_by(Side::B).find(|w| w.seg.ack > seg_seq(5)).expect("ACK of the repair");
    assert_eq!(fill.t, rtx + ms(10));
    let last = net.log[..rtx_at].iter().rfind(|w| w.from == Side::A && w.seg.len > 0).unwrap();
    assert_eq!(fill.seg.ack, last.seg.seq + MSS, "everything held is delivered");
    assert!(fill.seg.sack.is_empty());
}

/// A sends one segment and closes (its FIN on that segment); B's application
/// closes when it reads the FIN, or not at all. Returns the net and A's FIN.
fn closing(b: TcpConfig, b_closes: bool) -> (Net, Wire) {
    let mut net = Net::new(cfg(Algorithm::Cubic, true), b, ms(10)).transfer(MSS, 0);
    net.app[1].close_on_fin = b_closes;
    net.start();
    net.run(Time::from_secs_f64(2.0));
    let fin = *net.sent_by(Side::A).find(|w| w.seg.flags.contains(Flags::FIN)).unwrap();
    (net, fin)
}

fn acks_of(net: &Net, fin: &Wire) -> Vec<(Time, Flags)> {
    let end = fin.seg.seq + fin.seg.seq_len();
    net.sent_by(Side::B).filter(|w| w.seg.ack >= end).map(|w| (w.t, w.seg.flags)).collect()
}

#[test]
fn a_linux_receiver_acks_a_fin_with_its_own_fin_when_its_application_closes_in_answer() {
    // Linux's `tcp_fin` makes the connection interactive, so the ACK waits and
    // the application's close sends one segment: FIN and ACK together, even
    // in quick-ACK mode, which a ping-pong connection is not in.
    for quickack in [0, 16] {
        let (net, fin) = closing(TcpConfig { quickack, ..cfg(Algorithm::Cubic, true) }, true);
        assert_eq!(acks_of(&net, &fin), vec![(fin.t + ms(10), Flags::ACK | Flags::FIN)], "quickack {quickack}");
        assert_eq!(net.a().state(), tcp::State::TimeWait);
    }
}

#[test]
fn a_linux_receiver_whose_application_does_not_close_acks_a_fin_at_its_delayed_ack_timer() {
    let (net, fin) = closing(cfg(Algorithm::Cubic, true), false);
    assert_eq!(acks_of(&net, &fin), vec![(fin.t + ms(10) + ms(40), Flags::ACK)]);
}

#[test]
fn a_receiver_without_delayed_fin_acks_acks_a_fin_at_once_then_sends_its_own() {
    // ns-3's `TcpSocketBase`: the ACK at once, the FIN when the application closes.
    let b = TcpConfig { delayed_fin_ack: false, ..cfg(Algorithm::Cubic, true) };
    let (net, fin) = closing(b.clone(), true);
    assert_eq!(acks_of(&net, &fin), vec![(fin.t + ms(10), Flags::ACK), (fin.t + ms(10), Flags::ACK | Flags::FIN)]);
    let (net, fin) = closing(b, false);
    assert_eq!(acks_of(&net, &fin), vec![(fin.t + ms(10), Flags::ACK)]);
}

#[test]
fn a_fin_that_arrives_after_the_application_closed_is_acked_at_once() {
    // B answers and closes first; A closes when it reads B's FIN, and B, in
    // FIN-WAIT-2, ACKs A's FIN on arrival (Linux `tcp_fin`: `tcp_send_ack`).
    let mut net = Net::new(cfg(Algorithm::Cubic, true), cfg(Algorithm::Cubic, true), ms(10));
    net.app[0] = App { close_on_fin: true, ..App::default() };
    net.app[1] = App { to_send: 7_000, close_when_done: true, ..App::default() };
    net.start();
    net.run(Time::from_secs_f64(2.0));
    let fin = *net.sent_by(Side::A).find(|w| w.seg.flags.contains(Flags::FIN)).unwrap();
    assert_eq!(acks_of(&net, &fin), vec![(fin.t + ms(10), Flags::ACK)]);
}
