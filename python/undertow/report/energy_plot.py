"""The wavelet energy plot (Abry–Veitch logscale diagram) as a PNG.

x axis: octave ``j`` (bottom) and its timescale ``2**j * bin_s`` (top);
y axis: ``log2`` energy ``y_j`` with 95 % confidence intervals; one line per
label. Uses matplotlib's Agg canvas directly: no display and no pyplot state.
See ``docs/energy.md``.
"""

from __future__ import annotations

import math
import os
from pathlib import Path

import numpy as np

from undertow.analysis.energy import EnergyResult

__all__ = ["plot_energy", "format_timescale"]

#: Size of the written PNG: WIDTH_IN x HEIGHT_IN inches at DPI.
WIDTH_IN, HEIGHT_IN, DPI = 9.0, 5.5, 100


def format_timescale(scale_s: float) -> str:
    """Short label for a timescale: ``"4 ms"``, ``"512 ms"``, ``"1.02 s"``, ``"131 s"``, ``"250 µs"``."""
    if scale_s < 1e-3:
        return f"{scale_s * 1e6:.3g} µs"
    if scale_s < 1.0:
        return f"{scale_s * 1e3:.3g} ms"
    return f"{scale_s:.3g} s"


def plot_energy(results: dict[str, EnergyResult], path, title: str | None = None) -> Path:
    """Write the energy plot of ``results`` (label -> :class:`EnergyResult`) to the PNG ``path``.

    All results must share ``bin_s`` so that their octaves are the same
    timescales. Octaves of zero energy (``-inf``, e.g. an all-zero series) are
    left out and the legend says so. The PNG is
    ``WIDTH_IN*DPI`` x ``HEIGHT_IN*DPI`` pixels (900 x 550). Returns the path.
    """
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    if not results:
        raise ValueError("plot_energy: no results")
    items = list(results.items())
    bins = {r.bin_s for _, r in items}
    if len(bins) > 1:
        raise ValueError(
            f"plot_energy: results have different bin widths {sorted(bins)}; "
            "octaves only line up for the same bin_s"
        )
    bin_s = bins.pop()
    J = max(len(r) for _, r in items)

    fig = Figure(figsize=(WIDTH_IN, HEIGHT_IN), dpi=DPI, layout="constrained")
    FigureCanvasAgg(fig)
    ax = fig.add_subplot()
    # Spread the series a little sideways so that their error bars stay apart.
    spread = 0.24 if len(items) > 1 else 0.0
    offsets = np.linspace(-spread / 2, spread / 2, len(items)) if len(items) > 1 else [0.0]
    for (label, r), dx in zip(items, offsets):
        ok = np.isfinite(r.log2_energy)
        j = r.octave[ok]
        y = r.log2_energy[ok]
        yerr = np.vstack([y - r.ci_low[ok], r.ci_high[ok] - y])
        text = str(label)
        if not ok.all():
            text += f" (zero energy at {int((~ok).sum())} octaves, not shown)"
        ax.errorbar(j + dx, y, yerr=yerr, marker="o", markersize=4, linewidth=1.5,
                    capsize=3, elinewidth=1, label=text)

    ticks = np.arange(1, J + 1)
    step = 1 if J <= 24 else 2
    ax.set_xticks(ticks[::step])
    ax.set_xlim(0.5, J + 0.5)
    ax.set_xlabel("octave j")
    ax.set_ylabel(r"log$_2$ energy  $y_j$  (bias corrected, 95% CI)")
    ax.grid(True, alpha=0.3)
    ax.legend(loc="best", fontsize="small")

    top = ax.secondary_xaxis("top")
    top.set_xticks(ticks[::step])
    top.set_xticklabels([format_timescale(math.ldexp(bin_s, int(j))) for j in ticks[::step]],
                        rotation=45, ha="left", fontsize="small")
    top.set_xlabel(f"timescale  $2^j$ × {format_timescale(bin_s)}")

    wavelets = ", ".join(sorted({r.wavelet for _, r in items}))
    ax.set_title(title if title is not None else f"Wavelet energy plot ({wavelets})")

    path = Path(os.fspath(path))
    if path.parent and not path.parent.exists():
        path.parent.mkdir(parents=True, exist_ok=True)
    fig.savefig(path, format="png", dpi=DPI)
    return path
