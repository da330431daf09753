"""Hypothesis strategies: random einsum-style comprehensions with a dense numpy oracle.

A program has a few index variables, each tied to a size variable; inputs are
indexed by tuples of them (repeats allowed: ``A(i, i)`` reads a diagonal); the
output keeps some indices in some order; the rest are reduced with ``+``,
``max``, ``min`` or ``*``. The right-hand side combines the reads with ``+``,
``-``, ``*`` and an optional elementwise function. The oracle evaluates the
right-hand side on the dense grid of all indices in float64, then reduces.

Also :func:`chunkings`: random Dask chunks for an array (``tests/test_dask.py``,
``tests/e2e/test_dask_corpus.py``).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

INDEX_SIZES = {"i": "I", "j": "J", "k": "K", "l": "L"}
FUNCTIONS = {"tanh": np.tanh, "fabs": np.abs, "exp": np.exp}
REDUCERS = {"+": np.sum, "max": np.max, "min": np.min, "*": np.prod}


@dataclass(frozen=True)
class RandomProgram:
    source: str
    inputs: tuple[tuple[str, tuple[str, ...]], ...]  # (name, index variables)
    output: tuple[str, ...]                          # output index variables
    reduction: str | None
    expression: tuple                                # nested ("op", a, b) / ("read", k)
    function: str | None
    sizes: dict[str, int]

    def arrays(self, seed: int) -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(seed)
        scale = 0.5 if self.reduction == "*" else 1.0
        return tuple((scale * rng.standard_normal(
            tuple(self.sizes[INDEX_SIZES[v]] for v in indices)) + (1.0 if scale < 1 else 0.0)
        ).astype(np.float32) for _, indices in self.inputs)

    def reference(self, arrays) -> np.ndarray:
        variables = sorted({v for _, indices in self.inputs for v in indices} | set(self.output))
        grid = {v: np.arange(self.sizes[INDEX_SIZES[v]]).reshape(
            [-1 if w == v else 1 for w in variables]) for v in variables}
        reads = [np.asarray(a, np.float64)[tuple(grid[v] for v in indices)]
                 for a, (_, indices) in zip(arrays, self.inputs)]
        value = _evaluate(self.expression, reads)
        if self.function:
            value = FUNCTIONS[self.function](value)
        full_shape = tuple(self.sizes[INDEX_SIZES[v]] for v in variables)
        value = np.broadcast_to(value, full_shape)
        reduced = [variables.index(v) for v in variables if v not in self.output]
        if reduced:
            value = REDUCERS[self.reduction](value, axis=tuple(reduced))
        kept = [v for v in variables if v in self.output]
        return np.transpose(value, [kept.index(v) for v in self.output]) if self.output \
            else np.asarray(value)


def _evaluate(expression, reads):
    if expression[0] == "read":
        return reads[expression[1]]
    op, a, b = expression
    a, b = _evaluate(a, reads), _evaluate(b, reads)
    return a + b if op == "+" else a - b if op == "-" else a * b


def _expression_text(expression, names) -> str:
    if expression[0] == "read":
        return names[expression[1]]
    op, a, b = expression
    return f"({_expression_text(a, names)} {op} {_expression_text(b, names)})"


@st.composite
def einsum_programs(draw) -> RandomProgram:
    variables = draw(st.lists(st.sampled_from(sorted(INDEX_SIZES)), min_size=1, max_size=4,
                              unique=True))
    n_inputs = draw(st.integers(1, 3))
    inputs = []
    for n in range(n_inputs):
        rank = draw(st.integers(1, 3))
        inputs.append((f"X{n}", tuple(draw(st.sampled_from(variables)) for _ in range(rank))))
    used = sorted({v for _, indices in inputs for v in indices})
    output = tuple(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
    reduced = [v for v in used if v not in output]
    reduction = draw(st.sampled_from(sorted(REDUCERS))) if reduced else None
    expression = ("read", 0)
    for n in range(1, n_inputs):
        expression = (draw(st.sampled_from("+-*")), expression, ("read", n))
    function = draw(st.none() | st.sampled_from(sorted(FUNCTIONS)))
    if reduction == "*":
        function = None  # keep products of many terms well conditioned
    sizes = {INDEX_SIZES[v]: draw(st.sampled_from([1, 2, 3, 5, 7])) for v in used}
    if reduction == "*":
        sizes = {k: min(v, 3) for k, v in sizes.items()}

    names = [f"{name}({', '.join(indices)})" for name, indices in inputs]
    rhs = _expression_text(expression, names)
    if function:
        rhs = f"{function}({rhs})"
    params = ", ".join(f"float({', '.join(INDEX_SIZES[v] for v in indices)}) {name}"
                       for name, indices in inputs)
    lhs = f"O({', '.join(output)})" if output else "O"
    op = f"{reduction}=!" if reduction else "="
    source = f"def random_op({params}) -> (O) {{\n  {lhs} {op} {rhs}\n}}\n"
    return RandomProgram(source, tuple(inputs), output, reduction, expression, function,
                         sizes)


@st.composite
def chunkings(draw, shape: tuple[int, ...]) -> tuple[tuple[int, ...], ...]:
    """Dask chunks for an array of ``shape``: each dimension cut at up to three random
    places (uneven, size-1 chunks and a single chunk included; ``(0,)`` when empty)."""
    result = []
    for extent in shape:
        cuts = draw(st.lists(st.integers(1, extent - 1), max_size=3)) if extent > 1 else []
        bounds = sorted({0, extent, *cuts})
        result.append(tuple(b - a for a, b in zip(bounds, bounds[1:])) or (0,))
    return tuple(result)
