"""Every subcommand, given bad arguments or bad files: one line on stderr,
exit status 2, no traceback, and nothing of a file's contents quoted."""

from __future__ import annotations

import json
import struct

import pytest

from conftest import BASE, cli, traces_dir

OK = BASE.format(duration="5s", seed=1) + '[[apps]]\nkind = "http"\nobject_size = "100KB"\n'
SECRET = "root:$6$s4ltsalt$S3CRETHASHVALUE:19000:0:99999:7:::"


@pytest.fixture(scope="module")
def files(tmp_path_factory) -> dict[str, str]:
    """Inputs of every kind, good and bad, made once."""
    d = tmp_path_factory.mktemp("inputs")
    trace = traces_dir() / "http-bro-org.pcap"
    model = d / "model.json"
    assert cli("extract", str(trace), "-o", str(model), "-q").returncode == 0
    m = json.loads(model.read_text())
    bad = dict(m, hosts=[dict(h, loss=1.5) for h in m["hosts"]])
    (d / "loss.json").write_text(json.dumps(bad))
    (d / "nohosts.json").write_text(json.dumps({k: v for k, v in m.items() if k != "hosts"}))
    (d / "secret.txt").write_text(SECRET + "\n")
    (d / "binary.bin").write_bytes(bytes(range(256)) * 4)
    (d / "scenario.toml").write_text(OK)
    (d / "sizes.toml").write_text(OK.replace('object_size = "100KB"', 'sizes_file = "secret.txt"'))
    (d / "ports.toml").write_text(OK.replace('object_size = "100KB"', 'object_size = "1KB"\nport = 70000'))
    (d / "far.txt").write_text("0 100\n1e9 100\n")
    # A pcap header and nothing else, and one of a single packet.
    raw = trace.read_bytes()
    (d / "header.pcap").write_bytes(raw[:24])
    incl = struct.unpack("<I", raw[32:36])[0]
    (d / "one.pcap").write_bytes(raw[: 24 + 16 + incl])
    (d / "afile").write_text("x")
    return {p.name: str(p) for p in d.iterdir()} | {"dir": str(d), "trace": str(trace)}


# (subcommand and arguments, with {name} for a file of the fixture; a fragment of the message)
CASES = [
    ("run {scenario.toml} --seed -1", "--seed: '-1' is not allowed"),
    ("run {scenario.toml} --seed 99999999999999999999", "--seed"),
    ("run {scenario.toml} -j 0", "--jobs: '0' is not allowed"),
    ("run {scenario.toml} -o ''", "an empty path"),
    ("run {scenario.toml} -o {afile}/out", "cannot"),
    ("run {secret.txt}", "not valid TOML"),
    ("run {sizes.toml}", "line 1 is not a size"),
    ("run {ports.toml}", "0 to 65535"),
    ("run {scenario.toml} --case nope", "no case named"),
    ("run {scenario.toml} --engine qemu", "invalid choice: 'qemu'"),
    ("clean --all", "unrecognized arguments: --all"),
    ("shell {scenario.toml} --case nope", "no case named"),
    ("check /dev/zero", "larger than 4MiB"),
    ("check {dir}", "is a directory"),
    ("check {binary.bin}", "not a text file"),
    ("resolve {scenario.toml} --seed x", "--seed"),
    ("resolve {scenario.toml} --case nope", "no case named"),
    ("summary {scenario.toml}", "not a directory"),
    ("summary {dir}", "no summary.json"),
    ("summary /nonexistent", "no such file or directory"),
    ("inspect {dir}", "is a directory"),
    ("inspect {binary.bin}", "not a text file"),
    ("inspect {nohosts.json}", "missing field `hosts`"),
    ("inspect {loss.json}", "loss is 1.5: expected 0 to 1"),
    ("inspect /dev/zero", "larger than 1GiB"),
    ("inspect {scenario.toml}", "not a swing model"),
    ("validate {model.json} --trace {trace} --periods 0", "--periods: '0' is not allowed"),
    ("validate {model.json} --trace {trace} --periods -1", "--periods"),
    ("validate {model.json} --trace {trace} --bin 1ns -o {dir}/v1", "--bin 1ns: expected at least 1us"),
    ("validate {model.json} --trace {trace} --bin 500ns -o {dir}/v1", "--bin 500ns: expected at least 1us"),
    ("validate {model.json} --trace {trace} --bin 0s", "longer than zero"),
    ("validate {loss.json} --trace {trace}", "loss is 1.5"),
    ("validate {model.json} --trace {trace} -o ''", "an empty path"),
    ("energy {trace} --bin 1ns", "the most a series holds"),
    ("energy {far.txt}", "the most a series holds"),
    ("energy {trace} --plot {afile}/p.png", "cannot write: "),
    ("energy {trace} --plot /proc/undertow-test.png", "cannot write"),
    ("energy {secret.txt}", "is not a number"),
    ("energy /nonexistent", "no such file"),
    ("energy {trace} --hurst 5:2", "J1 < J2"),
    ("extract {trace} -o {dir}/x.json --max-rres -1", "--max-rres: '-1' is not allowed"),
    ("extract {trace} -o {dir}/x.json --rtt-percentile nan", "--rtt-percentile: 'nan' is not allowed"),
    ("extract {trace} -o {dir}/x.json --ports {secret.txt}", "line 1"),
    ("extract {trace} -o {dir}/x.json --port 99999=X", "is not a port mapping"),
    ("extract {secret.txt} -o {dir}/x.json", "secret.txt"),
    ("extract {trace} -o {dir}", "not a regular file"),
    ("extract {trace} -o ''", "an empty path"),
    ("nosuchcommand", "invalid choice"),
]


def expand(args: str, files: dict[str, str]) -> list[str]:
    out = []
    for word in args.split(" "):
        for name, path in files.items():
            word = word.replace("{" + name + "}", path)
        out.append("" if word == "''" else word)
    return out


@pytest.mark.parametrize("args,fragment", CASES, ids=[c[0] for c in CASES])
def test_a_bad_argument_or_file_gives_one_line_and_exit_2(files, args, fragment, tmp_path):
    r = cli(*expand(args, files), cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stderr)
    assert "Traceback" not in r.stderr and "panicked" not in r.stderr
    lines = r.stderr.strip().splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), r.stderr
    assert len(lines[0]) <= 610
    assert fragment in lines[0], f"{lines[0]!r} lacks {fragment!r}"
    # No file's contents in any message.
    assert "S3CRETHASH" not in r.stderr and "root:" not in r.stderr
    # Nothing was written where the command ran.
    assert not any(tmp_path.iterdir()), list(tmp_path.iterdir())


def test_every_subcommand_is_walked():
    from undertow.cli import parser

    commands = set(parser()._subparsers._group_actions[0].choices)
    walked = {c[0].split()[0] for c in CASES}
    assert commands <= walked, f"no bad-input case for {sorted(commands - walked)}"


def test_header_only_and_one_packet_traces_are_explained(files, tmp_path):
    for trace in ("header.pcap", "one.pcap"):
        model = tmp_path / f"{trace}.json"
        r = cli("extract", files[trace], "-o", str(model), "-q")
        assert r.returncode == 0, r.stderr
        r = cli("validate", str(model), "--trace", files[trace], "-o", str(tmp_path / f"v-{trace}"), "-q")
        assert r.returncode == 2 and "nothing to regenerate" in r.stderr and "Traceback" not in r.stderr, r.stderr
        assert not (tmp_path / f"v-{trace}").exists()
        r = cli("inspect", str(model))
        assert r.returncode == 0 and "0 packets" in r.stdout or "1 packets" in r.stdout, r.stdout
