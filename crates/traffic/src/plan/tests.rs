//! Host plans on their own: every decision against a hand computation, and
//! a swing generator run on the fake transport over the hosts it plans.

use super::*;
use crate::background::{Structure, SwingConfig, SwingSource};
use crate::fake::Fake;
use net::{Outages, Shaper};
use std::sync::Arc;
use swing::example::four_sessions;
use swing::{HostShaper, Stall};

const MS: u64 = 1_000_000;

fn access() -> LinkParams {
    LinkParams { rate: Rate::mbps(100), delay: Dur::from_millis(1), queue: QueueLimit::Packets(1000), loss: 0.0 }
}

fn knobs<'a>(model: &'a swing::Model, access: &'a LinkParams, tcp: &'a TcpConfig) -> SwingPlan<'a> {
    SwingPlan { name: "sw", model, hosts: [1, 2], side_a: Side::Left, rtt: None, access_cap: None, stalls: false, start: Time::ZERO, access, tcp }
}

/// Each element of a path, by kind.
fn queue_of(p: &PathSpec) -> (Rate, QueueLimit) {
    p.elements
        .iter()
        .find_map(|e| match e {
            ElementSpec::Queue { rate: RateSpec::Fixed(r), limit, .. } => Some((*r, *limit)),
            _ => None,
        })
        .expect("a queue")
}

fn delay_of(p: &PathSpec) -> Dur {
    p.elements
        .iter()
        .find_map(|e| match e {
            ElementSpec::Delay(DelaySpec::Fixed(d)) => Some(*d),
            _ => None,
        })
        .expect("a delay")
}

fn shapers_of(p: &PathSpec) -> Vec<Shaper> {
    p.elements
        .iter()
        .filter_map(|e| match e {
            ElementSpec::Shaper(s) => Some(*s),
            _ => None,
        })
        .collect()
}

fn bunching_of(p: &PathSpec) -> Option<f64> {
    p.elements.iter().find_map(|e| match e {
        ElementSpec::Bunching { p, .. } => Some(*p),
        _ => None,
    })
}

fn outages_of(p: &PathSpec) -> Option<Outages> {
    p.elements.iter().find_map(|e| match e {
        ElementSpec::Outages(o) => Some(o.clone()),
        _ => None,
    })
}

#[test]
fn a_group_is_n_hosts_on_one_side_each_with_the_groups_link_named_for_it() {
    let a = LinkParams { loss: 0.01, ..access() };
    let hosts = group(7, Side::Right, 3, &a, &TcpConfig::default(), None);
    assert_eq!(hosts.len(), 3);
    assert!(hosts.iter().all(|h| h.side == Side::Right && h.beyond.is_none() && !h.loses && !h.ipv6 && h.line.is_none()));
    assert_eq!(hosts[1].up, PathSpec::link(a.rate, a.delay, a.queue, 0.01, "link/h8/up"));
    assert_eq!(hosts[2].down, PathSpec::link(a.rate, a.delay, a.queue, 0.01, "link/h9/down"));
}

#[test]
fn a_group_with_a_line_puts_its_hosts_behind_one_line_named_for_its_first() {
    let line = LineParams { rate: Rate::mbps(8), queue: QueueLimit::Packets(50) };
    let hosts = group(7, Side::Left, 3, &access(), &TcpConfig::default(), Some(line));
    let l = hosts[0].line.clone().expect("a line");
    assert!(hosts.iter().all(|h| h.line.as_deref() == Some(&*l)));
    assert_eq!(l.name, "h7");
    assert_eq!(queue_of(&l.up), (Rate::mbps(8), QueueLimit::Packets(50)));
    assert_eq!((queue_of(&l.down), delay_of(&l.down)), ((Rate::mbps(8), QueueLimit::Packets(50)), Dur::ZERO));
    // Attached, the three share one line's paths.
    let mut f = Fabric::dumbbell(&[access().path("b"), access().path("b")], 1).unwrap();
    let ids: Vec<HostId> = hosts.iter().map(|h| h.attach(&mut f).unwrap()).collect();
    assert_eq!(f.lines.len(), 1);
    assert!(ids.iter().all(|&i| f.hosts[i as usize].line == Some(0)));
}

#[test]
fn a_virtual_host_copies_its_trace_hosts_rtt_capacity_and_queue() {
    let (m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let [side_a, side_b] = swing(&knobs(&m, &a, &tcp), 1, 0);
    let client = &side_a[0];
    assert_eq!(client.side, Side::Left);
    assert!(side_b.iter().all(|h| h.side == Side::Right));
    // 10 ms RTT: half of it each way, less its SYN's serialisation, which
    // the trace's RTT held: 60 bytes (timestamps and SACK) at 10 Mbit/s, 48 us.
    assert_eq!(delay_of(&client.up), Dur::from_micros(5_000 - 48));
    assert_eq!(delay_of(&client.down), delay_of(&client.up));
    // Its queue: twice the bandwidth-delay product of its RTT plus side B's
    // byte-weighted median (50 ms: 3000 of 4000 bytes), plus one.
    let bdp: f64 = 10e6 * (0.010 + 0.050) / (1500.0 * 8.0);
    assert_eq!(queue_of(&client.up), (Rate::mbps(10), QueueLimit::Packets((1.0 + 2.0 * bdp).ceil() as u32)));
    assert_eq!(queue_of(&client.down), queue_of(&client.up));
    // No loss measured: none on the path, nothing beyond the link.
    assert!(!client.loses && client.beyond.is_none());
    assert!(!client.up.elements.iter().any(|e| matches!(e, ElementSpec::Loss { .. })));
}

#[test]
fn a_host_that_grew_per_ack_in_slow_start_is_regenerated_without_byte_counting() {
    let (mut m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let host_tcp = |m: &swing::Model| swing(&knobs(m, &a, &tcp), 1, 0)[0][0].tcp.byte_counting;
    // Without an estimate, the scenario's (Linux: byte counting).
    assert!(host_tcp(&m));
    m.hosts[0].growth_per_byte = Some(0.2);
    assert!(!host_tcp(&m));
    m.hosts[0].growth_per_byte = Some(0.8);
    assert!(host_tcp(&m));
}

#[test]
fn a_host_seen_counting_bytes_is_regenerated_with_a_window_of_bytes() {
    let (mut m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let host_tcp = |m: &swing::Model| swing(&knobs(m, &a, &tcp), 1, 0)[0][0].tcp.packet_window;
    // Without a verdict, the scenario's (Linux: packets).
    assert!(host_tcp(&m));
    m.hosts[0].packet_window = Some(false);
    assert!(!host_tcp(&m));
}

/// The example model with its two side-B servers on one 5 Mbit/s line.
fn with_a_line() -> swing::Model {
    let mut m = four_sessions();
    m.lines =
        vec![swing::Line { side: swing::Side::B, hosts: vec!["192.0.2.1".into(), "192.0.2.2".into()], rate_bps: 5e6, back_to_back: 10, faster: 0 }];
    m.check().unwrap();
    m
}

#[test]
fn virtual_hosts_of_a_trace_line_share_one_line_at_its_rate() {
    let (m, a, tcp) = (with_a_line(), access(), TcpConfig::default());
    let [side_a, side_b] = swing(&knobs(&m, &a, &tcp), 1, 0);
    assert!(side_a[0].line.is_none());
    let l = side_b[0].line.clone().expect("a line");
    assert!(Arc::ptr_eq(&l, side_b[1].line.as_ref().unwrap()), "one line for both");
    assert_eq!(l.name, "sw/0/0");
    // Its queue: twice the bandwidth-delay product of its hosts' median RTT
    // (50 ms: 3000 of 4000 bytes) plus side A's (10 ms), plus one.
    let bdp: f64 = 5e6 * (0.050 + 0.010) / (1500.0 * 8.0);
    assert_eq!(queue_of(&l.up), (Rate::mbps(5), QueueLimit::Packets((1.0 + 2.0 * bdp).ceil() as u32)));
    assert_eq!(l.down, l.up);
    // The servers keep their access links of their own (20 and 100 Mbit/s).
    let rates: std::collections::BTreeSet<u64> = side_b.iter().map(|h| queue_of(&h.up).0 .0).collect();
    assert_eq!(rates.into_iter().collect::<Vec<_>>(), [20_000_000, 100_000_000]);
    // The same trace hosts are drawn as without the line, and their delays
    // lose the line's serialisation of a SYN too (60 bytes at 5 Mbit/s).
    let (plain, with) = (four_sessions(), with_a_line());
    let p = SwingPlan { hosts: [1, 8], ..knobs(&plain, &a, &tcp) };
    let w = SwingPlan { model: &with, ..p };
    for (x, y) in swing(&p, 1, 0)[1].iter().zip(&swing(&w, 1, 0)[1]) {
        assert_eq!(queue_of(&x.up), queue_of(&y.up));
        assert_eq!(delay_of(&x.up) - delay_of(&y.up), Dur::from_micros(96));
    }
}

#[test]
fn more_virtual_hosts_make_more_lines_each_as_full_as_the_traces() {
    let (m, a, tcp) = (with_a_line(), access(), TcpConfig::default());
    // 20 virtual servers drawn from a line of 2 trace hosts: 10 lines of 2.
    let [_, side_b] = swing(&SwingPlan { hosts: [1, 20], ..knobs(&m, &a, &tcp) }, 1, 0);
    let mut per_line: std::collections::BTreeMap<String, usize> = std::collections::BTreeMap::new();
    for h in &side_b {
        *per_line.entry(h.line.as_ref().expect("every server copies a host of the line").name.clone()).or_default() += 1;
    }
    assert_eq!(per_line.len(), 10);
    assert!(per_line.values().all(|&n| n == 2), "{per_line:?}");
    // One virtual server: one line all the same (of one host).
    let [_, side_b] = swing(&SwingPlan { hosts: [1, 1], ..knobs(&m, &a, &tcp) }, 1, 0);
    assert!(side_b[0].line.is_some());
}

#[test]
fn highburst_and_the_access_cap_set_every_hosts_delay_and_rate() {
    let (m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let p = SwingPlan { rtt: Some(Dur::from_millis(4)), access_cap: Some(Rate::mbps(2)), ..knobs(&m, &a, &tcp) };
    for h in swing(&p, 1, 0).iter().flatten() {
        assert_eq!(delay_of(&h.up), Dur::from_millis(1), "HighBurst: a quarter of the RTT per access direction");
        assert_eq!(queue_of(&h.up).0, Rate::mbps(2), "Traffic2: capacity capped");
    }
}

#[test]
fn a_hosts_loss_is_split_before_and_beyond_the_link_with_handshakes_apart() {
    let mut m = four_sessions();
    let h = &mut m.hosts[0];
    (h.loss, h.loss_after_link, h.handshakes, h.handshake_retx) = (Some(0.1), Some(0.04), 20, 2);
    let (a, tcp) = (access(), TcpConfig::default());
    let [side_a, _] = swing(&knobs(&m, &a, &tcp), 1, 0);
    let client = &side_a[0];
    assert!(client.loses);
    // Before the link: what with 4% beyond makes 10% in all, 1 - 0.9 / 0.96;
    // handshakes (2 of 20 sent again: 10%) in the same proportion.
    let before = 1.0 - 0.9 / 0.96;
    let ElementSpec::Loss { model, stream, handshakes: Some((hs, hs_stream)) } = &client.up.elements[0] else { panic!("{:?}", client.up) };
    assert_eq!((model, stream.as_str()), (&LossModel::Bernoulli { p: before }, "h0/before-link"));
    let hs_after = 0.1 * 0.04 / 0.1;
    assert_eq!((hs, hs_stream.as_str()), (&LossModel::Bernoulli { p: 1.0 - 0.9 / (1.0 - hs_after) }, "h0/before-link/handshake"));
    let beyond = client.beyond.as_ref().expect("a path beyond the link");
    let ElementSpec::Loss { model, stream, .. } = &beyond.elements[0] else { panic!() };
    assert_eq!((model, stream.as_str()), (&LossModel::Bernoulli { p: 0.04 }, "h0/after-link"));
    // Nothing is lost on the way down: that was the other end's sending.
    assert!(!client.down.elements.iter().any(|e| matches!(e, ElementSpec::Loss { .. })));
}

#[test]
fn a_hosts_losses_in_bursts_come_in_runs_of_their_mean_length() {
    let mut m = four_sessions();
    let h = &mut m.hosts[0];
    (h.loss, h.loss_after_link, h.loss_burst) = (Some(0.1), Some(0.04), Some(4.0));
    let (a, tcp) = (access(), TcpConfig::default());
    let [side_a, _] = swing(&knobs(&m, &a, &tcp), 1, 0);
    let client = &side_a[0];
    let ElementSpec::Loss { model: before, .. } = &client.up.elements[0] else { panic!("{:?}", client.up) };
    let beyond = client.beyond.as_ref().expect("a path beyond the link");
    let ElementSpec::Loss { model: after, .. } = &beyond.elements[0] else { panic!() };
    // Both places lose in runs of 4 on average, each its own share.
    for (model, share) in [(before, 1.0 - 0.9 / 0.96), (after, 0.04)] {
        let LossModel::GilbertElliott { r, loss_good, loss_bad, .. } = *model else { panic!("{model:?}") };
        assert_eq!((r, loss_good, loss_bad), (0.25, 0.0, 1.0));
        assert!((model.mean() - share).abs() < 1e-12, "{model:?}");
    }
    // A run of one is Swing's loss of each packet alone.
    m.hosts[0].loss_burst = Some(1.0);
    let [side_a, _] = swing(&knobs(&m, &a, &tcp), 1, 0);
    let ElementSpec::Loss { model, .. } = &side_a[0].up.elements[0] else { panic!() };
    assert!(matches!(model, LossModel::Bernoulli { .. }), "{model:?}");
}

#[test]
fn bunching_and_shapers_apply_to_what_a_host_sends() {
    let mut m = four_sessions();
    m.hosts[0].bunched = Some(0.2);
    m.hosts[1].shaper = Some(HostShaper { rate_bps: 5e6, burst_bytes: 9000, peaks: vec![[2e8, 3000.0]], stretches: 10 });
    let (a, tcp) = (access(), TcpConfig::default());
    let [side_a, side_b] = swing(&SwingPlan { hosts: [1, 1], ..knobs(&m, &a, &tcp) }, 1, 0);
    // A fifth of its pairs arrived together: held with p = 0.2 / 0.8.
    assert!((bunching_of(&side_a[0].up).unwrap() - 0.25).abs() < 1e-12);
    assert_eq!(bunching_of(&side_a[0].down), None);
    // The one server drawn is the shaped one or not; a shaped host keeps
    // the buckets below its capacity (the 200 Mbit/s peak is above its 100).
    let server = &side_b[0];
    let shaped = queue_of(&server.up).0 == Rate::mbps(100);
    assert_eq!(shapers_of(&server.up), if shaped { vec![Shaper { rate: Rate::mbps(5), burst: 9000 }] } else { vec![] });
    assert!(shapers_of(&server.down).is_empty());
    // Capped below a bucket's rate, the bucket goes with the host's bunching.
    let capped = SwingPlan { access_cap: Some(Rate::mbps(1)), ..knobs(&m, &a, &tcp) };
    let plans = swing(&capped, 1, 0);
    assert!(plans.iter().flatten().all(|h| shapers_of(&h.up).is_empty() && bunching_of(&h.up).is_none()));
}

#[test]
fn a_stalled_sides_hosts_get_the_stalls_as_outages_both_ways_from_the_start() {
    let mut m = four_sessions();
    m.link.stalls = vec![Stall { side: swing::Side::B, start_s: 1.0, end_s: 3.0, answers: 2 }];
    let (a, tcp) = (access(), TcpConfig::default());
    let start = Time(5_000 * MS);
    let plans = swing(&SwingPlan { stalls: true, start, ..knobs(&m, &a, &tcp) }, 1, 0);
    assert!(outages_of(&plans[0][0].up).is_none(), "side A did not stall");
    let want = Outages::new(vec![(Dur::from_secs(1), Dur::from_secs(3))], Dur::from_secs(10), start);
    for h in &plans[1] {
        assert_eq!(outages_of(&h.up), want);
        assert_eq!(outages_of(&h.down), want);
    }
    let off = swing(&SwingPlan { stalls: false, ..knobs(&m, &a, &tcp) }, 1, 0);
    assert!(off.iter().flatten().all(|h| outages_of(&h.up).is_none()));
}

#[test]
fn hosts_are_drawn_by_bytes_and_a_version_only_one_side_has_becomes_the_others() {
    let mut m = four_sessions();
    m.hosts[0].addr = "2001:db8::1".into();
    let (a, tcp) = (access(), TcpConfig::default());
    let plans = swing(&SwingPlan { hosts: [1, 4000], ..knobs(&m, &a, &tcp) }, 1, 0);
    // Side A's only host is IPv6, side B has none: one version, IPv4.
    assert!(plans.iter().flatten().all(|h| !h.ipv6));
    // Side B copies 192.0.2.1 (3000 bytes, 100 Mbit/s) three times in four.
    let fast = plans[1].iter().filter(|h| queue_of(&h.up).0 == Rate::mbps(100)).count() as f64 / 4000.0;
    assert!((fast - 0.75).abs() < 0.03, "{fast}");
    // With an IPv6 host on both sides, the IPv6 host stays IPv6.
    m.hosts[1].addr = "2001:db8::2".into();
    let plans = swing(&SwingPlan { hosts: [1, 10], ..knobs(&m, &a, &tcp) }, 1, 0);
    assert!(plans[0][0].ipv6 && plans[1].iter().any(|h| h.ipv6));
}

#[test]
fn a_plan_is_a_function_of_its_model_knobs_seed_and_first_number() {
    let (m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let k = SwingPlan { hosts: [3, 30], ..knobs(&m, &a, &tcp) };
    assert_eq!(swing(&k, 4, 0), swing(&k, 4, 0));
    assert_ne!(swing(&k, 4, 0), swing(&k, 5, 0), "another seed draws other hosts");
    // Numbered from 10, the streams carry the numbers.
    let later = swing(&SwingPlan { hosts: [1, 0], ..knobs(&m, &a, &tcp) }, 4, 10);
    let mut m2 = m.clone();
    m2.hosts[0].bunched = Some(0.5);
    let bunched = swing(&SwingPlan { hosts: [1, 0], ..knobs(&m2, &a, &tcp) }, 4, 10);
    assert!(later[0][0].up.elements.iter().all(|e| !matches!(e, ElementSpec::Bunching { .. })));
    assert!(bunched[0][0].up.elements.iter().any(|e| matches!(e, ElementSpec::Bunching { stream, .. } if stream == "link/h10/up/bunching")));
}

#[test]
fn the_generator_connects_planned_clients_to_planned_servers() {
    let (m, a, tcp) = (four_sessions(), access(), TcpConfig::default());
    let plans = swing(&SwingPlan { hosts: [3, 5], ..knobs(&m, &a, &tcp) }, 1, 100);
    // Hosts as an engine would number them: in plan order from 100.
    let ids = [(100..103).collect::<Vec<HostId>>(), (103..108).collect()];
    let ipv6 = [plans[0].iter().map(|h| h.ipv6).collect(), plans[1].iter().map(|h| h.ipv6).collect()];
    let cfg = SwingConfig {
        name: "sw".into(),
        model: Arc::new(m),
        hosts: ids.clone(),
        ipv6,
        copies: [vec![], vec![]],
        start: Time::ZERO,
        stop: Time(20_000 * MS),
        session_scale: 1.0,
        response_scale: 1.0,
        zero_think: false,
        port_base: 0,
        structure: Structure::Marginals,
    };
    let mut f = Fake::loopback(Dur::from_millis(1));
    f.add(SwingSource::new(cfg, Rng::stream(1, "bg/sw")));
    f.start();
    f.run_until(Time(20_000 * MS));
    let conns: Vec<_> = f.connections().filter(|c| c.client).collect();
    assert!(conns.len() > 10);
    // The model's clients are on side A: every connection from a planned
    // side-A host to a planned side-B host.
    assert!(conns.iter().all(|c| ids[0].contains(&c.host) && ids[1].contains(&c.remote)), "{conns:?}");
}
