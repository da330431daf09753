"""Random multi-statement comprehensions and an independent dense numpy oracle.

A program has up to three statements. Each defines a new tensor over a subset of
the index variables ``i, j, k`` from reads of the inputs (possibly shifted by one,
``X0(i + 1, j)``) and of tensors defined before it; indices on the right but not
on the left are reduced with ``+``, ``max`` or ``min``; a reduction over the inputs
may get a triangle: its reduction index ``v`` bounded by another index ``w``,
``where v in max(lo, w + c):hi`` or ``v in lo:min(hi, w + c)`` (an index-dependent
range), or the same condition as a select whose other side is the reduction's
identity. Earlier tensors not used as outputs are temporaries. The oracle infers
ranges the simple way these programs allow (an index ranges over ``0 : min(extent -
shift)`` of the dimensions it indexes), evaluates each statement on its dense grid in
float64, and gives the points outside a triangle the reduction's identity.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np
from hypothesis import strategies as st

SIZE_OF = {"i": "I", "j": "J", "k": "K"}
INPUTS = {"X0": ("i", "j"), "X1": ("j", "k"), "X2": ("i",), "X3": ("k",)}
FUNCTIONS = {None: None, "tanh": np.tanh, "fabs": np.abs}
REDUCE = {"+": np.sum, "max": np.max, "min": np.min}
IDENTITY = {"+": 0.0, "max": -np.inf, "min": np.inf}
IDENTITY_TC = {"+": "0.0", "max": "-1.0 / 0.0", "min": "1.0 / 0.0"}


@dataclass(frozen=True)
class Triangle:
    """``v >= w + c`` (``lower``) or ``v < w + c`` on a reduction, as a where range or as
    a select (``by_value``)."""

    v: str
    w: str
    c: int
    lower: bool
    by_value: bool

    def holds(self, v, w):
        return v >= w + self.c if self.lower else v < w + self.c

    def condition(self) -> str:
        bound = f"{self.w} + {self.c}" if self.c else self.w
        return f"{self.v} {'>=' if self.lower else '<'} {bound}"


@dataclass(frozen=True)
class Read:
    tensor: str
    indices: tuple[str, ...]
    shifts: tuple[int, ...]

    def text(self) -> str:
        parts = [v if s == 0 else f"{v} + {s}" for v, s in zip(self.indices, self.shifts)]
        return f"{self.tensor}({', '.join(parts)})"


@dataclass(frozen=True)
class Statement:
    tensor: str
    indices: tuple[str, ...]
    reads: tuple[Read, ...]
    combine: tuple[str, ...]   # operators between consecutive reads
    function: str | None
    reduction: str | None
    triangle: Triangle | None = None

    def text(self) -> str:
        rhs = self.reads[0].text()
        for op, read in zip(self.combine, self.reads[1:]):
            rhs = f"({rhs} {op} {read.text()})"
        if self.function:
            rhs = f"{self.function}({rhs})"
        lhs = f"{self.tensor}({', '.join(self.indices)})" if self.indices else self.tensor
        where = ""
        t = self.triangle
        if t is not None and t.by_value:
            rhs = f"{t.condition()} ? {rhs} : {IDENTITY_TC[self.reduction]}"
        elif t is not None:
            low, high = _box(self, t.v)
            bound = f"{t.w} + {t.c}" if t.c else t.w
            where = (f" where {t.v} in max({low}, {bound}):{high}" if t.lower else
                     f" where {t.v} in {low}:min({high}, {bound})")
        return f"{lhs} {self.reduction + '=!' if self.reduction else '='} {rhs}{where}"


def _box(stmt: Statement, v: str) -> tuple[str, str]:
    """TC's inferred range of ``v`` in a statement that reads only inputs, as TC text."""
    shifts = [s for r in stmt.reads for u, s in zip(r.indices, r.shifts) if u == v]
    low, high = max(-s for s in shifts), max(shifts)
    return str(low), SIZE_OF[v] + (f" - {high}" if high else "")


@dataclass(frozen=True)
class FuzzProgram:
    statements: tuple[Statement, ...]
    outputs: tuple[str, ...]
    sizes: dict

    @property
    def source(self) -> str:
        params = ", ".join(f"float({', '.join(SIZE_OF[v] for v in dims)}) {name}"
                           for name, dims in INPUTS.items())
        body = "\n".join(f"  {s.text()}" for s in self.statements)
        return f"def fuzz({params}) -> ({', '.join(self.outputs)}) {{\n{body}\n}}\n"

    def inputs(self, seed: int) -> tuple[np.ndarray, ...]:
        rng = np.random.default_rng(seed)
        return tuple(rng.standard_normal(tuple(self.sizes[SIZE_OF[v]] for v in dims))
                     .astype(np.float32) for dims in INPUTS.values())

    @property
    def rejected(self) -> bool:
        """Whether polyc must reject the program: a left-hand index whose inferred range
        does not start at 0 (it would leave output elements unwritten)."""
        return any(stmt.indices and any(_ranges(stmt)[v][0] != 0 for v in stmt.indices)
                   for stmt in self.statements)

    def reference(self, arrays) -> tuple[np.ndarray, ...]:
        values = self.values(arrays)
        return tuple(values[name] for name in self.outputs)

    def values(self, arrays) -> dict[str, np.ndarray]:
        """Every tensor's value in float64: the inputs, then each statement's result. A
        random program may overflow to infinities and subtract them (NaN), as IEEE
        arithmetic does in the kernel too: the reference says nothing of it."""
        values = {name: np.asarray(a, np.float64) for name, a in zip(INPUTS, arrays)}
        with np.errstate(over="ignore", invalid="ignore"):
            for stmt in self.statements:
                values[stmt.tensor] = _evaluate(stmt, values)
        return values


def _ranges(stmt: Statement) -> dict[str, tuple[int, int | None]]:
    """TC's maximal ranges as offsets: ``v`` in ``[max(-shift), min(extent - shift))``;
    the upper bound needs the extents, so only the lower one is resolved here."""
    lows: dict[str, int] = {}
    for read in stmt.reads:
        for v, shift in zip(read.indices, read.shifts):
            lows[v] = max(lows.get(v, -shift), -shift)
    return {v: (low, None) for v, low in lows.items()}


def _evaluate(stmt: Statement, values: dict) -> np.ndarray:
    variables = sorted({v for r in stmt.reads for v in r.indices} | set(stmt.indices))
    low = {v: r[0] for v, r in _ranges(stmt).items()}
    high = {}
    for read in stmt.reads:
        for v, shift, size in zip(read.indices, read.shifts, values[read.tensor].shape):
            high[v] = min(high.get(v, size - shift), size - shift)
    extent = {v: max(high[v] - low[v], 0) for v in variables}
    grid = {v: low[v] + np.arange(extent[v]).reshape([-1 if w == v else 1 for w in variables])
            for v in variables}
    terms = [values[r.tensor][tuple(grid[v] + s for v, s in zip(r.indices, r.shifts))]
             if r.indices else values[r.tensor] for r in stmt.reads]
    value = terms[0]
    for op, term in zip(stmt.combine, terms[1:]):
        value = value + term if op == "+" else value - term if op == "-" else value * term
    if stmt.function:
        value = FUNCTIONS[stmt.function](value)
    value = np.broadcast_to(value, tuple(max(extent[v], 0) for v in variables))
    if stmt.triangle is not None:
        t = stmt.triangle
        value = np.where(t.holds(grid[t.v], grid[t.w]), value, IDENTITY[stmt.reduction])
    reduced = tuple(k for k, v in enumerate(variables) if v not in stmt.indices)
    if reduced:
        value = REDUCE[stmt.reduction](value, axis=reduced) if value.size else \
            np.full([extent[v] for v in variables if v in stmt.indices],
                    IDENTITY[stmt.reduction])
    kept = [v for v in variables if v in stmt.indices]
    return np.transpose(value, [kept.index(v) for v in stmt.indices])


@st.composite
def fuzz_programs(draw) -> FuzzProgram:
    defined: dict[str, tuple[str, ...]] = dict(INPUTS)
    statements = []
    for n in range(draw(st.integers(1, 3))):
        sources = draw(st.lists(st.sampled_from(sorted(defined)), min_size=1, max_size=3))
        reads = []
        for name in sources:
            dims = defined[name]
            shifts = tuple(draw(st.sampled_from([0, 0, 1])) if name in INPUTS else 0
                           for _ in dims)
            reads.append(Read(name, dims, shifts))
        used = sorted({v for r in reads for v in r.indices})
        lhs = tuple(draw(st.permutations(used))[:draw(st.integers(0, len(used)))])
        reduction = draw(st.sampled_from(sorted(REDUCE))) if len(lhs) < len(used) else None
        combine = tuple(draw(st.sampled_from("+-*")) for _ in reads[1:])
        function = draw(st.sampled_from(sorted(FUNCTIONS, key=str)))
        name = f"T{n}"
        triangle = None
        summed = [v for v in used if v not in lhs]
        if summed and all(r.tensor in INPUTS for r in reads) and draw(st.booleans()):
            v = draw(st.sampled_from(summed))
            w = draw(st.sampled_from([u for u in used if u != v] or [v]))
            if w != v:
                triangle = Triangle(v, w, draw(st.integers(-1, 2)), draw(st.booleans()),
                                    draw(st.booleans()))
        statements.append(Statement(name, lhs, tuple(reads), combine, function, reduction,
                                    triangle))
        defined[name] = lhs
    last = statements[-1].tensor
    extra = [s.tensor for s in statements[:-1] if draw(st.booleans())]
    sizes = {size: draw(st.sampled_from([2, 3, 5, 7])) for size in SIZE_OF.values()}
    return FuzzProgram(tuple(statements), tuple(extra + [last]), sizes)
