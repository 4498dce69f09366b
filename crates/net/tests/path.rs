//! Paths of elements through the element API alone, each element's effect
//! checked against a hand computation.

use net::{DelaySpec, DisciplineSpec, DropReason, ElementSpec, LossModel, Outages, Outcome, Packet, Path, PathSpec, QueueLimit, RateSpec, Shaper};
use units::{Dur, Rate, Rng, Time};

const MS: u64 = 1_000_000;
const US: u64 = 1_000;

fn queue(mbps: u64, limit: u32) -> ElementSpec {
    ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(mbps)), limit: QueueLimit::Packets(limit), discipline: DisciplineSpec::DropTail }
}

fn delay(ms: u64) -> ElementSpec {
    ElementSpec::Delay(DelaySpec::Fixed(Dur::from_millis(ms)))
}

fn build(elements: Vec<ElementSpec>) -> Path {
    PathSpec { elements }.build(7).unwrap()
}

/// Offers `n` packets of 1500 B at `t` (ns); each one's outcome.
fn burst(p: &mut Path, t: u64, n: usize) -> Vec<Outcome> {
    (0..n).map(|i| p.offer(Time(t), &mut Packet::new(i as u32, 1500))).collect()
}

fn arrivals(o: &[Outcome], from: u64) -> Vec<u64> {
    o.iter()
        .filter_map(|o| match o {
            Outcome::Arrive(t) => Some(t.0 - from),
            _ => None,
        })
        .collect()
}

#[test]
fn loss_then_queue_then_shaper_then_delay_each_do_what_a_hand_computation_says() {
    let t0 = 1_000 * MS;
    // Loss 30% (its stream "path/loss" of seed 7), a 96 Mbit/s queue of 4
    // packets gated by a 12 Mbit/s bucket of 3000 B, 10 ms of delay.
    let mut p = build(vec![
        ElementSpec::Loss { model: LossModel::Bernoulli { p: 0.3 }, stream: "path/loss".into(), handshakes: None },
        queue(96, 4),
        ElementSpec::Shaper(Shaper { rate: Rate::mbps(12), burst: 3000 }),
        delay(10),
    ]);
    let out = burst(&mut p, t0, 40);

    // Loss: exactly the packets its stream draws under 0.3, and nothing else.
    let mut rng = Rng::stream(7, "path/loss");
    let lost: Vec<bool> = (0..40).map(|_| rng.bernoulli(0.3)).collect();
    for (o, l) in out.iter().zip(&lost) {
        assert_eq!(matches!(o, Outcome::Dropped(DropReason::Loss, _)), *l, "{out:?}");
    }
    let survivors = lost.iter().filter(|l| !**l).count();
    assert!(survivors > 20, "the seed keeps enough packets to fill the queue");

    // Queue: one in service and four waiting; every later survivor overflows.
    let kept: Vec<&Outcome> = out.iter().zip(&lost).filter(|(_, l)| !**l).map(|(o, _)| o).collect();
    assert!(kept[..5].iter().all(|o| matches!(o, Outcome::Arrive(_))));
    assert!(kept[5..].iter().all(|o| **o == Outcome::Dropped(DropReason::QueueFull, Time(t0))));
    let s = p.stats();
    assert_eq!((s.drops(DropReason::Loss), s.drops(DropReason::QueueFull)), ((40 - survivors) as u64, (survivors - 5) as u64));

    // Shaper: the full bucket (3000 B) lets two packets through at the line
    // rate, 125 us each; the third waits for 1313 B more at 12 Mbit/s
    // (875 us), then one a millisecond.
    // Delay: 10 ms on each.
    let want = [125 * US, 250 * US, 1125 * US, 2125 * US, 3125 * US].map(|d| d + 10 * MS);
    assert_eq!(arrivals(&out, t0), want);
    // Waiting in the queue (the serialiser and the bucket), not the delay.
    assert_eq!(s.queue.queue_delay_sum, Dur(125 * US + (1125 - 125) * US + (2125 - 125) * US + (3125 - 125) * US));
}

#[test]
fn a_shaper_lets_a_bucket_through_at_line_rate_then_the_sustained_rate() {
    let shaped = |limit| build(vec![queue(96, limit), ElementSpec::Shaper(Shaper { rate: Rate::mbps(12), burst: 3000 })]);
    let t = 1_000 * MS;
    assert_eq!(arrivals(&burst(&mut shaped(1000), t, 5), t), [125 * US, 250 * US, 1125 * US, 2125 * US, 3125 * US]);
    // Long backlogs average the sustained rate, not the line rate.
    let out = burst(&mut shaped(1000), t, 1000);
    assert_eq!(*arrivals(&out, t).last().unwrap(), 1125 * US + 997 * MS);
}

#[test]
fn a_shaper_bucket_refills_at_its_rate_and_never_beyond_its_size() {
    let mut p = build(vec![queue(96, 1000), ElementSpec::Shaper(Shaper { rate: Rate::mbps(12), burst: 3000 })]);
    let t = 1_000 * MS;
    burst(&mut p, t, 4);
    // The fourth packet emptied the bucket 2.125 ms after t; at 3.625 ms
    // it holds 2250 B: one packet leaves at once, leaving 937 B, and the
    // next waits 375 us for the rest of its 1500 B.
    let t2 = t + 3_625 * US;
    assert_eq!(arrivals(&burst(&mut p, t2, 2), t2), [125 * US, 500 * US]);
    // After an hour idle, still only two packets at line rate.
    let t3 = t + 3_600_000 * MS;
    assert_eq!(arrivals(&burst(&mut p, t3, 3), t3), [125 * US, 250 * US, 1125 * US]);
}

#[test]
fn packets_waiting_for_tokens_wait_in_the_queue_and_count_against_its_limit() {
    let mut p = build(vec![queue(96, 2), ElementSpec::Shaper(Shaper { rate: Rate::mbps(12), burst: 1500 })]);
    let t = 1_000 * MS;
    // One in service, two waiting for tokens; the fourth is dropped,
    // though at line rate the first would long have left.
    assert!(burst(&mut p, t, 3).iter().all(|o| matches!(o, Outcome::Arrive(_))));
    assert_eq!(p.offer(Time(t + 500 * US), &mut Packet::new(9, 1500)), Outcome::Dropped(DropReason::QueueFull, Time(t + 500 * US)));
}

#[test]
fn shapers_in_series_keep_every_window_under_their_concave_curve() {
    let mut p = build(vec![
        queue(96, 1000),
        ElementSpec::Shaper(Shaper { rate: Rate::mbps(48), burst: 3000 }),
        ElementSpec::Shaper(Shaper { rate: Rate::mbps(12), burst: 9000 }),
    ]);
    let t = 1_000 * MS;
    let d = arrivals(&burst(&mut p, t, 200), 0);
    // Bytes in any window of length tau ending at a departure (the first
    // packet's bits left before the window) are at most each curve.
    for i in 0..d.len() {
        for j in i..d.len() {
            let tau = (d[j] - d[i]) as f64 * 1e-9;
            let bytes = (j - i) as f64 * 1500.0;
            let curve = (96e6 * tau / 8.0).min(3000.0 + 48e6 * tau / 8.0).min(9000.0 + 12e6 * tau / 8.0);
            assert!(bytes <= curve + 1.0, "{} packets in {tau} s", j - i);
        }
    }
    // The first two leave at the line rate, the next at 48 Mbit/s, and the
    // long run at 12 Mbit/s: the 9000 B bucket buys six packets.
    assert_eq!(d[1] - d[0], 125 * US);
    assert_eq!(d[3] - d[2], 250 * US);
    assert_eq!(d[199] - d[150], 49 * MS);
}

#[test]
fn bunching_delivers_queued_packets_in_pairs_at_the_same_rate() {
    let bunched = |p: f64| build(vec![queue(12, 100_000), ElementSpec::Bunching { p, stream: "b".into() }, delay(5)]);
    // 10,000 packets of 1500 B at once: 1 ms each at 12 Mbit/s.
    let out = arrivals(&burst(&mut bunched(0.3), 0, 10_000), 0);
    // In order, and the last leaves when it would have (or a packet time
    // later, if it was held too).
    assert!(out.windows(2).all(|w| w[0] <= w[1]));
    let end = 5 * MS + 10_000 * MS;
    assert!((end..=end + MS).contains(out.last().unwrap()));
    // A share 0.3 / 1.3 leave with the next one; the rest a packet time
    // apart, and never three at once.
    let together = out.windows(2).filter(|w| w[0] == w[1]).count() as f64 / 9_999.0;
    assert!((together - 0.3 / 1.3).abs() < 0.02, "{together}");
    assert!(out.windows(3).all(|w| w[0] < w[2]));
    assert!(out.windows(2).all(|w| w[1] - w[0] <= 2 * MS));
    // A packet that finds the queue idle is never held.
    let mut idle = bunched(1.0);
    let spaced: Vec<u64> = (0..100u64)
        .map(|i| match idle.offer(Time(i * 2 * MS), &mut Packet::new(0, 1500)) {
            Outcome::Arrive(t) => t.0 - i * 2 * MS,
            o => panic!("{o:?}"),
        })
        .collect();
    assert!(spaced.iter().all(|&d| d == 6 * MS), "{spaced:?}");
}

#[test]
fn an_outage_holds_packets_in_the_queue_and_releases_them_at_its_rate() {
    // 12 Mbit/s (1 ms per 1500 B), 5 ms delay; out from 100 to 400 ms of
    // every second, counted from 1 s.
    let ms = Dur::from_millis;
    let o = Outages::new(vec![(ms(100), ms(400))], Dur::from_secs(1), Time(1_000 * MS)).unwrap();
    let mut p = build(vec![queue(12, 3), ElementSpec::Outages(o), delay(5)]);
    let at = |x: u64, id: u32, p: &mut Path| p.offer(Time(x * MS), &mut Packet::new(id, 1500));
    // Before the window: at once.
    assert_eq!(at(1050, 0, &mut p), Outcome::Arrive(Time(1056 * MS)));
    // In it: held to its end, then one after the other; the fourth finds
    // the queue full.
    let d: Vec<_> = (0..4).map(|k| at(1200 + k, k as u32, &mut p)).collect();
    assert_eq!(d[..3], [1406, 1407, 1408].map(|x| Outcome::Arrive(Time(x * MS))));
    assert_eq!(d[3], Outcome::Dropped(DropReason::QueueFull, Time(1203 * MS)));
    // Every period.
    assert_eq!(at(2150, 9, &mut p), Outcome::Arrive(Time(2406 * MS)));
}

#[test]
fn a_scheduled_rate_and_delay_follow_their_schedules() {
    let ms = Dur::from_millis;
    let rates = net::RateSchedule::new(vec![(ms(0), Rate::mbps(12)), (ms(100), Rate::mbps(24))], Some(ms(200)), Time::ZERO).unwrap();
    let delays = net::Schedule::new(vec![(ms(0), ms(50)), (ms(100), ms(10))], Some(ms(200)), Time::ZERO).unwrap();
    let mut p = build(vec![
        ElementSpec::Queue { rate: RateSpec::Scheduled(rates), limit: QueueLimit::Packets(100), discipline: DisciplineSpec::DropTail },
        ElementSpec::Delay(DelaySpec::Scheduled(delays)),
    ]);
    let at = |x_us: u64, p: &mut Path| p.offer(Time(x_us * US), &mut Packet::new(0, 1500));
    // At 12 Mbit/s: 1 ms, then 50 ms of delay.
    assert_eq!(at(0, &mut p), Outcome::Arrive(Time(51 * MS)));
    // Across the change at 100 ms: 0.5 ms at 12 Mbit/s sends half, the
    // rest at 24 Mbit/s takes 0.25 ms; the delay is the one it entered at
    // (10 ms from 100.25 ms) but it cannot overtake the packet before.
    assert_eq!(at(99_500, &mut p), Outcome::Arrive(Time(110_250 * US)));
    // The schedule repeats: at 210 ms the rate is 12 Mbit/s and the delay 50 ms again.
    assert_eq!(at(210_000, &mut p), Outcome::Arrive(Time(261 * MS)));
    // A packet that entered the delay after the change (10 ms) does not
    // overtake the one that entered just before it (50 ms).
    assert_eq!(at(298_000, &mut p), Outcome::Arrive(Time(349 * MS)));
    assert_eq!(at(300_000, &mut p), Outcome::Arrive(Time(349 * MS)), "not before the packet ahead of it");
}

#[test]
fn a_gate_without_a_queue_before_it_is_refused() {
    let e = PathSpec { elements: vec![delay(1), ElementSpec::Shaper(Shaper { rate: Rate::mbps(1), burst: 1500 })] }.build(1).unwrap_err();
    assert_eq!(e.to_string(), "a shaper gates the serialiser of the queue before it, and this path has none");
}
