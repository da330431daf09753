"""A parallel band whose loop isl splits under a guard stays parallel in every piece
(``LoopNestEmitter._marked``). Fusing statements over ranges of different extents (a
layer norm backward's row sums over n with the column sums' initialisations over d)
gives one band over both; isl emits it as ``if (D >= 1) { loop to D; loop from D to N }
else { loop to N }``. Each piece runs a subset of the band's instances, so each keeps
the band's parallel mark; the whole nest had run on the calling thread (16 threads
reached 2.6x of one on the benchmark's layer norm backward)."""
import re
import sys
from pathlib import Path

import numpy as np
import pytest

import polyc
from polyc.compiler import frontend, generate
from polyc.options import Options

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from kernels import BY_NAME  # noqa: E402

# The benchmark's layer norm backward (benchmarks/kernels.py).
LAYERNORM_BACKWARD = BY_NAME["layernorm_backward"].source


def test_a_guarded_band_runs_every_piece_in_a_parallel_region(machine):
    compilation = generate(frontend(LAYERNORM_BACKWARD), Options(machine=machine))
    text = compilation.c_source.text
    kernel = text[text.index("\nint polyc_layernorm_backward("):]
    # Every nest is parallel (the explanation says so): no walk over the inputs is
    # left to the calling thread, and the split band's pieces are regions of their own.
    assert "d_Y[" not in kernel and "X[" not in kernel
    assert len(set(re.findall(r"_region(\d+)\(", kernel))) >= 3


@pytest.mark.needs_cc
@pytest.mark.parametrize("N, D", [(96, 80), (80, 96), (88, 88), (1, 300), (300, 1)])
def test_every_piece_computes_what_numpy_does(N, D):
    # Both branches of the guard and both orders of the pieces, with a team of threads
    # (work above the parallel threshold) where the shape allows; checked against the
    # benchmark's float64 reference (the textbook formula).
    bench = BY_NAME["layernorm_backward"]
    op = polyc.define(LAYERNORM_BACKWARD)
    inputs = bench.inputs(dict(N=N, D=D), np.random.default_rng(N * 1000 + D))
    for value, expected in zip(op(*inputs), bench.reference(*inputs)):
        np.testing.assert_allclose(value, expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())
