#!/usr/bin/env bash
# Rebuilds fuzz/corpus/ from the first 3 records of each shared trace
# (tiny derived snippets, a few KB in all) and the header fixtures.
set -euo pipefail
cd "$(dirname "$0")/.."
traces="${UNDERTOW_TRACES:-../shared/traces}"
rm -rf fuzz/corpus
cargo run -q -p wire --release --example fuzzseeds -- fuzz/corpus "$traces"/*.pcap "$traces"/*.pcapng
du -sh --apparent-size fuzz/corpus
