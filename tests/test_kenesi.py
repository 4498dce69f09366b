"""The Kenesi sweep on a reduced grid against ns-2 2.35's table
(../shared/anchors/ns2/sine_bg_ns2.csv): `flavour = "ns2"` Reno reproduces the
dip in the critical interval and the near-full throughput outside it; and against
ns-3 3.44's variant tables (../shared/anchors/ns3/variants/): `flavour = "ns3"`
with an ACK per segment and a 20-segment window reproduces ns-3's collapse to 0.55
at 0.25 Hz, where half of what it sends is data the receiver already holds.
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

# The targets for ns-2-faithful Reno and for ns-3's NewReno.
TOLERANCE = 0.08
NS3_TOLERANCE = 0.05
# Two of the anchor's ten phases and a window of 120 s instead of 600 s keep the
# test to seconds; each (f, α) settles into a periodic pattern within it.
PHASES = [math.pi * 0.1, math.pi * 1.1]
MEAS_S = 120.0


def mean_throughput(config: str, freq: float, phases: list[float] = PHASES) -> float:
    return sum(kenesi.point((kenesi.CONFIGS[config], freq, a, MEAS_S)) for a in phases) / len(phases)


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


@pytest.mark.skipif(not kenesi.ANCHORS.is_dir(), reason="needs ../shared/anchors")
@pytest.mark.parametrize(
    "config,freq",
    [
        ("ns3-newreno-ack1-rwnd20", 0.2466),  # ns-3's resend cycle: 0.55
        ("ns3-newreno-ack1-rwnd20", 0.462),
        ("ns3-newreno-ack1-rwnd20-sack", 0.462),
    ],
)
def test_ns3_newreno_follows_ns3s_variant_tables(config: str, freq: float) -> None:
    # Four of the ten phases: at 0.25 Hz some phases take most of a 120 s window to
    # fall into the cycle.
    want = kenesi.reference(kenesi.CONFIGS[config])[freq]
    got = mean_throughput(config, freq, kenesi.phases(4))
    assert abs(got - want) <= NS3_TOLERANCE, f"{config} at {freq} Hz: {got:.3f}, ns-3 {want:.3f}"


def test_the_critical_frequencies_are_the_papers() -> None:
    f_min, f_max = kenesi.critical_frequencies()
    assert (round(f_min, 2), round(f_max, 2)) == (0.13, 0.75)
