"""Shared lines against a ground truth made in the simulator: hosts behind a
line of known rate, and hosts each on a line of its own with the same
traffic, captured at the bottleneck and extracted (docs/swing-model.md,
"Shared lines")."""

from __future__ import annotations

import json

import pytest

from conftest import cli

LINE_BPS = 8e6
#: The rate is found within this (the capture's microsecond clock and one
#: packet's framing: exact in the simulator, which serialises IP bytes).
RATE_TOLERANCE = 0.03


def group(name: str, model: str, shared: bool) -> str:
    """Four source hosts on the left sending to four sinks: behind one
    8 Mbit/s line (100 Mbit/s access links of their own), or each on an
    8 Mbit/s access link of its own."""
    traffic = ('load = "5Mbps"\nlognormal = { median = "20KB", sigma = 1.5 }\n' if model == "web" else 'spread = "5s"\n')
    net = ('access = { rate = "100Mbps", delay = "5ms" }\nline = { rate = "8Mbps", queue = "60p" }\n' if shared
           else 'access = { rate = "8Mbps", delay = "5ms", queue = "60p" }\n')
    return f'[[background]]\nmodel = "{model}"\nname = "{name}"\nhosts = 4\n{traffic}{net}'


def capture(tmp_path, groups: list[str], name: str = "gt") -> dict:
    """Runs the groups for 30 s through a 1 Gbit/s bottleneck, captured,
    and extracts the capture: the model, with its trace's path."""
    (tmp_path / f"{name}.toml").write_text('duration = "30s"\nseed = 1\n[topology.bottleneck]\nrate = "1Gbps"\ndelay = "5ms"\n'
                                           'queue = "1000p"\n' + "".join(groups) + "[output]\npcap = true\n")
    r = cli("run", str(tmp_path / f"{name}.toml"), "-o", str(tmp_path / name), "-q")
    assert r.returncode == 0, r.stderr
    trace = tmp_path / name / "bottleneck.pcap"
    r = cli("extract", str(trace), "-o", str(tmp_path / f"{name}.json"), "-q")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / f"{name}.json").read_text())
    m["_trace"] = trace
    return m


#: The first group's sources are the first four left hosts, the second's the next.
SHARED = ["10.1.0.1", "10.1.0.2", "10.1.0.3", "10.1.0.4"]


@pytest.fixture(scope="module")
def mixed(tmp_path_factory):
    """Web flows from four hosts behind a line and four on their own."""
    d = tmp_path_factory.mktemp("mixed")
    return d, capture(d, [group("shared", "web", True), group("apart", "web", False)])


def test_the_hosts_behind_a_line_are_found_at_its_rate_and_the_others_are_not(mixed):
    _, m = mixed
    assert m["options"]["lines"]
    assert len(m["lines"]) == 1, m["lines"]
    ln = m["lines"][0]
    assert ln["side"] == "a" and sorted(ln["hosts"]) == SHARED
    assert abs(ln["rate_bps"] / LINE_BPS - 1) <= RATE_TOLERANCE, ln
    assert ln["back_to_back"] >= 100 and ln["faster"] == 0, ln
    # Seen from the other side of the capture, the same hosts are side B,
    # and so is their line.
    r = cli("extract", str(m["_trace"]), "-o", str(mixed[0] / "swapped.json"), "-q", "--side-a-prefix", "10.2.0.0/16")
    assert r.returncode == 0, r.stderr
    lines = json.loads((mixed[0] / "swapped.json").read_text())["lines"]
    assert [(x["side"], sorted(x["hosts"])) for x in lines] == [("b", SHARED)]
    # inspect shows it; --no-lines looks for none.
    r = cli("inspect", str(mixed[0] / "gt.json"))
    assert "shared lines: 1\n  line 0: side A, 4 hosts" in r.stdout and "at 8 Mbit/s towards the capture" in r.stdout
    r = cli("extract", str(m["_trace"]), "-o", str(mixed[0] / "none.json"), "-q", "--no-lines")
    assert r.returncode == 0, r.stderr
    none = json.loads((mixed[0] / "none.json").read_text())
    assert none["lines"] == [] and not none["options"]["lines"]
    assert "shared lines: not looked for" in cli("inspect", str(mixed[0] / "none.json")).stdout


@pytest.mark.parametrize("model", ["web", "greedy"])
def test_hosts_each_on_a_line_of_their_own_share_none(tmp_path, model):
    # The same traffic, every host on its own line: none found. Greedy
    # flows on lines of one rate stay backlogged in a fixed phase to each
    # other, which their gaps alone cannot tell from a faster shared line.
    m = capture(tmp_path, [group("one", model, False), group("two", model, False)])
    assert m["lines"] == []
    assert "shared lines: none" in cli("inspect", str(tmp_path / "gt.json")).stdout


def test_backlogged_hosts_behind_one_line_are_found(tmp_path):
    m = capture(tmp_path, [group("shared", "greedy", True), group("apart", "greedy", False)])
    assert [sorted(x["hosts"]) for x in m["lines"]] == [SHARED]
    assert abs(m["lines"][0]["rate_bps"] / LINE_BPS - 1) <= RATE_TOLERANCE


def test_the_regenerated_capture_shows_the_line_again(mixed):
    d, m = mixed
    out, text = {}, {}
    for flag in ("", "--no-lines"):
        model = d / f"m{flag}.json"
        r = cli("extract", str(m["_trace"]), "-o", str(model), "-q", *([flag] if flag else []))
        assert r.returncode == 0, r.stderr
        r = cli("validate", str(model), "--trace", str(m["_trace"]), "-o", str(d / f"v{flag}"), "--structure", "marginals")
        assert r.returncode == 0, r.stderr
        out[flag] = json.loads((d / f"v{flag}" / "validation.json").read_text())
        text[flag] = r.stdout
    v = out[""]
    assert "shared lines: trace side A, 4 hosts at 8 Mbit/s; regenerated side A, " in text[""], text[""]
    assert "shared lines: trace none; regenerated none" in text["--no-lines"]
    assert len(v["lines"]["original"]) == 1 and len(v["lines"]["regenerated"]) == 1, v["lines"]
    again = v["lines"]["regenerated"][0]
    assert again["side"] == "a" and again["hosts"] >= 2 and again["faster"] == 0, again
    assert abs(again["rate_bps"] / LINE_BPS - 1) <= RATE_TOLERANCE, again
    assert out["--no-lines"]["lines"] == {"original": [], "regenerated": []}
    # What the line does to the traffic: the hosts' packets queue behind
    # each other at 8 Mbit/s, which sets the energy at 4-32 ms (octaves 2-5)
    # A to B. Regenerated with the line it is closer to the trace there.
    fine = {k: max(x["difference"] for x in o["energy_log2_difference"]["fwd"] if 2 <= x["octave"] <= 5) for k, o in out.items()}
    print(f"max |log2 energy difference| A to B at 4-32 ms: with the line {fine['']:.2f}, without {fine['--no-lines']:.2f}")
    assert fine[""] < fine["--no-lines"]
