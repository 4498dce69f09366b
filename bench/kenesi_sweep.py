"""The Kenesi sweep: TCP's normalised throughput against a sine-rate UDP flow,
frequency by frequency, beside the ns-2 and ns-3 anchors' tables.

    python bench/kenesi_sweep.py [--config ns2-reno ...] [--freqs 0.4,0.462] [--phases 10]
                                 [--meas 600] [--jobs 2] [--markdown]

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
frequencies f_min = 1/T and f_max (Kenesi et al., eq. for T).
"""

from __future__ import annotations

import argparse
import csv
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


# ns-3.44 TcpNewReno + TcpClassicRecovery as ../ns3/sine_bg.cc sets it: no SACK, no
# timestamps, delayed ACK every 2 segments with its 200 ms timer, MinRto 1 s, per-ACK
# window growth, initial window 10, 1 MiB buffers.
NS3_TCP = ('congestion_control = "newreno"\nsack = false\ntimestamps = false\nquickack = 0\n'
           'ack_every = 2\ndelack_timeout = "200ms"\nmin_rto = "1s"\nbyte_counting = false\n'
           'rcv_buf = "1MiB"')


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
        Config("ns3-newreno-ack1-rwnd20", NS3_TCP.replace("ack_every = 2", "ack_every = 1").replace('"1MiB"', '"19200B"'),
               NS3_LINK, "ns3/variants/sine_bg_ns3_ack1_rwnd20.csv", "", whole_periods=False),
        Config("ns3-newreno-ack1-rwnd20-sack",
               NS3_TCP.replace("ack_every = 2", "ack_every = 1").replace('"1MiB"', '"19200B"').replace("sack = false", "sack = true"),
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


def delivered_bytes(cfg: Config, freq: float, alpha: float, duration_s: float) -> int:
    """Bytes the TCP receiver had in order when a run of `duration_s` ended."""
    from undertow import runner

    with tempfile.TemporaryDirectory() as d:
        path = Path(d) / "kenesi.toml"
        path.write_text(scenario(cfg, freq, alpha, duration_s))
        runner.run_case(path, Path(d) / "run")
        rows = pq.read_table(Path(d) / "run" / "records" / "connections.parquet").to_pylist()
    return sum(r["bytes_received"] for r in rows if r["app"] == "tcp" and not r["active"])


def point(args: tuple) -> float:
    """Normalised throughput of one (configuration, frequency, phase)."""
    name, freq, alpha, meas = args
    cfg = CONFIGS[name]
    w = window_s(freq, meas, cfg.whole_periods)
    got = delivered_bytes(cfg, freq, alpha, WARM_S + w) - delivered_bytes(cfg, freq, alpha, WARM_S)
    return got * WIRE_PER_SEGMENT * 8 / w / FREE_BPS


def phases(n: int) -> list[float]:
    """α = 2π(j + 0.5)/n, j = 0…n-1: the ns-2 anchor's stratified phases."""
    return [2 * math.pi * (j + 0.5) / n for j in range(n)]


def reference(cfg: Config) -> dict[float, float]:
    """The anchor's mean normalised throughput per frequency."""
    out = {}
    with open(ANCHORS / cfg.reference) as f:
        for row in csv.DictReader(f):
            if cfg.column:
                if row["tcp_variant"] == cfg.column:
                    out[float(row["freq_hz"])] = float(row["norm_throughput_mean"])
            else:
                out[float(row["freq_hz"])] = float(row["norm_tput_goodput"])
    return out


def sweep(name: str, freqs: list[float], n_phases: int, meas: float, jobs: int) -> list[dict]:
    """Per frequency: mean, min and max over the phases."""
    tasks = [(name, f, a, meas) for f in freqs for a in phases(n_phases)]
    with ProcessPoolExecutor(max_workers=jobs) as pool:
        values = list(pool.map(point, tasks))
    rows = []
    for i, f in enumerate(freqs):
        v = values[i * n_phases:(i + 1) * n_phases]
        rows.append({"freq": f, "mean": sum(v) / len(v), "min": min(v), "max": max(v)})
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
    a = p.parse_args(argv)
    f_min, f_max = critical_frequencies()
    print(f"paper's critical frequencies: f_min = {f_min:.3f} Hz, f_max = {f_max:.3f} Hz")
    for name in a.config or list(CONFIGS):
        cfg = CONFIGS[name]
        ref = reference(cfg)
        freqs = [float(x) for x in a.freqs.split(",")] if a.freqs else (NS3_FREQS if not cfg.column else FREQS)
        rows = sweep(name, freqs, a.phases, a.meas, a.jobs)
        print(f"\n{name} (reference: {cfg.reference} {cfg.column or 'norm_tput_goodput'})")
        if a.markdown:
            print("\n| f (Hz) | undertow | min–max | reference | difference |\n|---:|---:|---:|---:|---:|")
        else:
            print(f"{'f Hz':>8} {'undertow':>9} {'min':>6} {'max':>6} {'ref':>6} {'diff':>7}")
        worst = 0.0
        for r in rows:
            want = ref.get(r["freq"])
            diff = r["mean"] - want if want is not None else float("nan")
            worst = max(worst, abs(diff)) if want is not None else worst
            if a.markdown:
                print(f"| {r['freq']:g} | {r['mean']:.3f} | {r['min']:.2f}–{r['max']:.2f} | {want:.3f} | {diff:+.3f} |")
            else:
                print(f"{r['freq']:>8g} {r['mean']:>9.3f} {r['min']:>6.3f} {r['max']:>6.3f} {want:>6.3f} {diff:>+7.3f}")
        print(f"largest difference: {worst:.3f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
