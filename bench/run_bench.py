"""Simulator speed, side by side with ns-3, in one invocation (`make bench`).

Runs the ns-3 dumbbell speed anchor (../shared/anchors/ns3/dumbbell_bench.cc,
built here against the `ns3` wheel from PyPI) and the same dumbbell in
undertow, one after the other on the same machine, and prints for both:
wall seconds, simulated seconds, bottleneck packets per wall second (all,
and data packets alone), events per wall second, peak memory and aggregate
throughput, plus the ratios. Then a swing background at scale
(bench/swing_scale.toml, web-espn-2010's model extracted from the shared
traces) against the dumbbell's speed, with its memory per open connection;
and, as root, the emulator's core (delay and rate error, capacity) and its
generators' timing (bench/generator_precision.py).
The figures also go to bench/results.json.
"""

from __future__ import annotations

import json
import os
import platform
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import generator_precision

ROOT = Path(__file__).resolve().parent.parent
ANCHOR = ROOT.parent / "shared" / "anchors" / "ns3"
BUILD = ROOT / "bench" / "build"
NS3_BIN = BUILD / "ns3" / "dumbbell_bench"
UNDERTOW = Path(sys.executable).parent / "undertow"

CASES = [
    # name, rate, flows, sim seconds, undertow scenario
    ("100M_50f_60s", "100Mbps", 50, 60, ROOT / "bench" / "dumbbell_100M.toml"),
    ("1G_100f_20s", "1Gbps", 100, 20, ROOT / "bench" / "dumbbell_1G.toml"),
]
RATE_BPS = {"100Mbps": 100e6, "1Gbps": 1e9}
TARGET_SPEEDUP = 30.0

# Swing at scale: web-espn-2010's model, 10,000 virtual hosts a side.
SWING_TRACE = ROOT.parent / "shared" / "traces" / "web-espn-2010.pcapng"
SWING_SCENARIO = ROOT / "bench" / "swing_scale.toml"
SWING_TARGET_OF_DUMBBELL = 0.7
SWING_TARGET_CONN_BYTES = 1024


def timed(cmd: list[str], **kw) -> tuple[str, float, float]:
    """Runs `cmd`; returns (stdout, wall seconds, peak RSS in MiB) of that process alone."""
    t0 = time.monotonic()
    p = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, **kw)
    out = p.stdout.read() if p.stdout else ""
    _, status, ru = os.wait4(p.pid, 0)
    wall = time.monotonic() - t0
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"bench: {' '.join(cmd)} failed:\n{out}")
    return out, wall, ru.ru_maxrss / 1024.0


def ensure_ns3() -> None:
    if NS3_BIN.exists():
        return
    if not (ANCHOR / "build.sh").exists():
        sys.exit(f"bench: the ns-3 anchor is missing: expected {ANCHOR}/build.sh (../shared beside the project)")
    try:
        import ns3  # noqa: F401
    except ImportError:
        print("bench: installing the ns3 wheel from PyPI (once)...", flush=True)
        subprocess.run([sys.executable, "-m", "pip", "install", "--quiet", "ns3"], check=True)
    print("bench: building the ns-3 anchor (once)...", flush=True)
    env = dict(os.environ, PYTHON=sys.executable, BIN_DIR=str(NS3_BIN.parent))
    subprocess.run(["bash", str(ANCHOR / "build.sh")], check=True, env=env, stdout=subprocess.DEVNULL)


def run_ns3(rate: str, flows: int, secs: int) -> dict:
    out, wall, rss = timed([str(NS3_BIN), f"--rate={rate}", "--delay=20ms", "--queue=100", f"--flows={flows}", f"--simTime={secs}"])
    kv = dict(re.findall(r"^(\w+)=([\d.]+)", out, re.M))
    m = re.search(r"bottleneck_pkts=(\d+) \(data_dir=(\d+) ack_dir=(\d+)\)", out)
    if not m or "run_wall_s" not in kv:
        sys.exit(f"bench: cannot read the ns-3 output:\n{out}")
    run_s = float(kv["run_wall_s"])
    pkts, data = int(m.group(1)), int(m.group(2))
    return {
        "wall_s": wall,
        "run_s": run_s,
        "sim_s": float(kv["sim_s"]),
        "bottleneck_packets": pkts,
        "data_packets": data,
        "events": int(kv["events"]),
        "peak_rss_mib": rss,
        # ns-3 counts the 2-byte PPP header; utilisation of the data direction.
        "throughput_bps": float(kv["bottleneck_util_data_dir"]) * RATE_BPS[rate],
    }


def run_undertow(scenario: Path, rate: str) -> dict:
    out_dir = BUILD / "runs" / scenario.stem
    _, wall, rss = timed([str(UNDERTOW), "run", str(scenario), "-o", str(out_dir), "-q", "--overwrite"])
    timing = json.loads((out_dir / "timing.json").read_text())
    summary = json.loads((out_dir / "summary.json").read_text())
    fwd, rev = summary["links"]["bottleneck_fwd"], summary["links"]["bottleneck_rev"]
    return {
        "wall_s": wall,
        "run_s": timing["wall_s"],
        "sim_s": summary["duration_s"],
        "bottleneck_packets": fwd["packets"] + rev["packets"],
        "data_packets": fwd["packets"],
        "events": timing["events"],
        "peak_rss_mib": rss,
        "throughput_bps": fwd["mean_rate_bps"],
    }


def bench_swing() -> dict:
    """The swing scale case: its model extracted once from the shared trace."""
    model = BUILD / "web-espn-2010.json"
    if not model.exists():
        if not SWING_TRACE.exists():
            sys.exit(f"bench: the shared trace is missing: expected {SWING_TRACE}")
        BUILD.mkdir(parents=True, exist_ok=True)
        timed([str(UNDERTOW), "extract", str(SWING_TRACE), "-o", str(model), "-q"])
    print("bench: swing scale (10,000 virtual hosts a side, 1 Gbit/s, 60 s)...", flush=True)
    r = rates(run_undertow(SWING_SCENARIO, "1Gbps"))
    timing = json.loads((BUILD / "runs" / SWING_SCENARIO.stem / "timing.json").read_text())
    summary = json.loads((BUILD / "runs" / SWING_SCENARIO.stem / "summary.json").read_text())
    # The responses (side B's, right to left) are most of the bytes.
    r["reverse_throughput_bps"] = summary["links"]["bottleneck_rev"]["mean_rate_bps"]
    r["peak_open_connections"] = timing["peak_open_connections"]
    r["connection_bytes"] = timing["connection_bytes"]
    # An upper bound: the whole process's peak over the most connections open at once.
    r["rss_per_open_connection"] = r["peak_rss_mib"] * 2**20 / max(1, r["peak_open_connections"])
    return r


def print_swing(s: dict, dumbbell: dict) -> None:
    ratio = s["packets_per_wall_s"] / dumbbell["packets_per_wall_s"]
    ok = "meets" if ratio >= SWING_TARGET_OF_DUMBBELL else "BELOW"
    print(f"\nswing scale: {s['bottleneck_packets']:,} bottleneck packets in {s['run_s']:.2f} s = "
          f"{s['packets_per_wall_s'] / 1e6:.2f} M packets/s ({ratio:.2f} of the 100M dumbbell's, {ok} the "
          f"{SWING_TARGET_OF_DUMBBELL:.1f} target), {s['events_per_wall_s'] / 1e6:.2f} M events/s, "
          f"{s['throughput_bps'] / 1e6:.0f} Mbit/s forward and {s['reverse_throughput_bps'] / 1e6:.0f} back, "
          f"peak RSS {s['peak_rss_mib']:.0f} MiB")
    ok = "meets" if s["connection_bytes"] < SWING_TARGET_CONN_BYTES else "ABOVE"
    print(f"  {s['peak_open_connections']:,} connections open at most; a connection's state {s['connection_bytes']} bytes "
          f"({ok} the {SWING_TARGET_CONN_BYTES} B target), peak RSS per open connection {s['rss_per_open_connection']:.0f} bytes")


def rates(r: dict) -> dict:
    r["packets_per_wall_s"] = r["bottleneck_packets"] / r["run_s"]
    r["data_packets_per_wall_s"] = r["data_packets"] / r["run_s"]
    r["events_per_wall_s"] = r["events"] / r["run_s"]
    return r


TRACE = ROOT.parent / "shared" / "traces" / "auckland-atm-2000.pcap"
EXTRACT_TARGET_PPS = 2e6


def repeated_trace(path: Path, copies: int) -> Path:
    """The trace repeated `copies` times, each copy shifted to start 1 s after
    the previous one ends (a longer observation of the same link), as pcap."""
    import struct

    out = BUILD / f"{path.stem}-x{copies}.pcap"
    if out.exists():
        return out
    data = path.read_bytes()
    magic = struct.unpack("<I", data[:4])[0]
    if magic not in (0xA1B2C3D4, 0xA1B23C4D):
        sys.exit(f"bench: {path} is not a little-endian pcap")
    scale = 1_000_000 if magic == 0xA1B2C3D4 else 1_000_000_000
    recs = []
    i = 24
    while i + 16 <= len(data):
        sec, frac, cap, orig = struct.unpack("<IIII", data[i:i + 16])
        recs.append((sec * scale + frac, data[i + 8:i + 16 + cap]))
        i += 16 + cap
    span = max(t for t, _ in recs) - min(t for t, _ in recs) + scale
    BUILD.mkdir(parents=True, exist_ok=True)
    with open(out.with_suffix(".tmp"), "wb") as f:
        f.write(data[:24])
        for k in range(copies):
            for t, rest in recs:
                t += k * span
                f.write(struct.pack("<II", t // scale, t % scale))
                f.write(rest)
    out.with_suffix(".tmp").rename(out)
    return out


def bench_extract() -> dict:
    """undertow extract against tshark's TCP conversation table on the same file."""
    res = {}
    n = 31_249  # packets in the trace (its README)
    for copies in (32, 160):
        f = repeated_trace(TRACE, copies)
        packets = n * copies
        print(f"bench: extract {f.name} ({packets:,} packets)...", flush=True)
        model = BUILD / f"{f.stem}.json"
        _, wall, rss = timed([str(UNDERTOW), "extract", str(f), "-o", str(model), "-q"])
        res[f"undertow_{copies}"] = {"packets": packets, "wall_s": wall, "packets_per_s": packets / wall, "peak_rss_mib": rss}
        if copies == 160 and shutil.which("tshark"):
            # Sequence analysis feeds nothing in the conversation table and
            # makes tshark ten times slower (and superlinear: 618 s here on
            # this file with it on), so it is off: tshark at its fastest.
            print("bench: tshark -q -z conv,tcp on the same file...", flush=True)
            _, wall, rss = timed(["tshark", "-n", "-r", str(f), "-q", "-z", "conv,tcp",
                                  "-o", "tcp.analyze_sequence_numbers:FALSE", "-o", "tcp.calculate_timestamps:FALSE"])
            res["tshark_160"] = {"packets": packets, "wall_s": wall, "packets_per_s": packets / wall, "peak_rss_mib": rss}
    return res


EMU_TARGETS = {"delay_p99_us": 100.0, "rate_error": 0.01, "capacity_mbps": 1000.0}


def bench_emu() -> dict:
    """The emulator core's delay and rate error and its capacity (crates/emu/examples/core_bench.rs)."""
    print("bench: emulator core (root, namespaces and TUN)...", flush=True)
    subprocess.run(["cargo", "build", "--quiet", "--release", "-p", "emu", "--example", "core_bench"], check=True, cwd=ROOT)
    out = subprocess.run([str(ROOT / "target" / "release" / "examples" / "core_bench")], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def bench_generators() -> dict:
    """The emulator's generators' PIAT precision and accuracy (bench/generator_precision.py)."""
    if os.geteuid() != 0 or not Path("/dev/net/tun").exists():
        return {"skipped": "the emulator needs root and /dev/net/tun"}
    print("bench: the emulator's generators, CBR at PIATs of 20 µs to 100 ms...", flush=True)
    r = generator_precision.measure("emu", "20s", ROOT / "runs" / "bench-precision")
    return r if r is not None else {"skipped": "the emulator's run failed (its error is above)"}


def print_generators(g: dict) -> None:
    if "skipped" in g:
        print(f"\nemulator generators: skipped: {g['skipped']}")
        return
    worst = max(g["rows"], key=lambda r: max(r["mean_error_pct"], r["sd_error_pct"]))
    errors = ", ".join(f"{r['piat_s'] * 1e3:g} ms {r['mean_error_pct']:.2f}/{r['sd_error_pct']:.2f}" for r in g["rows"])
    print(f"\nemulator generators, {g['packet_bytes']}-byte UDP CBR through an idle bottleneck, PIAT mean/s.d. error % "
          f"(the precision paper's eq. 2 and 3): {errors}; the largest at {worst['piat_s'] * 1e3:g} ms")


def print_emu(e: dict) -> None:
    if "skipped" in e:
        print(f"\nemulator core: skipped: {e['skipped']}")
        return
    u, t, c = e["rate_udp"], e["rate_tcp"], e["capacity"]
    # A run takes the core's measured overhead off each packet's route:
    # the corrected figures are what a run's packets see, the raw ones
    # what the core adds before that.
    d, raw = e["delay"]["corrected"], e["delay"]["raw"]
    t_ = EMU_TARGETS
    late, err, read = d["core_lateness_us"], d["delay_error_us"], d["delay_error_at_read_us"]
    print(f"\nemulator core, {d['link']} (load at {e['load_priority']}): one-way delay error p50 {err['p50']:.0f} us, "
          f"p99 {err['p99']:.0f} us from the sender's send to the receiving kernel's arrival stamp, the core's overhead "
          f"({d['overhead_taken_out_us']:.0f} us) taken out "
          f"({'meets' if err['p99'] <= t_['delay_p99_us'] else 'BELOW'} the {t_['delay_p99_us']:.0f} us target; left in: "
          f"p50 {raw['delay_error_us']['p50']:.0f} us, p99 {raw['delay_error_us']['p99']:.0f} us); "
          f"p50 {read['p50']:.0f} us, p99 {read['p99']:.0f} us once the receiving thread has woken and read it; "
          f"core lateness p50 {late['p50']:.0f} us, p99 {late['p99']:.0f} us")
    ok = "meets" if abs(u["rate_error"]) <= t_["rate_error"] else "BELOW"
    print(f"  rate under a UDP flood {u['measured_mbps']:.2f} Mbit/s: error {u['rate_error'] * 100:+.3f}% ({ok} the 1% target); "
          f"one TCP transfer's goodput {t['goodput_mbps']:.1f} Mbit/s")
    loads = ", ".join(f"{r['carried_mbps']:.0f} ({'ok' if r['ok'] else 'p99 ' + format(r['core_lateness_p99_us'], '.0f') + ' us'}"
                      f", longest gap {r['longest_gap_ms']:.1f} ms)" for r in c["loads"])
    ok = "meets" if c["highest_ok_mbps"] >= t_["capacity_mbps"] else "BELOW"
    print(f"  1500-byte packets forwarded whole, p99 lateness <= 100 us, no TUN drops: up to {c['highest_ok_mbps']:.0f} Mbit/s "
          f"({ok} the 1 Gbit/s target); {c['load_s']:g} s a load, carried Mbit/s: {loads}")


def main() -> int:
    results = {"machine": platform.node(), "python": platform.python_version(), "cases": {}}
    results["emu"] = bench_emu()
    results["generators"] = bench_generators()
    ex = bench_extract()
    results["extract"] = ex
    ensure_ns3()
    rows = []
    for name, rate, flows, secs, scenario in CASES:
        print(f"bench: {name}: undertow...", flush=True)
        u = rates(run_undertow(scenario, rate))
        print(f"bench: {name}: ns-3 (slow)...", flush=True)
        n = rates(run_ns3(rate, flows, secs))
        case = {
            "undertow": u,
            "ns3": n,
            "speedup_vs_ns3": u["packets_per_wall_s"] / n["packets_per_wall_s"],
            "data_speedup_vs_ns3": u["data_packets_per_wall_s"] / n["data_packets_per_wall_s"],
            "throughput_ratio": u["throughput_bps"] / n["throughput_bps"],
            "memory_ratio": u["peak_rss_mib"] / n["peak_rss_mib"],
        }
        results["cases"][name] = case
        rows.append((name, case))
    results["swing_scale"] = bench_swing()

    print()
    hdr = (f"{'case':<14}{'engine':<10}{'wall s':>8}{'run s':>8}{'sim s':>7}{'bn pkts/s':>12}{'data pkts/s':>13}"
           f"{'events/s':>12}{'RSS MiB':>9}{'Mbit/s':>9}")
    print(hdr)
    print("-" * len(hdr))
    for name, c in rows:
        for eng in ("undertow", "ns3"):
            r = c[eng]
            print(f"{name:<14}{eng:<10}{r['wall_s']:>8.2f}{r['run_s']:>8.2f}{r['sim_s']:>7.0f}{r['packets_per_wall_s']:>12,.0f}"
                  f"{r['data_packets_per_wall_s']:>13,.0f}{r['events_per_wall_s']:>12,.0f}{r['peak_rss_mib']:>9.1f}{r['throughput_bps'] / 1e6:>9.2f}")
        ok = "meets" if c["speedup_vs_ns3"] >= TARGET_SPEEDUP else "BELOW"
        tp = "within 5%" if abs(c["throughput_ratio"] - 1) <= 0.05 else "NOT within 5%"
        print(f"{'':<14}ratio     packets/s ×{c['speedup_vs_ns3']:.1f} ({ok} the ×{TARGET_SPEEDUP:.0f} target), "
              f"data packets/s ×{c['data_speedup_vs_ns3']:.1f}, "
              f"memory ×{c['memory_ratio']:.2f}, throughput ×{c['throughput_ratio']:.3f} ({tp})")
    print("\nextraction (one core): " + ", ".join(
        f"{k}: {v['packets']:,} packets in {v['wall_s']:.2f} s = {v['packets_per_s'] / 1e6:.2f} M packets/s, peak RSS {v['peak_rss_mib']:.1f} MiB"
        for k, v in ex.items()))
    u = ex["undertow_160"]
    ok = "meets" if u["packets_per_s"] >= EXTRACT_TARGET_PPS else "BELOW"
    print(f"extract {ok} the {EXTRACT_TARGET_PPS / 1e6:.0f} M packets/s target; memory ×{u['peak_rss_mib'] / ex['undertow_32']['peak_rss_mib']:.2f} "
          "for ×5 the packets"
          + (f"; ×{u['packets_per_s'] / ex['tshark_160']['packets_per_s']:.0f} tshark's packets/s" if "tshark_160" in ex else ""))
    print_swing(results["swing_scale"], results["cases"]["100M_50f_60s"]["undertow"])
    print_emu(results["emu"])
    print_generators(results["generators"])
    out = ROOT / "bench" / "results.json"
    out.write_text(json.dumps(results, indent=2) + "\n")
    print(f"\nwritten: {out.relative_to(ROOT)}")
    return 0


if __name__ == "__main__":
    if not UNDERTOW.exists() and shutil.which("undertow") is None:
        sys.exit("bench: the undertow command is not installed: run `make bench`")
    sys.exit(main())
