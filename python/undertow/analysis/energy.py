"""Wavelet energy analysis: the Abry–Veitch logscale diagram ("energy plot").

For a series ``x`` sampled every ``bin_s`` seconds (packets or bytes per bin),
the discrete wavelet transform gives detail coefficients ``d[j, k]`` at octaves
``j = 1 .. J`` (timescale ``2**j * bin_s``). The logscale diagram plots

    y_j = log2( (1/n_j) * sum_k d[j, k]**2 ) - g(n_j)

against ``j``, with 95 % confidence intervals from ``var(y_j)``. Burstiness at a
timescale shows as energy; white noise (a Poisson process in bins) is flat;
long-range dependence is a straight line of slope ``alpha = 2H - 1`` at large
octaves, which :func:`hurst` fits.

References
----------
* P. Abry, D. Veitch, "Wavelet analysis of long-range-dependent traffic",
  IEEE Trans. Information Theory 44(1), 1998.
* D. Veitch, P. Abry, "A wavelet-based joint estimator of the parameters of
  long-range dependence", IEEE Trans. Information Theory 45(3), 1999.

See ``docs/energy.md`` for the formulas, boundary handling and how to read
the plot.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = [
    "EnergyResult",
    "HurstEstimate",
    "digamma",
    "energy",
    "energy_table",
    "fgn",
    "hurst",
    "trigamma",
]

#: Two-sided 95 % standard normal quantile.
Z95 = 1.959963984540054
_LN2 = math.log(2.0)

#: Octaves with fewer boundary-free coefficients are left out when ``levels`` is not given.
DEFAULT_MIN_COEFFS = 4


@dataclass(frozen=True)
class EnergyResult:
    """One logscale diagram. All arrays have one entry per octave ``j = 1 .. J``."""

    octave: np.ndarray
    """Octave ``j`` (1-based, int)."""
    scale_s: np.ndarray
    """Timescale of octave ``j`` in seconds: ``2**j * bin_s``."""
    n: np.ndarray
    """Number of boundary-free detail coefficients ``n_j`` used at octave ``j``."""
    log2_energy: np.ndarray
    """``y_j = log2(mean_k d[j,k]**2) - g(n_j)`` (bias corrected)."""
    var: np.ndarray
    """``var(y_j) = zeta(2, n_j/2) / ln(2)**2`` (Gaussian idealisation)."""
    ci_low: np.ndarray
    """Lower end of the 95 % confidence interval of ``y_j``."""
    ci_high: np.ndarray
    """Upper end of the 95 % confidence interval of ``y_j``."""
    wavelet: str
    """PyWavelets name of the wavelet (``"db3"`` ...)."""
    bin_s: float
    """Width of one sample of the analysed series, in seconds."""
    windows: int = 1
    """Number of ``window``-long windows pooled (1 without ``window``)."""

    @property
    def ci_half(self) -> np.ndarray:
        """Half-width of the 95 % confidence interval of ``y_j``."""
        return (self.ci_high - self.ci_low) / 2.0

    def __len__(self) -> int:
        return int(self.octave.size)


@dataclass(frozen=True)
class HurstEstimate:
    """Weighted least-squares fit of the logscale diagram over octaves ``j1 .. j2``."""

    H: float
    """Hurst parameter ``(slope + 1) / 2``."""
    ci_low: float
    """Lower end of the 95 % confidence interval of ``H``."""
    ci_high: float
    """Upper end of the 95 % confidence interval of ``H``."""
    slope: float
    """Fitted slope ``alpha`` of ``y_j`` against ``j`` (spectral exponent, ``2H - 1``)."""
    j1: int
    j2: int
    slope_se: float = float("nan")
    """Standard error of ``slope``."""
    intercept: float = float("nan")
    """Fitted ``y`` at ``j = 0``."""
    chi2: float = float("nan")
    """Weighted residual sum ``sum_j (y_j - fit_j)**2 / var(y_j)``."""
    q: float = float("nan")
    """Goodness of fit: ``P(chi2 with j2-j1-1 degrees of freedom > chi2)``. Small
    (below ~0.05) means the octaves ``j1..j2`` do not lie on a line within their
    confidence intervals; change the range."""


# --------------------------------------------------------------------------------------
# Special functions (scipy-free).


def digamma(x):
    """Digamma function psi(x) for real x > 0 (vectorised, |error| < 1e-12)."""
    x = np.asarray(x, dtype=np.float64)
    if np.any(~(x > 0)):
        raise ValueError("digamma: only defined here for x > 0")
    x = x.copy()
    acc = np.zeros_like(x)
    # psi(x) = psi(x + 1) - 1/x: shift every argument above 10.
    while True:
        small = x < 10.0
        if not small.any():
            break
        acc[small] -= 1.0 / x[small]
        x[small] += 1.0
    inv2 = 1.0 / (x * x)
    # Asymptotic series: ln x - 1/(2x) - sum B_2k / (2k x^2k).
    series = inv2 * (1.0 / 12 - inv2 * (1.0 / 120 - inv2 * (1.0 / 252 - inv2 * (1.0 / 240 - inv2 / 132))))
    return acc + np.log(x) - 0.5 / x - series


def trigamma(x):
    """Trigamma function psi'(x) = zeta(2, x) (Hurwitz zeta) for real x > 0 (|error| < 1e-12)."""
    x = np.asarray(x, dtype=np.float64)
    if np.any(~(x > 0)):
        raise ValueError("trigamma: only defined here for x > 0")
    x = x.copy()
    acc = np.zeros_like(x)
    # psi'(x) = psi'(x + 1) + 1/x^2.
    while True:
        small = x < 10.0
        if not small.any():
            break
        acc[small] += 1.0 / (x[small] * x[small])
        x[small] += 1.0
    inv = 1.0 / x
    inv2 = inv * inv
    # 1/x + 1/(2x^2) + sum B_2k / x^(2k+1).
    series = inv * (1.0 + inv * (0.5 + inv * (1.0 / 6 - inv2 * (1.0 / 30 - inv2 * (
        1.0 / 42 - inv2 * (1.0 / 30 - inv2 * (5.0 / 66 - inv2 * 691.0 / 2730)))))))
    return acc + series


def _chi2_sf(x: float, dof: int) -> float:
    """P(X > x) for X ~ chi-square with ``dof`` degrees of freedom (regularised upper gamma)."""
    if dof <= 0 or not np.isfinite(x):
        return float("nan")
    if x <= 0:
        return 1.0
    a, z = dof / 2.0, x / 2.0
    lg = math.lgamma(a)
    if z < a + 1.0:
        # Series for the lower incomplete gamma.
        term = total = 1.0 / a
        ap = a
        for _ in range(10_000):
            ap += 1.0
            term *= z / ap
            total += term
            if abs(term) < abs(total) * 1e-15:
                break
        return max(0.0, 1.0 - total * math.exp(-z + a * math.log(z) - lg))
    # Continued fraction (modified Lentz) for the upper incomplete gamma.
    tiny = 1e-300
    b = z + 1.0 - a
    c = 1.0 / tiny
    d = 1.0 / b
    h = d
    for i in range(1, 10_000):
        an = -i * (i - a)
        b += 2.0
        d = an * d + b
        d = tiny if abs(d) < tiny else d
        c = b + an / c
        c = tiny if abs(c) < tiny else c
        d = 1.0 / d
        delta = d * c
        h *= delta
        if abs(delta - 1.0) < 1e-15:
            break
    return min(1.0, math.exp(-z + a * math.log(z) - lg) * h)


def bias_correction(n):
    """``g(n) = psi(n/2)/ln 2 - log2(n/2)``: ``E[log2(mean of n squared N(0,s2))] - log2(s2)``."""
    n = np.asarray(n, dtype=np.float64)
    return digamma(n / 2.0) / _LN2 - np.log2(n / 2.0)


def log2_energy_variance(n):
    """``var(y_j) = zeta(2, n/2) / ln(2)**2`` (about ``2 / (n ln(2)**2)`` for large ``n``)."""
    n = np.asarray(n, dtype=np.float64)
    return trigamma(n / 2.0) / (_LN2 * _LN2)


# --------------------------------------------------------------------------------------
# The transform.


def _pywt():
    try:
        import pywt
    except ImportError as e:  # pragma: no cover - depends on the environment
        raise ImportError(
            "undertow.analysis.energy needs PyWavelets: pip install PyWavelets"
        ) from e
    return pywt


def _wavelet(name: str):
    pywt = _pywt()
    try:
        w = pywt.Wavelet(name)
    except ValueError as e:
        raise ValueError(
            f"energy: unknown wavelet {name!r}; use an orthogonal PyWavelets wavelet such as "
            "'db1' (Haar) .. 'db20', 'symN' or 'coifN' (default 'db3')"
        ) from e
    if not w.orthogonal:
        raise ValueError(f"energy: wavelet {name!r} is not orthogonal; use e.g. 'db1' .. 'db20'")
    return w


def detail_coefficients(x, wavelet: str = "db3", levels: int | None = None,
                        min_coeffs: int = DEFAULT_MIN_COEFFS) -> list[np.ndarray]:
    """Boundary-free DWT detail coefficients ``[d_1, d_2, ...]`` of ``x``.

    One level of ``pywt.dwt`` computes ``c[k] = sum_i h[i] x[2k+1-i]`` (the full
    convolution sampled at odd positions, for any signal extension mode). For a
    filter of length ``L`` and an input of length ``m``, exactly the outputs
    ``k = L/2 - 1 .. floor((m-2)/2)`` use no extended (padded) sample; they are
    kept, ``floor(m/2) - L/2 + 1`` of them, and the others are discarded. The
    next octave is computed from the kept approximation coefficients only, so
    no coefficient at any octave depends on the boundary extension.

    ``levels=None`` goes down while an octave keeps at least ``min_coeffs``
    coefficients; an explicit ``levels`` needs at least one at every octave.
    """
    pywt = _pywt()
    w = _wavelet(wavelet) if isinstance(wavelet, str) else wavelet
    a = np.asarray(x, dtype=np.float64).ravel()
    if not np.isfinite(a).all():
        raise ValueError("energy: the series contains NaN or infinite values")
    L = w.dec_len
    first = L // 2 - 1
    out: list[np.ndarray] = []
    need = 1 if levels is not None else max(1, int(min_coeffs))
    while levels is None or len(out) < levels:
        m = a.size
        count = m // 2 - L // 2 + 1
        if count < need:
            if levels is not None:
                raise ValueError(
                    f"energy: {levels} octaves asked for, but a series of {np.size(x)} samples has "
                    f"boundary-free {wavelet} coefficients only up to octave {len(out)}"
                )
            break
        ca, cd = pywt.dwt(a, w, mode="zero")
        out.append(cd[first:first + count])
        a = ca[first:first + count]
    return out


def undecimated_mean_squares(x, wavelet, levels: int, window: int | None = None) -> np.ndarray:
    """Mean squared detail coefficient at octaves ``1 .. levels``, over every shift of the grid.

    ``pywt.swt`` (undecimated, unnormalised) gives at each octave ``j`` one
    coefficient per sample, and every ``2**j``-th of them, from any offset, is
    the DWT detail octave of ``x`` shifted by that offset. Their mean square
    is therefore the DWT energy averaged over all ``2**j`` alignments of the
    dyadic grid (the MODWT wavelet variance of Percival 1995, up to the
    normalisation). Coefficients whose filter reaches outside ``x`` are
    discarded: they are found by running the transform, with the filters'
    absolute values, on a mask that is 1 outside ``x`` and 0 inside.

    ``window``: cut ``x`` into consecutive windows of this many samples (an
    incomplete last one is dropped) and average their mean squares; the
    windows share one mask.
    """
    pywt = _pywt()
    w = _wavelet(wavelet) if isinstance(wavelet, str) else wavelet
    a = np.asarray(x, dtype=np.float64).ravel()
    m = a.size if window is None else int(window)
    span = 1 << levels
    # Room for the widest filter, so the periodic wrap only ever meets padding.
    support = (w.dec_len - 1) * (span - 1) + 1
    total = -(-(m + support) // span) * span
    mask = np.ones(total)
    mask[:m] = 0.0
    absw = pywt.Wavelet("abs", filter_bank=[np.abs(f).tolist() for f in w.filter_bank])
    clean = [r == 0.0 for r in pywt.swt(mask, absw, level=levels, trim_approx=True, norm=False)[1:][::-1]]
    sums = np.zeros(levels)
    windows = range(0, a.size - m + 1, m)
    padded = np.zeros(total)
    for i in windows:
        padded[:m] = a[i:i + m]
        details = pywt.swt(padded, w, level=levels, trim_approx=True, norm=False)[1:][::-1]
        sums += [np.sum(np.square(d[c])) for d, c in zip(details, clean)]
    counts = np.array([c.sum() for c in clean]) * len(windows)
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(counts > 0, sums / np.maximum(counts, 1), np.nan)


def energy(x, bin_s: float = 0.001, wavelet: str = "db3", levels: int | None = None,
           *, min_coeffs: int = DEFAULT_MIN_COEFFS, window: int | None = None,
           shift_invariant: bool = False) -> EnergyResult:
    """Logscale diagram (wavelet energy per octave) of a regularly sampled series.

    Parameters
    ----------
    x : array_like
        The series: packets or bytes per bin (any real series works).
    bin_s : float
        Sample spacing of ``x`` in seconds; only sets ``scale_s``.
    wavelet : str
        Orthogonal PyWavelets wavelet. ``"db3"`` (Daubechies, 3 vanishing
        moments; default, as Abry & Veitch use for traffic) ... ``"db1"`` is
        Haar. More vanishing moments remove polynomial trends of higher degree
        (degree N-1) and give cleaner octaves at the cost of longer filters,
        hence fewer boundary-free coefficients.
    levels : int, optional
        Number of octaves ``J``. Default: every octave with at least
        ``min_coeffs`` boundary-free coefficients.
    min_coeffs : int
        See ``levels`` (default 4).
    window : int, optional
        Cut ``x`` into consecutive windows of this many samples (an
        incomplete last one is dropped), transform each on its own and pool
        their boundary-free coefficients octave by octave. This is the energy
        of a ``window``-long observation averaged over the windows: what to
        compare a short trace with when the other series is several times
        its length, since a short series loses its edges at coarse octaves
        and a long one does not.
    shift_invariant : bool
        Average each octave's energy over every alignment of the dyadic grid
        with the series (undecimated transform, see
        :func:`undecimated_mean_squares`) instead of the one alignment that
        starts at the first sample. A short, sparse series (one page load)
        puts most of an octave's energy in a few coefficients, and where its
        bursts fall against the grid moves that octave by more than a factor
        of two; comparing two such series at one arbitrary alignment each
        measures that, not their burstiness. ``n_j`` and the confidence
        intervals stay the DWT's (conservative: the average varies less).

    Returns
    -------
    EnergyResult
    """
    bin_s = float(bin_s)
    if not (np.isfinite(bin_s) and bin_s > 0):
        raise ValueError(f"energy: bin_s must be a positive number of seconds, got {bin_s!r}")
    if levels is not None and (int(levels) != levels or levels < 1):
        raise ValueError(f"energy: levels must be a positive integer, got {levels!r}")
    w = _wavelet(wavelet)
    windows = 1
    if window is None:
        details = detail_coefficients(x, w, None if levels is None else int(levels), min_coeffs)
    else:
        a = np.asarray(x, dtype=np.float64).ravel()
        window = int(window)
        if window < 1 or a.size < window:
            raise ValueError(f"energy: window = {window} samples needs a series at least that long (got {a.size})")
        per = [detail_coefficients(a[i:i + window], w, None if levels is None else int(levels), min_coeffs)
               for i in range(0, a.size - window + 1, window)]
        details = [np.concatenate([p[j] for p in per]) for j in range(len(per[0]))]
        windows = len(per)
    if not details:
        raise ValueError(
            f"energy: a series of {np.size(x)} samples is too short for even one octave of "
            f"{wavelet} with {max(1, int(min_coeffs))} boundary-free coefficients"
        )
    n = np.array([d.size for d in details], dtype=np.int64)
    if shift_invariant:
        mu = undecimated_mean_squares(x, w, n.size, window)
    else:
        mu = np.array([np.mean(np.square(d)) for d in details])
    with np.errstate(divide="ignore"):
        raw = np.log2(mu)  # -inf where the energy is exactly 0 (a constant series)
    y = raw - bias_correction(n)
    var = log2_energy_variance(n)
    half = Z95 * np.sqrt(var)
    octave = np.arange(1, n.size + 1, dtype=np.int64)
    return EnergyResult(
        octave=octave,
        scale_s=np.ldexp(bin_s, octave.astype(int)),
        n=n,
        log2_energy=y,
        var=var,
        ci_low=y - half,
        ci_high=y + half,
        wavelet=w.name,
        bin_s=bin_s,
        windows=windows,
    )


# --------------------------------------------------------------------------------------
# Estimation.


def hurst(result: EnergyResult, j1: int, j2: int) -> HurstEstimate:
    """Hurst parameter from the logscale diagram over octaves ``j1 .. j2`` (inclusive).

    Weighted least squares of ``y_j`` on ``j`` with weights ``1/var(y_j)``
    (Veitch & Abry 1999). For a long-range dependent series of counts or bytes
    per bin (an increment-like process; spectrum ``~ |f|**-alpha`` near 0,
    ``alpha = 2H - 1``) ``y_j ~ alpha * j + const`` at large ``j``, so
    ``H = (slope + 1) / 2``. The 95 % confidence interval uses
    ``var(slope) = S0 / (S0*S2 - S1**2)`` with ``Sk = sum_j j**k / var(y_j)``.
    """
    j1, j2 = int(j1), int(j2)
    J = len(result)
    if not (1 <= j1 < j2 <= J):
        raise ValueError(
            f"hurst: need 1 <= j1 < j2 <= {J} (the octaves of this result), got j1={j1}, j2={j2}"
        )
    sel = slice(j1 - 1, j2)
    j = result.octave[sel].astype(np.float64)
    y = result.log2_energy[sel]
    if not np.isfinite(y).all():
        raise ValueError(f"hurst: octaves {j1}..{j2} include zero energy (a constant series?)")
    wt = 1.0 / result.var[sel]
    s0, s1, s2 = wt.sum(), (wt * j).sum(), (wt * j * j).sum()
    sy, sjy = (wt * y).sum(), (wt * j * y).sum()
    det = s0 * s2 - s1 * s1
    slope = (s0 * sjy - s1 * sy) / det
    intercept = (s2 * sy - s1 * sjy) / det
    slope_se = float(math.sqrt(s0 / det))
    chi2 = float((wt * (y - intercept - slope * j) ** 2).sum())
    dof = j2 - j1 - 1
    return HurstEstimate(
        H=float((slope + 1.0) / 2.0),
        ci_low=float((slope - Z95 * slope_se + 1.0) / 2.0),
        ci_high=float((slope + Z95 * slope_se + 1.0) / 2.0),
        slope=float(slope),
        j1=j1,
        j2=j2,
        slope_se=slope_se,
        intercept=float(intercept),
        chi2=chi2,
        q=_chi2_sf(chi2, dof) if dof > 0 else float("nan"),
    )


# --------------------------------------------------------------------------------------
# Text output.


def _format_ms(scale_s: float) -> str:
    ms = scale_s * 1e3
    if ms >= 100 or ms == round(ms):
        return f"{ms:.0f}"
    return f"{ms:.3g}"


def energy_table(results: dict[str, EnergyResult]) -> str:
    """Plain-text table: octave, timescale in ms, and ``log2 energy ± CI half-width`` per label.

    All results must share ``bin_s`` (the octaves only line up then); octaves
    that a result lacks are left blank.
    """
    if not results:
        raise ValueError("energy_table: no results")
    items = list(results.items())
    bins = {r.bin_s for _, r in items}
    if len(bins) > 1:
        raise ValueError(
            f"energy_table: results have different bin widths {sorted(bins)}; "
            "octaves only line up for the same bin_s"
        )
    bin_s = bins.pop()
    J = max(len(r) for _, r in items)
    header = ["octave", "scale_ms"] + [str(label) for label, _ in items]
    rows = []
    for j in range(1, J + 1):
        row = [str(j), _format_ms(math.ldexp(bin_s, j))]
        for _, r in items:
            if j <= len(r):
                y, h = r.log2_energy[j - 1], r.ci_half[j - 1]
                row.append(f"{y:.3f} ± {h:.3f}" if np.isfinite(y) else "-inf")
            else:
                row.append("")
        rows.append(row)
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(header)]
    lines = ["  ".join(h.rjust(wd) for h, wd in zip(header, widths))]
    lines += ["  ".join(c.rjust(wd) for c, wd in zip(row, widths)) for row in rows]
    wavelets = ", ".join(sorted({r.wavelet for _, r in items}))
    lines.append(f"# log2 energy (bias corrected) ± 95% CI half-width; wavelet {wavelets}; "
                 f"bin {_format_ms(bin_s)} ms; scale = 2^octave x bin")
    return "\n".join(lines) + "\n"


# --------------------------------------------------------------------------------------
# Synthetic long-range dependent series.


def fgn(n: int, H: float, rng: np.random.Generator | None = None) -> np.ndarray:
    """``n`` samples of unit-variance fractional Gaussian noise with Hurst parameter ``H``.

    Exact simulation by circulant embedding (Davies & Harte 1987; Wood & Chan
    1994): the autocovariance ``r(k) = (|k+1|**2H - 2|k|**2H + |k-1|**2H) / 2``
    for ``k = 0..n`` is embedded in a circulant of size ``2n``, whose
    eigenvalues are non-negative for fGn for every ``0 < H < 1``.
    """
    n = int(n)
    if n < 1:
        raise ValueError("fgn: n must be positive")
    if not 0.0 < H < 1.0:
        raise ValueError(f"fgn: H must be in (0, 1), got {H}")
    if rng is None:
        rng = np.random.default_rng()
    k = np.arange(n + 1, dtype=np.float64)
    h2 = 2.0 * H
    r = 0.5 * (np.abs(k + 1) ** h2 - 2.0 * k ** h2 + np.abs(k - 1) ** h2)
    row = np.concatenate([r, r[-2:0:-1]])  # length m = 2n
    m = row.size
    lam = np.fft.fft(row).real
    if lam.min() < -1e-9 * lam.max():  # pragma: no cover - cannot happen for fGn
        raise ArithmeticError("fgn: circulant embedding is not non-negative definite")
    lam = np.clip(lam, 0.0, None)
    # Y = FFT(sqrt(lam/m) * (N1 + i N2)) has E[Y Y*] = 2C and E[Y Y^T] = 0, so
    # Re(Y) has exactly the circulant covariance C; its first n points are fGn.
    z = rng.standard_normal(m) + 1j * rng.standard_normal(m)
    y = np.fft.fft(np.sqrt(lam / m) * z)
    return y.real[:n].copy()
