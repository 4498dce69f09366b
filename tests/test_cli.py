"""The command line: help everywhere, and one clear message for every bad input."""

from __future__ import annotations

import json

import pytest

from conftest import BASE, cli, traces_dir

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
    (
        "field of another model",
        OK + '[[background]]\nmodel = "greedy"\npacket_size = "1KB"\n',
        ["background[0].packet_size", 'does not apply to model "greedy"', '"spread"'],
    ),
    ("bad value inside a model", OK + '[[background]]\nmodel = "greedy"\naccess = { rate = "fast" }\n', ["background[0].access.rate", '"fast"']),
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


def damaged_pcap(tmp_path):
    """http-bro-org.pcap with record 101 claiming a caplen of 2^31: reading
    stops there, before 90% of the file. Returns (path, offset, file size)."""
    b = bytearray((traces_dir() / "http-bro-org.pcap").read_bytes())
    at = 24
    for _ in range(100):
        at += 16 + int.from_bytes(b[at + 8:at + 12], "little")
    b[at + 8:at + 12] = (1 << 31).to_bytes(4, "little")
    p = tmp_path / "damaged.pcap"
    p.write_bytes(b)
    return p, at, len(b)


def zero_length_interface_pcapng(tmp_path):
    """dns-recursive.pcapng with its interface block's length set to 0."""
    b = bytearray((traces_dir() / "dns-recursive.pcapng").read_bytes())
    idb = int.from_bytes(b[4:8], "little")  # just after the section header
    assert int.from_bytes(b[idb:idb + 4], "little") == 1, "expected the interface block after the section header"
    b[idb + 4:idb + 8] = bytes(4)
    p = tmp_path / "damaged.pcapng"
    p.write_bytes(b)
    return p, idb


def one_clear_line(stderr: str, prefix: str) -> str:
    assert "Traceback" not in stderr
    lines = stderr.strip().splitlines()
    assert len(lines) == 1, stderr
    # Numbers and the path only: nothing of the capture's bytes, and short.
    assert lines[0].startswith(prefix) and lines[0].isprintable() and len(lines[0]) < 400, lines[0]
    return lines[0]


def test_extract_help_states_the_share_of_a_trace_that_must_be_read():
    r = cli("extract", "--help")
    assert r.returncode == 0 and "--allow-truncated" in r.stdout and "90%" in r.stdout


def test_extract_refuses_a_trace_mostly_lost_to_a_record_of_impossible_length_and_keeps_the_old_model(tmp_path):
    trace, at, _ = damaged_pcap(tmp_path)
    out = tmp_path / "m.json"
    out.write_text("the model from before\n")
    r = cli("extract", str(trace), "-o", str(out))
    assert r.returncode == 2
    line = one_clear_line(r.stderr, f"error: {trace}: 9.7% of its bytes could be read, below the 90.0% required")
    assert f"reading stopped at byte offset {at}" in line and "--allow-truncated" in line
    assert out.read_text() == "the model from before\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["damaged.pcap", "m.json"], "a partial model was left"


def test_extract_with_allow_truncated_warns_and_records_the_truncated_tail_in_the_model(tmp_path):
    trace, at, size = damaged_pcap(tmp_path)
    out = tmp_path / "m.json"
    r = cli("extract", str(trace), "-o", str(out), "--allow-truncated", "-q")
    assert r.returncode == 0, r.stderr
    one_clear_line(r.stderr, f"warning: {trace}: reading stopped at byte offset {at}: {size - at} of {size} bytes (90.3%) "
                             "could not be read")
    t = json.loads(out.read_text())["traces"][0]
    assert (t["packets"], t["truncated_tail_bytes"], t["skipped"]) == (100, size - at, 0)


def test_a_pcapng_interface_block_of_length_0_is_refused_not_read_as_an_empty_trace(tmp_path):
    trace, idb = zero_length_interface_pcapng(tmp_path)
    out = tmp_path / "m.json"
    r = cli("extract", str(trace), "-o", str(out))
    assert r.returncode == 2 and not out.exists()
    line = one_clear_line(r.stderr, f"error: {trace}: ")
    assert f"damaged records from byte offset {idb}" in line and "--allow-truncated" in line
    r = cli("extract", str(trace), "-o", str(out), "--allow-truncated", "-q")
    assert r.returncode == 0, r.stderr
    one_clear_line(r.stderr, f"warning: {trace}: damaged records from byte offset {idb}: ")
    t = json.loads(out.read_text())["traces"][0]
    assert t["packets"] == 0 and t["skipped"] > 0


def test_energy_of_a_truncated_trace_warns_once_and_goes_on(tmp_path):
    trace, at, _ = damaged_pcap(tmp_path)
    r = cli("energy", str(trace), "--direction", "both")
    assert r.returncode == 0, r.stderr
    one_clear_line(r.stderr, f"warning: {trace}: reading stopped at byte offset {at}: ")
    assert "log2 energy" in r.stdout
