# How one file's analysis grows with its size (issue 21). Not part of `make test`: the 10,000 points take minutes.
#   make bench-scaling  generated inputs (loop-body pairs, branches in a loop body, layer-list rows, literal
#                       elements, functions calling functions) at 100, 1,000 and 10,000: CPU time, peak RSS and
#                       allocation peak per point, the ratio of each 10x step (targets: <= 12x); exit 1 on a miss.
# tests/test_scaling.py guards the same shapes at 20 and 200 by counted calls and tracemalloc peaks, in `make test`.
SCALING_SIZES ?= 100 1000 10000
SCALING_MEM_GB ?= 6

.PHONY: bench-scaling

bench-scaling: setup
	$(VPY) benchmarks/bench_scaling.py --sizes $(SCALING_SIZES) --mem-gb $(SCALING_MEM_GB)
