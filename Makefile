# The two commands of the README, and the steps they stand on.
#   make demo  - set up .venv if needed, then train PPO on CartPole with 2 Ray workers through the
#                papermill quickstart; ends with a run directory and its report.html
#   make test  - set up .venv if needed, then run the fast tier of the test suite (about 15 minutes on 2 cores)
#   make test-slow - the slow tier CI runs after it (tests marked `slow`: long learning checks, the docs site in a
#                browser, the dashboards in JupyterLab); make test-learning: the longer learning runs CI leaves out
#   make images - publish the pictures the suite made (build/images/) to docs/images/, the README's pictures
#   make bench - the benchmarks of the README's table (BENCH="pong sync" or BENCH=all for others)
#   make format - the notebooks' code formatted (ruff format, .ruff.toml), then exported
#   make docs  - the static docs site in site/ (notebooks executed, API reference); open site/index.html
# Dependencies and their pins live in settings.ini (read by setup.py). `make demo` installs only what
# the library and its notebooks need (install-core); `make test`, `make docs` and `make export` add the
# dev extras (install). torch comes first, from TORCH_SPEC: on this project's machines pip is set up to
# give the CPU wheel; PyPI's default Linux wheel carries CUDA (several GB). For a CPU-only torch from
# stock pip: make demo TORCH_SPEC="torch==2.13.0 --index-url https://download.pytorch.org/whl/cpu";
# for a GPU: the CUDA wheel of your driver (nbs/howto/gpu.ipynb).
SHELL := /bin/bash
PYTHON ?= python3.11
VENV ?= .venv
TORCH_SPEC ?= torch==2.13.0
BIN := $(VENV)/bin
STAMP := $(VENV)/.installed
CORE_STAMP := $(VENV)/.installed-core

.PHONY: install install-core demo test test-slow test-learning images docs export format readme bench bench-envs clean-runs

# the library, its notebooks' kernel and papermill: what `make demo` needs
install-core: $(CORE_STAMP)

$(CORE_STAMP): settings.ini setup.py
	@command -v $(PYTHON) >/dev/null || { echo "make: $(PYTHON) not found; set PYTHON=/path/to/python3.11"; exit 2; }
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install -q --upgrade pip
	$(BIN)/python -m pip install -q $(TORCH_SPEC)
	$(BIN)/python -m pip install -q -e .
	$(BIN)/python -m ipykernel install --sys-prefix --name ddrl-lab --display-name "Python (ddrl-lab)" >/dev/null
	touch $(CORE_STAMP)

# and the dev extras: tests, JupyterLab, the docs toolchain, nbdev, the reference envs
install: $(STAMP)

$(STAMP): $(CORE_STAMP)
	$(BIN)/python -m pip install -q -e ".[dev]"
	touch $(STAMP)

demo: install-core
	mkdir -p runs
	$(BIN)/papermill -k ddrl-lab --log-level WARNING nbs/experiments/quickstart.ipynb runs/quickstart.ipynb -p out runs
	@echo "executed notebook: runs/quickstart.ipynb"; ls -td runs/quickstart-*/ | head -1 | sed 's/^/run directory: /'

# Every test fails with its name past TEST_TIMEOUT seconds (pytest-timeout) instead of hanging CI; each tier prints its
# 15 slowest tests. The tiers are cut by the `slow` marker (tests/conftest.py); the README lists what the slow one holds.
TEST_TIMEOUT ?= 900
PYTEST := $(BIN)/python -m pytest -q --durations=15 --timeout=$(TEST_TIMEOUT)

test: install
	$(PYTEST) tests -m "not slow"

test-slow: install
	$(PYTEST) tests -m slow

# The long learning runs CI leaves out (tests marked `learning`: more seeds of what `make test` checks on one).
test-learning: install
	$(PYTEST) tests --learning -m learning

# The suite's pictures (build/images/, written by the tests that make them) published to docs/images/ with provenance.
images:
	$(BIN)/python docs/publish_images.py

# The docs site (docs/build.py, docs/mkdocs.yml): executes every notebook of nbs/ and nbs/experiments/ into
# build/docs/ (cached by content: the next run executes only the notebooks that changed), adds an API
# reference from the docstrings and writes the static site to site/. It loads nothing from the network.
docs: install
	$(BIN)/python docs/build.py

# Benchmarks (harness nbs/bench/00_harness.ipynb, families 16a-16c): medians of 3 repeats, ratios against baselines measured in the same
# run; prints the table and writes runs/bench-<time>.json. The default set is the README's table
# (about 15 minutes on 2 cores); `ddrl-lab bench --help` lists the others.
BENCH ?= sampling solve replay
bench: install
	$(BIN)/ddrl-lab bench $(BENCH)

# Env-pool throughput against the raw environments, side by side (about a minute).
bench-envs: install
	$(BIN)/python bench/envs.py

# Regenerate the library and README from the notebooks and strip notebook outputs.
export: install
	$(BIN)/nbdev_export
	$(BIN)/jupyter nbconvert --log-level WARN --clear-output --inplace nbs/*.ipynb nbs/experiments/*.ipynb
	$(BIN)/nbdev_clean
	$(MAKE) readme

# The notebooks' code in one style (.ruff.toml: 100 columns), then exported.
format: install
	$(BIN)/ruff format nbs ddrl_lab/__init__.py ddrl_lab/loops/__init__.py
	$(MAKE) export

readme:
	$(BIN)/jupyter nbconvert --log-level WARN --to markdown --output-dir . --output README nbs/index.ipynb

clean-runs:
	rm -rf runs
