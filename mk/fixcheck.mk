# Repair judged by training (issue 19): tests/real_world/fixcheck.py. Not in TEST_TARGETS (tests/test_fixcheck.py
# runs it on a few bugs under pytest).
# make fixcheck   for every detected corpus bug: fix offered, runs clean, trains like the hand fix (one row per rule)
# FIXCHECK_ARGS="--rule GG401", "--batch b05" or "--form project" narrows it (see the docstring of tests/real_world/fixcheck.py).
FIXCHECK_ARGS ?=

.PHONY: fixcheck

fixcheck: setup
	$(VPY) tests/real_world/fixcheck.py $(FIXCHECK_ARGS)
