"""Vector reductions: a SIMD loop whose body reduces into an element the loop does not
move keeps the accumulator in a scalar, updated from vectors of partial results folded
in a tree after the loop (:func:`_reduction_loop`); a vector loop around a ``jam`` loop
(:mod:`polyc.scheduling.jam`) unrolls the rows into its body, one accumulator per row,
and lets OpenMP vectorise the reduction. Float ``max``/``min`` track NaNs beside the
plain reduction, as numpy's do.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_expr import combine, identity
from polyc.codegen.c_names import braced
from polyc.codegen.isl_ast import constant_trip, exclusive_upper_bound, mentions, single
from polyc.lang import ir
from polyc.lang import types as ty
from polyc.machine.rules import reduction_chains, vector_lanes
from polyc.scheduling.jam import JAM_MARK
from polyc.scheduling.marks import SIMD_MARK, SIMD_REDUCTION_MARK, ast_children, node_mark

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter, Scope


def jammed(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str, marks: frozenset,
           scope: Scope):
    """A vector loop around a ``jam`` loop (:mod:`polyc.scheduling.jam`) of one statement:
    for a full block of rows, the jam loop unrolled into the vector loop's body,
    each row with its own accumulator when the vector loop is a reduction; the
    loops as they are for a partial block. ``None`` for any other loop."""
    inner = single(node.for_get_body())
    if node_mark(inner) != JAM_MARK:
        return None
    rows = inner.mark_get_node()
    if rows.get_type() != isl.ast_node_type.for_:
        return None
    row = emitter.expr(rows.for_get_iterator())
    trip = constant_trip(rows, row, [iterator])
    body = single(rows.for_get_body())
    if trip is None or body.get_type() != isl.ast_node_type.user:
        return None
    call = body.user_get_expr()
    copies = [cgen.Initializer(cgen.Value("const int64_t", row), str(k))
              for k in range(trip.trip)]
    if SIMD_REDUCTION_MARK in marks:
        full = _jammed_reduction(emitter, node, iterator, row, call, copies, scope)
        if full is None:
            return None
    else:
        full = cgen.Module([cgen.Pragma("omp simd"), emitter.loop(node, cgen.Block([
            cgen.Block([copy, emitter.user(call, scope)]) for copy in copies]), iterator)])
    if trip.full is None:
        return full
    partial = emitter.loop(node, emitter.node(node.for_get_body(), scope), iterator)
    if SIMD_MARK in marks:
        partial = cgen.Module([cgen.Pragma("omp simd"), partial])
    return cgen.If(emitter.expr(trip.full), braced(full), braced(partial))


def _jammed_reduction(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str, row: str,
                      call: isl.AstExpr, copies: list, scope: Scope):
    """The vector reduction loop of :func:`jammed`: one accumulator per row. Rows
    that accumulate into one element (a sum over rows too) start the accumulators
    after the first at the identity and combine them after the loop."""
    parts = emitter.vector_reduction_call(call, iterator)
    if parts is None:
        return None
    stmt, bound, outer, inner = parts
    statement = stmt.statement
    shared = not any(mentions(bound[i], row) for i in statement.indices)
    tensor, target, current, value = emitter.accumulator(statement, emitter.exprs, scope)
    elem = tensor.type.compute_type
    accumulators = [_Accumulator.named(str(k), statement.op, elem) for k in range(len(copies))]
    nan_flags = accumulators[0].nan is not None
    before, updates, after = [], [], []
    for k, (copy, accumulator) in enumerate(zip(copies, accumulators)):
        start = identity(statement.op, tensor.type) if shared and k else current
        code = _accumulated(statement.op, tensor, accumulator, start, value)
        before += code.declared + [cgen.Block([copy, *outer, *code.load])]
        updates.append(cgen.Block([copy, *outer, *inner, *code.update]))
    results = [(copy, _result(accumulator.name, accumulator.nan, elem))
               for copy, accumulator in zip(copies, accumulators)]
    if shared:  # one element: fold the accumulators into the first
        total = accumulators[0].name
        for accumulator in accumulators[1:]:
            acc = accumulator.name
            total = (f"({_plain_extreme(statement.op, acc, total)})" if nan_flags
                     else combine(statement.op, tensor, total, acc))
        nan_any = " | ".join(accumulator.nan or "" for accumulator in accumulators)
        results = [(copies[0], _result(total, f"({nan_any})" if nan_flags else None, elem))]
    for copy, result in results:
        after.append(cgen.Block([copy, *outer, cgen.Statement(f"{target} = {result}")]))
    clauses = _clauses([(statement.op, elem, accumulator) for accumulator in accumulators])
    return cgen.Block(before + [cgen.Pragma(f"omp simd {clauses}"),
                                emitter.loop(node, cgen.Block(updates), iterator)] + after)


def simd_reduction(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str,
                   scope: Scope):
    """A SIMD loop whose body is one reduction into an element that does not depend on
    the loop: keep the accumulator in a scalar, the loop's steps in partial results
    (:func:`_reduction_loop`).

    Before:  for (k...) C[m*N+n] = C[m*N+n] + A[m*K+k] * B[k*N+n];
    After:   float polyc_acc;  polyc_acc = C[m*N+n];
             (the loop over k into polyc_part0's lanes, folded: _reduction_loop)
             polyc_acc = polyc_acc + polyc_part0[0];
             C[m*N+n] = polyc_acc;
    """
    body = node.for_get_body()
    calls = ast_children(body) if body.get_type() == isl.ast_node_type.block else [body]
    if not all(call.get_type() == isl.ast_node_type.user for call in calls):
        return None
    found = [(k, emitter.vector_reduction_call(call.user_get_expr(), iterator))
             for k, call in enumerate(calls)]
    found = [(k, parts) for k, parts in found if parts is not None]
    if len(found) > 1:
        return _several_reductions(emitter, node, iterator, calls, dict(found), scope)
    if len(found) != 1:
        return None
    position, (stmt, _, outer, inner) = found[0]
    statement = stmt.statement
    # The other statements of a fused pass (polyc.scheduling.vector_passes) run beside
    # the reduction; none may touch its element, which lives in the accumulator.
    others = [emitter.called(call.user_get_expr())[0] for call in calls]
    if any(other is not stmt and _touches(other.statement, statement.tensor)
           for other in others):
        return None
    before = [emitter.user(call.user_get_expr(), scope) for call in calls[:position]]
    after = [emitter.user(call.user_get_expr(), scope) for call in calls[position + 1:]]
    tensor, target, current, value = emitter.accumulator(statement, emitter.exprs, scope)
    elem = tensor.type.compute_type
    accumulator = _Accumulator.named("", statement.op, elem)
    code = _accumulated(statement.op, tensor, accumulator, current, value)

    update = _Update(tuple(inner), statement.op, tensor, current, value)

    def body(accumulators: list[_Accumulator]):
        return cgen.Block(before + update.statements(accumulators[0]) + after)

    loop = _reduction_loop(emitter, node, iterator, [(statement.op, tensor, accumulator)], body,
                           alone=not before and not after)
    return cgen.Block(outer + code.declared + code.load + loop + [
        cgen.Statement(f"{target} = {_result(accumulator.name, accumulator.nan, elem)}"),
    ])


def _several_reductions(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str,
                        calls: list, reductions: dict, scope: Scope):
    """A SIMD loop whose body holds several reductions into elements that do not depend
    on the loop (independent sums over one row, put in one loop by
    :mod:`polyc.scheduling.vector_passes`), beside statements that touch none of them:
    one accumulator each, every chain of additions running beside the others.

    Before:  for (d...) { a[n] = a[n] + X[n*D+d]; b[n] = b[n] + X[n*D+d] * Y[n*D+d]; }
    After:   float polyc_acc0; { polyc_acc0 = a[n]; }  float polyc_acc1; { ... }
             (one loop over d updating the lanes of polyc_part0 and polyc_part1,
              each folded into its accumulator: _reduction_loop)
             { a[n] = polyc_acc0; }  { b[n] = polyc_acc1; }
    """
    statements = [emitter.called(call.user_get_expr())[0].statement for call in calls]
    targets = [statements[k].tensor for k in reductions]
    if len(set(targets)) != len(targets) or any(
            _touches(statement, target) for k, statement in enumerate(statements)
            if k not in reductions for target in targets):
        return None
    before, steps, after, accumulators = [], [], [], []
    for k, call in enumerate(calls):
        if k not in reductions:
            steps.append(emitter.user(call.user_get_expr(), scope))
            continue
        stmt, _, outer, inner = reductions[k]
        statement = stmt.statement
        tensor, target, current, value = emitter.accumulator(statement, emitter.exprs, scope)
        elem = tensor.type.compute_type
        accumulator = _Accumulator.named(str(len(accumulators)), statement.op, elem)
        accumulators.append((statement.op, tensor, accumulator))
        code = _accumulated(statement.op, tensor, accumulator, current, value)
        before += code.declared + [cgen.Block([*outer, *code.load])]
        steps.append(_Update(tuple(outer + inner), statement.op, tensor, current, value))
        after.append(cgen.Block([*outer, cgen.Statement(
            f"{target} = {_result(accumulator.name, accumulator.nan, elem)}")]))

    def body(accumulators: list[_Accumulator]):
        named = iter(accumulators)
        return cgen.Block([step.code(next(named)) if isinstance(step, _Update) else step
                           for step in steps])

    return cgen.Block(before + _reduction_loop(emitter, node, iterator, accumulators, body,
                                               alone=len(reductions) == len(calls)) + after)


def _reduction_loop(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str,
                    reductions: list[tuple[str, ir.Tensor, _Accumulator]], body,
                    alone: bool) -> list:
    """The vector loop ``node`` updating ``reductions`` (``(op, tensor, accumulator)``),
    ``body(accumulators)`` one iteration updating ``accumulators``; ``alone``: the
    loop holds nothing else.

    An OpenMP reduction keeps one vector accumulator, and gcc adds its lanes up one
    after another after the loop (16 dependent additions of a 512-bit float vector,
    twice where the steps left over run as a loop of their own): a row waits for them
    wherever the next statement needs the sum. So where the loop runs ``it < U`` in
    unit steps, each reduction keeps vectors of partial results instead, whose lanes
    the loop updates in turn (a float max/min a vector of NaN flags beside them); the
    steps left over (fewer than those lanes) update the first lanes, and the lanes
    fold in a tree, each level an elementwise vector loop that gcc keeps in registers:

        float polyc_part0[32];  (all lanes 0)
        int64_t polyc_from = 0;
        for (; polyc_from + 32 <= D; polyc_from += 32)
          simd for (lane < 32) { const int64_t c1 = polyc_from + lane; part0[lane] += X[..c1..]; }
        simd for (int64_t c1 = polyc_from; c1 < D; c1 += 1) part0[c1 - polyc_from] += X[..c1..];
        simd for (lane < 16) part0[lane] += part0[lane + 16];   ... down to lane < 1
        acc += part0[0];

    A loop that holds only reductions keeps :func:`~polyc.machine.rules.reduction_chains`
    vectors per reduction (each step waits for the last addition of its vector, about
    4 cycles); a loop that also loads and stores along the row, such as layer norm
    backward's column sums beside its row sums, keeps one (it is not bound by that
    latency: in chains it ran no faster, with more registers held).

    The same sums in another order, as the vectorised reduction's are. A row of a
    layer norm that fuses its mean, variance and output (1024 × 128, one thread) ran
    2.2x faster with the tree than with OpenMP's folds (benchmarks/README.md, "Design
    measurements")."""
    upper = exclusive_upper_bound(node, iterator)
    if upper is None:
        clauses = _clauses([(op, tensor.type.compute_type, acc)
                            for op, tensor, acc in reductions])
        return [cgen.Pragma(f"omp simd {clauses}"),
                emitter.loop(node, body([acc for _, _, acc in reductions]), iterator)]
    vectors = sum(1 if acc.nan is None else 2 for _, _, acc in reductions)
    chains = reduction_chains(emitter.machine, vectors) if alone else 1
    widest = max(tensor.type.compute_type.bits // 8 for _, tensor, _ in reductions)
    lanes = chains * vector_lanes(emitter.machine, widest)
    end = emitter.expr(upper)
    parts = [_Accumulator(f"polyc_part{k}", None if acc.nan is None else f"polyc_nans{k}")
             for k, (_, _, acc) in enumerate(reductions)]

    def over_lanes(statements: list, count: int = lanes):
        return [cgen.Pragma("omp simd"), cgen.For("int64_t polyc_lane = 0",
                                                  f"polyc_lane < {count}", "polyc_lane += 1",
                                                  cgen.Block(statements))]

    def lane(at: str) -> list[_Accumulator]:
        return [part.at(at) for part in parts]

    declared, start = [], []
    for part, (op, tensor, _) in zip(parts, reductions):
        declared.append(cgen.Statement(f"{tensor.type.compute_type.c_type} {part.name}[{lanes}]"))
        start.append(cgen.Statement(f"{part.name}[polyc_lane] = {identity(op, tensor.type)}"))
        if part.nan is not None:
            declared.append(cgen.Statement(f"int {part.nan}[{lanes}]"))
            start.append(cgen.Statement(f"{part.nan}[polyc_lane] = 0"))
    steps = cgen.For("", f"polyc_from + {lanes} <= {end}", f"polyc_from += {lanes}",
                     cgen.Block(over_lanes([
                         cgen.Initializer(cgen.Value("const int64_t", iterator),
                                          "polyc_from + polyc_lane"),
                         body(lane("polyc_lane"))])))
    rest = [cgen.Pragma("omp simd"), cgen.For(
        f"int64_t {iterator} = polyc_from", f"{iterator} < {end}", f"{iterator} += 1",
        body(lane(f"{iterator} - polyc_from")))]
    fold, count = [], lanes
    while count > 1:  # the upper half of the lanes left onto the lower, a tree
        half = count // 2
        fold += over_lanes([
            statement for part, (op, tensor, _) in zip(parts, reductions)
            for statement in _folded(op, tensor, part.at("polyc_lane"),
                                     part.at(f"polyc_lane + {count - half}"))], half)
        count -= half
    total = [statement for part, (op, tensor, acc) in zip(parts, reductions)
             for statement in _folded(op, tensor, acc, part.at("0"))]
    return [cgen.Block(declared + over_lanes(start) + [
        cgen.Statement(f"int64_t polyc_from = {emitter.expr(node.for_get_init())}"), steps]
        + rest + fold + total)]


def _folded(op: str, tensor: ir.Tensor, into: _Accumulator, other: _Accumulator) -> list:
    """``other``'s partial result combined into ``into``'s: a float max/min as its
    update combines (:func:`_nan_tracking_update`), a plain max/min and the NaN flags
    or'ed."""
    if into.nan is None:
        return [cgen.Statement(f"{into.name} = {combine(op, tensor, into.name, other.name)}")]
    return [cgen.Statement(f"{into.name} = {_plain_extreme(op, other.name, into.name)}"),
            cgen.Statement(f"{into.nan} |= {other.nan}")]


@dataclass(frozen=True)
class _Accumulator:
    """A reduction's scalar accumulator in a vector loop, and for a float max/min the flag
    "saw a NaN" beside it (``nan``; ``None`` for any other reduction)."""

    name: str
    nan: str | None

    def at(self, lane: str) -> _Accumulator:
        """The accumulator of partial results' element ``lane`` (this one an array)."""
        return _Accumulator(f"{self.name}[{lane}]",
                            None if self.nan is None else f"{self.nan}[{lane}]")

    @staticmethod
    def named(suffix: str, op: str, elem: ty.ScalarType) -> _Accumulator:
        """``polyc_acc<suffix>``, with ``polyc_nan<suffix>`` for a float max/min: two short
        dependence chains per vector instead of one long one (compare, merge the masks,
        blend), faster in a row of floats (benchmarks/README.md, "Design
        measurements"); the result is NaN if the element or any value was, as numpy's."""
        nan = f"polyc_nan{suffix}" if elem.is_float and op in ("max", "min") else None
        return _Accumulator(f"polyc_acc{suffix}", nan)


def _result(value: str, nan: str | None, elem: ty.ScalarType) -> str:
    """The C of a reduction's result: the accumulated ``value``, NaN where ``nan`` says
    one was seen."""
    return value if nan is None else f"{nan} ? ({elem.c_type})NAN : {value}"


@dataclass(frozen=True)
class _Update:
    """One step of a reduction in a vector loop, its accumulator named where it is
    emitted (the scalar accumulator, or a lane of partial results): the index
    ``bindings``, the reduction ``op`` into ``tensor``, the element's ``current`` value
    and the ``value`` combined."""

    bindings: tuple
    op: str
    tensor: ir.Tensor
    current: str
    value: str

    def statements(self, accumulator: _Accumulator) -> list:
        return [*self.bindings, *_accumulated(self.op, self.tensor, accumulator,
                                              self.current, self.value).update]

    def code(self, accumulator: _Accumulator):
        return cgen.Block(self.statements(accumulator))


@dataclass(frozen=True)
class _AccumulatorCode:
    """The C of an accumulator: its declarations, its load from ``start`` and one step."""

    declared: list
    load: list
    update: list


def _accumulated(op: str, tensor: ir.Tensor, accumulator: _Accumulator, start: str,
                 value: str) -> _AccumulatorCode:
    """The code of ``accumulator`` starting at ``start`` and combining ``value`` with ``op``
    (a float max/min as :func:`_nan_tracking_update`)."""
    elem = tensor.type.compute_type
    acc, nan = accumulator.name, accumulator.nan
    declared = [cgen.Statement(f"{elem.c_type} {acc}")]
    load = [cgen.Statement(f"{acc} = {start}")]
    if nan is None:
        update = [cgen.Statement(f"{acc} = {combine(op, tensor, acc, value)}")]
    else:
        declared.append(cgen.Statement(f"int {nan}"))
        load.append(cgen.Statement(f"{nan} = {acc} != {acc}"))
        update = _nan_tracking_update(op, elem, acc, nan, value)
    return _AccumulatorCode(declared, load, update)


def _clauses(accumulators: list[tuple[str, ty.ScalarType, _Accumulator]]) -> str:
    """The OpenMP reduction clauses of accumulators ``(op, element type, accumulator)``:
    one per reduction identifier, in order of first use, then the NaN flags' ``|``."""
    by_clause: dict[str, list[str]] = {}
    nans = []
    for op, elem, accumulator in accumulators:
        clause = op if accumulator.nan is not None else _reduction_clause(op, elem)
        by_clause.setdefault(clause, []).append(accumulator.name)
        if accumulator.nan is not None:
            nans.append(accumulator.nan)
    if nans:
        by_clause["|"] = nans
    return " ".join(f"reduction({clause}:{', '.join(names)})"
                    for clause, names in by_clause.items())


def _touches(statement: ir.Statement, tensor: str) -> bool:
    """Whether ``statement`` writes or reads ``tensor``."""
    return statement.tensor == tensor or tensor in statement.tensors_read


def _plain_extreme(op: str, value: str, current: str) -> str:
    """C for ``value`` where it is beyond ``current`` in a max/min ``op``, else
    ``current``: a plain compare and select, which a NaN never wins (a float max/min
    tracks NaNs in a flag of its own)."""
    compare = ">" if op == "max" else "<"
    return f"{value} {compare} {current} ? {value} : {current}"


def _nan_tracking_update(op: str, elem: ty.ScalarType, acc: str, nan: str, value: str) -> list:
    """One step of a float max/min reduction kept as a plain max/min into ``acc`` and an
    ``|`` of "this value is NaN" into ``nan``."""
    return [cgen.Initializer(cgen.Value(f"const {elem.c_type}", "polyc_v"), value),
            cgen.Statement(f"{acc} = {_plain_extreme(op, 'polyc_v', acc)}"),
            cgen.Statement(f"{nan} |= polyc_v != polyc_v")]


def _reduction_clause(op: str, elem: ty.ScalarType) -> str:
    """The OpenMP reduction identifier (a float max/min with a NaN flag takes its own
    operator: :func:`_clauses`)."""
    if elem.kind == "bool":
        return "||" if op in ("+", "max") else "&&"
    return op
