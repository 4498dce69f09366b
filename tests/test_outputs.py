"""Run directories and written files: complete or absent, never a mixture,
and never written through something that is not a regular file."""

from __future__ import annotations

import os
import signal
import stat
import subprocess
import time
from pathlib import Path

import pytest

from conftest import BASE, cli, spawn, traces_dir

QUICK = BASE.format(duration="5s", seed=1) + '[[apps]]\nkind = "http"\nobject_size = "100KB"\n'
# Long enough to be caught running (about ten seconds a case on this machine).
LONG = BASE.format(duration="600s", seed=1).replace('"15Mbps"', '"1Gbps"') + '[[background]]\nmodel = "greedy"\nhosts = 100\n'


def files(d: Path) -> dict[str, bytes]:
    """Every file under `d`, by relative path (timing.json aside: it differs between identical runs)."""
    return {str(p.relative_to(d)): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and p.name != "timing.json"}


def leftovers(parent: Path, name: str) -> list[str]:
    """Temporary directories and locks of a run into `parent/name`."""
    return sorted(p.name for p in parent.iterdir() if p.name.startswith(f".{name}."))


def test_a_run_into_a_place_that_exists_is_refused_and_changes_nothing(write_scenario, tmp_path):
    s = write_scenario(QUICK + "[output]\npcap = true\n")
    out = tmp_path / "out"
    assert cli("run", str(s), "-o", str(out), "-q").returncode == 0
    before = files(out)
    assert "bottleneck.pcap" in before
    r = cli("run", str(write_scenario(QUICK, "other.toml")), "-o", str(out), "-q")
    assert r.returncode == 2 and r.stderr.strip() == f"error: {out} exists: choose another place, or pass --overwrite to replace it whole"
    assert files(out) == before
    # A directory of someone else's files is refused, even with --overwrite.
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "notes.txt").write_text("keep me")
    for extra in ([], ["--overwrite"]):
        r = cli("run", str(s), "-o", str(mine), "-q", *extra)
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert [p.name for p in mine.iterdir()] == ["notes.txt"]
    assert "undertow did not write" in r.stderr
    assert leftovers(tmp_path, "out") == [] and leftovers(tmp_path, "mine") == []


def test_overwrite_replaces_a_run_whole(write_scenario, tmp_path):
    out = tmp_path / "out"
    assert cli("run", str(write_scenario(QUICK + "[output]\npcap = true\n")), "-o", str(out), "-q").returncode == 0
    r = cli("run", str(write_scenario(QUICK + "[cases.a]\n[cases.b]\n", "cases.toml")), "-o", str(out), "-q", "--overwrite")
    assert r.returncode == 0, r.stderr
    # Nothing of the first run is left beside the second's.
    assert sorted(p.name for p in out.iterdir()) == [".undertow-output", "a", "b"]
    assert leftovers(tmp_path, "out") == []


def test_a_case_name_cannot_lead_outside_the_run_directory(write_scenario, tmp_path):
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "summary.json").write_text("{}")
    for name in ("../victim", str(victim)):
        s = write_scenario(QUICK + f'[cases."{name}"]\n')
        for command in ("check", "run"):
            r = cli(command, str(s), *(["-o", str(tmp_path / "o")] if command == "run" else []))
            assert r.returncode == 2 and "is not a usable case name" in r.stderr, r.stderr
    assert [p.name for p in victim.iterdir()] == ["summary.json"] and not (tmp_path / "o").exists()


def test_a_run_directory_run_again_is_byte_identical_and_keeps_its_case(write_scenario, tmp_path):
    s = write_scenario(QUICK + "[cases.nbg]\n[cases.lossy]\ntopology.bottleneck.loss = \"1%\"\n")
    assert cli("run", str(s), "-o", str(tmp_path / "first"), "-q").returncode == 0
    again = tmp_path / "again"
    r = cli("run", str(tmp_path / "first/lossy/scenario.toml"), "-o", str(again), "-q")
    assert r.returncode == 0, r.stderr
    first = files(tmp_path / "first/lossy")
    assert files(again) == {**first, ".undertow-output": (again / ".undertow-output").read_bytes()}
    assert b'"case": "lossy"' in first["summary.json"]


def start(*args: str) -> subprocess.Popen:
    return spawn(*args)


def wait_for_partial(parent: Path, name: str) -> None:
    deadline = time.monotonic() + 60
    while not any(".partial-" in n for n in leftovers(parent, name)):
        assert time.monotonic() < deadline, "the run never started writing"
        time.sleep(0.05)
    time.sleep(0.5)


@pytest.mark.parametrize("sig,code,word", [(signal.SIGINT, 130, "interrupted"), (signal.SIGTERM, 143, "terminated")])
def test_an_interrupted_run_stops_every_case_at_once_and_leaves_nothing(write_scenario, tmp_path, sig, code, word):
    s = write_scenario(LONG + "[cases.a]\n[cases.b]\n")
    out = tmp_path / "out"
    p = start("run", str(s), "-o", str(out), "-j", "2", "-q")
    wait_for_partial(tmp_path, "out")
    t0 = time.monotonic()
    p.send_signal(sig)
    _, err = p.communicate(timeout=30)
    took = time.monotonic() - t0
    assert p.returncode == code and err.strip() == word, err
    assert took < 1.0, f"{took:.2f} s to stop"
    assert not out.exists() and leftovers(tmp_path, "out") == []


def test_two_runs_into_one_place_at_once_refuse_the_second(write_scenario, tmp_path):
    s = write_scenario(LONG)
    out = tmp_path / "out"
    p = start("run", str(s), "-o", str(out), "-q")
    wait_for_partial(tmp_path, "out")
    r = cli("run", str(write_scenario(QUICK, "quick.toml")), "-o", str(out), "-q", "--overwrite")
    assert r.returncode == 2 and "is being written by another undertow command" in r.stderr, r.stderr
    p.send_signal(signal.SIGINT)
    p.communicate(timeout=30)


def test_a_killed_run_leaves_an_incomplete_directory_that_summary_refuses(write_scenario, tmp_path):
    long_b = '[cases.b]\nduration = "600s"\ntopology.bottleneck.rate = "1Gbps"\nbackground = [{ model = "greedy", hosts = 100 }]\n'
    s = write_scenario(QUICK + "[cases.a]\n" + long_b)
    p = start("run", str(s), "-o", str(tmp_path / "out"), "-q", "-j", "1")
    wait_for_partial(tmp_path, "out")
    # Case a (5 s simulated) is done long before case b.
    partial = next(tmp_path / n for n in leftovers(tmp_path, "out") if ".partial-" in n)
    deadline = time.monotonic() + 60
    while not (partial / "a" / "summary.json").exists():
        assert time.monotonic() < deadline
        time.sleep(0.05)
    p.kill()
    p.communicate()
    assert not (tmp_path / "out").exists()
    assert (partial / "INCOMPLETE").exists() and (partial / "b" / "INCOMPLETE").exists()
    for d in (partial / "a", partial / "b"):
        r = cli("summary", str(d))
        assert r.returncode == 2 and "an incomplete run" in r.stderr, r.stderr
    # The lock died with its holder: the next run goes ahead.
    assert cli("run", str(write_scenario(QUICK, "q.toml")), "-o", str(tmp_path / "out"), "-q").returncode == 0


@pytest.fixture
def not_regular(tmp_path) -> dict[str, Path]:
    """Things that are not regular files, each a place a file could be written by mistake."""
    d = tmp_path / "targets"
    d.mkdir()
    fifo, link, dev = d / "fifo", d / "link", d / "full"
    os.mkfifo(fifo)
    link.symlink_to(d / "elsewhere")
    if os.geteuid() == 0:
        os.mknod(dev, stat.S_IFCHR | 0o666, os.makedev(1, 7))
    out = {"fifo": fifo, "symlink": link, "directory": d}
    if dev.exists():
        out["device"] = dev
    return out


def test_a_file_output_that_is_not_a_regular_file_is_refused_and_left_alone(not_regular, tmp_path):
    trace = str(traces_dir() / "http-bro-org.pcap")
    model = tmp_path / "m.json"
    assert cli("extract", trace, "-o", str(model), "-q").returncode == 0
    for kind, target in not_regular.items():
        before = os.lstat(target)
        for args in (["extract", trace, "-o", str(target), "-q"],
                     ["energy", trace, "--plot", str(target)],
                     ["validate", str(model), "--trace", trace, "-o", str(tmp_path / f"v-{kind}"), "--plot", str(target), "-q"]):
            r = cli(*args)
            assert r.returncode == 2 and "Traceback" not in r.stderr, (kind, args, r.stderr)
            assert "is not a regular file" in r.stderr or "is not a directory" in r.stderr, r.stderr
            after = os.lstat(target)
            assert (after.st_mode, after.st_ino) == (before.st_mode, before.st_ino), f"{kind} replaced by {args[0]}"


def test_output_that_cannot_be_written_is_a_usage_error(write_scenario, tmp_path):
    (tmp_path / "afile").write_text("x")
    s = str(write_scenario(QUICK))
    for out in (str(tmp_path / "afile" / "out"), "/proc/undertow-test/out", ""):
        r = cli("run", s, "-o", out, "-q")
        assert r.returncode == 2 and "Traceback" not in r.stderr, r.stderr
        assert len(r.stderr.strip().splitlines()) == 1
    assert not Path("runs").exists() or not any(Path("runs").glob("s*")), "-o '' wrote to the default place"
