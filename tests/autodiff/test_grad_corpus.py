"""Every differentiable corpus operator: polyc.grad against finite differences, and its
float64 version's derived operators computing in float64.

The backward operator runs in the corpus' types (float32 mostly); the directional
derivative it gives must match central differences of the float64 numpy reference to
1e-3 relative (the issue's target)."""
import functools
import re

import numpy as np
import pytest

import polyc
from corpus import CORPUS, make_inputs
from polyc.lang import ir
from gradcheck import directional, directions, finite_difference, relative_error


# Operators whose derivative is zero or undefined almost everywhere, or that polyc
# does not differentiate yet (with the reason the SemanticError gives).
NOT_DIFFERENTIABLE = {
}


def _differentiable(entry) -> bool:
    return any(spec.dtype.startswith("float") for spec in entry.inputs) and \
        entry.name not in NOT_DIFFERENTIABLE


DIFFERENTIABLE = [c for c in CORPUS if _differentiable(c)]


@functools.lru_cache(maxsize=None)
def backward(name: str) -> tuple[polyc.Operator, polyc.Operator]:
    entry = next(c for c in CORPUS if c.name == name)
    forward = polyc.define(entry.source, entry.def_name)
    return forward, polyc.grad(forward)


@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_a_float64_operators_derived_operators_compute_in_float64(entry):
    # derived operators are printed as TC and read again; nothing may come back float32
    # (a temporary first defined by a literal, a literal expression: float32's rounding)
    forward = polyc.define(re.sub(r"\bfloat(32)?\b", "double", entry.source), entry.def_name)
    residuals = polyc.grad_with_residuals(forward)
    for derived in (polyc.grad(forward), residuals.forward, residuals.backward):
        assert all(t.type.name == "float64" for t in derived.ir.temporaries
                   if t.type.is_float), derived
        for statement in derived.ir.statements:
            assert all(part.type.name == "float64" for part in ir.walk(statement.rhs)
                       if part.type.is_float), (derived.name, statement)


@pytest.mark.needs_cc
@pytest.mark.parametrize("entry", DIFFERENTIABLE, ids=[c.name for c in DIFFERENTIABLE])
def test_gradient_matches_finite_differences(entry):
    forward, grad = backward(entry.name)
    rng = np.random.default_rng(11)
    sizes = entry.shapes[0]
    inputs = make_inputs(entry, sizes, rng)
    outputs = forward(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    cotangents = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs]
    differentiated = [t.type.is_float for t in forward.ir.inputs]
    direction = directions(inputs, differentiated, rng)
    gradients = grad(*inputs, *cotangents)
    gradients = gradients if isinstance(gradients, tuple) else (gradients,)
    for gradient, value, active in zip(gradients, [x for x, a in zip(inputs, differentiated)
                                                   if a], differentiated):
        assert np.shape(gradient) == np.shape(value)
    expected = finite_difference(entry.reference, tuple(
        np.asarray(x, np.float64) if isinstance(x, np.ndarray) and x.dtype.kind == "f" else x
        for x in inputs), direction, [np.asarray(w, np.float64) for w in cotangents])
    actual = directional(gradients, direction)
    scale = sum(float(np.sum(np.abs(np.asarray(w, np.float64)))) for w in cotangents) * 1e-3
    assert relative_error(actual, expected, scale) <= 1e-3, (actual, expected)
