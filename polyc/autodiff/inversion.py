"""Index inversion: the adjoint of a read, written over the read tensor's own indices.

A statement over domain ``D`` that reads ``T(f(z))`` sends its cotangent ``c(z)`` to
``d_T(f(z))`` for every ``z`` in ``D``. Written as a scatter this needs atomics; polyc
writes it as a gather instead, a comprehension over ``d_T``'s indices ``a``::

    d_T(a) += sum of c(z) over { z in D : f(z) = a }

The change of basis solves ``f(z) = a`` for some of the forward indices (the pivots),
leaving the others free: they become the adjoint's reduction indices, with their
forward ranges. The pivots' ranges become guards. For a convolution's input
``I(n, c, h + r, w + s)``, ``h`` and ``w`` are solved (``h ↦ h - r``), ``r``, ``s`` and the
output channels stay free, and the guards are the borders::

    d_I(n, c, h, w) +=! h - r >= 0 && h - r < HO && …
                        ? d_O(n, m, h - r, w - s) * W(m, c, r, s) : 0

A dimension whose pivot has a coefficient other than ±1 (a stride, ``2*h + r``) is
solved by an exact division under a divisibility guard (``(h - r) % 2 == 0``); a
dimension with nothing left to solve (a diagonal ``A(i, i)``, a constant index) becomes
an equality guard, and so does a data-dependent one: the adjoint of a gather
``T(I(b), d)`` is ``d_T(t, d) +=! t == I(b) ? … : 0``, which the scheduler runs as a
scatter-add, one iteration of ``t`` per lookup (:mod:`polyc.scheduling.selected_loops`).
Pivots are chosen among the statement's left-hand indices first, so that the free
indices are the window and reduction indices (few points each).

A domain with index-dependent ranges (a triangle ``k in i + 1:M``, a band) keeps its
bounds as guards over the adjoint's indices: the free indices run over their boxes,
and ``trmm``'s read ``B(k, j)`` gives ``d_B(k, j) +=! k >= i + 1 ? … : 0 where i in
0:M``, which the canonical form makes a triangle again (``i in 0:k``,
:mod:`polyc.rewrite.split_selects`).

isl proves every inversion exact (:func:`_prove_exact`): the adjoint's points map
one-to-one onto the forward points whose read is inside ``T``, and each lands on the
element it was read from. Guards that hold on the whole adjoint domain are dropped.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.autodiff.derivatives import compare
from polyc.errors import InternalError, SemanticError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import affine_of, bound_pieces
from polyc.lang.sizes import isl_name
from polyc.lang.types import INT64
from polyc.poly.program import range_constraints


@dataclass(frozen=True)
class Inversion:
    """The adjoint's indices for one read (see the module docstring)."""

    indices: tuple[str, ...]               # one per dimension of the read tensor
    free: tuple[ir.IndexRange, ...]        # forward indices left free: the reduction
    values: dict                           # forward index -> its value (ir.Expr)
    guards: tuple[ir.Expr, ...]            # where a point of the adjoint is a forward point


@dataclass
class _Form:
    """``sum(coefficient * name) + offset`` over forward and adjoint index names; an
    exact quotient by ``divisor`` when it is not 1."""

    coefficients: dict
    offset: sz.SizeExpr
    divisor: int = 1

    @staticmethod
    def of_name(name: str) -> _Form:
        return _Form({name: 1}, sz.const(0))

    def scaled_sum(self, factor: int, other: _Form) -> _Form:
        """``self + factor * other`` (both exact, divisor 1)."""
        coefficients = dict(self.coefficients)
        for name, c in other.coefficients.items():
            coefficients[name] = coefficients.get(name, 0) + factor * c
        return _Form({n: c for n, c in coefficients.items() if c},
                     sz.add(self.offset, sz.scale(other.offset, factor)))

    def substituted(self, values: dict) -> _Form:
        result = _Form({}, self.offset, self.divisor)
        for name, c in self.coefficients.items():
            value = values.get(name)
            if value is None or value.divisor != 1:
                result = result.scaled_sum(c, _Form.of_name(name))
            else:
                result = result.scaled_sum(c, value)
        result.divisor = self.divisor
        return result

    def isl(self) -> str:
        terms = [f"{c}*{isl_name(n)}" for n, c in sorted(self.coefficients.items())]
        text = " + ".join([f"({t})" for t in terms] + [f"({sz.to_isl(self.offset)})"])
        return text if self.divisor == 1 else f"floor(({text})/{self.divisor})"

    def numerator_expr(self, order: list[str]) -> ir.Expr:
        expr = None
        for name in sorted(self.coefficients, key=order.index):
            c = self.coefficients[name]
            term: ir.Expr = ir.Index(INT64, name)
            if abs(c) != 1:
                term = ir.Binary(INT64, "*", ir.Const(INT64, abs(c)), term)
            if expr is None:
                expr = term if c > 0 else ir.Unary(INT64, "-", term)
            else:
                expr = ir.Binary(INT64, "+" if c > 0 else "-", expr, term)
        offset = self.offset
        if expr is None:
            return ir.SizeValue(INT64, offset)
        if isinstance(offset, sz.Affine) and offset.is_constant:
            if offset.const:
                expr = ir.Binary(INT64, "+" if offset.const > 0 else "-", expr,
                                 ir.Const(INT64, abs(offset.const)))
            return expr
        return ir.Binary(INT64, "+", expr, ir.SizeValue(INT64, offset))

    def expr(self, order: list[str]) -> ir.Expr:
        numerator = self.numerator_expr(order)
        if self.divisor == 1:
            return numerator
        return ir.Binary(INT64, "/", numerator, ir.Const(INT64, self.divisor))


def invert(read: ir.Read, statement: ir.Statement, shape: tuple[sz.SizeExpr, ...],
           taken: set[str], params: str, context: isl.Set) -> Inversion:
    """The adjoint indices of ``read`` in ``statement`` (see the module docstring);
    ``taken``: names the adjoint's new indices must avoid; ``params``, ``context``:
    the sizes as isl parameters and what is known of them."""
    forms: list[_Form | None] = []  # None: a data-dependent dimension
    for index in read.indices:
        linear = affine_of(index)
        forms.append(None if linear is None else
                     _Form(dict(linear.coefficients), linear.offset))
    forward = [r.index for r in statement.domain]
    lhs = set(statement.indices)
    solved: dict[str, _Form] = {}
    names: list[str | None] = []
    for d, form in enumerate(forms):
        if form is None:
            names.append(None)
            continue
        current = form.substituted(solved)
        pivot = _pivot(current, d, forms, forward, lhs, solved)
        if pivot is None:
            names.append(None)
            continue
        names.append(pivot)
        c = current.coefficients[pivot]
        rest = current.scaled_sum(-c, _Form.of_name(pivot))
        # pivot = (a_d - rest) / c, the new index a_d named after the pivot
        value = _Form.of_name(_adjoint_name(pivot)).scaled_sum(-1, rest)
        if abs(c) == 1:
            value = _Form({n: v * c for n, v in value.coefficients.items()},
                          sz.scale(value.offset, c))
            solved = {z: f.substituted({pivot: value}) for z, f in solved.items()}
        else:
            if c < 0:
                value = _Form({n: -v for n, v in value.coefficients.items()},
                              sz.neg(value.offset))
            value.divisor = abs(c)
        solved[pivot] = value
    fresh = iter(fresh_index_names(sum(n is None for n in names), set(forward) | taken))
    indices = tuple(name if name is not None else next(fresh) for name in names)
    # the adjoint's index named after a pivot is spelled with a marker until here
    # (each solve substituted its value into the earlier ones: no value mentions a
    # solved forward index, and after the renaming a name in a value is an adjoint index)
    rename = {_adjoint_name(p): p for p in names if p is not None}
    solved = {z: _renamed(f, rename) for z, f in solved.items()}
    # the free indices run over their boxes; every index-dependent bound is a guard
    free = tuple(ir.IndexRange(r.index, r.lo, r.hi) for r in statement.domain
                 if r.index not in solved)
    order = list(indices) + [r.index for r in free]
    ranges = {r.index: r for r in statement.domain}
    values = {z: solved[z].expr(order) if z in solved else ir.Index(INT64, z) for z in forward}
    candidates: list[tuple[str | None, ir.Expr]] = []
    for z, value in solved.items():
        text, expr = value.isl(), value.expr(order)
        if value.divisor != 1:
            numerator = _Form(value.coefficients, value.offset)
            candidates.append((f"({numerator.isl()}) mod {value.divisor} = 0",
                               compare("==", ir.Binary(INT64, "%", numerator.expr(order),
                                                       ir.Const(INT64, value.divisor)),
                                       ir.Const(INT64, 0))))
        lo, hi = ranges[z].lo, ranges[z].hi
        candidates.append((f"{text} >= {sz.to_isl(lo)}",
                           compare(">=", expr, ir.SizeValue(INT64, lo))))
        candidates.append((f"{text} < {sz.to_isl(hi)}",
                           compare("<", expr, ir.SizeValue(INT64, hi))))
    candidates += _bound_guards(statement, solved, order)
    for d, name in enumerate(names):
        if name is None and forms[d] is None:  # the element a gather reads: a data guard
            candidates.append((None, compare("==", ir.Index(INT64, indices[d]),
                                             ir.substitute_indices(read.indices[d], values))))
        elif name is None:
            value = forms[d].substituted(solved)
            candidates.append((f"{isl_name(indices[d])} = {value.isl()}",
                               compare("==", ir.Index(INT64, indices[d]), value.expr(order))))
    space = _space_text(indices, shape, free)
    box = isl.Set(f"{params} -> {{ [{', '.join(isl_name(n) for n in order)}] : {space} }}")
    box = box.intersect_params(context)
    kept = _needed(candidates, box, params, order)
    guard_text = " and ".join(f"({t})" for t, _ in kept if t is not None) or "true"
    _prove_exact(statement, forms, solved, order, box, guard_text, shape, params, context)
    return Inversion(indices, free, values, tuple(expr for _, expr in kept))


def _needed(candidates: list, box: isl.Set, params: str, order: list[str]) -> list:
    """The candidate guards that some point of ``box`` fails where the other kept guards
    hold (a data guard, without isl text, is always kept)."""
    space = ", ".join(isl_name(n) for n in order)
    sets = {text: isl.Set(f"{params} -> {{ [{space}] : {text} }}")
            for text, _ in candidates if text is not None}
    kept = [c for c in candidates if c[0] is None or not box.is_subset(sets[c[0]])]
    for candidate in list(kept):
        if candidate[0] is None:
            continue
        others = box
        for text, _ in kept:
            if text is not None and text != candidate[0]:
                others = others.intersect(sets[text])
        if others.is_subset(sets[candidate[0]]):
            kept.remove(candidate)
    return kept


def _bound_guards(statement: ir.Statement, solved: dict, order: list[str]) -> list:
    """The statement's index-dependent bounds (``k >= i + 1``, each argument of a ``max``
    or ``min`` apart) over the adjoint's indices, as (isl text, condition) pairs."""
    result = []
    for r in statement.domain:
        for bound, op, combine in ((r.lo_bound, ">=", "max"), (r.hi_bound, "<", "min")):
            for piece in bound_pieces(bound, combine) if bound is not None else ():
                left = _Form.of_name(r.index)
                right = _Form(dict(piece.coefficients), piece.offset)
                if any(solved[z].divisor != 1 for form in (left, right)
                       for z in form.coefficients if z in solved):
                    raise SemanticError(
                        f"cannot differentiate statement {statement.name} yet: the range "
                        f"of `{r.index}` depends on an index read with a stride",
                        statement.span)
                left, right = left.substituted(solved), right.substituted(solved)
                result.append((f"{left.isl()} {op} {right.isl()}",
                               compare(op, left.expr(order), right.expr(order))))
    return result


def _pivot(current: _Form, d: int, forms, forward, lhs, solved) -> str | None:
    """The forward index to solve dimension ``d`` for: a left-hand index first, then one
    with a unit coefficient; an index with another coefficient only if no other
    dimension uses it (its value is then a quotient, which no other form may take)."""
    candidates = []
    for z, c in current.coefficients.items():
        if z not in forward or z in solved:
            continue
        elsewhere = any(other is not None and z in other.coefficients
                        for k, other in enumerate(forms) if k != d)
        if abs(c) != 1 and elsewhere:
            continue
        candidates.append((z not in lhs, abs(c) != 1, forward.index(z), z))
    return min(candidates)[3] if candidates else None


_MARK = "\0"


def _adjoint_name(pivot: str) -> str:
    return _MARK + pivot


def _renamed(form: _Form, rename: dict) -> _Form:
    return _Form({rename.get(n, n): c for n, c in form.coefficients.items()}, form.offset,
                 form.divisor)


def fresh_index_names(count: int, taken: set[str]) -> tuple[str, ...]:
    """``count`` index names ``i0``, ``i1``, ... that are not ``taken``."""
    names, k = [], 0
    while len(names) < count:
        if f"i{k}" not in taken:
            names.append(f"i{k}")
        k += 1
    return tuple(names)


def _space_text(indices, shape, free) -> str:
    parts = [f"0 <= {isl_name(a)} < {sz.to_isl(extent)}" for a, extent in zip(indices, shape)]
    parts += [f"{sz.to_isl(r.lo)} <= {isl_name(r.index)} < {sz.to_isl(r.hi)}" for r in free]
    return " and ".join(parts) or "true"


def _prove_exact(statement, forms, solved, order, box, guard_text, shape, params,
                 context) -> None:
    """isl's proof that the adjoint's points (``box`` under the guards) correspond one to
    one to the forward points whose read lies inside the tensor, each mapped to the
    element it reads (in its affine dimensions: a gathered dimension's guard compares
    data, which the C code evaluates)."""
    forward = [r.index for r in statement.domain]
    tuple_a = ", ".join(isl_name(n) for n in order)
    values = ", ".join(solved[z].isl() if z in solved else isl_name(z) for z in forward)
    to_forward = isl.Map(f"{params} -> {{ [{tuple_a}] -> [{values}] : {guard_text} }}")
    to_forward = to_forward.intersect_domain(box)
    gathered = [k for k, form in enumerate(forms) if form is None]
    for k in reversed(gathered):  # which element a gather reads is the data's business
        to_forward = to_forward.project_out(isl.dim_type.in_, k, 1)
    order = [name for k, name in enumerate(order) if k not in gathered]
    tuple_a = ", ".join(isl_name(n) for n in order)
    tuple_z = ", ".join(isl_name(z) for z in forward)
    inside = " and ".join(
        [c for r in statement.domain for c in range_constraints(r)]
        + [f"0 <= {form.isl()} < {sz.to_isl(extent)}" if form is not None
           else f"{sz.to_isl(extent)} > 0" for form, extent in zip(forms, shape)])
    domain = isl.Set(f"{params} -> {{ [{tuple_z}] : {inside or 'true'} }}").intersect_params(
        context)
    affine = [k for k, form in enumerate(forms) if form is not None]
    access = isl.Map(f"{params} -> {{ [{tuple_z}] -> "
                     f"[{', '.join(forms[k].isl() for k in affine)}] }}")
    lands = to_forward.apply_range(access)
    # the adjoint's index of dimension k, in ``order`` without the gathered dimensions
    landing = [isl_name(order[k - sum(g < k for g in gathered)]) for k in affine]
    identity = isl.Map(f"{params} -> {{ [{tuple_a}] -> [{', '.join(landing)}] }}")
    if not (to_forward.range().is_equal(domain) and to_forward.is_injective()
            and lands.is_subset(identity)):
        raise InternalError(f"the inversion of a read in statement {statement.name} is not "
                            f"exact: {to_forward}")
