# undertow: `make demo` runs the quickstart, `make test` runs every test,
# `make bench` runs the benchmarks. Each sets itself up on a fresh machine:
# a local virtual environment (.venv) with the Python dependencies, and the
# Rust core built into it.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
PIP    := $(VENV)/bin/pip
export VIRTUAL_ENV := $(abspath $(VENV))
export PATH := $(abspath $(VENV))/bin:$(PATH)
CARGO  ?= cargo

.PHONY: demo demo-emu emu-deps test bench build setup system-deps lint rust-test py-test fuzz-test clean

demo: build
	$(VENV)/bin/undertow run examples/quickstart.toml -o runs/quickstart --overwrite

# The quickstart with real Apache and httperf in the emulator (root).
demo-emu: build emu-deps
	$(VENV)/bin/undertow run examples/emu-apache-httperf.toml -o runs/emu-apache-httperf --overwrite

emu-deps:
	@command -v apache2 >/dev/null 2>&1 && command -v httperf >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing apache2 and httperf (apt-get)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q apache2 httperf >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q apache2 httperf >/dev/null; }; \
	    apache2ctl stop >/dev/null 2>&1 || true; \
	  else \
	    echo "demo-emu needs apache2 and httperf: install them, as root (apt-get install apache2 httperf)"; exit 2; \
	  fi; }

test: system-deps build lint rust-test py-test fuzz-test

# The tree stays tidy: rustfmt, clippy with warnings as errors, ruff.
lint: setup
	$(CARGO) fmt --all --check
	$(CARGO) clippy --workspace --all-targets --quiet -- -D warnings
	$(VENV)/bin/ruff check python tests bench

rust-test:
	$(CARGO) test --profile ci --workspace --exclude undertow-python

py-test: build
	$(PY) -m pytest -q

# A bounded fuzzing run of the trace reader and packet decoder (nightly Rust
# and cargo-fuzz, installed here on first use).
FUZZ_SECONDS ?= 20
fuzz-test:
	@if ! $(CARGO) +nightly --version >/dev/null 2>&1; then \
	  echo "fuzz-test: SKIPPED: no nightly Rust toolchain (rustup toolchain install nightly)"; \
	else \
	  $(CARGO) fuzz --version >/dev/null 2>&1 || $(CARGO) install --quiet --locked cargo-fuzz; \
	  fuzz/run.sh $(FUZZ_SECONDS); \
	fi

# tshark reads the simulator's captures in the tests; ns-2 (the ns2
# package, `ns`) runs the RED and AF/BE settings beside the simulator.
system-deps:
	@command -v tshark >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing tshark (apt-get)"; \
	    echo "wireshark-common wireshark-common/install-setuid boolean false" | debconf-set-selections; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q tshark >/dev/null; }; \
	  else \
	    echo "tshark is missing and cannot be installed here (needs root and apt-get): the capture tests will be skipped"; \
	  fi; }
	@command -v ns >/dev/null 2>&1 || { \
	  if [ "$$(id -u)" = 0 ] && command -v apt-get >/dev/null 2>&1; then \
	    echo "installing ns-2 (apt-get)"; \
	    DEBIAN_FRONTEND=noninteractive apt-get install -y -q ns2 >/dev/null || \
	    { apt-get update -q >/dev/null && DEBIAN_FRONTEND=noninteractive apt-get install -y -q ns2 >/dev/null; }; \
	  else \
	    echo "ns-2 is missing and cannot be installed here (needs root and apt-get): the ns-2 comparisons will be skipped"; \
	  fi; }

bench: build
	$(PY) bench/run_bench.py

build: setup
	$(VENV)/bin/maturin develop --release --quiet

setup: $(VENV)/.deps

$(VENV)/.deps: requirements-dev.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install --quiet --upgrade pip
	$(PIP) install --quiet -r requirements-dev.txt
	touch $@

clean:
	rm -rf $(VENV) target runs bench/build
