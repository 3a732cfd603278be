# Hover's claims against torch (tests/real_world/facts_oracle.py): every requires_grad / is_leaf hover shows on a
# corpus program, compared with what the program's frames hold when it runs. Not in TEST_TARGETS (minutes); the
# rule examples are checked by tests/test_hover_facts_runtime.py.
.PHONY: facts-oracle

facts-oracle: setup
	$(VPY) tests/real_world/facts_oracle.py
