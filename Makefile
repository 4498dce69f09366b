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

.PHONY: demo test bench build setup rust-test py-test clean

demo: build
	$(VENV)/bin/undertow run examples/quickstart.toml -o runs/quickstart

test: build rust-test py-test

rust-test:
	$(CARGO) test --release --workspace --exclude undertow-python

py-test: build
	$(PY) -m pytest -q

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
