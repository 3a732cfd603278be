# Real-world corpus (issue 10): tests/real_world/. Not in TEST_TARGETS (tests/test_real_world.py runs the torch
# checks under pytest).
# make recall         gradguard's recall, precision and fix results on the corpus (one summary line at the end)
# make recall-verify  every corpus program under torch: bugs raise their manifest error, fixed/correct run clean
# RECALL_ARGS="--batch a01" or "--form project" (reduction|project|notebook|long_script) narrows either one (see the docstrings of tests/real_world/{score,verify}.py).
RECALL_ARGS ?=

.PHONY: recall recall-verify

recall: setup
	$(VPY) tests/real_world/score.py $(RECALL_ARGS)

recall-verify: setup
	$(VPY) tests/real_world/verify.py $(RECALL_ARGS)
