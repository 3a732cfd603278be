# The runtime tracer (server/gradguard/trace/) and the traceback explainer (server/gradguard/explain/).
#   make bench-tracer   times an MLP and an LSTM loop: plain, set_detect_anomaly(True), gradguard trace;
#                       prints the ratios (targets: tracer/plain <= 2.0, tracer/anomaly <= 1.0). Not part of
#                       `make test`.
#   make trace-demo     runs the RNN program of the engine issue under the tracer (expected to fail:
#                       the report names opt.step() as the write).
#   make trace-recall   runs every bug and correct program of tests/real_world/ and the rule examples under
#                       `gradguard trace`; prints how often the bug line is named and findings on correct code.
# The tests (tests/test_trace*.py, tests/test_explain*.py, tests/test_lsp_trace.py, tests/test_notebook_tracer.py)
# run in `make test` through pytest.

BENCH_TRACER_ROUNDS ?= 11

.PHONY: bench-tracer trace-demo trace-recall

bench-tracer: setup
	$(VPY) benchmarks/bench_tracer.py --rounds $(BENCH_TRACER_ROUNDS)

trace-demo: setup
	-$(VPY) -m gradguard.trace tests/trace_programs/rnn_retained_step.py

trace-recall: setup
	$(VPY) benchmarks/trace_recall.py
