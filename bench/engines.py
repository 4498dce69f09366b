"""The simulator against the emulator on the same scenario, case by case.

    python bench/engines.py SCENARIO [--duration 120s] [--case NAME ...] [-o DIR] [--only sim|emu]

Runs every case of SCENARIO (or those named) in both engines, for
`--duration` each (the scenario's own if not given; the emulator runs in
real time), and prints per case the median and 90th percentile of the
first application's metric (download time for http) in each engine, the
ratio of the medians, and the two-sample Kolmogorov-Smirnov distance
between the two distributions. The figures also go to DIR/engines.json.
`--only ENGINE` runs that engine again and keeps the other's runs in DIR.
Targets (the emulator issue): medians within 15%, KS at most 0.15.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

UNDERTOW = Path(sys.executable).parent / "undertow"
MEDIAN_TOLERANCE = 0.15
KS_TARGET = 0.15


def ks_distance(a: np.ndarray, b: np.ndarray) -> float:
    """The largest gap between the two empirical distribution functions."""
    a, b = np.sort(a), np.sort(b)
    grid = np.concatenate([a, b])
    fa = np.searchsorted(a, grid, side="right") / len(a)
    fb = np.searchsorted(b, grid, side="right") / len(b)
    return float(np.max(np.abs(fa - fb)))


def with_duration(scenario: Path, duration: str | None, tmp: Path) -> Path:
    if duration is None:
        return scenario
    text = scenario.read_text()
    text, n = re.subn(r'^duration\s*=\s*"[^"]*"', f'duration = "{duration}"', text, count=1, flags=re.M)
    if n != 1:
        sys.exit(f"engines: {scenario}: no top-level duration to replace")
    out = tmp / scenario.name
    out.write_text(text)
    return out


def metric_values(run: Path) -> tuple[str, np.ndarray]:
    summary = json.loads((run / "summary.json").read_text())
    for name, app in summary["apps"].items():
        if app.get("metric"):
            table = pq.read_table(run / "records" / f"{name}.parquet")
            return name, np.asarray(table.column(app["metric"]).to_pylist(), dtype=float)
    sys.exit(f"engines: {run}: no application with a metric")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path)
    p.add_argument("--duration", help="replace the scenario's duration (e.g. 120s)")
    p.add_argument("--case", action="append", help="only this case (repeatable)")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/engines"))
    p.add_argument("--only", choices=["sim", "emu"], help="run this engine again; keep the other's runs")
    args = p.parse_args()
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        scenario = with_duration(args.scenario, args.duration, Path(tmp))
        cases = sum((["--case", c] for c in args.case or []), [])
        for engine in [args.only] if args.only else ["sim", "emu"]:
            out = args.output / engine
            print(f"engines: {engine}...", flush=True)
            subprocess.run([str(UNDERTOW), "run", str(scenario), "--engine", engine, "-o", str(out), "--overwrite", "-q", *cases],
                           check=True)
    missing = [e for e in ("sim", "emu") if not (args.output / e).is_dir()]
    if missing:
        print(f"engines: no {missing[0]} runs in {args.output} yet: run with --only {missing[0]} to compare")
        return 0
    names = sorted(d.name for d in (args.output / "sim").iterdir() if (d / "summary.json").exists())
    if not names:
        names = ["."]
    print(f"\n{'case':<14}{'sim p50':>9}{'emu p50':>9}{'ratio':>7}{'sim p90':>9}{'emu p90':>9}{'KS':>7}{'n sim/emu':>12}")
    for name in names:
        _, s = metric_values(args.output / "sim" / name)
        _, e = metric_values(args.output / "emu" / name)
        row = {
            "case": name, "sim_p50": float(np.median(s)), "emu_p50": float(np.median(e)),
            "sim_p90": float(np.percentile(s, 90)), "emu_p90": float(np.percentile(e, 90)),
            "ks": ks_distance(s, e), "n_sim": len(s), "n_emu": len(e),
        }
        row["ratio"] = row["emu_p50"] / row["sim_p50"]
        row["ok"] = abs(row["ratio"] - 1) <= MEDIAN_TOLERANCE and row["ks"] <= KS_TARGET
        rows.append(row)
        print(f"{name:<14}{row['sim_p50']:>9.3f}{row['emu_p50']:>9.3f}{row['ratio']:>7.2f}{row['sim_p90']:>9.3f}"
              f"{row['emu_p90']:>9.3f}{row['ks']:>7.2f}{len(s):>6}/{len(e):<5}{'' if row['ok'] else '  outside the targets'}")
    (args.output / "engines.json").write_text(json.dumps({"scenario": str(args.scenario), "duration": args.duration, "cases": rows}, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
