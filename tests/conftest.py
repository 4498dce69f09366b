"""Shared test helpers: the installed `undertow` command and small scenarios."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
UNDERTOW = Path(sys.executable).parent / "undertow"


def traces_dir() -> Path:
    d = Path(os.environ.get("UNDERTOW_TRACES", ROOT.parent / "shared" / "traces"))
    if not d.is_dir():
        pytest.fail(f"the shared traces are missing: looked in {d} (set UNDERTOW_TRACES)")
    return d


def emulator_unavailable() -> str | None:
    """Why the emulator cannot run here, or None."""
    if os.geteuid() != 0:
        return "the emulator needs root (CAP_NET_ADMIN)"
    if not Path("/dev/net/tun").exists():
        return "the emulator needs /dev/net/tun"
    if shutil.which("ip") is None:
        return "the emulator needs iproute2's ip"
    return None


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess:
    """Runs the installed command line as a user would."""
    return subprocess.run([str(UNDERTOW), *args], capture_output=True, text=True, cwd=cwd, timeout=600)


def spawn(*args: str) -> subprocess.Popen:
    """Starts the installed command line in the background, as a user's shell
    would in the foreground: with SIGINT at its default. A process started
    from a background job inherits SIGINT ignored, and Python then keeps
    ignoring it, so a test of what Ctrl-C does would see nothing happen."""
    return subprocess.Popen([str(UNDERTOW), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))


BASE = """
duration = "{duration}"
seed = {seed}
[topology.bottleneck]
rate = "15Mbps"
delay = "20ms"
"""


@pytest.fixture
def write_scenario(tmp_path):
    """Writes a scenario file from text and returns its path."""

    def write(text: str, name: str = "s.toml") -> Path:
        p = tmp_path / name
        p.write_text(text)
        return p

    return write


def need_ns2() -> None:
    """ns-2 (`ns`, Debian's ns2 package) or a skip; where `make test` could
    have installed it (root and apt-get), its absence is a failure."""
    if shutil.which("ns"):
        return
    if os.geteuid() == 0 and shutil.which("apt-get"):
        pytest.fail("ns-2 is missing: `make system-deps` installs it (apt-get install ns2)")
    pytest.skip("ns-2 (the ns2 package) is not installed and cannot be here (needs root and apt-get)")
