# Language server (issue 3): its tests run with `make test` (tests/test_lsp_*.py);
# the latency/memory benchmark is separate because it takes a few minutes.
.PHONY: bench-lsp lsp-test

bench-lsp: setup
	$(VPY) benchmarks/bench_lsp.py

lsp-test: setup
	$(VPY) -m pytest -q -p no:cacheprovider tests/test_lsp_server.py tests/test_lsp_explanations.py
