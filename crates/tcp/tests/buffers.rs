//! Linux-style send-buffer autotuning: small at first, grown to twice the
//! window when the buffer limits sending, never shrunk, and a blocked writer
//! woken only once a third of the buffer is free.

mod common;

use common::{cfg, Net, Side, MSS};
use std::sync::Arc;
use tcp::{Algorithm, Tcp, TcpConfig, Time};
use units::{Dur, Rate};

fn auto(alg: Algorithm) -> TcpConfig {
    TcpConfig { snd_buf_auto: true, ..cfg(alg, true) }
}

fn ms(v: u64) -> Dur {
    Dur::from_millis(v)
}

#[test]
fn buffer_starts_at_the_initial_size_then_holds_two_initial_windows() {
    let c = Arc::new(auto(Algorithm::Cubic));
    let mut out = Vec::new();
    let t = Tcp::connect(&c, Time::ZERO, &mut out);
    assert_eq!(t.send_buffer(), 16 << 10);
    let mut net = Net::new((*c).clone(), (*c).clone(), ms(10));
    net.start();
    net.run(Time::from_secs_f64(0.05));
    // Established: 2 × 10 segments × per_mss, per_mss = the power of two
    // above 1000 + 192 + 320 (2048) + 256 = 2304.
    assert_eq!(net.a().send_buffer(), 2 * 10 * 2304);
}

#[test]
fn bulk_sender_is_not_starved_and_the_buffer_follows_the_window() {
    let run = |c: TcpConfig| {
        let mut net = Net::new(c.clone(), c, ms(20)).bottleneck(Rate::mbps(10), 100).transfer(3_000_000, 0);
        net.start();
        net.run(Time::from_secs_f64(30.0));
        assert_eq!(net.app[1].delivered, 3_000_000);
        let done = net.app[1].deliveries.last().unwrap().0;
        (done, net)
    };
    let (t_fixed, _) = run(cfg(Algorithm::Cubic, true));
    let (t_auto, net) = run(auto(Algorithm::Cubic));
    eprintln!("3 MB in {t_fixed} with a fixed 4 MiB buffer, {t_auto} autotuned");
    assert!(t_auto.as_secs_f64() <= t_fixed.as_secs_f64() * 1.02, "autotuning slowed a bulk transfer");
    let max_cwnd = net.trace.iter().map(|s| s.cwnd).max().unwrap();
    let max_buf = net.trace.iter().map(|s| s.send_buffer).max().unwrap();
    // Grown from 33 kB to hold more than the largest window, so the window
    // was never starved of data.
    assert!(max_buf >= max_cwnd && max_buf > 2 * 10 * 2304, "buffer {max_buf} against a window of {max_cwnd}");
    // It never shrinks, losses and window reductions notwithstanding.
    assert!(net.trace.windows(2).all(|w| w[1].send_buffer >= w[0].send_buffer));
    assert!(net.trace.iter().any(|s| s.recovery), "the queue of 100 should have overflowed at least once");
}

#[test]
fn a_write_fills_the_skb_it_started_past_the_buffer_as_linux_does() {
    // Linux 6.18 (ss -m on the emulator's server): a fresh connection's 46,080
    // bytes take 32 segments of a 200 KB response, charged 51,328: a first skb
    // of 22 segments (half the client's 64,256-byte window), 10 of them sent
    // at once in pairs, the rest filled back to 22 without a check.
    let c = TcpConfig::default();
    let mut net = Net::new(c.clone(), c, ms(50)).transfer(0, 200_000);
    net.start();
    net.run(Time::from_secs_f64(0.15));
    let b = net.b();
    assert_eq!(b.mss(), 1448);
    assert_eq!(b.send_buffer(), 46_080);
    assert_eq!(200_000 - net.app[1].to_send, 32 * 1448);
    assert_eq!(b.send_space(), 0, "51,328 charged");
    assert!(!b.writable());
}

#[test]
fn fixed_buffer_stays_fixed() {
    let c = TcpConfig { snd_buf: 64_000, ..cfg(Algorithm::NewReno, true) };
    let mut net = Net::new(c.clone(), c, ms(20)).bottleneck(Rate::mbps(10), 50).transfer(1_000_000, 0);
    net.start();
    net.run(Time::from_secs_f64(10.0));
    assert_eq!(net.app[1].delivered, 1_000_000);
    assert!(net.trace.iter().all(|s| s.send_buffer == 64_000));
}

#[test]
fn blocked_writer_wakes_when_a_third_is_free() {
    // A fixed buffer, so the threshold does not move while ACKs arrive.
    let c = TcpConfig { snd_buf: 30_000, ..cfg(Algorithm::NewReno, true) };
    let mut net = Net::new(c.clone(), c, ms(10));
    net.start();
    net.run(Time::from_secs_f64(0.05));
    let now = net.now;
    let mut out = Vec::new();
    let a = net.tcp[0].as_mut().unwrap();
    let buf = a.send_buffer();
    assert_eq!(a.write(now, 1_000_000, &mut out), buf, "a write takes exactly what fits");
    assert_eq!(a.send_space(), 0);
    assert!(!a.writable());
    // Simulate the ACKs: space freed a segment at a time.
    let seg = |k: u64| tcp::Segment {
        seq: 1,
        ack: 1 + k * MSS,
        len: 0,
        flags: tcp::Flags::ACK,
        wnd: 1 << 20,
        sack: Default::default(),
        syn_opts: None,
        ts: None,
        retransmit: false,
        ecn: tcp::Ecn::NotEct,
    };
    let mut woke_at = None;
    for k in 1..=10 {
        a.on_segment(now, &seg(k), &mut out);
        if a.writable() && woke_at.is_none() {
            woke_at = Some(k);
        }
        assert_eq!(a.writable(), a.send_space() >= buf / 3);
    }
    // 30,000 B buffer: a third is 10,000 B, free once the 10th segment is acked.
    assert_eq!(woke_at, Some(10));
}

#[test]
fn duplicate_acks_grow_the_buffer_once_a_recovery_has_sent_all_that_was_written() {
    // A 200 KB response at 5 Mbit/s, 50 ms each way, a 50-packet queue: the
    // buffer, sized when the window was 22 segments, holds what the writer
    // put in then until the window is twice that. One segment of the third
    // round lost, the recovery sends all that was written; Linux (every ACK,
    // a duplicate too, may grow the buffer: `tcp_data_snd_check`) grows it
    // and the writer refills it, so new data keeps going out through the
    // recovery (in the emulator, 77 segments past snd_una).
    let c = TcpConfig::default();
    let run = |lost: Option<u64>| {
        let mut first = true;
        let mut net = Net::new(c.clone(), c.clone(), ms(50)).bottleneck(Rate::mbps(5), 50).transfer(0, 200_000).dropping(move |_, side, s| {
            let hit = side == Side::B && s.len > 0 && !s.retransmit && lost.is_some_and(|k| s.seq == 1 + k * 1448);
            let drop = hit && first;
            first &= !hit;
            drop
        });
        net.start();
        // (in recovery, send buffer) every millisecond.
        let mut samples = Vec::new();
        for k in 1..2000 {
            net.run_until(Time::from_secs_f64(k as f64 * 0.001));
            if let Some(b) = net.tcp[1].as_ref() {
                samples.push((b.in_recovery(), b.send_buffer()));
            }
        }
        assert_eq!(net.app[0].delivered, 200_000);
        (net.app[0].deliveries.last().unwrap().0, samples)
    };
    let (clean, _) = run(None);
    let (lossy, samples) = run(Some(35));
    let recovery: Vec<u64> = samples.iter().filter(|s| s.0).map(|s| s.1).collect();
    let (at_entry, most) = (recovery[0], *recovery.iter().max().unwrap());
    assert_eq!(at_entry, 2 * 22 * 2304);
    assert!(most > at_entry, "the buffer stayed at {at_entry} through the recovery");
    // What the loss of the 36th segment costs: 63-64 ms in the emulator's
    // Linux; 111 ms here if the buffer waits for new data to be acked.
    let cost = lossy.as_secs_f64() - clean.as_secs_f64();
    assert!(cost < 0.08, "one loss cost {cost:.3} s");
}
