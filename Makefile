# Everything a fresh clone needs is installed from here (CI runs `make test` on a clean machine).
# Parts add their own targets in mk/*.mk; each may append to TEST_TARGETS (run by `make test`)
# and DEMO_TARGETS (run by `make demo`).
PY      ?= python3
VENV    := .venv
VPY     := $(abspath $(VENV))/bin/python
STAMP   := $(VENV)/.installed
DEMO_STAMP := $(VENV)/.installed-demo
TEST_TARGETS :=
DEMO_TARGETS :=

.PHONY: setup demo-setup demo test pytest clean

all: test

# `make demo` needs only gradguard itself (no torch, no test tools); `make setup` adds those for the tests.
$(DEMO_STAMP): pyproject.toml
	$(PY) -m venv $(VENV)
	$(VPY) -m pip install -q --upgrade pip
	$(VPY) -m pip install -q -e .
	touch $(DEMO_STAMP)

$(STAMP): $(DEMO_STAMP) pyproject.toml
	# torch==2.13.0 is the CPU build that lies on this machine's disk; any looser spec may pull CUDA.
	$(VPY) -m pip install -q torch==2.13.0
	$(VPY) -m pip install -q -e '.[test]'
	touch $(STAMP)

setup: $(STAMP)

demo-setup: $(DEMO_STAMP)

-include mk/*.mk

demo: demo-setup $(DEMO_TARGETS)
	@echo "== gradguard check examples/"
	$(VENV)/bin/gradguard check examples/ ; test $$? -le 1

pytest: setup
	$(VPY) -m pytest -q -p no:cacheprovider

test: pytest $(TEST_TARGETS)

clean:
	rm -rf $(VENV) build *.egg-info
