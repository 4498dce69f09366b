"""Figures from analysis results (matplotlib, written to files; no display needed).

Submodules are imported on first use so that ``import undertow.report`` does
not load matplotlib: ``from undertow.report import plot_energy`` or
``from undertow.report.energy_plot import plot_energy``.
"""

__all__ = ["plot_energy"]


def __getattr__(name):
    if name == "plot_energy":
        from undertow.report.energy_plot import plot_energy

        return plot_energy
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
