#!/usr/bin/env bash
# Rebuilds fuzz/corpus/{trace_reader,decode} from the first 3 records of each shared trace
# (tiny derived snippets, a few KB in all) and the header fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
traces="${UNDERTOW_TRACES:-../shared/traces}"
rm -rf fuzz/corpus/trace_reader fuzz/corpus/decode
cargo run -q -p wire --release --example fuzzseeds -- fuzz/corpus "$traces"/*.pcap "$traces"/*.pcapng
du -sh --apparent-size fuzz/corpus
# corpus/scenario_loader holds scenario files written by hand, and
# corpus/model_loader a model extracted from a short simulated run
# (`undertow run` with `output.pcap = true`, then `undertow extract`).
