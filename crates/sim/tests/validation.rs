//! The simulator against theory: utilisation, the Mathis formula, M/D/1
//! queueing delay and fairness. Each scenario is written in the scenario
//! format, so these also exercise the path users take.

use scenario::ScenarioFile;
use sim::build::Built;
use std::path::Path;

fn simulate(toml: &str) -> Built {
    let f = ScenarioFile::parse("test.toml", Path::new("."), toml).unwrap_or_else(|e| panic!("{e}"));
    let (_, r) = f.resolved(None, None).unwrap_or_else(|e| panic!("{e}"));
    sim::simulate(&r)
}

/// Bytes that reached the far end of the forward bottleneck from `from_s` on.
fn fwd_bytes_after(b: &Built, from_s: f64) -> (f64, f64) {
    let m = &b.world.monitors[0];
    let first = (from_s / m.bin.as_secs_f64()) as usize;
    let bytes: u64 = m.bytes[first..].iter().map(|&x| x as u64).sum();
    let secs = (m.bytes.len() - first) as f64 * m.bin.as_secs_f64();
    (bytes as f64, secs)
}

fn one_flow(cc: &str, sack: bool) -> f64 {
    // 10 Mbps, 40 ms base RTT + access; queue of one bandwidth-delay product.
    let b = simulate(&format!(
        r#"
        duration = "60s"
        [topology.bottleneck]
        rate = "10Mbps"
        delay = "20ms"
        queue = "36p"
        [topology.access]
        rate = "1Gbps"
        delay = "0.5ms"
        [tcp]
        congestion_control = "{cc}"
        sack = {sack}
        [[background]]
        model = "greedy"
        hosts = 1
        spread = "0s"
        "#
    ));
    let (bytes, secs) = fwd_bytes_after(&b, 5.0);
    bytes * 8.0 / secs / 10e6
}

#[test]
fn one_flow_fills_a_clean_10mbps_link() {
    for (cc, sack) in [("cubic", true), ("newreno", true), ("newreno", false), ("reno", false)] {
        let u = one_flow(cc, sack);
        eprintln!("{cc} sack={sack}: utilisation {u:.4}");
        assert!(u >= 0.95, "{cc} (sack={sack}) reached only {u:.3} of the link");
        assert!(u <= 1.0001, "{cc}: utilisation above 1: {u}");
    }
}

/// Long-run Reno throughput under Bernoulli loss against MSS/RTT·sqrt(3/(2p)).
#[test]
fn reno_throughput_follows_the_mathis_formula() {
    let mss = 1460.0;
    for p in [0.005f64, 0.01, 0.02] {
        // Large capacity so only loss limits the window; loss on data only.
        // No delayed ACKs: the formula's b = 1.
        let b = simulate(&format!(
            r#"
            duration = "2000s"
            [topology.bottleneck]
            rate = "100Mbps"
            delay = "49ms"
            queue = "1000p"
            loss = "{}%"
            reverse = {{ loss = "0%" }}
            [topology.access]
            rate = "10Gbps"
            delay = "0.5ms"
            [tcp]
            congestion_control = "reno"
            sack = false
            ack_every = 1
            [[background]]
            model = "greedy"
            hosts = 1
            spread = "0s"
            "#,
            p * 100.0
        ));
        let rtt = 0.100; // 2 × (49 + 0.5 + 0.5) ms, queues stay empty
        let expected = mss * 8.0 / rtt * (3.0 / (2.0 * p)).sqrt();
        // Payload delivered: forward bottleneck packets are 1500 B carrying 1460.
        let (bytes, secs) = fwd_bytes_after(&b, 20.0);
        let measured = bytes * mss / 1500.0 * 8.0 / secs;
        let err = measured / expected - 1.0;
        eprintln!("p = {p}: {measured:.0} bit/s against {expected:.0} ({:+.1}%)", err * 100.0);
        assert!(err.abs() <= 0.25, "p = {p}: throughput {measured:.0} bit/s is {:+.1}% off {expected:.0}", err * 100.0);
    }
}

/// Mean waiting time of Poisson arrivals of fixed-size packets: rho·D / (2(1-rho)).
#[test]
fn poisson_udp_queueing_delay_matches_md1() {
    for rho in [0.5f64, 0.8] {
        let b = simulate(&format!(
            r#"
            duration = "120s"
            [topology.bottleneck]
            rate = "100Mbps"
            delay = "1ms"
            queue = "100000p"
            [topology.access]
            rate = "100Gbps"
            delay = "0s"
            [[background]]
            model = "poisson"
            transport = "udp"
            rate = "{}%"
            packet_size = "1000B"
            hosts = 8
            "#,
            rho * 100.0
        ));
        let st = b.world.fabric.paths[0].path.stats().queue;
        let measured = st.queue_delay_sum.as_secs_f64() / st.accepted_pkts as f64;
        let service = 1000.0 * 8.0 / 100e6;
        let expected = rho * service / (2.0 * (1.0 - rho));
        let err = measured / expected - 1.0;
        eprintln!("rho = {rho}: mean wait {measured:.3e} s against {expected:.3e} ({:+.2}%), {} packets", err * 100.0, st.accepted_pkts);
        assert!(err.abs() <= 0.05, "rho = {rho}: mean wait {measured:.3e} s is {:+.1}% off M/D/1 {expected:.3e}", err * 100.0);
    }
}

/// Jain's index (Σx)² / (n Σx²) over per-flow goodput.
fn jain(x: &[f64]) -> f64 {
    let s: f64 = x.iter().sum();
    let q: f64 = x.iter().map(|v| v * v).sum();
    s * s / (x.len() as f64 * q)
}

#[test]
fn ten_flows_with_equal_rtt_share_fairly() {
    let b = simulate(
        r#"
        duration = "200s"
        [topology.bottleneck]
        rate = "20Mbps"
        delay = "20ms"
        queue = "72p"
        [topology.access]
        rate = "1Gbps"
        delay = "1ms"
        [[background]]
        model = "greedy"
        hosts = 10
        spread = "1s"
        "#,
    );
    let log = &b.world.conn_log;
    let goodput: Vec<f64> = (0..log.active.len()).filter(|&i| log.active[i]).map(|i| log.bytes_acked[i] as f64).collect();
    assert_eq!(goodput.len(), 10);
    let j = jain(&goodput);
    eprintln!("Jain index {j:.4} over {goodput:?}");
    assert!(j >= 0.95, "Jain's fairness index {j:.3} is below 0.95: {goodput:?}");
    let total: f64 = goodput.iter().sum::<f64>() * 8.0 / 200.0;
    assert!(total > 0.9 * 20e6 * 1460.0 / 1500.0, "aggregate goodput {total:.0} bit/s leaves the link idle");
}

/// The seed's testbed had 1000 emulated nodes: every one of a thousand
/// sources per model reaches its own sink, at the rate asked for.
#[test]
fn thousands_of_hosts_each_deliver_their_share() {
    let b = simulate(
        r#"
        duration = "20s"
        [topology.bottleneck]
        rate = "100Mbps"
        delay = "10ms"
        queue = "10000p"
        [[background]]
        model = "poisson"
        transport = "udp"
        rate = "50%"
        packet_size = "500B"
        hosts = 1000
        [[background]]
        model = "cbr"
        transport = "tcp"
        rate = "20%"
        hosts = 1000
        direction = "reverse"
        "#,
    );
    assert_eq!(b.world.hosts.len(), 4000);
    assert_eq!(b.world.counters.stray_datagrams, 0);
    assert_eq!(b.world.counters.stray_segments, 0);
    let log = &b.world.conn_log;
    // Every TCP source connected and moved data: 1000 active + 1000 passive ends.
    let active: Vec<usize> = (0..log.active.len()).filter(|&i| log.active[i]).collect();
    assert_eq!(active.len(), 1000);
    assert!(active.iter().all(|&i| log.bytes_acked[i] > 0), "a TCP source moved nothing");
    // The forward direction carries the 50% Poisson load (500 B packets) and
    // the ACKs of the reverse TCP load: a 52-byte ACK for each of its
    // 1000-byte segments at most (each source writes every 0.4 s, longer than
    // its RTO, so every segment is ACKed at once).
    let fwd = &b.world.monitors[0];
    let rate = fwd.total_bytes as f64 * 8.0 / 20.0;
    assert!(rate > 0.98 * 50e6 && rate < 1.02 * 50e6 + 0.052 * 20e6, "forward rate {rate}");
    // The reverse direction carries the 20% TCP-CBR load plus the UDP sinks' nothing.
    let rev = &b.world.monitors[1];
    let rrate = rev.total_bytes as f64 * 8.0 / 20.0;
    assert!(rrate > 0.19 * 100e6 && rrate < 0.22 * 100e6, "reverse rate {rrate}");
}
