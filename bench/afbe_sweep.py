"""The AF/BE study (examples/afbe.toml) over load and AF share, optionally
beside ns-2 2.35's diffserv module on the same setting (bench/ns2/afbe.tcl).

    python bench/afbe_sweep.py [--loads 0.3,0.5,0.7,0.9] [--af-shares 0.5]
                               [--seeds 1,2,3] [--stop 180] [--ns2] [--ns2-control]
                               [--same-flows] [--ns2-cache DIR] [--tcp-flavour ns2]
                               [-j 2] [-o runs/afbe]

For each (load, AF share) it runs the example's setting with web flows of
both clouds at that load, once per seed, and prints per class (AF, BE)
the mean flow completion time of each flow length over the flows of
every seed, the drop fraction and the early-drop fraction (RED's random
drops over all drops: ns-2's dsRED counts its forced drops, past max_th,
with the buffer overflows as `ldrops`, and only the random ones as
`edrops`). With --ns2 it runs ns-2 on the same setting and seeds and
prints its figures beside undertow's, with the spread of each side's
per-seed means (half the range over the mean). ns-2 2.35's one-way TCP
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
    summary = json.loads((out / "summary.json").read_text())
    res: dict = {"flows": defaultdict(list), "counts": {}}
    for name in CLASSES:
        if name not in summary["apps"]:
            continue
        t = pq.read_table(out / "records" / f"{name}.parquet").to_pydict()
        for b, v in zip(t["bytes"], t["completion_s"]):
            res["flows"][name, b].append(v)
    classes = summary["links"]["bottleneck_fwd"]["classes"] or {}
    for name, k in CLASSES.items():
        c = classes.get(str(k))
        if c:
            early = sum(r["early"] for r in c["drops_by_colour"].values())
            res["counts"][name] = {"offered": c["offered"], "drops": c["drops"], "early": early}
    return res


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
            cache: Path | None = None, flows: Path | None = None) -> dict:
    """ns-2's run of bench/ns2/afbe.tcl, in the form of run_undertow's; with
    `control`, each flow also sends the three 40-byte packets a two-way
    TCP sends beside its SYN and data; with `flows` (write_flows), it
    starts those flows in place of its own Poisson arrivals. ns-2 is
    deterministic: with `cache`, its output is kept there and reused
    (not for `flows`)."""
    args = [str(load), str(af_share), str(seed), str(stop), str(end), str(int(control))]
    kept = cache / ("afbe_" + "_".join(args) + ".txt") if cache and not flows else None
    if kept and kept.exists():
        out = kept.read_text()
    else:
        # ns runs in the temporary directory: the flows by their absolute path.
        cmd = ["ns", str(NS2_SCRIPT), *args] + ([str(Path(flows).resolve())] if flows else [])
        out = subprocess.run(cmd, check=True, capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
        if kept:
            kept.parent.mkdir(parents=True, exist_ok=True)
            kept.write_text(out)
    res: dict = {"flows": defaultdict(list), "counts": {}}
    stats = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "flow":
            res["flows"][f[1], int(f[2])].append(float(f[4]) - ACK_BACK_S)
        elif len(f) == 5 and f[0].isdigit():
            stats[int(f[0])] = [int(x) for x in f[1:]]
    for name, cps in NS2_CODEPOINTS.items():
        tot, _, ldrops, edrops = (sum(stats.get(cp, [0] * 4)[i] for cp in cps) for i in range(4))
        if tot:
            res["counts"][name] = {"offered": tot, "drops": ldrops + edrops, "early": edrops}
    return res


def run_same_flows(load: float, af_share: float, seed: int, args, out: Path) -> tuple[dict, dict]:
    """undertow's run, then ns-2's with the flows undertow completed."""
    u = run_undertow(load, af_share, seed, args.stop, args.end, out, args.tcp_flavour)
    flows = out / "ns2_flows.txt"
    unfinished = write_flows(out, flows)
    if unfinished:
        print(f"load {load:g}, AF share {af_share:g}, seed {seed}: {unfinished} of undertow's flows did not complete"
              " and are not replayed", file=sys.stderr)
    return u, run_ns2(load, af_share, seed, args.stop, args.end, args.ns2_control, None, flows)


def mean(v):
    return sum(v) / len(v) if v else None


def pooled(runs: list[dict]) -> dict:
    """Every seed's flows together; drop counts summed; per-seed means kept for the spread."""
    out: dict = {"completion": {}, "spread": {}, "n": {}}
    for name in CLASSES:
        for b in SIZES:
            per_seed = [mean(r["flows"].get((name, b), [])) for r in runs]
            per_seed = [m for m in per_seed if m is not None]
            flows = [v for r in runs for v in r["flows"].get((name, b), [])]
            m = mean(flows)
            out["completion"][name, b] = m
            out["n"][name, b] = len(flows)
            out["spread"][name, b] = (max(per_seed) - min(per_seed)) / 2 / m if m and len(per_seed) > 1 else None
        counts = [r["counts"][name] for r in runs if name in r["counts"]]
        offered, drops, early = (sum(c[k] for c in counts) for k in ("offered", "drops", "early"))
        out[name + "_drop"] = drops / offered if offered else None
        out[name + "_early"] = early / drops if drops else None
        out[name + "_drops"] = drops
    return out


def fmt(x, spec=".3f") -> str:
    return "-" if x is None else format(x, spec)


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
    p.add_argument("-j", "--jobs", type=int, default=1, help="runs at once")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/afbe"))
    args = p.parse_args()
    args.ns2 = args.ns2 or args.same_flows
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
    within = total = close = compared = 0
    for share, load in points:
        u = pooled([results["u", share, load, s] for s in seeds])
        n = pooled([results["n", share, load, s] for s in seeds]) if args.ns2 else None
        print(f"\nload {load:g}, AF share {share:g}, seeds {args.seeds}")
        head = f"{'class':<6}{'bytes':>7}{'flows':>7}{'completion s':>14}{'spread':>8}"
        print(head + (f"{'ns-2 s':>9}{'spread':>8}{'ratio':>7}" if n else ""))
        for name in CLASSES:
            for b in SIZES:
                c = u["completion"][name, b]
                line = f"{name:<6}{b:>7}{u['n'][name, b]:>7}{fmt(c):>14}{fmt(u['spread'][name, b], '.0%'):>8}"
                row = {"load": load, "af_share": share, "class": name, "bytes": b, "completion_s": c}
                if n:
                    ns = n["completion"][name, b]
                    ratio = c / ns if c and ns else None
                    line += f"{fmt(ns):>9}{fmt(n['spread'][name, b], '.0%'):>8}{fmt(ratio, '.2f'):>7}"
                    row.update(ns2_completion_s=ns, ratio=ratio)
                    if ratio is not None:
                        total += 1
                        within += abs(ratio - 1) <= TOLERANCE
                rows.append(row)
                print(line)
        for name in CLASSES:
            line = f"{name}: drop fraction {fmt(u[name + '_drop'])}, early-drop fraction {fmt(u[name + '_early'])} ({u[name + '_drops']} drops)"
            row = {"load": load, "af_share": share, "class": name, "drop_fraction": u[name + "_drop"],
                   "early_drop_fraction": u[name + "_early"], "drops": u[name + "_drops"]}
            if n:
                line += f"; ns-2 {fmt(n[name + '_drop'])}, {fmt(n[name + '_early'])} ({n[name + '_drops']} drops)"
                row.update(ns2_drop_fraction=n[name + "_drop"], ns2_early_drop_fraction=n[name + "_early"], ns2_drops=n[name + "_drops"])
                if u[name + "_early"] is not None and n[name + "_early"]:
                    compared += 1
                    close += abs(u[name + "_early"] / n[name + "_early"] - 1) <= TOLERANCE
            print(line)
            rows.append(row)
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "sweep.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.ns2:
        print(f"\nmean completion times within {TOLERANCE:.0%} of ns-2: {within} of {total}")
        print(f"early-drop fractions within {TOLERANCE:.0%} of ns-2: {close} of {compared}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
