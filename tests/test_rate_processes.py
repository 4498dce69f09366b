"""The rate-process background models (sine, fgn, noise) run end to end:
the bottleneck's 1 ms series of a run against each model's definition."""

from __future__ import annotations

import json
import math

import numpy as np

from conftest import cli
from undertow.analysis.series import read_run_series

# A link far faster than the background, and access links without delay,
# so that the bottleneck's series is the sources' own packet process
# (shifted by two 8 µs serialisations).
LINK = """
duration = "{duration}"
seed = {seed}
[topology.bottleneck]
rate = "1Gbps"
delay = "1ms"
[topology.access]
rate = "10Gbps"
delay = "0ms"
[[background]]
name = "bg"
transport = "udp"
"""


def run(tmp_path, text: str, name: str):
    (tmp_path / f"{name}.toml").write_text(text)
    out = tmp_path / name
    r = cli("run", str(tmp_path / f"{name}.toml"), "-o", str(out))
    assert r.returncode == 0, r.stderr
    x, bin_s = read_run_series(out, "fwd", "packets")
    summary = json.loads((out / "summary.json").read_text())
    return x, bin_s, summary


def test_a_sine_sends_the_integral_of_its_rate_in_every_second(tmp_path):
    # The Kenesi background (m = A) at 0.462 Hz plus a second wave, from 3 hosts.
    m, a1, f1, p1, a2, f2 = 5e5, 3e5, 0.462, 1.0, 2e5, 3.1
    text = LINK.format(duration="60s", seed=1) + f"""model = "sine"
hosts = 3
rate = "{m:.0f}bps"
amplitude = "{a1:.0f}bps"
frequency = {f1}
phase = {p1}
amplitude2 = "{a2:.0f}bps"
frequency2 = {f2}
"""
    x, bin_s, summary = run(tmp_path, text, "sine")
    assert summary["apps"]["bg"]["kind"] == "sine-udp"

    def bits(t):
        w1, w2 = 2 * math.pi * f1, 2 * math.pi * f2
        return m * t + a1 / w1 * (math.cos(p1) - math.cos(w1 * t + p1)) + a2 / w2 * (1 - math.cos(w2 * t))

    per_s = x[: int(round(59 / bin_s))].reshape(59, -1).sum(axis=1)
    # The series sees each packet 16 µs after it left.
    want = np.array([(bits(k + 1 - 16e-6) - bits(k - 16e-6)) / 8000 for k in range(59)])
    assert np.abs(per_s - want).max() <= 1.0, np.abs(per_s - want).max()
