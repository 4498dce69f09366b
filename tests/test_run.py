"""Run directories: what they hold, that it agrees with itself, and determinism."""

from __future__ import annotations

import json
import shutil
import subprocess

import numpy as np
import pyarrow.parquet as pq
import pytest

from conftest import BASE, cli
from undertow import _core

SCENARIO = BASE.format(duration="20s", seed=5) + """
[[apps]]
kind = "http"
name = "web"
object_size = "300KB"
start = "1s"
[[background]]
model = "poisson"
transport = "udp"
rate = "40%"
hosts = 4
[output]
pcap = true
"""


@pytest.fixture(scope="module")
def rundir(tmp_path_factory):
    d = tmp_path_factory.mktemp("run")
    (d / "s.toml").write_text(SCENARIO)
    r = cli("run", str(d / "s.toml"), "-o", str(d / "out"))
    assert r.returncode == 0, r.stderr
    return d / "out"


def test_run_directory_layout(rundir):
    for f in ["scenario.toml", "summary.json", "timing.json", "records/web.parquet", "records/connections.parquet",
              "series/bottleneck.parquet", "bottleneck.pcap"]:
        assert (rundir / f).is_file(), f


def test_summary_agrees_with_records(rundir):
    s = json.loads((rundir / "summary.json").read_text())
    assert s["format"] == "undertow.summary/1"
    web = s["apps"]["web"]
    t = pq.read_table(rundir / "records/web.parquet").to_pydict()
    d = np.array(t["download_time_s"])
    assert web["count"] == len(d) > 10
    assert np.allclose(d, np.array(t["end_s"]) - np.array(t["start_s"]))
    assert all(b == 300_000 for b in t["bytes"])
    for k, q in [("p5", 5), ("p50", 50), ("p90", 90), ("p95", 95)]:
        assert web[k] == pytest.approx(np.percentile(d, q), rel=1e-9)
    assert web["mean"] == pytest.approx(d.mean(), rel=1e-9)
    assert web["sd"] == pytest.approx(d.std(ddof=1), rel=1e-9)
    assert web["min"] == pytest.approx(d.min()) and web["max"] == pytest.approx(d.max())
    # A 300 KB object over what the background leaves of 15 Mbps takes at
    # least its transmission time plus a handshake.
    assert d.min() > 300_000 * 8 / 15e6 + 0.044


def test_series_agrees_with_link_totals(rundir):
    s = json.loads((rundir / "summary.json").read_text())
    t = pq.read_table(rundir / "series/bottleneck.parquet").to_pydict()
    assert len(t["t_s"]) == 20_000 and t["t_s"][1] == pytest.approx(0.001)
    for d in ("fwd", "rev"):
        link = s["links"][f"bottleneck_{d}"]
        assert sum(t[f"{d}_bytes"]) == link["bytes"]
        assert sum(t[f"{d}_packets"]) == link["packets"]
        assert sum(t[f"{d}_drops"]) == link["drops"]
        assert link["mean_rate_bps"] == pytest.approx(link["bytes"] * 8 / 20)
        assert max(t[f"{d}_queue_packets"]) == link["max_queue_packets"]
    # The forward queue fills at times and is mostly not empty.
    assert 0 < np.median(t["fwd_queue_packets"]) < max(t["fwd_queue_packets"])
    # 1 ms bins never carry more than the link can: 15 Mbps = 1875 B/ms (+1 packet straddling).
    assert max(t["fwd_bytes"]) <= 1875 + 1500
    # 40% Poisson plus the downloads keep the forward direction busy.
    assert 0.4 < s["links"]["bottleneck_fwd"]["utilization"] <= 1.0


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
def test_pcap_reads_in_tshark(rundir):
    s = json.loads((rundir / "summary.json").read_text())
    links = s["links"]
    out = subprocess.run(["tshark", "-r", str(rundir / "bottleneck.pcap"), "-T", "fields", "-e", "frame.len", "-e", "ip.src",
                          "-o", "ip.check_checksum:TRUE", "-e", "ip.checksum.status"],
                         capture_output=True, text=True, check=True).stdout.split("\n")
    rows = [line.split("\t") for line in out if line]
    assert len(rows) == links["bottleneck_fwd"]["packets"] + links["bottleneck_rev"]["packets"]
    fwd = [r for r in rows if r[1].startswith("10.1.")]
    assert len(fwd) == links["bottleneck_fwd"]["packets"]
    assert sum(int(r[0]) for r in fwd) == links["bottleneck_fwd"]["bytes"]
    assert {r[2] for r in rows} == {"1"}, "every IPv4 header checksum verifies"
    # tshark's TCP analysis sees the downloads as complete conversations.
    conv = subprocess.run(["tshark", "-r", str(rundir / "bottleneck.pcap"), "-q", "-z", "conv,tcp"],
                          capture_output=True, text=True, check=True).stdout
    n_conv = sum(1 for line in conv.splitlines() if ":80 " in line and "<->" in line)
    assert n_conv == s["apps"]["web"]["tcp"]["connections"] // 2


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
def test_the_segments_the_binding_lists_are_tsharks(rundir):
    # The benches and tests read captures through the wire layer's checked
    # reader (`_core.tcp_segments`), not a reader of their own.
    out = subprocess.run(["tshark", "-r", str(rundir / "bottleneck.pcap"), "-Y", "tcp", "-T", "fields", "-e", "frame.time_epoch",
                          "-e", "ip.src", "-e", "tcp.srcport", "-e", "ip.dst", "-e", "tcp.dstport", "-e", "tcp.seq_raw",
                          "-e", "tcp.len", "-e", "tcp.flags"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    theirs = [(float(t), s, int(sp), d, int(dp), int(q), int(n), int(f, 16)) for t, s, sp, d, dp, q, n, f in
              (line.split("\t") for line in out)]
    ours = _core.tcp_segments(str(rundir / "bottleneck.pcap"))
    assert len(ours) == len(theirs) > 1000
    assert [x[1:] for x in ours] == [x[1:] for x in theirs]
    assert max(abs(a[0] - b[0]) for a, b in zip(ours, theirs)) < 1e-6


def test_the_datagrams_the_binding_lists_are_tsharks(rundir):
    # `_core.udp_datagrams`, through the same reader, for the UDP background.
    out = subprocess.run(["tshark", "-r", str(rundir / "bottleneck.pcap"), "-Y", "udp", "-T", "fields", "-e", "frame.time_epoch",
                          "-e", "ip.src", "-e", "udp.srcport", "-e", "ip.dst", "-e", "udp.dstport", "-e", "udp.length"],
                         capture_output=True, text=True, check=True).stdout.splitlines()
    theirs = [(float(t), s, int(sp), d, int(dp), int(n) - 8) for t, s, sp, d, dp, n in (line.split("\t") for line in out)]
    ours = _core.udp_datagrams(str(rundir / "bottleneck.pcap"))
    assert len(ours) == len(theirs) > 1000
    assert [x[1:] for x in ours] == [x[1:] for x in theirs]
    assert max(abs(a[0] - b[0]) for a, b in zip(ours, theirs)) < 1e-6


def test_a_capture_from_a_time_holds_what_crossed_after_it(tmp_path, rundir):
    # The warm-up before `pcap_from` runs but is not written: the capture
    # holds exactly the packets the series counts from then on.
    (tmp_path / "s.toml").write_text(SCENARIO.replace("pcap = true", 'pcap = true\npcap_from = "12s"'))
    r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "late"), "-q")
    assert r.returncode == 0, r.stderr
    out = subprocess.run(["tshark", "-r", str(tmp_path / "late" / "bottleneck.pcap"), "-T", "fields", "-e", "frame.time_epoch"],
                         capture_output=True, text=True, check=True).stdout.split()
    times = np.array([float(x) for x in out])
    series = pq.read_table(tmp_path / "late" / "series" / "bottleneck.parquet").to_pydict()
    t = np.asarray(series["t_s"])
    after = sum(np.asarray(series[f"{d}_packets"])[t >= 12.0].sum() for d in ("fwd", "rev"))
    assert len(times) == after > 0
    assert times.min() >= 12.0
    # The run itself is the same as without the option: the series agrees.
    full = pq.read_table(rundir / "series" / "bottleneck.parquet").to_pydict()
    assert full["fwd_bytes"] == series["fwd_bytes"]


@pytest.mark.skipif(shutil.which("tshark") is None, reason="tshark is not installed (make test installs it)")
def test_a_lossy_capture_misses_its_share_of_data_segments(tmp_path, rundir):
    # A capture point that loses packets (to compare with a trace whose
    # capture did): a share of the TCP segments carrying data in one
    # direction is not written; ACKs, handshakes, UDP and the other
    # direction all are, and the same seed misses the same segments.
    def tcp_rows(d):
        out = subprocess.run(["tshark", "-r", str(d / "bottleneck.pcap"), "-T", "fields", "-e", "ip.src", "-e", "tcp.len",
                              "-e", "udp.length"], capture_output=True, text=True, check=True).stdout
        return [tuple(line.split("\t")) for line in out.splitlines()]

    full = tcp_rows(rundir)
    (tmp_path / "s.toml").write_text(SCENARIO.replace("pcap = true", 'pcap = true\npcap_miss_fwd = "30%"'))
    seen = []
    for k in range(2):
        r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / f"lossy{k}"), "-q")
        assert r.returncode == 0, r.stderr
        seen.append(tcp_rows(tmp_path / f"lossy{k}"))
    assert seen[0] == seen[1]
    # The server is on the left: its responses go forward (left to right),
    # where the capture loses.
    is_data = lambda r: r[1] not in ("", "0")
    fwd_data = lambda rows: [r for r in rows if is_data(r) and r[0].startswith("10.1.")]
    other = lambda rows: [r for r in rows if not (is_data(r) and r[0].startswith("10.1."))]
    assert other(seen[0]) == other(full)
    n_full, n_seen = len(fwd_data(full)), len(fwd_data(seen[0]))
    assert n_full > 1000
    assert 0.27 < 1 - n_seen / n_full < 0.33, (n_seen, n_full)
    # The run is the same: only the capture missed them.
    assert pq.read_table(tmp_path / "lossy0" / "series" / "bottleneck.parquet").to_pydict() == \
        pq.read_table(rundir / "series" / "bottleneck.parquet").to_pydict()


def test_a_capture_that_misses_everything_is_refused(tmp_path):
    (tmp_path / "s.toml").write_text(SCENARIO.replace("pcap = true", 'pcap = true\npcap_miss_fwd = "100%"'))
    r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "out"), "-q")
    assert r.returncode != 0
    assert "output.pcap_miss_fwd" in r.stderr and "less than 100%" in r.stderr and "Traceback" not in r.stderr


def _files(d):
    return {p.relative_to(d): p.read_bytes() for p in sorted(d.rglob("*")) if p.is_file() and p.name != "timing.json"}


def test_same_seed_same_bytes_other_seed_other_bytes(tmp_path, rundir):
    (tmp_path / "s.toml").write_text(SCENARIO)
    r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "again"), "-q")
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "again") == _files(rundir)
    r = cli("run", str(tmp_path / "s.toml"), "-o", str(tmp_path / "other"), "--seed", "6", "-q")
    assert r.returncode == 0, r.stderr
    other = _files(tmp_path / "other")
    for f in ["summary.json", "records/web.parquet", "series/bottleneck.parquet", "bottleneck.pcap"]:
        assert other[__import__("pathlib").Path(f)] != _files(rundir)[__import__("pathlib").Path(f)], f


def test_recorded_scenario_repeats_the_run(tmp_path, rundir):
    r = cli("run", str(rundir / "scenario.toml"), "-o", str(tmp_path / "rerun"), "-q")
    assert r.returncode == 0, r.stderr
    assert _files(tmp_path / "rerun") == _files(rundir)


def test_connections_records(rundir):
    t = pq.read_table(rundir / "records/connections.parquet").to_pydict()
    s = json.loads((rundir / "summary.json").read_text())
    web = [i for i, a in enumerate(t["app"]) if a == "web"]
    assert len(web) == s["apps"]["web"]["tcp"]["connections"]
    servers = [i for i in web if not t["active"][i]]
    # Every finished download's server sent the whole object.
    done = [i for i in servers if t["closed_s"][i] == t["closed_s"][i]]
    assert done and all(t["bytes_acked"][i] == 300_000 for i in done)
    assert all(t["bytes_received"][i] == 100 for i in done)


def test_the_simulator_refuses_a_command_app_and_says_to_use_the_emulator(tmp_path):
    scenario = tmp_path / "command.toml"
    scenario.write_text("""
duration = "1s"
[topology.bottleneck]
rate = "10Mbps"
delay = "10ms"
[[apps]]
kind = "command"
client_command = "true"
""")
    r = cli("run", str(scenario), "-o", str(tmp_path / "out"))
    assert r.returncode == 2
    assert "only the emulator runs them" in r.stderr and "--engine emu" in r.stderr
    assert not (tmp_path / "out").exists()
