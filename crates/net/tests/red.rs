//! RED against its definition (Floyd & Jacobson 1993, as ns-2 2.35's
//! Queue/RED computes it).

use net::queue::{Admit, Backlog, Discipline, Red, RedCurve, RedEstimator, RedParams, RedRule, RedVerdict};
use net::{DisciplineSpec, ElementSpec, Outcome, Packet, Path, PathSpec, QueueLimit, RateSpec};
use units::{Dur, Rate, Rng, Time};

/// Packet-mode RED with thresholds 5 and 15 packets and max_p 1/10, the
/// paper's forced drops past maxthresh (no `use_mark_p`).
fn params() -> RedParams {
    RedParams {
        thresh: 5.0,
        maxthresh: 15.0,
        q_weight: 0.002,
        linterm: 10.0,
        gentle: false,
        bytes: false,
        queue_in_bytes: false,
        wait: false,
        use_mark_p: false,
        ..RedParams::default()
    }
}

fn red_path(mbps: u64, p: RedParams, limit: u32) -> Path {
    let discipline = DisciplineSpec::Red { params: p, stream: "red".into() };
    PathSpec { elements: vec![ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(mbps)), limit: QueueLimit::Packets(limit), discipline }] }
        .build(1)
        .unwrap()
}

/// The average RED computed for the packet just offered.
fn offer_and_average(path: &mut Path, t: Time, len: u32) -> (Outcome, f64) {
    let before = path.stats().queue.aqm.estimate_sum;
    let o = path.offer(t, &mut Packet::new(0, len));
    (o, path.stats().queue.aqm.estimate_sum - before)
}

#[test]
fn red_average_follows_the_ewma_of_the_queue_with_weight_q_weight() {
    // 1500 B every 0.5 ms into 12 Mbit/s (1 ms each): arrival k finds
    // k - 1 - ⌊k/2⌋ packets waiting.
    let p = RedParams { q_weight: 0.05, thresh: 1000.0, maxthresh: 2000.0, ..params() };
    let mut path = red_path(12, p, 10_000);
    let mut expected = 0.0;
    for k in 0..400u64 {
        let q = if k == 0 { 0.0 } else { (k - 1 - k / 2) as f64 };
        expected = expected * 0.95 + 0.05 * q;
        let (o, ave) = offer_and_average(&mut path, Time(k * 500_000), 1500);
        assert!(matches!(o, Outcome::Arrive(_)));
        assert!((ave - expected).abs() < 1e-9 * expected.max(1.0), "arrival {k}: average {ave}, EWMA {expected}");
    }
}

#[test]
fn ns2s_automatic_settings_follow_the_link() {
    // 10 Mbit/s of 500 B packets: C = 2500 packets/s.
    let est = RedParams::default().estimator(Rate::mbps(10), Dur::from_millis(20));
    let c: f64 = 2500.0;
    let rtt = (3.0 * (0.020 + 1.0 / c)).max(0.1);
    assert!((est.weight() - (1.0 - (-1.0 / (10.0 * rtt * c)).exp())).abs() < 1e-15);
    // thresh = max(5, 5 ms of packets / 2) = 6.25 packets, maxthresh 3x, in bytes.
    assert_eq!(est.thresholds(), (6.25 * 500.0, 18.75 * 500.0));
    let est = RedParams { q_weight: 0.0, ..params() }.estimator(Rate::mbps(10), Dur::ZERO);
    assert!((est.weight() - (1.0 - (-1.0 / c).exp())).abs() < 1e-15);
}

/// Packets between drops with the average held at `q` (weight 1), over
/// `n` arrivals of `len` bytes: the drop fraction.
fn drop_fraction(p: RedParams, q: f64, len: u32, n: u64) -> f64 {
    let mut est = RedParams { q_weight: 1.0, ..p }.estimator(Rate::mbps(10), Dur::ZERO);
    let mut rng = Rng::stream(7, "red-test");
    let mut drops = 0;
    for _ in 0..n {
        est.arrive(q, None);
        if est.decide(q, len, &mut rng) != RedVerdict::Pass {
            drops += 1;
        }
    }
    drops as f64 / n as f64
}

/// Within four binomial standard deviations of `expected` over `n`.
fn assert_near(f: f64, expected: f64, n: u64, what: &str) {
    let sd = (expected * (1.0 - expected) / n as f64).sqrt();
    assert!((f - expected).abs() < 4.0 * sd, "{what}: {f:.5}, expected {expected:.5} ± {:.5}", 4.0 * sd);
}

#[test]
fn early_drops_between_the_thresholds_come_at_the_rate_the_count_makes_of_p_b() {
    // Average 10: p_b = max_p (10 - 5) / (15 - 5) = 0.05. With
    // p_a = p_b / (1 - count p_b) the packets between drops are uniform on
    // 1 .. 1/p_b - 1: mean 1/(2 p_b), a drop fraction of 2 p_b.
    let est = RedParams { q_weight: 1.0, ..params() }.estimator(Rate::mbps(10), Dur::ZERO);
    let mut e = est.clone();
    e.arrive(10.0, None);
    assert!((e.probability() - 0.05).abs() < 1e-12);
    let n = 200_000;
    assert_near(drop_fraction(params(), 10.0, 1500, n), 0.10, n, "drop fraction at p_b = 0.05");
    // Average 7: p_b = 0.02, fraction 0.04.
    assert_near(drop_fraction(params(), 7.0, 1500, n), 0.04, n, "drop fraction at p_b = 0.02");
    // wait_: p_a = p_b / (2 - count p_b) from count 1/p_b: uniform on
    // 1/p_b .. 2/p_b - 1, mean 1.5/p_b - 0.5 = 29.5 packets at p_b = 0.05.
    assert_near(drop_fraction(RedParams { wait: true, ..params() }, 10.0, 1500, n), 1.0 / 29.5, n, "drop fraction with wait_");
    // Below thresh, nothing.
    assert_eq!(drop_fraction(params(), 4.9, 1500, 10_000), 0.0);
}

#[test]
fn gentle_mode_rises_from_max_p_to_one_between_maxthresh_and_twice_it() {
    let at = |p: RedParams, ave: f64| {
        let mut e = RedParams { q_weight: 1.0, ..p }.estimator(Rate::mbps(10), Dur::ZERO);
        e.arrive(ave, None);
        e
    };
    let gentle = RedParams { gentle: true, ..params() };
    for (ave, p) in [(15.0, 0.1), (22.5, 0.55), (27.0, 0.82)] {
        assert!((at(gentle, ave).probability() - p).abs() < 1e-12, "gentle p at {ave}");
    }
    let mut rng = Rng::stream(1, "t");
    // Past twice maxthresh gentle RED drops every packet, as forced drops;
    // plain RED does so from maxthresh.
    assert_eq!(at(gentle, 30.0).decide(30.0, 1500, &mut rng), RedVerdict::Forced);
    assert_eq!(at(params(), 15.0).decide(15.0, 1500, &mut rng), RedVerdict::Forced);
    // Between maxthresh and twice it, gentle drops are early ones, at the
    // rate p_b = 0.55 makes: packets between drops uniform on 1 .. ⌈1/p_b - 1⌉.
    let n = 100_000;
    let f = drop_fraction(gentle, 22.5, 1500, n);
    // From count 1, p/(1-p) = 1.22: every packet but the one that
    // crossed thresh.
    assert_eq!(f, (n - 1) as f64 / n as f64);
    let f = drop_fraction(gentle, 16.0, 1500, n);
    // p_b = 0.9·16/15 - 0.8 = 0.16: no drop for n packets with probability
    // (1 - (n+1) p_b)/(1 - p_b) while positive; the mean gap is their sum.
    let pb: f64 = 0.9 * 16.0 / 15.0 - 0.8;
    let mean: f64 = (0..7).map(|k| ((1.0 - (k as f64 + 1.0) * pb) / (1.0 - pb)).max(0.0)).sum();
    assert_near(f, 1.0 / mean, n, "gentle drop fraction at 16");
}

#[test]
fn an_idle_queue_decays_the_average_as_if_small_packets_had_found_it_empty() {
    // 10 Mbit/s, mean_pktsize 500: C = 2500 packets/s.
    let p = RedParams { q_weight: 0.01, thresh: 1000.0, maxthresh: 2000.0, mean_pktsize: 500, ..params() };
    let mut path = red_path(10, p, 10_000);
    // A burst of 100 packets at once builds the average up.
    let mut ave = 0.0;
    for _ in 0..100 {
        ave = offer_and_average(&mut path, Time::ZERO, 1500).1;
    }
    // The burst is served by 100 × 1.2 ms = 120 ms; the queue is then idle
    // for 80 ms until an arrival at 200 ms: ⌊2500 × 0.08⌋ = 200 packets.
    let (_, after) = offer_and_average(&mut path, Time(200_000_000), 1500);
    let expected = ave * 0.99f64.powi(201);
    assert!((after - expected).abs() < 1e-9 * ave, "after idle {after}, expected {expected}");
}

#[test]
fn byte_mode_measures_the_queue_in_bytes_and_drops_large_packets_more() {
    let bytes = RedParams { queue_in_bytes: true, bytes: true, mean_pktsize: 500, ..params() };
    let est = bytes.estimator(Rate::mbps(10), Dur::ZERO);
    assert_eq!(est.thresholds(), (2500.0, 7500.0));
    assert_eq!(est.measure(3, 4500), 4500.0);
    // 5000 bytes: p_b = 0.05. A packet of k mean sizes counts k in the
    // count and k in p: packets between drops uniform on 1 .. 1/(k p_b) - 1,
    // a drop fraction of 2 k p_b.
    let n = 200_000;
    assert_near(drop_fraction(bytes, 5000.0, 500, n), 0.10, n, "500 B packets");
    assert_near(drop_fraction(bytes, 5000.0, 1000, n), 0.20, n, "1000 B packets");
}

#[test]
fn with_setbit_red_marks_ecn_capable_packets_instead_of_dropping_them_early() {
    let est = RedParams { q_weight: 1.0, ..params() }.estimator(Rate::mbps(10), Dur::ZERO);
    let mut red = Red::new(est.clone(), QueueLimit::Packets(100), true, Rng::stream(3, "red"));
    let mut plain = Red::new(est, QueueLimit::Packets(100), false, Rng::stream(3, "red"));
    let q = Backlog { packets: 10, bytes: 15_000, wait: Dur::from_millis(12), idle_since: None };
    let (mut marks, mut drops) = (0, 0);
    for i in 0..20_000 {
        let mut a = Packet::new(i, 1500);
        a.ecn_capable = true;
        let mut b = a;
        let ra = red.admit(Time::ZERO, &mut a, &q);
        let rb = plain.admit(Time::ZERO, &mut b, &q);
        // Same stream, same decisions: each early drop of one is a mark of the other.
        assert_eq!(ra == net::queue::Admit::Accept && a.ce, rb != net::queue::Admit::Accept);
        marks += a.ce as u64;
        drops += (rb != net::queue::Admit::Accept) as u64;
    }
    assert_eq!(red.stats().ecn_marks, marks);
    assert_near(marks as f64 / 20_000.0, 0.10, 20_000, "marks at p_b = 0.05");
    assert_eq!(marks, drops);
    // A packet that cannot take a mark is dropped.
    let mut c = Packet::new(0, 1500);
    let dropped = (0..100).filter(|_| red.admit(Time::ZERO, &mut c, &q) != net::queue::Admit::Accept).count();
    assert!(dropped > 0 && !c.ce);
}

/// RED on thresholds 10 and 40 packets, max_p 0.1, with weight 1 so that
/// each arrival sets the average to the backlog it is given.
fn paper(rule: RedRule) -> RedEstimator {
    RedEstimator::from_curve(RedCurve { min_th: 10.0, max_th: 40.0, max_p: 0.1, w_q: 1.0 }, 1.0, rule)
}

#[test]
fn the_papers_rule_spaces_drops_evenly_at_twice_p_b_and_forces_past_max_th() {
    // Floyd and Jacobson: the k-th arrival after a drop is dropped with
    // p_b/(1 - k·p_b), so the gap between drops is uniform on 1..K, K =
    // 1/p_b - 1, of mean μ = 1/(2·p_b): a share of 2·p_b, within 4
    // deviations of a renewal count (√(n·σ²/μ³) drops, σ² = (K² - 1)/12)
    // over n arrivals. dsRED's rule is the same while p_b stays put. At
    // most min_th nothing is dropped, past max_th everything.
    let n = 200_000.0;
    for rule in [RedRule::FloydJacobson, RedRule::Dsred] {
        for (ave, pb) in [(5.0, 0.0), (10.0, 0.0), (25.0, 0.05), (13.0, 0.01), (40.5, 1.0)] {
            let mut est = paper(rule);
            let mut rng = Rng::stream(1, "paper");
            est.arrive(ave, None);
            let share = (0..n as u32).filter(|_| est.decide(0.0, 0, &mut rng) != RedVerdict::Pass).count() as f64 / n;
            let (want, tol) = match pb {
                0.0 => (0.0, 0.0),
                1.0 => (1.0, 0.0),
                _ => {
                    let (k, mu) = (1.0 / pb - 1.0, 1.0 / (2.0 * pb));
                    (1.0 / mu, 4.0 * (n * (k * k - 1.0) / 12.0 / mu.powi(3)).sqrt() / n)
                }
            };
            assert!((share - want).abs() <= tol, "{rule:?} at {ave}: {share} against {want} ± {tol}");
        }
    }
}

#[test]
fn dsreds_rule_makes_no_early_drop_once_count_times_p_b_passes_one() {
    // 18 arrivals just above min_th (p_b 3·10⁻⁶, count 17), then the
    // average jumps to 28 (p_b = 0.06): count·p_b = 1.08 at the next.
    // The paper's p_a is 1 there, and drops resume at 2·p_b; dsRED's is
    // negative and stays so as the count grows: no early drop in 10,000
    // arrivals, until the average falls to min_th and the count restarts.
    for rule in [RedRule::FloydJacobson, RedRule::Dsred] {
        let mut est = paper(rule);
        let mut rng = Rng::stream(1, "stall");
        est.arrive(10.0001, None);
        for _ in 0..18 {
            assert_eq!(est.decide(0.0, 0, &mut rng), RedVerdict::Pass);
        }
        est.arrive(28.0, None);
        let drops = (0..10_000).filter(|_| est.decide(0.0, 0, &mut rng) == RedVerdict::Early).count();
        match rule {
            RedRule::Dsred => assert_eq!(drops, 0),
            _ => assert!((drops as f64 / 10_000.0 - 0.12).abs() < 0.01, "{drops}"),
        }
    }
    let mut est = paper(RedRule::Dsred);
    let mut rng = Rng::stream(1, "restart");
    est.arrive(10.0001, None);
    for _ in 0..18 {
        est.decide(0.0, 0, &mut rng);
    }
    est.arrive(28.0, None);
    assert_eq!(est.decide(0.0, 0, &mut rng), RedVerdict::Pass);
    est.arrive(9.0, None);
    assert_eq!(est.decide(0.0, 0, &mut rng), RedVerdict::Pass);
    est.arrive(28.0, None);
    let drops = (0..10_000).filter(|_| est.decide(0.0, 0, &mut rng) == RedVerdict::Early).count();
    assert!((drops as f64 / 10_000.0 - 0.12).abs() < 0.01, "below min_th the count restarted: {drops}");
}

/// Marks and drops of `n` ECN-capable arrivals at RED (`p`, setbit) that
/// each find `q` packets waiting.
fn marks_and_drops(p: RedParams, q: usize, n: u32) -> (u32, u32) {
    let est = RedParams { q_weight: 1.0, ..p }.estimator(Rate::mbps(10), Dur::ZERO);
    let mut red = Red::new(est, QueueLimit::Packets(1000), true, Rng::stream(5, "red"));
    let backlog = Backlog { packets: q, bytes: q as u64 * 1500, wait: Dur::from_millis(12), idle_since: None };
    let (mut marks, mut drops) = (0, 0);
    for i in 0..n {
        let mut pkt = Packet::new(i, 1500);
        pkt.ecn_capable = true;
        match red.admit(Time::ZERO, &mut pkt, &backlog) {
            Admit::Accept => marks += pkt.ce as u32,
            Admit::Drop(r) => {
                assert_eq!(r, net::DropReason::Early, "use_mark_p makes every RED drop an early one");
                drops += 1;
            }
        }
    }
    (marks, drops)
}

#[test]
fn with_use_mark_p_red_marks_only_below_mark_p_and_drops_early_past_maxthresh() {
    let p = RedParams { use_mark_p: true, mark_p: 0.1, ..params() };
    // At 10 packets p_b = 0.05 < mark_p: every early decision is a mark.
    let (marks, drops) = marks_and_drops(p, 10, 20_000);
    assert_eq!(drops, 0);
    assert_near(marks as f64 / 20_000.0, 0.10, 20_000, "marks at p_b = 0.05");
    // With mark_p 0.03 the same decisions are drops.
    let (marks, drops) = marks_and_drops(RedParams { mark_p: 0.03, ..p }, 10, 20_000);
    assert_eq!(marks, 0);
    assert_near(drops as f64 / 20_000.0, 0.10, 20_000, "drops at p_b = 0.05");
    // Past maxthresh p is 1, not below mark_p: everything but the arrival
    // that starts the count is dropped, early.
    assert_eq!(marks_and_drops(p, 15, 1000), (0, 999));
    // Gentle: past twice maxthresh likewise, early, not forced.
    let gentle = RedParams { gentle: true, ..p };
    assert_eq!(marks_and_drops(gentle, 30, 1000), (0, 999));
}

#[test]
fn adaptive_red_moves_max_p_by_alpha_and_beta_once_per_interval() {
    // Thresholds 5 and 15: max_p rises while the average is above 11 and
    // falls while it is below 9. 10 Mbit/s: bottom = min(0.01, 80000/1e7).
    let p = RedParams { q_weight: 1.0, adaptive: true, ..params() };
    let a = p.adaptive(Rate::mbps(10)).unwrap();
    assert_eq!((a.alpha, a.beta, a.interval, a.top, a.bottom), (0.01, 0.9, Dur::from_millis(500), 0.5, 0.008));
    assert!(RedParams { adaptive: false, ..p }.adaptive(Rate::mbps(10)).is_none());
    let mut red = Red::new(p.estimator(Rate::mbps(10), Dur::ZERO), QueueLimit::Packets(1000), false, Rng::stream(1, "r")).with_adaptive(Some(a));
    let mut arrive = |t_ms: u64, q: usize| {
        let backlog = Backlog { packets: q, bytes: q as u64 * 1500, wait: Dur::from_millis(1), idle_since: None };
        red.admit(Time(t_ms * 1_000_000), &mut Packet::new(0, 1500), &backlog);
        red.estimator().max_p()
    };
    // An arrival every 100 ms at an average of 14: a change at the first
    // arrival more than 500 ms after the last, by min(alpha, max_p / 4).
    let mut expected = 0.1;
    let mut changes = Vec::new();
    let mut last = 0.1;
    for k in 1..=300 {
        let now = arrive(100 * k, 14);
        if now != last {
            changes.push(k);
            expected += 0.01f64.min(expected / 4.0);
            assert!((now - expected).abs() < 1e-12, "max_p {now} at {k}, expected {expected}");
            last = now;
        }
    }
    assert_eq!(&changes[..3], &[6, 12, 18], "at 600 ms, then 600 ms apart (strictly more than the interval)");
    assert!((0.5..0.51).contains(&last), "stops once at top: {last}");
    // Average 10, within the middle fifth: no change.
    assert_eq!(arrive(30_200, 10), last);
    assert_eq!(arrive(31_000, 10), last);
    // Average 6: falls by beta each interval, down to bottom.
    let mut now = last;
    for k in 0..600 {
        let m = arrive(31_100 + 100 * k, 6);
        assert!(m == now || (m - now * 0.9).abs() < 1e-12);
        now = m;
    }
    assert!(now <= 0.008 && now > 0.008 * 0.9, "stops once at bottom: {now}");
}

#[test]
fn gentle_slope_keeps_the_max_p_it_was_set_from_when_adaptive_red_moves_max_p() {
    // ns-2 computes the gentle line (max_p at maxthresh to 1 at twice it)
    // once: adaptive RED's max_p moves the ramp below maxthresh only.
    let p = RedParams { q_weight: 1.0, adaptive: true, gentle: true, ..params() };
    let a = p.adaptive(Rate::mbps(10));
    let mut red = Red::new(p.estimator(Rate::mbps(10), Dur::ZERO), QueueLimit::Packets(1000), false, Rng::stream(1, "r")).with_adaptive(a);
    let backlog = Backlog { packets: 22, bytes: 33_000, wait: Dur::from_millis(1), idle_since: None };
    red.admit(Time(1_000_000_000), &mut Packet::new(0, 1500), &backlog);
    let e = red.estimator();
    assert!((e.max_p() - 0.11).abs() < 1e-12);
    // 22 packets: 0.9 · 22/15 − 0.8 from max_p 0.1, as before the change.
    assert!((e.probability() - (0.9 * 22.0 / 15.0 - 0.8)).abs() < 1e-12);
}
