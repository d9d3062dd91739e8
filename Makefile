# The set-up commands of the README: `make demo`, `make test` and `make quick`. Each creates .venv
# when missing.
PYTHON ?= python3.11
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed
DEMO_OUT := demo_output

.PHONY: demo test quick venv

$(STAMP): requirements.txt requirements-dev.txt build-constraints.txt
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	PIP_CONSTRAINT=$(CURDIR)/build-constraints.txt $(PY) -m pip install --quiet --disable-pip-version-check \
	  -r requirements-dev.txt
	touch $(STAMP)

venv: $(STAMP)

# The lint (ruff.toml), then two workers on CI's two cores, each test file in one of them (its
# module fixtures are made once). The tests' commands are forked from a server that has
# TensorFlow imported (tests/fork_server.py), so the workers seldom wait and the cores stay
# busy: a third worker only adds its own collection, fork servers and contention (on a quiet
# 2-core AMD EPYC, two pairs of runs: 10:19 and 10:35 with two against 10:55 and 10:46 with
# three, and ~8% less CPU).
test: $(STAMP)
	$(PY) -m ruff check .
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -n 2 --dist loadfile

# The inner loop's tier (tests/conftest.py): the tests that start no process and take no more
# than seconds, in one process.
quick: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q --quick

# `make demo FRESH=1` starts over; otherwise finished stages are reused.
demo: $(STAMP)
	$(PY) -m demo.run_demo --output_dir=$(DEMO_OUT) $(if $(FRESH),--fresh)
