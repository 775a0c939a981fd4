# Two entry points for a fresh clone: `make demo` and `make test` (see README.md).
PYTHON ?= python3
VENV   ?= .venv
PY      = $(VENV)/bin/python

.PHONY: demo demo-llm test test-all lint docs bench install clean

install: $(VENV)/.installed

$(VENV)/.installed: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test]'
	touch $@

demo: install
	$(VENV)/bin/ragsweep run specs/demo.yaml
	$(VENV)/bin/ragsweep report runs/demo

# the demo with LLM answers and judges on a real local llama.cpp server (SmolLM2-135M: a smoke test, no quality
# claim); the server is built on first use (about 5-11 min) and left running (scripts/llm-server.sh stop)
demo-llm: install
	scripts/llm-server.sh start
	$(VENV)/bin/ragsweep run specs/demo-llm-local.yaml --limit 24 || [ $$? -eq 3 ]  # 3: some answers failed (listed)
	$(VENV)/bin/ragsweep report runs/demo-llm-local

# --durations: every CI log names the slowest tests (the suite's time is a goal: docs/development.md)
# compileall first: the CLI processes the tests start read src's bytecode instead of compiling it at every start
# (an environment with PYTHONDONTWRITEBYTECODE, as CI's, never writes it; an installed wheel has it)
test: install
	$(PY) -m compileall -q src
	$(PY) -m pytest --durations=25

# what CI checks before the tests: ruff (pyproject.toml [tool.ruff]), mypy ([tool.mypy] files) and the site
lint: install docs
	$(VENV)/bin/ruff check src tests bench scripts
	$(VENV)/bin/ruff format --check src tests bench scripts
	$(VENV)/bin/mypy

# the documentation site (mkdocs.yml; the spec reference is generated from the schema): site/index.html
docs: install
	$(VENV)/bin/mkdocs build --strict --quiet

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
	scripts/llm-server.sh start && eval "$$(scripts/llm-server.sh env)" && $(PY) bench/llm_server_bench.py

clean:
	rm -rf $(VENV) .ragsweep runs .llm-server site
