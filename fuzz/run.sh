#!/usr/bin/env bash
# Builds the fuzz targets and runs each for SECONDS (default 60), starting
# from the seed corpus. Fails if any target crashes. New inputs go to a
# scratch corpus, so fuzz/corpus/ holds only the reviewed seeds; crashes are
# saved in fuzz/artifacts/<target>/.
# Needs: rustup nightly toolchain, `cargo install cargo-fuzz`.
set -euo pipefail
secs="${1:-60}"
cd "$(dirname "$0")"
cargo +nightly fuzz build
scratch="$(mktemp -d)"
trap 'rm -rf "$scratch"' EXIT
for target in trace_reader decode scenario_loader model_loader; do
    mkdir -p "$scratch/$target"
    echo "== fuzzing $target for ${secs}s"
    cargo +nightly fuzz run "$target" "$scratch/$target" "corpus/$target" -- \
        -max_total_time="$secs" -print_final_stats=1
done
echo "fuzz: no crashes in ${secs}s per target"
