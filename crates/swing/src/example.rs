//! A small hand-built model whose every count is known, for the tests of
//! the crates that read models (generators, host plans, the simulator).

use crate::*;

/// A distribution of exactly these values.
pub fn d(v: &[f64]) -> Dist {
    Dist::from_samples(v.to_vec())
}

/// A host measured on every count: `rtt` s, `cap` bit/s, no loss.
pub fn host(addr: &str, side: Side, rtt: f64, cap: f64, bytes: u64) -> HostParams {
    HostParams {
        rtt_s: Some(rtt),
        rtt_samples: 10,
        capacity_bps: Some(cap),
        capacity_samples: 20,
        loss: Some(0.0),
        loss_packets: 500,
        mss: Some(1460),
        packets: bytes / 1000,
        ..HostParams::unmeasured(addr, side, bytes)
    }
}

/// Four sessions in a 10 s trace, every parameter a short list of values:
/// one HTTP class (port 80) and one DNS class, one client host on side A
/// (10 ms, 10 Mbit/s) and two servers on side B (50 ms at 100 Mbit/s, 80
/// ms at 20 Mbit/s), each measured on every count.
pub fn four_sessions() -> Model {
    Model {
        format: FORMAT.into(),
        traces: vec![],
        options: ExtractOptions::default(),
        link: LinkStats { duration_s: 10.0, ..Default::default() },
        sides: SideInfo { rule: SideRule::Auto, decided_by: "test".into(), hosts_a: 1, hosts_b: 2, pooled_capacity_bps: [None, None] },
        classes: vec![AppClass {
            name: "HTTP".into(),
            ports: vec![80],
            clients: Side::A,
            counts: ClassCounts { sessions: 4, ..Default::default() },
            session_start_s: d(&[0.0, 1.0, 2.0, 3.0]),
            rres_per_session: d(&[2.0, 2.0, 3.0, 1.0]),
            servers_per_session: Dist::default(),
            inter_rre_s: d(&[0.5]),
            conns_per_rre: d(&[1.0, 2.0]),
            inter_conn_s: d(&[0.01]),
            pairs_per_conn: d(&[1.0, 3.0]),
            request_bytes: d(&[300.0, 500.0]),
            response_bytes: d(&[10_000.0, 50_000.0]),
            think_s: d(&[0.2]),
            connect_wait_s: Dist::default(),
            server_s: Dist::default(),
            close_wait_s: Dist::default(),
            concurrent: vec![],
            request_writes: vec![],
            response_writes: vec![],
            sessions: vec![],
        }],
        udp: vec![UdpClass {
            name: "DNS".into(),
            ports: vec![53],
            initiators: Side::A,
            flows: 2,
            samples: vec![
                UdpFlow { start_s: 0.5, duration_s: 0.0, packets: [1, 1], bytes: [70, 200], reply_s: 0.02, sequence: vec![] },
                UdpFlow { start_s: 4.0, duration_s: 1.0, packets: [3, 2], bytes: [300, 1000], reply_s: 0.1, sequence: vec![] },
            ],
            packet_gap_s: [d(&[0.5, 0.5]), d(&[1.0])],
            packet_bytes: [d(&[70.0, 100.0, 100.0, 100.0]), d(&[200.0, 500.0, 500.0])],
        }],
        hosts: vec![
            host("10.0.0.2", Side::A, 0.010, 10e6, 1000),
            host("192.0.2.1", Side::B, 0.050, 100e6, 3000),
            host("192.0.2.2", Side::B, 0.080, 20e6, 1000),
        ],
        lines: vec![],
    }
}
