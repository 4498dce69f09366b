"""Time series for the wavelet energy analysis: binning events, reading traces and run output.

* :func:`bin_events` turns event times (and optional sizes) into packets or
  bytes per bin.
* :func:`read_timeseries` reads a plain-text event list (one event a line,
  ``time`` or ``time size``), optionally ``.gz``/``.xz``/``.bz2`` compressed,
  such as the ITA Bellcore ``.TL`` files and the arrival-time lists in
  ``shared/traces``.
* :func:`read_run_series` reads the per-bin bottleneck series of a run
  directory (``series/bottleneck.parquet``, see ``docs/run-directory.md``).

The typical chain is ``bin_events(*read_timeseries(path), bin_s=0.001)``.
See ``docs/energy.md``.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import os
from pathlib import Path

import numpy as np

from undertow import _core

__all__ = ["bin_events", "is_trace", "load_series", "read_run_series", "read_timeseries", "rebin"]

_ALLOWED_LINES = (
    "one event per line: 'time' or 'time size' (whitespace-separated decimal numbers, "
    "finite, size >= 0, the same number of columns on every line); "
    "'#' starts a comment, blank lines are ignored"
)

#: The most bins a series holds (the core's limit for traces too): a finer
#: bin over a longer span would exhaust memory, so it is refused.
MAX_BINS: int = _core.SERIES_MAX_BINS

# ASCII whitespace, exactly the separators bytes.split() uses.
_WHITESPACE = np.array([9, 10, 11, 12, 13, 32], dtype=np.uint8)


def bin_events(times_s, sizes=None, bin_s=0.001, start=None, end=None) -> np.ndarray:
    """Count events (or sum their sizes) in consecutive bins of ``bin_s`` seconds.

    Bin ``i`` covers ``[start + i*bin_s, start + (i+1)*bin_s)``. ``times_s`` need
    not be sorted.

    Parameters
    ----------
    times_s : array_like of float
        Event times in seconds.
    sizes : array_like, optional
        Per-event sizes (e.g. bytes), same length as ``times_s``. Without it the
        result counts events (packets).
    bin_s : float
        Bin width in seconds (> 0).
    start : float, optional
        Start of the first bin; default the earliest event time.
    end : float, optional
        End of the series: events at or after ``end`` are dropped and the
        series has ``ceil((end - start) / bin_s)`` bins. By default the series
        runs until the bin that holds the latest event (that last bin may be
        only partly covered by the data).

    Events before ``start`` or at/after ``end`` are ignored.

    Returns
    -------
    numpy.ndarray
        ``int64`` counts without ``sizes``, ``float64`` sums of ``sizes`` with it.
    """
    t = np.asarray(times_s, dtype=np.float64).ravel()
    if not np.isfinite(t).all():
        raise ValueError("bin_events: times_s contains NaN or infinite values")
    bin_s = float(bin_s)
    if not (np.isfinite(bin_s) and bin_s > 0):
        raise ValueError(f"bin_events: bin_s must be a positive number of seconds, got {bin_s!r}")
    w = None
    if sizes is not None:
        w = np.asarray(sizes, dtype=np.float64).ravel()
        if w.shape != t.shape:
            raise ValueError(
                f"bin_events: sizes has {w.size} values but times_s has {t.size}; they must match"
            )
    if start is None:
        if t.size == 0:
            raise ValueError("bin_events: no events and no start given")
        start = float(t.min())
    start = float(start)
    if end is None:
        if t.size == 0:
            raise ValueError("bin_events: no events and no end given")
        last = float(t.max())
        if last < start:
            raise ValueError(f"bin_events: every event is before start={start}")
        nbins = int(_bin_index(np.array([last]), start, bin_s)[0]) + 1
    else:
        end = float(end)
        if not end > start:
            raise ValueError(f"bin_events: end ({end}) must be after start ({start})")
        nbins = int(np.ceil(round((end - start) / bin_s, 9)))
    if nbins > MAX_BINS:
        raise ValueError(
            f"bins of {bin_s:g} s over {nbins * bin_s:.6g} s are {nbins} bins, more than {MAX_BINS}, "
            "the most a series holds: use a longer bin"
        )
    idx = _bin_index(t, start, bin_s)
    keep = (idx >= 0) & (idx < nbins)
    if end is not None:
        keep &= t < end
    if not keep.all():
        idx = idx[keep]
        if w is not None:
            w = w[keep]
    if w is None:
        return np.bincount(idx, minlength=nbins).astype(np.int64, copy=False)
    return np.bincount(idx, weights=w, minlength=nbins)


def _bin_index(t: np.ndarray, start: float, bin_s: float) -> np.ndarray:
    # Rounding the bin position to 1e-9 of a bin first puts an event that lies
    # exactly on a bin edge (0.003 s with 1 ms bins: 2.9999999999999996 bins in
    # binary floating point) into the bin that starts there.
    return np.floor(np.round((t - start) / bin_s, 9)).astype(np.int64)


def read_timeseries(path) -> tuple[np.ndarray, np.ndarray | None]:
    """Read a plain-text event list: one event a line, ``time`` or ``time size``.

    * Columns are separated by any whitespace; leading/trailing blanks, blank
      lines and ``#`` comments (to the end of the line) are ignored.
    * Every line has the same number of columns, 1 or 2.
    * Files ending in ``.gz``, ``.xz`` (or ``.lzma``) and ``.bz2`` are
      decompressed.
    * The ITA ``.TL`` format (``time size`` with fixed-width padding) is the
      2-column case.

    Returns ``(times_s, sizes)`` as ``float64`` arrays, ``sizes`` is ``None``
    for a 1-column file. Times are returned in file order (not sorted).

    Raises ``ValueError`` naming the file and the 1-based line number of the
    first line that does not fit, and what is allowed.
    """
    path = Path(os.fspath(path))
    raw = _read_bytes(path)
    buf = np.frombuffer(raw, dtype=np.uint8)

    if b"#" in raw:
        # Blank out every comment: a byte is in a comment when the last '#'
        # before it (inclusive) comes after the last newline before it.
        pos = np.arange(buf.size, dtype=np.int64)
        last_hash = np.maximum.accumulate(np.where(buf == ord("#"), pos, -1))
        last_nl = np.maximum.accumulate(np.where(buf == ord("\n"), pos, -1))
        in_comment = last_hash > last_nl
        del pos, last_hash, last_nl
        buf = buf.copy()
        buf[in_comment] = ord(" ")
        raw = buf.tobytes()

    # Count the tokens on every line without a Python loop over the lines.
    space = np.isin(buf, _WHITESPACE)
    token_start = ~space
    token_start[1:] &= space[:-1]
    newline = buf == ord("\n")
    # line_of[i]: 0-based line number of byte i.
    line_of = np.cumsum(newline, dtype=np.int64)
    line_of -= newline
    nlines = int(line_of[-1]) + 1 if buf.size else 0
    token_line = line_of[token_start]
    del space, token_start, newline, line_of
    per_line = np.bincount(token_line, minlength=nlines)
    data_lines = np.flatnonzero(per_line)
    if data_lines.size == 0:
        raise ValueError(f"{path}: no events found; expected {_ALLOWED_LINES}")
    ncols = int(per_line[data_lines[0]])
    if ncols not in (1, 2):
        _fail(path, raw, int(data_lines[0]), f"{ncols} columns")
    bad = np.flatnonzero((per_line != 0) & (per_line != ncols))
    if bad.size:
        first = int(bad[0])
        _fail(path, raw, first, f"{int(per_line[first])} columns where line "
              f"{int(data_lines[0]) + 1} has {ncols}")

    tokens = raw.split()
    try:
        values = np.array(tokens, dtype=np.float64)
    except ValueError:
        for i, tok in enumerate(tokens):
            try:
                float(tok)
            except ValueError:
                _fail(path, raw, int(token_line[i]), f"column {_column(raw, int(token_line[i]), tok)} is not a number")
        raise  # pragma: no cover - numpy and float() disagree
    values = values.reshape(-1, ncols)
    nonfinite = ~np.isfinite(values)
    if nonfinite.any():
        row = int(np.flatnonzero(nonfinite.any(axis=1))[0])
        _fail(path, raw, int(data_lines[row]), "a value that is NaN or infinite")
    times = np.ascontiguousarray(values[:, 0])
    if ncols == 1:
        return times, None
    sizes = np.ascontiguousarray(values[:, 1])
    negative = np.flatnonzero(sizes < 0)
    if negative.size:
        _fail(path, raw, int(data_lines[int(negative[0])]), "a negative size")
    return times, sizes


#: The largest event list read (after decompression).
EVENT_LIST_MAX_BYTES = 1 << 30


def _read_bytes(path: Path) -> bytes:
    suffix = path.suffix.lower()
    opener = {".gz": gzip.open, ".xz": lzma.open, ".lzma": lzma.open, ".bz2": bz2.open}.get(suffix, open)
    try:
        with opener(path, "rb") as f:
            raw = f.read(EVENT_LIST_MAX_BYTES + 1)
    except IsADirectoryError:
        raise ValueError(f"{path}: a directory, not an event list") from None
    except (OSError, lzma.LZMAError, EOFError) as e:
        if isinstance(e, FileNotFoundError):
            raise
        raise ValueError(f"{path}: cannot read as {suffix or 'plain text'} file: {getattr(e, 'strerror', None) or e}") from None
    if len(raw) > EVENT_LIST_MAX_BYTES:
        raise ValueError(f"{path}: more than {EVENT_LIST_MAX_BYTES >> 20} MiB of events, the most an event list may hold")
    return raw


def _column(raw: bytes, line0: int, tok: bytes) -> int:
    """The 1-based column of `tok` on line `line0` of `raw`."""
    line = raw.split(b"\n", line0 + 1)[line0].split()
    return line.index(tok) + 1 if tok in line else 1


def _fail(path: Path, raw: bytes, line0: int, what: str):
    # The line itself is not quoted: an event list is the user's data, and
    # whatever file was named by mistake, its contents are not ours to print.
    raise ValueError(f"{path}:{line0 + 1}: {what}; expected {_ALLOWED_LINES}")


_RUN_COLUMNS = ("bytes", "packets", "drops")


def read_run_series(rundir, direction: str = "fwd", what: str = "bytes") -> tuple[np.ndarray, float]:
    """Read one bottleneck series of a run directory.

    Reads ``<rundir>/series/bottleneck.parquet`` (columns ``t_s``, and
    ``fwd_*``/``rev_*`` for ``bytes``, ``packets``, ``drops``).

    Parameters
    ----------
    rundir : path
        A run directory written by ``undertow run``.
    direction : ``"fwd"`` (left to right) or ``"rev"``.
    what : ``"bytes"``, ``"packets"`` or ``"drops"`` per bin.

    Returns
    -------
    (series, bin_s)
        ``series`` as ``float64`` (one value a bin) and the bin width in
        seconds, taken from the spacing of ``t_s`` (which must be uniform).
    """
    if direction not in ("fwd", "rev"):
        raise ValueError(f"read_run_series: direction must be 'fwd' or 'rev', got {direction!r}")
    if what not in _RUN_COLUMNS:
        raise ValueError(
            f"read_run_series: what must be one of {', '.join(map(repr, _RUN_COLUMNS))}, got {what!r}"
        )
    import pyarrow.parquet as pq

    path = Path(os.fspath(rundir)) / "series" / "bottleneck.parquet"
    if not path.is_file():
        raise FileNotFoundError(f"{path}: no bottleneck series (is {rundir} a run directory?)")
    column = f"{direction}_{what}"
    table = pq.read_table(path, columns=["t_s", column])
    t = table.column("t_s").to_numpy().astype(np.float64)
    x = table.column(column).to_numpy().astype(np.float64)
    if t.size < 2:
        raise ValueError(f"{path}: {t.size} bins; need at least 2 to know the bin width")
    steps = np.diff(t)
    bin_s = float((t[-1] - t[0]) / (t.size - 1))
    if not bin_s > 0 or np.abs(steps - bin_s).max() > 1e-6 * bin_s + 1e-12:
        raise ValueError(f"{path}: t_s is not uniformly spaced (steps {steps.min()} .. {steps.max()} s)")
    return x, bin_s


def rebin(x: np.ndarray, bin_s: float, new_bin_s: float) -> np.ndarray:
    """Sums ``x`` (bins of ``bin_s``) into bins of ``new_bin_s``, an integer multiple of it.

    A last partial bin is dropped.
    """
    k = new_bin_s / bin_s
    if abs(k - round(k)) > 1e-6 or round(k) < 1:
        raise ValueError(f"a bin of {new_bin_s * 1e3:g} ms is not a whole multiple of the series' {bin_s * 1e3:g} ms bins")
    k = int(round(k))
    if k == 1:
        return x
    n = x.size // k
    return x[: n * k].reshape(n, k).sum(axis=1)


def is_trace(path) -> bool:
    """True if ``path`` starts like a pcap or pcapng file."""
    try:
        with open(path, "rb") as f:
            head = f.read(4)
    except OSError:
        return False
    return head in (b"\xd4\xc3\xb2\xa1", b"\xa1\xb2\xc3\xd4", b"\x4d\x3c\xb2\xa1", b"\xa1\xb2\x3c\x4d", b"\x0a\x0d\x0d\x0a")


def load_series(source, direction: str = "fwd", what: str = "bytes", bin_s: float = 0.001, trace_series=None):
    """A per-bin series from any source the energy analysis accepts.

    ``source`` is a run directory (its bottleneck series), a pcap or pcapng
    file (``trace_series(path, bin_s)`` gives its per-direction series; the
    command line passes the core's), or a plain-text event list (one
    direction only; ``direction`` is ignored). Returns ``(series, bin_s)``.
    """
    p = Path(os.fspath(source))
    if p.is_dir():
        x, b = read_run_series(p, direction, what)
        return rebin(x, b, bin_s), bin_s
    if not p.exists():
        raise FileNotFoundError(f"{p}: no such file or run directory")
    if is_trace(p):
        if trace_series is None:
            raise ValueError(f"{p}: reading packet traces needs the undertow core")
        series = trace_series(str(p), bin_s)
        return np.asarray(series[f"{direction}_{what}"], dtype=np.float64), bin_s
    times, sizes = read_timeseries(p)
    if what == "bytes" and sizes is None:
        raise ValueError(f"{p}: holds event times only, so only packets can be counted (use --what packets)")
    return bin_events(times, sizes if what == "bytes" else None, bin_s=bin_s).astype(np.float64), bin_s
