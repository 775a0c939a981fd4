# Two entry points for a fresh clone: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: demo test test-all bench install clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

demo: install
	$(VENV)/bin/ragsweep run specs/demo.yaml
	$(VENV)/bin/ragsweep report runs/demo

test: install
	$(PY) -m pytest

test-all: install
	$(PY) -m pytest -m ''

bench: install
	$(PY) bench/sweep_bench.py
	$(PY) bench/judge_bench.py
	$(PY) bench/embed_bench.py
	$(PY) bench/ray_bench.py
	$(PY) bench/search_bench.py
	$(PY) bench/detector_bench.py
	$(PY) bench/proxy_bench.py

clean:
	rm -rf $(VENV) .ragsweep runs
