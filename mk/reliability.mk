# Reliability (issues 7 and 14): fuzzing, bad input, hostile input, server soak. The short versions run in
# `make test` through pytest (tests/test_fuzz_engine.py, tests/test_bad_inputs.py, tests/test_hostile_*.py,
# tests/test_soak_server.py).
#   make fuzz-long      the fuzz properties (including the hostile shapes of tests/hostile_inputs.py inside
#                       training scripts) with FUZZ_EXAMPLES examples each and fresh randomness (minutes),
#                       then every hostile shape at the size that crashed, through the engine and the server
#   make soak-long      benchmarks/soak_server.py: SOAK_EDITS random edits per round (hostile shapes among
#                       the typed pieces), prints the figures
#   make hostile-bench  benchmarks/hostile_inputs.py: each hostile shape in a child process capped at
#                       HOSTILE_MEM_GB, prints outcome, seconds and peak MB; then the linear paths through
#                       the real server (--linear): the two tables of RESULTS.md "Hostile inputs"
FUZZ_EXAMPLES  ?= 2000
SOAK_EDITS     ?= 5000
SOAK_ROUNDS    ?= 1
SOAK_SEED      ?= 1
HOSTILE_MEM_GB ?= 4

.PHONY: fuzz-long soak-long hostile-bench

fuzz-long: setup
	GRADGUARD_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) GRADGUARD_FUZZ_RANDOM=1 \
	  $(VPY) -m pytest -q -p no:cacheprovider -o timeout=0 tests/test_fuzz_engine.py \
	  tests/test_hostile_inputs.py tests/test_hostile_server.py

soak-long: setup
	$(VPY) benchmarks/soak_server.py --edits $(SOAK_EDITS) --rounds $(SOAK_ROUNDS) --seed $(SOAK_SEED)

hostile-bench: setup
	$(VPY) benchmarks/hostile_inputs.py --mem-gb $(HOSTILE_MEM_GB)
	$(VPY) benchmarks/hostile_inputs.py --linear
