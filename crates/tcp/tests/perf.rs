//! Throughput of the endpoint code itself: two endpoints joined by constant-delay FIFOs
//! (so no event heap), 1% random loss in the data direction to keep SACK recovery busy.
use std::collections::VecDeque;
use std::sync::Arc;
use tcp::{Algorithm, Dur, Segment, Tcp, TcpConfig, Time};
use units::Rng;

fn run(alg: Algorithm, sack: bool) -> (u64, f64) {
    let c = Arc::new(TcpConfig { algorithm: alg, sack, ..TcpConfig::default() });
    let delay = Dur::from_millis(10);
    let gap = Dur::from_micros(12); // ~1 Gb/s pacing of the data direction
    let mut rng = Rng::stream(1, "perf");
    let mut out = Vec::with_capacity(64);
    let mut now = Time::ZERO;
    let mut a = Tcp::connect(&c, now, &mut out);
    let mut to_b: VecDeque<(Time, Segment)> = out.drain(..).map(|s| (now + delay, s)).collect();
    let mut to_a: VecDeque<(Time, Segment)> = VecDeque::new();
    let mut b: Option<Tcp> = None;
    let mut link_free = Time::ZERO;
    let mut segs = 0u64;
    let mut delivered = 0u64;
    let total = 200_000_000u64;
    let mut written = 0u64;
    let wall = std::time::Instant::now();
    while delivered < total {
        let ta = to_a.front().map(|x| x.0);
        let tb = to_b.front().map(|x| x.0);
        let timers = [a.poll_at(), b.as_ref().and_then(|b| b.poll_at())];
        let next = [ta, tb, timers[0], timers[1]].into_iter().flatten().min().expect("progress");
        now = next;
        if tb == Some(now) {
            let (_, s) = to_b.pop_front().unwrap();
            segs += 1;
            match &mut b {
                Some(b) => delivered += b.on_segment(now, &s, &mut out).delivered,
                None => b = Some(Tcp::accept(&c, now, &s, &mut out)),
            }
            for s in out.drain(..) {
                to_a.push_back((now + delay, s));
            }
            continue;
        }
        if ta == Some(now) {
            let (_, s) = to_a.pop_front().unwrap();
            segs += 1;
            a.on_segment(now, &s, &mut out);
        } else if timers[0] == Some(now) {
            a.on_timer(now, &mut out);
        } else {
            b.as_mut().unwrap().on_timer(now, &mut out);
            for s in out.drain(..) {
                to_a.push_back((now + delay, s));
            }
            continue;
        }
        if written < total {
            written += a.write(now, total - written, &mut out);
        }
        for s in out.drain(..) {
            link_free = link_free.max(now) + gap;
            if s.len == 0 || !rng.bernoulli(0.01) {
                to_b.push_back((link_free + delay, s));
            }
        }
    }
    assert_eq!(delivered, total);
    (segs, segs as f64 / wall.elapsed().as_secs_f64())
}

/// A long transfer at 1% loss delivers every byte; the endpoint's speed is
/// printed, not asserted (`make bench` measures speed side by side).
#[test]
#[cfg_attr(debug_assertions, ignore = "a long transfer: run with --release")]
fn an_endpoint_delivers_every_segment_of_a_long_lossy_transfer() {
    for (alg, sack) in [(Algorithm::Cubic, true), (Algorithm::NewReno, false)] {
        let (segs, rate) = run(alg, sack);
        eprintln!("{alg:?} sack={sack}: {segs} segments, {:.2} M segments/s", rate / 1e6);
    }
}
