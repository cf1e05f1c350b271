# Quickstart: `make demo` (the main job) and `make test` (the whole suite). Each sets up .venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_DEV := $(VENV)/.installed-dev
STAMP_DEMO := $(VENV)/.installed-demo

.PHONY: demo test lint format bench clean

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[dev,agents,render,ray]'
	touch $@

$(STAMP_DEMO): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[agents,render]'
	touch $@

# Train a small MaskablePPO on Seahaven Towers (4 cells), evaluate random, greedy, PPO and the
# solver on held-out deals, save the table, plots and a playthrough: runs/demo/ (a few minutes).
demo: $(STAMP_DEMO)
	$(BIN)/python experiments/demo.py --out runs/demo

test: $(STAMP_DEV)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/python -m pytest tests solitaire_gym docs README.md

lint: $(STAMP_DEV)
	$(BIN)/ruff check --fix .
	$(BIN)/ruff format .

bench: $(STAMP_DEV)
	$(BIN)/pip install --quiet -e '.[bench]'
	$(BIN)/python benchmarks/bench_engine.py
	$(BIN)/python benchmarks/bench_envs.py
	$(BIN)/python benchmarks/bench_scaling.py
	$(BIN)/python benchmarks/bench_step_parts.py
	$(BIN)/python benchmarks/bench_launch.py

clean:
	rm -rf $(VENV) build *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
