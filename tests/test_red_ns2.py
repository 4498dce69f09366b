"""RED in undertow's simulator against ns-2 2.35 on one setting
(bench/ns2/red_compare.py, docs/queues-vs-ns2.md), TCP with flavour = "ns2" on
undertow's side: RED's average queue and its own decisions (early drops,
or ECN marks with ECN on both sides' TCPs; adaptive RED's max_p moving)
within 10%, one seed each; with 64 flows and ECN, where the average sits at
maxthresh and flows held at one segment wait out their timers after a mark,
the forced drops too."""

from __future__ import annotations

import importlib.util

import pytest

from conftest import ROOT, need_ns2

spec = importlib.util.spec_from_file_location("red_compare", ROOT / "bench/ns2/red_compare.py")
red_compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(red_compare)


@pytest.mark.parametrize(("flows", "red", "decisions"), [
    (4, {}, ["early"]),
    (4, {"ecn": True}, ["marks"]),
    (4, {"adaptive": True}, ["early"]),
    (64, {"ecn": True}, ["marks", "forced"]),
], ids=["red", "ecn", "adaptive", "ecn-64-flows"])
def test_red_average_queue_and_decisions_are_within_ten_percent_of_ns2(tmp_path, flows, red, decisions):
    need_ns2()
    ns2 = red_compare.run_ns2(flows, 200, 1, "Newreno", False, tmp_path, **red)
    ours = red_compare.run_undertow(flows, 200, 1, "Newreno", False, tmp_path, **red)
    a, b = ns2["average"], ours["average"]
    assert abs(b / a - 1) < red_compare.TOLERANCE, f"undertow {b:.3f} against ns-2 {a:.3f} packets"
    for kind in decisions:
        e, f = ns2[kind], ours[kind]
        assert abs(f / e - 1) < red_compare.TOLERANCE, f"{kind} {f:.5f} against ns-2's {e:.5f}"
    if red.get("ecn"):
        assert ours["early"] < 0.1 * ours["marks"], "with ECN RED marks instead of dropping early"
