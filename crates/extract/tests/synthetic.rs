//! Hand-built captures whose every expected value is known: handshake and
//! data RTTs, pairs and think times, packet pairs, holes, reordering and
//! retransmissions, one-directional header-only input, wraparound, tuple
//! reuse, idle timeouts, disorder, long connections, grouping and UDP.

mod common;

use common::*;
use extract::{connections_readers, extract_readers, ConnRecord, EndReason, ExtractError};
use swing::{Dist, ExtractOptions, LossFormula, Model, RttSamples, SessionKey, Side, SideRule};

fn run(x: Synth, o: &ExtractOptions) -> (Model, Vec<ConnRecord>, extract::Report) {
    let b = x.bytes();
    let (m, r) = extract_readers(vec![("synthetic.pcap".into(), reader(b.clone()))], o, &mut |_| true).unwrap();
    m.check().unwrap();
    let recs = connections_readers(vec![("synthetic.pcap".into(), reader(b))], o).unwrap();
    (m, recs, r)
}

fn s(t: f64) -> i64 {
    (t * 1e9).round() as i64
}

fn close(a: f64, b: f64) -> bool {
    (a - b).abs() <= 1e-9 * b.abs().max(1.0)
}

fn client() -> Ep {
    ep(1, [10, 0, 0, 1], 40000)
}

fn server() -> Ep {
    ep(2, [93, 184, 216, 34], 80)
}

/// Handshake (30 ms server side, 10 ms client side), a 300 B request, a
/// 3000 B response in three segments 0.1 ms apart, then 200 B / 1000 B.
fn http_like() -> Synth {
    http_like_on(Synth::ethernet())
}

fn http_like_on(mut x: Synth) -> Synth {
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    c.response(&mut x, 1.080, 3000, 0.0001);
    c.ack(&mut x, 1.090, true);
    c.data(&mut x, 2.0, true, 200);
    c.response(&mut x, 2.040, 1000, 0.0);
    c.ack(&mut x, 2.050, true);
    c.close(&mut x, 3.0, 0.01);
    x
}

#[test]
fn http_like_exchange_gives_every_layer() {
    let o = ExtractOptions::default();
    let (m, recs, rep) = run(http_like(), &o);
    assert_eq!(recs.len(), 1);
    let r = &recs[0];
    assert_eq!((r.client.to_string().as_str(), r.server.to_string().as_str()), ("10.0.0.1:40000", "93.184.216.34:80"));
    assert_eq!((r.class.as_str(), r.end, r.start_ns, r.end_ns), ("HTTP", EndReason::Fin, s(1.0), s(3.01)));
    assert!(close(r.server_rtt_s().unwrap(), 0.030) && close(r.client_rtt_s().unwrap(), 0.010));
    assert!(close(r.handshake_rtt_s().unwrap(), 0.040));
    assert_eq!(r.payload, [500, 4000]);
    let sizes: Vec<(Option<u64>, Option<u64>)> = r.pairs.iter().map(|p| (p.req.map(|e| e.bytes), p.resp.map(|e| e.bytes))).collect();
    assert_eq!(sizes, vec![(Some(300), Some(3000)), (Some(200), Some(1000))]);
    let resp = r.pairs[0].resp.unwrap();
    assert_eq!((resp.start, resp.end), (s(1.080), s(1.0802)));
    assert!(close(r.think_s()[0], 2.0 - 1.0802));
    assert_eq!((r.retransmissions, r.fills), ([0, 0], [0, 0]));
    assert_eq!((rep.tcp_connections, rep.tcp_modelled, rep.pairs, rep.sessions), (1, 1, 2, 1));

    // The client's MAC sent the SYN: it is side A.
    assert!(m.sides.decided_by.contains("02:00:00:00:00:01"), "{}", m.sides.decided_by);
    let c = &m.classes[0];
    assert_eq!((c.name.as_str(), c.clients, c.ports.clone()), ("HTTP", Side::A, vec![80]));
    let k = &c.counts;
    assert_eq!((k.sessions, k.rres, k.connections, k.pairs, k.request_bytes, k.response_bytes), (1, 1, 1, 2, 500, 4000));
    // IP bytes: client SYN 44 (MSS option), 5 pure ACKs/FINs of 40, requests 340 + 240.
    assert_eq!(k.bytes, [44 + 40 * 5 + 340 + 240, 44 + 1500 + 1500 + 120 + 1040 + 40]);
    assert_eq!(k.packets, [8, 6]);
    assert_eq!(c.request_bytes.values, vec![200.0, 300.0]);
    assert_eq!(c.response_bytes.values, vec![1000.0, 3000.0]);
    assert_eq!((c.pairs_per_conn.values.clone(), c.conns_per_rre.values.clone()), (vec![2.0], vec![1.0]));
    assert_eq!((c.rres_per_session.values.clone(), c.session_start_s.values.clone()), (vec![1.0], vec![0.0]));
    assert!(c.inter_conn_s.is_empty() && c.inter_rre_s.is_empty());
    // Think time minus the client's RTT (10 ms).
    assert!(close(c.think_s.values[0], 2.0 - 1.0802 - 0.010), "{:?}", c.think_s);
    // The first request went 1 ms after the handshake's ACK; the server
    // answered 39 and 40 ms after the requests, 30 ms of it the round trip
    // from the capture.
    assert_eq!(c.connect_wait_s.n, 1);
    assert!(close(c.connect_wait_s.values[0], 0.001), "{:?}", c.connect_wait_s);
    assert_eq!(c.server_s.n, 2);
    assert!(close(c.server_s.values[0], 0.009) && close(c.server_s.values[1], 0.010), "{:?}", c.server_s);
    // The client's FIN came 0.96 s after the last response.
    assert_eq!(c.close_wait_s.n, 1);
    assert!(close(c.close_wait_s.values[0], 0.96), "{:?}", c.close_wait_s);
    assert_eq!(m.link.dirs[0].bytes, k.bytes[0]);
    assert_eq!((m.link.dirs[1].packets, m.link.dirs[1].tcp_bytes), (6, k.bytes[1]));

    // Hosts: handshake samples plus data→ACK samples (the server's ACKs of
    // the requests came with its responses: 39 and 40 ms; the client
    // acknowledged each response 10 ms after its first segment).
    let h = |a: &str| m.hosts.iter().find(|h| h.addr == a).unwrap().clone();
    let (hc, hs) = (h("10.0.0.1"), h("93.184.216.34"));
    assert_eq!((hc.side, hs.side), (Side::A, Side::B));
    assert_eq!((hs.rtt_samples, hc.rtt_samples), (3, 3));
    // The 10th percentile of the server's 30, 39 and 40 ms: the handshake.
    assert!(close(hs.rtt_s.unwrap(), 0.030) && close(hc.rtt_s.unwrap(), 0.010));
    assert_eq!((hc.mss, hs.mss), (Some(1460), Some(1400)));
    // One packet pair: 1460 B 0.1 ms apart; more than 10 are needed.
    assert_eq!((hs.capacity_samples, hs.capacity_bps), (1, None));
    assert_eq!((hs.bytes, hs.packets), (k.bytes[1], 6));

    // Handshake-only RTTs (Swing's code) and no minimum sample counts.
    let o2 = ExtractOptions { rtt_samples: RttSamples::Handshake, rtt_min_samples: 1, capacity_min_samples: 0, ..o };
    let (m2, _, _) = run(http_like(), &o2);
    let hs2 = m2.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap();
    assert!(hs2.rtt_samples == 1 && close(hs2.rtt_s.unwrap(), 0.030), "{hs2:?}");
    assert!(close(hs2.capacity_bps.unwrap(), 1500.0 * 8.0 / 0.0001), "{:?}", hs2.capacity_bps);
}

#[test]
fn holes_reordering_and_retransmissions_give_swing_loss() {
    let mut x = Synth::ethernet();
    let (cl, sv) = (client(), server());
    let mut c = Conv::new(cl, sv, 1000, 5000);
    c.handshake(&mut x, 0.0, 0.030, 0.010);
    c.data(&mut x, 0.05, true, 100);
    let base = c.sseq;
    let ack = c.cseq;
    let seg = |x: &mut Synth, t: f64, i: u32| x.tcp(t, sv, cl, base + 1000 * i, ack, ACK, 1000, None);
    seg(&mut x, 0.100, 0);
    seg(&mut x, 0.101, 2); // segment 1 is missing: a hole opens
    seg(&mut x, 0.102, 3);
    seg(&mut x, 0.602, 1); // filled 501 ms later: lost before the link
    seg(&mut x, 0.603, 4);
    seg(&mut x, 0.700, 0); // below the highest, no hole: lost after the link
    seg(&mut x, 0.800, 6);
    seg(&mut x, 0.8005, 5); // filled after 0.5 ms: reordering
    c.sseq = base + 7000;
    c.ack(&mut x, 0.9, true);
    c.close(&mut x, 1.0, 0.01);
    let o = ExtractOptions { rtt_samples: RttSamples::Handshake, rtt_min_samples: 1, loss_min_packets: 1, ..Default::default() };
    let b = x.bytes();
    let recs = connections_readers(vec![("t".into(), reader(b.clone()))], &o).unwrap();
    assert_eq!((recs[0].retransmissions, recs[0].fills, recs[0].payload), ([0, 1], [0, 2], [100, 7000]));
    assert_eq!(recs[0].pairs[0].resp.unwrap().bytes, 7000);
    let (m, _) = extract_readers(vec![("t".into(), reader(b.clone()))], &o, &mut |_| true).unwrap();
    let hs = m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap();
    // New data: segments 0, 2, 3, 4, 6, plus the reordered 5: n = 6; one
    // hole, one retransmission without a hole.
    let (up, down) = (1.0 / 7.0, 1.0 / 6.0);
    assert_eq!(hs.loss_packets, 6);
    assert!(close(hs.loss.unwrap(), up + down - up * down), "{:?}", hs.loss);
    let o2 = ExtractOptions { loss_formula: LossFormula::Retransmissions, ..o.clone() };
    let (m2, _) = extract_readers(vec![("t".into(), reader(b.clone()))], &o2, &mut |_| true).unwrap();
    let hs2 = m2.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap();
    assert_eq!(hs2.loss_packets, 8);
    assert!(close(hs2.loss.unwrap(), 2.0 / 8.0));
    // With a server RTT above 501 ms the late fill is reordering too.
    let o3 = ExtractOptions { rtt_max_s: 2.0, ..o };
    let mut y = Synth::ethernet();
    let mut c = Conv::new(cl, sv, 1000, 5000);
    c.handshake(&mut y, 0.0, 0.9, 0.010);
    c.data(&mut y, 1.0, true, 100);
    let (base, ack) = (c.sseq, c.cseq);
    y.tcp(1.1, sv, cl, base + 1000, ack, ACK, 1000, None);
    y.tcp(1.6, sv, cl, base, ack, ACK, 1000, None);
    let (m3, _) = extract_readers(vec![("t".into(), reader(y.bytes()))], &o3, &mut |_| true).unwrap();
    let hs3 = m3.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap();
    assert_eq!((hs3.loss_packets, hs3.loss), (2, Some(0.0)));
}

#[test]
fn one_direction_header_only_sizes_come_from_acks() {
    let mut x = Synth::raw_ip();
    let c = ep(1, [10, 1, 1, 1], 1025);
    let sv = ep(2, [198, 51, 100, 7], 80);
    x.tcp(0.0, c, sv, 100, 0, SYN, 0, Some(1460));
    x.tcp(0.1, c, sv, 101, 9001, ACK, 0, None);
    x.tcp(0.1001, c, sv, 101, 9001, ACK, 300, None);
    x.tcp(0.5, c, sv, 401, 14001, ACK, 0, None); // the server sent 5000 B
    x.tcp(2.0, c, sv, 401, 14001, ACK, 200, None);
    x.tcp(2.3, c, sv, 601, 17001, ACK, 0, None); // and 3000 B more
    x.tcp(5.0, c, sv, 601, 17001, FIN, 0, None);
    x.tcp(5.1, c, sv, 602, 17002, ACK, 0, None); // acknowledges the server's FIN: not data
    let (m, recs, rep) = run(x, &ExtractOptions::default());
    let r = &recs[0];
    assert_eq!((r.payload, r.end, r.end_ns), ([500, 8000], EndReason::TraceEnd, s(5.1)));
    let p: Vec<_> = r.pairs.iter().map(|p| (p.req.unwrap().bytes, p.resp.unwrap().bytes, p.resp.unwrap().start)).collect();
    assert_eq!(p, vec![(300, 5000, s(0.5)), (200, 3000, s(2.3))]);
    // SYN→ACK is seen (tshark's initial RTT) but is no host's sample.
    assert!(close(r.handshake_rtt_s().unwrap(), 0.1));
    assert!(m.hosts.iter().all(|h| h.rtt_samples == 0));
    assert_eq!(rep.tcp_without_syn, 0);
    // Raw IP, one private and one public host, all traffic crossing.
    assert!(m.sides.decided_by.contains("private"), "{}", m.sides.decided_by);
    assert_eq!(m.classes[0].clients, Side::A);
    assert_eq!(m.classes[0].response_bytes.values, vec![3000.0, 5000.0]);
}

/// An edge where NATed clients sit beside clients with public addresses
/// (global IPv6 beside private IPv4 is the common case): a public host that
/// never talks to a private one is placed by what it initiates.
#[test]
fn public_clients_beside_private_ones_are_side_a_too() {
    let mut x = Synth::raw_ip();
    let (nat, web) = (ep(1, [10, 0, 0, 1], 0), ep(2, [93, 184, 216, 34], 80));
    let (public, far) = (ep(3, [1, 2, 3, 4], 0), ep(4, [4, 3, 2, 1], 443));
    let at = |e: Ep, port| Ep { port, ..e };
    for i in 0..3u16 {
        short(&mut x, i as f64, at(nat, 40000 + i), web);
    }
    short(&mut x, 5.0, at(public, 50000), far);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let side = |a: &str| m.hosts.iter().find(|h| h.addr == a).unwrap().side;
    assert_eq!((side("10.0.0.1"), side("93.184.216.34"), side("1.2.3.4"), side("4.3.2.1")), (Side::A, Side::B, Side::A, Side::B));
    assert!(m.sides.decided_by.contains("1 public host that never talks to a private one"), "{}", m.sides.decided_by);
    // Both exchanges are client A to server B, in one class each.
    assert!(m.classes.iter().all(|c| c.clients == Side::A), "{:?}", m.classes.iter().map(|c| &c.name).collect::<Vec<_>>());
}

/// Two connections of one page load: the second's second request left
/// 20 ms after the first connection's second response ended (a browser
/// firing a request when another connection's object arrived), long after
/// its own response: the session keeps that order.
#[test]
fn a_request_set_off_by_another_connections_response_is_kept_in_order() {
    let mut x = Synth::ethernet();
    let mut a = Conv::new(client(), server(), 1000, 5000);
    let mut b = Conv::new(ep(1, [10, 0, 0, 1], 40001), server(), 3000, 9000);
    a.handshake(&mut x, 1.0, 0.030, 0.010);
    b.handshake(&mut x, 1.001, 0.030, 0.010);
    a.data(&mut x, 1.041, true, 300);
    b.data(&mut x, 1.045, true, 100);
    a.response(&mut x, 1.080, 3000, 0.0001);
    b.response(&mut x, 1.090, 500, 0.0);
    a.ack(&mut x, 1.091, true);
    b.ack(&mut x, 1.100, true);
    a.data(&mut x, 1.5, true, 200);
    a.response(&mut x, 1.54, 1000, 0.0);
    b.data(&mut x, 1.56, true, 150);
    a.ack(&mut x, 1.561, true);
    b.response(&mut x, 1.60, 700, 0.0);
    b.ack(&mut x, 1.61, true);
    a.close(&mut x, 3.0, 0.01);
    b.close(&mut x, 3.0005, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let r = &m.classes[0].sessions[0].rres[0];
    assert_eq!(r.conns.len(), 2);
    let (ca, cb) = (&r.conns[0], &r.conns[1]);
    assert!(ca.after.is_empty(), "{:?}", ca.after);
    // b's first request followed its own handshake; its second, a's second
    // response (connection 0, pair 1), 20 ms less the client's 10 ms RTT.
    assert_eq!(cb.after.len(), 2);
    assert_eq!(cb.after[0], None);
    let f = cb.after[1].unwrap();
    assert_eq!((f[0], f[1]), (0.0, 1.0));
    assert!(close(f[2], 0.010), "{f:?}");
}

#[test]
fn a_server_that_speaks_first_pairs_with_a_one_byte_request() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(ep(1, [10, 0, 0, 1], 40001), ep(2, [192, 0, 2, 25], 25), 7, 70);
    c.handshake(&mut x, 0.0, 0.01, 0.01);
    c.data(&mut x, 0.1, false, 100);
    c.data(&mut x, 0.2, true, 10);
    c.data(&mut x, 0.3, false, 50);
    c.close(&mut x, 0.4, 0.01);
    let o = ExtractOptions { think_minus_rtt: false, ..Default::default() };
    let (m, recs, _) = run(x, &o);
    assert_eq!(recs[0].pairs[0].req, None);
    assert_eq!(recs[0].pairs[0].resp.unwrap().bytes, 100);
    let c = &m.classes[0];
    assert_eq!((c.name.as_str(), c.counts.request_bytes), ("SMTP", 10));
    assert_eq!(c.request_bytes.values, vec![1.0, 10.0]);
    assert_eq!(c.response_bytes.values, vec![50.0, 100.0]);
    assert!(close(c.think_s.values[0], 0.1));
}

#[test]
fn long_connections_split_at_max_pairs_like_swing() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1, 2);
    c.handshake(&mut x, 0.0, 0.01, 0.01);
    for i in 0..5 {
        let t = 0.1 + i as f64 * 0.1;
        c.data(&mut x, t, true, 100 + i);
        c.data(&mut x, t + 0.05, false, 1000);
    }
    c.close(&mut x, 1.0, 0.01);
    let o = ExtractOptions { max_pairs_per_conn: 2, think_minus_rtt: false, ..Default::default() };
    let (m, recs, rep) = run(x, &o);
    assert_eq!((recs.len(), recs[0].pairs.len()), (1, 5), "the record keeps the real connection");
    let c = &m.classes[0];
    assert_eq!(c.pairs_per_conn.values, vec![1.0, 2.0, 2.0]);
    assert_eq!((c.counts.connections, c.counts.pairs, rep.tcp_modelled), (3, 5, 3));
    // The parts follow each other within the RRE gap: one RRE of three,
    // each part starting at its first request.
    assert_eq!(c.conns_per_rre.values, vec![3.0]);
    let ic: Vec<f64> = c.inter_conn_s.values.clone();
    assert!(close(ic[0], 0.2) && close(ic[1], 0.3), "{ic:?}");
    assert_eq!(c.think_s.n, 4);
}

#[test]
fn sequence_numbers_wrap() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), u32::MAX - 10, u32::MAX - 5000);
    c.handshake(&mut x, 0.0, 0.01, 0.01);
    c.data(&mut x, 0.1, true, 100);
    let end = c.response(&mut x, 0.2, 70_000, 0.0001);
    c.ack(&mut x, end + 0.01, true);
    c.close(&mut x, end + 0.1, 0.01);
    let (_, recs, _) = run(x, &ExtractOptions::default());
    assert_eq!(recs[0].payload, [100, 70_000]);
    assert_eq!((recs[0].retransmissions, recs[0].fills), ([0, 0], [0, 0]));
    assert_eq!(recs[0].pairs[0].resp.unwrap().bytes, 70_000);
}

#[test]
fn a_closed_tuple_absorbs_stragglers_until_a_new_syn() {
    let mut x = Synth::ethernet();
    let (cl, sv) = (client(), server());
    let mut c = Conv::new(cl, sv, 100, 200);
    c.handshake(&mut x, 0.0, 0.01, 0.01);
    c.data(&mut x, 0.1, true, 10);
    c.data(&mut x, 0.2, false, 20);
    c.close(&mut x, 0.3, 0.01);
    c.ack(&mut x, 1.0, true); // a straggling ACK
    x.tcp(90.0, sv, cl, c.sseq, 0, RST, 0, None); // a late RST, 90 s on
    let mut d = Conv::new(cl, sv, 5000, 6000);
    d.handshake(&mut x, 100.0, 0.01, 0.01);
    d.data(&mut x, 100.1, true, 30);
    d.data(&mut x, 100.2, false, 40);
    let (_, recs, rep) = run(x, &ExtractOptions::default());
    assert_eq!(recs.len(), 2);
    // The record ends at the second FIN; later packets are not in it.
    assert_eq!((recs[0].end, recs[0].end_ns, recs[0].packets), (EndReason::Fin, s(0.31), [4, 3]));
    assert_eq!((recs[1].start_ns, recs[1].syns, recs[1].end), (s(100.0), 1, EndReason::TraceEnd));
    assert_eq!(recs[1].payload, [30, 40]);
    assert_eq!((rep.tcp_without_data, rep.tcp_without_syn), (0, 0));
}

#[test]
fn idle_connections_end_at_their_last_packet() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 100, 200);
    c.handshake(&mut x, 0.0, 0.01, 0.01);
    c.data(&mut x, 0.1, true, 10);
    c.data(&mut x, 0.2, false, 20);
    c.data(&mut x, 10.0, true, 30); // 9.8 s of silence, above idle_timeout_s = 5
    c.data(&mut x, 10.1, false, 40);
    let o = ExtractOptions { idle_timeout_s: 5.0, ..Default::default() };
    let (_, recs, rep) = run(x, &o);
    assert_eq!(recs.len(), 2);
    assert_eq!((recs[0].end, recs[0].end_ns), (EndReason::Idle, s(0.2)));
    // The second part has no SYN; its client is the end not on port 80.
    assert_eq!((recs[1].syn_ns, recs[1].start_ns, recs[1].client.port()), (None, s(10.0), 40000));
    assert_eq!(recs[1].payload, [30, 40]);
    assert_eq!(rep.tcp_without_syn, 1);
}

#[test]
fn timestamps_out_of_order_do_not_break_connections() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    c.data(&mut x, 1.080, false, 1460);
    c.data(&mut x, 1.0799, false, 1460); // stamped before the previous record
    c.ack(&mut x, 1.090, true);
    c.close(&mut x, 2.0, 0.01);
    let (m, recs, rep) = run(x, &ExtractOptions::default());
    assert_eq!(rep.out_of_order, 1);
    assert_eq!((recs.len(), recs[0].payload, recs[0].pairs.len()), (1, [300, 2920], 1));
    assert_eq!(recs[0].pairs[0].resp.unwrap().bytes, 2920);
    assert!(m.hosts.iter().all(|h| h.capacity_samples == 0), "a pair needs positive spacing");
}

/// One short exchange starting at `t` and ending (second FIN) at t + 0.11.
fn short(x: &mut Synth, t: f64, cl: Ep, sv: Ep) {
    let mut c = Conv::new(cl, sv, (t * 1000.0) as u32, 7);
    c.handshake(x, t, 0.01, 0.01);
    c.data(x, t + 0.03, true, 100);
    c.data(x, t + 0.05, false, 1000);
    c.close(x, t + 0.1, 0.01);
}

fn grouping_trace() -> Synth {
    let mut x = Synth::ethernet();
    let s1 = server();
    let s2 = ep(3, [93, 184, 216, 35], 80);
    let c = |port| ep(1, [10, 0, 0, 1], port);
    short(&mut x, 0.0, c(5000), s1);
    short(&mut x, 0.05, c(5001), s2);
    short(&mut x, 0.1, c(5002), s1);
    short(&mut x, 10.0, c(5003), s1);
    short(&mut x, 1000.0, c(5004), s1);
    x
}

#[test]
fn sessions_and_rres_from_connection_times() {
    let o = ExtractOptions { think_minus_rtt: false, ..Default::default() };
    let (m, _, _) = run(grouping_trace(), &o);
    let c = &m.classes[0];
    // Client key: {0, 0.05, 0.1} is one RRE (ends 0.21), 10.0 a second RRE
    // of the same session, 1000 s a new session.
    assert_eq!((c.counts.sessions, c.counts.rres, c.counts.connections), (2, 3, 5));
    assert_eq!(c.conns_per_rre.values, vec![1.0, 1.0, 3.0]);
    assert_eq!(c.rres_per_session.values, vec![1.0, 2.0]);
    assert_eq!(c.session_start_s.values, vec![0.0, 1000.0]);
    assert!(close(c.inter_rre_s.values[0], 10.0 - 0.21), "{:?}", c.inter_rre_s);
    let ic = &c.inter_conn_s.values;
    assert!(ic.len() == 2 && close(ic[0], 0.05) && close(ic[1], 0.05), "{ic:?}");
    // The kept first session went to s1, s2, s1, then s1 again: servers 0,
    // 1, 0 and 0 in the order it reached them.
    let first = c.sessions.iter().find(|s| s.start_s == 0.0).unwrap();
    let servers: Vec<Vec<u32>> = first.rres.iter().map(|r| r.conns.iter().map(|c| c.server).collect()).collect();
    assert_eq!(servers, vec![vec![0, 1, 0], vec![0]]);
    // Which trace hosts those were: the client, then s1 and s2.
    let addrs: Vec<&str> = first.hosts.iter().map(|&h| m.hosts[h as usize].addr.as_str()).collect();
    assert_eq!(addrs, ["10.0.0.1", "93.184.216.34", "93.184.216.35"]);
    // For the marginals: two servers in the first session, one in the other.
    assert_eq!(c.servers_per_session.values, vec![1.0, 2.0]);

    // Client and server: the connection to the second server is a session
    // of its own.
    let o2 = ExtractOptions { session_key: SessionKey::ClientServer, ..o.clone() };
    let (m2, _, _) = run(grouping_trace(), &o2);
    let c2 = &m2.classes[0];
    assert_eq!((c2.counts.sessions, c2.counts.rres), (3, 4));
    assert_eq!(c2.conns_per_rre.values, vec![1.0, 1.0, 1.0, 2.0]);
    assert!(close(c2.inter_conn_s.values[0], 0.1));

    // A 5 s session cap makes the RRE at 10 s a session of its own.
    let o3 = ExtractOptions { session_max_s: Some(5.0), ..o };
    let (m3, _, _) = run(grouping_trace(), &o3);
    assert_eq!(m3.classes[0].counts.sessions, 3);
}

#[test]
fn udp_flows_by_class_and_initiator() {
    let mut x = Synth::raw_ip();
    let c = ep(1, [10, 0, 0, 9], 33000);
    let dns = ep(2, [8, 8, 8, 8], 53);
    let ntp = ep(3, [192, 0, 2, 123], 123);
    x.udp(0.0, c, dns, 40);
    x.udp(0.02, dns, c, 120);
    x.udp(0.5, ep(1, [10, 0, 0, 9], 33001), dns, 45);
    x.udp(1.0, ep(1, [10, 0, 0, 9], 40123), ntp, 48);
    x.udp(1.1, ntp, ep(1, [10, 0, 0, 9], 40123), 48);
    x.udp(100.0, c, dns, 40); // the same 5-tuple after 60 s idle: a new flow
    let (m, _, rep) = run(x, &ExtractOptions::default());
    assert_eq!(rep.udp_flows, 4);
    let d = m.udp.iter().find(|u| u.name == "DNS").unwrap();
    assert_eq!((d.flows, d.initiators, d.ports.clone(), d.samples.len()), (3, Side::A, vec![53], 3));
    assert_eq!(d.samples[0].packets, [1, 1]);
    assert_eq!(d.samples[0].bytes, [68, 148]);
    assert!(close(d.samples[0].duration_s, 0.02));
    assert!(close(d.samples[2].start_s, 100.0));
    let n = m.udp.iter().find(|u| u.name == "NTP").unwrap();
    assert_eq!((n.flows, n.samples[0].packets), (1, [1, 1]));
    assert_eq!(m.link.dirs[0].udp_bytes, 68 + 73 + 76 + 68);
}

#[test]
fn bad_options_and_inputs_are_named() {
    let o = ExtractOptions { session_gap_s: -5.0, ..Default::default() };
    match extract_readers(vec![("x".into(), reader(http_like().bytes()))], &o, &mut |_| true) {
        Err(ExtractError::Options(m)) => assert!(m.contains("session_gap_s"), "{m}"),
        other => panic!("{other:?}"),
    }
    let o = ExtractOptions { sides: SideRule::Prefixes { a: vec!["not-a-prefix".into()] }, ..Default::default() };
    let e = extract_readers(vec![("x".into(), reader(http_like().bytes()))], &o, &mut |_| true).unwrap_err();
    assert!(e.to_string().contains("sides.a") && e.to_string().contains("not-a-prefix"), "{e}");
    let e = extract_readers(vec![("junk.bin".into(), reader(b"hello, world".to_vec()))], &ExtractOptions::default(), &mut |_| true).unwrap_err();
    assert!(matches!(e, ExtractError::Trace(_)));
    assert!(e.to_string().starts_with("junk.bin: offset 0: not a pcap"), "{e}");
    let e = extract::extract(&["/nonexistent/trace.pcap".into()], &ExtractOptions::default(), &mut |_| true).unwrap_err();
    assert!(matches!(e, ExtractError::Io { .. }) && e.to_string().contains("/nonexistent/trace.pcap"), "{e}");
    let e = extract::extract(&[], &ExtractOptions::default(), &mut |_| true).unwrap_err();
    assert!(matches!(e, ExtractError::Options(_)));
}

#[test]
fn random_segments_never_panic() {
    // Random flags, sequence and acknowledgement numbers, lengths and
    // slightly disordered times between a few endpoints: whatever the
    // extractor makes of them, it must not panic (overflow checks are on in
    // debug builds) and the model must be well formed.
    let mut rng = units::Rng::stream(7, "random-segments");
    let mut x = Synth::ethernet();
    let hosts = [[10, 0, 0, 1], [10, 0, 0, 2], [8, 8, 8, 8], [1, 2, 3, 4]];
    let mut t = 1.0;
    for _ in 0..20_000 {
        t += rng.uniform() * 0.01 - 0.001;
        let (a, b) = (rng.below(4) as usize, rng.below(4) as usize);
        let from = ep(a as u8, hosts[a], [80, 443, 40000, 40001][rng.below(4) as usize]);
        let to = ep(b as u8, hosts[b], [80, 443, 40000, 40001][rng.below(4) as usize]);
        if rng.bernoulli(0.1) {
            x.udp(t, from, to, rng.below(1400) as u32);
            continue;
        }
        let flags = wire::TcpFlags(rng.below(64) as u16);
        let seq = if rng.bernoulli(0.5) { rng.below(5000) as u32 } else { rng.next_u64() as u32 };
        let len = [0, 1, 500, 1460][rng.below(4) as usize];
        x.tcp(t, from, to, seq, rng.next_u64() as u32, flags, len, rng.bernoulli(0.2).then_some(1460));
    }
    for o in [
        ExtractOptions::default(),
        ExtractOptions { max_pairs_per_conn: 1, max_conns_per_rre: 1, idle_timeout_s: 0.05, ..Default::default() },
        ExtractOptions { session_key: SessionKey::ClientServer, loss_min_packets: 0, capacity_min_samples: 0, ..Default::default() },
    ] {
        let (m, recs, r) = run(Synth::ethernet_from(x.clone_bytes()), &o);
        assert_eq!(r.tcp_connections as usize, recs.len());
        assert!(r.out_of_order > 0);
        let json = serde_json::to_string(&m).unwrap();
        assert_eq!(serde_json::from_str::<Model>(&json).unwrap(), m);
    }
}

#[test]
fn capture_loss_is_what_receivers_acknowledged_but_the_capture_missed() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    c.data(&mut x, 1.080, false, 1460);
    // Two segments the capture dropped, then one it kept.
    c.sseq = c.sseq.wrapping_add(2 * 1460);
    c.data(&mut x, 1.081, false, 1460);
    c.ack(&mut x, 1.090, true);
    c.close(&mut x, 2.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let unseen: Vec<u64> = m.link.dirs.iter().map(|d| d.unseen_bytes).collect();
    assert_eq!(unseen, vec![0, 2 * 1460]);
    // The share missed is of the payload that crossed: 2 of 4 segments.
    assert_eq!(m.link.dirs[1].tcp_payload_bytes, Some(2 * 1460));
    assert_eq!(m.link.dirs[1].capture_loss(), 0.5);
    // The response is still its full size.
    assert_eq!(m.classes[0].response_bytes.values, vec![4.0 * 1460.0]);
}

#[test]
fn a_capture_missing_every_other_segment_counts_them_all() {
    // Each flight of 2 × 10 segments shows every other one, so it opens 10
    // holes before its ACK arrives: more than a few holes must be held
    // open at once, and closed when acknowledged, for none to be missed.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    let mut t = 1.080;
    for _ in 0..5 {
        for _ in 0..10 {
            c.sseq = c.sseq.wrapping_add(1460);
            c.data(&mut x, t, false, 1460);
            t += 0.0001;
        }
        t += 0.030;
        c.ack(&mut x, t, true);
        t += 0.030;
    }
    c.close(&mut x, t + 1.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    assert_eq!(m.link.dirs[1].unseen_bytes, 50 * 1460);
    assert_eq!(m.link.dirs[1].capture_loss(), 0.5);
    // The client received what it acknowledged, not what was captured.
    let client = m.hosts.iter().find(|h| h.side == swing::Side::A).unwrap();
    assert!(client.bytes_per_ack.is_some_and(|b| (b - 20.0 * 1460.0).abs() < 1.0), "{:?}", client.bytes_per_ack);
}

#[test]
fn bytes_per_ack_leaves_out_the_answers_to_losses_the_model_repeats() {
    // The client ACKs every second segment of 60; segment 20 is lost past
    // the capture, so segments 21-24 each bring a duplicate ACK, and the
    // retransmission (after segment 25) an ACK of all six. Seen sent
    // again, the loss is in the server's `loss`, and the regenerated client
    // reports it by TCP's rules: those five ACKs are not its delayed-ACK
    // policy. Unseen, the model does not repeat the loss, and they stay.
    let per_ack = |resent_seen: bool| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.030, 0.010);
        c.data(&mut x, 1.041, true, 300);
        let mut t = 1.080;
        let hole = c.sseq.wrapping_add(20 * 1460);
        for i in 0..60 {
            c.data(&mut x, t, false, 1460);
            t += 0.001;
            match i {
                21..=24 => x.tcp(t, c.c, c.s, c.cseq, hole, ACK, 0, None),
                25 => {
                    if resent_seen {
                        x.tcp(t, c.s, c.c, hole, c.cseq, ACK, 1460, None);
                    }
                    c.ack(&mut x, t + 0.0001, true);
                }
                20 => {}
                _ if i % 2 == 1 => c.ack(&mut x, t + 0.0001, true),
                _ => {}
            }
        }
        c.close(&mut x, 2.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        let h = m.hosts.iter().find(|h| h.addr == "10.0.0.1").unwrap();
        (h.bytes_per_ack.unwrap(), h.segments_per_ack.unwrap())
    };
    // 27 ACKs of two segments each (segments 0-19 and 26-59); on the wire
    // every pure ACK, those five too.
    assert_eq!(per_ack(true), (2.0 * 1460.0, 60.0 / 32.0));
    assert_eq!(per_ack(false), (60.0 * 1460.0 / 32.0, 60.0 / 32.0));
}

#[test]
fn bytes_per_ack_leaves_out_the_acks_of_the_delayed_ack_timer() {
    // Ten flights of five segments, 1 ms apart and 120 ms between flights,
    // to a client 30 ms past the capture that ACKs every second segment
    // at once and the fifth (the flight's odd segment) when its 100 ms
    // delayed-ACK timer fires, after the next flight was sent and before
    // it arrived. The model carries that timer
    // (`ack_delay_s`), which the regenerated client runs too: its ACKs
    // counted in `bytes_per_ack` as well would be sent twice. Without
    // them, an ACK per two segments.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.0005, 0.030);
    c.data(&mut x, 1.031, true, 300);
    let base = c.sseq;
    let at = |seg: u32| base.wrapping_add(seg * 1460);
    // (time, from the server, sequence or acknowledgement number)
    let mut pkts = Vec::new();
    for k in 0..10 {
        let t = 1.1 + 0.12 * k as f64;
        for j in 0..5 {
            pkts.push((t + 0.001 * j as f64, true, at(5 * k + j)));
        }
        for (j, hold) in [(1, 0.0), (3, 0.0), (4, 0.100)] {
            pkts.push((t + 0.001 * j as f64 + 0.030 + hold, false, at(5 * k + j + 1)));
        }
    }
    pkts.sort_by(|a, b| a.0.total_cmp(&b.0));
    for (t, from_server, n) in pkts {
        if from_server {
            x.tcp(t, c.s, c.c, n, c.cseq, ACK, 1460, None);
        } else {
            x.tcp(t, c.c, c.s, c.cseq, n, ACK, 0, None);
        }
    }
    c.sseq = at(50);
    c.close(&mut x, 3.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let h = m.hosts.iter().find(|h| h.addr == "10.0.0.1").unwrap();
    let delay = h.ack_delay_s.unwrap();
    assert!((delay - 0.100).abs() < 0.002, "{delay}");
    assert_eq!(h.bytes_per_ack, Some(2.0 * 1460.0));
    // On the wire, every pure ACK.
    assert_eq!(h.segments_per_ack, Some(50.0 / 30.0));
}

#[test]
fn losses_in_bursts_are_counted_per_episode() {
    // 200 segments, the client ACKing every second one. Six times a run
    // of segments is lost before the capture, alternately one and three
    // long: the client reports each until the server sends the run again
    // and an ACK moves past it. With SACK its blocks show what it lacked
    // (and the capture misses the retransmissions); without, its
    // duplicate ACKs show only that it lacked something, and the capture
    // shows the retransmissions. Twelve segments in six episodes, two per
    // episode, either way.
    let burst = |sack: bool| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.030, 0.010);
        c.data(&mut x, 1.041, true, 300);
        let base = c.sseq;
        let at = |seg: u32| base.wrapping_add(seg * 1460);
        let runs = [(20, 1), (50, 3), (80, 1), (110, 3), (140, 1), (170, 3)];
        let mut t = 1.080;
        for i in 0..200 {
            let run = runs.iter().find(|&&(s, n)| i >= s && i < s + n + 4);
            t += 0.001;
            match run {
                Some(&(s, n)) if i < s + n => c.sseq = c.sseq.wrapping_add(1460),
                Some(&(s, n)) if i < s + n + 3 => {
                    c.data(&mut x, t, false, 1460);
                    if sack {
                        x.sack(t, c.c, c.s, c.cseq, at(s), &[(at(s + n), at(i + 1))]);
                    } else {
                        x.tcp(t, c.c, c.s, c.cseq, at(s), ACK, 0, None);
                    }
                }
                Some(&(s, n)) => {
                    c.data(&mut x, t, false, 1460);
                    for seg in (s..s + n).filter(|_| !sack) {
                        x.tcp(t, c.s, c.c, at(seg), c.cseq, ACK, 1460, None);
                    }
                    c.ack(&mut x, t + 0.0001, true);
                }
                None => {
                    c.data(&mut x, t, false, 1460);
                    if i % 2 == 1 {
                        c.ack(&mut x, t + 0.0001, true);
                    }
                }
            }
        }
        c.close(&mut x, 2.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().loss_burst
    };
    assert_eq!(burst(true), Some(2.0));
    assert_eq!(burst(false), Some(2.0));
}

#[test]
fn an_ack_after_a_retransmission_is_no_hold_of_the_delayed_ack_timer() {
    // Eleven lone requests, each answered by a pure ACK, then a response.
    // The server's timer holds five of those ACKs 25 ms past the 30 ms
    // path; the other six requests are sent again 200 ms on, and their ACKs
    // answer the second copy. Timed from the first, they would be holds of
    // 200 ms, and the median of all eleven one of them (Karn's rule, as for
    // the round trip: an ACK after a retransmission answers either copy).
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    for i in 0..11 {
        let t = 1.1 + i as f64;
        c.data(&mut x, t, true, 300);
        let answered = if i < 5 {
            t + 0.055
        } else {
            x.tcp(t + 0.2, c.c, c.s, c.cseq.wrapping_sub(300), c.sseq, ACK, 300, None);
            t + 0.23
        };
        c.ack(&mut x, answered, false);
        c.response(&mut x, answered + 0.05, 500, 0.0);
        c.ack(&mut x, answered + 0.06, true);
    }
    c.close(&mut x, 13.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let s = m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap();
    let d = s.ack_delay_s.expect("five holds");
    assert!((0.015..=0.030).contains(&d), "{d}");
}

#[test]
fn the_odd_segment_of_an_uploads_flights_shows_the_receivers_timer() {
    // Five uploads of 3 + 4 + 2 segments on a 40 ms path, slow start
    // clocked by the server's ACKs: it ACKs the first two segments of each
    // flight at once and holds the third 22 ms (its timer), or, without a
    // timer that short, ACKs it with the next flight's first segment. The
    // latest segment never stands alone, so only the odd ones show the
    // timer; the next flight left 22 ms before the held ACK, less than the
    // round trip, so it cannot have brought it. Acked by the next flight
    // instead, a round trip after it left, the delay is no hold.
    let delay = |timer: bool| {
        let mut x = Synth::ethernet();
        for k in 0..5u16 {
            let mut c = Conv::new(ep(1, [10, 0, 0, 1], 40000 + k), server(), 1000, 5000);
            let t0 = 1.0 + 2.0 * k as f64;
            c.handshake(&mut x, t0, 0.040, 0.0001);
            let mut t = t0 + 0.05;
            for _ in 0..3 {
                c.data(&mut x, t, true, 1460);
            }
            t += 0.040;
            // The first two segments' ACK releases the next flight.
            x.tcp(t, c.s, c.c, c.sseq, c.cseq.wrapping_sub(1460), ACK, 0, None);
            for _ in 0..4 {
                c.data(&mut x, t + 0.0001, true, 1460);
            }
            let odd = if timer { t + 0.022 } else { t + 0.0405 };
            x.tcp(odd, c.s, c.c, c.sseq, c.cseq.wrapping_sub(4 * 1460), ACK, 0, None);
            x.tcp(t + 0.0406, c.s, c.c, c.sseq, c.cseq.wrapping_sub(2 * 1460), ACK, 0, None);
            c.data(&mut x, t + 0.041, true, 1460);
            c.data(&mut x, t + 0.041, true, 1460);
            c.ack(&mut x, t + 0.081, false);
            c.close(&mut x, t + 0.5, 0.04);
        }
        let (m, _, _) = run(x, &ExtractOptions::default());
        m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().ack_delay_s
    };
    let d = delay(true).expect("five held ACKs");
    assert!((d - 0.022).abs() < 0.001, "{d}");
    assert_eq!(delay(false), None);
}

#[test]
fn segments_per_ack_and_whole_sessions_are_in_the_model() {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    // 60 segments, the client acknowledging every second one.
    let mut t = 1.080;
    for i in 0..60 {
        c.data(&mut x, t, false, 1460);
        if i % 2 == 1 {
            c.ack(&mut x, t + 0.0001, true);
        }
        t += 0.001;
    }
    c.data(&mut x, 2.0, true, 200);
    c.response(&mut x, 2.040, 1000, 0.0);
    c.ack(&mut x, 2.050, true);
    c.close(&mut x, 3.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let h = m.hosts.iter().find(|h| h.addr == "10.0.0.1").unwrap();
    // 30 ACKs of two segments, then one of the 1000-byte response.
    assert!((h.segments_per_ack.unwrap() - 61.0 / 31.0).abs() < 1e-9, "{:?}", h.segments_per_ack);
    // Its ACKs advertised 65535 bytes (no window scaling offered).
    assert_eq!(h.rcv_window, Some(65535));
    let sessions = &m.classes[0].sessions;
    assert_eq!(sessions.len(), 1);
    let conn = &sessions[0].rres[0].conns[0];
    assert_eq!(conn.pairs.len(), 2);
    assert_eq!((conn.pairs[0][0], conn.pairs[0][1]), (300.0, 60.0 * 1460.0));
    // The think time is less the client's RTT, as the marginal's; the
    // first pair's is its wait after the handshake; the server took 9 and
    // 10 ms beyond the 30 ms round trip.
    assert_eq!(conn.pairs[1][2], m.classes[0].think_s.values[0]);
    assert!(close(conn.pairs[0][2], 0.001), "{:?}", conn.pairs);
    assert_eq!(conn.server_s.len(), 2);
    assert!(close(conn.server_s[0], 0.009) && close(conn.server_s[1], 0.010), "{:?}", conn.server_s);
    assert!(close(conn.close_s, 0.96), "{}", conn.close_s);
    let none = run_with_no_sessions();
    assert!(none.classes[0].sessions.is_empty());
}

fn run_with_no_sessions() -> Model {
    let o = ExtractOptions { session_structures: 0, ..Default::default() };
    run(http_like(), &o).0
}

/// A multiplexed connection: the client sends four more requests while
/// the server's response is still arriving, acknowledging only part of it
/// (the rest is in flight); then two more 5 ms apart.
fn interleaved_trace() -> Synth {
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    let acked = c.sseq;
    let mut t = 1.080;
    for i in 0..10 {
        c.data(&mut x, t, false, 1460);
        if i % 2 == 0 && (2..10).contains(&i) {
            // A request that acknowledges one segment of the response.
            x.tcp(t + 0.0005, c.c, c.s, c.cseq, acked + 1460, ACK, 200, None);
            c.cseq += 200;
        }
        t += 0.001;
    }
    c.ack(&mut x, 1.095, true);
    // Two requests written 5 ms apart while the server is silent: the gap
    // is the application's (a few hundred bytes in flight), two units.
    c.data(&mut x, 1.200, true, 100);
    c.data(&mut x, 1.205, true, 150);
    c.close(&mut x, 2.0, 0.01);
    x
}

#[test]
fn interleaved_sides_make_a_concurrent_connection_of_data_units() {
    let trace = interleaved_trace;
    let (one, _, _) = run(trace(), &ExtractOptions { unit_gap_s: None, ..Default::default() });
    let last_request = one.classes[0].concurrent[0].iter().rfind(|u| u[1] == 0.0).unwrap()[2];
    assert_eq!(last_request, 250.0, "one unit without unit_gap_s");
    let (m, _, _) = run(trace(), &ExtractOptions::default());
    let k = &m.classes[0];
    assert_eq!((k.counts.connections, k.counts.concurrent_connections), (1, 1));
    // Its pairs stay out of the marginals (it is its data units), and the
    // model is still valid.
    assert_eq!((k.pairs_per_conn.n, k.request_bytes.n), (0, 0));
    m.check().unwrap();
    // Offsets from each side's start: the client's ACK at 1.040, the
    // server's SYN/ACK at 1.030 plus the 40 ms handshake.
    let want = [
        [0.001, 0.0, 300.0],
        [0.0425, 0.0, 200.0],
        [0.0445, 0.0, 200.0],
        [0.0465, 0.0, 200.0],
        [0.0485, 0.0, 200.0],
        [0.160, 0.0, 100.0],
        [0.165, 0.0, 150.0],
        [0.010, 1.0, 3.0 * 1460.0],
        [0.013, 1.0, 2.0 * 1460.0],
        [0.015, 1.0, 2.0 * 1460.0],
        [0.017, 1.0, 2.0 * 1460.0],
        [0.019, 1.0, 1460.0],
    ];
    let got = &k.concurrent[0];
    assert_eq!(got.len(), want.len(), "{got:?}");
    for (g, w) in got.iter().zip(want) {
        assert!(close(g[0], w[0]) && g[1] == w[1] && g[2] == w[2], "{got:?}");
    }
    // Kept sessions carry the same units, and how long the connection
    // stayed open, idle, after its last (the client's FIN at 2.0 s, 0.795 s
    // after its last request).
    let conn = &k.sessions[0].rres[0].conns[0];
    assert_eq!(&conn.adus, got);
    assert!(close(conn.close_s, 0.795), "{}", conn.close_s);
}

#[test]
fn a_burst_of_small_writes_crossing_one_segment_is_one_crossing_and_pairs_describe_it() {
    // A TLS session on a 109 ms path, as a capture beside the client saw
    // it: the client's four records (its HTTP/2 preface and request) go out
    // one segment each while the server's session ticket is in flight, and
    // the server's first answer crosses the client's last record. Nine
    // segments crossed the other side's data, in two runs: the sides took
    // turns, so the connection is pairs, not data units.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.109, 0.0016);
    c.data(&mut x, 1.1107, true, 517);
    c.ack(&mut x, 1.2200, false);
    c.data(&mut x, 1.2219, false, 1440);
    c.data(&mut x, 1.2220, false, 1038);
    c.ack(&mut x, 1.2235, true);
    c.data(&mut x, 1.2335, true, 126);
    c.data(&mut x, 1.3427, false, 51);
    let ticket = c.sseq;
    c.data(&mut x, 1.3428, false, 69);
    // The client acknowledges the first segment only, then writes.
    x.tcp(1.3438, c.c, c.s, c.cseq, ticket, ACK, 0, None);
    let before = c.cseq;
    for (i, len) in [53, 50, 42, 213].into_iter().enumerate() {
        x.tcp(1.3453 + 0.0002 * i as f64, c.c, c.s, c.cseq, ticket, ACK, len, None);
        c.cseq += len;
    }
    c.ack(&mut x, 1.3460, true);
    c.data(&mut x, 1.3461, true, 38);
    // The server's answer leaves having seen the first three records only.
    x.tcp(1.4538, c.s, c.c, c.sseq, before + 145, ACK, 0, None);
    x.tcp(1.4539, c.s, c.c, c.sseq, before + 145, ACK, 38, None);
    c.sseq += 38;
    c.ack(&mut x, 1.4545, false);
    c.ack(&mut x, 1.4556, true);
    c.data(&mut x, 1.4577, false, 119);
    c.data(&mut x, 1.4578, false, 38);
    c.ack(&mut x, 1.4603, true);
    c.close(&mut x, 3.0, 0.1);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let k = &m.classes[0];
    assert_eq!((k.counts.connections, k.counts.concurrent_connections), (1, 0), "{:?}", k.concurrent);
    let sorted = |d: &Dist| {
        let mut v = d.values.clone();
        v.sort_by(f64::total_cmp);
        v
    };
    assert_eq!(sorted(&k.request_bytes), vec![126.0, 396.0, 517.0]);
    assert_eq!(sorted(&k.response_bytes), vec![120.0, 195.0, 2478.0]);
}

#[test]
fn a_pause_is_longer_than_the_gap_and_two_round_trips() {
    // The server answers with 4 segments, its client acknowledges them all,
    // and the server resumes `pause` s after its last segment with 2 more.
    // Returns the pairs: a pause makes the rest a pair of its own (a
    // 1-byte request: the server spoke first).
    let pairs = |syn_rtt: f64, pause: f64| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, syn_rtt - 0.001, 0.001);
        c.data(&mut x, 1.0 + syn_rtt + 0.001, true, 300);
        let end = c.response(&mut x, 1.0 + 2.0 * syn_rtt, 4 * 1460, 0.001);
        c.ack(&mut x, end + 0.0001, true);
        c.response(&mut x, end + pause, 2 * 1460, 0.001);
        c.close(&mut x, end + pause + 1.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        let mut v = m.classes[0].response_bytes.values.clone();
        v.sort_by(f64::total_cmp);
        v
    };
    // A server that stopped 330 ms mid-answer on a 50 ms path (as
    // video-netflix's TLS server did): two responses.
    assert_eq!(pairs(0.050, 0.330), vec![2.0 * 1460.0, 4.0 * 1460.0]);
    // Under the 200 ms gap: one.
    assert_eq!(pairs(0.050, 0.150), vec![6.0 * 1460.0]);
    // On a 300 ms path a sender whose window emptied resumes a round trip
    // after its last send: not a pause, though longer than the gap.
    assert_eq!(pairs(0.300, 0.330), vec![6.0 * 1460.0]);
    assert_eq!(pairs(0.300, 0.700), vec![2.0 * 1460.0, 4.0 * 1460.0]);
}

#[test]
fn without_a_handshake_round_trip_a_pause_outlasts_the_data_round_trip() {
    // Captured beside the server; its client, 330 ms away, sent its SYN
    // twice, so the handshake gives no round trip (Karn). The server sends
    // 4 segments, and 2 more `after` s after their ACK. Returns the
    // responses.
    let responses = |after: f64| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        x.tcp(1.0, c.c, c.s, c.cseq, 0, SYN, 0, Some(1460));
        c.handshake(&mut x, 4.0, 0.0005, 0.330);
        c.data(&mut x, 4.331, true, 300);
        let end = c.response(&mut x, 4.332, 4 * 1460, 0.0001);
        c.ack(&mut x, end + 0.330, true);
        c.response(&mut x, end + 0.330 + after, 2 * 1460, 0.0001);
        c.close(&mut x, end + 2.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        let mut v = m.classes[0].response_bytes.values.clone();
        v.sort_by(f64::total_cmp);
        v
    };
    // Sent on the ACK, 330 ms after its last segment (more than the 200 ms
    // gap): the window held it, one response. The data round trip (server
    // data to the client's ACK, 330 ms; the request to its answer, 1 ms)
    // stands in for the handshake's.
    assert_eq!(responses(0.0005), vec![6.0 * 1460.0]);
    // Resumed half a second after the ACK, past two round trips: the
    // application paused.
    assert_eq!(responses(0.5), vec![2.0 * 1460.0, 4.0 * 1460.0]);
}

#[test]
fn slow_start_rounds_tell_growth_per_ack_from_byte_counting() {
    // A server beside the capture, its client 40 ms away ACKing every
    // other segment: from 3 segments, per-ACK growth sends 3, 5, 8, 12 a
    // round, byte counting 3, 6, 12.
    let growth = |per_ack: bool| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.0002, 0.040);
        c.data(&mut x, 1.0403, true, 300);
        let base = c.sseq;
        let seg = |n: u32| base.wrapping_add(n * 1460);
        let (mut cwnd, mut sent, mut acked, mut t) = (3u32, 0u32, 0u32, 1.041);
        let send = |x: &mut Synth, t: f64, sent: &mut u32, upto: u32| {
            let mut at = t;
            while *sent < upto {
                x.tcp(at, server(), client(), seg(*sent), c.cseq, ACK, 1460, None);
                *sent += 1;
                at += 0.00001;
            }
        };
        send(&mut x, t, &mut sent, cwnd);
        while sent < 40 {
            t += 0.040;
            let round_end = sent;
            while acked < round_end {
                let a = (acked + 2).min(round_end);
                x.tcp(t, client(), server(), c.cseq, seg(a), ACK, 0, None);
                cwnd += if per_ack { 1 } else { a - acked };
                acked = a;
                send(&mut x, t + 0.00005, &mut sent, acked + cwnd);
                t += 0.0002;
            }
        }
        c.sseq = seg(sent);
        c.ack(&mut x, t + 0.040, true);
        c.close(&mut x, t + 0.1, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        let h = m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().clone();
        (h.growth_per_byte, h.growth_rounds)
    };
    assert_eq!(growth(true), (Some(0.0), 3));
    assert_eq!(growth(false), (Some(1.0), 2));
}

#[test]
fn more_short_segments_in_flight_than_a_window_of_packets_holds_read_as_bytes() {
    // A server beside the capture, its client 40 ms away: two flights of
    // `n` segments of `len` bytes, each segment ACKed a round trip later.
    let verdict = |n: u32, len: u32| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.0002, 0.040);
        c.data(&mut x, 1.0403, true, 300);
        let base = c.sseq;
        let end = |k: u32| base.wrapping_add(k * len);
        let mut t = 1.041;
        for round in 0..2 {
            for i in 0..n {
                x.tcp(t + i as f64 * 1e-5, server(), client(), end(round * n + i), c.cseq, ACK, len, None);
            }
            t += 0.040;
            for i in 1..=n {
                x.tcp(t + i as f64 * 1e-5, client(), server(), c.cseq, end(round * n + i), ACK, 0, None);
            }
            t += 0.001;
        }
        c.sseq = end(2 * n);
        c.close(&mut x, t + 0.1, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().packet_window
    };
    // 20 small writes at once: past 10 packets and a probe, within the bytes.
    assert_eq!(verdict(20, 23), Some(false));
    // 10 fit a window of packets; 20 full segments are a larger initial window.
    assert_eq!(verdict(10, 23), None);
    assert_eq!(verdict(20, 1460), None);
}

#[test]
fn a_servers_first_flight_gives_its_initial_window() {
    // Handshake round trip 40 ms; the server's first flight is 4 segments,
    // then it waits for ACKs (a 36 ms pause) before 8 more.
    let flight = |pause: f64| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.030, 0.010);
        c.data(&mut x, 1.041, true, 300);
        let end = c.response(&mut x, 1.080, 4 * 1460, 0.001);
        c.ack(&mut x, end + 0.0001, true);
        c.response(&mut x, end + pause, 8 * 1460, 0.001);
        c.close(&mut x, 2.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().initial_window
    };
    assert_eq!(flight(0.036), Some(4));
    // Without a pause after it the flight cannot be told from the next.
    assert_eq!(flight(0.001), None);

    // A slow line on a 16 ms path: each segment takes 13 ms, more than a
    // quarter round trip, and the next comes before an ACK could have
    // brought it. No count (not a window of one).
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.012, 0.004);
    c.data(&mut x, 1.017, true, 300);
    c.response(&mut x, 1.040, 8 * 1460, 0.013);
    c.close(&mut x, 2.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    assert_eq!(m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().initial_window, None);

    // A server whose short first answer the client replied to (a TLS
    // handshake) before it sent more: no count either.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    let end = c.response(&mut x, 1.080, 2 * 1460, 0.001);
    c.data(&mut x, end + 0.001, true, 100);
    c.response(&mut x, end + 0.040, 8 * 1460, 0.001);
    c.close(&mut x, 2.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    assert_eq!(m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().initial_window, None);
}

#[test]
fn a_clients_first_window_limited_flight_after_its_requests_gives_its_initial_window() {
    // The client (5 ms from the capture; the server 40 ms) asks, is
    // answered, and 0.4 s later uploads: 3 segments of the server's MSS,
    // then, on the server's ACK of two, 4 more, 5 ms later at the capture.
    // `next` is when the 4 come after that ACK, `last` the third
    // segment's length.
    let upload = |next: f64, last: u32| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.040, 0.005);
        c.data(&mut x, 1.046, true, 200);
        c.response(&mut x, 1.087, 500, 0.0);
        c.ack(&mut x, 1.092, true);
        for k in 0..3 {
            c.data(&mut x, 1.5 + 1e-4 * k as f64, true, if k == 2 { last } else { 1400 });
        }
        x.tcp(1.540, c.s, c.c, c.sseq, c.cseq - last, ACK, 0, None);
        for k in 0..4 {
            c.data(&mut x, 1.540 + next + 1e-4 * k as f64, true, 1400);
        }
        c.ack(&mut x, 1.590 + next, false);
        c.close(&mut x, 2.0, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        m.hosts.iter().find(|h| h.addr == "10.0.0.1").unwrap().initial_window
    };
    assert_eq!(upload(0.005, 1400), Some(3));
    // Sent 0.1 s after the ACK, the next segments were the application's
    // own pace; a short last segment ended a message: no count.
    assert_eq!(upload(0.1, 1400), None);
    assert_eq!(upload(0.005, 600), None);
}

#[test]
fn a_first_flight_a_middlebox_cut_up_counts_the_senders_segments() {
    // A NAT relays the server's 4-segment first flight (as http-bro-org's
    // VirtualBox NAT did) in pieces of 1432 and 28 bytes: 8 packets, 4
    // of the sender's segments.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    let mut at = 1.080;
    for _ in 0..4 {
        c.data(&mut x, at, false, 1432);
        c.data(&mut x, at + 0.0001, false, 28);
        at += 0.001;
    }
    c.ack(&mut x, at + 0.0001, true);
    c.response(&mut x, at + 0.036, 8 * 1460, 0.001);
    c.close(&mut x, 2.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    assert_eq!(m.hosts.iter().find(|h| h.addr == "93.184.216.34").unwrap().initial_window, Some(4));
}

#[test]
fn a_stall_after_a_reported_loss_is_not_a_pause() {
    // The server sends 4 segments; the second is lost before the capture
    // point, and the client acknowledges the first and repeats that ACK
    // (or a window update: it changes its window). 330 ms later (its
    // retransmission timeout) the server sends the second again, which the
    // capture may miss; the client acknowledges all four, and the server
    // goes on with 2 more. The responses the model sees:
    let responses = |window_update: bool, retx_seen: bool| {
        let mut x = Synth::ethernet();
        let mut c = Conv::new(client(), server(), 1000, 5000);
        c.handshake(&mut x, 1.0, 0.049, 0.001);
        c.data(&mut x, 1.051, true, 300);
        let first = c.sseq;
        let end = c.response(&mut x, 1.100, 4 * 1460, 0.001);
        let (cl, sv, cseq) = (c.c, c.s, c.cseq);
        x.tcp(end + 0.0001, cl, sv, cseq, first + 1460, ACK, 0, None);
        for i in 0..3 {
            if window_update {
                x.window = 60000 - 1000 * i;
            }
            x.tcp(end + 0.001 * (i + 2) as f64, cl, sv, cseq, first + 1460, ACK, 0, None);
        }
        x.window = 65535;
        if retx_seen {
            x.tcp(end + 0.330, sv, cl, first + 1460, cseq, ACK, 1460, None);
        }
        c.ack(&mut x, end + 0.380, true);
        c.response(&mut x, end + 0.381, 2 * 1460, 0.001);
        c.close(&mut x, end + 1.5, 0.01);
        let (m, _, _) = run(x, &ExtractOptions::default());
        let mut v = m.classes[0].response_bytes.values.clone();
        v.sort_by(f64::total_cmp);
        v
    };
    // Duplicate ACKs: the client reported a loss, and the 381 ms without
    // new data was the server's retransmission timer: one response,
    // whether or not the capture shows the retransmission.
    assert_eq!(responses(false, true), vec![6.0 * 1460.0]);
    assert_eq!(responses(false, false), vec![6.0 * 1460.0]);
    // Repeated ACKs that change the window report no loss: a pause.
    assert_eq!(responses(true, false), vec![2.0 * 1460.0, 4.0 * 1460.0]);
}

#[test]
fn handshakes_sent_again_count_against_their_sender() {
    // Three connections: one whose SYN went twice; one whose SYN/ACK went
    // twice for a single SYN; one whose SYN and SYN/ACK both went twice
    // (the second SYN/ACK answers the second SYN: nothing of the server's
    // was lost).
    let mut x = Synth::ethernet();
    let (cl, sv) = (client(), server());
    for (i, (syns, synacks)) in [(2, 1), (1, 2), (2, 2)].into_iter().enumerate() {
        let cl = Ep { port: 40000 + i as u16, ..cl };
        let t = 1.0 + i as f64;
        let (cseq, sseq) = (1000u32, 5000u32);
        for k in 0..syns {
            x.tcp(t + k as f64 * 0.2, cl, sv, cseq, 0, SYN, 0, Some(1460));
        }
        for k in 0..synacks {
            x.tcp(t + 0.23 + k as f64 * 0.2, sv, cl, sseq, cseq + 1, SYNACK, 0, Some(1400));
        }
        x.tcp(t + 0.7, cl, sv, cseq + 1, sseq + 1, ACK, 0, None);
        x.tcp(t + 0.71, cl, sv, cseq + 1, sseq + 1, ACK, 100, None);
        x.tcp(t + 0.74, sv, cl, sseq + 1, cseq + 101, ACK, 500, None);
    }
    // A SYN never answered is no completed handshake.
    x.tcp(5.0, Ep { port: 41000, ..cl }, sv, 7, 0, SYN, 0, Some(1460));
    let (m, _, _) = run(x, &ExtractOptions::default());
    let h = |a: &str| m.hosts.iter().find(|h| h.addr == a).unwrap();
    assert_eq!((h("10.0.0.1").handshakes, h("10.0.0.1").handshake_retx), (3, 2));
    assert_eq!((h("93.184.216.34").handshakes, h("93.184.216.34").handshake_retx), (3, 1));
}

/// Twelve uploads of 20 segments of 1460 B sent 10 µs apart (as a host's
/// own segmentation offload leaves them), each with its fourth and fifth
/// segments swapped, the fourth arriving 8 ms late, and its fourth sent
/// again after the last; the client acknowledged each SYN/ACK
/// `client_rtt` after it. (The second copy of the fourth comes 12 ms after
/// the first, as a tail-loss probe would: 1 ms after, with nothing from the
/// receiver between, it would be the capture's own copy.)
fn uploads(client_rtt: f64) -> Synth {
    let mut x = Synth::ethernet();
    for i in 0..12u16 {
        let (cl, sv) = (ep(1, [10, 0, 0, 5], 41000 + i), server());
        let mut c = Conv::new(cl, sv, 1000, 5000);
        let t = 1.0 + i as f64;
        c.handshake(&mut x, t, 0.040, client_rtt);
        let (base, ack) = (c.cseq, c.sseq);
        let t0 = t + 0.041 + client_rtt;
        let seg = |x: &mut Synth, at: f64, k: u32| x.tcp(at, cl, sv, base + 1460 * k, ack, ACK, 1460, None);
        for k in (0..20).filter(|&k| k != 3) {
            seg(&mut x, t0 + 10e-6 * k as f64, k);
        }
        seg(&mut x, t0 + 0.008, 3);
        seg(&mut x, t0 + 0.020, 3);
        c.cseq = base + 1460 * 20;
        c.ack(&mut x, t0 + 0.05, false);
        c.response(&mut x, t0 + 0.06, 300, 0.0);
        c.ack(&mut x, t0 + 0.07, true);
        c.close(&mut x, t0 + 0.5, 0.01);
    }
    x
}

#[test]
fn a_capture_on_the_client_gives_it_no_loss_before_the_capture_capacity_or_bunching() {
    use swing::CapturePoint;
    let o = ExtractOptions::default();
    let (m, _, _) = run(uploads(30e-6), &o);
    let h = |a: &str| m.hosts.iter().find(|h| h.addr == a).unwrap().clone();
    let (cl, sv) = (h("10.0.0.5"), h("93.184.216.34"));
    // The client answered every SYN/ACK in 30 µs: the capture was on it.
    assert_eq!(m.link.capture_point, CapturePoint::OnHost);
    assert!(cl.at_capture && !sv.at_capture);
    // Its segments 10 µs apart are its own sending, before any link: no
    // capacity, bunching or shaper.
    assert_eq!((cl.capacity_bps, cl.capacity_samples, cl.bunched, cl.shaper.is_none()), (None, 0, None, true));
    // The late fourth segments were the capture's disorder; the copies sent
    // again were lost beyond it: of 19 new segments and 1 reordered, 1, all
    // after the link.
    assert!(close(cl.loss.unwrap(), 1.0 / 20.0), "{:?}", cl.loss);
    assert_eq!(cl.loss_after_link, cl.loss);
    // Without an estimate of its own, its access link is a network
    // interface's, not its side's median.
    let nets = m.net_tuples(Side::A, (0.1, 1e6, 0.0));
    assert!(nets[0].capacity_bps >= swing::AT_CAPTURE_BPS);
}

#[test]
fn a_capture_on_a_link_keeps_the_clients_loss_and_capacity() {
    use swing::CapturePoint;
    let o = ExtractOptions::default();
    // The same uploads from a client 5 ms away (a home's Wi-Fi).
    let (m, _, _) = run(uploads(0.005), &o);
    let cl = m.hosts.iter().find(|h| h.addr == "10.0.0.5").unwrap();
    assert_eq!(m.link.capture_point, CapturePoint::Link);
    assert!(m.hosts.iter().all(|h| !h.at_capture));
    // Its segments arrived 10 µs apart: a fast link, clamped to Swing's 500 Mbit/s.
    assert_eq!(cl.capacity_bps, Some(500e6));
    // An 8 ms fill is later than its 5 ms round trip: a loss before the
    // link, beside the copy lost after it.
    let (up, down) = (1.0 / 20.0, 1.0 / 19.0);
    assert!(close(cl.loss.unwrap(), up + down - up * down), "{:?}", cl.loss);
    assert!(close(cl.loss_after_link.unwrap(), down));
    // One handshake tells nothing of where the capture was.
    let (one, _, _) = run(http_like(), &o);
    assert_eq!(one.link.capture_point, CapturePoint::Unknown);
}

/// `servers` servers 30 ms away, each answering `answers` requests of a
/// client with two segments (1460 B, then `second` B, `gap` s apart).
fn two_segment_answers(servers: u8, answers: u32, second: u32, gap: f64) -> Synth {
    let mut x = Synth::ethernet();
    for k in 0..servers {
        let mut c = Conv::new(ep(1, [10, 0, 0, 1], 40000 + k as u16), ep(10 + k, [93, 184, 216, 10 + k], 443), 1000, 5000);
        let t0 = 1.0 + k as f64 * 10.0;
        c.handshake(&mut x, t0, 0.030, 0.010);
        for i in 0..answers {
            let t = t0 + 0.1 + i as f64;
            c.data(&mut x, t, true, 300);
            c.data(&mut x, t + 0.030, false, 1460);
            c.data(&mut x, t + 0.030 + gap, false, second);
            c.ack(&mut x, t + 0.040, true);
        }
        c.close(&mut x, t0 + 1.0 + answers as f64, 0.01);
    }
    x
}

#[test]
fn servers_with_a_few_unequal_pairs_each_measure_their_side_together() {
    let o = ExtractOptions::default();
    // Three servers, four answers each: 1460 B then 1000 B 27 µs later,
    // which a link leaves the second's serialisation apart.
    let (m, _, _) = run(two_segment_answers(3, 4, 1000, 27e-6), &o);
    let servers: Vec<_> = m.hosts.iter().filter(|h| h.side == Side::B).collect();
    assert_eq!(servers.len(), 3);
    // No pair of equal sizes: no server has its own capacity.
    assert!(servers.iter().all(|h| h.capacity_bps.is_none() && h.capacity_samples == 0));
    // Twelve pairs pooled, more than the ten an estimate needs.
    let c = m.sides.pooled_capacity_bps[1].expect("a pooled capacity");
    assert!(close(c, 1040.0 * 8.0 / 27e-6), "{c}");
    assert_eq!(m.sides.pooled_capacity_bps[0], None);
    // Regenerated, a server takes it (above its peak rate).
    let nets = m.net_tuples(Side::B, (0.1, 1e9, 0.0));
    assert!(nets.iter().all(|n| close(n.capacity_bps, c)));
    // Three answers each are nine pairs: too few, as for a host's own.
    let (few, _, _) = run(two_segment_answers(3, 3, 1000, 27e-6), &o);
    assert_eq!(few.sides.pooled_capacity_bps, [None, None]);
    // A side where one host has its own estimate keeps the side's median.
    let (own, _, _) = run(two_segment_answers(3, 11, 1460, 100e-6), &o);
    assert!(own.hosts.iter().filter(|h| h.side == Side::B).all(|h| h.capacity_bps.is_some()));
    assert_eq!(own.sides.pooled_capacity_bps, [None, None]);
}

/// Four downloads to a client that answers its handshakes 5 ms later (a
/// link away, as far as they tell), the first `merged` of them one segment
/// of three times the 1460-byte MSS it announced.
fn merged_downloads(merged: u16) -> Synth {
    let mut x = Synth::ethernet();
    for i in 0..4u16 {
        let mut c = Conv::new(ep(1, [10, 0, 0, 5], 42000 + i), server(), 1000, 5000);
        let t = 1.0 + i as f64;
        c.handshake(&mut x, t, 0.040, 0.005);
        c.data(&mut x, t + 0.05, true, 300);
        c.data(&mut x, t + 0.09, false, if i < merged { 3 * 1460 } else { 1460 });
        c.ack(&mut x, t + 0.1, true);
        c.close(&mut x, t + 0.5, 0.01);
    }
    x
}

#[test]
fn a_host_sent_segments_its_own_offload_merged_is_the_capture_point() {
    use swing::CapturePoint;
    let o = ExtractOptions::default();
    // No sender puts three MSS in one segment: the client's receive offload
    // merged them, so the capture was on it, however late it answered.
    let (m, _, _) = run(merged_downloads(3), &o);
    assert_eq!(m.link.capture_point, CapturePoint::OnHost);
    let at: Vec<_> = m.hosts.iter().filter(|h| h.at_capture).map(|h| h.addr.as_str()).collect();
    assert_eq!(at, ["10.0.0.5"]);
    // Two such segments are not enough to tell.
    let (m, _, _) = run(merged_downloads(2), &o);
    assert_eq!(m.link.capture_point, CapturePoint::Link);
    assert!(m.hosts.iter().all(|h| !h.at_capture));
}

#[test]
fn frames_the_capture_recorded_twice_are_passed_over_and_counted() {
    let o = ExtractOptions::default();
    let trace = |numbered: bool, twice: Option<f64>| {
        let mut x = Synth::ethernet();
        (x.numbered, x.twice) = (numbered, twice);
        http_like_on(x)
    };
    let (once, recs, _) = run(trace(true, None), &o);
    let n = once.traces[0].packets;
    // Every frame twice, 1 µs apart (a mirror port copying both ways):
    // the second copies are passed over, and the model is the same.
    let (m, twice_recs, rep) = run(trace(true, Some(1e-6)), &o);
    assert_eq!((m.traces[0].packets, m.traces[0].duplicates, rep.duplicates), (2 * n, n, n));
    assert_eq!((recs, &m.classes, &m.hosts, &m.link.dirs), (twice_recs, &once.classes, &once.hosts, &once.link.dirs));
    assert_eq!(once.traces[0].duplicates, 0);
    // Sent again 20 ms later the same datagrams are packets of their own.
    let (m, _, _) = run(trace(true, Some(0.020)), &o);
    assert_eq!(m.traces[0].duplicates, 0);
    // Without identification, only what takes sequence space is told
    // apart: a stack answers arrivals with identical ACKs.
    let b = trace(false, None).bytes();
    let mut r = wire::TraceReader::new(reader(b), "t").unwrap();
    let mut takes_sequence = 0;
    while let Some(rec) = r.read_next().unwrap() {
        let p = rec.decode().unwrap();
        let t = p.tcp().unwrap();
        takes_sequence += u64::from(t.payload_len > 0 || t.flags.syn() || t.flags.fin());
    }
    let (m, _, _) = run(trace(false, Some(1e-6)), &o);
    assert!(takes_sequence > 0 && takes_sequence < n);
    assert_eq!(m.traces[0].duplicates, takes_sequence);
    // The series of the trace passes them over too.
    let doubled = trace(true, Some(1e-6)).bytes();
    let path = std::env::temp_dir().join(format!("undertow-dups-{}.pcap", std::process::id()));
    std::fs::write(&path, &doubled).unwrap();
    let series = extract::series_for_model(std::slice::from_ref(&path), 0.001, &once).unwrap();
    std::fs::remove_file(&path).unwrap();
    assert_eq!(series.duplicates, n);
    let total: f64 = series.packets.iter().flatten().sum();
    assert_eq!(total as u64, n);
}

#[test]
fn a_connection_its_server_closed_keeps_its_idle_time_though_the_client_never_closed() {
    // The server closes its kept-alive connection on its own timer 2.5 s
    // after the response; the client acknowledges the FIN but keeps its
    // socket open until the capture ends.
    let mut x = Synth::ethernet();
    let mut c = Conv::new(client(), server(), 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    let end = c.response(&mut x, 1.080, 3000, 0.0001);
    c.ack(&mut x, 1.090, true);
    x.tcp(end + 2.5, c.s, c.c, c.sseq, c.cseq, FIN, 0, None);
    x.tcp(end + 2.51, c.c, c.s, c.cseq, c.sseq.wrapping_add(1), ACK, 0, None);
    let (m, recs, _) = run(x, &ExtractOptions::default());
    assert_eq!(recs[0].end, EndReason::TraceEnd);
    let class = &m.classes[0];
    assert_eq!(class.close_wait_s.n, 1);
    assert!(close(class.close_wait_s.values[0], 2.5), "{:?}", class.close_wait_s);
    assert!(close(class.sessions[0].rres[0].conns[0].close_s, 2.5));
}

#[test]
fn one_mac_sending_both_directions_tells_no_side() {
    // A tunnel's made-up Ethernet header: every frame, both ways, from one
    // MAC. The server sends more frames than the client, which would put it
    // on side A if that MAC were the client's access link.
    let mut x = Synth::ethernet();
    let (cl, sv) = (ep(1, [10, 8, 0, 1], 40000), ep(1, [93, 184, 216, 34], 443));
    let mut c = Conv::new(cl, sv, 1000, 5000);
    c.handshake(&mut x, 1.0, 0.030, 0.010);
    c.data(&mut x, 1.041, true, 300);
    c.response(&mut x, 1.080, 20 * 1400, 0.0001);
    c.ack(&mut x, 1.1, true);
    c.close(&mut x, 2.0, 0.01);
    let (m, _, _) = run(x, &ExtractOptions::default());
    let side = |a: &str| m.hosts.iter().find(|h| h.addr == a).unwrap().side;
    assert_eq!((side("10.8.0.1"), side("93.184.216.34")), (Side::A, Side::B));
    assert!(m.sides.decided_by.contains("private/local addresses are side A"), "{}", m.sides.decided_by);
}
