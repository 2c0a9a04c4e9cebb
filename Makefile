# h2htalk: `make demo` serves the demo study, `make test` runs every test (browser tests too).
# Both set up everything on a fresh machine: a .venv with the package and its dev tools, and
# for tests the system packages (Debian's chromium and postgresql) when they are missing.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_DB ?= demo.db
PORT   ?= 8501

POTATO_VERSION := 2.12.1
POTATO_STAMP   := .bench/potato/.installed-$(POTATO_VERSION)

.PHONY: demo test bench bench-potato lint setup system-deps clean

setup: $(STAMP)

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -qq -e '.[dev]'
	touch $(STAMP)

system-deps:
	bash scripts/system-deps.sh

demo: $(STAMP)
	$(VENV)/bin/h2h demo --db $(DEMO_DB) --force --serve --port $(PORT)

test: $(STAMP) system-deps
	$(PY) -m ruff check .
	$(PY) -m pytest

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

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) test-artifacts .pytest_cache .bench
