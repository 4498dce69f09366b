"""bench/engines.py's comparison: the KS distance's p-value against the
Kolmogorov distribution's known quantiles and against sampling, the
simulator's seeds pooled, and a bad seed list refused in one line."""

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

BENCH = Path(__file__).resolve().parents[1] / "bench"
spec = importlib.util.spec_from_file_location("engines", BENCH / "engines.py")
engines = importlib.util.module_from_spec(spec)
spec.loader.exec_module(engines)

QUICKSTART = Path(__file__).resolve().parents[1] / "examples" / "quickstart.toml"


@pytest.mark.parametrize("lam,p", [(1.224, 0.10), (1.358, 0.05), (1.628, 0.01)])
def test_the_p_value_is_the_kolmogorov_distributions_tail_at_its_tabled_quantiles(lam, p):
    # For large samples the correction vanishes: D = lam / sqrt(n m / (n + m)).
    n = m = 200_000
    d = lam / np.sqrt(n * m / (n + m))
    assert engines.ks_p_value(d, n, m) == pytest.approx(p, abs=0.002)


def test_samples_of_one_distribution_are_that_far_apart_about_as_often_as_the_p_value_says():
    rng = np.random.default_rng(7)
    n, m, trials = 60, 80, 2000
    ps = np.array([engines.ks_p_value(engines.ks_distance(rng.exponential(1.0, n), rng.exponential(1.0, m)), n, m) for _ in range(trials)])
    # The asymptotic form is a little conservative at these sizes (the
    # distance takes few values), so at most the nominal share and not far under it.
    for level in (0.05, 0.10, 0.20):
        assert 0.6 * level <= np.mean(ps <= level) <= level + 0.02, f"at {level}: {np.mean(ps <= level):.3f}"


def test_distributions_apart_by_a_tenth_of_their_spread_are_told_apart_with_thousands_of_values():
    rng = np.random.default_rng(3)
    a, b = rng.normal(0.0, 1.0, 5000), rng.normal(0.1, 1.0, 5000)
    assert engines.ks_p_value(engines.ks_distance(a, b), 5000, 5000) < 0.01
    assert engines.ks_p_value(0.0, 10, 10) == 1.0


def test_seed_lists_and_ranges_are_read_and_a_bad_one_is_refused_naming_the_option():
    assert engines.parse_seeds("1-4") == [1, 2, 3, 4]
    assert engines.parse_seeds("5,1-2,2") == [1, 2, 5]
    for bad in ("x", "4-2", "1-", "-3"):
        with pytest.raises(Exception, match="--seeds"):
            engines.parse_seeds(bad)


def test_the_simulators_seeds_are_pooled_against_the_emulators_run(tmp_path):
    """The simulator at seeds 1 and 2 (run here) against an 'emulator' run
    that is the simulator at seed 3: the pooled figures are both seeds'
    values together, and each seed's KS is given beside them."""
    out = tmp_path / "cmp"
    small = engines.with_duration(QUICKSTART, "40s", tmp_path)
    undertow = str(Path(sys.executable).parent / "undertow")
    subprocess.run([undertow, "run", str(small), "--case", "cbr_udp", "--seed", "3", "-o", str(out / "emu"), "-q"], check=True)
    compare = [sys.executable, str(BENCH / "engines.py"), str(small), "--only", "sim", "--case", "cbr_udp", "-o", str(out)]
    r = subprocess.run([*compare, "--seeds", "1-2"], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert "seeds 1,2 pooled" in r.stdout and "KS per seed" in r.stdout
    row = json.loads((out / "engines.json").read_text())["cases"][0]
    s1 = engines.metric_values(out / "sim" / "seed-1" / "cbr_udp")[1]
    s2 = engines.metric_values(out / "sim" / "seed-2" / "cbr_udp")[1]
    e = engines.metric_values(out / "emu" / "cbr_udp")[1]
    assert row["n_sim"] == len(s1) + len(s2) and row["n_emu"] == len(e)
    assert row["sim_p50"] == pytest.approx(np.median(np.concatenate([s1, s2])))
    assert row["ks_per_seed"] == pytest.approx([engines.ks_distance(s1, e), engines.ks_distance(s2, e)])
    assert row["ks"] == pytest.approx(engines.ks_distance(np.concatenate([s1, s2]), e))
    assert 0.0 <= row["ks_p"] <= 1.0
    # With no emulator run beside them, the comparison says where it looked.
    shutil.rmtree(out / "emu")
    r = subprocess.run([*compare, "--seeds", "1"], capture_output=True, text=True)
    assert r.returncode == 0 and f"no runs in {out / 'emu'} yet" in r.stdout
    r = subprocess.run([*compare, "--seeds", "2-1"], capture_output=True, text=True)
    assert r.returncode == 2 and "--seeds" in r.stderr and "Traceback" not in r.stderr
