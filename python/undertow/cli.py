"""The `undertow` command line."""

from __future__ import annotations

import argparse
import json
import os
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from undertow import _core, runner, table

EXIT_USAGE = 2


class Progress:
    """A one-line progress bar on stderr, shown once a run lasts over a second."""

    def __init__(self, enabled: bool) -> None:
        self.enabled = enabled
        self.start = time.monotonic()
        self.shown = False
        # Seconds before the bar appears (tests set 0).
        self.delay = float(os.environ.get("UNDERTOW_PROGRESS_DELAY", "1.0"))

    def __call__(self, done: dict[str, float]) -> None:
        if not self.enabled or time.monotonic() - self.start < self.delay:
            return
        frac = sum(done.values()) / max(len(done), 1)
        finished = sum(1 for v in done.values() if v >= 1.0)
        width = 30
        bar = "#" * int(frac * width) + "." * (width - int(frac * width))
        label = f"  {finished}/{len(done)} cases" if len(done) > 1 else ""
        sys.stderr.write(f"\r[{bar}] {frac * 100:5.1f}%{label}  {time.monotonic() - self.start:.0f}s ")
        sys.stderr.flush()
        self.shown = True

    def close(self) -> None:
        if self.shown:
            sys.stderr.write("\r" + " " * 70 + "\r")
            sys.stderr.flush()


def cmd_run(args: argparse.Namespace) -> int:
    info = runner.load(args.scenario)
    out = Path(args.output) if args.output else Path("runs") / Path(args.scenario).stem
    bar = Progress(not args.quiet and (args.progress or sys.stderr.isatty()))
    started = time.monotonic()
    try:
        results = runner.run_file(args.scenario, out, seed=args.seed, cases=args.case, jobs=args.jobs, progress=bar)
    finally:
        bar.close()
    if args.quiet:
        return 0
    rows = [(r.case or info["name"] or "run", r.summary) for r in results]
    baseline = info["baseline"] if not args.case or info["baseline"] in (args.case or []) else None
    print(table.comparison(rows, baseline))
    events = sum(r.timing["events"] for r in results)
    print(f"\n{len(results)} run(s) in {time.monotonic() - started:.1f} s ({events / 1e6:.1f} M events); results in {out}/")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    info = runner.load(args.scenario)
    cases = ", ".join(info["cases"]) or "none"
    print(f"{info['file']}: ok ({info['duration_s']:g} s simulated; cases: {cases}; baseline: {info['baseline'] or 'none'})")
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    sys.stdout.write(_core.resolve(args.scenario, args.case, args.seed))
    return 0


def cmd_summary(args: argparse.Namespace) -> int:
    rows = []
    for d in args.rundir:
        p = Path(d) / "summary.json"
        try:
            s = json.loads(p.read_text())
        except FileNotFoundError:
            print(f"error: {p}: no such file (is {d} a run directory?)", file=sys.stderr)
            return EXIT_USAGE
        except json.JSONDecodeError as e:
            print(f"error: {p}: not valid JSON ({e})", file=sys.stderr)
            return EXIT_USAGE
        rows.append((s.get("case") or Path(d).name, s))
    print(table.comparison(rows, args.baseline))
    return 0


def parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="undertow",
        description="Subject an application to realistic, responsive background traffic, reproducibly.",
    )
    p.add_argument("--version", action="version", version=f"undertow {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND")

    r = sub.add_parser("run", help="run a scenario (every case) in the simulator", description=(
        "Run a scenario file in the simulator and write one run directory per case "
        "(scenario.toml, summary.json, records/*.parquet, series/*.parquet, optional bottleneck.pcap)."))
    r.add_argument("scenario", help="scenario file (TOML)")
    r.add_argument("-o", "--output", metavar="DIR", help="run directory (default: runs/<scenario name>)")
    r.add_argument("--seed", type=int, help="seed replacing the scenario's own")
    r.add_argument("--case", action="append", metavar="NAME", help="run only this case (repeatable)")
    r.add_argument("-j", "--jobs", type=int, metavar="N", help="cases run in parallel (default: one per core)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    r.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")
    r.set_defaults(func=cmd_run)

    c = sub.add_parser("check", help="validate a scenario file", description="Check a scenario file and all its cases without running anything.")
    c.add_argument("scenario", help="scenario file (TOML)")
    c.set_defaults(func=cmd_check)

    v = sub.add_parser("resolve", help="print a scenario with every default filled in", description=(
        "Print the scenario (or one case of it) as it would run, with every default written out. "
        "This is what a run directory records as scenario.toml."))
    v.add_argument("scenario", help="scenario file (TOML)")
    v.add_argument("--case", metavar="NAME", help="the case to resolve (default: the base scenario)")
    v.add_argument("--seed", type=int, help="seed replacing the scenario's own")
    v.set_defaults(func=cmd_resolve)

    s = sub.add_parser("summary", help="tabulate finished run directories", description="Print the result table of existing run directories, from their summary.json.")
    s.add_argument("rundir", nargs="+", help="run directories")
    s.add_argument("--baseline", metavar="CASE", help="case (directory name) to compute slowdowns against")
    s.set_defaults(func=cmd_summary)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except _core.ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except _core.RunError as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130


if __name__ == "__main__":
    sys.exit(main())
