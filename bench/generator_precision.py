"""How precisely the generators send: packet inter-arrival times (PIATs) at
the bottleneck against those asked for, as the precision and accuracy
paper measures a traffic generator (its eq. 2 and 3).

    python bench/generator_precision.py [--engine emu|sim] [--duration 20s] [-o DIR]

For each expected PIAT from 20 µs to 100 ms (1, 2 and 5 per decade) one
host sends 60-byte UDP packets as CBR (the paper's fixed 60-byte PL and
constant PIAT) through an otherwise idle 100 Mbit/s bottleneck, so no
queue forms and the gaps at its far end are the gaps the sender's packets
reached the bottleneck with: the generator's timer, the sending stack and,
in the emulator, the core's read. From the run's bottleneck capture:

- the mean error, |PIAT_E - mean(PIAT)| / PIAT_E (accuracy, eq. 2);
- the s.d. error, sd(PIAT) / PIAT_E (precision, eq. 3);

in percent, with the 1st and 99th percentiles of the PIATs and, in the
emulator, the generator's timer lateness (summary.json's
`engine.timer_lateness_us`). The figures also go to DIR/precision.json.
The simulator's schedule is exact to the nanosecond; its row is the check
that the measurement itself adds nothing.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from engines import UNDERTOW  # noqa: E402

from undertow import _core  # noqa: E402

PACKET_BYTES = 60
PIATS_S = [2e-5, 5e-5] + [m * 10.0**e for e in range(-4, -1) for m in (1, 2, 5)] + [0.1]


def case_name(piat: float) -> str:
    return f"piat_{round(piat * 1e6)}us"


def scenario(duration: str, piats_s: list[float]) -> str:
    cases = []
    for piat in piats_s:
        rate_bps = PACKET_BYTES * 8 / piat
        cases.append(f'[cases.{case_name(piat)}]\n'
                     f'background = [{{ model = "cbr", transport = "udp", rate = "{rate_bps:.6g}bps", '
                     f'hosts = 1, packet_size = {PACKET_BYTES} }}]\n')
    return f'''name = "generator-precision"
duration = "{duration}"
seed = 1

[topology.bottleneck]
rate = "100Mbps"
delay = "5ms"
queue = "1000p"

[topology.access]
rate = "1Gbps"
delay = "1ms"

[output]
pcap = true

''' + "\n".join(cases)


def piats(run: Path) -> np.ndarray:
    """Gaps between the datagrams that crossed the bottleneck (the run's only UDP flow)."""
    times = np.sort([d[0] for d in _core.udp_datagrams(str(run / "bottleneck.pcap"))])
    return np.diff(times)


def measure(engine: str, duration: str, out: Path, piats_s: list[float] = PIATS_S) -> dict | None:
    """Runs each PIAT in `engine` under `out` and returns the figures (None if the run failed)."""
    out.mkdir(parents=True, exist_ok=True)
    file = out / "generator-precision.toml"
    file.write_text(scenario(duration, piats_s))
    runs = out / engine
    run = [str(UNDERTOW), "run", str(file), "--engine", engine, "-o", str(runs), "--overwrite", "-q"]
    if subprocess.run(run).returncode != 0:
        return None
    rows = []
    for piat in piats_s:
        case = runs / case_name(piat)
        gaps = piats(case)
        timers = json.loads((case / "summary.json").read_text()).get("engine", {}).get("timer_lateness_us")
        rows.append({
            "piat_s": piat, "packets": len(gaps) + 1,
            "mean_error_pct": abs(piat - gaps.mean()) / piat * 100, "sd_error_pct": gaps.std() / piat * 100,
            "p1_s": float(np.percentile(gaps, 1)), "p99_s": float(np.percentile(gaps, 99)), "max_s": float(gaps.max()),
            "timer_p50_us": timers and timers["p50"], "timer_p99_us": timers and timers["p99"],
        })
    return {"engine": engine, "duration": duration, "packet_bytes": PACKET_BYTES, "rows": rows}


def print_table(r: dict) -> None:
    print(f"{r['engine']}: {r['packet_bytes']}-byte UDP packets, CBR, {r['duration']} a PIAT")
    print(f"{'PIAT_E ms':>10}{'packets':>9}{'mean err %':>12}{'s.d. err %':>12}{'p1 ms':>10}{'p99 ms':>10}{'timer p50/p99 us':>20}")
    for row in r["rows"]:
        timer = f"{row['timer_p50_us']:.0f}/{row['timer_p99_us']:.0f}" if row["timer_p50_us"] is not None else "-"
        print(f"{row['piat_s'] * 1e3:>10g}{row['packets']:>9}{row['mean_error_pct']:>12.3f}{row['sd_error_pct']:>12.3f}"
              f"{row['p1_s'] * 1e3:>10.4f}{row['p99_s'] * 1e3:>10.4f}{timer:>20}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--engine", choices=["emu", "sim"], default="emu")
    p.add_argument("--duration", default="20s")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/precision"))
    args = p.parse_args()
    r = measure(args.engine, args.duration, args.output)
    if r is None:
        return 1
    print_table(r)
    (args.output / f"precision-{args.engine}.json").write_text(json.dumps(r, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
