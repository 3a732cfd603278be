# Reliability (issue 7): fuzzing, bad input, server soak. The short versions run in `make test` through
# pytest (tests/test_fuzz_engine.py, tests/test_bad_inputs.py, tests/test_soak_server.py).
#   make fuzz-long   the fuzz properties with FUZZ_EXAMPLES examples each and fresh randomness (minutes)
#   make soak-long   benchmarks/soak_server.py: SOAK_EDITS random edits per round, prints the figures
FUZZ_EXAMPLES ?= 2000
SOAK_EDITS    ?= 5000
SOAK_ROUNDS   ?= 1
SOAK_SEED     ?= 1

.PHONY: fuzz-long soak-long

fuzz-long: setup
	GRADGUARD_FUZZ_EXAMPLES=$(FUZZ_EXAMPLES) GRADGUARD_FUZZ_RANDOM=1 \
	  $(VPY) -m pytest -q -p no:cacheprovider -o timeout=0 tests/test_fuzz_engine.py

soak-long: setup
	$(VPY) benchmarks/soak_server.py --edits $(SOAK_EDITS) --rounds $(SOAK_ROUNDS) --seed $(SOAK_SEED)
