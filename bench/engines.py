"""The simulator against the emulator on the same scenario, case by case.

    python bench/engines.py SCENARIO [--duration 120s] [--case NAME ...] [-o DIR] [--only sim|emu] [--seeds 1-8]

Runs every case of SCENARIO (or those named) in both engines, for
`--duration` each (the scenario's own if not given; the emulator runs in
real time), and prints per case the median and 90th percentile of the
first application's metric (download time for http) in each engine, the
ratio of the medians, and the two-sample Kolmogorov-Smirnov distance
between the two distributions with its p-value: how often two samples of
these sizes from one distribution lie that far apart (asymptotic; a
run's downloads are not independent draws, so it is a guide, not a
test). The figures also go to DIR/engines.json. `--only ENGINE` runs
that engine again and keeps the other's runs in DIR. `--seeds` runs the
simulator once per seed (DIR/sim/seed-N) and pools their values, the KS
range over the seeds printed beside the pooled one. Both engines draw a
scenario's sources (a CBR source's first packet, each Poisson gap) from
its seed, so the simulator at the emulator run's seed shares its draws,
and other seeds show how far the draws alone move a case. Targets (the
emulator issue): medians within 15%, KS at most 0.15.
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


def ks_p_value(d: float, n: int, m: int) -> float:
    """The asymptotic probability that two samples of `n` and `m` values from
    one continuous distribution are at least `d` apart (the Kolmogorov
    distribution with Stephens' small-sample correction)."""
    if d <= 0:
        return 1.0
    ne = n * m / (n + m)
    lam = (np.sqrt(ne) + 0.12 + 0.11 / np.sqrt(ne)) * d
    if lam < 0.2:
        return 1.0
    k = np.arange(1, 101)
    q = 2.0 * np.sum((-1.0) ** (k - 1) * np.exp(-2.0 * (k * lam) ** 2))
    return float(min(max(q, 0.0), 1.0))


def parse_seeds(text: str) -> list[int]:
    """`1-8` or `1,2,5`: the seeds."""
    seeds: list[int] = []
    for part in text.split(","):
        lo, sep, hi = part.strip().partition("-")
        try:
            first, last = int(lo), int(hi) if sep else int(lo)
        except ValueError:
            raise argparse.ArgumentTypeError(f"--seeds: {part.strip()!r} is not a seed or a range such as 1-8") from None
        if first < 0 or last < first:
            raise argparse.ArgumentTypeError(f"--seeds: {part.strip()!r}: a range runs from a smaller seed to a larger one, from 0")
        seeds.extend(range(first, last + 1))
    return sorted(set(seeds))


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


def sim_runs(output: Path, seeds: list[int] | None) -> list[Path]:
    """The simulator's run directories: one, or one per seed."""
    return [output / "sim"] if not seeds else [output / "sim" / f"seed-{n}" for n in seeds]


def run_engines(scenario: Path, output: Path, engines: list[str], seeds: list[int] | None, cases: list[str]) -> None:
    for engine in engines:
        runs = sim_runs(output, seeds) if engine == "sim" else [output / "emu"]
        for i, out in enumerate(runs):
            seed = ["--seed", str(seeds[i])] if engine == "sim" and seeds else []
            print(f"engines: {engine}{f' seed {seeds[i]}' if seed else ''}...", flush=True)
            subprocess.run([str(UNDERTOW), "run", str(scenario), "--engine", engine, "-o", str(out), "--overwrite", "-q", *seed, *cases],
                           check=True)


def compare(name: str, sims: list[np.ndarray], e: np.ndarray) -> dict:
    s = np.concatenate(sims)
    row = {
        "case": name, "sim_p50": float(np.median(s)), "emu_p50": float(np.median(e)),
        "sim_p90": float(np.percentile(s, 90)), "emu_p90": float(np.percentile(e, 90)),
        "ks": ks_distance(s, e), "n_sim": len(s), "n_emu": len(e),
    }
    row["ks_p"] = ks_p_value(row["ks"], len(s), len(e))
    if len(sims) > 1:
        row["ks_per_seed"] = [ks_distance(x, e) for x in sims]
    row["ratio"] = row["emu_p50"] / row["sim_p50"]
    row["ok"] = abs(row["ratio"] - 1) <= MEDIAN_TOLERANCE and row["ks"] <= KS_TARGET
    return row


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("scenario", type=Path)
    p.add_argument("--duration", help="replace the scenario's duration (e.g. 120s)")
    p.add_argument("--case", action="append", help="only this case (repeatable)")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/engines"))
    p.add_argument("--only", choices=["sim", "emu"], help="run this engine again; keep the other's runs")
    p.add_argument("--seeds", type=parse_seeds, help="the simulator's seeds, pooled (e.g. 1-8 or 1,3,5)")
    args = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        scenario = with_duration(args.scenario, args.duration, Path(tmp))
        cases = sum((["--case", c] for c in args.case or []), [])
        run_engines(scenario, args.output, [args.only] if args.only else ["sim", "emu"], args.seeds, cases)
    sims = sim_runs(args.output, args.seeds)
    missing = [str(d) for d in [*sims, args.output / "emu"] if not d.is_dir()]
    if missing:
        print(f"engines: no runs in {missing[0]} yet: run that engine with --only (and the same --seeds) to compare")
        return 0
    names = sorted(d.name for d in sims[0].iterdir() if (d / "summary.json").exists())
    if not names:
        names = ["."]
    seeds_note = f" (simulator seeds {','.join(map(str, args.seeds))} pooled)" if args.seeds else ""
    print(f"\n{'case':<14}{'sim p50':>9}{'emu p50':>9}{'ratio':>7}{'sim p90':>9}{'emu p90':>9}{'KS':>7}{'p':>8}{'n sim/emu':>12}{seeds_note}")
    rows = []
    for name in names:
        row = compare(name, [metric_values(d / name)[1] for d in sims], metric_values(args.output / "emu" / name)[1])
        rows.append(row)
        per_seed = f"  KS per seed {min(row['ks_per_seed']):.2f}-{max(row['ks_per_seed']):.2f}" if "ks_per_seed" in row else ""
        print(f"{name:<14}{row['sim_p50']:>9.3f}{row['emu_p50']:>9.3f}{row['ratio']:>7.2f}{row['sim_p90']:>9.3f}"
              f"{row['emu_p90']:>9.3f}{row['ks']:>7.2f}{row['ks_p']:>8.3f}{row['n_sim']:>6}/{row['n_emu']:<5}{per_seed}"
              f"{'' if row['ok'] else '  outside the targets'}")
    summary = {"scenario": str(args.scenario), "duration": args.duration, "sim_seeds": args.seeds, "cases": rows}
    (args.output / "engines.json").write_text(json.dumps(summary, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
