"""The rate-process background models (sine, fgn, noise) run end to end:
the bottleneck's 1 ms series of a run against each model's definition."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from conftest import cli
from undertow.analysis.energy import energy, hurst
from undertow.analysis.series import read_run_series, rebin

# A link far faster than the background, and no propagation delay, so
# that the bottleneck's series is the sources' own packet process, shifted
# by the packets' serialisations (under 10 µs).
LINK = """
duration = "{duration}"
seed = {seed}
[topology.bottleneck]
rate = "{link}"
delay = "0ms"
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
    text = LINK.format(duration="60s", seed=1, link="1Gbps") + f"""model = "sine"
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
    # The series sees each packet 8.8 µs after it left.
    want = np.array([(bits(k + 1 - 8.8e-6) - bits(k - 8.8e-6)) / 8000 for k in range(59)])
    assert np.abs(per_s - want).max() <= 1.0, np.abs(per_s - want).max()


@pytest.mark.parametrize("H", [0.6, 0.8, 0.9])
def test_an_fgn_rate_has_the_hurst_parameter_mean_and_deviation_asked_for(tmp_path, H):
    # 300 s of 10 ms bins at 100 Mbit/s ± 5 Mbit/s (6.25 packets a bin): the
    # packets' rounding to whole packets is under 1% of the bins' variance.
    m, sd, n = 100e6, 5e6, 30_000
    text = LINK.format(duration="300s", seed=1, link="1Gbps") + f"""model = "fgn"
hosts = 2
rate = "100Mbps"
deviation = "5Mbps"
hurst = {H}
bin = "10ms"
"""
    x, bin_s, summary = run(tmp_path, text, f"fgn{H}")
    counters = summary["apps"]["bg"]["counters"]
    assert summary["apps"]["bg"]["kind"] == "fgn-udp" and counters["clipped"] == 0.0
    # The project's wavelet estimator on the 1 ms series, from octave 6
    # (64 ms, six bins of the rate) up.
    r = energy(x, bin_s=bin_s)
    est = hurst(r, 6, len(r))
    print(f"H {H}: estimate {est.H:.3f} [{est.ci_low:.3f}, {est.ci_high:.3f}], octaves 6..{len(r)}")
    assert abs(est.H - H) < 0.05
    # The rate per bin, as the link carried it: the model's own figures,
    # and those asked for. A sample of n bins of fGn has a mean within
    # σ·n^(H−1) (0.8% of the mean here at H = 0.9) and a deviation biased
    # low by √(1 − n^(2H−2)) (6.6% at H = 0.9).
    rate = rebin(x, bin_s, 0.01)[:n] * 8000 / 0.01
    mean, dev = rate.mean(), rate.std()
    assert mean == pytest.approx(counters["rate_mean_bps"], rel=0.002)
    assert dev == pytest.approx(counters["rate_sd_bps"], rel=0.01)
    print(f"H {H}: mean {mean / 1e6:.3f} Mbit/s, deviation {dev / 1e6:.3f} Mbit/s")
    assert mean == pytest.approx(m, rel=0.05)
    assert dev == pytest.approx(sd * math.sqrt(1 - n ** (2 * H - 2)), rel=0.05)


def test_a_noise_rate_is_flat_up_to_its_cutoff_and_has_its_mean_and_deviation(tmp_path):
    # 0.1 to 30 Hz over 60 s: components at k/60 Hz, k = 6 .. 1800, which
    # are the frequencies of the 1 ms series' periodogram. 400 ± 100 Mbit/s
    # (50 ± 12.5 packets a millisecond), so that rounding to whole packets
    # adds a thousandth of the band's power.
    m, sd = 400e6, 100e6
    text = LINK.format(duration="60s", seed=2, link="10Gbps") + """model = "noise"
hosts = 5
rate = "400Mbps"
deviation = "100Mbps"
low = 0.1
cutoff = 30
"""
    x, bin_s, summary = run(tmp_path, text, "noise")
    assert summary["apps"]["bg"]["kind"] == "noise-udp"
    rate = x[:60_000] * 8000 / bin_s
    p = np.abs(np.fft.rfft(rate - rate.mean())) ** 2 * 2 / rate.size ** 2
    band = p[6:1801]
    each = sd**2 / band.size
    print(f"band power per component / sd²/K: {band.min() / each:.3f} .. {band.max() / each:.3f}; "
          f"outside: {(p.sum() - band.sum()) / p.sum():.2e}")
    # Flat: every component within 5% of its share (1 ms bins and the
    # straight lines between the rate's samples take under 1.5% at 30 Hz);
    # near zero outside the band.
    assert np.all(np.abs(band / each - 1) < 0.05)
    assert p.sum() - band.sum() < 0.01 * p.sum()
    assert rate.mean() == pytest.approx(m, rel=0.005)
    assert rate.std() == pytest.approx(sd, rel=0.02)
