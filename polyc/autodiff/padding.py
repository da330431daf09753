"""Borders by bounds and padding: an adjoint whose guards only keep the cotangent's read
inside it needs no guard.

The data gradient of a valid convolution, as index inversion writes it::

    d_I(n, c, h, w) +=! h - kh >= 0 && h - kh < HO && …
                        ? d_O(n, m, h - kh, w - kw) * W(m, c, kh, kw) : 0

evaluates a condition per term, which keeps the loop nest from being register-blocked
like a convolution (measured: 0.58 s against 26 ms for the padded form at the bench
sizes). When the guards are exactly the condition that the cotangent's read lies
inside the cotangent, and that read is a factor of the term, the term is zero wherever
the guards fail, and each dimension of the read is kept inside one of two ways:

- a dimension that moves with one window index ``kh`` (coefficient ±1) and outer
  indices of the gradient bounds the window index: ``kh in max(0, h - HO + 1):min(KH,
  h + 1)``, so that no zero term is summed (:func:`_window_bounds`);
- the dimension of the innermost gradient index the read has (``w - kw``), along which
  a vector loop or a register block runs and bounds would make ragged ranges, reads a
  copy of the cotangent padded with zeros to every index the term may compute::

    d_O_padded(n, m, y, x) = x - (KW - 1) >= 0 && … ? d_O(n, m, y, x - (KW - 1)) : 0
    d_I(n, c, h, w) +=! d_O_padded(n, m, h - kh, w - kw + KW - 1) * W(m, c, kh, kw)
                        where …, kh in max(0, h + (KH - H)):min(KH, h + 1), kw in 0:KW

The data gradient then sums the forward's terms plus the zeros of the padded columns
(W / WO of them: 3.7% at the benchmark's 56 x 56 images, 7.5% when the rows were padded
too: 5.7-5.8 ms then, 5.1-5.3 now, the forward 4.8-5.3). isl checks the conditions (the
guards equal the read's bounds on the adjoint's domain; every other read of the term
stays inside its tensor on the whole domain); otherwise the guards stay. The copy is
made for sums only (a guard evaluated once per element costs less than a copy).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.autodiff.derivatives import compare, conjunction, const, plus_size, select
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.guards import condition_to_isl
from polyc.lang.ranges import (LinearIndex, affine_of, linear_to_isl, negated, shifted,
                               tightened, with_bounding_boxes)
from polyc.lang.sizes import isl_name
from polyc.lang.types import INT64
from polyc.poly.program import range_constraints


@dataclass(frozen=True)
class Padded:
    """A term without guards over its ranges, the window indices' bounded, reading a
    padded copy where one is needed (``copy`` and ``fill``: the statement that fills it)."""

    value: ir.Expr
    ranges: tuple[ir.IndexRange, ...]
    copy: ir.Tensor | None
    fill: ir.Statement | None


def pad_cotangent(value: ir.Expr, guards: tuple[ir.Expr, ...], cotangent: ir.Tensor,
                  ranges: tuple[ir.IndexRange, ...], free: frozenset[str], tensors: dict,
                  params: str, context: isl.Set, name: str, indices: tuple[str, ...]
                  ) -> Padded | None:
    """``value`` (a term over ``ranges``, valid where ``guards`` hold; ``free``: its
    reduction indices, the others the gradient's, outermost first) without
    guards: bounds of the window indices and reads of a zero-padded copy ``name`` of
    ``cotangent`` (dims indexed by ``indices``); ``None`` when the guards do more than
    keep the cotangent's read inside."""
    seed = next((f for f in _factors(value)
                 if isinstance(f, ir.Read) and f.tensor == cotangent.name), None)
    guard = condition_to_isl(conjunction(guards)) if guards else None
    if seed is None or guard is None:
        return None
    linear = [affine_of(index) for index in seed.indices]
    if any(form is None for form in linear):
        return None
    names = ", ".join(isl_name(r.index) for r in ranges)
    box = " and ".join(f"{sz.to_isl(r.lo)} <= {isl_name(r.index)} < {sz.to_isl(r.hi)}"
                       for r in ranges) or "true"
    domain = isl.Set(f"{params} -> {{ [{names}] : {box} }}").intersect_params(context)
    guarded = domain.intersect(isl.Set(f"{params} -> {{ [{names}] : {guard} }}"))
    if not guarded.is_equal(domain.intersect(_inside(seed, cotangent, names, params))):
        return None
    for read in ir.walk(value):
        if isinstance(read, ir.Read) and read is not seed and read.indices and \
                not domain.is_subset(_inside(read, tensors[read.tensor], names, params)):
            return None
    ranges = _window_bounds(linear, cotangent, ranges, free)
    bounds = " and ".join(c for r in ranges for c in range_constraints(r))
    domain = domain.intersect(isl.Set(f"{params} -> {{ [{names}] : {bounds} }}"))
    inside = [domain.is_subset(_inside_dim(form, extent, names, params))
              for form, extent in zip(linear, cotangent.shape)]
    if all(inside):
        return Padded(value, ranges, None, None)
    # the sizes where the term has points: elsewhere the copy is never read, and an
    # extent below zero leaves it empty (a max(0, ...) in a stride cost a vector fill)
    used = domain.params()
    lows, extents = [], []
    bounds = {r.index: (r.lo, sz.sub(r.hi, sz.const(1))) for r in ranges}
    for form, kept, extent in zip(linear, inside, cotangent.shape):
        if kept:
            lows.append(sz.const(0))
            extents.append(extent)
            continue
        low = high = form.offset
        for index, c in form.coefficients:
            first, last = bounds[index]
            low = sz.add(low, sz.scale(first if c > 0 else last, c))
            high = sz.add(high, sz.scale(last if c > 0 else first, c))
        lows.append(low)
        extent = sz.add(sz.sub(high, low), sz.const(1))
        if not used.is_subset(isl.Set(f"{params} -> {{ : {sz.to_isl(extent)} >= 0 }}")):
            extent = sz.smax(extent, sz.const(0))
        extents.append(extent)
    copy = ir.Tensor(name, cotangent.type, tuple(extents), ir.TEMPORARY)
    source = tuple(plus_size(ir.Index(INT64, y), low) for y, low in zip(indices, lows))
    points = isl.Set(f"{params} -> {{ [{', '.join(isl_name(y) for y in indices)}] : " + (
        " and ".join(f"0 <= {isl_name(y)} < {sz.to_isl(e)}" for y, e in zip(indices, extents))
        or "true") + " }").intersect_params(context)
    conditions = []
    for y, low, index, extent in zip(indices, lows, source, cotangent.shape):
        at = f"{isl_name(y)} + ({sz.to_isl(low)})"
        for text, condition in ((f"{at} >= 0", compare(">=", index, ir.Const(INT64, 0))),
                                (f"{at} < {sz.to_isl(extent)}",
                                 compare("<", index, ir.SizeValue(INT64, extent)))):
            if not points.is_subset(isl.Set(
                    f"{params} -> {{ [{', '.join(isl_name(y) for y in indices)}] : {text} }}")):
                conditions.append(condition)
    inside_copy = conjunction(conditions)
    fill = ir.Statement(
        name="", tensor=name, indices=indices, op="=", init=False,
        rhs=ir.Read(cotangent.type, cotangent.name, source) if inside_copy is None else
        select(inside_copy, ir.Read(cotangent.type, cotangent.name, source),
               const(0, cotangent.type)),
        domain=tuple(ir.IndexRange(y, sz.const(0), e) for y, e in zip(indices, extents)),
        reduction_indices=())
    moved = ir.Read(cotangent.type, name, tuple(
        plus_size(index, sz.neg(low)) for index, low in zip(seed.indices, lows)))
    return Padded(ir.rewrite(value, lambda e: moved if e is seed else None), ranges, copy, fill)


def _window_bounds(linear: list[LinearIndex], cotangent: ir.Tensor,
                   ranges: tuple[ir.IndexRange, ...], free: frozenset[str]
                   ) -> tuple[ir.IndexRange, ...]:
    """``ranges`` with each window index bounded to keep its dimension of the cotangent's
    read inside: a dimension that moves with one reduction index ``r`` (coefficient ±1)
    and outer indices of the gradient (``h - r``: ``r in max(0, h - HO + 1):min(R, h +
    1)``). The dimension that moves with the innermost index of the gradient the read
    has (``w - s``) keeps its box and reads the padded copy: a vector loop or a register
    block runs along that index (the vector of NCHW's ``w``, the register block of
    NHWC's), and bounds would cut it into ragged ranges (a convolution's data gradient
    with both windows bounded ran 10x slower in NCHW, 1.6x in NHWC)."""
    read = {index for form in linear for index in form.indices}
    inner = next((r.index for r in reversed(ranges) if r.index not in free and r.index in read),
                 None)
    ranges = list(ranges)
    for form, extent in zip(linear, cotangent.shape):
        moving = [(index, c) for index, c in form.coefficients if index in free]
        if inner in form.indices or len(moving) != 1 or moving[0][1] not in (1, -1):
            continue
        index, c = moving[0]
        rest = LinearIndex(tuple((n, d) for n, d in form.coefficients if n != index),
                           form.offset)
        if c == 1:  # 0 <= index + rest < extent
            lower, upper = negated(rest), shifted(negated(rest), extent)
        else:       # 0 <= rest - index < extent
            lower, upper = shifted(rest, sz.sub(sz.const(1), extent)), shifted(rest, sz.const(1))
        position = next(k for k, r in enumerate(ranges) if r.index == index)
        ranges[position] = tightened(tightened(ranges[position], "lower", lower), "upper",
                                     upper)
    return with_bounding_boxes(tuple(ranges))


def _factors(value: ir.Expr):
    """The factors of a product (``value`` itself when it is not one)."""
    if isinstance(value, ir.Binary) and value.op == "*":
        yield from _factors(value.lhs)
        yield from _factors(value.rhs)
    else:
        yield value


def _inside(read: ir.Read, tensor: ir.Tensor, names: str, params: str) -> isl.Set:
    """The points of the term's domain where ``read`` lies inside ``tensor`` (none when
    an index is not affine)."""
    result = isl.Set(f"{params} -> {{ [{names}] }}")
    for index, extent in zip(read.indices, tensor.shape):
        form = affine_of(index)
        if form is None:
            return isl.Set(f"{params} -> {{ [{names}] : 1 = 0 }}")
        result = result.intersect(_inside_dim(form, extent, names, params))
    return result


def _inside_dim(form: LinearIndex, extent: sz.SizeExpr, names: str, params: str) -> isl.Set:
    """The points where ``form`` lies in ``0:extent``."""
    return isl.Set(f"{params} -> {{ [{names}] : "
                   f"0 <= {linear_to_isl(form)} < {sz.to_isl(extent)} }}")
