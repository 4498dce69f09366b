//! The dumbbell's routes through the fabric API alone: which paths a packet
//! takes between two hosts, and when it reaches each end.

use net::fabric::{BOTTLENECK_FWD, BOTTLENECK_REV};
use net::{DropReason, Fabric, LossModel, Next, Packet, PathSpec, QueueLimit, Side};
use units::{Dur, Rate, Time};

const MS: u64 = 1_000_000;

fn link(mbps: u64, delay_ms: u64) -> PathSpec {
    PathSpec::link(Rate::mbps(mbps), Dur::from_millis(delay_ms), QueueLimit::Packets(100), 0.0, "unused")
}

/// A 10 Mbit/s, 20 ms bottleneck; hosts get 100 Mbit/s, 1 ms access links.
fn dumbbell() -> Fabric {
    Fabric::dumbbell(&[link(10, 20), link(10, 20)], 1).unwrap()
}

fn add(f: &mut Fabric, side: Side) -> u32 {
    f.add_host(side, link(100, 1), link(100, 1), None, false).unwrap()
}

/// Follows one packet from `src` to `dst`, sent at `t0`: each path it
/// reached the end of, with when, and the host it was delivered to. At
/// each end, `Fabric::next_path` names the path the packet is offered to
/// next (its sender's path beyond the link, which it may cross at once),
/// or none when it is delivered.
fn follow(f: &mut Fabric, t0: Time, src: u32, dst: u32) -> (Vec<(u32, Time)>, Next) {
    let pkt = Packet::new(0, 1500);
    let mut hops = Vec::new();
    let mut next = f.send(t0, src, &mut { pkt });
    loop {
        match next {
            Next::Arrive { path, at } => {
                hops.push((path, at));
                let said = f.next_path(path, src, dst);
                next = f.arrived(at, path, src, dst, || pkt).0;
                let offered = match next {
                    Next::Arrive { path, .. } | Next::Resume { path, .. } | Next::Held { path } | Next::Dropped { path, .. } => Some(path),
                    Next::Deliver { .. } => None,
                };
                let beyond = f.hosts[src as usize].beyond;
                assert!(said == offered || (said.is_some() && said == beyond), "next_path {said:?}, offered {offered:?}");
            }
            other => return (hops, other),
        }
    }
}

/// A 1500-byte packet's time on a link: serialisation plus propagation.
fn hop(mbps: u64, delay_ms: u64) -> u64 {
    1500 * 8 * 1000 / mbps + delay_ms * MS
}

#[test]
fn a_packet_from_left_to_right_takes_the_uplink_the_forward_bottleneck_and_the_far_downlink() {
    let mut f = dumbbell();
    let (a, b) = (add(&mut f, Side::Left), add(&mut f, Side::Right));
    let t0 = Time(5 * MS);
    let (hops, end) = follow(&mut f, t0, a, b);
    let paths: Vec<u32> = hops.iter().map(|h| h.0).collect();
    assert_eq!(paths, [f.hosts[a as usize].uplink, BOTTLENECK_FWD, f.hosts[b as usize].downlink]);
    let expect = [hop(100, 1), hop(100, 1) + hop(10, 20), 2 * hop(100, 1) + hop(10, 20)];
    let got: Vec<u64> = hops.iter().map(|h| h.1 .0 - t0.0).collect();
    assert_eq!(got, expect);
    assert_eq!(end, Next::Deliver { host: b });
}

#[test]
fn a_packet_from_right_to_left_takes_the_reverse_bottleneck() {
    let mut f = dumbbell();
    let (a, b) = (add(&mut f, Side::Left), add(&mut f, Side::Right));
    let (hops, end) = follow(&mut f, Time::ZERO, b, a);
    let paths: Vec<u32> = hops.iter().map(|h| h.0).collect();
    assert_eq!(paths, [f.hosts[b as usize].uplink, BOTTLENECK_REV, f.hosts[a as usize].downlink]);
    assert_eq!(end, Next::Deliver { host: a });
}

#[test]
fn hosts_on_one_side_reach_each_other_without_crossing_the_bottleneck() {
    let mut f = dumbbell();
    let (a, c) = (add(&mut f, Side::Left), add(&mut f, Side::Left));
    let (hops, end) = follow(&mut f, Time::ZERO, a, c);
    let paths: Vec<u32> = hops.iter().map(|h| h.0).collect();
    assert_eq!(paths, [f.hosts[a as usize].uplink, f.hosts[c as usize].downlink]);
    assert_eq!(end, Next::Deliver { host: c });
}

#[test]
fn a_path_beyond_the_bottleneck_is_taken_after_it_and_its_losses_are_counted_after_the_link() {
    let mut f = dumbbell();
    let lossy =
        PathSpec { elements: vec![net::ElementSpec::Loss { model: LossModel::Bernoulli { p: 1.0 }, stream: "beyond".into(), handshakes: None }] };
    let a = f.add_host(Side::Left, link(100, 1), link(100, 1), Some(lossy), false).unwrap();
    let b = add(&mut f, Side::Right);
    let (hops, end) = follow(&mut f, Time::ZERO, a, b);
    // It crossed the observed link, then its own path beyond lost it.
    assert_eq!(hops.iter().map(|h| h.0).collect::<Vec<_>>(), [f.hosts[a as usize].uplink, BOTTLENECK_FWD]);
    let beyond = f.hosts[a as usize].beyond.unwrap();
    assert!(matches!(end, Next::Dropped { path, reason: DropReason::Loss, .. } if path == beyond), "{end:?}");
    assert_eq!((f.losses.before_link, f.losses.after_link), (0, 1));
}

#[test]
fn a_lossy_host_counts_what_it_loses_before_its_link() {
    let mut f = dumbbell();
    let mut up = link(100, 1);
    up.elements.insert(0, net::ElementSpec::Loss { model: LossModel::Bernoulli { p: 1.0 }, stream: "up".into(), handshakes: None });
    let a = f.add_host(Side::Left, up, link(100, 1), None, true).unwrap();
    let b = add(&mut f, Side::Right);
    let (hops, end) = follow(&mut f, Time::ZERO, a, b);
    assert!(hops.is_empty());
    assert!(matches!(end, Next::Dropped { reason: DropReason::Loss, .. }), "{end:?}");
    assert_eq!((f.losses.before_link, f.losses.after_link), (1, 0));
}

#[test]
fn the_bottleneck_is_observed_each_way_and_access_links_are_not() {
    let mut f = dumbbell();
    add(&mut f, Side::Left);
    let monitors: Vec<Option<u8>> = f.paths.iter().map(|p| p.monitor).collect();
    assert_eq!(monitors, [Some(0), Some(1), None, None]);
}

fn line(name: &str, mbps: u64) -> net::LineSpec {
    net::LineSpec { name: name.into(), up: link(mbps, 0), down: link(mbps, 0) }
}

#[test]
fn hosts_on_a_line_cross_it_after_their_uplinks_and_before_their_downlinks() {
    let mut f = dumbbell();
    let (a, b) = (add(&mut f, Side::Left), add(&mut f, Side::Right));
    let l = f.join_line(a, &line("home", 8)).unwrap();
    let ln = f.lines[l as usize];
    assert_eq!(ln.side, Side::Left);
    let (hops, end) = follow(&mut f, Time::ZERO, a, b);
    let paths: Vec<u32> = hops.iter().map(|h| h.0).collect();
    assert_eq!(paths, [f.hosts[a as usize].uplink, ln.up, BOTTLENECK_FWD, f.hosts[b as usize].downlink]);
    let got: Vec<u64> = hops.iter().map(|h| h.1 .0).collect();
    assert_eq!(got[1] - got[0], hop(8, 0), "the line serialises it at its own rate");
    assert_eq!(end, Next::Deliver { host: b });
    let (hops, end) = follow(&mut f, Time(MS), b, a);
    let paths: Vec<u32> = hops.iter().map(|h| h.0).collect();
    assert_eq!(paths, [f.hosts[b as usize].uplink, BOTTLENECK_REV, ln.down, f.hosts[a as usize].downlink]);
    assert_eq!(end, Next::Deliver { host: a });
}

/// When the second of two packets sent at once by two left hosts reaches
/// the end of the bottleneck.
fn second_of_two_at_the_link(f: &mut Fabric, a: u32, c: u32, b: u32) -> u64 {
    let mut ends = Vec::new();
    let pkt = Packet::new(0, 1500);
    // Each host's packet to the end of the bottleneck, one path at a time:
    // both are offered to every path before either goes further, as an
    // engine would at equal times.
    let mut at = [f.send(Time::ZERO, a, &mut { pkt }), f.send(Time::ZERO, c, &mut { pkt })];
    while ends.len() < 2 {
        for (k, src) in [a, c].into_iter().enumerate() {
            if let Next::Arrive { path, at: t } = at[k] {
                if path == BOTTLENECK_FWD {
                    ends.push(t.0);
                    at[k] = Next::Deliver { host: b };
                } else {
                    at[k] = f.arrived(t, path, src, b, || pkt).0;
                }
            }
        }
    }
    ends.into_iter().max().unwrap()
}

#[test]
fn a_shared_line_serialises_its_hosts_packets_one_after_the_other_and_separate_lines_do_not() {
    let mut shared = dumbbell();
    let (a, c, b) = (add(&mut shared, Side::Left), add(&mut shared, Side::Left), add(&mut shared, Side::Right));
    shared.join_line(a, &line("home", 8)).unwrap();
    shared.join_line(c, &line("home", 8)).unwrap();
    assert_eq!(shared.lines.len(), 1, "one line, made once");
    let mut apart = dumbbell();
    let (a2, c2, b2) = (add(&mut apart, Side::Left), add(&mut apart, Side::Left), add(&mut apart, Side::Right));
    apart.join_line(a2, &line("home-1", 8)).unwrap();
    apart.join_line(c2, &line("home-2", 8)).unwrap();
    // Uplink (100 Mbit/s, 1 ms), then 8 Mbit/s: on one line the second
    // packet waits for the first; then the 10 Mbit/s bottleneck.
    let first = hop(100, 1) + hop(8, 0) + hop(10, 20);
    assert_eq!(second_of_two_at_the_link(&mut shared, a, c, b), first + hop(8, 0));
    // On two lines they reach the bottleneck together and wait only there.
    assert_eq!(second_of_two_at_the_link(&mut apart, a2, c2, b2), first + hop(10, 0));
}

#[test]
fn a_line_takes_hosts_of_one_side_once_each() {
    let mut f = dumbbell();
    let (a, b) = (add(&mut f, Side::Left), add(&mut f, Side::Right));
    f.join_line(a, &line("home", 8)).unwrap();
    assert!(f.join_line(b, &line("home", 8)).is_err(), "a right host on a left line");
    assert!(f.join_line(a, &line("office", 8)).is_err(), "a second line");
}
