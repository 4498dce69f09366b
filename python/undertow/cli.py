"""The `undertow` command line."""

from __future__ import annotations

import argparse
import json
import math
import os
import signal
import sys
import time
from pathlib import Path
from typing import Optional, Sequence

from undertow import _core, outputs, runner, table

EXIT_USAGE = 2
#: The longest error message printed: a message quoting a value pasted by
#: mistake is cut, not printed for pages.
MESSAGE_MAX = 600

#: `extract` refuses a trace of which it could read under this share of the
#: bytes (damaged records skipped, or a truncated end) without --allow-truncated.
MIN_READ_SHARE = 0.9


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
    out = outputs.output_path(args.output, "-o") if args.output is not None else Path("runs") / Path(args.scenario).stem
    bar = Progress(not args.quiet and (args.progress or sys.stderr.isatty()))
    started = time.monotonic()
    try:
        results = runner.run_file(args.scenario, out, seed=args.seed, cases=args.case, jobs=args.jobs, progress=bar,
                                  overwrite=args.overwrite, engine=args.engine)
    finally:
        bar.close()
    if args.quiet:
        return 0
    rows = [(r.case or info["name"] or "run", r.summary) for r in results]
    baseline = info["baseline"] if not args.case or info["baseline"] in (args.case or []) else None
    print(table.comparison(rows, baseline))
    events = sum(r.timing.get("events", 0) for r in results)
    work = f" ({events / 1e6:.1f} M events)" if events else ""
    print(f"\n{len(results)} run(s) in {time.monotonic() - started:.1f} s{work}; results in {out}/")
    return 0


def cmd_shell(args: argparse.Namespace) -> int:
    out = outputs.output_path(args.output, "-o") if args.output is not None else Path("runs") / (Path(args.scenario).stem + "-shell")
    command = args.command
    runner.check_cases(args.scenario, [args.case] if args.case else [])
    if not args.quiet and command is None:
        print("undertow shell: the scenario's network and background run until you leave this shell "
              "($SERVER is the server's address)", file=sys.stderr)
    r = runner.shell(args.scenario, out, case=args.case, seed=args.seed, app=args.app, command=command, overwrite=args.overwrite)
    if not args.quiet:
        print(f"results in {r.directory}/", file=sys.stderr)
    return 0


def cmd_clean(args: argparse.Namespace) -> int:
    removed = _core.emu_clean()
    for name in removed:
        print(f"removed namespace {name}")
    left = _core.emu_namespaces()
    if not args.quiet:
        print(f"{len(removed)} left behind by killed runs removed; {len(left)} of running ones left alone")
    return 0


def cmd_check(args: argparse.Namespace) -> int:
    info = runner.load(args.scenario)
    cases = ", ".join(info["cases"]) or "none"
    print(f"{info['file']}: ok ({info['duration_s']:g} s simulated; cases: {cases}; baseline: {info['baseline'] or 'none'})")
    return 0


def cmd_resolve(args: argparse.Namespace) -> int:
    sys.stdout.write(_core.resolve(args.scenario, args.case, args.seed))
    return 0


#: The largest summary.json read (a summary is a page of JSON).
SUMMARY_MAX_BYTES = 16 << 20


def read_summary(d: str) -> dict:
    """The summary of a complete run directory; InputError for anything else."""
    p = Path(d)
    if not p.is_dir():
        what = "no such file or directory" if not p.exists() else "not a directory"
        raise InputError(f"{d}: {what}: expected a run directory (written by `undertow run`)")
    if outputs.is_incomplete(p):
        raise InputError(f"{d}: an incomplete run (stopped before it finished, or still running): its files are not a result")
    f = p / "summary.json"
    try:
        with open(f, "rb") as fh:
            raw = fh.read(SUMMARY_MAX_BYTES + 1)
    except FileNotFoundError:
        raise InputError(f"{d}: no summary.json: not a run directory (written by `undertow run`)") from None
    except OSError as e:
        raise InputError(f"{f}: cannot read: {e.strerror}") from None
    try:
        if len(raw) > SUMMARY_MAX_BYTES:
            raise ValueError("too large")
        s = json.loads(raw)
    except (ValueError, UnicodeDecodeError):
        raise InputError(f"{f}: not a summary written by `undertow run`") from None
    if not isinstance(s, dict) or s.get("format") != "undertow.summary/1":
        raise InputError(f"{f}: not a summary written by `undertow run` (format is not \"undertow.summary/1\")")
    return s


def cmd_summary(args: argparse.Namespace) -> int:
    rows = []
    for d in args.rundir:
        s = read_summary(d)
        rows.append((s.get("case") or Path(d).name, s))
    try:
        print(table.comparison(rows, args.baseline))
    except (KeyError, TypeError, ValueError) as e:
        raise InputError(f"a summary lacks what the table needs ({e}): was it written by this version of undertow?") from None
    return 0


class InputError(Exception):
    """A bad command-line input, reported in one line (exit status 2)."""


def warn(lines: Sequence[str]) -> None:
    """One line on stderr per warning of the core (e.g. a damaged trace)."""
    for line in lines:
        print(f"warning: {line}", file=sys.stderr)


def duration_s(text: str) -> float:
    """A human duration ("1ms") in seconds, read by the core's unit parser."""
    try:
        return _core.parse_duration(text)
    except ValueError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


def bin_s(text: str) -> float:
    """A bin width: a duration above zero."""
    v = duration_s(text)
    if v <= 0:
        raise argparse.ArgumentTypeError(f"{text!r} is not allowed: a bin must be longer than zero")
    return v


def cmd_energy(args: argparse.Namespace) -> int:
    from undertow.analysis.energy import energy, energy_table, hurst
    from undertow.analysis.series import load_series

    labels = args.label or []
    if len(labels) > len(args.source):
        raise InputError(f"{len(labels)} labels for {len(args.source)} sources")
    directions = ["fwd", "rev"] if args.direction == "both" else [args.direction]
    results = {}
    trace_series = _trace_series(args)
    for i, src in enumerate(args.source):
        name = labels[i] if i < len(labels) else Path(src).name
        for d in directions:
            try:
                x, b = load_series(src, d, args.what, args.bin, trace_series=trace_series)
                key = f"{name} {d}" if len(directions) > 1 else name
                results[key] = energy(x, bin_s=b, wavelet=args.wavelet, shift_invariant=args.shift_invariant)
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
    if args.plot is not None:
        from undertow.report.energy_plot import plot_energy

        target = outputs.output_path(args.plot, "--plot")
        with outputs.new_file(target) as tmp:
            plot_energy(results, tmp, title=args.title)
        print(f"\nplot: {target}")
    return 0


def extract_overrides(args: argparse.Namespace) -> dict:
    """The extraction options the flags change (JSON field names of ExtractOptions)."""
    o: dict = {}
    for flag, key in (("session_key", "session_key"), ("rre_gap", "rre_gap_s"), ("rre_max_interconn", "rre_max_interconn_s"),
                      ("session_gap", "session_gap_s"), ("session_max", "session_max_s"), ("max_rres", "max_rres_per_session"),
                      ("max_conns", "max_conns_per_rre"), ("max_pairs", "max_pairs_per_conn"), ("idle_timeout", "idle_timeout_s"),
                      ("pause_gap", "pause_gap_s"), ("unit_gap", "unit_gap_s"),
                      ("rtt_samples", "rtt_samples"), ("rtt_min_samples", "rtt_min_samples"), ("rtt_max", "rtt_max_s"),
                      ("rtt_percentile", "rtt_percentile"),
                      ("capacity_percentile", "capacity_percentile"), ("capacity_min_samples", "capacity_min_samples"),
                      ("shaper_fraction", "shaper_max_fraction"), ("shaper_min_segments", "shaper_min_segments"),
                      ("loss_formula", "loss_formula"), ("loss_min_packets", "loss_min_packets"),
                      ("session_structures", "session_structures")):
        v = getattr(args, flag)
        if v is not None:
            o[key] = v
    if args.no_think_minus_rtt:
        o["think_minus_rtt"] = False
    if args.no_pause_gap:
        if args.pause_gap is not None:
            raise InputError("give --pause-gap or --no-pause-gap, not both")
        o["pause_gap_s"] = None
    if args.no_unit_gap:
        if args.unit_gap is not None:
            raise InputError("give --unit-gap or --no-unit-gap, not both")
        o["unit_gap_s"] = None
    if args.no_shaper:
        if args.shaper_fraction is not None:
            raise InputError("give --shaper-fraction or --no-shaper, not both")
        o["shaper_max_fraction"] = None
    if args.no_lines:
        o["lines"] = False
    if args.port or args.ports:
        ports = {p: n for p, n in json.loads(_core.default_extract_options())["ports"]}
        if args.ports:
            lines = read_small_text(args.ports, "--ports").splitlines()
            for k, line in enumerate(lines, 1):
                line = line.split("#")[0].strip()
                if line:
                    ports.update([port_name(line.replace(" ", "=", 1), f"{args.ports} line {k}", quote=False)])
        for spec in args.port or []:
            ports.update([port_name(spec, "--port")])
        o["ports"] = sorted(ports.items())
    if args.side_a_prefix and args.side_a_mac:
        raise InputError("give --side-a-prefix or --side-a-mac, not both")
    if args.side_a_prefix:
        o["sides"] = {"method": "prefixes", "a": args.side_a_prefix}
    elif args.side_a_mac:
        o["sides"] = {"method": "macs", "a": args.side_a_mac}
    return o


def read_small_text(path: str, what: str, limit: int = 1 << 20) -> str:
    """A small text file named by option `what` (at most `limit` bytes)."""
    try:
        with open(path, "rb") as f:
            raw = f.read(limit + 1)
    except OSError as e:
        raise InputError(f"{what} {path}: {e.strerror}") from None
    if len(raw) > limit:
        raise InputError(f"{what} {path}: larger than {limit >> 10} KiB, the most this file may hold")
    try:
        return raw.decode()
    except UnicodeDecodeError:
        raise InputError(f"{what} {path}: not a text file") from None


def port_name(spec: str, where: str, quote: bool = True) -> tuple[int, str]:
    """(port, class name) of "PORT=NAME"; a line of a file is not quoted
    in the message (its contents are the user's, whatever file it is)."""
    port, _, name = spec.partition("=")
    if not port.strip().isdigit() or not 0 < int(port) < 65536 or not name.strip() or len(name.strip()) > 64:
        shown = f"{spec!r} " if quote else ""
        raise InputError(f"{where}: {shown}is not a port mapping: expected PORT=NAME (a port 1 to 65535, a name of up to 64 characters), "
                         "e.g. 8080=HTTP")
    return int(port), name.strip()


def cmd_extract(args: argparse.Namespace) -> int:
    from undertow.inspect_model import duplicate_frames, duplicates_line, load_model

    outputs.check_file_target(outputs.output_path(args.output, "-o"))
    opts = json.dumps(extract_overrides(args))
    min_share = 0.0 if args.allow_truncated else MIN_READ_SHARE
    started = time.monotonic()
    try:
        report, warnings = _core.extract(args.trace, args.output, opts, None, min_share)
    except _core.TruncatedError as e:
        raise InputError(f"{e}: pass --allow-truncated to write the model anyway") from None
    except _core.InputError as e:
        raise InputError(str(e)) from None
    warn(warnings)
    wall = time.monotonic() - started
    if not args.quiet:
        m = load_model(args.output)
        packets = sum(t["packets"] for t in m["traces"])
        conns = sum(c["counts"]["connections"] for c in m["classes"])
        sessions = sum(c["counts"]["sessions"] for c in m["classes"])
        print(f"{packets:,} packets in {wall:.2f} s: {len(m['classes'])} TCP classes ({conns} connections, {sessions} sessions), "
              f"{len(m['udp'])} UDP classes, {len(m['hosts'])} hosts")
        print(f"sides: {m['sides']['decided_by']}")
        if duplicate_frames(m):
            print(duplicates_line(duplicate_frames(m)))
        print(f"model: {args.output} (undertow inspect {args.output})")
    if args.report:
        print(report)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    from undertow.inspect_model import ModelError, load_model
    from undertow.report.energy_plot import plot_energy
    from undertow.validate import Regeneration, text, validate

    out = outputs.output_path(args.output, "-o") if args.output is not None else Path("runs") / f"validate-{Path(args.model).stem}"
    plot = outputs.check_file_target(outputs.output_path(args.plot, "--plot")) if args.plot is not None else None
    try:
        load_model(args.model)
    except ModelError as e:
        raise InputError(str(e)) from None
    bar = Progress(not args.quiet and (args.progress or sys.stderr.isatty()))
    try:
        with outputs.new_directory(out, args.overwrite) as tmp:
            how = Regeneration(link_rate=args.link_rate, seed=args.seed, periods=args.periods, bin_s=args.bin, structure=args.structure,
                               as_captured=not args.full_link, engine=args.engine, hosts=args.hosts)
            v = validate(args.model, args.trace, tmp, how, progress=lambda f: bar({"run": f}))
            e = v.energy
            curves = {"trace A to B": e["original"]["fwd"], "regenerated A to B": e["regenerated"]["fwd"],
                      "trace B to A": e["original"]["rev"], "regenerated B to A": e["regenerated"]["rev"]}
            title = f"{Path(args.model).name}: trace against regenerated (bytes per {args.bin * 1e3:g} ms)"
            if plot is None:
                plot_energy(curves, tmp / "energy.png", title=title)
            else:
                with outputs.new_file(plot) as p:
                    plot_energy(curves, p, title=title)
    except (ModelError, _core.InputError, ValueError) as e:
        raise InputError(str(e)) from None
    finally:
        bar.close()
    warn(v.trace_warnings)
    if not args.quiet:
        print(text(v))
        where = "validation.json, run/, regenerated.json" + (", energy.png" if plot is None else f"; plot: {plot}")
        print(f"\nresults in {out}/ ({where})")
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
    """The core's per-direction binning of packet traces, with this command's
    side rule; a damaged trace is warned of once, however often it is read."""
    warned: set[str] = set()

    def series(path: str, bin_s: float):
        s = _core.trace_series([path], bin_s, side_a=args.side_a)
        warn([w for w in s["warnings"] if w not in warned])
        warned.update(s["warnings"])
        return s

    return series


def whole(lo: int, hi: Optional[int] = None):
    """An argparse type: a whole number from `lo` (to `hi`)."""

    def parse(text: str) -> int:
        try:
            v = int(text)
        except ValueError:
            v = None
        if v is None or v < lo or (hi is not None and v > hi):
            allowed = f"from {lo} to {hi}" if hi is not None else f"{lo} or more"
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: expected a whole number {allowed}")
        return v

    return parse


def number(lo: float, hi: float, lo_open: bool = False):
    """An argparse type: a finite number in [lo, hi] (or (lo, hi])."""

    def parse(text: str) -> float:
        try:
            v = float(text)
        except ValueError:
            v = math.nan
        if not (math.isfinite(v) and (v > lo if lo_open else v >= lo) and v <= hi):
            left = "(" if lo_open else "["
            raise argparse.ArgumentTypeError(f"{text!r} is not allowed: expected a number in {left}{lo:g}, {hi:g}]")
        return v

    return parse


#: Seeds are unsigned 64-bit numbers.
seed_value = whole(0, 2**64 - 1)


def octaves(text: str) -> tuple[int, int]:
    try:
        a, b = (int(v) for v in text.split(":"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"{text!r} is not a range of octaves: expected J1:J2, e.g. 3:10") from None
    if not 1 <= a < b:
        raise argparse.ArgumentTypeError(f"{text!r}: expected 1 <= J1 < J2")
    return a, b


def parser() -> argparse.ArgumentParser:
    p = Parser(
        prog="undertow",
        description="Subject an application to realistic, responsive background traffic, reproducibly.",
    )
    p.add_argument("--version", action="version", version=f"undertow {_core.__version__}")
    sub = p.add_subparsers(dest="command", required=True, metavar="COMMAND", parser_class=Parser)

    r = sub.add_parser("run", help="run a scenario (every case) in the simulator or the emulator", description=(
        "Run a scenario file in the simulator (or, with --engine emu, in real time with real Linux stacks) "
        "and write one run directory per case "
        "(scenario.toml, summary.json, records/*.parquet, series/*.parquet, optional bottleneck.pcap)."))
    r.add_argument("scenario", help="scenario file (TOML)")
    r.add_argument("-o", "--output", metavar="DIR", help="run directory (default: runs/<scenario name>)")
    r.add_argument("--seed", type=seed_value, help="seed replacing the scenario's own (0 to 2^64-1)")
    r.add_argument("--case", action="append", metavar="NAME", help="run only this case (repeatable)")
    r.add_argument("-j", "--jobs", type=whole(1, 1024), metavar="N", help="cases run in parallel (default: one per core)")
    r.add_argument("--overwrite", action="store_true",
                   help="replace DIR if it exists (whole: never a mixture of two runs; only a directory undertow wrote)")
    r.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    r.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")
    r.add_argument("--engine", choices=["sim", "emu"],
                   help="sim: the simulator; emu: real time, real Linux TCP in network namespaces (root) "
                        "(default: the scenario's engine, else sim)")
    r.set_defaults(func=cmd_run)

    h = sub.add_parser("shell", help="a shell inside the emulated network while a scenario runs", description=(
        "Run a scenario in the emulator (root) with your shell, or a command line, on the client host of one of its command "
        "apps, in place of that app's client, until it exits; then write the run directory. $SERVER and $CLIENT "
        "hold the hosts' addresses."))
    h.add_argument("scenario", help="scenario file (TOML) with at least one command app")
    h.add_argument("-c", "--command", metavar="LINE", help="run this command line (sh -c) instead of an interactive shell")
    h.add_argument("-o", "--output", metavar="DIR", help="run directory (default: runs/<scenario name>-shell)")
    h.add_argument("--case", metavar="NAME", help="the case to run (default: the base scenario)")
    h.add_argument("--app", metavar="NAME", help="the command app whose client host the shell runs on (default: the first)")
    h.add_argument("--seed", type=seed_value, help="seed replacing the scenario's own")
    h.add_argument("--overwrite", action="store_true", help="replace DIR if it exists (only a directory undertow wrote)")
    h.add_argument("-q", "--quiet", action="store_true", help="print nothing but what the shell prints")
    h.set_defaults(func=cmd_shell)

    k = sub.add_parser("clean", help="remove what killed emulator runs left behind", description=(
        "Remove the network namespaces (with their TUN devices, addresses and routes) of emulator runs whose "
        "process is gone. Runs still going are left alone. Every emulator run does this when it starts."))
    k.add_argument("-q", "--quiet", action="store_true", help="print only what was removed")
    k.set_defaults(func=cmd_clean)

    c = sub.add_parser("check", help="validate a scenario file", description="Check a scenario file and all its cases without running anything.")
    c.add_argument("scenario", help="scenario file (TOML)")
    c.set_defaults(func=cmd_check)

    v = sub.add_parser("resolve", help="print a scenario with every default filled in", description=(
        "Print the scenario (or one case of it) as it would run, with every default written out. "
        "This is what a run directory records as scenario.toml."))
    v.add_argument("scenario", help="scenario file (TOML)")
    v.add_argument("--case", metavar="NAME", help="the case to resolve (default: the base scenario)")
    v.add_argument("--seed", type=seed_value, help="seed replacing the scenario's own")
    v.set_defaults(func=cmd_resolve)

    s = sub.add_parser("summary", help="tabulate finished run directories",
                       description="Print the result table of existing run directories, from their summary.json.")
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
    e.add_argument("--bin", type=bin_s, default=0.001, metavar="DURATION", help="base bin (default 1ms)")
    e.add_argument("--wavelet", default="db3", help="Daubechies wavelet, db1 (Haar) to db20 (default db3)")
    e.add_argument("--shift-invariant", action="store_true",
                   help="average each octave over every alignment of the dyadic grid (undecimated transform); "
                        "intervals stay the DWT's")
    e.add_argument("--hurst", type=octaves, metavar="J1:J2", help="estimate the Hurst parameter over these octaves")
    e.add_argument("--plot", metavar="FILE.png", help="draw the energy plot")
    e.add_argument("--title", help="plot title")
    e.add_argument("--label", action="append", help="legend label of each source, in order (repeatable)")
    e.add_argument("--side-a", action="append", metavar="PREFIX",
                   help="traces: addresses in this prefix are side A (repeatable; default: decided from the trace)")
    e.set_defaults(func=cmd_energy)

    x = sub.add_parser("extract", help="extract a Swing model from packet traces", description=(
        "Reconstruct TCP connections and UDP flows from pcap/pcapng traces of one link and extract Swing's "
        "structural model (sessions, RREs, connections, request/response pairs, think times) per application "
        "class and direction, and each host's RTT, capacity and loss. Several traces are merged in time order "
        "as one observation of the link (e.g. its two directions captured apart). Defaults are in docs/swing-model.md."))
    x.add_argument("trace", nargs="+", help="pcap or pcapng file")
    x.add_argument("-o", "--output", required=True, metavar="MODEL.json", help="model file to write")
    x.add_argument("--session-key", choices=["client", "client-server"], help="group sessions by client (default) or client-server pair")
    x.add_argument("--rre-gap", type=duration_s, metavar="DURATION",
                   help="new RRE when a connection starts this long after the RRE ended (default 2s)")
    x.add_argument("--rre-max-interconn", type=duration_s, metavar="DURATION",
                   help="...or this long after the previous connection started (default 30s)")
    x.add_argument("--session-gap", type=duration_s, metavar="DURATION", help="new session after this idle gap (default 300s)")
    x.add_argument("--session-max", type=duration_s, metavar="DURATION", help="cut sessions this long after they start (default: no cap)")
    x.add_argument("--max-rres", type=whole(1, 2**32 - 1), metavar="N", help="RREs per session (default 100)")
    x.add_argument("--max-conns", type=whole(1, 2**32 - 1), metavar="N", help="connections per RRE (default 100)")
    x.add_argument("--max-pairs", type=whole(1, 2**32 - 1), metavar="N", help="request/response pairs per connection (default 200)")
    x.add_argument("--idle-timeout", type=duration_s, metavar="DURATION", help="a connection idle this long is over (default 300s)")
    x.add_argument("--pause-gap", type=duration_s, metavar="DURATION",
                   help="a sender resuming this long (and two round trips) after all it sent was acknowledged starts a new "
                        "request or response (default 200ms)")
    x.add_argument("--no-pause-gap", action="store_true", help="never split a request or response at a pause")
    x.add_argument("--unit-gap", type=duration_s, metavar="DURATION",
                   help="in a concurrent connection, a sender resuming after this long with under 3 segments in flight "
                        "starts a new data unit (default 1ms)")
    x.add_argument("--no-unit-gap", action="store_true", help="data units end only when the other side sends")
    x.add_argument("--rtt-samples", choices=["handshake", "handshake-and-data", "handshake-else-data"],
                   help="RTT sample types (default handshake-else-data: handshakes where a host has enough)")
    x.add_argument("--rtt-min-samples", type=whole(1, 2**32 - 1), metavar="N", help="hosts with fewer samples get no RTT of their own (default 2)")
    x.add_argument("--rtt-max", type=duration_s, metavar="DURATION", help="discard RTT samples above this (default 1.5s)")
    x.add_argument("--rtt-percentile", type=number(0, 100), metavar="P",
                   help="percentile of a host's RTT samples taken as its RTT (default 10; Swing: 50)")
    x.add_argument("--capacity-percentile", type=number(0, 100), metavar="P", help="percentile of packet-pair samples (default 50)")
    x.add_argument("--capacity-min-samples", type=whole(1, 2**32 - 1), metavar="N", help="default 10")
    x.add_argument("--shaper-fraction", type=number(0, 1, lo_open=True), metavar="F",
                   help="a host whose longest sends stayed under this fraction of its capacity gets a token bucket (default 0.5)")
    x.add_argument("--shaper-min-segments", type=whole(1, 2**32 - 1), metavar="N", help="data segments in a sending stretch (default 16)")
    x.add_argument("--no-shaper", action="store_true", help="never give a host a token bucket")
    x.add_argument("--no-lines", action="store_true", help="look for no shared lines: every host on its own path")
    x.add_argument("--loss-formula", choices=["swing", "retransmissions"], help="default swing")
    x.add_argument("--loss-min-packets", type=whole(1, 2**63 - 1), metavar="N", help="default 100")
    x.add_argument("--no-think-minus-rtt", action="store_true", help="keep the host RTT in think times")
    x.add_argument("--session-structures", type=whole(0, 2**32 - 1), metavar="N",
                   help="whole sessions kept per class for `structure = \"sessions\"` (default 1000; 0 keeps none)")
    x.add_argument("--port", action="append", metavar="PORT=NAME", help="class name of a server port (repeatable)")
    x.add_argument("--ports", metavar="FILE", help="file of 'PORT NAME' lines")
    x.add_argument("--side-a-prefix", action="append", metavar="CIDR", help="hosts in this prefix are side A (repeatable)")
    x.add_argument("--side-a-mac", action="append", metavar="MAC", help="frames from this MAC come from side A (repeatable)")
    x.add_argument("--allow-truncated", action="store_true",
                   help=f"write the model even from a trace of which under {MIN_READ_SHARE * 100:.0f}%% of the bytes could be read "
                        "(damaged records skipped, or a truncated end); without it such a trace is an error (exit status 2) "
                        "and no model is written. Any damage is warned of on stderr")
    x.add_argument("-q", "--quiet", action="store_true", help="print nothing on success (warnings still go to stderr)")
    x.add_argument("--report", action="store_true", help="print the extraction report (counters)")
    x.set_defaults(func=cmd_extract)

    v = sub.add_parser("validate", help="regenerate a model's traffic and compare it with its trace", description=(
        "Regenerate a Swing model's traffic in the simulator for the trace's duration, with the trace's per-host "
        "RTT, capacity and loss on the virtual hosts' access links, capture the target link, extract a model from "
        "the capture with the same options, and compare with the original: mean rate and packets per second per "
        "direction, application mix, Kolmogorov-Smirnov distances of request and response sizes, connections per "
        "RRE and host RTTs, and the wavelet energy of both byte series (plotted together)."))
    v.add_argument("model", help="model file from `undertow extract`")
    v.add_argument("--trace", action="append", required=True, metavar="TRACE", help="the trace(s) the model came from (repeatable)")
    v.add_argument("-o", "--output", metavar="DIR", help="results directory (default: runs/validate-<model>)")
    v.add_argument("--link-rate", default="1Gbps", metavar="RATE", help="target link rate (default 1Gbps: the hosts' access links constrain)")
    v.add_argument("--seed", type=seed_value, default=1, help="simulation seed (default 1)")
    v.add_argument("--overwrite", action="store_true", help="replace DIR if it exists (whole; only a directory undertow wrote)")
    v.add_argument("--periods", type=whole(1, 1000), metavar="N",
                   help="regenerate N trace-length periods and compare averages (default: 10, fewer for traces over 200,000 packets)")
    v.add_argument("--structure", choices=("auto", "marginals", "sessions"), default="auto",
                   help="draw every session parameter on its own, as Swing did (marginals), or replay whole observed sessions; "
                        "auto (the default) replays them when the model has fewer than 30 sessions")
    v.add_argument("--full-link", action="store_true",
                   help="compare the whole regenerated link with a trace whose capture lost packets (by default the "
                        "regenerated capture misses the same share of data segments as the trace's did)")
    v.add_argument("--bin", type=bin_s, default=0.001, metavar="DURATION", help="energy base bin (default 1ms)")
    v.add_argument("--engine", choices=("sim", "emu"), default="sim",
                   help="regenerate in the simulator (default) or in the emulator: real Linux TCP between namespaces, in "
                        "real time (root; as many trace-length periods as fit in two minutes unless --periods)")
    v.add_argument("--hosts", type=whole(1), metavar="N",
                   help="virtual hosts a side (default: the trace's own hosts)")
    v.add_argument("--plot", metavar="FILE.png", help="energy plot file (default DIR/energy.png)")
    v.add_argument("-q", "--quiet", action="store_true", help="print nothing on success")
    v.add_argument("--progress", action="store_true", help="show the progress bar even when stderr is not a terminal")
    v.set_defaults(func=cmd_validate)

    i = sub.add_parser("inspect", help="summarise a Swing model file", description=(
        "Print a human summary of a model from `undertow extract`: the traces, the mean rate per direction, "
        "the application mix by bytes and connections, sessions, hosts, and RTT, capacity and loss quantiles."))
    i.add_argument("model", help="model file (JSON)")
    i.set_defaults(func=cmd_inspect)
    return p


class Terminated(BaseException):
    """SIGTERM, raised where Python next runs (the core checks between events)."""


def _terminate(signum, frame):
    raise Terminated()


def error(message: str) -> None:
    """One line on stderr, however long or many-lined the message."""
    line = " ".join(str(message).split())
    if len(line) > MESSAGE_MAX:
        line = line[: MESSAGE_MAX - 3] + "..."
    print(f"error: {line}", file=sys.stderr)


class Parser(argparse.ArgumentParser):
    """argparse, with a usage error in one line (the usage is in --help)."""

    def error(self, message: str):
        error(f"{message} (see `{self.prog} --help`)")
        sys.exit(EXIT_USAGE)


def main(argv: Optional[Sequence[str]] = None) -> int:
    args = parser().parse_args(argv)
    previous = signal.signal(signal.SIGTERM, _terminate)
    try:
        return args.func(args)
    except (_core.ScenarioError, _core.InputError, _core.RunError, _core.EngineError, InputError, outputs.OutputError) as e:
        # A run that cannot write its directory is a bad output place: a
        # user error like the others.
        error(str(e))
        return EXIT_USAGE
    except KeyboardInterrupt:
        print("\ninterrupted", file=sys.stderr)
        return 130
    except Terminated:
        print("\nterminated", file=sys.stderr)
        return 143
    except BrokenPipeError:
        # The reader went away (`undertow inspect m.json | head`): stop
        # quietly, and keep the interpreter's exit flush from failing too.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 141
    finally:
        signal.signal(signal.SIGTERM, previous)


if __name__ == "__main__":
    sys.exit(main())
