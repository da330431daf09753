"""A loop over an index the data selects, run as its one iteration
(:mod:`polyc.scheduling.selected_loops`).

Under the ``selected`` mark, ``for (c6 = 0; c6 <= min(63, V - c0 - 1); c6 += 1)`` around
``S0(c0 + c6, ...)``, where the statement adds nothing unless its index ``v == I(b, l)``,
becomes::

    int64_t c6 = 0;
    const int64_t polyc_selected = c0 + c6;          /* v at c6 = 0 */
    c6 = I[b * L + l] - polyc_selected;              /* the c6 where v == I(b, l) */
    if (c6 >= 0 && c6 <= min(63, V - c0 - 1)) { ... the loop's body ... }

The loop's own bounds decide whether the iteration runs (a value outside the tile, or
outside the tensor, runs none), so the code does what the loop did.
"""
from __future__ import annotations

from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.c_names import braced, c_name
from polyc.codegen.isl_ast import coefficient, mentions
from polyc.lang import ir
from polyc.lang import types as ty
from polyc.lang.selections import selected_indices
from polyc.scheduling.marks import ast_children, statement_calls

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter, Scope


def selected_iteration(emitter: LoopNestEmitter, node: isl.AstNode, iterator: str,
                       scope: Scope):
    """The code of the loop ``node`` as its one iteration; ``None`` when it is not a unit
    step loop around calls of one statement whose selected index moves with ``iterator``
    (coefficient 1) while the selecting value's indices are fixed outside the loop."""
    inc = node.for_get_inc()
    if inc.get_type() != isl.ast_expr_type.int or inc.get_val().to_python() != 1:
        return None
    calls = statement_calls(node.for_get_body())
    if not calls or len({call.get_op_arg(0).get_id().get_name() for call in calls}) != 1:
        return None
    stmt, bound = emitter.called(calls[0])
    moving = [index for index in stmt.indices if mentions(bound[index], iterator)]
    value = None if stmt.is_init or len(moving) != 1 else \
        selected_indices(stmt.statement).get(moving[0])
    if value is None or coefficient(bound[moving[0]], iterator) != 1:
        return None
    fixed = sorted(ir.index_names(value))
    inner = _iterators(node.for_get_body())
    if any(mentions(bound[index], name) for index in fixed for name in inner | {iterator}):
        return None
    texts = {tuple(emitter.expr(emitter.called(call)[1][index]) for index in [*fixed, *moving])
             for call in calls}
    if len(texts) != 1:
        return None
    bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                                 emitter.expr(bound[index])) for index in fixed]
    selected = emitter.exprs.expr(value, ty.INT64)
    runs = f"{iterator} >= {emitter.expr(node.for_get_init())} && " \
           f"{emitter.expr(node.for_get_cond())}"
    return cgen.Block([
        cgen.Initializer(cgen.Value("int64_t", iterator), "0"),
        cgen.Initializer(cgen.Value("const int64_t", "polyc_selected"),
                         emitter.expr(bound[moving[0]])),
        cgen.Block(bindings + [cgen.Assign(iterator, f"{selected} - polyc_selected")]),
        cgen.If(runs, braced(emitter.node(node.for_get_body(), scope)))])


def _iterators(node: isl.AstNode) -> set[str]:
    """The iterators of the loops under ``node``."""
    found = {node.for_get_iterator().get_id().get_name()} \
        if node.get_type() == isl.ast_node_type.for_ else set()
    return found.union(*(_iterators(child) for child in ast_children(node)))
