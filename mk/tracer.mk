# The runtime tracer (server/gradguard/trace/) and the traceback explainer (server/gradguard/explain/).
#   make bench-tracer   times an MLP and an LSTM loop: plain, set_detect_anomaly(True), gradguard trace;
#                       prints the ratios (target: tracer/anomaly <= 1.0). Not part of `make test`.
#   make trace-demo     runs the RNN program of the engine issue under the tracer (expected to fail:
#                       the report names opt.step() as the write).
# The tests (tests/test_trace*.py, tests/test_explain*.py) run in `make test` through pytest.

BENCH_TRACER_ROUNDS ?= 11

.PHONY: bench-tracer trace-demo

bench-tracer: setup
	$(VPY) benchmarks/bench_tracer.py --rounds $(BENCH_TRACER_ROUNDS)

trace-demo: setup
	-$(VPY) -m gradguard.trace tests/trace_programs/rnn_retained_step.py
