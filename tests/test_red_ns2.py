"""RED in undertow's simulator against ns-2 2.35 on one setting
(bench/ns2/red_compare.py, docs/queues.md), TCP with flavour = "ns2" on
undertow's side: RED's average queue and early-drop share within 10%."""

from __future__ import annotations

import importlib.util

from conftest import ROOT, need_ns2

spec = importlib.util.spec_from_file_location("red_compare", ROOT / "bench/ns2/red_compare.py")
red_compare = importlib.util.module_from_spec(spec)
spec.loader.exec_module(red_compare)


def test_red_average_queue_and_early_drops_are_within_ten_percent_of_ns2(tmp_path):
    need_ns2()
    seeds = [1]
    ns2 = [red_compare.run_ns2(4, 200, s, "Newreno", False, tmp_path) for s in seeds]
    ours = [red_compare.run_undertow(4, 200, s, "Newreno", False, tmp_path) for s in seeds]
    a, b = (sum(r["average"] for r in runs) / len(runs) for runs in (ns2, ours))
    assert abs(b / a - 1) < red_compare.TOLERANCE, f"undertow {b:.3f} against ns-2 {a:.3f} packets"
    e, f = (sum(r["early"] for r in runs) / len(runs) for runs in (ns2, ours))
    assert abs(f / e - 1) < red_compare.TOLERANCE, f"early drops {f:.5f} against ns-2's {e:.5f}"
