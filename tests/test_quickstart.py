"""The quickstart reproduces the seed's Figure 4 finding: at the same mean rate,
open-loop UDP background slows downloads more than responsive TCP background."""

from __future__ import annotations

import json

import pytest

from conftest import ROOT, cli


@pytest.mark.parametrize("seed", [1, 2, 3])
def test_udp_background_slows_downloads_more_than_tcp(tmp_path, seed):
    out = tmp_path / "qs"
    r = cli("run", str(ROOT / "examples/quickstart.toml"), "-o", str(out), "--seed", str(seed), "-q")
    assert r.returncode == 0, r.stderr
    s = {c.name: json.loads((c / "summary.json").read_text()) for c in out.iterdir() if c.is_dir()}
    assert set(s) == {"nbg", "cbr_tcp", "cbr_udp", "poisson_tcp", "poisson_udp", "loss_1pct", "loss_2pct", "loss_3pct"}
    web = {c: v["apps"]["web"] for c, v in s.items()}
    base = web["nbg"]
    # Ten minutes of back-to-back 1 MB downloads.
    assert all(w["count"] >= 100 for w in web.values())
    # No background: 1 MB at 15 Mbps plus handshake and slow start, under a second.
    assert 0.6 < base["p50"] < 1.0
    for model in ("cbr", "poisson"):
        tcp, udp = web[f"{model}_tcp"], web[f"{model}_udp"]
        for q in ("p50", "p90"):
            assert udp[q] > 1.1 * tcp[q], f"{model}: UDP {q} {udp[q]:.3f} s is not clearly above TCP {tcp[q]:.3f} s"
        # Both slow the downloads, and both background models got their rate through.
        assert tcp["p50"] > 1.1 * base["p50"]
        bg = s[f"{model}_udp"]["apps"][f"{model}0"]["counters"]["sent_bytes"] * 8 / 600
        assert bg == pytest.approx(0.66 * 15e6, rel=0.02)
    # Fixed loss: more loss, slower downloads.
    assert web["loss_1pct"]["p50"] < web["loss_2pct"]["p50"] < web["loss_3pct"]["p50"]
