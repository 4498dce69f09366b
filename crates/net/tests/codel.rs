//! CoDel against RFC 8289's behaviour.

use net::queue::CodelParams;
use net::{DisciplineSpec, DropReason, ElementSpec, Outcome, Packet, Path, PathSpec, QueueLimit, RateSpec};
use units::{Rate, Time};

/// 1500 B at 10 Mbit/s: 1.2 ms each.
const TX: u64 = 1_200_000;

fn codel(ecn: bool) -> Path {
    let discipline = DisciplineSpec::Codel(CodelParams { ecn, ..CodelParams::default() });
    PathSpec { elements: vec![ElementSpec::Queue { rate: RateSpec::Fixed(Rate::mbps(10)), limit: QueueLimit::Packets(100_000), discipline }] }
        .build(1)
        .unwrap()
}

/// Offers `arrivals` (time, ECN-capable) in order with the wake-ups the
/// path asks for, as an engine would; each packet's outcome by index.
fn drive(p: &mut Path, arrivals: &[(u64, bool)]) -> Vec<(Outcome, bool)> {
    let mut out = vec![(Outcome::Held, false); arrivals.len()];
    let mut woken = Vec::new();
    let mut next = 0;
    loop {
        let wake = p.poll_at();
        match (arrivals.get(next), wake) {
            (None, None) => return out,
            (Some(&(a, ecn)), w) if w.is_none_or(|w| Time(a) <= w) => {
                let mut pkt = Packet::new(next as u32, 1500);
                pkt.ecn_capable = ecn;
                let o = p.offer(Time(a), &mut pkt);
                if o != Outcome::Held {
                    out[next] = (o, pkt.ce);
                }
                next += 1;
            }
            (_, w) => {
                p.wake(w.unwrap(), &mut woken);
                for (pkt, o) in woken.drain(..) {
                    out[pkt.id as usize] = (o, pkt.ce);
                }
            }
        }
    }
}

/// Evenly spaced arrivals at `load` times the link's rate for `secs`.
fn cbr(load: f64, secs: f64, ecn: bool) -> Vec<(u64, bool)> {
    let gap = TX as f64 / load;
    (0..(secs * 1e9 / gap) as u64).map(|k| ((k as f64 * gap) as u64, ecn)).collect()
}

/// Sojourn times (service start minus arrival) of delivered packets
/// arriving after `from`, in seconds.
fn sojourns(arrivals: &[(u64, bool)], out: &[(Outcome, bool)], from: u64) -> Vec<f64> {
    arrivals
        .iter()
        .zip(out)
        .filter(|((a, _), _)| *a >= from)
        .filter_map(|((a, _), (o, _))| match o {
            Outcome::Arrive(t) => Some((t.0 - TX - a) as f64 / 1e9),
            _ => None,
        })
        .collect()
}

#[test]
fn codel_never_drops_while_the_sojourn_time_stays_below_target() {
    // Bursts of three back to back every 10 ms: the last waits 2.4 ms.
    let arrivals: Vec<(u64, bool)> = (0..3000u64).map(|k| ((k / 3) * 10_000_000, false)).collect();
    let mut p = codel(false);
    let out = drive(&mut p, &arrivals);
    assert!(out.iter().all(|(o, _)| matches!(o, Outcome::Arrive(_))));
    let s = sojourns(&arrivals, &out, 0);
    assert!((s.iter().cloned().fold(0.0, f64::max) - 0.0024).abs() < 1e-9);
    // A standing queue of 4 packets (4.8 ms) held at the link's rate: never dropped.
    let arrivals: Vec<(u64, bool)> = (0..4).map(|_| (0, false)).chain((1..5000u64).map(|k| (k * TX, false))).collect();
    let mut p = codel(false);
    let out = drive(&mut p, &arrivals);
    assert_eq!(p.stats().total_drops(), 0);
    assert!(sojourns(&arrivals, &out, 1_000_000_000).iter().all(|&s| (s - 0.0036).abs() < 1e-9 || (s - 0.0048).abs() < 1e-9));
}

#[test]
fn under_constant_overload_codel_drops_at_interval_over_the_root_of_the_count() {
    let arrivals = cbr(1.5, 4.0, false);
    let mut p = codel(false);
    let out = drive(&mut p, &arrivals);
    let mut drops: Vec<u64> = out.iter().filter_map(|(o, _)| if let Outcome::Dropped(DropReason::Early, t) = o { Some(t.0) } else { None }).collect();
    drops.sort();
    // The queue grows by one packet every 3.6 ms: the sojourn passes 5 ms
    // early on, and CoDel first drops one interval later. Under a constant
    // overload it never leaves the dropping state, so drop k + 1 follows
    // drop k by interval/√k, to the packet departure it lands on.
    assert!(drops.len() > 100, "{} drops", drops.len());
    for (k, w) in drops.windows(2).enumerate().take(200) {
        let expected = 0.1 / ((k + 1) as f64).sqrt();
        let gap = (w[1] - w[0]) as f64 / 1e9;
        assert!((gap - expected).abs() <= TX as f64 / 1e9 + 1e-9, "drop {}: {gap:.4} s after the last, expected {expected:.4} s", k + 1);
    }
}

#[test]
fn with_ecn_codel_marks_ecn_capable_packets_on_the_same_schedule_instead_of_dropping() {
    let ect = cbr(1.5, 4.0, true);
    let mut p = codel(true);
    let out = drive(&mut p, &ect);
    let marks: Vec<u64> = out
        .iter()
        .filter_map(|(o, ce)| match o {
            Outcome::Arrive(t) if *ce => Some(t.0 - TX),
            _ => None,
        })
        .collect();
    assert_eq!(p.stats().total_drops(), 0);
    assert_eq!(p.queue().unwrap().stats().aqm.ecn_marks, marks.len() as u64);
    assert!(marks.len() > 100, "{} marks", marks.len());
    for (k, w) in marks.windows(2).enumerate().take(200) {
        let expected = 0.1 / ((k + 1) as f64).sqrt();
        let gap = (w[1] - w[0]) as f64 / 1e9;
        assert!((gap - expected).abs() <= TX as f64 / 1e9 + 1e-9, "mark {}: {gap:.4} s after the last, expected {expected:.4} s", k + 1);
    }
}
