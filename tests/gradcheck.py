"""Directional-derivative checks of polyc.grad against central finite differences.

For an operator ``f``, inputs ``x``, a random direction ``v`` and random cotangents
``w``, the backward operator must give ``<grad, v>`` equal to the derivative of
``t ↦ <f(x + t v), w>`` at 0, which central differences of a float64 evaluation
approximate to about 1e-9 relative.
"""
from __future__ import annotations

import numpy as np


def directions(inputs, differentiated, rng) -> list:
    """A random direction per differentiated input (arrays for tensors, floats for scalars)."""
    result = []
    for value, active in zip(inputs, differentiated):
        if not active:
            result.append(None)
        elif isinstance(value, np.ndarray):
            result.append(rng.standard_normal(value.shape))
        else:
            result.append(float(rng.standard_normal()))
    return result


def shifted(inputs, direction, t: float) -> tuple:
    return tuple(x if v is None else (x + t * v if isinstance(x, np.ndarray) else x + t * v)
                 for x, v in zip(inputs, direction))


def finite_difference(forward, inputs, direction, cotangents, step: float = 1e-5) -> float:
    """The central difference of ``t ↦ <forward(inputs + t direction), cotangents>``,
    ``forward`` evaluating in float64."""
    def phi(t):
        outputs = forward(*shifted(inputs, direction, t))
        outputs = outputs if isinstance(outputs, tuple) else (outputs,)
        return sum(float(np.sum(np.asarray(o, np.float64) * w))
                   for o, w in zip(outputs, cotangents))
    return (phi(step) - phi(-step)) / (2 * step)


def directional(gradients, direction) -> float:
    """``<gradients, direction>`` over the differentiated inputs."""
    total = 0.0
    gradients = iter(gradients)
    for v in direction:
        if v is None:
            continue
        g = np.asarray(next(gradients), np.float64)
        total += float(np.sum(g * v))
    return total


def relative_error(actual: float, expected: float, scale: float) -> float:
    return abs(actual - expected) / max(abs(expected), scale, 1e-12)


def f32(rng, *shape):
    return rng.standard_normal(shape).astype(np.float32)


def check_grad(forward, inputs: tuple, reference, seed: int = 0, tolerance: float = 1e-3):
    """``polyc.grad(forward)`` against central differences of ``reference`` (float64): the
    directional derivative along a random direction, with random cotangents."""
    import polyc

    rng = np.random.default_rng(seed)
    outputs = forward(*inputs)
    outputs = outputs if isinstance(outputs, tuple) else (outputs,)
    cotangents = [rng.standard_normal(o.shape).astype(o.dtype) for o in outputs]
    grad = polyc.grad(forward)
    gradients = grad(*inputs, *cotangents)
    gradients = gradients if isinstance(gradients, tuple) else (gradients,)
    differentiated = [t.type.is_float for t in forward.ir.inputs]
    direction = directions(inputs, differentiated, rng)
    expected = finite_difference(reference, tuple(
        np.asarray(x, np.float64) if isinstance(x, np.ndarray) else x for x in inputs),
        direction, [np.asarray(w, np.float64) for w in cotangents])
    actual = directional(gradients, direction)
    assert relative_error(actual, expected, 1e-6) <= tolerance, (actual, expected)
    return gradients
