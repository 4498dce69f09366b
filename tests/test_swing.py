"""Swing models from the command line: extract, inspect, energy, validate."""

from __future__ import annotations

import json
import os
import shutil
import subprocess

import numpy as np
import pytest

from conftest import UNDERTOW, cli, traces_dir

PCAPS = [
    "caida-nyc-2018.pcapng", "auckland-atm-2000.pcap", "web-ynet-2013.pcap", "web-espn-2010.pcapng",
    "web-reddit-tls.pcap", "app-alexa.pcapng", "video-netflix.pcap", "http-bro-org.pcap", "tls-firefox.pcap",
    "quic-firefox-google.pcap", "dns-recursive.pcapng",
]


@pytest.mark.parametrize("name", PCAPS)
def test_every_shared_trace_extracts_and_inspects(tmp_path, name):
    out = tmp_path / "m.json"
    r = cli("extract", str(traces_dir() / name), "-o", str(out))
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    assert m["format"] == "undertow.swing-model/2"
    assert m["traces"][0]["packets"] > 0
    link = m["link"]["dirs"]
    assert sum(d["bytes"] for d in link) > 0
    r = cli("inspect", str(out))
    assert r.returncode == 0, r.stderr
    assert "application mix" in r.stdout and "host network parameters" in r.stdout
    # The one-direction traces show no host's handshakes whole.
    if name in ("caida-nyc-2018.pcapng", "auckland-atm-2000.pcap"):
        assert "\ncapture point: unknown (too few handshakes seen whole)" in r.stdout


@pytest.mark.parametrize("name", ["bc-paug89-100k.tl", "tmix-unc-sample-orig.cvec", "README.md"])
def test_non_traces_are_refused_with_the_header_error(tmp_path, name):
    r = cli("extract", str(traces_dir() / name), "-o", str(tmp_path / "m.json"))
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert f"{name}: offset 0: not a pcap or pcapng file" in r.stderr
    assert not (tmp_path / "m.json").exists()


@pytest.mark.parametrize("args,wants", [
    (["--port", "80"], "--port: '80' is not a port mapping"),
    (["--side-a-prefix", "10.0.0/8"], '"10.0.0" is not an IPv4 or IPv6 address'),
    (["--rre-gap", "soon"], '"soon" is not a valid duration'),
    (["--session-key", "user"], "invalid choice: 'user'"),
])
def test_bad_extract_options(tmp_path, args, wants):
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(tmp_path / "m.json"), *args)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert wants in r.stderr, r.stderr


def test_options_reach_the_model(tmp_path):
    out = tmp_path / "m.json"
    r = cli("extract", str(traces_dir() / "web-ynet-2013.pcap"), "-o", str(out), "--session-key", "client-server",
            "--rre-gap", "500ms", "--port", "80=WEB", "--side-a-prefix", "10.0.0.6/32", "--capacity-percentile", "75")
    assert r.returncode == 0, r.stderr
    m = json.loads(out.read_text())
    o = m["options"]
    assert o["session_key"] == "client-server" and o["rre_gap_s"] == 0.5 and o["capacity_percentile"] == 75
    assert [80, "WEB"] in o["ports"]
    assert {c["name"] for c in m["classes"]} >= {"WEB"}
    assert [h["addr"] for h in m["hosts"] if h["side"] == "a"] == ["10.0.0.6"]
    assert o["pause_gap_s"] == 0.2, "the default"
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "--no-pause-gap")
    assert r.returncode == 0 and json.loads(out.read_text())["options"]["pause_gap_s"] is None, r.stderr
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "--pause-gap", "2s", "--no-pause-gap")
    assert r.returncode == 2 and "give --pause-gap or --no-pause-gap, not both" in r.stderr
    assert o["unit_gap_s"] == 0.001, "the default"
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "--unit-gap", "4ms")
    assert r.returncode == 0 and json.loads(out.read_text())["options"]["unit_gap_s"] == 0.004, r.stderr
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "--no-unit-gap")
    assert r.returncode == 0 and json.loads(out.read_text())["options"]["unit_gap_s"] is None, r.stderr
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "--unit-gap", "4ms", "--no-unit-gap")
    assert r.returncode == 2 and "give --unit-gap or --no-unit-gap, not both" in r.stderr



def test_rtt_percentile_option(tmp_path):
    # web-ynet-2013's main server: handshakes of about 17-23 ms when the
    # client's downlink was idle, about 100 ms under load.
    out = tmp_path / "m.json"
    trace = str(traces_dir() / "web-ynet-2013.pcap")
    main = lambda: next(h for h in json.loads(out.read_text())["hosts"] if h["addr"] == "212.199.202.9")
    r = cli("extract", trace, "-o", str(out))
    assert r.returncode == 0 and json.loads(out.read_text())["options"]["rtt_percentile"] == 10, r.stderr
    low = main()["rtt_s"]
    r = cli("extract", trace, "-o", str(out), "--rtt-percentile", "90")
    assert r.returncode == 0, r.stderr
    assert low < 0.02 < 0.05 < main()["rtt_s"]
    # Its 15 handshakes are enough alone; with its data samples pooled
    # (the paper's), the ACKs it held for its responses raise the 10th
    # percentile to 34 ms.
    assert main()["rtt_samples"] == 15
    r = cli("extract", trace, "-o", str(out), "--rtt-samples", "handshake-and-data")
    assert r.returncode == 0, r.stderr
    assert 0.03 < main()["rtt_s"] < 0.04 and main()["rtt_samples"] > 100
    r = cli("extract", trace, "-o", str(out), "--rtt-percentile", "101")
    assert r.returncode == 2 and "--rtt-percentile: '101' is not allowed: expected a number in [0, 100]" in r.stderr


def test_shaper_options(tmp_path):
    out = tmp_path / "m.json"
    trace = str(traces_dir() / "tls-firefox.pcap")
    shaped = lambda: [h["addr"] for h in json.loads(out.read_text())["hosts"] if h["shaper"]]
    r = cli("extract", trace, "-o", str(out))
    assert r.returncode == 0 and shaped() == ["178.62.197.130"], r.stderr
    r = cli("extract", trace, "-o", str(out), "--no-shaper")
    assert r.returncode == 0 and shaped() == [], r.stderr
    # Its 21 Mbit/s is 22% of its 97 Mbit/s capacity: under a fifth, no shaper.
    r = cli("extract", trace, "-o", str(out), "--shaper-fraction", "0.2")
    assert r.returncode == 0 and shaped() == [], r.stderr
    r = cli("extract", trace, "-o", str(out), "--shaper-fraction", "1.5")
    assert r.returncode == 2 and "--shaper-fraction: '1.5' is not allowed: expected a number in (0, 1]" in r.stderr
    assert "Traceback" not in r.stderr
    r = cli("extract", trace, "-o", str(out), "--shaper-fraction", "0.5", "--no-shaper")
    assert r.returncode == 2 and "give --shaper-fraction or --no-shaper, not both" in r.stderr


def test_inspect_refuses_other_json(tmp_path):
    p = tmp_path / "x.json"
    p.write_text('{"format": "something else"}')
    r = cli("inspect", str(p))
    assert r.returncode == 2 and 'format "something else" is not supported' in r.stderr


def test_inspect_into_a_closed_pipe_stops_quietly(tmp_path):
    # `undertow inspect m.json | head -1`: the reader is gone before the
    # summary is written (here, before the command starts).
    m = tmp_path / "m.json"
    assert cli("extract", str(traces_dir() / "web-ynet-2013.pcap"), "-o", str(m), "-q").returncode == 0
    r, w = os.pipe()
    os.close(r)
    try:
        p = subprocess.run([str(UNDERTOW), "inspect", str(m)], stdout=w, stderr=subprocess.PIPE, text=True, timeout=60)
    finally:
        os.close(w)
    assert p.returncode == 141 and p.stderr == "", p.stderr


def test_energy_of_a_trace_and_a_run(tmp_path):
    trace = traces_dir() / "web-ynet-2013.pcap"
    png = tmp_path / "e.png"
    r = cli("energy", str(trace), "--direction", "both", "--hurst", "2:8", "--plot", str(png))
    assert r.returncode == 0, r.stderr
    assert "web-ynet-2013.pcap fwd" in r.stdout and "H = " in r.stdout
    assert png.stat().st_size > 10_000
    r = cli("energy", str(traces_dir() / "bc-paug89-times.txt.xz"), "--what", "packets", "--bin", "10ms", "--hurst", "3:10")
    assert r.returncode == 0, r.stderr
    h = float(r.stdout.split("H = ")[1].split()[0])
    assert 0.75 <= h <= 0.90
    r = cli("energy", str(traces_dir() / "bc-paug89-times.txt.xz"))
    assert r.returncode == 2 and "use --what packets" in r.stderr


@pytest.fixture(scope="module")
def espn_validation(tmp_path_factory):
    d = tmp_path_factory.mktemp("val")
    trace = traces_dir() / "web-espn-2010.pcapng"
    r = cli("extract", str(trace), "-o", str(d / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("validate", str(d / "m.json"), "--trace", str(trace), "-o", str(d / "v"))
    assert r.returncode == 0, r.stderr
    return d, r.stdout


def test_validate_periods_shrink_for_long_traces():
    from undertow.validate import auto_periods

    assert [auto_periods(n) for n in (956, 31_249, 200_000, 250_000, 5_000_000)] == [10, 10, 10, 8, 1]
    # The emulator's periods last as long as the trace: two minutes' worth, warm-up included.
    assert [auto_periods(956, "emu", d) for d in (5.0, 15.6, 40.0, 60.0, 600.0)] == [10, 6, 2, 1, 1]


def test_validate_reports_every_figure(espn_validation):
    d, out = espn_validation
    for f in ["validation.json", "energy.png", "regenerated.json", "run/summary.json", "run/bottleneck.pcap"]:
        assert (d / "v" / f).exists(), f
    for words in ["rate A to B", "packets/s B to A", "application mix", "request size", "response size",
                  "connections per RRE", "host RTT", "server time", "wait before first request", "idle before close",
                  "log2 energy difference"]:
        assert words in out
    v = json.loads((d / "v" / "validation.json").read_text())
    c = v["comparison"]
    # The regenerated capture classifies like the trace: the same classes.
    assert {m["class"] for m in c["mix"] if m["original"] > 0} == {m["class"] for m in c["mix"] if m["regenerated"] > 0}
    # Sizes are drawn from the trace's values, so their distributions agree closely.
    assert c["request_bytes"]["distance"] <= 0.1 and c["response_bytes"]["distance"] <= 0.1
    # One page load of espn.com: the mean rate of both directions within 10%.
    assert abs(c["rate_bps"][0]["relative_error"]) <= 0.10
    assert abs(c["rate_bps"][1]["relative_error"]) <= 0.10
    assert v["energy_log2_difference"]["fwd"], "energy compared at some octaves"
    # Beside each difference, the trace's own estimate: fewer coefficients
    # and a wider interval at coarser octaves (espn's 256 ms: 4, ±2.3).
    rows = v["energy_log2_difference"]["fwd"]
    assert all(abs(abs(r["signed"]) - r["difference"]) < 1e-12 for r in rows)
    assert [r["n_trace"] for r in rows] == sorted((r["n_trace"] for r in rows), reverse=True)
    assert rows[0]["trace_ci_half"] < 0.2 < 2.0 < rows[-1]["trace_ci_half"] and rows[-1]["n_trace"] <= 8
    assert "trace's own 95% interval" in out
    assert "capture missed" not in out
    assert v["capture_loss"][1] < 0.01
    # espn's client answered each SYN/ACK within 0.08 ms: the capture was
    # taken on it, and validate says so.
    assert "\ncapture point: on host 172.16.0.122 (side A)" in out
    assert v["capture_point"].startswith("capture point: on host 172.16.0.122 (side A)")
    # Two of its servers' packets reached it one after the other at
    # 97.1 Mbit/s (the 100 Mbit/s link before it): a line, in both forms.
    assert [(x["side"], x["hosts"], round(x["rate_bps"] / 1e5) / 10) for x in v["lines"]["original"]] == [("b", 2, 97.1)]
    assert "\nshared lines: trace side B, 2 hosts at 97.1 Mbit/s; regenerated " in out
    # The targets are judged in the output and the file alike.
    t = v["targets"]
    assert "targets:" in out and "mean rate within 10% each way: met" in out
    assert t["rate"]["met"] and t["ks_sizes"]["met"]
    assert t["energy"]["met"] == (not t["energy"]["octaves_over"]["fwd"] and not t["energy"]["octaves_over"]["rev"])


def test_validate_replays_whole_sessions_of_a_few_users_and_draws_marginals_on_request(espn_validation):
    # espn's one page load: by default its session is replayed whole.
    d, out = espn_validation
    assert 'structure = "sessions"' in (d / "v" / "regenerate.toml").read_text()
    v = json.loads((d / "v" / "validation.json").read_text())
    assert v["structure"] == "sessions" and "1 TCP sessions, fewer than 30" in v["structure_reason"]
    assert out.startswith("sessions regenerated: sessions (auto: 1 TCP sessions")
    trace = traces_dir() / "web-espn-2010.pcapng"
    r = cli("validate", str(d / "m.json"), "--trace", str(trace), "-o", str(d / "s"), "--structure", "marginals", "--plot", str(d / "s.png"))
    assert r.returncode == 0, r.stderr
    scen = (d / "s" / "regenerate.toml").read_text()
    assert 'structure = "marginals"' in scen
    assert json.loads((d / "s" / "validation.json").read_text())["structure_reason"] == ""
    c = json.loads((d / "s" / "validation.json").read_text())["comparison"]
    assert c["request_bytes"]["distance"] <= 0.1 and c["response_bytes"]["distance"] <= 0.1
    assert abs(c["rate_bps"][0]["relative_error"]) <= 0.10
    assert abs(c["rate_bps"][1]["relative_error"]) <= 0.10


def test_validate_sees_a_lossy_capture_as_the_trace_did(tmp_path):
    # video-netflix's capture missed 46% of the payload its client
    # acknowledged. The model regenerates those bytes, so by default the
    # regenerated link's capture misses the same share of data segments;
    # --full-link compares the whole regenerated link instead.
    trace = traces_dir() / "video-netflix.pcap"
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("inspect", str(tmp_path / "m.json"))
    assert "capture loss:" in r.stdout
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--periods", "3")
    assert r.returncode == 0, r.stderr
    assert "note: the trace's capture missed 46.2% of the TCP payload B to A" in r.stdout
    v = json.loads((tmp_path / "v" / "validation.json").read_text())
    assert v["capture_loss"][0] == 0 and 0.45 < v["capture_loss"][1] < 0.47
    assert v["capture_miss"] == v["capture_loss"]
    assert 'pcap_miss_rev = "46.' in (tmp_path / "v" / "regenerate.toml").read_text()
    assert v["one_way_connections"] < 0.1 and "one direction only" not in r.stdout
    rev = v["comparison"]["rate_bps"][1]["relative_error"]
    assert abs(rev) < 0.15, rev
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "f"), "--periods", "3", "--full-link")
    assert r.returncode == 0, r.stderr
    assert "warning: the trace's capture missed 46.2% of the TCP payload B to A" in r.stdout
    f = json.loads((tmp_path / "f" / "validation.json").read_text())
    assert f["capture_miss"] == [0.0, 0.0] and "pcap_miss" not in (tmp_path / "f" / "regenerate.toml").read_text()
    # The whole link carried the bytes the capture missed: nearly twice its rate.
    assert f["comparison"]["rate_bps"][1]["relative_error"] > 0.6
    # The client held its ACKs of lone segments 105 ms (macOS's timer), and
    # its virtual host does too.
    client = lambda path: next(h for h in json.loads(path.read_text())["hosts"] if h["side"] == "a")
    assert 0.095 < client(tmp_path / "m.json")["ack_delay_s"] < 0.115
    assert abs(client(tmp_path / "v" / "regenerated.json")["ack_delay_s"] / client(tmp_path / "m.json")["ack_delay_s"] - 1) < 0.05


def trace_lasting(tmp_path, seconds: float):
    """tls-firefox.pcap with its last packet moved to `seconds` after its
    first (from 8.439822 s)."""
    b = bytearray((traces_dir() / "tls-firefox.pcap").read_bytes())
    at, last = 24, 24
    while at < len(b):
        last, at = at, at + 16 + int.from_bytes(b[at + 8:at + 12], "little")
    first_us = int.from_bytes(b[24:28], "little") * 1_000_000 + int.from_bytes(b[28:32], "little")
    s, us = divmod(first_us + round(seconds * 1e6), 1_000_000)
    b[last:last + 8] = s.to_bytes(4, "little") + us.to_bytes(4, "little")
    p = tmp_path / "t.pcap"
    p.write_bytes(b)
    return p


@pytest.mark.parametrize("periods,bin_", [(1, "1ms"), (3, "1ms"), (3, "2ms")])
def test_validate_compares_every_period_whole(tmp_path, periods, bin_):
    # A trace of 8.44025 s is 8441 bins of 1 ms, or 4221 of 2 ms: each
    # period's window of that many bins is compared, the last one too.
    trace = trace_lasting(tmp_path, 8.44025)
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "m.json").read_text())["link"]["duration_s"] == 8.44025
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--periods", str(periods),
            "--bin", bin_, "-q")
    assert r.returncode == 0, r.stderr
    assert json.loads((tmp_path / "v" / "validation.json").read_text())["energy_windows"] == periods


def test_validate_flags_one_direction_traces(tmp_path):
    # auckland-atm-2000 shows each TCP connection in one direction only.
    trace = traces_dir() / "auckland-atm-2000.pcap"
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--periods", "1")
    assert r.returncode == 0, r.stderr
    assert "connections in one direction only" in r.stdout
    assert json.loads((tmp_path / "v" / "validation.json").read_text())["one_way_connections"] > 0.9


# The realism table of docs/swing-model.md, with whole-session replay,
# asserted trace by trace (pytest -s prints the figures).
#: Every bidirectional trace meets the realism targets at seed 1: rate
#: within 10% both ways, request and response sizes within KS 0.1, energy
#: within 1.0 at every octave 2 ms-4 s where the trace meets it on every seed
#: 1-5; where it does not (a single coarse octave, resting on a few
#: coefficients of the trace: docs/corpus.md), the worst of seeds 1-5 rounded
#: up, as test_corpus.py bounds the tuned half, so that the miss cannot grow
#: unseen. video-netflix's capture missed 46% of its payload B to A, and its
#: regenerated capture as much; http-bro-org's server sits behind a NAT that
#: cut its segments in two.
#: name: (max energy A to B, B to A)
REALISM = {
    "web-ynet-2013.pcap": (1.2, 1.0),  # 1 s A to B: 11 coefficients, the trace's 95% interval ±1.26
    "web-espn-2010.pcapng": (1.0, 1.0),
    "web-reddit-tls.pcap": (1.0, 1.0),
    "app-alexa.pcapng": (1.0, 1.1),  # 2 ms B to A on one seed: the regenerated traffic the smoother there
    "video-netflix.pcap": (1.0, 1.0),
    "http-bro-org.pcap": (1.0, 1.0),
    "tls-firefox.pcap": (1.0, 1.0),
    "quic-firefox-google.pcap": (1.0, 1.0),
}


@pytest.mark.parametrize("name", sorted(REALISM))
def test_realism_table(tmp_path, name):
    trace = traces_dir() / name
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--structure", "sessions",
            "--plot", str(tmp_path / "e.png"))
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "v" / "validation.json").read_text())
    c = v["comparison"]
    rates = [c["rate_bps"][i]["relative_error"] for i in range(2)]
    energy = [max(d["difference"] for d in v["energy_log2_difference"][k]) for k in ("fwd", "rev")]
    print(f"{name}: rate {rates[0]:+.1%} / {rates[1]:+.1%}, max |log2 energy difference| {energy[0]:.2f} / {energy[1]:.2f}")
    # Sizes come from the trace's own values on every trace with TCP.
    for key in ("request_bytes", "response_bytes"):
        if c[key]["distance"] is not None:
            assert c[key]["distance"] <= 0.1, key
    # Every trace with TCP has sizes to compare (concurrent units included).
    assert (c["request_bytes"]["distance"] is not None) == (name != "quic-firefox-google.pcap")
    assert all(abs(x) <= 0.10 for x in rates), rates
    bound = REALISM[name]
    assert energy[0] <= bound[0] and energy[1] <= bound[1], energy
    # validate judges the energy target on the same figures, and every other target is met.
    targets = v["targets"]
    assert targets.pop("energy")["met"] == (max(energy) <= 1.0), energy
    assert all(t["met"] for t in targets.values()), targets
    # The regenerated hosts have the trace's RTTs (weighted by bytes).
    assert (c["rtt"]["distance"] is None) == (name == "quic-firefox-google.pcap")
    if c["rtt"]["distance"] is not None:
        assert c["rtt"]["distance"] <= 0.1, c["rtt"]
    if name == "web-reddit-tls.pcap":
        # An IPv6 trace regenerates IPv6 hosts, and re-extraction puts the
        # left ones back on side A.
        regen = json.loads((tmp_path / "v" / "regenerated.json").read_text())
        assert all(":" in h["addr"] for h in regen["hosts"])
        assert regen["sides"]["hosts_a"] >= 1 and regen["link"]["dirs"][0]["tcp_bytes"] > 0
    # Capture loss is flagged where it happened, and only there.
    assert (v["capture_loss"][1] > 0.4) == (name == "video-netflix.pcap")
    # The capture point: on the client where it answered every handshake
    # in microseconds, on a link where it answered from a Wi-Fi hop or
    # further, unknown with a handshake or none.
    m = json.loads((tmp_path / "m.json").read_text())
    on_host = {"web-ynet-2013.pcap": "10.0.0.6", "web-espn-2010.pcapng": "172.16.0.122", "http-bro-org.pcap": "10.0.2.15",
               "web-reddit-tls.pcap": "2a01:cb01:2049:8b07:991d:ec85:28df:f629"}
    kind = "on-host" if name in on_host else "link" if name in ("app-alexa.pcapng", "video-netflix.pcap") else "unknown"
    assert m["link"]["capture_point"] == kind
    assert [h["addr"] for h in m["hosts"] if h.get("at_capture")] == ([on_host[name]] if name in on_host else [])
    assert all(h["capacity_bps"] is None and h.get("bunched") is None for h in m["hosts"] if h.get("at_capture"))
    # Path stalls are found where the path stalled, and only there.
    stalls = json.loads((tmp_path / "m.json").read_text())["link"].get("stalls", [])
    assert bool(stalls) == (name == "app-alexa.pcapng"), stalls
    # So is the NAT that terminated http-bro-org's TCP (its ACKs in 0.3 ms
    # to a server 78-110 ms away).
    assert [h["addr"] for h in v["split_tcp_hosts"]] == (["192.150.187.43"] if name == "http-bro-org.pcap" else [])
    if name == "http-bro-org.pcap":
        # The NAT relayed the server's first flight of 10 segments as 14
        # pieces: the model keeps the server's 10.
        hosts = json.loads((tmp_path / "m.json").read_text())["hosts"]
        assert [h["initial_window"] for h in hosts if h["addr"] == "192.150.187.43"] == [10]


@pytest.mark.skipif(shutil.which("mergecap") is None or shutil.which("editcap") is None,
                    reason="mergecap/editcap are not installed (they come with tshark, which make test installs)")
def test_an_edge_with_natted_and_public_clients(tmp_path):
    # Two users on one link: web-espn-2010's NATed client (172.16.0.122)
    # and quic-firefox-google's client with a public address (1.2.3.4),
    # both shifted to start together. The public client talks to no
    # private host, so it is side A by what it initiates; before, it was
    # put with the servers and its QUIC download regenerated the wrong way.
    parts = []
    for i, name in enumerate(("web-espn-2010.pcapng", "quic-firefox-google.pcap")):
        info = subprocess.run(["capinfos", "-a", "-S", "-T", "-r", str(traces_dir() / name)],
                              capture_output=True, text=True, check=True).stdout.strip().splitlines()[-1]
        start = float(info.split("\t")[1])
        part = tmp_path / f"p{i}.pcap"
        subprocess.run(["editcap", "-F", "pcap", "-t", f"{1_600_000_000 - start:.6f}", str(traces_dir() / name), str(part)],
                       check=True, capture_output=True)
        parts.append(str(part))
    trace = tmp_path / "edge.pcap"
    subprocess.run(["mergecap", "-F", "pcap", "-w", str(trace), *parts], check=True, capture_output=True)
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    side = {h["addr"]: h["side"] for h in m["hosts"]}
    assert (side["172.16.0.122"], side["1.2.3.4"], side["4.3.2.1"], side["205.234.218.129"]) == ("a", "b", "b", "b")[:1] + ("a", "b", "b")
    assert "1 public host that never talks to a private one" in m["sides"]["decided_by"]
    assert {u["name"]: u["initiators"] for u in m["udp"]}["HTTPS"] == "a"
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--structure", "sessions", "-q")
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "v" / "validation.json").read_text())
    rates = [v["comparison"]["rate_bps"][i]["relative_error"] for i in range(2)]
    assert all(abs(x) <= 0.10 for x in rates), rates
    assert v["targets"]["energy"]["met"], v["targets"]["energy"]


def test_extract_to_an_unwritable_place_names_it(tmp_path):
    out = tmp_path / "missing" / "m.json"
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(out), "-q")
    assert r.returncode != 0 and "Traceback" not in r.stderr
    assert f"{out}: cannot write" in r.stderr and len(r.stderr.strip().splitlines()) == 1
    # A model written whole replaces the old file; no partial file is left.
    good = tmp_path / "m.json"
    good.write_text("old")
    r = cli("extract", str(traces_dir() / "http-bro-org.pcap"), "-o", str(good), "-q")
    assert r.returncode == 0 and json.loads(good.read_text())["format"].startswith("undertow.swing-model/")
    assert not list(tmp_path.glob("*.partial"))


def test_round_trip_on_a_population_trace(tmp_path):
    # A many-user trace: web-ynet-2013's model regenerated with 100 hosts a
    # side and 20 times its sessions over a shared 100 Mbit/s link, captured
    # after 15 s so that, like a real trace, it begins with sessions under
    # way; then extracted and validated like any trace. Every realism target
    # holds.
    r = cli("extract", str(traces_dir() / "web-ynet-2013.pcap"), "-o", str(tmp_path / "ynet.json"), "-q")
    assert r.returncode == 0, r.stderr
    (tmp_path / "gen.toml").write_text(f"""name = "population"
duration = "75s"
seed = 7
[topology.bottleneck]
rate = "100Mbps"
delay = "5ms"
queue = "200p"
[[background]]
model = "swing"
name = "swing"
file = {json.dumps(str(tmp_path / "ynet.json"))}
session_scale = 20.0
hosts = 100
[output]
pcap = true
pcap_snaplen = "128B"
pcap_from = "15s"
""")
    r = cli("run", str(tmp_path / "gen.toml"), "-o", str(tmp_path / "trace"), "-q")
    assert r.returncode == 0, r.stderr
    trace = tmp_path / "trace" / "bottleneck.pcap"
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    assert m["sides"]["hosts_a"] > 50 and m["link"]["dirs"][1]["packets"] > 50_000
    # The capture was taken where the 100 Mbit/s link delivers: its
    # servers' packets crossed it one after the other, as a line's. A
    # server behind a slow access link of its own (the trace has some near
    # 15 Mbit/s) meets the others back to back less often and may fall
    # short of the evidence a member needs, so nearly all, not all.
    assert [(x["side"], round(x["rate_bps"] / 1e6)) for x in m["lines"]] == [("b", 100)], m["lines"]
    assert len(m["lines"][0]["hosts"]) >= 95, m["lines"]
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"))
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "v" / "validation.json").read_text())
    energy = [d["difference"] for k in ("fwd", "rev") for d in v["energy_log2_difference"][k]]
    print(f"population: rate {[c['relative_error'] for c in v['comparison']['rate_bps']]}, max energy {max(energy):.2f}")
    assert all(t["met"] for t in v["targets"].values()), v["targets"]
    assert len(energy) >= 20, "octaves 2 ms to 4 s both ways"
    # Hundreds of sessions: Swing's marginals, by default.
    assert v["structure"] == "marginals" and "at least 30" in v["structure_reason"]
    # One period, as for a trace of millions of packets: the warm-up period
    # brings in the sessions a trace starts with, so the rate holds.
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v1"), "--periods", "1", "-q")
    assert r.returncode == 0, r.stderr
    v = json.loads((tmp_path / "v1" / "validation.json").read_text())
    assert v["targets"]["rate"]["met"], v["comparison"]["rate_bps"]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
@pytest.mark.parametrize("name", ["web-ynet-2013.pcap", "web-espn-2010.pcapng"])
def test_a_linux_client_holds_its_acks_for_linux_s_40_ms(tmp_path, name):
    # Both clients held an ACK of a lone segment for about Linux's
    # delayed-ACK floor, 40 ms (measured: 39.0 and 38.2 ms).
    r = cli("extract", str(traces_dir() / name), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    client = next(h for h in json.loads((tmp_path / "m.json").read_text())["hosts"] if h["side"] == "a")
    assert 0.035 < client["ack_delay_s"] < 0.042, client["ack_delay_s"]


def test_server_times_and_first_request_waits_agree_with_tshark(tmp_path):
    # Measured independently from tshark's packet list, on the HTTP
    # connections: the first client data after the handshake's ACK, and
    # every turn from the client's data to the server's, less the
    # connection's SYN to SYN/ACK.
    trace = traces_dir() / "web-ynet-2013.pcap"
    rows = subprocess.run(["tshark", "-r", str(trace), "-Y", "tcp.port == 80", "-T", "fields", "-e", "frame.time_epoch",
                           "-e", "tcp.stream", "-e", "tcp.srcport", "-e", "tcp.len", "-e", "tcp.flags.syn", "-e", "tcp.flags.ack"],
                          capture_output=True, text=True, check=True).stdout.splitlines()
    streams: dict[str, list] = {}
    for line in rows:
        t, s, port, n, syn, ack = line.split("\t")
        streams.setdefault(s, []).append((float(t), port, int(n or 0), syn == "1", ack == "1"))
    waits, servers = [], []
    for pkts in streams.values():
        syn = [p for p in pkts if p[3] and not p[4]]
        synack = [p for p in pkts if p[3] and p[4]]
        if len(syn) != 1 or len(synack) != 1:
            continue
        client, rtt = syn[0][1], synack[0][0] - syn[0][0]
        hs_ack = next((p for p in pkts if p[1] == client and not p[3] and p[0] >= synack[0][0]), None)
        data = [p for p in pkts if p[2] > 0]
        if hs_ack and data and data[0][1] == client:
            waits.append(data[0][0] - hs_ack[0])
        servers += [max(b[0] - a[0] - rtt, 0.0) for a, b in zip(data, data[1:]) if a[1] == client and b[1] != client]
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    m = json.loads((tmp_path / "m.json").read_text())
    http = [c for c in m["classes"] if c["name"] == "HTTP"]

    def ours(key):
        return np.sort(np.concatenate([c[key]["values"] for c in http]))

    def unmatched(a, b):
        # Values of `a` with no value of `b` within 0.1 ms (tshark prints
        # microseconds as a float).
        b = np.sort(b)
        i = np.clip(np.searchsorted(b, a), 1, len(b) - 1)
        return [x for x, j in zip(a, i) if min(abs(x - b[j - 1]), abs(x - b[j])) > 1e-4]

    # Every wait of ours is one of tshark's; ours miss one (a connection
    # whose first data the model counts elsewhere).
    w = ours("connect_wait_s")
    assert not unmatched(w, waits) and len(waits) - 2 <= len(w) <= len(waits)
    # Every server time of ours is one of tshark's; ours leave out requests
    # retransmitted before their response and turns inside concurrent
    # connections.
    srv = ours("server_s")
    assert not unmatched(srv, servers) and 0.85 * len(servers) <= len(srv) <= len(servers), (len(srv), len(servers))
    # A browser's preconnects wait for the page: the slowest tenth over
    # 0.2 s; the servers took a median of 20-40 ms beyond the round trip.
    assert np.percentile(w, 90) > 0.2 and 0.02 < np.median(srv) < 0.04


def test_handshake_loss_agrees_with_tshark(tmp_path):
    # app-alexa's phone lost a quarter of its data segments beyond the
    # capture but few SYNs: per client, its completed handshakes and the
    # SYNs it sent again, counted from tshark's packet list.
    trace = traces_dir() / "app-alexa.pcapng"
    rows = subprocess.run(["tshark", "-r", str(trace), "-Y", "tcp.flags.syn == 1", "-T", "fields", "-e", "tcp.stream",
                           "-e", "ip.src", "-e", "tcp.flags.ack"], capture_output=True, text=True, check=True).stdout.splitlines()
    streams: dict[str, list] = {}
    for line in rows:
        s, src, ack = line.split("\t")
        streams.setdefault(s, []).append((src, ack == "1"))
    tshark: dict[str, list] = {}
    for pkts in streams.values():
        syns = [p for p in pkts if not p[1]]
        if syns and any(p[1] for p in pkts):
            n = tshark.setdefault(syns[0][0], [0, 0])
            n[0] += 1
            n[1] += len(syns) - 1
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    hosts = {h["addr"]: h for h in json.loads((tmp_path / "m.json").read_text())["hosts"]}
    phone = hosts["172.16.42.216"]
    assert [phone["handshakes"], phone["handshake_retx"]] == tshark["172.16.42.216"]
    assert phone["handshakes"] >= 100 and phone["handshake_retx"] / phone["handshakes"] < 0.1 < phone["loss"]
    r = cli("inspect", str(tmp_path / "m.json"))
    row = next(line for line in r.stdout.splitlines() if line.startswith("A") and "handshake loss %" in line)
    assert row.split()[4:7] == ["%.3g" % (100 * phone["handshake_retx"] / phone["handshakes"])] * 3, row


def test_a_stall_of_app_alexa_agrees_with_tshark(tmp_path):
    # The phone's SYNs of 66.65-66.9 s, each sent once, were all answered
    # within a ms of 67.51 s: its path held them. (Those of 66.41 and
    # 66.43 s were sent again at 67.40 and 67.44 s: their answers may be to
    # the copies, as after a loss, so they are no evidence.) Extraction
    # finds the stall from the release; tshark's packet list shows the same
    # SYN/ACKs.
    trace = traces_dir() / "app-alexa.pcapng"
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    stalls = json.loads((tmp_path / "m.json").read_text())["link"]["stalls"]
    big = [s for s in stalls if s["start_s"] < 66.7 < 67.4 < s["end_s"]]
    assert len(big) == 1 and big[0]["side"] == "b" and big[0]["answers"] >= 4, stalls
    rows = subprocess.run(["tshark", "-r", str(trace), "-Y", "tcp.flags.syn == 1", "-T", "fields", "-e", "frame.time_relative",
                           "-e", "tcp.stream", "-e", "tcp.flags.ack"], capture_output=True, text=True, check=True).stdout.splitlines()
    syn, synack = {}, {}
    for line in rows:
        t, s, ack = line.split("\t")
        (synack if ack == "1" else syn).setdefault(s, float(t))
    held = [s for s in synack if s in syn and 66.6 < syn[s] < 66.95 and synack[s] - syn[s] > 0.5]
    assert len(held) >= 4
    released = sorted(synack[s] for s in held)
    assert released[-1] - released[0] < 0.01 and big[0]["end_s"] < released[0] < big[0]["end_s"] + 0.2
    # Every stall is on the servers' side and lasted from 0.3 s to 1.5 s.
    assert all(s["side"] == "b" and 0.3 < s["end_s"] - s["start_s"] < 1.5 for s in stalls), stalls
    r = cli("inspect", str(tmp_path / "m.json"))
    assert f"path stalls on side B: {len(stalls)}," in r.stdout
