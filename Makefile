# polyc: `make demo` and `make test` each set up .venv when needed.
PYTHON ?= python3
VENV := .venv
PY := $(VENV)/bin/python
STAMP := $(VENV)/.installed

.PHONY: demo test test-fast test-models bench bench-fusion bench-scaling bench-dask bench-polly \
	fuzz fuzz-dask golden clean

# torch is optional; the tests of polyc.to_torch, the torch oracles and tensor calls
# skip without it. TORCH= (empty) leaves it out; a failed install is not an error.
TORCH ?= torch==2.13.0

$(STAMP): pyproject.toml
	test -x $(PY) || $(PYTHON) -m venv $(VENV)
	$(PY) -m pip install --quiet --upgrade pip
	$(PY) -m pip install --quiet -e '.[test,dask]'
	$(if $(TORCH),-$(PY) -m pip install --quiet '$(TORCH)')
	touch $(STAMP)

demo: $(STAMP)
	$(PY) examples/demo.py

test: $(STAMP)
	POLYC_CACHE_DIR=$(CURDIR)/.cache/polyc-test $(PY) -m pytest -n 2 --dist loadfile tests

# The whole suite once per named machine model (MODELS=, default the five of
# tests/conftest.py), every kernel shaped by that model and compiled for its instruction
# set: what an AVX2 or SSE2 machine computes, checked on this one (8–11 minutes a model).
test-models: $(STAMP)
	$(PY) -m tests.models $(MODELS)

# SciPy's BLAS is a peer of the triangular kernels; without it those rows leave it out.
bench: $(STAMP)
	-$(PY) -m pip install --quiet 'scipy>=1.10'
	$(PY) benchmarks/run.py

# Only the fusion sections: the default strategy against min and max on the benchmark
# kernels and on every corpus operator (about 20 minutes on 2 cores).
bench-fusion: $(STAMP)
	$(PY) benchmarks/run.py --sections fusion,corpus

# The kernels at 1, 2, 4, ... threads up to the cores, each count in a process of its own:
# how polyc, numpy and torch scale (about 15 minutes on 16 cores).
bench-scaling: $(STAMP)
	$(PY) benchmarks/scaling.py

# polyc.dask on a 2-worker LocalCluster against single-process polyc and Dask's own
# formulations (matmul, conv2d, layernorm, a contraction; arrays of a few GB, ~10 minutes).
bench-dask: $(STAMP)
	$(PY) benchmarks/dask_bench.py

# Rewrite the golden C of the corpus operators (tests/golden/c) after a change that
# means to alter the generated C.
golden: $(STAMP)
	$(PY) -m tests.golden.regenerate

# Polly on the naive gemm loops, the issue's reference (needs clang with Polly).
bench-polly:
	benchmarks/polly/run.sh

# The long differential-fuzzing campaign: random programs under every option variant.
fuzz: $(STAMP)
	POLYC_FUZZ_EXAMPLES=$${POLYC_FUZZ_EXAMPLES:-2000} POLYC_CACHE_DIR=$(CURDIR)/.cache/polyc-fuzz \
		$(PY) -m pytest -p no:cacheprovider -q tests/e2e/test_fuzz_programs.py \
		tests/e2e/test_properties.py tests/lang/test_frontend_robustness.py

# Every corpus operator under 200 random chunkings on Dask arrays (make test runs 2).
fuzz-dask: $(STAMP)
	POLYC_DASK_CHUNKINGS=$${POLYC_DASK_CHUNKINGS:-200} POLYC_CACHE_DIR=$(CURDIR)/.cache/polyc-fuzz \
		$(PY) -m pytest -p no:cacheprovider -q -n 2 tests/e2e/test_dask_corpus.py

clean:
	rm -rf $(VENV) .cache .pytest_cache .hypothesis
