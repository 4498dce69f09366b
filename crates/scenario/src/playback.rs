//! The playback model, resolved: its trace read (a capture's direction
//! through `extract`, or an event list), cut to `offset` and `length`,
//! sped up, and checked, with one-line errors naming the field.

use crate::error::ScenarioError;
use crate::resolve::{defaults, err, limits, Placed, PlaybackModel};
use crate::schema::{PlaybackGranularity, PlaybackSpec, TraceSide, Transport};
use std::path::Path;
use std::sync::Arc;
use traffic::background::{Granularity, PlaybackTrace, RateTransport, TracePacket};
use units::Dur;

type Res<T> = Result<T, ScenarioError>;

/// A trace's packets as read: time since the trace's start (ns), IP size, flow.
type Packets = Vec<(u64, u32, u32)>;

pub(crate) fn resolve(dir: &Path, f: &str, m: &PlaybackSpec, p: Placed) -> Res<PlaybackModel> {
    let field = format!("{f}.file");
    let path = dir.join(&m.file);
    if !path.exists() {
        return Err(err(field, format!("file {:?} not found (looked for {})", m.file, path.display())));
    }
    if path.is_dir() {
        return Err(err(field, format!("{} is a directory: expected a pcap or pcapng capture or an event list", path.display())));
    }
    let speed = m.speed.unwrap_or(1.0);
    if !(speed.is_finite() && speed > 0.0 && speed <= limits::PLAYBACK_SPEED) {
        return Err(err(format!("{f}.speed"), format!("{speed} is out of range: expected a number above 0, at most {}", limits::PLAYBACK_SPEED)));
    }
    let (packets, side) = match wire::TraceReader::open(&path) {
        Ok(_) => (capture(&path, f, m)?, Some(m.side.unwrap_or(TraceSide::A))),
        Err(e) if matches!(e.kind, wire::TraceErrorKind::BadMagic(_) | wire::TraceErrorKind::TooShort(_) | wire::TraceErrorKind::Empty) => {
            (event_list(&path, f, m)?, None)
        }
        Err(e) => return Err(err(field, e.to_string())),
    };
    let offset = m.offset.map_or(Dur::ZERO, |o| o.0);
    let mut trace = cut(packets, offset, m.length.map(|l| l.0), speed);
    if trace.packets.is_empty() {
        let what = if m.length.is_some() { "in the span of offset and length" } else { "from offset on" };
        return Err(err(format!("{f}.offset"), format!("{} holds no packets {what} ({offset})", m.file)));
    }
    if m.repeat == Some(true) {
        trace.period =
            Some(period(&trace, m.length.map(|l| l.0), speed).ok_or_else(|| {
                err(format!("{f}.length"), format!("{} plays one packet from offset on: give length, how often it repeats", m.file))
            })?);
    }
    let granularity = match m.granularity {
        None | Some(PlaybackGranularity::Millisecond) => Granularity::Millisecond,
        Some(PlaybackGranularity::Exact) => Granularity::Exact,
    };
    Ok(PlaybackModel {
        name: p.name,
        file: std::fs::canonicalize(&path).unwrap_or(path),
        side,
        transport: match m.transport {
            Transport::Udp => RateTransport::Udp,
            Transport::Tcp => RateTransport::Tcp,
        },
        granularity,
        offset,
        speed,
        trace: Arc::new(trace),
        hosts: p.hosts.unwrap_or(defaults::PLAYBACK_HOSTS),
        sources: p.sources,
        start: p.start,
        stop: p.stop,
        group: p.group,
    })
}

/// The packets of a capture that one side's hosts sent, sides decided as
/// `undertow extract` decides them (the same pass, the same rule).
fn capture(path: &Path, f: &str, m: &PlaybackSpec) -> Res<Packets> {
    if m.packet_size.is_some() {
        return Err(err(
            format!("{f}.packet_size"),
            format!("{} is a capture, whose packets keep their own sizes: packet_size is for event lists without sizes", m.file),
        ));
    }
    let mut opts = swing::ExtractOptions::default();
    if let Some(a) = &m.side_a {
        opts.sides = swing::SideRule::Prefixes { a: a.clone() };
    }
    let field = format!("{f}.file");
    let (model, _) = extract::extract(&[path.to_path_buf()], &opts, &mut |_| true).map_err(|e| match e {
        extract::ExtractError::Options(msg) => err(format!("{f}.side_a"), msg),
        e => err(&field, e.to_string()),
    })?;
    let side = match m.side.unwrap_or(TraceSide::A) {
        TraceSide::A => swing::Side::A,
        TraceSide::B => swing::Side::B,
    };
    let start = model.traces.iter().map(|t| t.start_s).reduce(f64::min).map(|s| (s * 1e9).round() as i64);
    let d = extract::direction(&[path.to_path_buf()], &extract::host_sides(&model), side, start, limits::PLAYBACK_PACKETS)
        .map_err(|e| err(&field, e.to_string()))?;
    if d.packets.is_empty() {
        let name = extract::side_name(side);
        let other = extract::side_name(side.other());
        return Err(err(
            format!("{f}.side"),
            format!(
                "{} has no packets sent from side {name:?} (of {} IP packets; {}): play side {other:?}, or name side A's addresses with side_a",
                m.file, d.ip_packets, model.sides.decided_by
            ),
        ));
    }
    Ok(d.packets.iter().map(|p| (p.t_ns, p.size, p.flow)).collect())
}

/// An event list's packets, in time order, numbered in that order (they
/// have no flows, so they go to the hosts round-robin).
fn event_list(path: &Path, f: &str, m: &PlaybackSpec) -> Res<Packets> {
    for (name, given) in [("side", m.side.is_some()), ("side_a", m.side_a.is_some())] {
        if given {
            return Err(err(
                format!("{f}.{name}"),
                format!("{} is an event list, which has one direction: {name} is for pcap and pcapng captures", m.file),
            ));
        }
    }
    let list = extract::read_events(path, limits::PLAYBACK_PACKETS).map_err(|e| err(format!("{f}.file"), e))?;
    let sizes = match (list.sizes, m.packet_size) {
        (Some(s), None) => s,
        (None, Some(size)) => {
            if !(1..=65535).contains(&size.0) {
                return Err(err(format!("{f}.packet_size"), format!("{} bytes is out of range: expected 1B to 65535B (IP packet size)", size.0)));
            }
            vec![size.0 as u32; list.times_ns.len()]
        }
        (None, None) => {
            return Err(err(format!("{f}.packet_size"), format!("{} lists times without sizes: give packet_size, every packet's IP size", m.file)))
        }
        (Some(_), Some(_)) => {
            return Err(err(format!("{f}.packet_size"), format!("{} gives every packet's size already: leave packet_size out", m.file)))
        }
    };
    let mut events: Vec<(u64, u32)> = list.times_ns.into_iter().zip(sizes).collect();
    events.sort_by_key(|e| e.0);
    Ok(events.into_iter().enumerate().map(|(i, (t, s))| (t, s, i as u32)).collect())
}

/// How often a looped trace plays: `length` (sped up) if given; else the
/// span from the offset to the last packet and one mean gap more, so the
/// last packet of a pass and the first of the next are as far apart as
/// the trace's packets on average. `None` for one packet without a length.
fn period(trace: &PlaybackTrace, length: Option<Dur>, speed: f64) -> Option<Dur> {
    if let Some(l) = length {
        return Some(Dur((l.0 as f64 / speed).round() as u64));
    }
    let n = trace.packets.len() as u64;
    let last = trace.packets.last()?.at.0;
    (n >= 2).then(|| Dur(last + last.div_ceil(n - 1)))
}

/// The packets from `offset` for `length`, timed from `offset` and divided by `speed`.
fn cut(packets: Packets, offset: Dur, length: Option<Dur>, speed: f64) -> PlaybackTrace {
    let end = length.map_or(u64::MAX, |l| offset.0.saturating_add(l.0));
    let packets = packets
        .into_iter()
        .filter(|&(t, _, _)| t >= offset.0 && t < end)
        .map(|(t, size, flow)| {
            let since = t - offset.0;
            let at = if speed == 1.0 { since } else { (since as f64 / speed) as u64 };
            TracePacket { at: Dur(at), size, flow }
        })
        .collect();
    PlaybackTrace { packets, period: None }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_cut_keeps_the_span_timed_from_the_offset_and_sped_up() {
        let packets: Packets = vec![(0, 100, 0), (1_000, 200, 1), (2_500, 300, 0), (4_000, 400, 2)];
        let t = cut(packets.clone(), Dur(1_000), Some(Dur(3_000)), 1.0);
        assert_eq!(t.packets, vec![TracePacket { at: Dur(0), size: 200, flow: 1 }, TracePacket { at: Dur(1_500), size: 300, flow: 0 }]);
        let t = cut(packets, Dur(1_000), None, 2.0);
        assert_eq!(t.packets.iter().map(|p| p.at.0).collect::<Vec<_>>(), vec![0, 750, 1_500]);
    }

    #[test]
    fn a_loop_repeats_every_length_or_else_the_span_and_one_mean_gap() {
        let packets: Packets = vec![(0, 100, 0), (1_000, 200, 1), (3_000, 300, 0)];
        let t = cut(packets.clone(), Dur::ZERO, None, 1.0);
        // Three packets over 3,000 ns: two gaps of 1,500 on average.
        assert_eq!(period(&t, None, 1.0), Some(Dur(4_500)));
        assert_eq!(period(&t, Some(Dur(10_000)), 2.0), Some(Dur(5_000)));
        let one = cut(packets, Dur(3_000), None, 1.0);
        assert_eq!(period(&one, None, 1.0), None);
        assert_eq!(period(&one, Some(Dur(7)), 1.0), Some(Dur(7)));
    }
}
