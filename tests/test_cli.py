"""The command line: help everywhere, and one clear message for every bad input."""

from __future__ import annotations

import pytest

from conftest import BASE, cli

OK = BASE.format(duration="10s", seed=1)


@pytest.mark.parametrize("args", [[], ["run"], ["check"], ["resolve"], ["summary"]])
def test_help_on_every_command(args):
    r = cli(*args, "--help")
    assert r.returncode == 0
    assert "usage: undertow" in r.stdout
    assert len(r.stdout.splitlines()) > 3


BAD = [
    # (what, scenario text or None for a missing file, expected fragments)
    ("unknown field", OK + "ratee = 3\n", ["topology.bottleneck.ratee", 'unknown field "ratee"', '"rate"']),
    ("bad unit", OK.replace('"15Mbps"', '"15Mbs"'), ["topology.bottleneck.rate", '"15Mbs"', "Mbps"]),
    ("negative rate", OK.replace('"15Mbps"', '"-15Mbps"'), ["topology.bottleneck.rate", '"-15Mbps"', "positive"]),
    ("zero rate", OK.replace('"15Mbps"', '"0Mbps"'), ["topology.bottleneck.rate", '"0Mbps"', "positive"]),
    (
        "missing sizes file",
        OK + '[[apps]]\nkind = "http"\nsizes_file = "missing-sizes.txt"\n',
        ["apps[0].sizes_file", '"missing-sizes.txt" not found'],
    ),
    ("wrong choice", OK + '[[background]]\nmodel = "cbr"\ntransport = "sctp"\nrate = "10%"\n', ["background[0].transport", '"udp" or "tcp"']),
    ("bad case", OK + '[cases.x]\ntopology.bottleneck.delay = "soon"\n', ['case "x"', "topology.bottleneck.delay", '"soon"']),
    ("bad toml", "duration = \n", ["not valid TOML at line 1"]),
    ("capture after the end", OK + '[output]\npcap = true\npcap_from = "10s"\n', ["output.pcap_from", "not before the end"]),
]


@pytest.mark.parametrize("what,text,wants", BAD, ids=[b[0] for b in BAD])
@pytest.mark.parametrize("command", ["check", "run"])
def test_bad_scenario_gives_one_clear_message(write_scenario, tmp_path, what, text, wants, command):
    path = write_scenario(text)
    out = tmp_path / "out"
    r = cli(command, str(path), *(["-o", str(out)] if command == "run" else []))
    assert r.returncode == 2, r.stderr
    assert "Traceback" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1, r.stderr
    assert lines[0].startswith(f"error: {path}: ")
    for w in wants:
        assert w in lines[0], f"{lines[0]!r} lacks {w!r}"
    # Nothing was run, nothing written.
    assert not out.exists()


def test_missing_scenario_file(tmp_path):
    r = cli("run", str(tmp_path / "nope.toml"))
    assert r.returncode == 2
    assert r.stderr.strip() == f"error: {tmp_path / 'nope.toml'}: no such file"


def test_unknown_case_on_the_command_line(write_scenario):
    path = write_scenario(OK + "[cases.a]\n")
    r = cli("run", str(path), "--case", "b")
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "no case named 'b'" in r.stderr and "a" in r.stderr


def test_bad_flag_is_a_usage_error(write_scenario):
    r = cli("run", str(write_scenario(OK)), "--seed", "many")
    assert r.returncode == 2
    assert "'many' is not allowed: expected a whole number" in r.stderr and "Traceback" not in r.stderr
    assert len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_check_and_resolve(write_scenario):
    path = write_scenario(OK + "[cases.a]\n[cases.b]\ntopology.bottleneck.loss = \"1%\"\n")
    r = cli("check", str(path))
    assert r.returncode == 0 and "ok" in r.stdout and "a, b" in r.stdout
    r = cli("resolve", str(path), "--case", "b", "--seed", "7")
    assert r.returncode == 0
    assert "seed = 7" in r.stdout and 'loss = "1%"' in r.stdout and 'congestion_control = "cubic"' in r.stdout


def test_summary_of_missing_rundir(tmp_path):
    r = cli("summary", str(tmp_path))
    assert r.returncode == 2 and "no summary.json: not a run directory" in r.stderr


def test_run_shows_progress_and_a_table(write_scenario, tmp_path, monkeypatch):
    monkeypatch.setenv("UNDERTOW_PROGRESS_DELAY", "0")
    text = BASE.format(duration="120s", seed=1) + '[[background]]\nmodel = "greedy"\nhosts = 20\n[cases.a]\n[cases.b]\n'
    r = cli("run", str(write_scenario(text)), "-o", str(tmp_path / "o"), "--progress")
    assert r.returncode == 0, r.stderr
    assert "%" in r.stderr and "[" in r.stderr, "no progress bar"
    lines = r.stdout.splitlines()
    assert lines[0].split()[:2] == ["case", "app"]
    assert [ln.split()[0] for ln in lines[2:4]] == ["a", "b"]
    assert "2 run(s)" in r.stdout
