# Two entry points for a fresh machine: `make demo` (the main job) and `make test`.
VENV ?= .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: venv demo test bench clean

$(STAMP): pyproject.toml
	python3 -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[test]'
	touch $(STAMP)

venv: $(STAMP)

demo: $(STAMP)
	$(VENV)/bin/pyhpa demo

test: $(STAMP)
	bash scripts/test.sh

bench: $(STAMP)
	$(PY) bench/run.py

clean:
	rm -rf $(VENV) build dist *.egg-info .pytest_cache
