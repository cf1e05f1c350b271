# Quickstart: `make demo` (the main job), `make test` (the suite, the docs site built strictly)
# and `make docs` (the docs site, into site/). Each sets up .venv.
PY ?= python3
VENV := .venv
BIN := $(VENV)/bin
STAMP_DEV := $(VENV)/.installed-dev
STAMP_DEMO := $(VENV)/.installed-demo
STAMP_DOCS := $(VENV)/.installed-docs
# mkdocs-material prints a banner about its successor on every build unless told not to
MKDOCS := NO_MKDOCS_2_WARNING=1 $(BIN)/mkdocs

.PHONY: demo test test-all docs lint format bench clean

# The CPU build of torch that this kind of machine has on disk, installed with the extras (they
# take any torch 2.x; an unpinned torch would pull a multi-GB CUDA build here).
TORCH_CPU := torch==2.13.0

$(BIN)/python:
	$(PY) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip

# Setup ends with `solitaire-gym warmup`: every numba kernel compiled now (a few minutes on 2
# cores), so that no first call waits for the compiler later.
$(STAMP_DEV): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet '$(TORCH_CPU)' -e '.[dev,agents,render,ray]'
	$(BIN)/solitaire-gym warmup
	touch $@

$(STAMP_DOCS): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet -e '.[docs,render]'
	$(BIN)/solitaire-gym warmup
	touch $@

$(STAMP_DEMO): pyproject.toml | $(BIN)/python
	$(BIN)/pip install --quiet '$(TORCH_CPU)' -e '.[agents,render]'
	$(BIN)/solitaire-gym warmup
	touch $@

# The solver teaches a small network Double Solitaire (draw 3) from nothing; evaluate random,
# greedy, the new network, the committed policy and the solver on held-out deals; table, plots
# and a playthrough in runs/demo/ (experiments/demo.py, configs/demo_imitate_double_d3n.yaml).
demo: $(STAMP_DEMO)
	$(BIN)/python experiments/demo.py --out runs/demo

# The docs site is built last, strictly: its pictures are drawn by the package (docs/hooks.py).
# The suite with its tests marked slow (a plain `pytest` leaves them out), not those marked
# manual (minutes each, or a larger scale of a quicker test): `make test-all` runs those too.
# One pytest process per core (pytest-xdist), each test file in one of them.
PYTEST := $(BIN)/python -m pytest -n auto --dist loadfile
test: $(STAMP_DEV) $(STAMP_DOCS)
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(PYTEST) --long slow tests solitaire_gym docs README.md
	$(MKDOCS) build --strict --quiet

test-all: $(STAMP_DEV) $(STAMP_DOCS)
	$(PYTEST) --long all tests solitaire_gym docs README.md

# The docs site into site/ (open site/index.html), warnings as errors, internal links checked.
docs: $(STAMP_DOCS)
	$(MKDOCS) build --strict

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
	$(BIN)/python benchmarks/bench_first_start.py
	$(BIN)/python benchmarks/bench_warmup.py
	$(BIN)/python benchmarks/bench_search.py

clean:
	rm -rf $(VENV) build site *.egg-info
	find . -name __pycache__ -prune -exec rm -rf {} +
