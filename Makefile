# xacc developer entry points. A fresh machine needs only `make run` or `make test`;
# both run `make install` first, which is idempotent and takes seconds once done.
#
#   make install  system + Python deps, CMake build, editable install, tools on PATH
#   make venvs    build/venv-3.12 (3.13) with the extension built for it in build-py3.12
#                 (3.13) when that interpreter exists (issue 20)
#   make build    incremental CMake build in build/ (Ninja, ccache)
#   make test     make venvs, every suite (GoogleTest, lit, pytest) under 3.11 and every pytest
#                 directory under 3.12 and 3.13 (TEST_PY_VERSIONS; a version not installed
#                 is a skipped line), two versions side by side (XACC_TEST_JOBS), one
#                 summary line each
#   make test-versions  make venvs, then only the pytest directories under 3.12 and 3.13
#   make wheel    one wheel per available version into dist/ (cp311 from build/, cp312/cp313
#                 from build-py3.X after make venvs; Note [Wheel layout] in setup.py)
#   make test-latest  capture suite + model sweep with the newest releases (build/venv-latest)
#   make run      the main job (RUN_CMD below)
#   make bench    benchmarks/*/run.py (BENCH=ir,camel for some)
#   make clean    remove the build tree and the linked extension
#
# Variables: PYTHON (interpreter to install into), XACC_BUILD_DIR (build tree),
# PY_VERSIONS (further CPythons of venvs/test/test-versions; `PY_VERSIONS=` for none),
# XACC_JOBS (parallel compile jobs), XACC_CMAKE_ARGS (extra CMake -D options),
# BIN_DIR (where xacc-opt and camel are linked; default /usr/local/bin).

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c

PYTHON ?= python3
XACC_BUILD_DIR ?= $(CURDIR)/build
export XACC_BUILD_DIR
BUILD_DIR := $(XACC_BUILD_DIR)
BIN_DIR ?= /usr/local/bin
TOOLS := xacc-opt camel
comma := ,

# Steps of `install` must run in order even under `make -j`.
.NOTPARALLEL:

# The main job: an unmodified PyTorch script written for CUDA, run under the XJIT
# frame hook on the CPU; prints the model's output and the capture summary, then
# the same model's time under plain python, measured in the same run.
RUN_CMD := $(PYTHON) benchmarks/xjit_script/demo.py --device cpu

.PHONY: all install deps build package link-tools venvs wheel test test-versions test-latest run bench clean

all: build

install: deps build package link-tools

deps:
	@PYTHON=$(PYTHON) scripts/install-deps.sh

# Configure once, then build incrementally; also points xacc/_C*.so at the built module.
build:
	@$(PYTHON) scripts/cmake_build.py build

# Editable install of the Python packages; skipped when this interpreter already imports
# them from this checkout (pip install -e would only rebuild what `build` just built).
package: build
	@if $(PYTHON) scripts/cmake_build.py check-editable; then \
	  echo "-- xacc: editable install in place"; \
	else \
	  $(PYTHON) -m pip install --disable-pip-version-check --no-build-isolation --no-deps -e .; \
	fi

# Put the C++ tools on PATH (symlinks, so rebuilding updates them).
link-tools: build
	@for tool in $(TOOLS); do \
	  src="$(abspath $(BUILD_DIR))/bin/$$tool"; \
	  if [ ! -x "$$src" ]; then echo "-- xacc: $$tool not built yet, not linked"; continue; fi; \
	  if [ "$$(readlink "$(BIN_DIR)/$$tool" 2>/dev/null)" = "$$src" ]; then continue; fi; \
	  if ln -sfn "$$src" "$(BIN_DIR)/$$tool" 2>/dev/null; then \
	    echo "-- xacc: $(BIN_DIR)/$$tool -> $$src"; \
	  else \
	    echo "-- xacc: cannot write $(BIN_DIR); add $(abspath $(BUILD_DIR))/bin to PATH"; \
	  fi; \
	done

# One venv per further CPython (scripts/install-venvs.sh: skipped with a message when
# the interpreter or its requirements/lock-cpXY.txt is missing) and xacc._C built for it in
# build-py3.X, a tree beside build/ so that ccache serves the Python-independent objects
# build/ compiled (same relative paths). GoogleTest runs once, from build/.
# A version whose install or build fails does not stop the next one; its extension link is
# removed so that run_tests.py reports that version failed rather than testing a stale build.
PY_VERSIONS ?= 3.12 3.13
space := $(subst ,, )

venvs:
	@status=0; \
	for v in $(PY_VERSIONS); do \
	  XACC_VENV_VERSIONS=$$v scripts/install-venvs.sh || { echo "-- make venvs: build/venv-$$v failed"; status=1; continue; }; \
	  [ -x build/venv-$$v/bin/python ] || continue; \
	  args=""; [ -f build-py$$v/CMakeCache.txt ] || args="-DXACC_BUILD_TESTS=OFF"; \
	  XACC_CMAKE_ARGS="$$args" XACC_BUILD_DIR=$(CURDIR)/build-py$$v build/venv-$$v/bin/python scripts/cmake_build.py build \
	    || { echo "-- make venvs: build-py$$v failed"; rm -f xacc/_C*.cpython-$${v/./}-*.so; status=1; }; \
	done; \
	exit $$status

# One wheel per available version (Note [Wheel layout] in setup.py): 3.11's from build/ with
# $(PYTHON), each further version's from build-py3.X with build/venv-3.X's interpreter (the
# torch it builds against). A version without a venv is named and left out;
# tests/python/test_wheel.py installs the 3.12 and 3.13 wheels into a fresh venv and runs it.
PIP_WHEEL := -m pip wheel --disable-pip-version-check --no-build-isolation --no-deps -w dist .
wheel: build
	@$(PYTHON) $(PIP_WHEEL)
	@status=0; \
	for v in $(PY_VERSIONS); do \
	  if [ ! -x build/venv-$$v/bin/python ]; then echo "-- make wheel: no build/venv-$$v (make venvs), no cp$${v/./} wheel"; continue; fi; \
	  XACC_BUILD_DIR=$(CURDIR)/build-py$$v build/venv-$$v/bin/python $(PIP_WHEEL) || status=1; \
	done; \
	exit $$status

# The 3.11 suites, then every pytest directory under each further version (issue 20
# criterion 1); a venv or build that failed shows as that version's failed summary line, a
# missing interpreter as a skipped one. `make test TEST_PY_VERSIONS=` runs 3.11 only
# (docs/python-versions.md, "Cost", has what the three versions take on a fresh clone).
TEST_PY_VERSIONS ?= 3.12 3.13
test: install
	@if [ -n "$(strip $(TEST_PY_VERSIONS))" ]; then \
	  $(MAKE) --no-print-directory venvs PY_VERSIONS="$(TEST_PY_VERSIONS)" || echo "-- make test: make venvs failed (see above)"; fi
	@$(PYTHON) scripts/run_tests.py --versions "$(subst $(space),$(comma),$(strip $(TEST_PY_VERSIONS)))"

# Only the further versions' pytest directories (what `test` runs after the 3.11 suites).
test-versions: install
	@$(MAKE) --no-print-directory venvs || echo "-- make test-versions: make venvs failed (see above)"
	@$(PYTHON) scripts/run_tests.py --full-versions --versions "$(subst $(space),$(comma),$(PY_VERSIONS))"

# Not part of `test`: the newest releases of requirements/direct.txt (torch stays pinned) in a
# venv of its own, the capture suite and the model sweep there, and what changed against the
# pinned run (SWEEP_ARGS: extra benchmarks/models/sweep.py arguments, e.g. "--limit 20";
# LATEST_ARGS: test_latest.py's own, e.g. "--resume" to finish an interrupted sweep).
LATEST_ARGS ?=
test-latest: build
	@$(PYTHON) scripts/test_latest.py $(LATEST_ARGS)

run: install
	$(RUN_CMD)

# Every benchmarks/<area>/run.py, the IR core first; BENCH=ir,camel picks areas.
BENCH ?=
bench: install
	@set -- $(subst $(comma), ,$(BENCH)); \
	if [ $$# -eq 0 ]; then \
	  set -- $$(ls benchmarks/*/run.py 2>/dev/null | cut -d/ -f2 | sort \
	            | awk '$$0=="ir"{print; next} {rest=rest" "$$0} END{print rest}'); \
	fi; \
	if [ $$# -eq 0 ]; then echo "make bench: no benchmarks/*/run.py yet" >&2; exit 1; fi; \
	status=0; \
	for area in "$$@"; do \
	  echo "===== benchmarks/$$area ====="; \
	  $(PYTHON) benchmarks/$$area/run.py || status=1; \
	done; \
	exit $$status

clean:
	rm -rf $(BUILD_DIR) $(foreach v,$(PY_VERSIONS),build-py$(v)) *.egg-info
	find xacc -maxdepth 1 -name '_C*.so' -type l -delete 2>/dev/null || true
