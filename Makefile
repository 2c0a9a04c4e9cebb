# h2htalk: `make demo` serves the demo study, `make test` runs every test (browser tests too).
# Both set up everything on a fresh machine: a .venv with the package and its dev tools, and
# for tests the system packages (Debian's chromium and postgresql) when they are missing.

PYTHON ?= python3
VENV   := .venv
PY     := $(VENV)/bin/python
STAMP  := $(VENV)/.installed
DEMO_DB ?= demo.db
PORT   ?= 8501

.PHONY: demo test bench lint setup system-deps clean

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

bench: $(STAMP)
	$(PY) benchmarks/run_all.py

lint: $(STAMP)
	$(PY) -m ruff check .

clean:
	rm -rf $(VENV) test-artifacts .pytest_cache .bench
