"""Quasi-affine expressions over size variables: extents and index bounds.

Range inference works symbolically in the size variables. Its results are
kept in one normal form, a :class:`SizeExpr`:

* :class:`Affine` — ``c0 + c1*a1 + c2*a2 ...`` where each atom ``a`` is a size
  variable name or a :class:`FloorDiv` of an affine form by a positive constant;
* :class:`MinMax` — the ``min`` or ``max`` of several size expressions.

Arithmetic distributes over ``min``/``max`` (``min(a, b) + c == min(a + c, b + c)``),
and floor division by a positive constant is monotone, so every result stays
in this form. Each form prints as TC text (where ``/`` between sizes is floor
division, as in isl) and as isl text.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Union

Atom = Union[str, "FloorDiv"]


@dataclass(frozen=True)
class Affine:
    """``const + sum(coeff * atom)``; ``terms`` is sorted and has no zero coefficient."""

    terms: tuple[tuple[Atom, int], ...] = ()
    const: int = 0

    @staticmethod
    def of(value: int | str) -> Affine:
        if isinstance(value, int):
            return Affine((), value)
        return Affine(((value, 1),), 0)

    @property
    def is_constant(self) -> bool:
        return not self.terms

    def size_names(self) -> frozenset[str]:
        names: set[str] = set()
        for atom, _ in self.terms:
            names |= {atom} if isinstance(atom, str) else atom.numerator.size_names()
        return frozenset(names)

    def _sorted(self, coefficients: dict) -> Affine:
        terms = tuple(sorted(((a, c) for a, c in coefficients.items() if c),
                             key=lambda item: _atom_key(item[0])))
        return Affine(terms, self.const)


@dataclass(frozen=True)
class FloorDiv:
    """``floor(numerator / denominator)`` with ``denominator > 1``."""

    numerator: Affine
    denominator: int


@dataclass(frozen=True)
class MinMax:
    """``min(args)`` or ``max(args)`` (``op`` is ``"min"`` or ``"max"``)."""

    op: str
    args: tuple[SizeExpr, ...]

    def size_names(self) -> frozenset[str]:
        return frozenset().union(*(a.size_names() for a in self.args))


SizeExpr = Union[Affine, MinMax]


def _atom_key(atom: Atom) -> tuple:
    return (0, atom) if isinstance(atom, str) else (1, to_tc(atom.numerator), atom.denominator)


# ----------------------------------------------------------------- arithmetic


def const(value: int) -> Affine:
    return Affine((), value)


def var(name: str) -> Affine:
    return Affine(((name, 1),), 0)


def add(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    if isinstance(a, MinMax):
        return _minmax(a.op, tuple(add(x, b) for x in a.args))
    if isinstance(b, MinMax):
        return _minmax(b.op, tuple(add(a, x) for x in b.args))
    coefficients = dict(a.terms)
    for atom, c in b.terms:
        coefficients[atom] = coefficients.get(atom, 0) + c
    return Affine((), a.const + b.const)._sorted(coefficients)


def scale(a: SizeExpr, factor: int) -> SizeExpr:
    if isinstance(a, MinMax):
        op = a.op if factor >= 0 else {"min": "max", "max": "min"}[a.op]
        return _minmax(op, tuple(scale(x, factor) for x in a.args))
    return Affine((), a.const * factor)._sorted({atom: c * factor for atom, c in a.terms})


def neg(a: SizeExpr) -> SizeExpr:
    return scale(a, -1)


def sub(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    return add(a, neg(b))


def floordiv(a: SizeExpr, d: int) -> SizeExpr:
    """``floor(a / d)`` for a positive constant ``d``."""
    if d <= 0:
        raise ValueError("floordiv needs a positive divisor")
    if d == 1:
        return a
    if isinstance(a, MinMax):
        return _minmax(a.op, tuple(floordiv(x, d) for x in a.args))
    # Pull out the part that divides exactly: floor((d*q + r)/d) == q + floor(r/d).
    exact = {atom: c // d for atom, c in a.terms if c % d == 0}
    rest = Affine((), 0)._sorted({atom: c for atom, c in a.terms if c % d != 0})
    quotient = Affine((), a.const // d if not rest.terms else 0)._sorted(exact)
    if not rest.terms:
        return quotient
    remainder = Affine(rest.terms, a.const)
    return add(quotient, Affine(((FloorDiv(remainder, d), 1),), 0))


def ceildiv(a: SizeExpr, d: int) -> SizeExpr:
    """``ceil(a / d)`` for a positive constant ``d``."""
    return neg(floordiv(neg(a), d))


def smin(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    return _minmax("min", (a, b))


def smax(a: SizeExpr, b: SizeExpr) -> SizeExpr:
    return _minmax("max", (a, b))


def _minmax(op: str, args: tuple[SizeExpr, ...]) -> SizeExpr:
    """Flatten nested same-op nodes, drop duplicates and constant-dominated arguments."""
    flat: list[SizeExpr] = []
    for arg in args:
        for item in (arg.args if isinstance(arg, MinMax) and arg.op == op else (arg,)):
            if item not in flat:
                flat.append(item)
    # Among arguments that differ by a constant, keep only the extreme one.
    kept: list[SizeExpr] = []
    for item in flat:
        replaced = False
        for k, other in enumerate(kept):
            difference = sub(item, other)
            if isinstance(difference, Affine) and difference.is_constant:
                better = difference.const < 0 if op == "min" else difference.const > 0
                if better:
                    kept[k] = item
                replaced = True
                break
        if not replaced:
            kept.append(item)
    if len(kept) == 1:
        return kept[0]
    return MinMax(op, tuple(sorted(kept, key=to_tc)))


def evaluate(e: SizeExpr, sizes: dict[str, int], minimum=min, maximum=max) -> int:
    """The value of ``e`` for concrete sizes (or symbolic ones, such as torch's SymInts,
    given their ``minimum`` and ``maximum``)."""
    if isinstance(e, MinMax):
        values = [evaluate(a, sizes, minimum, maximum) for a in e.args]
        combine = minimum if e.op == "min" else maximum
        result = values[0]
        for value in values[1:]:
            result = combine(result, value)
        return result
    total = e.const
    for atom, c in e.terms:
        if isinstance(atom, str):
            total += c * sizes[atom]
        else:
            total += c * (evaluate(atom.numerator, sizes, minimum, maximum) // atom.denominator)
    return total


def plain_name(e: SizeExpr) -> str | None:
    """The size variable ``e`` is, when it is one (``N``; not ``N - 1`` or ``2``)."""
    if isinstance(e, Affine) and e.const == 0 and len(e.terms) == 1 and e.terms[0][1] == 1 \
            and isinstance(e.terms[0][0], str):
        return e.terms[0][0]
    return None


def size_names(e: SizeExpr) -> frozenset[str]:
    return e.size_names()


# ----------------------------------------------------------------- printing


def to_tc(e: SizeExpr) -> str:
    """TC text: ``N - 1``, ``(H - 3)/2 + 1``, ``min(M, N)`` (``/`` is floor division)."""
    return _print(e, atom_style="tc")


# Words isl's parser reserves; user names equal to one get a trailing underscore.
_ISL_RESERVED = frozenset({
    "and", "or", "not", "exists", "floor", "ceil", "mod", "min", "max", "infty", "NaN",
    "implies", "true", "false", "rat", "int", "domain", "range", "sup", "inf", "max",
})


def isl_name(name: str) -> str:
    """A user name (a size, an index) in isl text."""
    return name + "_" if name in _ISL_RESERVED else name


def to_isl(e: SizeExpr, name=isl_name) -> str:
    """isl text: ``N - 1``, ``floor((H - 3)/2) + 1``, ``min(M, N)`` (``name`` maps a size
    to its isl name)."""
    return _print(e, atom_style="isl", name=name)


def to_c(e: SizeExpr, name=lambda n: n) -> str:
    """C text over int64 variables (``name`` maps a size to its C name); floor division
    via ``polyc_floordiv``."""
    return _print(e, atom_style="c", name=name)


def _print(e: SizeExpr, atom_style: str, name=lambda n: n) -> str:
    if isinstance(e, MinMax):
        args = [_print(a, atom_style, name) for a in e.args]
        if atom_style == "c":
            return _c_minmax(e.op, args)
        return f"{e.op}({', '.join(args)})"
    parts: list[str] = []
    # Positive terms first: `W - KW + 1` rather than `-KW + W + 1`.
    for atom, c in sorted(e.terms, key=lambda term: term[1] < 0):
        text = name(atom) if isinstance(atom, str) else _print_floordiv(atom, atom_style, name)
        if not isinstance(atom, str) and atom_style == "tc" and c != 1:
            text = f"({text})"  # keep -((N)/3) from reading as (-N)/3
        magnitude = abs(c)
        term = text if magnitude == 1 else f"{magnitude}*{text}"
        if not parts:
            parts.append(term if c > 0 else f"-{term}")
        else:
            parts.append(f"{'+' if c > 0 else '-'} {term}")
    if e.const or not parts:
        if not parts:
            parts.append(str(e.const))
        else:
            parts.append(f"{'+' if e.const > 0 else '-'} {abs(e.const)}")
    return " ".join(parts)


def _print_floordiv(f: FloorDiv, atom_style: str, name) -> str:
    numerator = _print(f.numerator, atom_style, name)
    if atom_style == "isl":
        return f"floor(({numerator})/{f.denominator})"
    if atom_style == "c":
        return f"polyc_floordiv({numerator}, {f.denominator})"
    return f"({numerator})/{f.denominator}"


def _c_minmax(op: str, args: list[str]) -> str:
    result = args[0]
    for other in args[1:]:
        result = f"polyc_{op}({result}, {other})"
    return result
