use crate::{DisciplineSpec, DropReason, ElementSpec, Outcome, Packet, Path, PathSpec, QueueLimit, RateSpec};
use units::{Dur, Rate, Rng, Time};

fn queue(rate_mbps: u64, limit: QueueLimit, discipline: DisciplineSpec) -> Path {
    PathSpec { elements: vec![ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(rate_mbps)), limit, discipline }] }.build(1).unwrap()
}

fn link(rate_mbps: u64, delay_ms: u64, limit: QueueLimit) -> Path {
    PathSpec::link(Rate::mbps(rate_mbps), Dur::from_millis(delay_ms), limit, 0.0, "l").build(1).unwrap()
}

fn offer(p: &mut Path, t: u64, len: u32) -> Outcome {
    p.offer(Time(t), &mut Packet::new(0, len))
}

#[test]
fn an_idle_link_delivers_after_its_serialisation_and_delay() {
    let mut l = link(12, 10, QueueLimit::Packets(10));
    // 1500 B at 12 Mbps = 1 ms.
    assert_eq!(offer(&mut l, 0, 1500), Outcome::Arrive(Time(11_000_000)));
    assert_eq!(l.stats().queue.queue_delay_sum, Dur::ZERO);
}

#[test]
fn back_to_back_packets_leave_in_order_one_serialisation_apart() {
    let mut l = link(12, 0, QueueLimit::Packets(10));
    let t: Vec<_> = (0..3).map(|_| offer(&mut l, 0, 1500)).collect();
    assert_eq!(t, [1, 2, 3].map(|k| Outcome::Arrive(Time(k * 1_000_000))));
    // The second waited 1 ms, the third 2 ms.
    assert_eq!(l.stats().queue.queue_delay_sum, Dur::from_millis(3));
}

#[test]
fn drop_tail_counts_the_waiting_packets_only() {
    let mut l = link(12, 0, QueueLimit::Packets(2));
    // One in service plus two waiting fit; the fourth is dropped.
    for _ in 0..3 {
        assert!(matches!(offer(&mut l, 0, 1500), Outcome::Arrive(_)));
    }
    assert_eq!(offer(&mut l, 0, 1500), Outcome::Dropped(DropReason::QueueFull, Time(0)));
    // At 1 ms the second packet enters service, freeing a place.
    assert_eq!(offer(&mut l, 1_000_000, 1500), Outcome::Arrive(Time(4_000_000)));
    assert_eq!(l.stats().drops(DropReason::QueueFull), 1);
    let q = l.queue_mut().unwrap();
    assert_eq!(q.backlog_pkts(Time(1_000_000)), 2);
    assert_eq!(q.backlog_pkts(Time(3_000_000)), 0);
}

#[test]
fn a_byte_limit_counts_the_waiting_bytes() {
    let mut l = link(12, 0, QueueLimit::Bytes(2000));
    assert!(matches!(offer(&mut l, 0, 1500), Outcome::Arrive(_))); // in service
    assert!(matches!(offer(&mut l, 0, 1500), Outcome::Arrive(_))); // waits: 1500 B
    assert_eq!(offer(&mut l, 0, 1000), Outcome::Dropped(DropReason::QueueFull, Time(0)));
    assert!(matches!(offer(&mut l, 0, 500), Outcome::Arrive(_))); // exactly 2000 B
}

/// Drives a path through the engine's protocol by hand: offers at their
/// times, wake-ups at `poll_at`, in time order. Returns each packet's
/// arrival or drop, by packet id.
fn drive(p: &mut Path, arrivals: &[(u64, u32)]) -> Vec<Outcome> {
    let mut out = vec![Outcome::Held; arrivals.len()];
    let mut woken = Vec::new();
    let mut next = 0;
    loop {
        let wake = p.poll_at();
        let arrive = arrivals.get(next).map(|a| Time(a.0));
        match (arrive, wake) {
            (None, None) => return out,
            (Some(a), w) if w.is_none_or(|w| a <= w) => {
                let mut pkt = Packet::new(next as u32, arrivals[next].1);
                let o = p.offer(a, &mut pkt);
                if o != Outcome::Held {
                    out[next] = o;
                }
                next += 1;
            }
            (_, w) => {
                let w = w.expect("an arrival that is not first leaves a wake-up first");
                p.wake(w, &mut woken);
                for (pkt, o) in woken.drain(..) {
                    out[pkt.id as usize] = o;
                }
            }
        }
    }
}

/// `n` Poisson arrivals (time in ns, bytes) of 40, 576 and 1500 bytes
/// alike, at load 1.2 of 10 Mbit/s.
fn overload(seed: u64, n: usize) -> Vec<(u64, u32)> {
    let mut rng = Rng::stream(seed, "arrivals");
    let mut t = 0u64;
    (0..n)
        .map(|_| {
            let len = [40, 576, 1500][rng.below(3) as usize];
            t += (-rng.uniform_open0().ln() * 470_000.0) as u64;
            (t, len)
        })
        .collect()
}

#[test]
fn a_scheduled_queue_gives_the_departures_and_drops_of_drop_tail_decided_at_arrival() {
    // Into 10 Mbit/s with a 20-packet queue: queueing, overflow and idle
    // periods alike.
    let arrivals = overload(5, 20_000);
    for limit in [QueueLimit::Packets(20), QueueLimit::Bytes(15_000)] {
        let mut fifo = queue(10, limit, DisciplineSpec::DropTail);
        let mut held = queue(10, limit, DisciplineSpec::ScheduledFifo);
        let a = drive(&mut fifo, &arrivals);
        let b = drive(&mut held, &arrivals);
        assert!(a.iter().all(|o| *o != Outcome::Held));
        let drops = a.iter().filter(|o| matches!(o, Outcome::Dropped(..))).count();
        assert!(drops > 100 && drops < 5000, "{drops} drops: the test should overflow the queue");
        assert_eq!(a, b);
        assert_eq!(fifo.stats(), held.stats());
    }
}

#[test]
fn a_watched_queue_knows_the_most_packets_waiting_at_once_in_each_millisecond_as_a_sweep_of_its_packets_gives() {
    // As above, over 4 s in 1 ms bins.
    let arrivals: Vec<(u64, u32)> = overload(9, 8_000).into_iter().take_while(|a| a.0 < 4_000_000_000).collect();
    let (bin, bins) = (Dur::from_millis(1), 4_000usize);
    let mut fifo = queue(10, QueueLimit::Packets(20), DisciplineSpec::DropTail);
    let mut held = queue(10, QueueLimit::Packets(20), DisciplineSpec::ScheduledFifo);
    for p in [&mut fifo, &mut held] {
        p.queue_mut().unwrap().watch(bin, Dur::from_secs(4));
    }
    let out = drive(&mut fifo, &arrivals);
    assert_eq!(drive(&mut held, &arrivals), out);

    // Each accepted packet waits from its arrival to its start of service
    // (its departure less its 800 ns a byte at 10 Mbit/s): the count of
    // those spans, swept in time order, a start of service before an
    // arrival at the same instant, as the queue orders them.
    let mut steps: Vec<(u64, i64)> = Vec::new();
    for (&(a, len), o) in arrivals.iter().zip(&out) {
        if let Outcome::Arrive(done) = o {
            let start = done.0 - len as u64 * 800;
            if start > a {
                steps.extend([(a, 1), (start, -1)]);
            }
        }
    }
    steps.sort();
    let mut want = vec![0u32; bins];
    let (mut n, mut k) = (0i64, 0);
    for (i, w) in want.iter_mut().enumerate() {
        let (start, end) = (i as u64 * bin.0, (i as u64 + 1) * bin.0);
        // Changes on the bin's first instant come before it begins.
        while k < steps.len() && steps[k].0 == start {
            n += steps[k].1;
            k += 1;
        }
        let mut most = n;
        while k < steps.len() && steps[k].0 < end {
            n += steps[k].1;
            most = most.max(n);
            k += 1;
        }
        *w = most as u32;
    }
    let busy = want.iter().filter(|&&m| m >= 10).count();
    assert!(busy > 500, "{busy} bins with ten or more waiting: the test should fill the queue");
    for p in [&fifo, &held] {
        let q = p.queue().unwrap();
        assert_eq!(q.occupancy().unwrap(), want);
        assert_eq!(q.stats().max_backlog_pkts, 20);
    }
}

/// What a packet finding a drop-tail queue idle reads (the serialiser, the
/// end of service, the accepted counts, the mode's and discipline's tags)
/// lies in the queue's first cache line; the element's tag takes no room
/// of its own (see `an_element_is_its_queue_or_loss_untagged`).
#[test]
fn an_idle_drop_tail_queue_is_read_in_its_first_cache_line() {
    use std::mem::{offset_of, size_of};
    assert!(offset_of!(super::Queue, accepted) + size_of::<super::Accepted>() <= 64);
    assert!(offset_of!(super::Queue, server) + size_of::<super::Server>() <= 64);
    assert!(offset_of!(super::Queue, busy_until) + size_of::<Time>() <= 64);
    // The mode's tag is the discipline's, the first word of the in-order state.
    assert_eq!(offset_of!(super::InOrder, discipline), 0);
    assert!(offset_of!(super::Queue, mode) + 8 <= 64);
}
