//! The end of the pass: sides, host estimates and the model file.

use crate::classes::Finish;
use crate::damage::TraceDamage;
use crate::hosts::Host;
use crate::input::Src;
use crate::netparams::{HostNet, OFFLOAD_MERGED_MIN, ON_HOST_HANDSHAKES};
use crate::options::secs;
use crate::pipeline::Extractor;
use crate::reservoir::{percentile, sorted};
use crate::sides::{decide, key_string, Tallies};
use crate::Report;
use swing::{AppClass, CapturePoint, DirStats, HostParams, LinkStats, Model, Side, SideInfo, TraceInfo, UdpClass, FORMAT};

/// Builds the model once every flow is finished (`Extractor::finish_flows`):
/// the traces' span, the hosts' sides and estimates, then the classes, the
/// link's directions and the hosts' parameters that depend on them.
pub(crate) fn assemble(ex: Extractor, srcs: &[Src]) -> (Model, Report) {
    let o = &ex.o.o;
    let traces = trace_infos(srcs);
    let tmin = srcs.iter().filter_map(|s| s.info.tmin).min().unwrap_or(0);
    let tmax = srcs.iter().filter_map(|s| s.info.tmax).max().unwrap_or(0);
    let duration_s = secs(tmax.saturating_sub(tmin));

    let hosts = &ex.hosts.hosts;
    let tallies = Tallies { ip_packets: ex.ip_packets, crossing: ex.crossing };
    let dec = decide(&ex.o.sides, hosts, &ex.macs, &tallies);
    let nets = host_nets(hosts, o);
    let host_rtt: Vec<Option<f64>> = nets.iter().map(|n| n.rtt_s).collect();
    let order = host_order(hosts, &dec.side);
    let mut host_index = vec![0u32; hosts.len()];
    for (k, &i) in order.iter().enumerate() {
        host_index[i] = k as u32;
    }
    let fin = Finish {
        side_of: &dec.side,
        host_rtt: &host_rtt,
        side_rtt: side_rtts(&host_rtt, &dec.side),
        think_minus_rtt: o.think_minus_rtt,
        start_shift_s: secs(ex.t0.unwrap_or(tmin).saturating_sub(tmin)),
        t0: ex.tcp.sink.t0,
        host_index: &host_index,
    };
    let classes = tcp_classes(&ex, &fin);
    let udp = udp_classes(&ex, &dec.side, fin.start_shift_s);
    let dirs = link_dirs(hosts, &dec.side, duration_s);
    let params = host_params(hosts, &nets, &dec.side, &order);
    let lines = ex.lines.as_ref().map_or_else(Vec::new, |l| {
        let at_capture: Vec<bool> = nets.iter().map(|n| n.at_capture).collect();
        let addr: Vec<u128> = hosts.iter().map(|h| h.addr).collect();
        l.lines(&dec.side, &at_capture, &addr)
    });
    let hosts_a = dec.side.iter().filter(|s| **s == Side::A).count() as u64;

    let report = report(&ex, srcs, &traces);
    let st = ex.tcp.sink.stats;
    let model = Model {
        format: FORMAT.to_string(),
        traces,
        options: o.clone(),
        link: LinkStats {
            duration_s,
            dirs,
            tcp_connections: st.connections,
            tcp_one_way: st.one_way,
            stalls: crate::stalls::find(&ex.tcp.sink.late, &dec.side, &host_rtt, tmin),
            capture_point: capture_point(&nets),
        },
        sides: SideInfo {
            rule: o.sides.clone(),
            decided_by: dec.decided_by,
            hosts_a,
            hosts_b: hosts.len() as u64 - hosts_a,
            pooled_capacity_bps: pooled_capacities(&nets, &dec.side, o),
        },
        classes,
        udp,
        hosts: params,
        lines,
    };
    (model, report)
}

/// Per side, A's then B's, the capacity of a side none of whose hosts has
/// its own: the pairs of any sizes its hosts sent, pooled, where there are
/// more than `capacity_min_samples`. Hosts that each sent a few pairs (a
/// server answering in two segments of unequal sizes) measure their side
/// together, where each alone measures nothing and would be given no more
/// than its peak rate, which short bursts never approach.
fn pooled_capacities(nets: &[HostNet], side_of: &[Side], o: &swing::ExtractOptions) -> [Option<f64>; 2] {
    [Side::A, Side::B].map(|side| {
        let of_side = || nets.iter().zip(side_of).filter(move |(_, s)| **s == side).map(|(n, _)| n);
        if of_side().any(|n| n.capacity_bps.is_some()) {
            return None;
        }
        let pooled = sorted(of_side().flat_map(|n| n.side_pairs.iter().copied()));
        (pooled.len() > o.capacity_min_samples as usize).then(|| percentile(&pooled, o.capacity_percentile))
    })
}

/// Each input file as the model records it: its packets, bytes, span and
/// what could not be read.
fn trace_infos(srcs: &[Src]) -> Vec<TraceInfo> {
    srcs.iter()
        .map(|s| {
            let i = &s.info;
            let (a, b) = (i.tmin.unwrap_or(0), i.tmax.unwrap_or(0));
            TraceInfo {
                path: s.name.clone(),
                packets: i.packets,
                bytes: i.bytes,
                start_s: secs(a),
                duration_s: secs(b.saturating_sub(a)),
                skipped: s.r.stats().skipped + i.decode_errors,
                non_ip: i.non_ip,
                truncated_tail_bytes: s.r.stats().truncated_tail,
                duplicates: i.duplicates,
            }
        })
        .collect()
}

/// Each host's estimates, the capture host found by its handshakes, or,
/// where none answered them at the capture, by the merged segments it
/// received (`OFFLOAD_MERGED_MIN`).
fn host_nets(hosts: &[Host], o: &swing::ExtractOptions) -> Vec<HostNet> {
    let by_handshakes: Vec<bool> = hosts.iter().map(|h| h.net.at_capture()).collect();
    let any = by_handshakes.contains(&true);
    hosts.iter().zip(by_handshakes).map(|(h, at)| h.net.finish_as(o, at || (!any && h.net.merged_received >= OFFLOAD_MERGED_MIN))).collect()
}

/// On a host if one answered its handshakes at the capture point (or
/// received segments its own offload merged: `host_nets`), on a
/// link if some host answered enough of them (`ON_HOST_HANDSHAKES`) to tell
/// and none did, else unknown.
fn capture_point(nets: &[HostNet]) -> CapturePoint {
    if nets.iter().any(|n| n.at_capture) {
        CapturePoint::OnHost
    } else if nets.iter().any(|n| n.handshake_answers >= ON_HOST_HANDSHAKES) {
        CapturePoint::Link
    } else {
        CapturePoint::Unknown
    }
}

/// The median RTT of each side's hosts, for a client without its own.
fn side_rtts(host_rtt: &[Option<f64>], side_of: &[Side]) -> [Option<f64>; 2] {
    [Side::A, Side::B].map(|side| {
        let v = sorted(host_rtt.iter().zip(side_of).filter(|(_, s)| **s == side).filter_map(|(r, _)| *r));
        (!v.is_empty()).then(|| percentile(&v, 50.0))
    })
}

/// The TCP application classes, most bytes first.
fn tcp_classes(ex: &Extractor, fin: &Finish) -> Vec<AppClass> {
    let mut classes = ex.tcp.sink.classes.build(&ex.names, fin);
    classes.sort_by(|a, b| {
        let (x, y) = (a.counts.bytes[0] + a.counts.bytes[1], b.counts.bytes[0] + b.counts.bytes[1]);
        y.cmp(&x).then_with(|| a.name.cmp(&b.name)).then(a.clients.cmp(&b.clients))
    });
    classes
}

/// The UDP classes, most flows first.
fn udp_classes(ex: &Extractor, side_of: &[Side], start_shift_s: f64) -> Vec<UdpClass> {
    let mut udp = ex.udp.build(&ex.names, side_of, start_shift_s);
    udp.sort_by(|a, b| b.flows.cmp(&a.flows).then_with(|| a.name.cmp(&b.name)).then(a.initiators.cmp(&b.initiators)));
    udp
}

/// The link's two directions, each the sum of what its side's hosts sent,
/// with the mean rate over the traces' span.
fn link_dirs(hosts: &[Host], side_of: &[Side], duration_s: f64) -> [DirStats; 2] {
    let mut dirs = [DirStats::default(), DirStats::default()];
    let mut payload = [0u64; 2];
    for (h, side) in hosts.iter().zip(side_of) {
        let d = &mut dirs[side.index()];
        d.packets += h.packets;
        d.bytes += h.bytes;
        d.tcp_bytes += h.tcp_bytes;
        d.udp_bytes += h.udp_bytes;
        d.other_bytes += h.bytes - h.tcp_bytes - h.udp_bytes;
        d.unseen_bytes += h.unseen_bytes;
        payload[side.index()] += h.tcp_payload;
    }
    for (d, p) in dirs.iter_mut().zip(payload) {
        d.tcp_payload_bytes = Some(p);
        d.mean_rate_bps = if duration_s > 0.0 { d.bytes as f64 * 8.0 / duration_s } else { 0.0 };
    }
    dirs
}

/// Each host's parameters, sorted by side, then bytes (descending), then
/// address.
/// The hosts in the model's order: by side, then most bytes first.
fn host_order(hosts: &[Host], side_of: &[Side]) -> Vec<usize> {
    let mut order: Vec<usize> = (0..hosts.len()).collect();
    order.sort_unstable_by_key(|&i| (side_of[i], std::cmp::Reverse(hosts[i].bytes), hosts[i].addr));
    order
}

/// Each host's parameters, in `order`.
fn host_params(hosts: &[Host], nets: &[HostNet], side_of: &[Side], order: &[usize]) -> Vec<HostParams> {
    order
        .iter()
        .map(|&i| {
            let (h, n) = (&hosts[i], &nets[i]);
            HostParams {
                addr: key_string(h.addr),
                side: side_of[i],
                rtt_s: n.rtt_s,
                rtt_samples: n.rtt_samples,
                rtt_samples_split: n.rtt_split,
                capacity_bps: n.capacity_bps,
                capacity_samples: n.capacity_samples,
                bunched: n.bunched,
                loss: n.loss,
                loss_packets: n.loss_packets,
                loss_burst: n.loss_burst,
                mss: n.mss,
                bytes: h.bytes,
                packets: h.packets,
                peak_rate_bps: h.peak.bps().max(h.peak_rx.bps()),
                segments_per_ack: n.segments_per_ack,
                bytes_per_ack: n.bytes_per_ack,
                ack_delay_s: n.ack_delay_s,
                initial_window: n.initial_window,
                growth_per_byte: n.growth_per_byte,
                growth_rounds: n.growth_rounds,
                packet_window: n.packet_window,
                rcv_window: n.rcv_window,
                timestamps: n.timestamps,
                sack: n.sack,
                shaper: n.shaper.clone(),
                loss_after_link: n.loss_after,
                handshakes: n.handshakes,
                handshake_retx: n.handshake_retx,
                at_capture: n.at_capture,
            }
        })
        .collect()
}

/// The run's counters: what was read, what the pass rebuilt and the peak
/// sizes of its state.
fn report(ex: &Extractor, srcs: &[Src], traces: &[TraceInfo]) -> Report {
    let hosts = &ex.hosts.hosts;
    let st = ex.tcp.sink.stats;
    Report {
        packets: traces.iter().map(|t| t.packets).sum(),
        bytes: traces.iter().map(|t| t.bytes).sum(),
        ip_packets: ex.ip_packets,
        tcp_packets: st.packets,
        udp_packets: ex.udp_packets,
        other_ip_packets: ex.other_packets,
        skipped_records: srcs.iter().map(|s| s.r.stats().skipped).sum(),
        truncated_tail_bytes: srcs.iter().map(|s| s.r.stats().truncated_tail).sum(),
        damaged: srcs.iter().filter_map(TraceDamage::of).collect(),
        non_ip: srcs.iter().map(|s| s.info.non_ip).sum(),
        duplicates: srcs.iter().map(|s| s.info.duplicates).sum(),
        decode_errors: srcs.iter().map(|s| s.info.decode_errors).sum(),
        out_of_order: ex.out_of_order,
        hosts: hosts.len() as u64,
        tcp_connections: st.connections,
        tcp_without_syn: st.without_syn,
        tcp_without_data: st.without_data,
        tcp_modelled: st.modelled,
        pairs: st.pairs,
        sessions: st.sessions,
        sessions_too_long: ex.tcp.sink.classes.sessions_too_long,
        sessions_over_budget: ex.tcp.sink.classes.sessions_over_budget,
        udp_flows: ex.udp.total,
        peak_tcp_entries: st.peak_live as u64,
        peak_closed_tuples: st.peak_closed as u64,
        peak_udp_flows: ex.udp.peak_live as u64,
        peak_group_keys: ex.tcp.sink.grouper.peak_keys as u64,
        peak_pending: ex.tcp.sink.grouper.peak_pending as u64,
        stored_values: (ex.tcp.sink.classes.stored()
            + ex.udp.stored()
            + hosts.iter().map(|h| h.net.stored()).sum::<usize>()
            + ex.lines.as_ref().map_or(0, |l| l.stored())) as u64,
        tcp_classes: ex.tcp.sink.classes.count() as u64,
        udp_classes: ex.udp.classes() as u64,
        class_host_entries: ex.tcp.sink.classes.entries() as u64,
        line_pairs: ex.lines.as_ref().map_or(0, |l| l.pairs() as u64),
        line_samples_dropped: ex.lines.as_ref().map_or(0, |l| l.dropped_samples),
    }
}
