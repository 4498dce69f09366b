"""bench/cbr_phase.py's measures on made-up captures of two CBR-over-TCP
sources whose schedules lie a known distance apart."""

import importlib.util
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
SCRIPT = BENCH / "cbr_phase.py"
sys.path.insert(0, str(BENCH))  # it reads the download times with engines.py's reader
spec = importlib.util.spec_from_file_location("cbr_phase", SCRIPT)
cbr_phase = importlib.util.module_from_spec(spec)
spec.loader.exec_module(cbr_phase)

PERIOD = 0.485e-3
PAYLOAD = 948


def source(offset_s: float, n: int = 8000, seed: int = 0, resend: tuple = ()) -> np.ndarray:
    """Rows (time, src, sport, dst, dport, seq, payload) of a source writing
    one payload per period from `offset_s`, each segment queued a random
    while (none for a fifth) on a path of 24 ms, with the writes numbered
    in `resend` sent again 30 ms later."""
    rng = np.random.default_rng(seed)
    k = np.arange(n)
    queued = np.where(rng.random(n) < 0.2, 0.0, rng.exponential(0.3e-3, n))
    # A path keeps the order: a segment waits behind the one before it.
    t = np.maximum.accumulate(offset_s + (k + 1) * PERIOD + 0.024 + queued)
    seq = 1000 + k * PAYLOAD
    rows = [(t[i], 1, 2, 3, 5001, seq[i], PAYLOAD) for i in range(n)]
    rows += [(t[i] + 0.03, 1, 2, 3, 5001, seq[i], PAYLOAD) for i in resend]
    rows.sort()
    return np.array(rows, dtype=np.float64)


@pytest.mark.parametrize("apart", [0.160e-3, -0.160e-3, 0.26e-3])
def test_the_schedules_distance_is_found_the_nearer_way_round(apart):
    a, b = source(0.0, seed=1), source(apart, seed=2)
    got = cbr_phase.phase([a, b], PERIOD)
    want = abs(apart) % PERIOD
    want = min(want, PERIOD - want)
    assert got == pytest.approx(want, abs=5e-6)


def test_segments_sent_again_are_not_new_data_and_make_the_episodes():
    a = source(0.0, resend=(100, 101, 5000))
    b = source(0.2e-3, resend=(102,))
    new = cbr_phase.first_sends(a)
    assert (~new).sum() == 3
    assert cbr_phase.episodes([a, b]) == (2, 1)
