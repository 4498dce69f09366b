"""bench/realism.py's rows, from validations made up for the purpose: the
ranges over seeds, the octaves over the target plainly and beyond the
trace's own interval, and the typeset signs."""

import importlib.util
import sys
from pathlib import Path

BENCH = Path(__file__).resolve().parents[1] / "bench"
sys.path.insert(0, str(BENCH))  # realism imports engines' seed parser
spec = importlib.util.spec_from_file_location("realism", BENCH / "realism.py")
realism = importlib.util.module_from_spec(spec)
spec.loader.exec_module(realism)


def octave(j: int, difference: float, ci_half: float) -> dict:
    return {"octave": j, "scale_s": 0.001 * 2**j, "difference": difference, "signed": difference, "trace_ci_half": ci_half}


def validation(rates: tuple[float, float], ks: tuple, fwd: list[dict], rev: list[dict]) -> dict:
    return {
        "comparison": {
            "rate_bps": [{"relative_error": rates[0]}, {"relative_error": rates[1]}],
            "request_bytes": {"distance": ks[0]},
            "response_bytes": {"distance": ks[1]},
        },
        "energy_log2_difference": {"fwd": fwd, "rev": rev},
    }


def test_a_corpus_row_gives_ranges_over_seeds_and_the_octaves_over_on_any_seed():
    by_seed = {
        1: validation((0.042, -0.005), (0.0, 0.01), [octave(1, 0.4, 0.1), octave(6, 1.2, 0.5)], [octave(1, 0.9, 0.1)]),
        2: validation((0.094, 0.009), (0.02, None), [octave(7, 1.86, 2.0), octave(11, 1.1, 0.3)], [octave(1, 0.3, 0.1)]),
    }
    row = realism.corpus_row("t.pcap", {"link": {"capture_point": "unknown"}}, by_seed)
    assert row == [
        "t", "unknown", "+4.2 to +9.4% / \u22120.5 to +0.9%", "0.020", "1.20-1.86 / 0.30-0.90",
        # 64 ms, 128 ms and 2048 ms over on some seed; 128 ms within its interval.
        "3: 64-2048 ms / none", "2: 64-2048 ms / none",
    ]


def test_one_octave_over_is_named_alone_and_none_over_says_none():
    v = validation((0.0, 0.0), (0.0, 0.0), [octave(1, 1.3, 0.1)], [octave(3, 0.2, 0.1)])
    assert realism.octaves_cell({1: v}, "fwd", False) == "2 ms"
    assert realism.octaves_cell({1: v}, "rev", False) == "none"


def test_seeds_parse_as_ranges_and_lists():
    assert realism.parse_seeds("1-3,5") == [1, 2, 3, 5]
