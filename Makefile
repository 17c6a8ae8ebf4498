# The README's two commands. Both set everything up on a fresh machine.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python

.PHONY: demo test docs

$(VENV)/.installed-%: pyproject.toml
	$(PYTHON) -m venv $(VENV)
	$(PY) -m pip install -q --upgrade pip
	$(PY) -m pip install -q -e ".[$*]"
	touch $@

demo: $(VENV)/.installed-test
	$(PY) -m gpurules.demo

# NUMBA_OPT=1: the suite's time is mostly Numba compiling, and LLVM's level 1 compiles about a
# tenth faster than the default 3; the models are the same (tests/test_opt_level.py), and
# the package's cache keeps each level's code apart (gpurules/jit/cache.py)
test: $(VENV)/.installed-test
	NUMBA_OPT=1 $(PY) -m pytest -q -p no:cacheprovider -n auto --dist loadfile --no-loadscope-reorder --durations=15 tests

# the documentation site (mkdocs.yml) into site/; `$(VENV)/bin/mkdocs serve` to browse it live
docs: $(VENV)/.installed-docs
	NO_MKDOCS_2_WARNING=1 $(PY) -m mkdocs build --strict --site-dir site
