"""The quickstart reproduces the seed's Figure 4 finding: at the same mean rate,
open-loop UDP background slows the median download more than responsive TCP
background. The gap is Linux's, which is small: undertow's emulator with real
Linux 6.18 stacks (600 s per case) gave medians of 1.543 s (cbr tcp), 1.638 s
(cbr udp), 1.550 s (poisson tcp) and 1.577 s (poisson udp).

The orderings are judged on the downloads of seeds 1-3 together: a simulator
run draws its CBR sources' phase once, and under CBR over UDP that draw sends
a run's downloads out of slow start one way or the other (docs/engines.md),
so one seed's median is one draw of the phase. The simulator shows the
ordering under CBR background. Under Poisson background it does not: its UDP
median is below its TCP one over seeds 1-3, where Linux's is above by 0.027 s
over 600 s (0.006 s in another 600 s run), though both engines' medians agree
within 3% case by case. That ordering is a separate test, expected to fail
until what orders two medians this close is found; every median is held
within 10% of Linux's at each seed."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import ROOT, cli

# Median download time (s) of each background case in undertow's emulator, Linux 6.18.
LINUX_MEDIAN = {"cbr_tcp": 1.543, "cbr_udp": 1.638, "poisson_tcp": 1.550, "poisson_udp": 1.577}


SEEDS = [1, 2, 3]


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[int, Path]:
    """The quickstart's run directory at each of the seeds (run once for every test)."""
    out = {}
    for seed in SEEDS:
        out[seed] = tmp_path_factory.mktemp("qs") / "run"
        r = cli("run", str(ROOT / "examples/quickstart.toml"), "-o", str(out[seed]), "--seed", str(seed), "-q")
        assert r.returncode == 0, r.stderr
    return out


@pytest.fixture(params=SEEDS, ids=lambda s: f"seed{s}")
def quickstart(request, runs):
    """The quickstart's summaries, case by case, at one seed."""
    return {c.name: json.loads((c / "summary.json").read_text()) for c in runs[request.param].iterdir() if c.is_dir()}


def pooled_median(runs: dict[int, Path], case: str) -> float:
    """The median download time of `case` over every seed's downloads together."""
    return float(np.median(np.concatenate([pq.read_table(d / case / "records" / "web.parquet").column("download_time_s") for d in runs.values()])))


def test_udp_background_slows_downloads_more_than_tcp(quickstart):
    s = quickstart
    assert set(s) == {"nbg", "cbr_tcp", "cbr_udp", "poisson_tcp", "poisson_udp", "loss_1pct", "loss_2pct", "loss_3pct"}
    web = {c: v["apps"]["web"] for c, v in s.items()}
    base = web["nbg"]
    # Ten minutes of back-to-back 1 MB downloads.
    assert all(w["count"] >= 100 for w in web.values())
    # No background: 1 MB at 15 Mbps plus handshake and slow start, under a second.
    assert 0.6 < base["p50"] < 1.0
    for model in ("cbr", "poisson"):
        # Each median within 10% of Linux's in the emulator.
        for case in (f"{model}_tcp", f"{model}_udp"):
            assert web[case]["p50"] == pytest.approx(LINUX_MEDIAN[case], rel=0.1), case
        # Both slow the downloads, and both background models got their rate through.
        assert web[f"{model}_tcp"]["p50"] > 1.1 * base["p50"]
        bg = s[f"{model}_udp"]["apps"][f"{model}0"]["counters"]["sent_bytes"] * 8 / 600
        assert bg == pytest.approx(0.66 * 15e6, rel=0.02)
    # Fixed loss: more loss, slower downloads.
    assert web["loss_1pct"]["p50"] < web["loss_2pct"]["p50"] < web["loss_3pct"]["p50"]


def test_cbr_udp_background_slows_downloads_more_than_tcp_over_seeds_1_to_3(runs):
    tcp, udp = pooled_median(runs, "cbr_tcp"), pooled_median(runs, "cbr_udp")
    assert udp > tcp, f"cbr: UDP median {udp:.3f} s is not above TCP's {tcp:.3f} s"


@pytest.mark.xfail(strict=True, reason="the simulator's Poisson-UDP median is below its Poisson-TCP one over seeds 1-3, "
                   "Linux's 0.006-0.027 s above over 600 s; the cause is not found (docs/engines.md)")
def test_poisson_udp_background_slows_downloads_more_than_tcp_over_seeds_1_to_3(runs):
    tcp, udp = pooled_median(runs, "poisson_tcp"), pooled_median(runs, "poisson_udp")
    assert udp > tcp, f"poisson: UDP median {udp:.3f} s is not above TCP's {tcp:.3f} s"
