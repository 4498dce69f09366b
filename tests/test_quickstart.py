"""The quickstart reproduces the seed's Figure 4 finding: at the same mean rate,
open-loop UDP background slows the median download more than responsive TCP
background. The gap is Linux's, which is small: undertow's emulator with real
Linux 6.18 stacks (600 s per case) gave medians of 1.543 s (cbr tcp), 1.638 s
(cbr udp), 1.550 s (poisson tcp) and 1.577 s (poisson udp).

The simulator shows the ordering under CBR background. Under Poisson background
it does not: its UDP median is 0.016-0.043 s below its TCP one at seeds 1-3,
where Linux's is above by 0.027 s over 600 s (0.006 s in another 600 s run),
though both engines' medians agree within 3% case by case (docs/engines.md).
That ordering is a separate test, expected to fail until what orders two
medians this close is found; every median is held within 10% of Linux's."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, cli

# Median download time (s) of each background case in undertow's emulator, Linux 6.18.
LINUX_MEDIAN = {"cbr_tcp": 1.543, "cbr_udp": 1.638, "poisson_tcp": 1.550, "poisson_udp": 1.577}


@pytest.fixture(scope="module", params=[1, 2, 3], ids=lambda s: f"seed{s}")
def quickstart(request, tmp_path_factory):
    """The quickstart's summaries, case by case, at one seed (run once for both tests)."""
    out = tmp_path_factory.mktemp("qs") / "run"
    r = cli("run", str(ROOT / "examples/quickstart.toml"), "-o", str(out), "--seed", str(request.param), "-q")
    assert r.returncode == 0, r.stderr
    return {c.name: json.loads((c / "summary.json").read_text()) for c in out.iterdir() if c.is_dir()}


def test_udp_background_slows_downloads_more_than_tcp(quickstart):
    s = quickstart
    assert set(s) == {"nbg", "cbr_tcp", "cbr_udp", "poisson_tcp", "poisson_udp", "loss_1pct", "loss_2pct", "loss_3pct"}
    web = {c: v["apps"]["web"] for c, v in s.items()}
    base = web["nbg"]
    # Ten minutes of back-to-back 1 MB downloads.
    assert all(w["count"] >= 100 for w in web.values())
    # No background: 1 MB at 15 Mbps plus handshake and slow start, under a second.
    assert 0.6 < base["p50"] < 1.0
    tcp, udp = web["cbr_tcp"], web["cbr_udp"]
    assert udp["p50"] > tcp["p50"], f"cbr: UDP median {udp['p50']:.3f} s is not above TCP's {tcp['p50']:.3f} s"
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


@pytest.mark.xfail(strict=True, reason="the simulator's Poisson-UDP median is 0.016-0.043 s below its Poisson-TCP one at "
                   "seeds 1-3, Linux's 0.006-0.027 s above over 600 s; the cause is not found (docs/engines.md)")
def test_poisson_udp_background_slows_downloads_more_than_tcp(quickstart):
    web = {c: v["apps"]["web"] for c, v in quickstart.items()}
    tcp, udp = web["poisson_tcp"], web["poisson_udp"]
    assert udp["p50"] > tcp["p50"], f"poisson: UDP median {udp['p50']:.3f} s is not above TCP's {tcp['p50']:.3f} s"
