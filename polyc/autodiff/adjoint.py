"""The backward operator of an operator: reverse mode over its statements.

``adjoint_op(op, wrt)`` returns the IR of an ordinary operator whose inputs are
``op``'s inputs followed by one cotangent ``d_<output>`` per output, and whose outputs
are ``d_<input>`` for each differentiated input, in ``op``'s input order::

    def matmul(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }
  →
    def matmul_grad(float(M, K) A, float(K, N) B, float(M, N) d_C) -> (d_A, d_B) {
      d_B(k, n) +=! d_C(m, n) * A(m, k) where k in 0:K, n in 0:N, m in 0:M
      d_A(m, k) +=! d_C(m, n) * B(k, n) where m in 0:M, k in 0:K, n in 0:N
    }

How:

1. **Versions.** A statement that writes a tensor already written (``O(i, j) = fmax(O(i,
   j), 0)`` after the product that defined ``O``) defines a new version of it
   (``O_1``), so that every value the backward needs has a name. A write that covers
   only part of the tensor, or accumulates into it without ``!``, starts from a copy
   of the previous version (of the part it does not overwrite: a triangle written
   after another reads only the first one's elements).
2. **Reverse sweep.** Statements are visited last to first. A statement whose version
   has a cotangent sends ``seed * ∂rhs/∂read`` to every read of a differentiated
   tensor (:mod:`polyc.autodiff.derivatives`); the seed is the cotangent for ``=`` and
   ``+=``, the product rule for ``*=`` (zeros counted, so a zero factor gets the product
   of the others) and, for ``max=``/``min=``, the cotangent shared evenly by the
   elements equal to the result (ties split, as ``torch.amax``). A version the outputs
   do not depend on (softmax's row maximum) is a constant: nothing flows through it
   (:mod:`polyc.autodiff.activity`). Each read's cotangent
   becomes a gather over the read tensor's indices (:mod:`polyc.autodiff.inversion`):
   no atomics, exact borders.
3. **Recomputation.** The forward statements whose values the backward reads are
   recomputed at the start of the backward operator, where the scheduler may fuse them
   with it; the others are dropped.

The result is printed as TC and checked like any user operator (sema, the bounds
proof), so ``print(polyc.grad(op))`` shows exactly what runs and ``polyc.grad`` applies
to it again. Not differentiable (a :class:`~polyc.errors.SemanticError` naming the
statement): reductions that read the tensor they accumulate into, statements that
read a tensor they overwrite elsewhere than at the element they write, a written
index whose range depends on a summed one, and an index-dependent bound on an index
read with a stride.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from functools import reduce

import islpy as isl

from polyc.autodiff.activity import active_versions
from polyc.autodiff.derivatives import (add, compare, conjunction, const, div, guarded, mul,
                                        plus_size, read_cotangents, select)
from polyc.autodiff.padding import pad_cotangent
from polyc.autodiff.inversion import fresh_index_names, invert
from polyc.errors import SemanticError
from polyc.lang.builtins import is_library_call
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.printer import expr_to_tc
from polyc.lang.ranges import LinearIndex, bound_pieces, linear_expr, shifted
from polyc.lang.types import INT64
from polyc.poly.program import params_prefix, sizes_context


@dataclass(frozen=True)
class _Step:
    """One forward statement, on versions: it defines ``version`` (reading versions);
    ``previous``: the version it starts from when it does not overwrite all of it."""

    statement: ir.Statement
    version: ir.Tensor
    previous: ir.Tensor | None
    covers: bool           # its left-hand ranges cover the whole tensor


def adjoint_op(op: ir.Op, wrt: tuple[str, ...] | None = None) -> ir.Op:
    """The backward operator's IR (see the module docstring), not yet checked."""
    adjoint = ReverseSweep(op, wrt)
    gradients = adjoint.sweep()
    recomputed, _ = adjoint.recomputed()
    statements = recomputed + adjoint.helpers + adjoint.backward
    return ir.Op(name=f"{op.name}_grad", sizes=op.sizes, inputs=op.inputs + adjoint.cotangents,
                 outputs=gradients, temporaries=(), statements=tuple(statements))


def _check_written_ranges(op: ir.Op) -> None:
    for statement in op.statements:
        for index in statement.indices:
            others = statement.range_of(index).depends_on - set(statement.indices)
            if others:
                raise SemanticError(
                    f"cannot differentiate statement {statement.name} yet: the range of "
                    f"`{index}`, an index it writes, depends on `{sorted(others)[0]}`, one "
                    f"it sums over", statement.span)


def _differentiated(op: ir.Op, wrt) -> tuple[str, ...]:
    floats = [t.name for t in op.inputs if t.type.is_float]
    if wrt is None:
        if not floats:
            raise SemanticError(f"`{op.name}` has no floating-point input to differentiate "
                                f"with respect to")
        return tuple(floats)
    if isinstance(wrt, str):
        wrt = (wrt,)
    names = {t.name: t for t in op.inputs}
    for name in wrt:
        if name not in names:
            raise SemanticError(f"`{name}` is not an input of `{op.name}` (its inputs: "
                                f"{', '.join(names) or 'none'})")
        if not names[name].type.is_float:
            raise SemanticError(f"cannot differentiate with respect to `{name}`: it is "
                                f"{names[name].type.name}, and only floating-point inputs "
                                f"have gradients")
    if not wrt:
        raise SemanticError(f"wrt names no input of `{op.name}` to differentiate with "
                            f"respect to")
    return tuple(t.name for t in op.inputs if t.name in wrt)


class ReverseSweep:
    """The reverse sweep over ``op``'s statements for the inputs named in ``wrt``
    (``None``: every floating-point input): :meth:`sweep` writes the backward statements;
    the forward values they read are the versions of :meth:`recomputed`."""

    def __init__(self, op: ir.Op, wrt):
        _check_written_ranges(op)
        self.op = op
        self.wrt = _differentiated(op, wrt)
        external = [f"d_{t.name}" for t in op.inputs + op.outputs]
        for name in external:
            if name in {t.name for t in op.inputs}:
                raise SemanticError(f"cannot name a cotangent or gradient `{name}`: it is "
                                    f"an input of `{op.name}`")
        self.external = set(external)
        self.taken = set(op.tensors) | set(op.sizes) | self.external
        self.tensors: dict[str, ir.Tensor] = dict(op.tensors)
        self.params = params_prefix(op)
        context = sizes_context(op)
        for precondition in op.preconditions:
            context = context.intersect(isl.Set(precondition.condition))
        self.context = context
        self.steps, self.recompute = self._versions()
        self.active, self.constants = active_versions(
            self.steps, self.wrt, {t.name for t in op.inputs}, self.final.values())
        self.pending: dict[str, list[ir.Statement]] = {}
        self.helpers: list[ir.Statement] = []
        self.backward: list[ir.Statement] = []
        self.copies: dict = {}  # (fill, shape) -> the padded copy of a cotangent
        self.made: dict = {}    # (version, helper kind) -> the helper temporaries

    # ------------------------------------------------------------- names

    def fresh(self, base: str) -> str:
        return ir.fresh_name(base, self.taken)

    def _tensor(self, name: str, like: ir.Tensor) -> ir.Tensor:
        tensor = ir.Tensor(name, like.type, like.shape, ir.TEMPORARY)
        self.tensors[name] = tensor
        return tensor

    # ------------------------------------------------------------- 1. versions

    def _versions(self) -> tuple[list[_Step], dict[str, list[ir.Statement]]]:
        """The steps, and the statements that recompute each version."""
        current: dict[str, str] = {t.name: t.name for t in self.op.inputs}
        steps, recompute = [], {}
        for statement in self._materialized_terms():
            target = self.tensors[statement.tensor]
            previous = current.get(statement.tensor)
            rhs = ir.renamed_reads(statement.rhs, current)
            if previous is not None:
                self._check_self_reads(statement, previous, rhs)
            written = [statement.range_of(i) for i in statement.indices]
            covers = all(r.lo == sz.const(0) and r.hi == extent
                         for r, extent in zip(written, target.shape)) and (
                statement.init or all(r.is_box for r in written))  # a `!` fills the box
            accumulates = statement.is_reduction and not statement.init
            if previous is None and statement.tensor not in self.external:
                name = statement.tensor
            else:  # a new version, or a name the backward's signature takes
                name = self.fresh(f"{statement.tensor}_{len(steps)}")
            version = self._tensor(name, target)
            defining = dataclasses.replace(statement, tensor=name, rhs=rhs)
            statements = [defining]
            before = None
            if previous is not None and (accumulates or not covers):
                before = self.tensors[previous]
                # what the statement overwrites need not be copied (nor written before)
                kept = None if accumulates else _written(statement, before.shape)
                statements.insert(0, _copy(version, before, statement.indices, kept))
            steps.append(_Step(defining, version, before, covers))
            recompute[name] = statements
            current[statement.tensor] = name
        self.final = {t.name: current[t.name] for t in self.op.outputs}
        return steps, recompute

    def _materialized_terms(self) -> list[ir.Statement]:
        """The statements, each ``max=``/``min=`` of computed terms split in two: the terms
        into a temporary, then the reduction of it. The backward finds the maximal
        terms by comparing them with the result, which needs the very values the
        maximum was taken of (a C compiler may contract ``a * b + c`` into a fused
        multiply-add in one loop and not in another)."""
        result = []
        for statement in self.op.statements:
            if statement.op not in ("max", "min") or isinstance(statement.rhs, ir.Read) \
                    or statement.tensor in statement.tensors_read:  # refused later
                result.append(statement)
                continue
            target = self.tensors[statement.tensor]
            name = self.fresh(f"{statement.tensor}_terms")
            names = tuple(r.index for r in statement.domain)
            rhs = statement.rhs if statement.rhs.type == target.type else \
                ir.Cast(target.type, statement.rhs)
            # the terms from the origin of the domain's box (bounds moved alike)
            shift = {r.index: r.lo for r in statement.domain}
            shape = tuple(sz.sub(r.hi, r.lo) for r in statement.domain)
            domain = tuple(_from_origin(r, shift) for r in statement.domain)
            self.tensors[name] = ir.Tensor(name, target.type, shape, ir.TEMPORARY)
            rhs = ir.substitute_indices(rhs, {i: plus_size(ir.Index(INT64, i), lo)
                                              for i, lo in shift.items()})
            result.append(ir.Statement(
                name=statement.name, tensor=name, indices=names, op="=", init=False,
                rhs=rhs, domain=domain, reduction_indices=()))
            terms = ir.Read(target.type, name, tuple(
                plus_size(ir.Index(INT64, i), sz.neg(shift[i])) for i in names))
            result.append(dataclasses.replace(statement, rhs=terms))
        return result

    def _check_self_reads(self, statement: ir.Statement, previous: str, rhs: ir.Expr) -> None:
        own = tuple(ir.Index(INT64, i) for i in statement.indices)
        for read in ir.walk(rhs):
            if not (isinstance(read, ir.Read) and read.tensor == previous):
                continue
            if statement.is_reduction:
                raise SemanticError(
                    f"cannot differentiate statement {statement.name}: the reduction reads "
                    f"`{statement.tensor}`, the tensor it accumulates into", statement.span)
            if read.indices != own:
                raise SemanticError(
                    f"cannot differentiate statement {statement.name}: it reads "
                    f"`{expr_to_tc(read).replace(previous, statement.tensor, 1)}` while it "
                    f"overwrites `{statement.tensor}`; read a copy instead", statement.span)

    # ------------------------------------------------------------- 2. the sweep

    def sweep(self) -> tuple[ir.Tensor, ...]:
        """Write the backward statements (``helpers``, then ``backward``) for the cotangents
        (``cotangents``: ``d_<output>``); the gradients, in ``op``'s input order."""
        self.cotangents = cotangents = tuple(ir.Tensor(f"d_{t.name}", t.type, t.shape, ir.INPUT)
                                             for t in self.op.outputs)
        for tensor in cotangents:
            self.tensors[tensor.name] = tensor
        for step in reversed(self.steps):
            version = step.version.name
            if version not in self.active:
                continue
            cotangent = self._flush(version)
            if cotangent is not None:
                self._statement_adjoint(step, cotangent)
        outputs = []
        for name in self.wrt:
            tensor = self.op.tensor(name)
            gradient = ir.Tensor(f"d_{name}", tensor.type, tensor.shape, ir.OUTPUT)
            self.tensors[gradient.name] = gradient
            outputs.append(gradient)
            if self._flush(name, gradient.name) is None:
                self.backward.append(_fill(gradient, const(0, tensor.type),
                                           self._indices(tensor.rank)))
        return tuple(outputs)

    def _flush(self, version: str, name: str | None = None) -> str | None:
        """Emit the statements that sum ``version``'s cotangent; the tensor that holds it
        (``None``: it has none)."""
        contributions = self.pending.pop(version, [])
        output = next((o for o, v in self.final.items() if v == version), None)
        if output is not None and not contributions:
            return f"d_{output}"
        if not contributions:
            return None
        like = self.tensors[version]
        name = name or self.fresh(f"d_{version}")
        self._tensor(name, like)
        indices = self._indices(like.rank)
        first = True
        if output is not None:
            self.backward.append(_fill(self.tensors[name], ir.Read(
                like.type, f"d_{output}", tuple(ir.Index(INT64, i) for i in indices)), indices))
            first = False
        for statement in contributions:
            statement = dataclasses.replace(statement, tensor=name)
            if not first:
                statement = dataclasses.replace(statement, op="+", init=False)
            elif statement.reduction_indices:
                statement = dataclasses.replace(statement, op="+", init=True)
            self.backward.append(statement)
            first = False
        return name

    def _indices(self, rank: int) -> tuple[str, ...]:
        return fresh_index_names(rank, self.taken)

    def _statement_adjoint(self, step: _Step, cotangent: str) -> None:
        statement, version = step.statement, step.version
        at = tuple(ir.Index(INT64, i) for i in statement.indices)
        d_out = ir.Read(version.type, cotangent, at)
        rhs = statement.rhs
        share = self._share(step, rhs)  # how the cotangent reaches one term of rhs
        seed = mul(d_out, share) if share is not None else d_out
        stored = ir.Read(version.type, version.name, at)
        reuse = statement.op == "=" and any(
            isinstance(e, ir.Call) and is_library_call(e.function) for e in ir.walk(rhs))
        for read, value in _grouped(read_cotangents(rhs, seed, self._differentiable)):
            if reuse:  # the version holds the value (exp's derivative): read, not call again
                value = ir.rewrite(value, lambda e: stored if e == rhs else None)
            self._send(read, value, statement, self.tensors[cotangent])
        if step.previous is not None and step.previous.name in self.active:
            self._send_to_previous(step, cotangent)

    def _differentiable(self, tensor: str) -> bool:
        return tensor in self.active and self.tensors[tensor].type.is_float

    def _send(self, read: ir.Read, value: ir.Expr, statement: ir.Statement,
              cotangent: ir.Tensor) -> None:
        """Add the gather that sends ``value`` (a term of ``statement``) to ``read``'s
        elements to the read tensor's pending cotangent."""
        tensor = self.tensors[read.tensor]
        inversion = invert(read, statement, tensor.shape, self.taken, self.params,
                           self.context)
        value = ir.substitute_indices(value, inversion.values)
        ranges = tuple(ir.IndexRange(i, sz.const(0), extent)
                       for i, extent in zip(inversion.indices, tensor.shape)) + inversion.free
        padded = pad_cotangent(value, inversion.guards, cotangent, ranges,
                               frozenset(r.index for r in inversion.free), self.tensors,
                               self.params, self.context, self.fresh(f"{cotangent.name}_padded"),
                               self._indices(cotangent.rank)) \
            if inversion.guards and inversion.free else None  # a sum's guard costs per term
        if padded is None:
            rhs, window = guarded(inversion.guards, value), inversion.free
        else:
            rhs, window = self._padded_copy(padded), padded.ranges[len(inversion.indices):]
        free = []
        for index_range in window:  # a sum of equal terms is a product
            if index_range.index in ir.index_names(rhs):
                free.append(index_range)
            else:
                count = sz.smax(sz.sub(index_range.hi, index_range.lo), sz.const(0))
                rhs = mul(rhs, ir.Cast(rhs.type, ir.SizeValue(INT64, count)))
        domain = tuple(ir.IndexRange(i, sz.const(0), extent)
                       for i, extent in zip(inversion.indices, tensor.shape)) + tuple(free)
        self.pending.setdefault(read.tensor, []).append(ir.Statement(
            name="", tensor=read.tensor, indices=inversion.indices, op="=", init=False,
            rhs=rhs, domain=domain, reduction_indices=tuple(r.index for r in free)))

    def _padded_copy(self, padded) -> ir.Expr:
        """``padded``'s term, its copy made once (the same copy serves every term that
        pads the cotangent by the same border)."""
        if padded.copy is None:
            return padded.value
        key = (padded.fill.rhs, padded.copy.shape)
        name = self.copies.get(key)
        if name is None:
            name = self.copies[key] = padded.copy.name
            self.tensors[name] = padded.copy
            self.backward.append(padded.fill)
        return ir.rewrite(padded.value, lambda e: dataclasses.replace(e, tensor=name)
                          if isinstance(e, ir.Read) and e.tensor == padded.copy.name else None)

    # ------------------------------------------------------------- reductions

    def _share(self, step: _Step, rhs: ir.Expr) -> ir.Expr | None:
        """The factor by which the version's cotangent reaches one term ``rhs`` of its
        reduction (``None``: 1, for ``=`` and ``+=``)."""
        statement, version = step.statement, step.version
        at = tuple(ir.Index(INT64, i) for i in statement.indices)
        if statement.op in ("=", "+"):
            return None
        if statement.op == "*":
            product, zeros = self._product_helpers(step)
            return _factor_share(ir.Read(version.type, product, at),
                                 ir.Read(version.type, zeros, at), rhs)
        count = self._tie_count(step)
        result = ir.Read(version.type, version.name, at)
        return select(compare("==", rhs, result),
                      div(const(1, version.type), ir.Read(version.type, count, at)),
                      const(0, version.type))

    def _helper(self, base: str, step: _Step, start: ir.Expr, op: str, term: ir.Expr) -> str:
        """A temporary shaped like the version: ``start`` everywhere, then ``op``-reduced
        with ``term`` over the statement's domain."""
        version, statement = step.version, step.statement
        name = self.fresh(f"{version.name}_{base}")
        tensor = self._tensor(name, version)
        indices = statement.indices
        self.helpers.append(_fill(tensor, start, indices))
        self.helpers.append(dataclasses.replace(statement, tensor=name, op=op, init=False,
                                                rhs=term))
        return name

    def _product_helpers(self, step: _Step) -> tuple[str, str]:
        """The product of the nonzero factors and the number of zero factors (the previous
        value being one factor when the statement accumulates), made once per version:
        the terms' share and the previous value's read the same ones."""
        key = (step.version.name, "product")
        if key not in self.made:
            self.made[key] = self._make_product_helpers(step)
        return self.made[key]

    def _make_product_helpers(self, step: _Step) -> tuple[str, str]:
        version, rhs = step.version, step.statement.rhs
        zero, one = const(0, version.type), const(1, version.type)
        at = tuple(ir.Index(INT64, i) for i in step.statement.indices)
        previous = ir.Read(version.type, step.previous.name, at) if step.previous else None
        is_zero = compare("==", rhs, zero)
        start_product = one if previous is None else \
            select(compare("==", previous, zero), one, previous)
        start_zeros = zero if previous is None else select(compare("==", previous, zero), one, zero)
        product = self._helper("nonzero_product", step, start_product, "*",
                               select(is_zero, one, rhs))
        zeros = self._helper("zeros", step, start_zeros, "+", select(is_zero, one, zero))
        return product, zeros

    def _tie_count(self, step: _Step) -> str:
        """How many terms (the previous value included) equal the ``max=``/``min=`` result,
        counted once per version."""
        key = (step.version.name, "ties")
        if key not in self.made:
            self.made[key] = self._make_tie_count(step)
        return self.made[key]

    def _make_tie_count(self, step: _Step) -> str:
        version, statement = step.version, step.statement
        zero, one = const(0, version.type), const(1, version.type)
        at = tuple(ir.Index(INT64, i) for i in statement.indices)
        result = ir.Read(version.type, version.name, at)
        start = zero if step.previous is None else select(
            compare("==", ir.Read(version.type, step.previous.name, at), result), one, zero)
        return self._helper("ties", step, start, "+",
                            select(compare("==", statement.rhs, result), one, zero))

    def _send_to_previous(self, step: _Step, cotangent: str) -> None:
        """The previous version's cotangent: the version's where the statement does not
        write, and where it accumulates, the previous value's share."""
        statement, version, previous = step.statement, step.version, step.previous
        indices = statement.indices
        at = tuple(ir.Index(INT64, i) for i in indices)
        d_out = ir.Read(version.type, cotangent, at)
        inside = None
        if statement.is_reduction and not statement.init:
            old = ir.Read(version.type, previous.name, at)
            if statement.op == "+":
                inside = d_out
            elif statement.op == "*":
                product, zeros = self._product_helpers(step)
                inside = mul(d_out, _factor_share(ir.Read(version.type, product, at),
                                                  ir.Read(version.type, zeros, at), old))
            else:
                result = ir.Read(version.type, version.name, at)
                count = ir.Read(version.type, self._tie_count(step), at)
                inside = select(compare("==", old, result), div(d_out, count),
                                const(0, version.type))
        written = _written(statement, previous.shape)
        if step.covers or written is None:
            if inside is None:
                return  # overwritten everywhere: the previous value does not matter
            value = inside
        else:
            value = select(written, inside if inside is not None else const(0, version.type),
                           d_out)
        domain = tuple(ir.IndexRange(i, sz.const(0), extent)
                       for i, extent in zip(indices, previous.shape))
        self.pending.setdefault(previous.name, []).append(ir.Statement(
            name="", tensor=previous.name, indices=indices, op="=", init=False, rhs=value,
            domain=domain, reduction_indices=()))

    # ------------------------------------------------------------- 3. recomputation

    def forward(self) -> list[ir.Statement]:
        """Every version's statements, in forward order."""
        return [_as_type(s, self.tensors[s.tensor]) for step in self.steps
                for s in self.recompute[step.version.name]]

    def recomputed(self, save=lambda version: False) -> tuple[list[ir.Statement], list[str]]:
        """The forward statements whose values the backward reads, in forward order, and
        the versions it reads that ``save`` chooses to take from the forward instead (the
        backward's inputs then: what computes them is not needed)."""
        needed = set()
        for statement in self.helpers + self.backward:
            needed |= ir.tensors_read(statement.rhs) | {statement.tensor}
        kept, saved = [], []
        for step in reversed(self.steps):
            name = step.version.name
            if name not in needed:
                continue
            if save(name):
                saved.insert(0, name)
                continue
            for statement in self.recompute[name]:
                needed |= ir.tensors_read(statement.rhs)
            kept.append(name)
        result = []
        for step in self.steps:
            if step.version.name in kept:
                result += [_as_type(s, self.tensors[s.tensor]) for s in
                           self.recompute[step.version.name]]
        return result, saved


# ----------------------------------------------------------------- helpers


def _from_origin(r: ir.IndexRange, shift: dict) -> ir.IndexRange:
    """``r`` for the indices less ``shift`` (each index's box start): ``0:hi - lo``, and
    its index-dependent bounds over the shifted indices."""
    def moved(bound, combine):
        if bound is None:
            return None
        pieces = [shifted(LinearIndex(p.coefficients, reduce(
            sz.add, (sz.scale(shift[n], c) for n, c in p.coefficients), p.offset)),
            sz.neg(shift[r.index])) for p in bound_pieces(bound, combine)]
        exprs = tuple(linear_expr(p) for p in pieces)
        return exprs[0] if len(exprs) == 1 else ir.Call(INT64, combine, exprs)
    return ir.IndexRange(r.index, sz.const(0), sz.sub(r.hi, r.lo),
                         moved(r.lo_bound, "max"), moved(r.hi_bound, "min"))


def _bounds(r: ir.IndexRange) -> tuple[ir.Expr, ...]:
    """The conditions of ``r``'s index-dependent bounds (none for a box)."""
    index = ir.Index(INT64, r.index)
    return tuple(compare(op, index, bound) for op, bound in ((">=", r.lo_bound),
                                                              ("<", r.hi_bound))
                 if bound is not None)


def _grouped(cotangents) -> list[tuple[ir.Read, ir.Expr]]:
    """One summed cotangent per distinct read (``X(n, d)`` read twice gets one sum).

    Where every term is the same value (``(X - mu) * (X - mu)`` sends ``d * (X - mu)``
    to each read of ``X``), its first two are ``2 * value``: ``a + a`` is ``2 * a``
    exactly, and the value is computed once."""
    terms: dict[tuple, list] = {}
    for item in cotangents:
        terms.setdefault((item.read.tensor, item.read.indices), [item.read]).append(item.value)
    result = []
    for read, *values in terms.values():
        if len(values) > 1 and all(v == values[0] for v in values):
            values = [mul(const(2, values[0].type), values[0])] + values[2:]
        result.append((read, reduce(add, values)))
    return result


def _factor_share(product: ir.Expr, zeros: ir.Expr, factor: ir.Expr) -> ir.Expr:
    """∂(product of all factors)/∂factor from the product of the nonzero factors and the
    number of zero factors: exact when factors are zero, without dividing by zero."""
    zero, one = const(0, product.type), const(1, product.type)
    return select(compare("==", zeros, zero), div(product, factor),
                  select(conjunction([compare("==", zeros, one), compare("==", factor, zero)]),
                         product, zero))


def _written(statement: ir.Statement, shape: tuple[sz.SizeExpr, ...]) -> ir.Expr | None:
    """The condition on a tensor's indices that ``statement`` writes the element (its
    left-hand ranges and their bounds, but those true of every element of ``shape``);
    ``None``: every element."""
    ranges = (statement.range_of(i) for i in statement.indices)
    return conjunction(
        c for r, extent in zip(ranges, shape)
        for c in ((compare(">=", ir.Index(INT64, r.index), ir.SizeValue(INT64, r.lo)),)
                  if r.lo != sz.const(0) else ())
        + ((compare("<", ir.Index(INT64, r.index), ir.SizeValue(INT64, r.hi)),)
           if r.hi != extent else ()) + _bounds(r))


def _copy(version: ir.Tensor, previous: ir.Tensor, indices: tuple[str, ...],
          overwritten: ir.Expr | None = None) -> ir.Statement:
    """``version = previous`` where ``overwritten`` fails (everywhere without it): a
    previous version written only in part is read only where it was written."""
    value: ir.Expr = ir.Read(previous.type, previous.name,
                             tuple(ir.Index(INT64, i) for i in indices))
    if overwritten is not None:
        value = select(overwritten, const(0, previous.type), value)
    return _fill(version, value, indices)


def _fill(tensor: ir.Tensor, value: ir.Expr, indices: tuple[str, ...]) -> ir.Statement:
    """``tensor(indices) = value`` over the whole tensor."""
    domain = tuple(ir.IndexRange(i, sz.const(0), extent) for i, extent in zip(indices,
                                                                              tensor.shape))
    return ir.Statement(name="", tensor=tensor.name, indices=indices, op="=", init=False,
                        rhs=value, domain=domain, reduction_indices=())


def _as_type(statement: ir.Statement, tensor: ir.Tensor) -> ir.Statement:
    """``statement`` converting its value to ``tensor``'s type when sema would infer
    another (a forward output declared wider than its expression)."""
    if statement.rhs.type == tensor.type:
        return statement
    return dataclasses.replace(statement, rhs=ir.Cast(tensor.type, statement.rhs))
