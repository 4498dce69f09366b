"""The simulator's Linux slow start, round by round, against Linux's own in
the emulator's capture of the same setting (bench/settings/quickstart-fast.toml:
50 Mbit/s, 10 ms each way, 1 MB downloads with no background). Linux sent
10, 20, 40 and 74 segments in the first four rounds of every download (two
captures): its receiver ACKs at once the last segment of each of the sender's
two-segment packets, which leaves round three's last segment to be ACKed
with round four's first, and TSO deferral then holds the last segments the
window allows for that ACK."""

from __future__ import annotations

import re
from collections import defaultdict

from conftest import ROOT, cli
from undertow import _core

# A gap longer than this between two data segments at the bottleneck ends a
# round (within a round they are one segment's service apart, 0.23 ms).
ROUND_GAP_S = 0.003


def rounds(pcap: str, server_port: int = 80, n: int = 4) -> list[list[int]]:
    """The first `n` rounds' sizes, in segments, of each connection served from `server_port`."""
    sent = defaultdict(list)
    for t, _src, sport, _dst, dport, _seq, length, _flags in _core.tcp_segments(pcap):
        if sport == server_port and length > 0:
            sent[dport].append(t)
    out = []
    for times in sent.values():
        sizes = [1]
        for a, b in zip(times, times[1:]):
            if b - a > ROUND_GAP_S:
                sizes.append(0)
            sizes[-1] += 1
        if len(sizes) > n:
            out.append(sizes[:n])
    return out


def test_the_fourth_round_of_slow_start_carries_what_linuxs_did(tmp_path):
    text = (ROOT / "bench/settings/quickstart-fast.toml").read_text()
    text = re.sub(r'^duration = ".*"$', 'duration = "9s"', text, flags=re.M) + "\n[output]\npcap = true\n"
    (tmp_path / "fast.toml").write_text(text)
    r = cli("run", str(tmp_path / "fast.toml"), "--case", "nbg", "-o", str(tmp_path / "out"), "-q")
    assert r.returncode == 0, r.stderr
    got = rounds(str(tmp_path / "out" / "nbg" / "bottleneck.pcap"))
    assert len(got) >= 8, got
    assert all(g == [10, 20, 40, 74] for g in got), got
