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

# The lint (ruff.toml), then three workers on CI's two cores, each test file in one of them (its
# module fixtures are made once). A third worker fills the cores while the others wait on the
# processes their tests start: on a quiet 2-core machine the suite took 894 s with three against
# 972 s with two.
test: $(STAMP)
	$(PY) -m ruff check .
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -n 3 --dist loadfile

# The inner loop's tier (tests/conftest.py): the tests that start no process and take no more
# than seconds, in one process.
quick: $(STAMP)
	TF_CPP_MIN_LOG_LEVEL=2 $(PY) -m pytest -q --quick

# `make demo FRESH=1` starts over; otherwise finished stages are reused.
demo: $(STAMP)
	$(PY) -m demo.run_demo --output_dir=$(DEMO_OUT) $(if $(FRESH),--fresh)
