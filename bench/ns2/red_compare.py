"""RED in undertow's simulator against ns-2 2.35 on the same setting.

    python bench/ns2/red_compare.py [--flows 4] [--duration 200] [--seeds 1 2 3] [--variant Newreno] [--delack]
                                    [--ecn] [--use-mark-p] [--adaptive]

Long TCP flows (FTP over Agent/TCP/<variant> and TCPSink in ns-2; greedy
background over undertow's `newreno` or `reno` with `flavour = "ns2"`
(ns-2's loss response and RTO estimator), or with --linux-tcp its own
defaults, in both cases without SACK, timestamps or byte counting, an ACK
per packet unless --delack) share a 10 Mbit/s,
20 ms bottleneck whose queue is RED with thresh 5, maxthresh 15,
q_weight 0.002, linterm 10, wait, not gentle, in packets, limit 50
packets; access links 100 Mbit/s, 1 ms. Both sides run `--duration`
seconds per seed. Printed per side, as the mean over the seeds: RED's
average queue at arrivals (ns-2: the mean of its ave_ trace; undertow:
summary.json's red_mean_average_packets), and the shares of the
arrivals at the queue dropped early and forced (ns-2's forced = every
non-early drop; undertow's forced + overflow), with the ratio
undertow / ns-2. Target: within 10%. With --ecn both sides' TCPs use ECN
(ns-2: Agent/TCP ecn_ 1; undertow: tcp.ecn) and RED marks instead of
dropping early (setbit); the marks (packets leaving CE) are compared too.
--use-mark-p sets RED's use_mark_p on both sides (no forced drops past
maxthresh; marks only while p_b < mark_p 0.1); --adaptive runs adaptive RED
(adaptive 1, ns-2's defaults for alpha, beta, interval, top, bottom) with
the automatic thresholds (thresh and maxthresh 0).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
UNDERTOW = Path(sys.executable).parent / "undertow"
TOLERANCE = 0.10

RED = "q_weight = 0.002, linterm = 10, gentle = false, wait = true, bytes = false, queue_in_bytes = false"


def red_table(ecn: bool, use_mark_p: bool, adaptive: bool) -> str:
    """The RED parameters of the setting, as undertow's scenario writes them."""
    thresh = "thresh = 0, maxthresh = 0" if adaptive else "thresh = 5, maxthresh = 15"
    return (f"{thresh}, {RED}, setbit = {str(ecn).lower()}, use_mark_p = {str(use_mark_p).lower()}, "
            f"adaptive = {str(adaptive).lower()}")


def scenario(flows: int, duration: int, seed: int, variant: str, delack: bool, linux: bool = False, ecn: bool = False,
             use_mark_p: bool = False, adaptive: bool = False) -> str:
    cc = variant.lower()
    flavour = "" if linux else 'flavour = "ns2"\n'
    ack = "ack_every = 2, delack_timeout = \"100ms\", quickack = 0" if delack else "ack_every = 1"
    red = red_table(ecn, use_mark_p, adaptive)
    queue = f'{{ element = "queue", rate = "10Mbps", limit = "50p", discipline = "red", red = {{ {red} }} }}'
    return f'''name = "red_compare"
duration = "{duration}s"
seed = {seed}

[topology.bottleneck]
path = [{queue}, {{ element = "delay", delay = "20ms" }}]

[topology.access]
rate = "100Mbps"
delay = "1ms"

[tcp]
{flavour}congestion_control = "{cc}"
sack = false
timestamps = false
byte_counting = false
initial_cwnd = 2
mss = 1460
ecn = {"true" if ecn else "false"}
{ack}

[[background]]
model = "greedy"
hosts = {flows}
spread = "1s"
'''


def run_ns2(flows: int, duration: int, seed: int, variant: str, delack: bool, tmp: Path, ecn: bool = False,
            use_mark_p: bool = False, adaptive: bool = False) -> dict[str, float]:
    args = ["ns", str(HERE / "red.tcl"), f"flows={flows}", f"duration={duration}", f"seed={seed}", f"variant={variant}",
            f"delack={int(delack)}", f"ecn={int(ecn)}", f"use_mark_p={str(use_mark_p).lower()}", f"adaptive={int(adaptive)}"]
    if adaptive:
        args += ["thresh=0", "maxthresh=0"]
    out = subprocess.run(args, cwd=tmp, check=True, capture_output=True, text=True).stdout
    kv = dict(item.split("=") for item in out.split())
    arrivals = float(kv["arrivals"])
    return {"average": float(kv["ave_mean"]), "early": float(kv["early"]) / arrivals, "forced": float(kv["forced"]) / arrivals,
            "marks": float(kv["marks"]) / arrivals}


def run_undertow(flows: int, duration: int, seed: int, variant: str, delack: bool, tmp: Path, linux: bool = False,
                 ecn: bool = False, use_mark_p: bool = False, adaptive: bool = False) -> dict[str, float]:
    path = tmp / f"red_{seed}.toml"
    path.write_text(scenario(flows, duration, seed, variant, delack, linux, ecn, use_mark_p, adaptive))
    out = tmp / f"run_{seed}"
    subprocess.run([str(UNDERTOW), "run", str(path), "-o", str(out), "--overwrite", "-q"], check=True)
    link = json.loads((out / "summary.json").read_text())["links"]["bottleneck_fwd"]
    arrivals = link["packets"] + link["drops"]
    return {
        "average": link["red_mean_average_packets"],
        "early": link["early_drops"] / arrivals,
        "forced": (link["forced_drops"] + link["overflow_drops"]) / arrivals,
        "marks": link["ecn_marks"] / arrivals,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--flows", type=int, default=4)
    ap.add_argument("--duration", type=int, default=200)
    ap.add_argument("--seeds", type=int, nargs="+", default=[1, 2, 3])
    ap.add_argument("--variant", default="Newreno", choices=["Reno", "Newreno"])
    ap.add_argument("--delack", action="store_true")
    ap.add_argument("--linux-tcp", action="store_true", help="undertow's own TCP defaults instead of flavour = \"ns2\"")
    ap.add_argument("--ecn", action="store_true", help="ECN on both sides' TCPs, RED marking instead of dropping early")
    ap.add_argument("--use-mark-p", action="store_true", help="RED's use_mark_p on both sides")
    ap.add_argument("--adaptive", action="store_true", help="adaptive RED with automatic thresholds on both sides")
    a = ap.parse_args()
    red = dict(ecn=a.ecn, use_mark_p=a.use_mark_p, adaptive=a.adaptive)
    sides: dict[str, list[dict[str, float]]] = {"ns-2": [], "undertow": []}
    with tempfile.TemporaryDirectory() as d:
        tmp = Path(d)
        for seed in a.seeds:
            sides["ns-2"].append(run_ns2(a.flows, a.duration, seed, a.variant, a.delack, tmp, **red))
            sides["undertow"].append(run_undertow(a.flows, a.duration, seed, a.variant, a.delack, tmp, a.linux_tcp, **red))
    mean = {side: {k: sum(r[k] for r in runs) / len(runs) for k in runs[0]} for side, runs in sides.items()}
    tcp = "undertow's Linux-like TCP" if a.linux_tcp else 'flavour = "ns2"'
    print(f"{a.flows} {a.variant} flows, {a.duration} s, seeds {a.seeds}{', delayed ACKs' if a.delack else ''}, {tcp}"
          f"{', ECN' if a.ecn else ''}{', use_mark_p' if a.use_mark_p else ''}{', adaptive RED' if a.adaptive else ''}")
    print(f"{'':24}{'ns-2':>12}{'undertow':>12}{'ratio':>8}")
    ok = True
    rows = [("average", "RED average (packets)"), ("early", "early drops / arrivals"), ("forced", "forced drops / arrivals")]
    if a.ecn:
        rows.insert(1, ("marks", "ECN marks / arrivals"))
    # Targets: the average and RED's own decisions (early drops, or marks with
    # ECN, when almost nothing is dropped early).
    targets = {"average", "marks" if a.ecn else "early"}
    if a.use_mark_p and not a.ecn:
        targets.add("early")
    for key, label in rows:
        n, u = mean["ns-2"][key], mean["undertow"][key]
        ratio = u / n if n else float("nan")
        within = abs(ratio - 1) <= TOLERANCE
        ok &= within or key not in targets
        print(f"{label:24}{n:12.5f}{u:12.5f}{ratio:8.3f}{'' if within else '  outside 10%'}")
    sys.exit(0 if ok else 1)


if __name__ == "__main__":
    main()
