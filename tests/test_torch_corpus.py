"""Every corpus operator as a torch op: opcheck passes, and the double-typed version's
gradients agree with torch.autograd.gradcheck (issue 24's targets).

The gradcheck runs every operator on the reference schedule (``optimize=False``: the
derivative itself and torch's autograd around it, in float64), and the optimized
schedule on operators of each kind of backward (a contraction, windows, a maximum, the
normalisations, gathers, several outputs, a product). Every operator's optimized
backward is checked against finite differences in tests/autodiff/test_grad_corpus.py;
compiling each one again in float64 here took the suite two minutes of gcc."""
import functools
import re

import numpy as np
import pytest

import polyc
from corpus import CORPUS, make_inputs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc


@functools.lru_cache(maxsize=None)
def registered(name: str, double: bool, optimize: bool = True):
    entry = next(c for c in CORPUS if c.name == name)
    source = re.sub(r"\bfloat(32)?\b", "double", entry.source) if double else entry.source
    return polyc.to_torch(polyc.define(source, entry.def_name, optimize=optimize))


def _arguments(entry, dtype=None):
    inputs = make_inputs(entry, entry.shapes[0], np.random.default_rng(3))
    return [torch.from_numpy(np.asarray(x, dtype or x.dtype) if x.dtype.kind == "f" else x)
            if isinstance(x, np.ndarray) else x for x in inputs]


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_opcheck(entry):
    op = registered(entry.name, False)
    result = torch.library.opcheck(op, tuple(_arguments(entry)))
    assert set(result.values()) == {"SUCCESS"}


DIFFERENTIABLE = [c for c in CORPUS if any(s.dtype.startswith("float") and s.dims
                                           for s in c.inputs)]


OPTIMIZED = ("matmul", "avgpool3x3", "maxpool2x2", "softmax", "layernorm", "cross_entropy",
             "embedding_bag", "batchnorm_stats", "gemver", "row_prod")
SCHEDULES = [pytest.param(entry, False, id=f"{entry.name}-reference")
             for entry in DIFFERENTIABLE] + \
            [pytest.param(entry, True, id=f"{entry.name}-optimized")
             for entry in DIFFERENTIABLE if entry.name in OPTIMIZED]


def test_the_optimized_gradchecks_name_corpus_operators():
    assert set(OPTIMIZED) <= {entry.name for entry in DIFFERENTIABLE}


@pytest.mark.parametrize("entry, optimize", SCHEDULES)
def test_gradcheck_in_float64(entry, optimize):
    op = registered(entry.name, True, optimize)
    args = [a.requires_grad_() if isinstance(a, torch.Tensor) and a.dtype == torch.float64
            else a for a in _arguments(entry, np.float64)]
    assert torch.autograd.gradcheck(lambda *xs: op(*xs), tuple(args), eps=1e-6, atol=1e-5,
                                    rtol=1e-4)
