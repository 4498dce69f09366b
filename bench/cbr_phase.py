"""CBR over TCP from two hosts: how the sources' schedules sit against each
other, and the background's losses and the downloads' that follow.

    python bench/cbr_phase.py RUNDIR [RUNDIR ...]

Each RUNDIR is one case's run directory (either engine) whose background is
one `cbr` model over TCP from two hosts, recorded with `[output] pcap =
true`. Per run it prints:

- phase: how far apart the two sources' write schedules lie, the nearer
  way round their common period, in ms (the median over one-second
  windows).
  A source writes one packet's payload every period and, while it is not
  behind, TCP sends it at once; so a segment reaches the far end of the
  bottleneck at its last byte's scheduled write plus the path's fixed
  delay plus its queueing, and the first percentile of that excess per
  window is the schedule's offset (plus the fixed delay, the same for
  both sources). Two sources whose packets reach the queue back to back
  (a phase near one packet's service time) lose together far more often.
- the background's loss episodes (segments sent again within 0.3 s of
  each other) and how many took packets of both sources;
- the share of downloads that lost a segment, and the download time's
  10th, 50th and 90th percentiles (the first application with a metric).
"""

from __future__ import annotations

import ipaddress
import re
import sys
from pathlib import Path

import numpy as np
from engines import metric_values

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

from undertow import _core

EPISODE_GAP_S = 0.3
WINDOW_S = 1.0


def read_pcap(path: Path) -> np.ndarray:
    """TCP data segments of a capture, IPv4 only: rows of (time s, src,
    sport, dst, dport, seq, payload bytes), addresses as integers."""
    try:
        segments = _core.tcp_segments(str(path))
    except _core.InputError as e:
        sys.exit(f"cbr_phase: {e}")
    addr: dict[str, int] = {}

    def v4(a: str) -> int:
        if a not in addr:
            addr[a] = int(ipaddress.IPv4Address(a))
        return addr[a]

    rows = [(t, v4(src), sport, v4(dst), dport, seq, payload)
            for t, src, sport, dst, dport, seq, payload, _ in segments if payload > 0 and ":" not in src]
    return np.array(rows, dtype=np.float64).reshape(-1, 7)


def size_bytes(text: str) -> int:
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*(B|KB|MB)\s*", text)
    if not m:
        sys.exit(f"cbr_phase: packet_size {text!r}: expected a size such as 1KB")
    return int(float(m[1]) * {"B": 1, "KB": 1000, "MB": 1000_000}[m[2]])


def cbr_period(scenario: dict, run: Path) -> float:
    """The per-host gap of the run's one CBR-over-TCP model, seconds."""
    models = [m for m in scenario.get("background", []) if m.get("model") == "cbr" and m.get("transport") == "tcp"]
    if len(models) != 1 or models[0].get("hosts") != 2:
        sys.exit(f"cbr_phase: {run}: needs exactly one cbr model over TCP from 2 hosts")
    m = models[0]
    rate = m["rate"]
    if rate.endswith("%"):
        bps = float(rate[:-1]) / 100 * _core.parse_rate(scenario["topology"]["bottleneck"]["rate"])
    else:
        bps = _core.parse_rate(rate)
    return size_bytes(m.get("packet_size", "1KB")) * 8 / (bps / 2)


def first_sends(seg: np.ndarray) -> np.ndarray:
    """The segments of one flow that carry new data (not sent again)."""
    rel = (seg[:, 5].astype(np.int64) - int(seg[0, 5])) % 2**32
    reach = np.maximum.accumulate(rel + seg[:, 6].astype(np.int64))
    new = np.r_[True, rel[1:] >= reach[:-1]]
    return new


def phase(sources: list[np.ndarray], period: float) -> float:
    """How far apart the two sources' schedules lie (median over windows), s."""
    excess = []
    for seg in sources:
        seg = seg[first_sends(seg)]
        rel = (seg[:, 5].astype(np.int64) - int(seg[0, 5])) % 2**32
        payload = np.bincount(seg[:, 6].astype(np.int64)).argmax()  # one write's bytes
        writes = np.ceil((rel + seg[:, 6]) / payload)
        excess.append((seg[:, 0], seg[:, 0] - writes * period))
    (t0, e0), (t1, e1) = excess
    out = []
    for w in np.arange(max(t0[0], t1[0]), min(t0[-1], t1[-1]) - WINDOW_S, WINDOW_S):
        a, b = e0[(t0 >= w) & (t0 < w + WINDOW_S)], e1[(t1 >= w) & (t1 < w + WINDOW_S)]
        if len(a) > 10 and len(b) > 10:
            d = (np.percentile(a, 1) - np.percentile(b, 1)) % period
            out.append(min(d, period - d))
    return float(np.median(out)) if out else float("nan")


def resent_times(seg: np.ndarray) -> np.ndarray:
    return seg[~first_sends(seg), 0]


def episodes(sources: list[np.ndarray]) -> tuple[int, int]:
    """Loss episodes of the background, and those that took both sources' packets."""
    events = sorted((t, k) for k, seg in enumerate(sources) for t in resent_times(seg))
    groups: list[tuple[float, set]] = []
    for t, k in events:
        if groups and t - groups[-1][0] < EPISODE_GAP_S:
            groups[-1] = (t, groups[-1][1] | {k})
        else:
            groups.append((t, {k}))
    return len(groups), sum(1 for _, who in groups if len(who) == 2)


def report(run: Path) -> str:
    pcap = run / "bottleneck.pcap"
    if not pcap.exists():
        sys.exit(f"cbr_phase: {run}: no bottleneck.pcap (run with [output] pcap = true)")
    scenario = tomllib.loads((run / "scenario.toml").read_text())
    period = cbr_period(scenario, run)
    engine = scenario.get("engine", "sim")
    left = [ipaddress.ip_network(p) for p in _core.side_prefixes(engine)[0] if ":" not in p]
    seg = read_pcap(pcap)
    src = seg[:, 1].astype(np.int64)
    fwd = np.zeros(len(seg), dtype=bool)
    for n in left:
        shift = 32 - n.prefixlen
        fwd |= (src >> shift) == int(n.network_address) >> shift
    seg = seg[fwd]
    flows: dict[tuple, list[int]] = {}
    for i, row in enumerate(seg[:, 1:5].astype(np.int64)):
        flows.setdefault(tuple(row), []).append(i)
    span = seg[-1, 0] - seg[0, 0]
    by_life = sorted(flows.values(), key=lambda ix: seg[ix[-1], 0] - seg[ix[0], 0], reverse=True)
    sources = [seg[ix] for ix in by_life[:2]]
    if any(s[-1, 0] - s[0, 0] < span / 2 for s in sources):
        sys.exit(f"cbr_phase: {run}: no two long background connections")
    downloads = [seg[ix] for ix in by_life[2:] if len(ix) > 100]
    lost = sum(1 for d in downloads if len(resent_times(d)) > 0)
    n_ep, both = episodes(sources)
    p10, p50, p90 = np.percentile(metric_values(run)[1], [10, 50, 90])
    return (f"{run}: phase {phase(sources, period) * 1e3:.3f} ms of {period * 1e3:.3f}; background loss episodes "
            f"{n_ep} ({n_ep / span:.2f}/s), {both} of both sources; downloads with a loss {lost} of {len(downloads)} "
            f"({100 * lost / max(len(downloads), 1):.0f}%); download time p10 {p10:.3f} p50 {p50:.3f} p90 {p90:.3f} s")


def main() -> int:
    if len(sys.argv) < 2:
        sys.exit(__doc__)
    for arg in sys.argv[1:]:
        print(report(Path(arg)))
    return 0


if __name__ == "__main__":
    sys.exit(main())
