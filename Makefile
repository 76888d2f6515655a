# Two entry points for a fresh machine: `make demo` (the main job) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
# The venv's interpreter: Debian's /usr/bin/python3 when it is 3.11+ and can make a venv, since it
# is built with PGO and LTO (the simulator ran 1.2x faster on it than on an unoptimized pyenv
# build that comes first on PATH here); else whatever python3 is on PATH.
BASE_PYTHON ?= $(shell /usr/bin/python3 -c 'import sys, ensurepip; assert sys.version_info >= (3, 11)' 2>/dev/null && echo /usr/bin/python3 || echo python3)

# The compiled build (setup.py): the same source with the simulation's hot path compiled by
# mypyc, installed (never in place) into its own venv and remade whenever a source changes.
FAST_VENV ?= .venv-fast
FAST_STAMP := $(FAST_VENV)/.installed
MYPYC ?= mypy==2.4.1
SOURCES := $(shell find pyhpa -name '*.py')

.PHONY: venv fast demo test bench clean

$(STAMP): pyproject.toml setup.py
	$(BASE_PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

$(FAST_STAMP): pyproject.toml setup.py $(SOURCES)
	bash scripts/need-compiler.sh $(BASE_PYTHON)
	$(BASE_PYTHON) -m venv $(FAST_VENV)
	$(FAST_VENV)/bin/python -m pip install -q --upgrade pip
	$(FAST_VENV)/bin/python -m pip install -q '.[test]' '$(MYPYC)' setuptools wheel
	rm -rf build
	PYHPA_COMPILE=1 $(FAST_VENV)/bin/python -m pip install -q --no-build-isolation --no-deps --force-reinstall .
	rm -rf build
	touch $(FAST_STAMP)

venv: $(STAMP)

fast: $(FAST_STAMP)

demo: $(STAMP)
	$(VENV)/bin/pyhpa demo

# The suite on the source, then on the compiled build.
test: $(STAMP) $(FAST_STAMP)
	bash scripts/test.sh
	VENV=$(FAST_VENV) PYHPA_EXPECT_COMPILED=1 bash scripts/test.sh

bench: $(STAMP) $(FAST_STAMP)
	$(PY) bench/run.py
	$(FAST_VENV)/bin/python bench/run.py sim

clean:
	rm -rf $(VENV) $(FAST_VENV) build dist *.egg-info .pytest_cache
