"""The AF/BE study (examples/afbe.toml) over load and AF share, optionally
beside ns-2 2.35's diffserv module on the same setting (bench/ns2/afbe.tcl).

    python bench/afbe_sweep.py [--loads 0.3,0.5,0.7,0.9] [--af-shares 0.5]
                               [--seeds 1,2,3] [--stop 180] [--ns2] [--ns2-control]
                               [--same-flows] [--ns2-cache DIR] [--tcp-flavour ns2]
                               [--reuse] [--queue] [--tails SECONDS] [-j 2] [-o runs/afbe]

For each (load, AF share) it runs the example's setting with web flows of
both clouds at that load, once per seed, and prints per class (AF, BE)
the mean flow completion time of each flow length over the flows of
every seed, AF's share marked out of profile (summary.json's `by_colour`;
ns-2's code point 11), the drop fraction and the early-drop fraction (RED's random
drops over all drops: ns-2's dsRED counts its forced drops, past max_th,
with the buffer overflows as `ldrops`, and only the random ones as
`edrops`). With --ns2 it runs ns-2 on the same setting and seeds and
prints its figures beside undertow's: each mean with its relative
standard error, each ratio with its 95% interval (a bootstrap over 10 s
blocks of arrivals; early-drop fractions by seed), and a ratio outside
15% called noise when its interval reaches within 15%. ns-2 2.35's one-way TCP
opens with a 40-byte SYN (syn_ true) and reports a flow done when the
last data packet is ACKed, so its completion time less the last ACK's
way back is undertow's `completion_s` (SYN to the last byte at the sink).
It sends no other control packet, where undertow's two-way TCP sends
three more through the bottleneck per flow (the handshake's ACK, the FIN,
the ACK of the peer's FIN), which RIO-C's averages count as packets like
any other; --ns2-control has ns-2's flows send those three too.
Each side draws its own Poisson arrivals, whose offered load over a run
differs from the mean by a few percent, which near saturation moves best
effort's completion times by tens of percent; --same-flows has ns-2 start
the flows undertow's run completed, at the same times and sizes, so that
the two differ only in what the queue and TCP do with the same load.
With --same-flows, --queue also compares how full the bottleneck's queue
was: per millisecond the most packets waiting at once (undertow's series,
ns-2's queue trace), as the share of milliseconds with k or more waiting.
Target: within 15%.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

ROOT = Path(__file__).resolve().parent.parent
UNDERTOW = Path(sys.executable).parent / "undertow"
EXAMPLE = ROOT / "examples" / "afbe.toml"
NS2_SCRIPT = ROOT / "bench" / "ns2" / "afbe.tcl"
SIZES = [1000, 3000, 6000, 10000, 20000, 45000, 90000]
# The last ACK's way back to the sender: 1 + 20 + 1 ms of propagation and
# its 40 bytes serialised at 100, 10 and 100 Mbit/s.
ACK_BACK_S = 0.022 + 40 * 8 * (2 / 100e6 + 1 / 10e6)
TOLERANCE = 0.15
CLASSES = {"af": 1, "be": 0}
# ns-2's code points: AF in profile, AF out of profile; best effort.
NS2_CODEPOINTS = {"af": [10, 11], "be": [0]}
KEYS = [(name, b) for name in CLASSES for b in SIZES]


def scenario(load: float, af_share: float, stop: float, end: float, flavour: str | None = None) -> str:
    """The example's setting with the two clouds' web flows at this point."""
    text = EXAMPLE.read_text()
    if flavour:
        text = text.replace("[tcp]\n", f'[tcp]\nflavour = "{flavour}"\n', 1)
    head = text[: text.index("[cases.")]
    head = re.sub(r'^duration\s*=\s*"[^"]*"', f'duration = "{end}s"', head, count=1, flags=re.M)
    sizes = ", ".join(f'["{b}B", 1]' for b in SIZES)
    for name, share in (("af", af_share), ("be", 1 - af_share)):
        if share > 0:
            head += (f'\n[[background]]\nmodel = "web"\nname = "{name}"\nclass = {CLASSES[name]}\nhosts = 20\n'
                     f'load = "{load * share * 100:.6g}%"\nstop = "{stop}s"\nflow_sizes = [{sizes}]\n')
    return head


def run_undertow(load: float, af_share: float, seed: int, stop: float, end: float, out: Path, flavour: str | None = None) -> dict:
    """One run: completion times per (class, bytes) and drop counts per class."""
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "afbe.toml"
        f.write_text(scenario(load, af_share, stop, end, flavour))
        subprocess.run([str(UNDERTOW), "run", str(f), "-o", str(out), "--overwrite", "-q", "--seed", str(seed)], check=True)
    return read_undertow(out)


def new_result() -> dict:
    """Per (class, bytes) the flows' completion times and, in the same order, their
    start times; per class the drop counts."""
    return {"flows": defaultdict(list), "starts": defaultdict(list), "counts": {}, "queue": None}


def read_undertow(out: Path) -> dict:
    """run_undertow's result from its run directory."""
    summary = json.loads((out / "summary.json").read_text())
    res = new_result()
    for name in CLASSES:
        if name not in summary["apps"]:
            continue
        t = pq.read_table(out / "records" / f"{name}.parquet").to_pydict()
        for b, s, v in zip(t["bytes"], t["start_s"], t["completion_s"]):
            res["flows"][name, b].append(v)
            res["starts"][name, b].append(s)
    classes = summary["links"]["bottleneck_fwd"]["classes"] or {}
    for name, k in CLASSES.items():
        c = classes.get(str(k))
        if c:
            early = sum(r["early"] for r in c["drops_by_colour"].values())
            res["counts"][name] = {"offered": c["offered"], "drops": c["drops"], "early": early,
                                   "out": c["by_colour"].get("yellow", 0) + c["by_colour"].get("red", 0)}
    series = pq.read_table(out / "series" / "bottleneck.parquet", columns=["fwd_queue_packets"])
    res["queue"] = np.bincount(series.column(0).to_numpy())
    return res


def ns2_occupancy(trace: Path, end: float, bin_s: float = 0.001) -> np.ndarray:
    """From afbe.tcl's TRACE: how many milliseconds of the run had each
    number of packets waiting at most at once (its index), as undertow's
    series counts them: the packets that arrived ("+") less those that
    started their service ("-") or were dropped ("d"), taken after all the
    events of one instant."""
    most = np.zeros(int(round(end / bin_s)), dtype=np.int64)
    n = held = last = 0
    t_prev = None

    def settle(t: float) -> None:
        # The instant t is over, leaving n waiting.
        nonlocal held, last
        b = int(t / bin_s)
        if b < len(most):
            if b > last:
                most[last + 1:b] = held
                most[b] = max(held, n) if t > b * bin_s else n
                last = b
            else:
                most[b] = max(most[b], n)
        held = n

    with open(trace) as f:
        for line in f:
            kind, t, src, dst = line.split(None, 4)[:4]
            if src != "2" or dst != "3" or kind not in "+-d":
                continue
            t = float(t)
            if t_prev is not None and t != t_prev:
                settle(t_prev)
            t_prev = t
            n += 1 if kind == "+" else -1
    if t_prev is not None:
        settle(t_prev)
    most[last + 1:] = held
    return np.bincount(most)


def write_flows(run_dir: Path, path: Path) -> int:
    """The flows undertow's run completed, as afbe.tcl's FLOWS lines
    ("CLOUD BYTES START"); returns how many flows it started and did not
    complete (not replayed)."""
    lines, opened = [], 0
    conns = pq.read_table(run_dir / "records" / "connections.parquet").to_pydict()
    for name in CLASSES:
        t = pq.read_table(run_dir / "records" / f"{name}.parquet").to_pydict()
        lines += [(s, f"{name} {b} {s:.9f}") for b, s in zip(t["bytes"], t["start_s"])]
        opened += sum(1 for a, act in zip(conns["app"], conns["active"]) if a == name and act)
    path.write_text("".join(line + "\n" for _, line in sorted(lines)))
    return opened - len(lines)


def run_ns2(load: float, af_share: float, seed: int, stop: float, end: float, control: bool = False,
            cache: Path | None = None, flows: Path | None = None, keep: Path | None = None,
            trace: Path | None = None) -> dict:
    """ns-2's run of bench/ns2/afbe.tcl, in the form of run_undertow's; with
    `control`, each flow also sends the three 40-byte packets a two-way
    TCP sends beside its SYN and data; with `flows` (write_flows), it
    starts those flows in place of its own Poisson arrivals. ns-2 is
    deterministic: with `cache`, its output is kept there and reused
    (not for `flows` or `trace`); `keep` is a file its output is written
    to; `trace`, one its queue trace is."""
    args = [str(load), str(af_share), str(seed), str(stop), str(end), str(int(control))]
    kept = cache / ("afbe_" + "_".join(args) + ".txt") if cache and not flows and not trace else None
    if kept and kept.exists():
        out = kept.read_text()
    else:
        # ns runs in the temporary directory: the flows by their absolute path.
        cmd = ["ns", str(NS2_SCRIPT), *args, str(Path(flows).resolve()) if flows else ""]
        cmd += [str(Path(trace).resolve())] if trace else []
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
        if kept:
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(out)
    if keep:
        keep.write_text(out)
    return parse_ns2(out)


def parse_ns2(out: str) -> dict:
    """run_ns2's result from afbe.tcl's output."""
    res = new_result()
    stats = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "flow":
            res["flows"][f[1], int(f[2])].append(float(f[4]) - ACK_BACK_S)
            res["starts"][f[1], int(f[2])].append(float(f[3]))
        elif len(f) == 5 and f[0].isdigit():
            stats[int(f[0])] = [int(x) for x in f[1:]]
    for name, cps in NS2_CODEPOINTS.items():
        tot, _, ldrops, edrops = (sum(stats.get(cp, [0] * 4)[i] for cp in cps) for i in range(4))
        if tot:
            # A class's code points after its first are its out-of-profile ones.
            out = sum(stats.get(cp, [0] * 4)[0] for cp in cps[1:])
            res["counts"][name] = {"offered": tot, "drops": ldrops + edrops, "early": edrops, "out": out}
    return res


def run_same_flows(load: float, af_share: float, seed: int, args, out: Path) -> tuple[dict, dict]:
    """undertow's run, then ns-2's with the flows undertow completed. Both
    outputs stay in `out`. With --reuse, ns-2's output kept there is read
    back instead of run again when the settings and the flows it replayed
    are the same: ns-2's run is a function of those alone, and undertow's
    (seconds, where ns-2 takes minutes) is run again, so that a changed
    simulator never passes for the one the kept output answered."""
    point = {"load": load, "af_share": af_share, "seed": seed, "stop": args.stop, "end": args.end,
             "tcp_flavour": args.tcp_flavour, "ns2_control": args.ns2_control}
    done, ns2_out, flows = out / "point.json", out / "ns2.txt", out / "ns2_flows.txt"
    ns2_queue = out / "ns2_queue.json"
    needed = (done, ns2_out, flows) + ((ns2_queue,) if args.queue else ())
    kept = None
    if args.reuse and all(f.exists() for f in needed) and json.loads(done.read_text()) == point:
        # The run below replaces the directory whole.
        kept = (flows.read_text(), ns2_out.read_text(), ns2_queue.read_text() if args.queue else None)
    u = run_undertow(load, af_share, seed, args.stop, args.end, out, args.tcp_flavour)
    unfinished = write_flows(out, flows)
    if unfinished:
        print(f"load {load:g}, AF share {af_share:g}, seed {seed}: {unfinished} of undertow's flows did not complete"
              " and are not replayed", file=sys.stderr)
    if kept and kept[0] == flows.read_text():
        ns2_out.write_text(kept[1])
        n = parse_ns2(kept[1])
        if args.queue:
            ns2_queue.write_text(kept[2])
    elif args.queue:
        with tempfile.TemporaryDirectory() as tmp:
            trace = Path(tmp) / "queue.tr"
            n = run_ns2(load, af_share, seed, args.stop, args.end, args.ns2_control, None, flows, ns2_out, trace)
            ns2_queue.write_text(json.dumps(ns2_occupancy(trace, args.end).tolist()) + "\n")
    else:
        n = run_ns2(load, af_share, seed, args.stop, args.end, args.ns2_control, None, flows, ns2_out)
    if args.queue:
        n["queue"] = np.array(json.loads(ns2_queue.read_text()))
    done.write_text(json.dumps(point) + "\n")
    return u, n


def mean(v):
    return sum(v) / len(v) if v else None


def pooled(runs: list[dict]) -> dict:
    """Every seed's flows together; drop counts summed."""
    out: dict = {"completion": {}, "n": {}}
    for name in CLASSES:
        for b in SIZES:
            flows = [v for r in runs for v in r["flows"].get((name, b), [])]
            out["completion"][name, b] = mean(flows)
            out["n"][name, b] = len(flows)
        counts = [r["counts"][name] for r in runs if name in r["counts"]]
        offered, drops, early, off = (sum(c[k] for c in counts) for k in ("offered", "drops", "early", "out"))
        out[name + "_drop"] = drops / offered if offered else None
        out[name + "_early"] = early / drops if drops else None
        out[name + "_drops"] = drops
        out[name + "_out"] = off / offered if offered else None
        out[name + "_out_packets"] = off
    return out


# The uncertainty of a pooled mean comes from a bootstrap over blocks of
# arrivals: flows that start close together share a congestion episode (and
# its timeouts), so they are resampled together, each seed's arrivals cut
# into BLOCK_S pieces. With the same flows on both sides (--same-flows) the
# same blocks are drawn for both, so the ratio's interval leaves out what
# the two share (the offered load); otherwise each side is drawn apart.
# Drop counts exist per run only: their fractions are resampled by seed.
BLOCK_S = 10.0
REPLICATES = 2000
LEVEL = 0.95


def block_sums(runs: list[dict], end: float) -> tuple[np.ndarray, np.ndarray]:
    """Per block (a seed's BLOCK_S of arrivals) and (class, bytes) in KEYS
    order: the sum of the flows' completion times and their number."""
    nb = int(np.ceil(end / BLOCK_S))
    total, count = np.zeros((len(runs) * nb, len(KEYS))), np.zeros((len(runs) * nb, len(KEYS)))
    for i, r in enumerate(runs):
        for k, key in enumerate(KEYS):
            blocks = i * nb + np.minimum(np.asarray(r["starts"].get(key, []), dtype=float) // BLOCK_S, nb - 1).astype(int)
            np.add.at(total[:, k], blocks, np.asarray(r["flows"].get(key, []), dtype=float))
            np.add.at(count[:, k], blocks, 1)
    return total, count


def draws(rng: np.random.Generator, units: int) -> np.ndarray:
    """REPLICATES bootstrap samples of `units` units: how often each is drawn."""
    return rng.multinomial(units, np.full(units, 1 / units), size=REPLICATES).astype(float)


def interval(x: np.ndarray) -> tuple[float, float]:
    """The central LEVEL interval of the replicates, NaNs (empty samples) left out."""
    x = x[np.isfinite(x)]
    if len(x) == 0:
        return (float("nan"), float("nan"))
    lo, hi = np.quantile(x, [(1 - LEVEL) / 2, (1 + LEVEL) / 2])
    return float(lo), float(hi)


def uncertainty(u_runs: list[dict], n_runs: list[dict] | None, end: float, paired: bool) -> dict:
    """Per (class, bytes): each side's relative standard error of the mean and
    the ratio's LEVEL interval; per class, the early-drop fraction's ratio's
    interval (by seed)."""
    rng = np.random.default_rng(1)
    u_tot, u_cnt = block_sums(u_runs, end)
    w_u = draws(rng, len(u_tot))
    with np.errstate(invalid="ignore", divide="ignore"):
        u_means = (w_u @ u_tot) / (w_u @ u_cnt)
        out: dict = {"se": {}, "ns2_se": {}, "ratio": {}}
        if n_runs is not None:
            n_tot, n_cnt = block_sums(n_runs, end)
            w_n = w_u if paired else draws(rng, len(n_tot))
            n_means = (w_n @ n_tot) / (w_n @ n_cnt)
        for k, key in enumerate(KEYS):
            out["se"][key] = relative_se(u_means[:, k])
            if n_runs is not None:
                out["ns2_se"][key] = relative_se(n_means[:, k])
                out["ratio"][key] = interval(u_means[:, k] / n_means[:, k])
        if n_runs is not None and len(u_runs) > 1:
            w_s = draws(rng, len(u_runs))
            w_t = w_s if paired else draws(rng, len(n_runs))
            for name in CLASSES:
                u_e, u_d = (np.array([r["counts"].get(name, {}).get(c, 0) for r in u_runs], dtype=float) for c in ("early", "drops"))
                n_e, n_d = (np.array([r["counts"].get(name, {}).get(c, 0) for r in n_runs], dtype=float) for c in ("early", "drops"))
                out["ratio"][name + "_early"] = interval(((w_s @ u_e) / (w_s @ u_d)) / ((w_t @ n_e) / (w_t @ n_d)))
    return out


def relative_se(means: np.ndarray) -> float | None:
    m = means[np.isfinite(means)]
    return float(np.std(m) / np.mean(m)) if len(m) > 1 and np.mean(m) > 0 else None


def verdict(ratio: float, iv: tuple[float, float] | None) -> str:
    """'within' the tolerance; else 'noise' when the ratio's interval still
    reaches within it, 'outside' when the whole interval lies beyond it."""
    if abs(ratio - 1) <= TOLERANCE:
        return "within"
    if iv is None or not np.isfinite(iv[0]):
        return "outside"
    return "noise" if iv[0] <= 1 + TOLERANCE and iv[1] >= 1 - TOLERANCE else "outside"


def fmt(x, spec=".3f") -> str:
    return "-" if x is None or (isinstance(x, float) and not np.isfinite(x)) else format(x, spec)


def fmt_iv(iv) -> str:
    return "-" if iv is None or not np.isfinite(iv[0]) else f"{iv[0]:.2f}-{iv[1]:.2f}"


def tails(u_runs: list[dict], n_runs: list[dict], slow: float) -> None:
    """Per (class, bytes): how many flows took `slow` seconds or more on each
    side (a SYN timeout, or a backed-off RTO) and how the means of the other
    flows compare."""
    print(f"\n  flows taking {slow:g} s or more, and the ratio of the means of the others")
    for key in KEYS:
        u = [v for r in u_runs for v in r["flows"].get(key, [])]
        n = [v for r in n_runs for v in r["flows"].get(key, [])]
        fast_u, fast_n = [v for v in u if v < slow], [v for v in n if v < slow]
        if not fast_u or not fast_n:
            continue
        share_u = sum(v for v in u if v >= slow) / sum(u)
        share_n = sum(v for v in n if v >= slow) / sum(n)
        print(f"  {key[0]:<4}{key[1]:>7}: {len(u) - len(fast_u):>4} ({share_u:.0%} of the sum) against"
              f" {len(n) - len(fast_n):>4} ({share_n:.0%}); the others {mean(fast_u) / mean(fast_n):.2f}")


def pooled_queue(runs: list[dict]) -> np.ndarray:
    """Per count of packets waiting, the milliseconds of every run with that many."""
    h = np.zeros(max(len(r["queue"]) for r in runs), dtype=np.int64)
    for r in runs:
        h[: len(r["queue"])] += r["queue"]
    return h


def occupancy(u_runs: list[dict], n_runs: list[dict]) -> None:
    """The share of milliseconds with k or more packets waiting at once in
    the bottleneck's queue, every seed's together, on each side."""
    def mean(h: np.ndarray) -> float:
        return float(np.arange(len(h)) @ h / h.sum())

    u, n = pooled_queue(u_runs), pooled_queue(n_runs)
    print(f"\n  the queue, per millisecond the most packets waiting at once: mean {mean(u):.2f} against {mean(n):.2f}")
    print(f"  {'k':>5}{'share with k or more':>22}{'ns-2':>10}{'ratio':>7}")
    for k in (1, 10, 20, 40, 60, 80, 90, 95, 99):
        su, sn = u[k:].sum() / u.sum(), n[k:].sum() / n.sum()
        print(f"  {k:>5}{su:>22.5f}{sn:>10.5f}{fmt(su / sn if sn else None, '.2f'):>7}")


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loads", default="0.3,0.5,0.7,0.9")
    p.add_argument("--af-shares", default="0.5")
    p.add_argument("--seeds", default="1", help="comma-separated seeds, pooled")
    p.add_argument("--stop", type=float, default=180.0, help="no new flow after this (s)")
    p.add_argument("--end", type=float, default=200.0, help="the run's end (s)")
    p.add_argument("--ns2", action="store_true", help="run ns-2's diffserv module on the same setting")
    p.add_argument("--tcp-flavour", help="undertow's [tcp] flavour (e.g. ns2)")
    p.add_argument("--ns2-control", action="store_true",
                   help="ns-2's flows also send a two-way TCP's handshake ACK, FIN and last ACK (bench/ns2/afbe.tcl)")
    p.add_argument("--ns2-cache", type=Path, help="keep ns-2's output here and reuse it (ns-2 is deterministic)")
    p.add_argument("--same-flows", action="store_true",
                   help="ns-2 starts the flows undertow's run started (same sizes and times) in place of its own arrivals; implies --ns2")
    p.add_argument("--reuse", action="store_true",
                   help="with --same-flows: reuse ns-2's output kept in the output directory for the same settings and flows")
    p.add_argument("--queue", action="store_true",
                   help="with --same-flows: also compare how full the bottleneck's queue was, millisecond by millisecond")
    p.add_argument("--tails", type=float, metavar="SECONDS",
                   help="also print, per class and length, the flows taking this long or more on each side")
    p.add_argument("-j", "--jobs", type=int, default=1, help="runs at once")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/afbe"))
    args = p.parse_args()
    args.ns2 = args.ns2 or args.same_flows
    if args.queue and not args.same_flows:
        p.error("--queue compares the same flows on both sides: it needs --same-flows")
    seeds = [int(x) for x in args.seeds.split(",")]
    points = [(float(s), float(lo)) for s in args.af_shares.split(",") for lo in args.loads.split(",")]
    with ThreadPoolExecutor(max_workers=max(1, args.jobs)) as pool:
        jobs = {}
        for share, load in points:
            for seed in seeds:
                out = args.output / f"load{load:g}_af{share:g}_seed{seed}"
                if args.same_flows:
                    jobs["p", share, load, seed] = pool.submit(run_same_flows, load, share, seed, args, out)
                    continue
                jobs["u", share, load, seed] = pool.submit(run_undertow, load, share, seed, args.stop, args.end, out, args.tcp_flavour)
                if args.ns2:
                    jobs["n", share, load, seed] = pool.submit(run_ns2, load, share, seed, args.stop, args.end, args.ns2_control, args.ns2_cache)
        results = {}
        for k, f in jobs.items():
            if k[0] == "p":
                results[("u", *k[1:])], results[("n", *k[1:])] = f.result()
            else:
                results[k] = f.result()
    rows = []
    tally = {"completion": defaultdict(int), "early": defaultdict(int)}
    for share, load in points:
        u_runs = [results["u", share, load, s] for s in seeds]
        n_runs = [results["n", share, load, s] for s in seeds] if args.ns2 else None
        u, n = pooled(u_runs), (pooled(n_runs) if n_runs else None)
        unc = uncertainty(u_runs, n_runs, args.end, args.same_flows)
        print(f"\nload {load:g}, AF share {share:g}, seeds {args.seeds}")
        head = f"{'class':<6}{'bytes':>7}{'flows':>7}{'completion s':>14}{'±se':>6}"
        print(head + (f"{'ns-2 s':>9}{'±se':>6}{'ratio':>7}{f'{LEVEL:.0%} interval':>14}" if n else ""))
        for key in KEYS:
            name, b = key
            c = u["completion"][key]
            line = f"{name:<6}{b:>7}{u['n'][key]:>7}{fmt(c):>14}{fmt(unc['se'][key], '.0%'):>6}"
            row = {"load": load, "af_share": share, "class": name, "bytes": b, "completion_s": c, "se": unc["se"][key]}
            if n:
                ns = n["completion"][key]
                ratio = c / ns if c and ns else None
                iv = unc["ratio"][key]
                line += f"{fmt(ns):>9}{fmt(unc['ns2_se'][key], '.0%'):>6}{fmt(ratio, '.2f'):>7}{fmt_iv(iv):>14}"
                row.update(ns2_completion_s=ns, ns2_se=unc["ns2_se"][key], ratio=ratio, ratio_interval=iv)
                if ratio is not None:
                    v = verdict(ratio, iv)
                    tally["completion"][v] += 1
                    line += "" if v == "within" else f"  {v}"
            rows.append(row)
            print(line)
        for name in CLASSES:
            line = f"{name}: drop fraction {fmt(u[name + '_drop'])}, early-drop fraction {fmt(u[name + '_early'])} ({u[name + '_drops']} drops)"
            row = {"load": load, "af_share": share, "class": name, "drop_fraction": u[name + "_drop"],
                   "early_drop_fraction": u[name + "_early"], "drops": u[name + "_drops"], "out_of_profile": u[name + "_out"]}
            if n:
                line += f"; ns-2 {fmt(n[name + '_drop'])}, {fmt(n[name + '_early'])} ({n[name + '_drops']} drops)"
                row.update(ns2_drop_fraction=n[name + "_drop"], ns2_early_drop_fraction=n[name + "_early"], ns2_drops=n[name + "_drops"],
                           ns2_out_of_profile=n[name + "_out"])
                if u[name + "_early"] is not None and n[name + "_early"]:
                    ratio = u[name + "_early"] / n[name + "_early"]
                    iv = unc["ratio"].get(name + "_early")
                    v = verdict(ratio, iv)
                    tally["early"][v] += 1
                    line += f"; ratio {ratio:.2f} ({fmt_iv(iv)})" + ("" if v == "within" else f" {v}")
                    row.update(early_ratio=ratio, early_ratio_interval=iv)
            print(line)
            if len(NS2_CODEPOINTS[name]) > 1:
                # The marker's verdicts on the class it meters (best effort
                # takes `others`): how much of it left out of its profile.
                print(f"{name}: out of profile {fmt(u[name + '_out'], '.5f')} ({u[name + '_out_packets']} packets)"
                      + (f"; ns-2 {fmt(n[name + '_out'], '.5f')} ({n[name + '_out_packets']})" if n else ""))
            rows.append(row)
        if n and args.tails:
            tails(u_runs, n_runs, args.tails)
        if n and args.queue:
            occupancy(u_runs, n_runs)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "sweep.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.ns2:
        for what, label in (("completion", "mean completion times"), ("early", "early-drop fractions")):
            t = tally[what]
            print(f"\n{label} within {TOLERANCE:.0%} of ns-2: {t['within']} of {sum(t.values())}; outside it"
                  f" {t['noise'] + t['outside']}, of which {t['outside']} with the ratio's whole {LEVEL:.0%}"
                  f" interval outside {1 - TOLERANCE:.2f}-{1 + TOLERANCE:.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
