"""Property tests of the two loaders, through the command line in-process:
a scenario or model file with values changed at random is either accepted
or refused with one line and exit status 2, never a traceback or a panic;
a model `inspect` accepts, `run` accepts and runs."""

from __future__ import annotations

import json
import math
import tempfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from conftest import cli, traces_dir
from undertow.cli import main

# Values that have broken loaders: out of range, of the wrong type, paths.
ODD = ["1e30Mbps", "1e-30bps", "1e-30s", "100000h", "1e30B", "0", "-1", "nan", "66%", "101%", "../x", "/dev/zero", "",
       "1000000000", "auto", "cubic", "udp", "sessions", "1p", "0p"]
VALUES = st.one_of(st.integers(-(2**70), 2**70), st.floats(allow_nan=False, allow_infinity=False, width=64), st.booleans(),
                   st.sampled_from(ODD), st.text(max_size=12))

SCENARIO = {
    "duration": "2s",
    "seed": 1,
    "topology": {"bottleneck": {"rate": "15Mbps", "delay": "20ms", "queue": "100p"}, "access": {"rate": "1Gbps"}},
    "tcp": {"congestion_control": "reno", "mss": "1460B", "initial_cwnd": 10},
    "apps": [{"kind": "http", "object_size": "100KB", "clients": 2, "port": 80}],
    "background": [{"model": "cbr", "transport": "udp", "rate": "10%", "hosts": 2, "packet_size": "1000B"}],
    "output": {"series_bin": "1ms", "pcap": False},
}
# Each field, with values that are often fine for it, so that accepted
# scenarios are explored too.
FIELDS = {
    ("duration",): ["3s", "100ms", "1h"],
    ("seed",): [0, 7, 2**63],
    ("topology", "bottleneck", "rate"): ["10Mbps", "1Gbps", "64kbps"],
    ("topology", "bottleneck", "delay"): ["0s", "5ms", "1s"],
    ("topology", "bottleneck", "queue"): ["10p", "64KB", 1000],
    ("topology", "bottleneck", "loss"): ["0%", "1%", "50%"],
    ("topology", "access", "rate"): ["100Mbps", "1Mbps"],
    ("tcp", "congestion_control"): ["newreno", "cubic", "tahoe"],
    ("tcp", "mss"): ["536B", 1460, "9000B"],
    ("tcp", "initial_cwnd"): [1, 4, 1000],
    ("tcp", "rcv_buf"): ["64KB", "4MiB"],
    ("tcp", "min_rto"): ["200ms", "1s"],
    ("apps", 0, "object_size"): ["1B", "1MB", 1],
    ("apps", 0, "clients"): [1, 10],
    ("apps", 0, "port"): [8080, 1],
    ("apps", 0, "kind"): ["http"],
    ("background", 0, "model"): ["poisson", "greedy"],
    ("background", 0, "rate"): ["1Mbps", "90%"],
    ("background", 0, "hosts"): [1, 50],
    ("background", 0, "transport"): ["tcp", "udp"],
    ("background", 0, "packet_size"): ["100B", "1500B"],
    ("background", 0, "stop"): ["1s", "2s"],
    ("output", "series_bin"): ["10ms", "1s", "1us"],
    ("output", "pcap_snaplen"): ["128B", 40],
    ("output", "pcap_from"): ["1s", "0s"],
}
EDIT = st.sampled_from(sorted(FIELDS, key=str)).flatmap(lambda f: st.tuples(st.just(f), st.one_of(st.sampled_from(FIELDS[f]), VALUES)))


def toml_value(v) -> str:
    if isinstance(v, bool):
        return "true" if v else "false"
    if isinstance(v, float):
        return repr(v) if math.isfinite(v) else "nan"
    if isinstance(v, int):
        return str(v)
    return json.dumps(v)


def to_toml(d: dict) -> str:
    """Enough TOML for SCENARIO's shape: scalars, tables, arrays of tables."""
    out, tables = [], []
    for k, v in d.items():
        if isinstance(v, dict):
            tables.append(([k], v))
        elif isinstance(v, list):
            tables += [([k], item, True) for item in v]
        else:
            out.append(f"{k} = {toml_value(v)}")
    for t in tables:
        name, body = ".".join(t[0]), t[1]
        out.append(f"[[{name}]]" if len(t) == 3 else f"[{name}]")
        for k, v in body.items():
            if isinstance(v, dict):
                out.append(f"{k} = {{ " + ", ".join(f"{a} = {toml_value(b)}" for a, b in v.items()) + " }")
            else:
                out.append(f"{k} = {toml_value(v)}")
    return "\n".join(out) + "\n"


def set_path(d, path, value):
    for k in path[:-1]:
        d = d[k]
    d[path[-1]] = value


def one_line_or_nothing(code: int, err: str) -> None:
    assert code in (0, 2), (code, err)
    assert "Traceback" not in err and "panicked" not in err
    if code == 2:
        lines = err.strip().splitlines()
        assert len(lines) == 1 and lines[0].startswith("error: "), err


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=st.lists(EDIT, min_size=1, max_size=3))
def test_a_scenario_with_values_changed_at_random_loads_or_is_refused_in_one_line(capsys, edits):
    s = json.loads(json.dumps(SCENARIO))
    for path, value in edits:
        set_path(s, path, value)
    with tempfile.TemporaryDirectory() as d:
        p = Path(d) / "s.toml"
        p.write_text(to_toml(s))
        code = main(["check", str(p)])
    event("accepted" if code == 0 else "refused")
    one_line_or_nothing(code, capsys.readouterr().err)


@pytest.fixture(scope="module")
def model_text(tmp_path_factory) -> str:
    p = tmp_path_factory.mktemp("model") / "m.json"
    assert cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(p), "-q").returncode == 0
    return p.read_text()


def leaves(x, path=()):
    """Every (path, value) of numbers and strings in a JSON value."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield from leaves(v, path + (k,))
    elif isinstance(x, list):
        for i, v in enumerate(x):
            yield from leaves(v, path + (i,))
    else:
        yield path, x


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(data=st.data())
def test_a_model_with_values_changed_at_random_is_refused_in_one_line_or_runs(capsys, model_text, data):
    m = json.loads(model_text)
    paths = [p for p, v in leaves(m) if not isinstance(v, bool) and p[0] != "format"]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        set_path(m, path, data.draw(st.one_of(VALUES, st.floats(0, 1e4), st.floats(-1e6, 1e6), st.integers(0, 100))))
    with tempfile.TemporaryDirectory() as d:
        mp = Path(d) / "m.json"
        mp.write_text(json.dumps(m))
        code = main(["inspect", str(mp)])
        event("accepted" if code == 0 else "refused")
        err = capsys.readouterr().err
        one_line_or_nothing(code, err)
        # What inspect accepts, a scenario accepts and runs; what it refuses, a scenario refuses.
        sp = Path(d) / "s.toml"
        sp.write_text('duration = "2s"\n[topology.bottleneck]\nrate = "100Mbps"\ndelay = "1ms"\n'
                      '[[background]]\nmodel = "swing"\nfile = "m.json"\n')
        run = main(["run", str(sp), "-o", str(Path(d) / "out"), "-q"])
        run_err = capsys.readouterr().err
        one_line_or_nothing(run, run_err)
        assert (run == 0) == (code == 0), (err, run_err)


def test_a_model_naming_billions_of_servers_a_session_runs_in_bounded_memory(model_text, tmp_path):
    # A count of servers past the side's hosts draws among them; the
    # session does not keep one entry per index named.
    m = json.loads(model_text)
    for c in m["classes"]:
        c["servers_per_session"]["values"] = [3.2e16] * len(c["servers_per_session"]["values"])
    (tmp_path / "m.json").write_text(json.dumps(m))
    (tmp_path / "s.toml").write_text('duration = "2s"\n[topology.bottleneck]\nrate = "100Mbps"\ndelay = "1ms"\n'
                                     '[[background]]\nmodel = "swing"\nfile = "m.json"\n')
    r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
