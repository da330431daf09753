"""Every corpus operator as a torch op: opcheck passes, and the double-typed version's
gradients agree with torch.autograd.gradcheck (issue 24's targets)."""
import functools
import re

import numpy as np
import pytest

import polyc
from corpus import CORPUS, make_inputs

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc


@functools.lru_cache(maxsize=None)
def registered(name: str, double: bool):
    entry = next(c for c in CORPUS if c.name == name)
    source = re.sub(r"\bfloat(32)?\b", "double", entry.source) if double else entry.source
    return polyc.to_torch(polyc.define(source, entry.def_name))


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


@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_gradcheck_in_float64(entry):
    op = registered(entry.name, True)
    args = [a.requires_grad_() if isinstance(a, torch.Tensor) and a.dtype == torch.float64
            else a for a in _arguments(entry, np.float64)]
    assert torch.autograd.gradcheck(lambda *xs: op(*xs), tuple(args), eps=1e-6, atol=1e-5,
                                    rtol=1e-4)
