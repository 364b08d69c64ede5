# Two commands do everything: `make run` and `make test` (see README.md).
PYTHON ?= $(shell command -v python3.11 || command -v python3)
VENV := .venv
PY := $(VENV)/bin/python
PIP := $(PY) -m pip --disable-pip-version-check -q

.PHONY: run test test-deps bench clean

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

clean:
	rm -rf $(VENV) .cache
