"""`undertow inspect`: a human summary of a Swing model file."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np

from undertow import _core
from undertow.table import render


class ModelError(ValueError):
    """A model file that cannot be read."""


# Completed handshakes a host needs for a handshake loss rate of its own
# (swing::HANDSHAKES_MIN).
HANDSHAKES_MIN = 10


def split_hosts(model: dict) -> list[dict]:
    """Hosts carrying at least SPLIT_BYTES of the bytes most of whose ACK
    round trips came in under half their fastest handshake: a NAT or proxy
    that terminates TCP stood between them and the capture, and what the
    capture shows of their sending is the middlebox's."""
    total = sum(h["bytes"] for h in model["hosts"]) or 1
    return [{"addr": h["addr"], "bytes_share": h["bytes"] / total, "split_samples": h.get("rtt_samples_split", 0),
             "rtt_samples": h["rtt_samples"]}
            for h in model["hosts"]
            if h["bytes"] >= SPLIT_BYTES * total and h.get("rtt_samples_split", 0) >= max(SPLIT_MIN, h["rtt_samples"])]


#: A host is reported as behind a TCP-splitting middlebox when it carried
#: this share of the bytes and at least SPLIT_MIN of its ACK round trips
#: (and more than were kept) were the middlebox's.
SPLIT_BYTES = 0.1
SPLIT_MIN = 10

def capture_point(model: dict) -> str:
    """Where the trace was captured, in words: on a host (its own handshake
    answers took microseconds, or its receive offload merged segments it was
    sent, so nothing between it and the capture lost, queued or spaced its
    packets) or on a link between the sides."""
    kind = model["link"].get("capture_point", "unknown")
    if kind == "on-host":
        where = ", ".join(f"{h['addr']} (side {h['side'].upper()})" for h in model["hosts"] if h.get("at_capture"))
        return (f"capture point: on host {where}: it answered its handshakes at the capture, or was sent segments of "
                "several of its MSS that only its own receive offload merges, so it is given no loss before it, capacity, "
                "bunching or shaper; its peers' estimates hold the path")
    if kind == "link":
        return "capture point: on a link between the sides (every host answered its handshakes from further away)"
    return "capture point: unknown (too few handshakes seen whole)"


def lines(model: dict) -> list[str]:
    """The shared lines in words: which hosts of which side, at what rate,
    on how many back-to-back packets of different hosts (and how many came
    faster than the line could send them)."""
    if not model["options"].get("lines", False):
        return ["shared lines: not looked for (a model extracted before line detection, or with --no-lines)"]
    found = model.get("lines", [])
    if not found:
        return ["shared lines: none found (no hosts of one side whose packets reached the capture serialised at one rate)"]
    out = [f"shared lines: {len(found)}"]
    for i, ln in enumerate(found):
        hosts = ", ".join(ln["hosts"][:6]) + (f" and {len(ln['hosts']) - 6} more" if len(ln["hosts"]) > 6 else "")
        out.append(f"  line {i}: side {ln['side'].upper()}, {len(ln['hosts'])} hosts ({hosts}) at {_rate(ln['rate_bps'])} towards "
                   f"the capture: {ln['back_to_back']} packets followed another host's back to back, {ln['faster']} faster")
    return out


def duplicate_frames(model: dict) -> int:
    """Frames the capture recorded twice, which extraction and the trace's
    series passed over."""
    return sum(t.get("duplicates", 0) for t in model["traces"])


def duplicates_line(n: int) -> str:
    """`n` duplicate frames in words ("" for none)."""
    return (f"capture duplicates: {n:,} frames were recorded twice within 1 ms (the same datagram, or a segment "
            "its receiver had not answered); the second copies were dropped") if n else ""


def load_model(path) -> dict:
    """A model file as a dict, after the core's checks (the same a scenario's
    `swing` background runs: what `inspect` shows, `run` accepts)."""
    p = Path(path)
    try:
        _core.check_model(str(p))
    except _core.InputError as e:
        raise ModelError(str(e)) from None
    return json.loads(p.read_text())


def _q(values: list[float], scale: float = 1.0, fmt: str = "{:.3g}") -> list[str]:
    if not values:
        return ["-"] * 4
    v = np.asarray(values, dtype=float) * scale
    return [fmt.format(np.percentile(v, q)) for q in (10, 50, 90)] + [str(len(v))]


def _rate(bps: float) -> str:
    for unit, k in (("Gbit/s", 1e9), ("Mbit/s", 1e6), ("kbit/s", 1e3)):
        if bps >= k:
            return f"{bps / k:.3g} {unit}"
    return f"{bps:.3g} bit/s"


def _handshake_loss(h: dict) -> float | None:
    """SYNs and SYN/ACKs sent again, for a host with enough handshakes for
    a rate of its own (as regeneration uses)."""
    n = h.get("handshakes", 0)
    return h["handshake_retx"] / n if n >= HANDSHAKES_MIN else None


def _field(key: str):
    return lambda h: h.get(key)


# Host parameter rows: label, value of a host (None: no estimate), scale, format.
_HOST_ROWS = (("RTT ms", _field("rtt_s"), 1e3, "{:.3g}"), ("capacity Mbit/s", _field("capacity_bps"), 1e-6, "{:.3g}"),
              ("loss %", _field("loss"), 100, "{:.3g}"), ("handshake loss %", _handshake_loss, 100, "{:.3g}"),
              ("initial window", _field("initial_window"), 1, "{:.3g}"), ("bytes per ACK", _field("bytes_per_ack"), 1, "{:.0f}"),
              ("delayed ACK ms", _field("ack_delay_s"), 1e3, "{:.3g}"), ("bunched %", _field("bunched"), 100, "{:.3g}"))


def summary(m: dict) -> str:
    out = []
    for t in m["traces"]:
        out.append(f"trace {t['path']}: {t['packets']:,} packets, {t['bytes']:,} bytes, {t['duration_s']:.3f} s"
                   + (f", {t['skipped']} damaged records skipped" if t["skipped"] else "")
                   + (f", {t['truncated_tail_bytes']:,} bytes at the end unreadable" if t.get("truncated_tail_bytes") else "")
                   + (f", {t['non_ip']} non-IP frames" if t["non_ip"] else "")
                   + (f", {t['duplicates']:,} frames recorded twice (dropped)" if t.get("duplicates") else ""))
    link = m["link"]
    s = m["sides"]
    out.append(f"sides: {s['hosts_a']} hosts on side A, {s['hosts_b']} on side B ({s['decided_by']})")
    for side, c in zip("AB", s.get("pooled_capacity_bps") or (None, None)):
        if c is not None:
            out.append(f"side {side}: no host sent packet pairs enough for a capacity of its own; "
                       f"their pairs pooled give the side {_rate(c)}")
    for i, name in enumerate(("A to B", "B to A")):
        d = link["dirs"][i]
        out.append(f"{name}: {_rate(d['mean_rate_bps'])} mean, {d['packets']:,} packets, "
                   f"{d['bytes']:,} bytes (TCP {d['tcp_bytes']:,}, UDP {d['udp_bytes']:,}, other {d['other_bytes']:,})")
        if d.get("unseen_bytes"):
            out.append(f"  capture loss: {d['unseen_bytes']:,} bytes of TCP payload acknowledged but not captured")
    out.append(capture_point(m))
    out.extend(lines(m))
    for side in ("a", "b"):
        st = [x for x in link.get("stalls", []) if x["side"] == side]
        if st:
            held = [x["end_s"] - x["start_s"] for x in st]
            out.append(f"path stalls on side {side.upper()}: {len(st)}, {min(held):.2f}-{max(held):.2f} s long, at "
                       + ", ".join(f"{x['start_s']:.1f} s" for x in st[:8]) + (" ..." if len(st) > 8 else ""))

    total = sum(sum(c["counts"]["bytes"]) for c in m["classes"]) + sum(
        sum(f["bytes"][0] + f["bytes"][1] for f in u["samples"]) for u in m["udp"]) or 1
    rows = []
    for c in m["classes"]:
        n = c["counts"]
        b = sum(n["bytes"])
        rows.append([c["name"], "tcp", f"clients {c['clients'].upper()}", f"{100 * b / total:.1f}%", f"{b:,}",
                     str(n["connections"]) + (f" ({n['concurrent_connections']} concurrent)" if n.get("concurrent_connections") else ""),
                     str(n["sessions"]), str(n["rres"]), str(n["pairs"])])
    for u in m["udp"]:
        b = sum(f["bytes"][0] + f["bytes"][1] for f in u["samples"])
        rows.append([u["name"], "udp", f"from {u['initiators'].upper()}", f"{100 * b / total:.1f}%", f"{b:,}",
                     f"{u['flows']} flows", "-", "-", "-"])
    out.append("\napplication mix:")
    out.append(render(["class", "proto", "direction", "share", "bytes", "conns", "sessions", "RREs", "pairs"], rows))

    rows = []
    for c in m["classes"]:
        def med(d, k=1.0, f="{:.3g}"):
            return f.format(np.median(np.asarray(d["values"]) * k)) if d["values"] else "-"

        rows.append([c["name"], med(c["rres_per_session"]), med(c["conns_per_rre"]), med(c["pairs_per_conn"]),
                     med(c["request_bytes"], f="{:.0f}"), med(c["response_bytes"], f="{:.0f}"),
                     med(c["think_s"], 1e3, "{:.0f}"), med(c["inter_rre_s"], 1e3, "{:.0f}"),
                     med(c.get("server_s", {"values": []}), 1e3, "{:.0f}"),
                     med(c.get("connect_wait_s", {"values": []}), 1e3, "{:.0f}")])
    if rows:
        out.append("\nmedians per class:")
        out.append(render(["class", "RREs/session", "conns/RRE", "pairs/conn", "request B", "response B",
                           "think ms", "inter-RRE ms", "server ms", "first wait ms"], rows))

    rows = []
    for side in ("a", "b"):
        hosts = [h for h in m["hosts"] if h["side"] == side]
        for label, get, scale, fmt in _HOST_ROWS:
            vals = [v for v in map(get, hosts) if v is not None]
            rows.append([side.upper(), label, *_q(vals, scale, fmt), f"of {len(hosts)}"])
        shaped = [h["shaper"] for h in hosts if h.get("shaper")]
        for label, key, scale, fmt in (("shaper Mbit/s", "rate_bps", 1e-6, "{:.3g}"), ("shaper burst kB", "burst_bytes", 1e-3, "{:.3g}")):
            rows.append([side.upper(), label, *_q([x[key] for x in shaped], scale, fmt), f"of {len(hosts)}"])
    out.append("\nhost network parameters (10th / 50th / 90th percentile over hosts with an estimate):")
    out.append(render(["side", "parameter", "p10", "p50", "p90", "hosts", ""], rows))
    for h in split_hosts(m):
        out.append(f"  {h['addr']} ({h['bytes_share'] * 100:.0f}% of the bytes) is behind a middlebox that terminates TCP: "
                   f"{h['split_samples']} of its ACK round trips took under half its fastest handshake (left out of its RTT)")
    return "\n".join(out)
