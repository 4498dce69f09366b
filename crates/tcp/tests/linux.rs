//! Linux behaviours beyond the RFC baseline: timestamps (RFC 7323) and the
//! quick-ACK mode.

mod common;

use common::{cfg, Net, Side, MSS};

use tcp::{Algorithm, Dur, Flags, TcpConfig, Time};
use units::Rate;

fn linux() -> TcpConfig {
    TcpConfig { timestamps: true, quickack: 16, ..cfg(Algorithm::Cubic, true) }
}

fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

#[test]
fn timestamps_cost_12_bytes_on_every_segment() {
    let c = TcpConfig { mss: 1460, ..linux() };
    let mut net = Net::new(c.clone(), c, ms(10)).transfer(100_000, 0);
    net.start();
    net.run(Time::from_secs_f64(2.0));
    assert!(net.a().timestamps_enabled() && net.b().timestamps_enabled());
    // MSS option 1460, full segments 1448 bytes: Linux's figures.
    assert_eq!(net.a().mss(), 1448);
    let syn = net.log[0].seg;
    assert_eq!(syn.header_len(), 40, "MSS, SACK-permitted, timestamps, window scale");
    assert!(syn.syn_opts.unwrap().timestamps);
    let data: Vec<_> = net.data_by(Side::A).map(|w| w.seg).collect();
    assert!(data.iter().all(|s| s.ts.is_some() && s.header_len() == 32 && s.len <= 1448));
    assert_eq!(data.iter().filter(|s| s.len == 1448).count(), 100_000 / 1448);
    let acks: Vec<_> = net.sent_by(Side::B).filter(|w| w.seg.len == 0 && !w.seg.flags.contains(Flags::SYN)).map(|w| w.seg).collect();
    assert!(acks.iter().all(|s| s.header_len() == 32), "52-byte ACKs with IP");
    // TSval is the sender's clock in ms; TSecr echoes the peer's latest TSval.
    for w in net.sent_by(Side::A).filter(|w| w.t > Time::from_secs_f64(0.05)) {
        let (tsval, tsecr) = w.seg.ts.unwrap();
        assert_eq!(tsval as u64, w.t.0 / 1_000_000);
        assert!(tsecr as u64 <= w.t.0 / 1_000_000 && tsecr > 0);
    }
    assert_eq!(net.app[1].delivered, 100_000);
}

#[test]
fn timestamps_need_both_ends_and_leave_room_for_three_sack_blocks() {
    let on = TcpConfig { mss: 1460, ..linux() };
    let off = TcpConfig { timestamps: false, ..on.clone() };
    let mut net = Net::new(on.clone(), off, ms(10)).transfer(50_000, 0);
    net.start();
    net.run(Time::from_secs_f64(2.0));
    assert!(!net.a().timestamps_enabled());
    assert_eq!(net.a().mss(), 1460);
    assert!(net.log.iter().skip(1).all(|w| w.seg.ts.is_none()), "the SYN offers, nothing after it carries them");
    // Every other segment lost: the receiver's SACK blocks stop at 3.
    let mut k = 0;
    let mut net = Net::new(on.clone(), on, ms(10)).transfer(200_000, 0).dropping(move |_, side, s| {
        if side == Side::A && s.len > 0 && !s.retransmit {
            k += 1;
            return k % 2 == 0 && k < 40;
        }
        false
    });
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[1].delivered, 200_000);
    let max_blocks = net.sent_by(Side::B).map(|w| w.seg.sack.n).max().unwrap();
    assert_eq!(max_blocks, 3);
}

#[test]
fn quick_acks_at_the_start_then_every_second_segment() {
    let c = linux();
    let mut net = Net::new(c.clone(), c, ms(20)).bottleneck(Rate::mbps(10), 1000).transfer(200 * MSS, 0);
    net.start();
    net.run(Time::from_secs_f64(5.0));
    assert_eq!(net.app[1].delivered, 200 * MSS);
    // B's ACKs in order, each with the data bytes it newly acknowledges.
    let mut last = 1;
    let mut steps = Vec::new();
    for w in net.sent_by(Side::B).filter(|w| w.seg.len == 0 && w.seg.flags.contains(Flags::ACK) && !w.seg.flags.contains(Flags::SYN)) {
        if w.seg.ack > last {
            steps.push(w.seg.ack - last);
            last = w.seg.ack;
        }
    }
    let seg = net.a().mss() as u64;
    // The first 16 data segments are acknowledged one by one.
    assert!(steps[..16].iter().all(|&s| s == seg), "{:?}", &steps[..20]);
    // Then the delayed-ACK rule: mostly two segments an ACK.
    let later = &steps[20..];
    let pairs = later.iter().filter(|&&s| s == 2 * seg).count();
    assert!(pairs * 10 > later.len() * 8, "{pairs} of {} ACKs cover two segments", later.len());
}

#[test]
fn quick_acks_last_sixteen_segments_beyond_the_windows_opening() {
    // Linux (6.18, through the emulator's TUN) ACKs the first 22 segments
    // of a download one by one: its 16 quick ACKs, and 6 more because
    // each segment that opens the window sets the count's low bit, so the
    // ACK it sends costs the count nothing. The window opens six times
    // from 65,160 bytes: a 128 KiB buffer holds 81,920 at the measured
    // ratio of 1448 bytes per 2304.
    let c = TcpConfig { mss: 1460, rcv_buf_auto: true, snd_buf_auto: true, ..linux() };
    let mut net = Net::new(c.clone(), c, ms(20)).bottleneck(Rate::mbps(15), 1000).transfer(1_000_000, 0);
    net.start();
    net.run(Time::from_secs_f64(5.0));
    assert_eq!(net.app[1].delivered, 1_000_000);
    let seg = net.a().mss() as u64;
    let mut last = 1;
    let mut steps = Vec::new();
    for w in net.sent_by(Side::B).filter(|w| w.seg.len == 0 && !w.seg.flags.contains(Flags::SYN)) {
        if w.seg.ack > last {
            steps.push(w.seg.ack - last);
            last = w.seg.ack;
        }
    }
    let singles = steps.iter().take_while(|&&s| s == seg).count();
    assert_eq!(singles, 22, "{:?}", &steps[..30]);
}

#[test]
fn quick_acks_return_after_an_idle_period() {
    let c = linux();
    let mut net = Net::new(c.clone(), c, ms(20));
    // A sends 40 segments and keeps the connection open.
    net.app[0].to_send = 40 * MSS;
    net.start();
    net.run(Time::from_secs_f64(2.0));
    let acks_before = net.sent_by(Side::B).filter(|w| w.seg.len == 0).count();
    // Three seconds later (well over the RTO), ten more segments.
    net.run_until(Time::from_secs_f64(5.0));
    let now = net.now;
    let mut out = Vec::new();
    net.tcp[0].as_mut().unwrap().write(now, 10 * MSS, &mut out);
    // (The harness sends what the endpoint emitted on its next step.)
    net.inject(Side::A, out);
    net.run(Time::from_secs_f64(8.0));
    let acks_after = net.sent_by(Side::B).filter(|w| w.seg.len == 0).count() - acks_before;
    // One ACK per segment again (a delayed-ACK receiver would send about 5).
    assert!(acks_after >= 10, "{acks_after} ACKs for 10 segments after the pause");
}
