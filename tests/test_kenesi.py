"""The Kenesi sweep on a reduced grid against ns-2 2.35's table
(../shared/anchors/ns2/sine_bg_ns2.csv): `flavour = "ns2"` Reno reproduces the
dip in the critical interval and the near-full throughput outside it.
bench/kenesi_sweep.py runs the full grid (docs/kenesi.md)."""

from __future__ import annotations

import importlib.util
import math
import sys
from pathlib import Path

import pytest

SWEEP = Path(__file__).resolve().parents[1] / "bench" / "kenesi_sweep.py"
spec = importlib.util.spec_from_file_location("kenesi_sweep", SWEEP)
kenesi = importlib.util.module_from_spec(spec)
sys.modules[spec.name] = kenesi
spec.loader.exec_module(kenesi)

# The target for ns-2-faithful Reno.
TOLERANCE = 0.08
# Two of the anchor's ten phases and a window of 120 s instead of 600 s keep the
# test to seconds; each (f, α) settles into a periodic pattern within it.
PHASES = [math.pi * 0.1, math.pi * 1.1]
MEAS_S = 120.0


def mean_throughput(config: str, freq: float) -> float:
    return sum(kenesi.point((config, freq, a, MEAS_S)) for a in PHASES) / len(PHASES)


@pytest.mark.skipif(not kenesi.ANCHORS.is_dir(), reason="needs ../shared/anchors")
@pytest.mark.parametrize(
    "config,freq",
    [
        ("ns2-reno", 0.1316),  # below the critical interval
        ("ns2-reno", 0.462),  # in it
        ("ns2-reno", 0.65),
        ("ns2-reno", 3.04),  # above it
        ("ns2-reno-minrto1", 0.55),
        ("ns2-reno-minrto1", 3.04),
    ],
)
def test_ns2_reno_follows_ns2s_table_inside_and_outside_the_dip(config: str, freq: float) -> None:
    want = kenesi.reference(kenesi.CONFIGS[config])[freq]
    got = mean_throughput(config, freq)
    assert abs(got - want) <= TOLERANCE, f"{config} at {freq} Hz: {got:.3f}, ns-2 {want:.3f}"


def test_the_critical_frequencies_are_the_papers() -> None:
    f_min, f_max = kenesi.critical_frequencies()
    assert (round(f_min, 2), round(f_max, 2)) == (0.13, 0.75)
