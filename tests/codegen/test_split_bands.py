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


def _reference(X, gamma, eps, d_Y, mu, ss):
    D = X.shape[1]
    centred = X - (mu / D)[:, None]
    rstd = 1 / np.sqrt(ss / D + eps)
    a = (d_Y * gamma * centred).sum(1)
    g = (d_Y * gamma).sum(1)
    d_ss = a * (-0.5 * rstd / (ss / D + eps)) / D
    d_mu = (-(g * rstd) - 2 * d_ss * centred.sum(1)) / D
    d_X = d_Y * gamma * rstd[:, None] + 2 * d_ss[:, None] * centred + d_mu[:, None]
    return d_X, (d_Y * centred * rstd[:, None]).sum(0), d_Y.sum(0)


@pytest.mark.needs_cc
@pytest.mark.parametrize("N, D", [(96, 80), (80, 96), (88, 88), (1, 300), (300, 1)])
def test_every_piece_computes_what_numpy_does(N, D):
    # Both branches of the guard and both orders of the pieces, with a team of threads
    # (work above the parallel threshold) where the shape allows.
    op = polyc.define(LAYERNORM_BACKWARD)
    rng = np.random.default_rng(N * 1000 + D)
    X = rng.standard_normal((N, D))
    centred = X - X.mean(1, keepdims=True)
    inputs = (X, rng.standard_normal(D), 1e-5, rng.standard_normal((N, D)), X.sum(1),
              (centred * centred).sum(1) + 0.5)
    got = op(*(np.float32(x) if np.isscalar(x) else x.astype(np.float32) for x in inputs))
    for value, expected in zip(got, _reference(*inputs)):
        np.testing.assert_allclose(value, expected, rtol=2e-4, atol=2e-4 * np.abs(expected).max())
