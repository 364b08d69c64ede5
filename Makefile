# Two commands do everything: `make run` and `make test` (see README.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: run test test-deps bench nemesis clean

$(VENV)/.installed: pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PIP) install -e .
	touch $@

$(VENV)/.test-installed: $(VENV)/.installed pyproject.toml
	$(PIP) install -e '.[test]'
	touch $@

run: $(VENV)/.installed
	$(VENV)/bin/trafka serve --host 127.0.0.1 --port 9092 --data-dir ./data

test-deps: $(VENV)/.test-installed
	$(PY) -m testkit.setup_deps
	bash tests/container/setup_podman.sh

test: test-deps
	$(PY) -m pytest -q -p no:cacheprovider

bench: test-deps
	$(PIP) install -e '.[test,bench]'
	$(PY) -m bench
	$(PY) -m bench.replication
	$(PY) -m bench.startup
	$(PY) -m bench.rest_proxy

# A longer soak under the nemesis than make test runs (docs/nemesis.md): every seed in SEEDS for
# DURATION seconds of faults each, against the whole process (tests/nemesis/test_under_the_nemesis.py).
SEEDS ?= 1,2,3,4,5
DURATION ?= 60
nemesis: test-deps
	NEMESIS_SEEDS=$(SEEDS) NEMESIS_DURATION=$(DURATION) $(PY) -m pytest -q -p no:cacheprovider tests/nemesis/test_under_the_nemesis.py

clean:
	rm -rf $(VENV) .cache
