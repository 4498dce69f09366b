"""The wider corpus of crates/testdata/corpus: its manifest, its split, and
the realism table of its tuned half (docs/corpus.md, "The wider corpus").
The held-out half's figures are reported in the docs only."""

from __future__ import annotations

import hashlib
import json

import pytest

from conftest import ROOT, cli

try:
    import tomllib
except ModuleNotFoundError:  # Python before 3.11
    import tomli as tomllib

CORPUS = ROOT / "crates" / "testdata" / "corpus"


def manifest() -> list[dict]:
    return tomllib.loads((CORPUS / "manifest.toml").read_text())["trace"]


def half(name: str) -> list[str]:
    return [t["name"] for t in manifest() if t["half"] == name]


def test_the_manifest_names_every_file_with_its_checksum_and_licence():
    traces = manifest()
    assert sorted(t["name"] for t in traces) == sorted(p.name for p in CORPUS.glob("*.pcap*"))
    assert len(traces) >= 10
    for t in traces:
        data = (CORPUS / t["name"]).read_bytes()
        assert hashlib.sha256(data).hexdigest() == t["sha256"] and len(data) == t["bytes"], t["name"]
        assert t["licence"] in ("LGPL-3.0-or-later", "BSD-3-Clause") and t["source"].startswith("https://github.com/")


def test_the_split_follows_the_rule_written_in_the_manifest():
    # Sorted by the SHA-256 of the name: the first half (rounded up) tuned.
    names = sorted((t["name"] for t in manifest()), key=lambda n: hashlib.sha256(n.encode()).hexdigest())
    n = (len(names) + 1) // 2
    assert {t["name"]: t["half"] for t in manifest()} == {x: "tuned" if i < n else "held-out" for i, x in enumerate(names)}


def realism(tmp_path, name: str, seed: int = 1) -> tuple[dict, dict]:
    trace = CORPUS / name
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"), "-q")
    assert r.returncode == 0, r.stderr
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--structure", "sessions",
            "--seed", str(seed))
    assert r.returncode == 0, r.stderr
    return json.loads((tmp_path / "m.json").read_text()), json.loads((tmp_path / "v" / "validation.json").read_text())


# The tuned half's realism table at seed 1 (docs/corpus.md has seeds
# 1-5 and both halves). Each bound is the target (rate within 10% each way,
# KS of sizes at most 0.1, log2 energy within 1.0 at every octave 2 ms-4 s)
# where the trace meets it on every seed 1-5; where it does not, the worst
# of seeds 1-5 rounded up, so that the miss the docs explain cannot grow
# unseen. With the capture point each trace's handshakes show (tshark:
# on-host clients answered every SYN/ACK within 0.22 ms; link clients from
# 0.8 ms on; the Zeek traces complete one handshake or none without a
# retransmission).
#: name: (capture point, |rate error| A to B, B to A, KS, max energy A to B, B to A)
TUNED = {
    "ndpi-teams.pcap": ("on-host", 0.10, 0.10, 0.1, 1.0, 1.0),
    "ndpi-starcraft_battle.pcap": ("on-host", 0.10, 0.10, 0.1, 1.0, 1.0),
    # Captured on a VPN client (10.8.0.1), which answered some handshakes
    # late but was sent segments its receive offload merged; servers 1-15
    # ms away; validate finds a TCP-splitting middlebox before two servers
    # with 62% of the bytes, whose bursts B to A the regenerated hosts do
    # not send.
    "ndpi-webex.pcap": ("on-host", 0.10, 0.10, 0.1, 1.0, 3.3),
    # A 206 kB upload in the trace's last 0.5 s, broken up where the
    # client's few random losses fall (docs/corpus.md).
    "ndpi-signal.pcap": ("link", 0.10, 0.10, 0.1, 3.4, 1.0),
    # On the same VPN client, and the same kind of middlebox before two
    # servers with 47% of the bytes.
    "ndpi-waze.pcap": ("on-host", 0.10, 0.10, 0.1, 1.4, 1.5),
    # Every frame of it was captured twice, 1-2 µs apart (78 of 158):
    # without the second copies its client is seen answering its
    # handshakes at the capture.
    "zeek-windowsupdate-cab.pcap": ("on-host", 0.10, 0.10, 0.1, 1.0, 1.0),
    # Two range requests, captured beside the server, its client 362 ms
    # away (docs/corpus.md).
    "zeek-206-example-a.pcap": ("unknown", 0.10, 0.10, 0.1, 1.9, 2.1),
}


def test_frames_the_capture_recorded_twice_are_dropped_and_reported(tmp_path):
    # zeek-windowsupdate-cab's capture holds every frame twice, 1-2 µs
    # apart, each copy with its datagram's identification.
    trace = CORPUS / "zeek-windowsupdate-cab.pcap"
    r = cli("extract", str(trace), "-o", str(tmp_path / "m.json"))
    assert r.returncode == 0, r.stderr
    assert "capture duplicates: 78 frames were recorded twice" in r.stdout
    m = json.loads((tmp_path / "m.json").read_text())
    assert (m["traces"][0]["packets"], m["traces"][0]["duplicates"]) == (158, 78)
    assert sum(d["packets"] for d in m["link"]["dirs"]) == 80
    # Without the copies every handshake is whole: none looks sent again,
    # and the client answered them at the capture.
    assert all(h["handshake_retx"] == 0 and h["rtt_s"] is not None for h in m["hosts"])
    assert m["link"]["capture_point"] == "on-host"
    assert "78 frames recorded twice (dropped)" in cli("inspect", str(tmp_path / "m.json")).stdout
    r = cli("validate", str(tmp_path / "m.json"), "--trace", str(trace), "-o", str(tmp_path / "v"), "--periods", "2")
    assert r.returncode == 0, r.stderr
    assert "capture duplicates: 78 frames" in r.stdout
    v = json.loads((tmp_path / "v" / "validation.json").read_text())
    assert v["capture_duplicates"] == 78
    # The trace's series leaves them out too: its rate is what crossed.
    assert abs(v["comparison"]["rate_bps"][1]["relative_error"]) < 0.1


def test_servers_that_each_sent_too_few_packet_pairs_measure_their_side_together(tmp_path):
    # ndpi-signal's servers answered in two segments of unequal sizes
    # (1440 and 1038 bytes, tens of microseconds apart): no server has
    # pairs enough of equal sizes for a capacity of its own, and their peak
    # rates over 10 ms (3-5 Mbit/s) say only that short answers never fill
    # such a window. Their pairs of any sizes, pooled, measure the side.
    trace = CORPUS / "ndpi-signal.pcap"
    model = tmp_path / "m.json"
    assert cli("extract", str(trace), "-o", str(model), "-q").returncode == 0
    m = json.loads(model.read_text())
    servers = [h for h in m["hosts"] if h["side"] == "b"]
    assert all(h["capacity_bps"] is None for h in servers)
    a, b = m["sides"]["pooled_capacity_bps"]
    assert a is None and 30e6 <= b <= 500e6, b
    busiest = max(servers, key=lambda h: h["bytes"])
    assert b > 10 * busiest["peak_rate_bps"], (b, busiest)
    assert "their pairs pooled give the side" in cli("inspect", str(model)).stdout


def test_the_tuned_table_covers_the_tuned_half():
    assert sorted(TUNED) == sorted(half("tuned"))


@pytest.mark.parametrize("name", sorted(TUNED))
def test_tuned_realism_table(tmp_path, name):
    capture, rate_a, rate_b, ks, energy_a, energy_b = TUNED[name]
    m, v = realism(tmp_path, name)
    assert m["link"]["capture_point"] == capture
    c = v["comparison"]
    rates = [c["rate_bps"][i]["relative_error"] for i in range(2)]
    energy = [max(d["difference"] for d in v["energy_log2_difference"][k]) for k in ("fwd", "rev")]
    sizes = [c[k]["distance"] for k in ("request_bytes", "response_bytes")]
    print(f"{name}: rate {rates[0]:+.1%} / {rates[1]:+.1%}, KS {sizes}, max energy {energy[0]:.2f} / {energy[1]:.2f}")
    assert abs(rates[0]) <= rate_a and abs(rates[1]) <= rate_b, rates
    assert all(x is not None and x <= ks for x in sizes), sizes
    assert energy[0] <= energy_a and energy[1] <= energy_b, energy
    # The validation says where the trace was taken.
    assert v["capture_point"].startswith({"on-host": "capture point: on host", "link": "capture point: on a link",
                                          "unknown": "capture point: unknown"}[capture])
