# Precision and speed on real code (issue 6). Not part of TEST_TARGETS: these fetch from PyPI and take minutes.
# make corpus       fetch the wheels pinned in benchmarks/corpus.lock into .corpus/, check them and torch's own
#                   sources, write benchmarks/corpus-findings.json
# make bench-peers  CPU time of gradguard, bare libcst parsing, TorchFix, Fixit and ruff on timm's sources;
#                   writes benchmarks/RESULTS.md (peers installed into benchmarks/.peers/venv)
CORPUS_JOBS ?= 2
BENCH_ROUNDS ?= 3
BENCH_SLOW_ROUNDS ?= 3

.PHONY: corpus bench-peers

corpus: setup
	$(VPY) benchmarks/corpus.py --jobs $(CORPUS_JOBS)

bench-peers: setup
	$(VPY) benchmarks/bench_peers.py --rounds $(BENCH_ROUNDS) --slow-rounds $(BENCH_SLOW_ROUNDS)
