//! Comparing two models: the original and one re-extracted from generated
//! traffic (`undertow validate`).

use crate::dist::weighted_ks_distance_within;
use crate::{Dist, Model, Side};
use serde::Serialize;

/// One figure, original against regenerated.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Pair {
    pub original: f64,
    pub regenerated: f64,
    /// regenerated / original - 1 (None when the original is zero).
    pub relative_error: Option<f64>,
}

impl Pair {
    fn new(original: f64, regenerated: f64) -> Pair {
        let relative_error = (original != 0.0).then(|| regenerated / original - 1.0);
        Pair { original, regenerated, relative_error }
    }
}

/// Kolmogorov-Smirnov distance between two distributions, with sample sizes.
#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Ks {
    pub distance: Option<f64>,
    pub n_original: u64,
    pub n_regenerated: u64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct MixShare {
    pub class: String,
    pub original: f64,
    pub regenerated: f64,
}

#[derive(Clone, Debug, PartialEq, Serialize)]
pub struct Comparison {
    /// Mean rate per direction (A to B, B to A), bit/s.
    pub rate_bps: [Pair; 2],
    pub packets_per_s: [Pair; 2],
    /// Share of all bytes per application class (TCP classes by name and
    /// client side, UDP classes by name).
    pub mix: Vec<MixShare>,
    /// Request and response sizes: the pairs', with concurrent connections'
    /// client and server data units (their requests and responses; which
    /// connections count as concurrent depends on timing, so both kinds are
    /// pooled).
    pub request_bytes: Ks,
    pub response_bytes: Ks,
    pub conns_per_rre: Ks,
    /// Over the per-host RTT estimates, each host weighted by its share of
    /// its side's bytes and the two sides equally: the generator draws each
    /// side's hosts by bytes, so this is the distribution it reproduces
    /// (unweighted, a trace's many one-connection servers would be set
    /// against virtual hosts drawn mostly from the busy ones). Values within
    /// `RTT_TOLERANCE` count as equal.
    pub rtt: Ks,
    /// Servers' times before their responses, connections' waits before
    /// their first request and idle times before their close.
    pub server_s: Ks,
    pub connect_wait_s: Ks,
    pub close_wait_s: Ks,
}

/// All classes' values of one parameter, each value repeated in proportion
/// to the samples it stands for (so large and small classes pool fairly).
fn pooled(m: &Model, f: impl Fn(&crate::AppClass) -> &Dist) -> Dist {
    pooled_with_units(m, f, None)
}

/// As `pooled`, adding the concurrent connections' data units of direction
/// `dir` (0: the client's), each class's weighted by the connections its
/// kept ones stand for.
fn pooled_with_units(m: &Model, f: impl Fn(&crate::AppClass) -> &Dist, dir: Option<f64>) -> Dist {
    let mut v = Vec::new();
    let mut n = 0;
    for c in &m.classes {
        let d = f(c);
        n += d.n;
        if !d.values.is_empty() {
            let weight = ((d.n as f64 / d.values.len() as f64).round() as usize).max(1);
            for &x in &d.values {
                v.extend(std::iter::repeat_n(x, weight));
            }
        }
        let Some(dir) = dir else { continue };
        let units: Vec<f64> = c.concurrent.iter().flatten().filter(|u| u[1] == dir).map(|u| u[2]).collect();
        if !units.is_empty() {
            let scale = c.counts.concurrent_connections as f64 / c.concurrent.len() as f64;
            n += (units.len() as f64 * scale).round() as u64;
            for &x in &units {
                v.extend(std::iter::repeat_n(x, (scale.round() as usize).max(1)));
            }
        }
    }
    let mut d = Dist::from_samples(v);
    d.n = n;
    d
}

/// Request (`dir` 0) or response sizes of pairs and concurrent units.
fn sizes(m: &Model, dir: f64) -> Dist {
    pooled_with_units(m, |c| if dir == 0.0 { &c.request_bytes } else { &c.response_bytes }, Some(dir))
}

fn ks(a: &Dist, b: &Dist) -> Ks {
    Ks { distance: a.ks_distance(b), n_original: a.n, n_regenerated: b.n }
}

/// RTT estimates within 2% or 0.1 ms of each other count as equal in
/// `rtt`: the trace's clock has a microsecond, the estimate rests on a few
/// handshakes, and a host beside the capture point measures 6 µs in one
/// capture and 44 µs in another.
pub const RTT_TOLERANCE: (f64, f64) = (0.02, 1e-4);

/// Hosts' RTTs weighted for `rtt` above.
fn rtts(m: &Model) -> Vec<(f64, f64)> {
    let side_bytes = |side: Side| -> f64 { m.hosts.iter().filter(|h| h.side == side && h.rtt_s.is_some()).map(|h| h.bytes.max(1) as f64).sum() };
    let totals = [side_bytes(Side::A), side_bytes(Side::B)];
    m.hosts.iter().filter_map(|h| h.rtt_s.map(|r| (r, h.bytes.max(1) as f64 / totals[h.side.index()]))).collect()
}

fn rtt_ks(original: &Model, regenerated: &Model) -> Ks {
    let (a, b) = (rtts(original), rtts(regenerated));
    let distance = weighted_ks_distance_within(&a, &b, RTT_TOLERANCE.0, RTT_TOLERANCE.1);
    Ks { distance, n_original: a.len() as u64, n_regenerated: b.len() as u64 }
}

fn class_key(side: Side, name: &str) -> String {
    format!("{name} (clients {})", if side == Side::A { "A" } else { "B" })
}

fn shares(m: &Model) -> Vec<(String, f64)> {
    let mut v: Vec<(String, f64)> =
        m.classes.iter().map(|c| (class_key(c.clients, &c.name), (c.counts.bytes[0] + c.counts.bytes[1]) as f64)).collect();
    for u in &m.udp {
        let b: u64 = u.samples.iter().map(|f| f.bytes[0] + f.bytes[1]).sum();
        // Scale the sampled flows' bytes up to all flows of the class.
        let k = if u.samples.is_empty() { 0.0 } else { u.flows as f64 / u.samples.len() as f64 };
        v.push((format!("{} (udp)", u.name), b as f64 * k));
    }
    let total: f64 = v.iter().map(|(_, b)| b).sum();
    if total > 0.0 {
        for (_, b) in &mut v {
            *b /= total;
        }
    }
    v
}

pub fn compare(original: &Model, regenerated: &Model) -> Comparison {
    compare_over(original, regenerated, regenerated.link.duration_s)
}

/// As `compare`, the regenerated rates taken over `regenerated_s`, the
/// time its capture covered. A trace's own span is its first packet to its
/// last, as nothing else is known of when its capture ran; a regenerated
/// capture covers a known window, trace-length periods each holding the
/// trace's sessions at their times, and its first-to-last span would leave
/// out whatever its first and last periods held idle that the trace did
/// not: a transfer that ends sooner than the trace's, its last period's
/// idle tail.
pub fn compare_over(original: &Model, regenerated: &Model, regenerated_s: f64) -> Comparison {
    // A model's figures per second of `s` instead of its own span.
    let over = |m: &Model, s: f64| if s > 0.0 { m.link.duration_s / s } else { 0.0 };
    let (ko, kr) = (1.0, over(regenerated, regenerated_s));
    let rate = |m: &Model, k: f64, i: usize| m.link.dirs[i].mean_rate_bps * k;
    let pps = |m: &Model, k: f64, i: usize| if m.link.duration_s > 0.0 { m.link.dirs[i].packets as f64 / m.link.duration_s * k } else { 0.0 };
    let (a, b) = (shares(original), shares(regenerated));
    let mut names: Vec<String> = a.iter().chain(b.iter()).map(|(n, _)| n.clone()).collect();
    names.sort();
    names.dedup();
    let get = |v: &[(String, f64)], n: &str| v.iter().find(|(k, _)| k == n).map_or(0.0, |(_, s)| *s);
    let mut mix: Vec<MixShare> = names.iter().map(|n| MixShare { class: n.clone(), original: get(&a, n), regenerated: get(&b, n) }).collect();
    mix.sort_by(|x, y| y.original.total_cmp(&x.original).then(x.class.cmp(&y.class)));
    Comparison {
        rate_bps: [Pair::new(rate(original, ko, 0), rate(regenerated, kr, 0)), Pair::new(rate(original, ko, 1), rate(regenerated, kr, 1))],
        packets_per_s: [Pair::new(pps(original, ko, 0), pps(regenerated, kr, 0)), Pair::new(pps(original, ko, 1), pps(regenerated, kr, 1))],
        mix,
        request_bytes: ks(&sizes(original, 0.0), &sizes(regenerated, 0.0)),
        response_bytes: ks(&sizes(original, 1.0), &sizes(regenerated, 1.0)),
        conns_per_rre: ks(&pooled(original, |c| &c.conns_per_rre), &pooled(regenerated, |c| &c.conns_per_rre)),
        rtt: rtt_ks(original, regenerated),
        server_s: ks(&pooled(original, |c| &c.server_s), &pooled(regenerated, |c| &c.server_s)),
        connect_wait_s: ks(&pooled(original, |c| &c.connect_wait_s), &pooled(regenerated, |c| &c.connect_wait_s)),
        close_wait_s: ks(&pooled(original, |c| &c.close_wait_s), &pooled(regenerated, |c| &c.close_wait_s)),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::*;

    fn class(name: &str, req: &[f64], n_scale: u64, bytes: u64) -> AppClass {
        let mut request = Dist::from_samples(req.to_vec());
        request.n *= n_scale;
        AppClass {
            name: name.into(),
            ports: vec![80],
            clients: Side::A,
            counts: ClassCounts { bytes: [bytes, 0], ..Default::default() },
            session_start_s: Dist::default(),
            rres_per_session: Dist::default(),
            servers_per_session: Dist::default(),
            inter_rre_s: Dist::default(),
            conns_per_rre: Dist::from_samples(vec![1.0, 2.0]),
            inter_conn_s: Dist::default(),
            pairs_per_conn: Dist::default(),
            request_bytes: request,
            response_bytes: Dist::from_samples(vec![100.0]),
            think_s: Dist::default(),
            connect_wait_s: Dist::default(),
            server_s: Dist::default(),
            close_wait_s: Dist::default(),
            concurrent: vec![],
            request_writes: vec![],
            response_writes: vec![],
            sessions: vec![],
        }
    }

    fn model(classes: Vec<AppClass>, rate: f64) -> Model {
        Model {
            format: FORMAT.into(),
            traces: vec![],
            options: ExtractOptions::default(),
            link: LinkStats {
                duration_s: 10.0,
                dirs: [DirStats { mean_rate_bps: rate, packets: 100, ..Default::default() }, DirStats::default()],
                ..Default::default()
            },
            sides: SideInfo { rule: SideRule::Auto, decided_by: String::new(), hosts_a: 0, hosts_b: 0, pooled_capacity_bps: [None, None] },
            classes,
            udp: vec![],
            hosts: vec![],
            lines: vec![],
        }
    }

    #[test]
    fn identical_models_compare_equal() {
        let m = model(vec![class("HTTP", &[1.0, 2.0, 3.0], 1, 10)], 1e6);
        let c = compare(&m, &m);
        assert_eq!(c.request_bytes.distance, Some(0.0));
        assert_eq!(c.rate_bps[0].relative_error, Some(0.0));
        assert_eq!(c.packets_per_s[0].original, 10.0);
        assert_eq!(c.mix.len(), 1);
        assert_eq!(c.mix[0].original, 1.0);
        assert_eq!(c.rtt.distance, None, "no host RTTs on either side");
    }

    #[test]
    fn pooling_weights_classes_by_their_samples() {
        // Class B's single value stands for 3 samples: pooled {1, 5, 5, 5}.
        let a = model(vec![class("A", &[1.0], 1, 1), class("B", &[5.0], 3, 3)], 1e6);
        let b = model(vec![class("A", &[1.0], 1, 1)], 2e6);
        let c = compare(&a, &b);
        assert_eq!(c.request_bytes.distance, Some(0.75));
        assert_eq!(c.request_bytes.n_original, 4);
        assert_eq!(c.rate_bps[0].relative_error, Some(1.0));
        assert_eq!(c.mix.iter().map(|m| m.class.as_str()).collect::<Vec<_>>(), ["B (clients A)", "A (clients A)"]);
        assert_eq!(c.mix[0].regenerated, 0.0);
    }

    fn host(side: Side, rtt_ms: f64, bytes: u64) -> HostParams {
        HostParams { rtt_s: Some(rtt_ms / 1e3), ..HostParams::unmeasured("10.0.0.1", side, bytes) }
    }

    #[test]
    fn host_rtts_weigh_hosts_by_bytes_and_sides_equally() {
        // Trace: a busy server at 20 ms and three one-connection servers at
        // 100 ms; one client at 1 ms. Regenerated: hosts drawn by bytes, so
        // mostly copies of the busy server.
        let mut a = model(vec![], 1e6);
        a.hosts = vec![host(Side::A, 1.0, 100), host(Side::B, 20.0, 9000)];
        a.hosts.extend((0..3).map(|_| host(Side::B, 100.0, 100)));
        let mut b = model(vec![], 1e6);
        b.hosts = vec![host(Side::A, 1.0, 50), host(Side::A, 1.0, 70), host(Side::B, 20.0, 3000), host(Side::B, 20.0, 3100)];
        let c = compare(&a, &b);
        // Side B weighs 9000/9300 at 20 ms in the trace against all of it:
        // half of 300/9300.
        let d = c.rtt.distance.unwrap();
        assert!((d - 0.5 * 300.0 / 9300.0).abs() < 1e-12, "{d}");
        assert_eq!((c.rtt.n_original, c.rtt.n_regenerated), (5, 4));
    }

    #[test]
    fn concurrent_units_count_as_requests_and_responses() {
        // Trace: pairs with 1-byte requests, and two concurrent connections
        // (one kept) whose client units are 5 bytes: pooled {1, 5, 5}.
        let mut a = class("A", &[1.0], 1, 1);
        a.counts.concurrent_connections = 2;
        a.concurrent = vec![vec![[0.0, 0.0, 5.0], [0.1, 1.0, 900.0]]];
        // Regenerated: the same bytes, but its concurrent connection was
        // seen as a pair of 5 and 900 bytes.
        let mut b = class("A", &[1.0, 5.0, 5.0], 1, 1);
        b.response_bytes = Dist::from_samples(vec![100.0, 900.0, 900.0]);
        let c = compare(&model(vec![a], 1e6), &model(vec![b], 1e6));
        assert_eq!((c.request_bytes.distance, c.request_bytes.n_original), (Some(0.0), 3));
        assert_eq!((c.response_bytes.distance, c.response_bytes.n_original), (Some(0.0), 3));
    }

    #[test]
    fn regenerated_rates_are_over_the_window_its_capture_covered() {
        // A trace of 10 s; its regeneration, two periods captured over 20 s,
        // carries twice its bytes, but its last transfer ended 2 s early, so
        // its first packet to its last spans 18 s.
        let a = model(vec![], 1e6);
        let mut b = model(vec![], 2e7 / 18.0);
        b.link.duration_s = 18.0;
        b.link.dirs[0].packets = 200;
        let first_to_last = compare(&a, &b);
        assert!((first_to_last.rate_bps[0].relative_error.unwrap() - 1.0 / 9.0).abs() < 1e-12);
        let c = compare_over(&a, &b, 20.0);
        assert!(c.rate_bps[0].relative_error.unwrap().abs() < 1e-12, "{:?}", c.rate_bps[0]);
        assert!(c.packets_per_s[0].relative_error.unwrap().abs() < 1e-12, "{:?}", c.packets_per_s[0]);
        assert_eq!(c.rate_bps[1].regenerated, 0.0);
    }
}
