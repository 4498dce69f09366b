"""The Kenesi sweep: TCP's normalised throughput against a sine-rate UDP flow,
frequency by frequency, beside the ns-2 and ns-3 anchors' tables.

    python bench/kenesi_sweep.py [--config ns2-reno ...] [--freqs 0.4,0.462] [--phases 10]
                                 [--meas 600] [--jobs 2] [--markdown] [--events]
                                 [--anchor-phases] [--tcp 'key = value' ...]

One greedy TCP flow and a UDP flow at m + A·sin(2πft + α), A = m = 500 kbit/s,
share a 1 Mbit/s drop-tail bottleneck (30 ms round trip, 1000-byte packets):
examples/kenesi.toml, the setting of ../shared/anchors/ns2/sine_bg.tcl. For each
frequency f and phase α = 2π(j + 0.5)/n the flow's goodput over the measured
window (the first 20 s dropped, then the smallest whole number of sine periods of
at least `--meas` seconds; ns-3's anchor measures exactly 600 s) is divided by
500 kbit/s, counting 1000 bytes per 960-byte segment as both anchors do. The
window is measured as the difference of two runs, one ending where it starts and
one where it ends (a run's first seconds do not depend on its duration).

Configurations (`--config`, repeatable; all by default):

  ns2-reno         ns-2's Agent/TCP/Reno, defaults (minrto_ 0.2 s)   vs sine_bg_ns2.csv Reno
  ns2-reno-minrto1 the same with minrto_ 1 s                          vs Reno:minrto1
  ns2-tahoe, ns2-newreno   ns-2's Tahoe and NewReno                   vs Tahoe, Newreno
  ns3-newreno      ns-3's TcpNewReno as the ns-3 anchor sets it        vs ../ns3/sine_bg_ns3.csv
  ns3-newreno-ack1-rwnd20[-sack]  its variants (ACK per segment, 20-packet window[, SACK])
                                                                       vs ../ns3/variants/*.csv

It prints, per configuration and frequency, the mean over the phases, its
min-max, the reference's mean and the difference, and the paper's critical
frequencies f_min = 1/T and f_max (Kenesi et al., eq. for T). `--events` adds the
sender's retransmissions, fast recoveries and timeouts per run in the window beside
ns-3's (ns-3 counts timeout episodes, entries into CA_LOSS; this model every expiry).
`--anchor-phases` runs an ns-3 configuration at ns-3's own ten phases (its
results/*_runs.csv) and prints each run beside ns-3's. `--tcp` replaces or adds a
[tcp] setting in every configuration, to try one mechanism at a time.
"""

from __future__ import annotations

import argparse
import csv
import dataclasses
import math
import sys
import tempfile
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import pyarrow.parquet as pq

ANCHORS = Path(__file__).resolve().parents[2] / "shared" / "anchors"
if not ANCHORS.is_dir():
    ANCHORS = Path("/work/shared/anchors")

FREQS = [0.02, 0.03748, 0.07022, 0.1316, 0.18, 0.2466, 0.3, 0.35, 0.4, 0.462, 0.55, 0.65, 0.75,
         0.8658, 1.0, 1.2, 1.622, 3.04, 5.696, 10.67, 20.0]
NS3_FREQS = [0.02, 0.03748, 0.07022, 0.1316, 0.2466, 0.462, 0.8658, 1.622, 3.04, 5.696, 10.67, 20.0]
WARM_S = 20.0
FREE_BPS = 500e3  # the capacity the UDP flow leaves on average
WIRE_PER_SEGMENT = 1000 / 960  # both anchors count 1000-byte packets per 960-byte segment

NS2_LINK = {"rate": "1Mbps", "queue": "39p"}
# ns-3's point-to-point device adds a 2-byte PPP header to each 1000-byte IP packet
# and its 40-packet queue does not hold the packet in transmission.
NS3_LINK = {"rate": "998004bps", "queue": "40p"}


# ns-3.44's TcpNewReno with TcpClassicRecovery (`flavour = "ns3"`) as ../ns3/sine_bg.cc
# sets it: no SACK, no timestamps, 1 MiB buffers; its variants (--delAck=1 --rwnd=20
# [--sack=1]) ACK every segment and offer a 20-segment window.
NS3_TCP = 'flavour = "ns3"\nsack = false\ntimestamps = false\nrcv_buf = "1MiB"'
NS3_ACK1_RWND20 = ["ack_every = 1", 'rcv_buf = "19200B"']


def with_settings(tcp: str, extra: list[str]) -> str:
    """`tcp` (TOML lines) with each `key = value` of `extra` replacing the key's line or added."""
    lines = tcp.split("\n")
    for kv in extra:
        key = kv.split("=", 1)[0].strip()
        lines = [ln for ln in lines if ln.split("=", 1)[0].strip() != key] + [kv.strip()]
    return "\n".join(lines)


@dataclass(frozen=True)
class Config:
    name: str
    tcp: str
    link: dict
    reference: str  # file under ANCHORS
    column: str  # tcp_variant in the ns-2 table; "" for ns-3's
    whole_periods: bool = True


CONFIGS = {
    c.name: c
    for c in [
        Config("ns2-reno", 'flavour = "ns2"', NS2_LINK, "ns2/sine_bg_ns2.csv", "Reno"),
        Config("ns2-reno-minrto1", 'flavour = "ns2"\nmin_rto = "1s"', NS2_LINK, "ns2/sine_bg_ns2.csv", "Reno:minrto1"),
        Config("ns2-tahoe", 'flavour = "ns2"\ncongestion_control = "tahoe"', NS2_LINK, "ns2/sine_bg_ns2.csv", "Tahoe"),
        Config("ns2-newreno", 'flavour = "ns2"\ncongestion_control = "newreno"', NS2_LINK, "ns2/sine_bg_ns2.csv", "Newreno"),
        Config(
            "ns3-newreno",
            NS3_TCP,
            NS3_LINK,
            "ns3/sine_bg_ns3.csv",
            "",
            whole_periods=False,
        ),
        Config("ns3-newreno-ack1-rwnd20", with_settings(NS3_TCP, NS3_ACK1_RWND20),
               NS3_LINK, "ns3/variants/sine_bg_ns3_ack1_rwnd20.csv", "", whole_periods=False),
        Config("ns3-newreno-ack1-rwnd20-sack", with_settings(NS3_TCP, [*NS3_ACK1_RWND20, "sack = true"]),
               NS3_LINK, "ns3/variants/sine_bg_ns3_ack1_rwnd20_sack.csv", "", whole_periods=False),
    ]
}


def window_s(freq: float, meas: float, whole_periods: bool) -> float:
    """The measured window: whole sine periods of at least `meas` seconds (ns-2's anchor)."""
    if not whole_periods:
        return meas
    return math.ceil(meas * freq - 1e-9) / freq


def scenario(cfg: Config, freq: float, alpha: float, duration_s: float) -> str:
    tcp = cfg.tcp if "rcv_buf" in cfg.tcp else cfg.tcp + '\nrcv_buf = "960000B"'
    return f"""name = "kenesi"
duration = "{duration_s!r}s"
seed = 1

[topology.bottleneck]
rate = "{cfg.link['rate']}"
delay = "15ms"
queue = "{cfg.link['queue']}"

[topology.access]
rate = "100Mbps"
delay = "0ms"
queue = "10000p"

[tcp]
{tcp}
mss = "960B"
snd_buf = "4MiB"

[[background]]
model = "greedy"
name = "tcp"
spread = "0s"

[[background]]
model = "sine"
name = "udp"
transport = "udp"
rate = "500Kbps"
amplitude = "500Kbps"
frequency = {freq!r}
phase = {alpha!r}
packet_size = "1000B"
"""


# The sender's counters, over the measured window, beside ns-3's per-run means.
EVENTS = {"retransmits": "retx_pkts", "fast_recoveries": "fast_recoveries", "rtos": "rto_episodes"}


def tally(cfg: Config, freq: float, alpha: float, duration_s: float) -> dict[str, int]:
    """Bytes the TCP receiver had in order when a run of `duration_s` ended, and the
    sender's retransmissions, fast recoveries and timeouts by then."""
    from undertow import runner

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "kenesi.toml"
        path.write_text(scenario(cfg, freq, alpha, duration_s))
        runner.run_case(path, Path(d) / "run")
        rows = [r for r in pq.read_table(Path(d) / "run" / "records" / "connections.parquet").to_pylist() if r["app"] == "tcp"]
    out = {"delivered": sum(r["bytes_received"] for r in rows if not r["active"])}
    for k in EVENTS:
        out[k] = sum(r[k] for r in rows if r["active"])
    return out


def measure(args: tuple) -> dict[str, float]:
    """One (configuration, frequency, phase): normalised throughput and the sender's
    events in the measured window."""
    cfg, freq, alpha, meas = args
    w = window_s(freq, meas, cfg.whole_periods)
    end, start = tally(cfg, freq, alpha, WARM_S + w), tally(cfg, freq, alpha, WARM_S)
    out = {k: end[k] - start[k] for k in EVENTS}
    out["throughput"] = (end["delivered"] - start["delivered"]) * WIRE_PER_SEGMENT * 8 / w / FREE_BPS
    return out


def point(args: tuple) -> float:
    """Normalised throughput of one (configuration, frequency, phase)."""
    return measure(args)["throughput"]


def phases(n: int) -> list[float]:
    """α = 2π(j + 0.5)/n, j = 0…n-1: the ns-2 anchor's stratified phases."""
    return [2 * math.pi * (j + 0.5) / n for j in range(n)]


def reference(cfg: Config) -> dict[float, float]:
    """The anchor's mean normalised throughput per frequency."""
    return {f: row["throughput"] for f, row in reference_rows(cfg).items()}


def reference_rows(cfg: Config) -> dict[float, dict[str, float]]:
    """The anchor's row per frequency: mean throughput and (ns-3) the sender's events per run."""
    out = {}
    with open(ANCHORS / cfg.reference) as f:
        for row in csv.DictReader(f):
            if cfg.column:
                if row["tcp_variant"] == cfg.column:
                    out[float(row["freq_hz"])] = {"throughput": float(row["norm_throughput_mean"])}
            else:
                out[float(row["freq_hz"])] = {"throughput": float(row["norm_tput_goodput"])} | {
                    k: float(row[col]) for k, col in EVENTS.items()}
    return out


def anchor_runs(cfg: Config) -> dict[float, list[dict[str, float]]]:
    """ns-3's own runs per frequency (results/*_runs.csv): its phase α, goodput and events."""
    path = ANCHORS / "ns3" / "results" / (Path(cfg.reference).stem + "_runs.csv")
    out: dict[float, list[dict[str, float]]] = {}
    with open(path) as f:
        for row in csv.DictReader(f):
            out.setdefault(float(row["freq_hz"]), []).append(
                {"alpha": float(row["alpha"]), "throughput": float(row["tcp_goodput_norm"]),
                 "retransmits": float(row["retx_pkts"]), "fast_recoveries": float(row["fast_rec"]),
                 "rtos": float(row["rto_episodes"])})
    return out


def sweep(cfg: Config, freqs: list[float], alphas: dict[float, list[float]], meas: float, jobs: int) -> list[dict]:
    """Per frequency: mean, min and max over the phases `alphas[f]`, and each run."""
    tasks = [(cfg, f, a, meas) for f in freqs for a in alphas[f]]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        runs = iter(list(pool.map(measure, tasks)))
    rows = []
    for f in freqs:
        mine = [next(runs) for _ in alphas[f]]
        v = [r["throughput"] for r in mine]
        rows.append({"freq": f, "mean": sum(v) / len(v), "min": min(v), "max": max(v), "runs": mine}
                    | {k: sum(r[k] for r in mine) / len(mine) for k in EVENTS})
    return rows


def critical_frequencies(c_bps: float = 1e6, buffer_pkts: int = 40, rtt_s: float = 0.030, pkt_bits: float = 8000) -> tuple[float, float]:
    """Kenesi et al.: f_min = 1/T with T = (B/C + d)(B + C·d)/2, the period of a lone
    Reno flow's sawtooth, and f_max = 3C/(4πB), where TCP keeps about a third of the
    buffer. B in packets, C in packets per second, d the round-trip propagation delay."""
    c = c_bps / pkt_bits
    period = (buffer_pkts / c + rtt_s) * (buffer_pkts + c * rtt_s) / 2
    return 1 / period, 3 * c / (4 * math.pi * buffer_pkts)


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--config", action="append", choices=sorted(CONFIGS))
    p.add_argument("--freqs", help="comma-separated frequencies in Hz (default: the anchors')")
    p.add_argument("--phases", type=int, default=10)
    p.add_argument("--meas", type=float, default=600.0, help="least measured seconds")
    p.add_argument("--jobs", type=int, default=2)
    p.add_argument("--markdown", action="store_true", help="print markdown tables")
    p.add_argument("--anchor-phases", action="store_true",
                   help="ns-3 configurations: run ns-3's own ten phases and print each run beside ns-3's")
    p.add_argument("--events", action="store_true",
                   help="also print the sender's retransmissions, fast recoveries and timeouts per run (ns-3's beside)")
    p.add_argument("--tcp", action="append", default=[], metavar="KEY=VALUE",
                   help="a [tcp] setting replacing or added to each configuration's (TOML, repeatable)")
    a = p.parse_args(argv)
    f_min, f_max = critical_frequencies()
    print(f"paper's critical frequencies: f_min = {f_min:.3f} Hz, f_max = {f_max:.3f} Hz")
    for name in a.config or list(CONFIGS):
        cfg = CONFIGS[name]
        cfg = dataclasses.replace(cfg, tcp=with_settings(cfg.tcp, a.tcp))
        ref = reference_rows(cfg)
        freqs = [float(x) for x in a.freqs.split(",")] if a.freqs else (NS3_FREQS if not cfg.column else FREQS)
        own = anchor_runs(cfg) if a.anchor_phases and not cfg.column else {}
        alphas = {f: [r["alpha"] for r in own[f]] if own else phases(a.phases) for f in freqs}
        rows = sweep(cfg, freqs, alphas, a.meas, a.jobs)
        print(f"\n{name} (reference: {cfg.reference} {cfg.column or 'norm_tput_goodput'})")
        events = a.events and not cfg.column
        if a.markdown:
            extra = " retx / fast rec. / RTO | reference |" if events else ""
            print(f"\n| f (Hz) | undertow | min–max | reference | difference |{extra}\n|---:|---:|---:|---:|---:|"
                  + ("---:|---:|" if events else ""))
        else:
            extra = f" {'retx':>7} {'fr':>6} {'rto':>5} {'ref retx':>8} {'fr':>6} {'rto':>5}" if events else ""
            print(f"{'f Hz':>8} {'undertow':>9} {'min':>6} {'max':>6} {'ref':>6} {'diff':>7}{extra}")
        worst = 0.0
        for r in rows:
            want = ref.get(r["freq"], {})
            diff = r["mean"] - want["throughput"] if want else float("nan")
            worst = max(worst, abs(diff)) if want else worst
            mine = " / ".join(f"{r[k]:.0f}" for k in EVENTS)
            theirs = " / ".join(f"{want.get(k, math.nan):.0f}" for k in EVENTS)
            if a.markdown:
                extra = f" {mine} | {theirs} |" if events else ""
                print(f"| {r['freq']:g} | {r['mean']:.3f} | {r['min']:.2f}–{r['max']:.2f} "
                      f"| {want.get('throughput', math.nan):.3f} | {diff:+.3f} |{extra}")
            else:
                extra = "".join(f" {r[k]:>7.0f}" if k == "retransmits" else f" {r[k]:>6.0f}" for k in EVENTS) if events else ""
                extra += "".join(f" {want.get(k, math.nan):>8.0f}" if k == "retransmits" else f" {want.get(k, math.nan):>6.0f}"
                                 for k in EVENTS) if events else ""
                print(f"{r['freq']:>8g} {r['mean']:>9.3f} {r['min']:>6.3f} {r['max']:>6.3f} "
                      f"{want.get('throughput', math.nan):>6.3f} {diff:>+7.3f}{extra}")
            for alpha, mine, theirs in zip(alphas[r["freq"]], r["runs"], own.get(r["freq"], [])):
                print(f"   α {alpha:6.4f}: {mine['throughput']:.3f} "
                      + " / ".join(f"{mine[k]:.0f}" for k in EVENTS)
                      + f"   ns-3 {theirs['throughput']:.3f} " + " / ".join(f"{theirs[k]:.0f}" for k in EVENTS))
        print(f"largest difference: {worst:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
