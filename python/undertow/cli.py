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


class InputError(Exception):
    """A bad command-line input, reported in one line (exit status 2)."""


def duration_s(text: str) -> float:
    """A human duration ("1ms") in seconds, read by the core's unit parser."""
    try:
        return _core.parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def cmd_energy(args: argparse.Namespace) -> int:
    from undertow.analysis.energy import energy, energy_table, hurst
    from undertow.analysis.series import load_series

    labels = args.label or []
    if len(labels) > len(args.source):
        raise InputError(f"{len(labels)} labels for {len(args.source)} sources")
    directions = ["fwd", "rev"] if args.direction == "both" else [args.direction]
    results = {}
    for i, src in enumerate(args.source):
        name = labels[i] if i < len(labels) else Path(src).name
        for d in directions:
            try:
                x, b = load_series(src, d, args.what, args.bin, trace_series=_trace_series(args))
                key = f"{name} {d}" if len(directions) > 1 else name
                results[key] = energy(x, bin_s=b, wavelet=args.wavelet)
            except (OSError, ValueError) as e:
                raise InputError(str(e)) from None
    print(f"log2 energy of {args.what} per {args.bin * 1e3:g} ms, wavelet {args.wavelet} (± 95% interval)")
    print(energy_table(results))
    if args.hurst:
        j1, j2 = args.hurst
        print(f"\nHurst parameter over octaves {j1}-{j2}:")
        for k, r in results.items():
            try:
                h = hurst(r, j1, j2)
            except ValueError as e:
                raise InputError(f"{k}: {e}") from None
            print(f"  {k}: H = {h.H:.3f} [{h.ci_low:.3f}, {h.ci_high:.3f}]")
    if args.plot:
        from undertow.report.energy_plot import plot_energy

        plot_energy(results, args.plot, title=args.title)
        print(f"\nplot: {args.plot}")
    return 0


def cmd_inspect(args: argparse.Namespace) -> int:
    from undertow.inspect_model import ModelError, load_model, summary

    try:
        m = load_model(args.model)
    except ModelError as e:
        raise InputError(str(e)) from None
    print(summary(m))
    return 0


def _trace_series(args: argparse.Namespace):
    """The core's per-direction binning of packet traces, with this command's side rule."""

    def series(path: str, bin_s: float):
        return _core.trace_series([path], bin_s, side_a=args.side_a)

    return series


def octaves(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of octaves: expected J1:J2, e.g. 3:10") from None
    if not 1 <= a < b:
        raise argparse.ArgumentTypeError(f"{text!r}: expected 1 <= J1 < J2")
    return a, b


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

    e = sub.add_parser("energy", help="wavelet energy (logscale diagram) of traffic", description=(
        "Wavelet energy per octave (the Abry-Veitch logscale diagram the seed papers call an energy plot) "
        "of bytes or packets per bin, from run directories, pcap/pcapng traces or plain event lists "
        "('time' or 'time size' per line, .gz/.xz allowed). Octave j covers 2^j bins."))
    e.add_argument("source", nargs="+", help="run directory, trace file or event list")
    e.add_argument("--what", choices=["bytes", "packets"], default="bytes", help="what to count per bin (default bytes)")
    e.add_argument("--direction", choices=["fwd", "rev", "both"], default="fwd",
                   help="fwd: left to right in a run, side A to B in a trace (default fwd)")
    e.add_argument("--bin", type=duration_s, default=0.001, metavar="DURATION", help="base bin (default 1ms)")
    e.add_argument("--wavelet", default="db3", help="Daubechies wavelet, db1 (Haar) to db20 (default db3)")
    e.add_argument("--hurst", type=octaves, metavar="J1:J2", help="estimate the Hurst parameter over these octaves")
    e.add_argument("--plot", metavar="FILE.png", help="draw the energy plot")
    e.add_argument("--title", help="plot title")
    e.add_argument("--label", action="append", help="legend label of each source, in order (repeatable)")
    e.add_argument("--side-a", action="append", metavar="PREFIX", help="traces: addresses in this prefix are side A (repeatable; default: decided from the trace)")
    e.set_defaults(func=cmd_energy)

    i = sub.add_parser("inspect", help="summarise a Swing model file", description=(
        "Print a human summary of a model from `undertow extract`: the traces, the mean rate per direction, "
        "the application mix by bytes and connections, sessions, hosts, and RTT, capacity and loss quantiles."))
    i.add_argument("model", help="model file (JSON)")
    i.set_defaults(func=cmd_inspect)
    return p


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    try:
        return args.func(args)
    except _core.ScenarioError as e:
        print(f"error: {e}", file=sys.stderr)
        return EXIT_USAGE
    except InputError as e:
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
