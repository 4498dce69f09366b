"""The realism tables of docs/corpus.md, re-taken: Swing models extracted
from the shared traces and the corpus, regenerated and compared.

    .venv/bin/python bench/realism.py [--seeds 1-5] [--only shared|corpus] [--trace NAME ...] [-o DIR] [--reuse]

Per trace T and seed S it runs, one `undertow` process at a time:

    undertow extract T -o m.json -q
    undertow validate m.json --trace T -o DIR --structure sessions --seed S

and prints the docs' tables as markdown on stdout (progress on stderr):

- the shared traces (the eight of tests/test_swing.py's REALISM, found as
  the tests find them: $UNDERTOW_TRACES or ../shared/traces) at the first
  seed: rate and packets/s error A to B / B to A, KS of request / response
  sizes and of host RTTs, the largest |log2 energy difference| at 2 ms-4 s
  each way (bold when both are within 1.0), and the same with
  `--structure marginals`;
- the shared traces over every seed: the range of that largest difference
  each way, and which octaves are over 1.0 on how many seeds;
- the corpus (crates/testdata/corpus, its tuned and held-out halves as
  manifest.toml gives them) over every seed: capture point, rate error
  ranges, the largest KS of sizes, max-energy ranges, and the octaves over
  1.0 on any seed, plainly and under the second rule (over 1.0 and over the
  half-width of the trace's own 95% interval at that octave).

Run directories go to DIR/<trace>/ (a temporary directory if -o is not
given); `--reuse` reads the validation.json files already in DIR instead of
running again.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from engines import parse_seeds  # bench/engines.py: "1-5" or "1,2,5"

try:
    import tomllib
except ModuleNotFoundError:  # Python < 3.11
    import tomli as tomllib

ROOT = Path(__file__).resolve().parent.parent
UNDERTOW = Path(sys.executable).parent / "undertow"
CORPUS = ROOT / "crates" / "testdata" / "corpus"
#: The shared traces of tests/test_swing.py's REALISM, in its order.
SHARED = [
    "web-ynet-2013.pcap", "web-espn-2010.pcapng", "web-reddit-tls.pcap", "app-alexa.pcapng", "video-netflix.pcap",
    "http-bro-org.pcap", "tls-firefox.pcap", "quic-firefox-google.pcap",
]
#: The energy target (validate's ENERGY_TARGET): |log2 energy difference| within this at every octave.
ENERGY_TARGET = 1.0
#: Over seeds, a shared trace's rate range is shown beside its energy when
#: some seed's rate error is this near the 10% target or past it.
RATE_NOTE = 0.075
DIRECTIONS = (("fwd", "A to B"), ("rev", "B to A"))
WORDS = ["no", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten"]


# ---- finding the traces


def traces_dir() -> Path:
    """The shared traces, where tests/conftest.py's traces_dir() looks."""
    d = Path(os.environ.get("UNDERTOW_TRACES", ROOT.parent / "shared" / "traces"))
    if not d.is_dir():
        sys.exit(f"realism: the shared traces are missing: looked in {d} (set UNDERTOW_TRACES)")
    return d


def corpus_halves() -> dict[str, list[str]]:
    """The corpus's trace names by half, in the manifest's order."""
    halves: dict[str, list[str]] = {"tuned": [], "held-out": []}
    for t in tomllib.loads((CORPUS / "manifest.toml").read_text())["trace"]:
        halves[t["half"]].append(t["name"])
    return halves


def stem(name: str) -> str:
    """A trace's name in the tables: its file name without the extension."""
    return Path(name).stem


def wanted(names: list[str], only: list[str] | None) -> list[str]:
    """The names `--trace` asks for (by file name or stem), or all."""
    return [n for n in names if not only or n in only or stem(n) in only]


# ---- running undertow


def undertow(*args: str) -> None:
    r = subprocess.run([str(UNDERTOW), *args], capture_output=True, text=True)
    if r.returncode != 0:
        sys.exit(f"realism: undertow {' '.join(args)} failed ({r.returncode}):\n{r.stderr}")


def extracted(trace: Path, out: Path, reuse: bool) -> dict:
    """The model of `trace` in out/m.json, extracted unless reused."""
    model = out / "m.json"
    if not (reuse and model.exists()):
        out.mkdir(parents=True, exist_ok=True)
        undertow("extract", str(trace), "-o", str(model), "-q")
    return json.loads(model.read_text())


def validated(trace: Path, out: Path, structure: str, seed: int, reuse: bool) -> dict:
    """validation.json of the model in out/m.json regenerated with
    `structure` and `seed`, run unless reused."""
    d = out / f"{structure}-seed{seed}"
    if not (reuse and (d / "validation.json").exists()):
        start = time.monotonic()
        undertow("validate", str(out / "m.json"), "--trace", str(trace), "-o", str(d), "--overwrite", "--structure", structure,
                 "--seed", str(seed), "-q")
        print(f"realism: {trace.name} {structure} seed {seed}: {time.monotonic() - start:.1f} s", file=sys.stderr, flush=True)
    return json.loads((d / "validation.json").read_text())


# ---- figures of one validation.json


def rate_errors(v: dict, key: str = "rate_bps") -> list[float]:
    """Relative error A to B, B to A of `key` (rate_bps or packets_per_s)."""
    return [v["comparison"][key][i]["relative_error"] for i in range(2)]


def size_ks(v: dict) -> list[float | None]:
    """KS distance of request and response sizes (None without any)."""
    return [v["comparison"][k]["distance"] for k in ("request_bytes", "response_bytes")]


def max_energy(v: dict, d: str) -> float | None:
    """The largest |log2 energy difference| at 2 ms-4 s in direction d."""
    rows = v["energy_log2_difference"][d]
    return max(r["difference"] for r in rows) if rows else None


def octaves_over(v: dict, d: str, beyond_interval: bool = False) -> list[dict]:
    """Direction d's octaves over the energy target, and with
    `beyond_interval` also over the trace's own 95% interval there."""
    return [r for r in v["energy_log2_difference"][d]
            if r["difference"] > ENERGY_TARGET and (not beyond_interval or r["difference"] > r["trace_ci_half"])]


# ---- formatting


def signed(x: float, digits: int = 1) -> str:
    """A percentage with its sign, the minus typeset (−0.0% stays negative)."""
    return f"{x * 100:+.{digits}f}".replace("-", "\u2212")


def pct(x: float | None) -> str:
    return "-" if x is None else f"{signed(x)}%"


def pct_range(xs: list[float]) -> str:
    lo, hi = signed(min(xs)), signed(max(xs))
    return f"{lo}%" if lo == hi else f"{lo} to {hi}%"


def num(x: float | None, digits: int = 2) -> str:
    return "-" if x is None else f"{x:.{digits}f}"


def num_range(xs: list[float | None]) -> str:
    known = [x for x in xs if x is not None]
    if not known:
        return "-"
    lo, hi = num(min(known)), num(max(known))
    return lo if lo == hi else f"{lo}-{hi}"


def pair(a: str, b: str) -> str:
    return f"{a} / {b}"


def ms(scale_s: float) -> str:
    return f"{scale_s * 1e3:.0f} ms"


def scale(scale_s: float) -> str:
    """An octave's scale: in ms below a second, in seconds from one."""
    return ms(scale_s) if scale_s < 1 else f"{scale_s:.0f} s"


def count_words(n: int, of: int) -> str:
    word = lambda k: WORDS[k] if k < len(WORDS) else str(k)
    return f"{word(n)} seed{'' if n == 1 else 's'} of {word(of)}"


def row(cells: list[str]) -> str:
    return "| " + " | ".join(cells) + " |"


def table(header: list[str], rows: list[list[str]]) -> str:
    return "\n".join([row(header), "|" + "---|" * len(header), *(row(r) for r in rows)])


# ---- the shared traces at one seed


def energy_cell(v: dict, bold: bool) -> str:
    """Largest difference A to B / B to A; bold when both are within target."""
    e = [max_energy(v, d) for d, _ in DIRECTIONS]
    text = pair(num(e[0]), num(e[1]))
    met = all(x is not None and x <= ENERGY_TARGET for x in e)
    return f"**{text}**" if bold and met else text


def sizes_cell(v: dict) -> str:
    ks = size_ks(v)
    return "-" if all(x is None for x in ks) else pair(num(ks[0], 3), num(ks[1], 3))


def shared_row(name: str, sessions: dict, marginals: dict) -> list[str]:
    rates, packets = rate_errors(sessions), rate_errors(sessions, "packets_per_s")
    return [stem(name), pair(pct(rates[0]), pct(rates[1])), pair(pct(packets[0]), pct(packets[1])), sizes_cell(sessions),
            num(sessions["comparison"]["rtt"]["distance"], 3), energy_cell(sessions, True), energy_cell(marginals, False)]


def shared_table(runs: dict[str, dict[int, dict]], marginals: dict[str, dict], seed: int) -> str:
    header = ["trace", "rate error", "packets/s error", "KS sizes", "KS RTT", "max energy", "marginals"]
    rows = [shared_row(name, by_seed[seed], marginals[name]) for name, by_seed in runs.items()]
    return (f"The shared traces, seed {seed}, whole sessions (last column `--structure marginals`):\n\n" + table(header, rows))


# ---- the shared traces over seeds


def energy_ranges(by_seed: dict[int, dict]) -> str:
    """The range over seeds of the largest difference, each way."""
    return pair(*(num_range([max_energy(v, d) for v in by_seed.values()]) for d, _ in DIRECTIONS))


def rate_note(by_seed: dict[int, dict]) -> str:
    """The rate ranges, where some seed's rate comes near its target."""
    rates = [rate_errors(v) for v in by_seed.values()]
    if all(abs(x) <= RATE_NOTE for r in rates for x in r):
        return ""
    return "; rates " + pair(*(pct_range([r[i] for r in rates]) for i in range(2)))


def over_by_octave(by_seed: dict[int, dict]) -> list[str]:
    """Each octave over the target on some seed: on how many, where, and
    the trace's own estimate there."""
    found: dict[tuple[str, int], list[dict]] = {}
    for v in by_seed.values():
        for d, _ in DIRECTIONS:
            for r in octaves_over(v, d):
                found.setdefault((d, r["octave"]), []).append(r)
    label = dict(DIRECTIONS)
    return [f"{count_words(len(rs), len(by_seed))}, {scale(rs[0]['scale_s'])} {label[d]} ({rs[0]['n_trace']:,} coefficients; "
            f"trace's 95% interval ±{rs[0]['trace_ci_half']:.2f})" for (d, _), rs in sorted(found.items(), key=lambda kv: kv[0][1])]


def seeds_table(runs: dict[str, dict[int, dict]], seeds: list[int]) -> str:
    rows = [[stem(name), energy_ranges(by_seed) + rate_note(by_seed), "; ".join(over_by_octave(by_seed)) or "none"]
            for name, by_seed in runs.items()]
    return (f"Over seeds {seed_span(seeds)}, whole sessions (largest difference A to B / B to A):\n\n"
            + table(["trace", f"seeds {seed_span(seeds)}", "over 1.0"], rows))


def seed_span(seeds: list[int]) -> str:
    contiguous = seeds == list(range(seeds[0], seeds[-1] + 1))
    return f"{seeds[0]}-{seeds[-1]}" if contiguous and len(seeds) > 1 else ",".join(map(str, seeds))


# ---- the corpus over seeds


def octaves_cell(by_seed: dict[int, dict], d: str, beyond_interval: bool) -> str:
    """The octaves over on any seed: how many of the eleven, finest-coarsest."""
    over = {r["octave"]: r["scale_s"] for v in by_seed.values() for r in octaves_over(v, d, beyond_interval)}
    if not over:
        return "none"
    scales = [over[j] for j in sorted(over)]
    if len(scales) == 1:
        return ms(scales[0])
    return f"{len(scales)}: {scales[0] * 1e3:.0f}-{ms(scales[-1])}"


def corpus_row(name: str, model: dict, by_seed: dict[int, dict]) -> list[str]:
    rates = [rate_errors(v) for v in by_seed.values()]
    ks = [x for v in by_seed.values() for x in size_ks(v) if x is not None]
    octaves = lambda beyond: pair(*(octaves_cell(by_seed, d, beyond) for d, _ in DIRECTIONS))
    return [stem(name), model["link"]["capture_point"], pair(*(pct_range([r[i] for r in rates]) for i in range(2))),
            num(max(ks), 3) if ks else "-", energy_ranges(by_seed), octaves(False), octaves(True)]


def corpus_table(title: str, models: dict[str, dict], runs: dict[str, dict[int, dict]]) -> str:
    header = ["trace", "capture point", "rate error A→B / B→A", "KS sizes (max)", "max energy A→B / B→A", "octaves over 1.0",
              "over 1.0 and the trace's interval"]
    return f"{title}\n\n" + table(header, [corpus_row(name, models[name], by_seed) for name, by_seed in runs.items()])


# ---- running it all


def run_seeds(trace: Path, out: Path, seeds: list[int], reuse: bool) -> tuple[dict, dict[int, dict]]:
    """The model of `trace` and its whole-session validation per seed."""
    model = extracted(trace, out, reuse)
    return model, {s: validated(trace, out, "sessions", s, reuse) for s in seeds}


def shared_tables(names: list[str], out: Path, seeds: list[int], reuse: bool) -> list[str]:
    runs, marginals = {}, {}
    for name in names:
        trace = traces_dir() / name
        _, runs[name] = run_seeds(trace, out / stem(name), seeds, reuse)
        marginals[name] = validated(trace, out / stem(name), "marginals", seeds[0], reuse)
    return [shared_table(runs, marginals, seeds[0]), seeds_table(runs, seeds)]


def corpus_tables(only: list[str] | None, out: Path, seeds: list[int], reuse: bool) -> list[str]:
    tables, halves = [], corpus_halves()
    for half, title in (("tuned", "**Tuned half** (asserted at seed 1):"), ("held-out", "**Held-out half** (reported only):")):
        models, runs = {}, {}
        for name in wanted(halves[half], only):
            models[name], runs[name] = run_seeds(CORPUS / name, out / stem(name), seeds, reuse)
        if runs:
            tables.append(corpus_table(title, models, runs))
    return tables


def arguments() -> argparse.Namespace:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--seeds", type=parse_seeds, default=parse_seeds("1-5"), help="seeds (default 1-5; the first one is the shared table's)")
    p.add_argument("--only", choices=["shared", "corpus"], help="only the shared traces' tables, or only the corpus's")
    p.add_argument("--trace", action="append", help="only this trace, by file name or without its extension (repeatable)")
    p.add_argument("-o", "--output", type=Path, help="run directories (default: a temporary directory, removed after)")
    p.add_argument("--reuse", action="store_true", help="read the runs already in the output directory instead of running again")
    return p.parse_args()


def make_tables(args: argparse.Namespace, out: Path) -> list[str]:
    tables = []
    if args.only != "corpus":
        names = wanted(SHARED, args.trace)
        if names:
            tables += shared_tables(names, out, args.seeds, args.reuse)
    if args.only != "shared":
        tables += corpus_tables(args.trace, out, args.seeds, args.reuse)
    return tables


def main() -> int:
    args = arguments()
    start = time.monotonic()
    if args.output is not None:
        tables = make_tables(args, args.output)
    else:
        with tempfile.TemporaryDirectory(prefix="realism-") as tmp:
            tables = make_tables(args, Path(tmp))
    if not tables:
        sys.exit("realism: no trace matches --trace")
    print("\n\n".join(tables))
    print(f"realism: {time.monotonic() - start:.0f} s in all", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
