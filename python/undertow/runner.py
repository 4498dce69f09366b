"""Running the cases of a scenario file and reading what they produced."""

from __future__ import annotations

import json
import os
import threading
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Callable, Optional

from undertow import _core, outputs


@dataclass
class CaseResult:
    """One finished run: its directory and its summary."""

    case: Optional[str]
    directory: Path
    summary: dict
    timing: dict


def load(path: str | os.PathLike) -> dict:
    """Checks a scenario file (every case) and returns its name, cases and baseline."""
    return dict(_core.load(str(path)))


def run_case(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    case: Optional[str] = None,
    seed: Optional[int] = None,
    progress: Optional[Callable[[float], None]] = None,
    engine: Optional[str] = None,
) -> CaseResult:
    """Runs one case (or the base scenario) into `out_dir`, in `engine`
    ("sim" or "emu"; by default the scenario's own)."""
    summary, timing = _core.run(str(path), str(out_dir), case, seed, progress, engine)
    return CaseResult(case, Path(out_dir), json.loads(summary), json.loads(timing))


def check_cases(path: str | os.PathLike, cases: list[str]) -> dict:
    """Loads the scenario file and checks that it has each of `cases`."""
    info = load(path)
    for n in cases:
        if n not in info["cases"]:
            known = ", ".join(info["cases"]) or "no cases"
            raise _core.ScenarioError(f"{path}: no case named {n!r}: the file has {known}")
    return info


class Cancelled(Exception):
    """Another case failed or the user interrupted: this case stops."""


def run_file(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    seed: Optional[int] = None,
    cases: Optional[list[str]] = None,
    jobs: Optional[int] = None,
    progress: Optional[Callable[[dict[str, float]], None]] = None,
    overwrite: bool = False,
    engine: Optional[str] = None,
) -> list[CaseResult]:
    """Runs the file's cases (or its base scenario if it has none) into
    `out_dir`, which appears whole when every case has finished, or not at
    all (see `undertow.outputs`).

    Each case gets `out_dir/<case>`. Cases run in parallel threads (the core
    releases the GIL); `progress` receives the fraction done of every case.
    When one case fails or the run is interrupted, the others stop at their
    next progress report (a fraction of a second). Cases in the real-time
    emulator run one at a time: each needs the machine's CPUs to itself.
    """
    info = check_cases(path, cases or [])
    names: list[Optional[str]] = list(cases) if cases else (list(info["cases"]) or [None])
    done = {str(n): 0.0 for n in names}
    lock = threading.Lock()
    stop = threading.Event()

    with outputs.new_directory(Path(out_dir), overwrite) as tmp:

        def one(name: Optional[str]) -> CaseResult:
            def tick(frac: float) -> None:
                if stop.is_set():
                    raise Cancelled()
                with lock:
                    done[str(name)] = frac
                    if progress:
                        progress(dict(done))

            d = tmp / name if name is not None else tmp
            r = run_case(path, d, name, seed, tick, engine)
            # Results name the directory they will have.
            r.directory = Path(out_dir) / name if name is not None else Path(out_dir)
            return r

        jobs = jobs or min(len(names), os.cpu_count() or 1)
        if (engine or info["engine"]) == "emu":
            jobs = 1
        if jobs <= 1 or len(names) == 1:
            return [one(n) for n in names]
        with ThreadPoolExecutor(max_workers=jobs) as pool:
            futures = [pool.submit(one, n) for n in names]
            try:
                return [f.result() for f in futures]
            except BaseException:
                stop.set()
                raise


def shell(
    path: str | os.PathLike,
    out_dir: str | os.PathLike,
    case: Optional[str] = None,
    seed: Optional[int] = None,
    app: Optional[str] = None,
    command: Optional[str] = None,
    overwrite: bool = False,
) -> CaseResult:
    """Runs `case` of a scenario in the emulator with a shell (or `command`)
    on the client host of command app `app` (or the first), until it exits,
    and writes `out_dir`. The terminal's Ctrl-C belongs to the shell
    meanwhile; SIGTERM still stops the run."""
    import signal

    check_cases(path, [case] if case is not None else [])
    with outputs.new_directory(Path(out_dir), overwrite) as tmp:
        previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
        try:
            summary, timing = _core.shell(str(path), str(tmp), case, seed, app, command)
        finally:
            signal.signal(signal.SIGINT, previous)
    return CaseResult(case, Path(out_dir), json.loads(summary), json.loads(timing))
