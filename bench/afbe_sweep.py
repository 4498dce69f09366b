"""The AF/BE study (examples/afbe.toml) over load and AF share, optionally
beside ns-2 2.35's diffserv module on the same setting (bench/ns2/afbe.tcl).

    python bench/afbe_sweep.py [--loads 0.3,0.5,0.7,0.9] [--af-shares 0.5]
                               [--seed 1] [--stop 180] [--ns2] [-o runs/afbe]

For each (load, AF share) it runs the example's setting with web flows of
both clouds at that load and prints, per class (AF, BE), the mean flow
completion time of each flow length, the drop fraction and the early-drop
fraction (RED's random and forced drops over all drops, as ns-2's dsRED
counts its edrops). With --ns2 it runs ns-2 on the same setting and prints
its figures beside undertow's. ns-2 2.35's one-way TCP opens with a
40-byte SYN (syn_ true) and reports a flow done when the last data packet
is ACKed, so its completion time less the last ACK's way back is
undertow's `completion_s` (SYN to the last byte at the sink).
Target (issue 16): within 15%.
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
from collections import defaultdict
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


def run_undertow(load: float, af_share: float, seed: int, stop: float, end: float, out: Path, flavour: str | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        f = Path(tmp) / "afbe.toml"
        f.write_text(scenario(load, af_share, stop, end, flavour))
        subprocess.run([str(UNDERTOW), "run", str(f), "-o", str(out), "--overwrite", "-q", "--seed", str(seed)], check=True)
    summary = json.loads((out / "summary.json").read_text())
    res: dict = {"completion": {}, "transfer": {}}
    for name in CLASSES:
        if name not in summary["apps"]:
            continue
        t = pq.read_table(out / "records" / f"{name}.parquet").to_pydict()
        for key, col in (("completion", "completion_s"), ("transfer", "transfer_s")):
            by = defaultdict(list)
            for b, v in zip(t["bytes"], t[col]):
                by[b].append(v)
            res[key][name] = {b: sum(v) / len(v) for b, v in sorted(by.items())}
    classes = summary["links"]["bottleneck_fwd"]["classes"] or {}
    for name, k in CLASSES.items():
        c = classes.get(str(k))
        res[f"{name}_drop"] = c["drop_fraction"] if c else None
        res[f"{name}_early"] = c["early_drop_fraction"] if c else None
    return res


def run_ns2(load: float, af_share: float, seed: int, stop: float, end: float) -> dict:
    out = subprocess.run(["ns", str(NS2_SCRIPT), str(load), str(af_share), str(seed), str(stop), str(end)],
                         check=True, capture_output=True, text=True, cwd=tempfile.gettempdir()).stdout
    by: dict = defaultdict(lambda: defaultdict(list))
    stats = {}
    for line in out.splitlines():
        f = line.split()
        if f and f[0] == "flow":
            by[f[1]][int(f[2])].append(float(f[4]) - ACK_BACK_S)
        elif len(f) == 5 and f[0].isdigit():
            stats[int(f[0])] = [int(x) for x in f[1:]]
    res: dict = {"completion": {c: {b: sum(v) / len(v) for b, v in sorted(d.items())} for c, d in by.items()}}
    for name, cps in (("af", [10, 11]), ("be", [0])):
        tot = sum(stats.get(cp, [0] * 4)[0] for cp in cps)
        ldrops = sum(stats.get(cp, [0] * 4)[2] for cp in cps)
        edrops = sum(stats.get(cp, [0] * 4)[3] for cp in cps)
        drops = ldrops + edrops
        res[f"{name}_drop"] = drops / tot if tot else None
        res[f"{name}_early"] = edrops / drops if drops else None
    return res


def fmt(x) -> str:
    return "-" if x is None else f"{x:.3f}"


def main() -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--loads", default="0.3,0.5,0.7,0.9")
    p.add_argument("--af-shares", default="0.5")
    p.add_argument("--seed", type=int, default=1)
    p.add_argument("--stop", type=float, default=180.0, help="no new flow after this (s)")
    p.add_argument("--end", type=float, default=200.0, help="the run's end (s)")
    p.add_argument("--ns2", action="store_true", help="run ns-2's diffserv module on the same setting")
    p.add_argument("--tcp-flavour", help="undertow's [tcp] flavour (e.g. ns2)")
    p.add_argument("-o", "--output", type=Path, default=Path("runs/afbe"))
    args = p.parse_args()
    rows = []
    for share in [float(x) for x in args.af_shares.split(",")]:
        for load in [float(x) for x in args.loads.split(",")]:
            tag = f"load{load:g}_af{share:g}"
            u = run_undertow(load, share, args.seed, args.stop, args.end, args.output / tag, args.tcp_flavour)
            n = run_ns2(load, share, args.seed, args.stop, args.end) if args.ns2 else None
            print(f"\nload {load:g}, AF share {share:g}")
            print(f"{'class':<6}{'bytes':>7}{'completion s':>14}{'transfer s':>12}" + (f"{'ns-2 s':>10}{'ratio':>7}" if n else ""))
            for name in CLASSES:
                for b in SIZES:
                    c = u["completion"].get(name, {}).get(b)
                    t = u["transfer"].get(name, {}).get(b)
                    line = f"{name:<6}{b:>7}{fmt(c):>14}{fmt(t):>12}"
                    row = {"load": load, "af_share": share, "class": name, "bytes": b, "completion_s": c, "transfer_s": t}
                    if n:
                        ns = n["completion"].get(name, {}).get(b)
                        ratio = c / ns if c and ns else None
                        line += f"{fmt(ns):>10}{fmt(ratio):>7}"
                        row.update(ns2_completion_s=ns, ratio=ratio)
                    rows.append(row)
                    print(line)
            for name in CLASSES:
                line = f"{name}: drop fraction {fmt(u[name + '_drop'])}, early-drop fraction {fmt(u[name + '_early'])}"
                if n:
                    line += f"; ns-2 {fmt(n[name + '_drop'])}, {fmt(n[name + '_early'])}"
                print(line)
                rows.append({"load": load, "af_share": share, "class": name, "drop_fraction": u[name + "_drop"],
                             "early_drop_fraction": u[name + "_early"],
                             **({"ns2_drop_fraction": n[name + "_drop"], "ns2_early_drop_fraction": n[name + "_early"]} if n else {})})
    args.output.mkdir(parents=True, exist_ok=True)
    (args.output / "sweep.json").write_text(json.dumps(rows, indent=1) + "\n")
    if args.ns2:
        ratios = [r["ratio"] for r in rows if r.get("ratio")]
        within = sum(abs(x - 1) <= TOLERANCE for x in ratios)
        print(f"\nmean completion times within {TOLERANCE:.0%} of ns-2: {within} of {len(ratios)}")
        pairs = [(r["early_drop_fraction"], r["ns2_early_drop_fraction"]) for r in rows if r.get("ns2_early_drop_fraction")]
        close = sum(u is not None and abs(u / n - 1) <= TOLERANCE for u, n in pairs)
        print(f"early-drop fractions within {TOLERANCE:.0%} of ns-2: {close} of {len(pairs)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
