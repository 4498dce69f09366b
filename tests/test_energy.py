"""Wavelet energy analysis (Abry–Veitch logscale diagram): see docs/energy.md.

The real-trace tests read ``shared/traces`` from ``$UNDERTOW_TRACES`` or
``<repo>/../shared/traces`` and fail (not skip) when it is missing. The whole
file runs in a few seconds.
"""

from __future__ import annotations

import gzip
import lzma
import math
import os
import struct
import time
from pathlib import Path

import numpy as np
import pytest

from undertow.analysis.energy import (
    _chi2_sf,
    bias_correction,
    detail_coefficients,
    digamma,
    energy,
    energy_table,
    fgn,
    hurst,
    log2_energy_variance,
    trigamma,
    undecimated_mean_squares,
)
from undertow.analysis.series import bin_events, read_run_series, read_timeseries

REPO = Path(__file__).resolve().parents[1]

# The Bellcore check: packet counts in 10 ms bins, Daubechies-3, Hurst fit over
# octaves 3..10 = timescales 80 ms .. 10.24 s (the range of the reference
# measurement in shared/traces/README.md: "Haar octaves 3-10 at 10 ms bins").
BELLCORE_BIN_S = 0.01
J1, J2 = 3, 10


def _traces_dir() -> Path:
    env = os.environ.get("UNDERTOW_TRACES")
    return Path(env) if env else REPO.parent / "shared" / "traces"


def _trace(name: str) -> Path:
    path = _traces_dir() / name
    if not path.is_file():
        pytest.fail(
            f"trace file {name} not found at {path}: set UNDERTOW_TRACES to the folder that holds "
            "the shared traces (default <repo>/../shared/traces)"
        )
    return path


@pytest.fixture(scope="module")
def bellcore_times():
    t0 = time.perf_counter()
    times, sizes = read_timeseries(_trace("bc-paug89-times.txt.xz"))
    elapsed = time.perf_counter() - t0
    assert sizes is None
    return times, elapsed


@pytest.fixture(scope="module")
def bellcore_energy(bellcore_times):
    times, _ = bellcore_times
    counts = bin_events(times, bin_s=BELLCORE_BIN_S, start=0.0)
    return energy(counts, bin_s=BELLCORE_BIN_S)


@pytest.fixture(scope="module")
def poisson_energy(bellcore_times):
    """A Poisson process with the Bellcore trace's mean rate and duration."""
    times, _ = bellcore_times
    duration = float(times.max())
    rate = times.size / duration
    rng = np.random.default_rng(1989)
    arrivals = rng.uniform(0.0, duration, rng.poisson(rate * duration))
    counts = bin_events(arrivals, bin_s=BELLCORE_BIN_S, start=0.0, end=duration)
    return energy(counts, bin_s=BELLCORE_BIN_S), rate


# ----------------------------------------------------------------------------------------
# Special functions and estimator pieces.


def test_digamma_trigamma_known_values():
    euler = 0.5772156649015329
    np.testing.assert_allclose(digamma([1.0, 0.5, 2.0, 1e6]),
                               [-euler, -euler - 2 * math.log(2), 1 - euler, math.log(1e6) - 0.5e-6],
                               rtol=0, atol=1e-12)
    np.testing.assert_allclose(trigamma([1.0, 0.5, 2.0]),
                               [math.pi**2 / 6, math.pi**2 / 2, math.pi**2 / 6 - 1], rtol=1e-13)
    # Large-n form quoted in the docs: var(y_j) ~ 2 / (n ln^2 2).
    assert log2_energy_variance(10_000) == pytest.approx(2 / (10_000 * math.log(2) ** 2), rel=1e-3)
    with pytest.raises(ValueError):
        digamma(0.0)


def test_chi2_survival_function():
    for x in (0.1, 1.0, 3.0, 20.0):
        assert _chi2_sf(x, 2) == pytest.approx(math.exp(-x / 2), rel=1e-12)
        assert _chi2_sf(x, 1) == pytest.approx(math.erfc(math.sqrt(x / 2)), rel=1e-10)
    assert _chi2_sf(0.0, 5) == 1.0


def test_boundary_free_coefficients_match_valid_convolution():
    """Kept coefficients are exactly those of 'valid' convolutions: no padding reaches them."""
    import pywt

    x = np.random.default_rng(3).normal(size=1000)
    for name in ("db1", "db3", "db6"):
        w = pywt.Wavelet(name)
        got = detail_coefficients(x, name, None, 1)
        a = x
        for j, d in enumerate(got, start=1):
            # The first fully-inside output of pywt's odd-position downsampling is at L-1.
            ref_d = np.convolve(a, w.dec_hi, mode="valid")[::2]
            a = np.convolve(a, w.dec_lo, mode="valid")[::2]
            np.testing.assert_allclose(d, ref_d, rtol=0, atol=1e-10, err_msg=f"{name} octave {j}")
            assert d.size == ref_d.size
        # The next octave would have no boundary-free coefficient.
        assert a.size // 2 - w.dec_len // 2 + 1 < 1


def test_haar_first_octave_by_hand():
    x = np.random.default_rng(4).poisson(3.0, size=64).astype(float)
    r = energy(x, bin_s=0.5, wavelet="db1", levels=1)
    d = (x[1::2] - x[0::2]) / math.sqrt(2)
    assert r.n[0] == 32
    assert r.log2_energy[0] + bias_correction(32) == pytest.approx(math.log2(np.mean(d**2)))
    assert r.scale_s[0] == 1.0


def test_bias_correction_and_variance_on_white_noise():
    """Short Gaussian white noise: y_j is unbiased for log2(variance) and var(y_j) is as stated."""
    reps = 1500
    ys = np.array([energy(np.random.default_rng(s).normal(0.0, 2.0, 256), min_coeffs=1).log2_energy
                   for s in range(reps)])
    r = energy(np.zeros(256), min_coeffs=1)
    assert r.n.tolist() == [126, 61, 28, 12, 4]
    se = np.sqrt(r.var / reps)
    # True level log2(4) = 2 at every octave. Without g(n_j) octave 5 (n=4) would be 0.39 low.
    assert np.all(np.abs(ys.mean(axis=0) - 2.0) < 4 * se + 0.01)
    np.testing.assert_allclose(ys.var(axis=0), r.var, rtol=0.2)


# ----------------------------------------------------------------------------------------
# Synthetic long-range dependence.


@pytest.mark.parametrize("H", [0.6, 0.8])
def test_fgn_has_fgn_covariance(H):
    rng = np.random.default_rng(11)
    x = np.array([fgn(32, H, rng) for _ in range(4000)])
    k = np.arange(6)
    r = 0.5 * ((k + 1.0) ** (2 * H) - 2 * k ** (2 * H) + np.abs(k - 1.0) ** (2 * H))
    emp = np.array([np.mean(x[:, 0] * x[:, kk]) for kk in k])
    np.testing.assert_allclose(emp, r, atol=0.06)


@pytest.mark.parametrize("H", [0.6, 0.8])
def test_fgn_hurst_recovered(H):
    r = energy(fgn(2**17, H, np.random.default_rng(7)), bin_s=0.001)
    est = hurst(r, 3, len(r))
    print(f"fGn H={H}: estimate {est.H:.4f} [{est.ci_low:.4f}, {est.ci_high:.4f}] "
          f"octaves 3..{len(r)}, q={est.q:.3f}")
    assert abs(est.H - H) < 0.05
    assert est.ci_low < est.H < est.ci_high
    assert est.slope == pytest.approx(2 * H - 1, abs=0.1)


# ----------------------------------------------------------------------------------------
# Real traffic against Poisson.


def test_bellcore_hurst(bellcore_energy):
    r = bellcore_energy
    est = hurst(r, J1, J2)
    print(f"Bellcore BC-pAug89, 10 ms counts, {r.wavelet}, octaves {J1}..{J2}: "
          f"H={est.H:.4f} [{est.ci_low:.4f}, {est.ci_high:.4f}], chi2={est.chi2:.0f}")
    assert 0.75 < est.H < 0.90
    # Clearly long-range dependent, not a noisy 0.5.
    assert est.ci_low > 0.7
    # Energy grows by far more than a Poisson process's would over these octaves.
    assert r.log2_energy[J2 - 1] - r.log2_energy[J1 - 1] > 4.0


def test_poisson_same_rate_is_flat(poisson_energy, bellcore_energy):
    r, rate = poisson_energy
    est = hurst(r, J1, J2)
    print(f"Poisson at {rate:.1f}/s, 10 ms counts, octaves {J1}..{J2}: H={est.H:.4f}, "
          f"slope={est.slope:.4f}")
    assert abs(est.H - 0.5) < 0.05
    assert abs(est.slope) < 0.05
    # Flat at log2 of the per-bin variance (= mean for Poisson counts) at every octave:
    # the 95 % intervals cover it at (nearly) every octave.
    level = math.log2(rate * BELLCORE_BIN_S)
    covered = (r.ci_low <= level) & (level <= r.ci_high)
    assert covered.mean() >= 0.85, (r.log2_energy - level, r.ci_half)
    # The real trace is far burstier at large timescales than the same-rate Poisson process.
    assert np.all(bellcore_energy.log2_energy[5:J2] - r.log2_energy[5:J2] > 3.0)


# ----------------------------------------------------------------------------------------
# Reading traces.


def test_read_bellcore_tl_two_columns(bellcore_times):
    times, sizes = read_timeseries(_trace("bc-paug89-100k.tl"))
    assert times.size == sizes.size == 100_001
    assert times[0] == pytest.approx(0.001340, abs=1e-9)
    assert times[-1] == pytest.approx(252.082436, abs=1e-9)
    assert sizes.sum() == 46_417_808
    assert (sizes.min(), sizes.max()) == (64, 1518)
    # The README: the first 100,001 of the 1M arrival times equal this column exactly.
    np.testing.assert_array_equal(times, bellcore_times[0][:100_001])


def test_read_bellcore_xz_times(bellcore_times):
    times, elapsed = bellcore_times
    print(f"read 1,000,000 xz lines in {elapsed:.2f} s")
    assert times.size == 1_000_000
    assert times[0] == pytest.approx(0.001340, abs=1e-9)
    assert times[-1] == pytest.approx(3142.821736, abs=1e-9)
    assert np.all(np.diff(times) >= 0)


def test_read_dec_udp_xz_times():
    times, sizes = read_timeseries(_trace("dec-pkt1-udp-times.txt.xz"))
    assert sizes is None
    assert times.size == 829_758
    assert times[0] == 0.0
    assert times[-1] == pytest.approx(3599.940464, abs=1e-9)


def test_read_timeseries_text_forms(tmp_path):
    text = ("# comment line\n"
            "0.5\t100   # trailing comment\r\n"
            "\n"
            "   0.25 200  \n"
            "1e-3 64\n"
            "  # indented comment\n"
            "2 1518")  # no final newline
    plain = tmp_path / "a.txt"
    plain.write_text(text)
    gz = tmp_path / "a.txt.gz"
    gz.write_bytes(gzip.compress(text.encode()))
    xz = tmp_path / "a.xz"
    xz.write_bytes(lzma.compress(text.encode()))
    for path in (plain, gz, xz):
        t, s = read_timeseries(path)
        np.testing.assert_array_equal(t, [0.5, 0.25, 1e-3, 2.0])
        np.testing.assert_array_equal(s, [100, 200, 64, 1518])
    one = tmp_path / "one.txt"
    one.write_text("3\n1\n2\n")
    t, s = read_timeseries(one)
    assert s is None and t.tolist() == [3.0, 1.0, 2.0]


@pytest.mark.parametrize(
    ("content", "line", "what"),
    [
        ("0.1 64\n0.2 64\n0.3 abc\n", 3, "column 2 is not a number"),
        ("0.1 64\n# c\n0.2\n", 3, "1 columns where line 1 has 2"),
        ("0.1\n0.2 64\n", 2, "2 columns where line 1 has 1"),
        ("\n0.1 64 7\n", 2, "3 columns"),
        ("0.1\nnan\n", 2, "NaN or infinite"),
        ("0.1 64\n0.2 -5\n", 2, "negative size"),
        ("0.1,64\n", 1, "column 1 is not a number"),
    ],
)
def test_read_timeseries_bad_line_names_file_and_line(tmp_path, content, line, what):
    path = tmp_path / "bad.tl"
    path.write_text(content)
    with pytest.raises(ValueError) as info:
        read_timeseries(path)
    msg = str(info.value)
    assert f"{path}:{line}:" in msg
    assert what in msg
    assert "'time' or 'time size'" in msg


def test_read_timeseries_empty_and_corrupt(tmp_path):
    empty = tmp_path / "empty.txt"
    empty.write_text("# nothing\n\n")
    with pytest.raises(ValueError, match="no events"):
        read_timeseries(empty)
    corrupt = tmp_path / "corrupt.xz"
    corrupt.write_bytes(b"not xz at all")
    with pytest.raises(ValueError, match="corrupt.xz"):
        read_timeseries(corrupt)
    with pytest.raises(FileNotFoundError):
        read_timeseries(tmp_path / "missing.txt")


# ----------------------------------------------------------------------------------------
# Binning and run series.


def test_bin_events_counts_and_bytes():
    t = np.array([0.0035, 0.0, 0.003, 0.0009999, 0.001, 0.0051])  # unsorted, edges exact
    np.testing.assert_array_equal(bin_events(t, bin_s=0.001), [2, 1, 0, 2, 0, 1])
    counts = bin_events(t, bin_s=0.001)
    assert counts.dtype == np.int64
    sizes = np.array([10, 20, 30, 40, 50, 60])
    np.testing.assert_array_equal(bin_events(t, sizes, bin_s=0.002), [110.0, 40.0, 60.0])
    # Explicit window: events before start or at/after end are dropped.
    np.testing.assert_array_equal(bin_events(t, bin_s=0.001, start=0.001, end=0.004), [1, 0, 2])
    np.testing.assert_array_equal(bin_events([], bin_s=1.0, start=0.0, end=3.0), [0, 0, 0])
    with pytest.raises(ValueError, match="bin_s"):
        bin_events(t, bin_s=0)
    with pytest.raises(ValueError, match="sizes"):
        bin_events(t, sizes[:2])
    with pytest.raises(ValueError, match="NaN"):
        bin_events([0.0, float("nan")])


def test_read_run_series(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    (tmp_path / "series").mkdir()
    n = 1000
    t = np.arange(n) * 0.001
    cols = {"t_s": t}
    for d in ("fwd", "rev"):
        for what, scale in (("bytes", 1500), ("packets", 1), ("drops", 0)):
            cols[f"{d}_{what}"] = (np.arange(n) % 7 + (d == "rev")) * scale
    pq.write_table(pa.table({k: pa.array(v) for k, v in cols.items()}),
                   tmp_path / "series" / "bottleneck.parquet")
    x, bin_s = read_run_series(tmp_path, "rev", "packets")
    assert bin_s == pytest.approx(0.001)
    np.testing.assert_array_equal(x, np.arange(n) % 7 + 1)
    x, _ = read_run_series(tmp_path)  # fwd bytes
    np.testing.assert_array_equal(x, (np.arange(n) % 7) * 1500)
    with pytest.raises(ValueError, match="direction"):
        read_run_series(tmp_path, "up")
    with pytest.raises(ValueError, match="what"):
        read_run_series(tmp_path, "fwd", "bits")
    with pytest.raises(FileNotFoundError, match="run directory"):
        read_run_series(tmp_path / "nope")


# ----------------------------------------------------------------------------------------
# Errors, table and plot.


def test_energy_and_hurst_argument_errors():
    x = np.random.default_rng(0).normal(size=200)
    with pytest.raises(ValueError, match="unknown wavelet"):
        energy(x, wavelet="db99")
    with pytest.raises(ValueError, match="not orthogonal"):
        energy(x, wavelet="bior2.2")
    with pytest.raises(ValueError, match="only up to octave"):
        energy(x, levels=12)
    with pytest.raises(ValueError, match="too short"):
        energy(x[:8])
    r = energy(x)
    with pytest.raises(ValueError, match="j1"):
        hurst(r, 3, 3)
    with pytest.raises(ValueError, match="j1"):
        hurst(r, 1, len(r) + 1)
    zero = energy(np.zeros(512))
    assert np.all(np.isneginf(zero.log2_energy))
    with pytest.raises(ValueError, match="zero energy"):
        hurst(zero, 1, 3)


def test_energy_table(bellcore_energy, poisson_energy):
    table = energy_table({"bellcore": bellcore_energy, "poisson": poisson_energy[0]})
    lines = table.splitlines()
    assert lines[0].split() == ["octave", "scale_ms", "bellcore", "poisson"]
    assert len(lines) == 1 + len(bellcore_energy) + 1
    row3 = lines[3].split()
    assert row3[:2] == ["3", "80"]
    assert float(row3[2]) == pytest.approx(bellcore_energy.log2_energy[2], abs=1e-3)
    assert row3[3] == "±"
    assert "db3" in lines[-1]
    with pytest.raises(ValueError, match="bin widths"):
        energy_table({"a": bellcore_energy, "b": energy(np.ones(100) + np.arange(100) % 3, 0.001)})


def _png_size(path: Path) -> tuple[int, int]:
    head = path.read_bytes()[:24]
    assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
    return struct.unpack(">II", head[16:24])


def test_plot_energy_png(tmp_path, bellcore_energy, poisson_energy):
    from undertow.report.energy_plot import plot_energy

    out = plot_energy({"BC-pAug89": bellcore_energy, "Poisson, same rate": poisson_energy[0],
                       "zeros": energy(np.zeros(2**15), BELLCORE_BIN_S)},
                      tmp_path / "figs" / "energy.png", title="Bellcore vs Poisson")
    assert out == tmp_path / "figs" / "energy.png"
    assert out.stat().st_size > 20_000
    assert _png_size(out) == (900, 550)


def test_windows_pool_the_coefficients_of_each_window():
    # k copies of one series, cut into windows of its length: every window
    # gives the same coefficients, so the mean square per octave is the
    # single series', over k times the coefficients.
    rng = np.random.default_rng(7)
    x = rng.poisson(20.0, 4096).astype(float)
    one = energy(x)
    pooled = energy(np.tile(x, 5), window=x.size)
    assert list(pooled.n) == [5 * n for n in one.n]
    raw = lambda e: e.log2_energy + bias_correction(e.n)
    np.testing.assert_allclose(raw(pooled), raw(one), rtol=0, atol=1e-9)
    # An incomplete last window is left out.
    cut = energy(np.concatenate([np.tile(x, 2), x[:100]]), window=x.size)
    assert list(cut.n) == [2 * n for n in one.n]
    with pytest.raises(ValueError, match="window"):
        energy(x[:100], window=x.size)


def test_shift_invariant_energy_is_the_dwt_energy_averaged_over_alignments():
    # Every boundary-free undecimated coefficient at octave j is a DWT
    # coefficient of the series shifted by some offset: its mean square is
    # the DWT's mean square averaged over the 2**j alignments (each shifted
    # DWT taken over the same span of samples, so the averages line up).
    import pywt

    rng = np.random.default_rng(11)
    x = rng.poisson(3.0, 1024).astype(float)
    x[300:340] += 40.0  # one burst, as a page load
    w = pywt.Wavelet("db3")
    got = undecimated_mean_squares(x, w, 4)
    for j in range(1, 5):
        hi = np.asarray(w.dec_hi)
        # The octave-j analysis filter: lowpass j-1 times, then highpass, each upsampled.
        f = np.array([1.0])
        for k in range(j - 1):
            up = np.zeros((w.dec_len - 1) * 2**k + 1)
            up[:: 2**k] = w.dec_lo
            f = np.convolve(f, up)
        up = np.zeros((w.dec_len - 1) * 2 ** (j - 1) + 1)
        up[:: 2 ** (j - 1)] = hi
        f = np.convolve(f, up)
        every = np.convolve(x, f, mode="valid")
        np.testing.assert_allclose(got[j - 1], np.mean(every**2), rtol=1e-9, err_msg=f"octave {j}")
        # And that is the mean over alignments of the decimated coefficients.
        per_shift = [np.mean(every[s::2**j] ** 2) for s in range(2**j)]
        assert min(per_shift) <= got[j - 1] <= max(per_shift)


def test_shift_invariant_energy_does_not_depend_on_where_the_grid_starts():
    # A sparse series (two bursts): the DWT energy at coarse octaves moves
    # when the series is delayed by a few bins; the shift-invariant one
    # hardly does (only the samples that enter or leave the edges change).
    x = np.zeros(8192)
    x[2000:2030] = 50.0
    x[5000:5012] = 80.0
    def spread(**kw):
        rows = np.array([energy(np.concatenate([np.zeros(s), x, np.zeros(64 - s)]), levels=7, **kw).log2_energy
                         for s in range(0, 64, 4)])
        return (rows.max(0) - rows.min(0))[4:]
    assert spread().max() > 1.0
    assert spread(shift_invariant=True).max() < 0.05
    # Unit white noise: log2 energy 0 at every octave, for both, where the
    # estimates rest on enough coefficients; n and the intervals are the DWT's.
    y = np.random.default_rng(5).normal(size=1 << 15)
    a, b = energy(y), energy(y, shift_invariant=True)
    assert list(a.n) == list(b.n)
    np.testing.assert_allclose(b.var, a.var)
    many = a.n >= 256
    assert many.sum() >= 6
    assert np.abs(a.log2_energy[many]).max() < 0.1 and np.abs(b.log2_energy[many]).max() < 0.1


def test_shift_invariant_energy_pools_windows():
    rng = np.random.default_rng(8)
    x = rng.poisson(20.0, 4096).astype(float)
    one = energy(x, shift_invariant=True)
    pooled = energy(np.tile(x, 3), window=x.size, shift_invariant=True)
    np.testing.assert_allclose(pooled.log2_energy + bias_correction(pooled.n), one.log2_energy + bias_correction(one.n),
                               atol=1e-9)
