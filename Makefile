# perftui developer entry points.  `make run` and `make test` work on a fresh machine.
PY      ?= python3
VENV    ?= .venv
BIN     := $(VENV)/bin
STAMP   := $(VENV)/.installed
# Bytecode is cached under the venv, so the tree stays clean even where the environment sets
# PYTHONDONTWRITEBYTECODE: without a cache every start compiles every module (a small
# report: 0.35 s against 0.22 s here) and pytest rewrites every test module's asserts again
# in each process (~5 s each).
export PYTHONPYCACHEPREFIX := $(abspath $(VENV))/pycache
unexport PYTHONDONTWRITEBYTECODE

.PHONY: setup run demo check test lint typecheck bench screenshots clean

$(STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(BIN)/pip install --quiet --upgrade pip
	$(BIN)/pip install --quiet -e '.[dev]'
	@# the names pass's compiled loops, compiled once now (numba keeps them beside the module;
	@# the tests' warm-up finds them current, tests/warmup.py)
	$(BIN)/python tests/warmup.py
	touch $(STAMP)

setup: $(STAMP)

## Set up and open the app (the bundled demo recording unless FILE=... is given).
run: $(STAMP)
	$(BIN)/perftui $(if $(FILE),$(FILE),--demo)

demo: run

## Everyday check (< 3 min on 2 cores): lint, types, and every test not marked slow or perf
## (the slowest, and the snapshots at sizes other than 80x24, run in `make test`).
check: lint typecheck
	$(BIN)/python -m pytest -q -n 2 -m "not slow and not perf"

## Run the whole test suite (lint and type checks first, then pytest in four worker
## processes on the 2-core machines CI runs on: fewer left the cores idle while tests wait
## on perf record, recorded programs and screens settling (two: 736 s, three: 584-656 s,
## four: 560 s here), work stolen by idle workers so the longest tests do not end the run
## alone. One test alone: .venv/bin/python -m pytest FILE).
## The tests in a real terminal (tmux: mostly waiting for screens to settle) run beside
## them in a third process, and the lint and type checks (one core each, ~20 s) in a fourth;
## their output follows the others', and any of them failing fails the run.
test: $(STAMP)
	@tmp=$$(mktemp -d); \
	$(MAKE) --no-print-directory lint typecheck >$$tmp/lint.log 2>&1 & \
	l=$$!; \
	$(BIN)/python -m pytest -q -m terminal --basetemp=$$tmp/terminal >$$tmp/terminal.log 2>&1 & \
	t=$$!; \
	$(BIN)/python -m pytest -q -n 4 --dist worksteal -m "not terminal" --basetemp=$$tmp/main; a=$$?; \
	wait $$t; b=$$?; wait $$l; c=$$?; \
	echo "--- the terminal tests (tmux), run beside the others:"; cat $$tmp/terminal.log; \
	echo "--- lint and types, run beside the tests:"; cat $$tmp/lint.log; \
	rm -rf $$tmp; exit $$((a || b || c))

## ruff, the layer contracts, and dead code (vulture: [tool.vulture] in pyproject.toml).
lint: $(STAMP)
	$(BIN)/ruff check perftui tests scripts bench
	$(BIN)/lint-imports
	$(BIN)/vulture

typecheck: $(STAMP)
	$(BIN)/mypy perftui

bench: $(STAMP)
	$(BIN)/python bench/run.py

screenshots: $(STAMP)
	$(BIN)/python scripts/make_screenshots.py

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache .mypy_cache
