"""Plain-text tables and the comparison of cases against a baseline."""

from __future__ import annotations

from typing import Optional, Sequence


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Columns left-aligned for text, right-aligned for numbers."""
    widths = [max(len(str(x)) for x in col) for col in zip(headers, *rows)]

    def numeric(s: str) -> bool:
        return s[:1].isdigit() or s[:1] in "-×" and s[1:2].isdigit()

    def line(cells: Sequence[str]) -> str:
        out = []
        for c, w in zip(cells, widths):
            c = str(c)
            out.append(c.rjust(w) if numeric(c) else c.ljust(w))
        return "  ".join(out).rstrip()

    sep = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), sep, *(line(r) for r in rows)])


def _ms(x: Optional[float]) -> str:
    return "-" if x is None else f"{x * 1000:.0f}"


def _ratio(x: Optional[float], base: Optional[float]) -> str:
    if x is None or not base:
        return "-"
    return f"×{x / base:.2f}"


def _metric_apps(summary: dict) -> list[tuple[str, dict]]:
    return [(n, a) for n, a in summary["apps"].items() if a.get("metric")]


def comparison(results: Sequence[tuple[str, dict]], baseline: Optional[str]) -> str:
    """One row per case and measured application: count, median, p90, slowdowns.

    `results` pairs a case name with its summary.json content. Slowdown is the
    case's median (p90) over the baseline case's median (p90) for the same app.
    """
    base = dict(results).get(baseline) if baseline else None
    headers = ["case", "app", "n", "median ms", "p90 ms"]
    if base is not None:
        headers += ["slowdown p50", "slowdown p90"]
    headers += ["fwd Mbps", "fwd drops"]
    rows = []
    for case, s in results:
        fwd = s["links"]["bottleneck_fwd"]
        link_cells = [f"{fwd['mean_rate_bps'] / 1e6:.2f}", str(fwd["drops"])]
        apps = _metric_apps(s)
        if not apps:
            rows.append([case, "-", "-", "-", "-"] + (["-", "-"] if base is not None else []) + link_cells)
        for name, a in apps:
            row = [case, name, str(a.get("count", 0)), _ms(a.get("p50")), _ms(a.get("p90"))]
            if base is not None:
                b = base["apps"].get(name, {})
                row += [_ratio(a.get("p50"), b.get("p50")), _ratio(a.get("p90"), b.get("p90"))]
            rows.append(row + link_cells)
    return render(headers, rows)
