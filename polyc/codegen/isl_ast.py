"""Questions about isl's AST that code generation asks: which statements run under a
node, whether an expression mentions an iterator and with what coefficient, a loop's
exclusive upper bound and constant trip count."""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.scheduling.marks import ast_children


def has_loop(node: isl.AstNode) -> bool:
    """Whether a ``for`` loop runs somewhere under an AST node."""
    return node.get_type() == isl.ast_node_type.for_ or any(
        has_loop(child) for child in ast_children(node))


def statement_loops(node: isl.AstNode) -> list[isl.AstNode]:
    """The loops under an AST node (itself included) whose body is statements alone, one
    or several, in order."""
    if node.get_type() == isl.ast_node_type.for_:
        body = node.for_get_body()
        parts = ast_children(body) if body.get_type() == isl.ast_node_type.block else [body]
        if all(part.get_type() == isl.ast_node_type.user for part in parts):
            return [node]
    return [loop for child in ast_children(node) for loop in statement_loops(child)]


def identifiers(expr: isl.AstExpr) -> set[str]:
    """The identifiers an isl AST expression uses."""
    if expr.get_type() == isl.ast_expr_type.id:
        return {expr.get_id().get_name()}
    if expr.get_type() == isl.ast_expr_type.op:
        return set().union(*(identifiers(expr.get_op_arg(k))
                             for k in range(expr.get_op_n_arg())))
    return set()


def single(node: isl.AstNode) -> isl.AstNode:
    """The only child of a one-statement block, else the node itself."""
    if node.get_type() == isl.ast_node_type.block:
        children = node.block_get_children()
        if len(children) == 1:
            return children.get_at(0)
    return node


def coefficient(expr: isl.AstExpr, name: str) -> int | None:
    """The coefficient of identifier ``name`` in an isl AST expression, if it is affine
    in ``name`` (sums, differences, negations, products by constants)."""
    if not mentions(expr, name):
        return 0
    kind = expr.get_type()
    if kind == isl.ast_expr_type.id:
        return 1
    op = expr.get_op_type()
    args = [expr.get_op_arg(k) for k in range(expr.get_op_n_arg())]
    terms = [coefficient(arg, name) for arg in args]
    if None in terms:
        return None
    if op == isl.ast_expr_op_type.add:
        return terms[0] + terms[1]
    if op == isl.ast_expr_op_type.sub:
        return terms[0] - terms[1]
    if op == isl.ast_expr_op_type.minus:
        return -terms[0]
    if op == isl.ast_expr_op_type.mul:
        constants = [arg.get_val().to_python() for arg in args
                     if arg.get_type() == isl.ast_expr_type.int]
        if constants:
            return constants[0] * sum(terms)
    return None


def exclusive_upper_bound(node: isl.AstNode, iterator: str) -> isl.AstExpr | None:
    """``U`` of a loop ``for (it = ...; it < U; it += 1)`` (``it <= V``: ``V + 1``), else
    ``None``."""
    cond, inc = node.for_get_cond(), node.for_get_inc()
    if (inc.get_type() != isl.ast_expr_type.int or inc.get_val().to_python() != 1
            or cond.get_type() != isl.ast_expr_type.op or cond.get_op_n_arg() != 2):
        return None
    it, bound = cond.get_op_arg(0), cond.get_op_arg(1)
    if it.get_type() != isl.ast_expr_type.id or it.get_id().get_name() != iterator \
            or mentions(bound, iterator):
        return None
    if cond.get_op_type() == isl.ast_expr_op_type.lt:
        return bound
    if cond.get_op_type() == isl.ast_expr_op_type.le:
        return bound.add(isl.AstExpr.from_val(isl.Val.one(bound.get_ctx())))
    return None


def mentions(expr: isl.AstExpr, name: str) -> bool:
    """Whether the isl AST expression uses the identifier ``name``."""
    kind = expr.get_type()
    if kind == isl.ast_expr_type.id:
        return expr.get_id().get_name() == name
    if kind == isl.ast_expr_type.op:
        return any(mentions(expr.get_op_arg(k), name) for k in range(expr.get_op_n_arg()))
    return False


def unparenthesized(text: str) -> str:
    """``(c0 < M)`` → ``c0 < M``: OpenMP's canonical loop form wants a bare comparison."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and position < len(text) - 1:
            return text
    return text[1:-1]


@dataclass(frozen=True)
class Trip:
    """A register-block loop ``for (it = 0; it <= bound; ++it)`` (``<`` when ``strict``)
    with a constant largest trip count; ``full`` is an isl condition for making all of
    them (``None``: always)."""

    trip: int
    full: isl.AstExpr | None
    bound: isl.AstExpr
    strict: bool


def constant_trip(loop: isl.AstNode, iterator: str, invariant_in: list[str]) -> Trip | None:
    """The :class:`Trip` of a loop ``for (it = 0; it <= min(K, e); ++it)`` (or ``<= K``);
    ``None`` for any other loop shape, or bounds that vary with ``invariant_in``."""
    init, cond, inc = loop.for_get_init(), loop.for_get_cond(), loop.for_get_inc()
    if init.get_type() != isl.ast_expr_type.int or init.get_val().to_python() != 0:
        return None
    if inc.get_type() != isl.ast_expr_type.int or inc.get_val().to_python() != 1:
        return None
    if cond.get_type() != isl.ast_expr_type.op or cond.get_op_type() not in (
            isl.ast_expr_op_type.le, isl.ast_expr_op_type.lt):
        return None
    left, bound = cond.get_op_arg(0), cond.get_op_arg(1)
    if left.get_type() != isl.ast_expr_type.id or left.get_id().get_name() != iterator:
        return None
    strict = cond.get_op_type() == isl.ast_expr_op_type.lt
    if any(mentions(bound, name) for name in invariant_in):
        return None
    if bound.get_type() == isl.ast_expr_type.int:
        last = bound.get_val().to_python() - (1 if strict else 0)
        return Trip(last + 1, None, bound, strict) if last >= 0 else None
    if bound.get_type() == isl.ast_expr_type.op and \
            bound.get_op_type() == isl.ast_expr_op_type.min:
        args = _min_operands(bound)
        constants = [a for a in args if a.get_type() == isl.ast_expr_type.int]
        if len(constants) != 1:
            return None
        constant = constants[0]
        last = constant.get_val().to_python() - (1 if strict else 0)
        if last < 0:
            return None
        full = None  # every other bound reaches the constant (a thread's box: two)
        for other in args:
            if other is not constant:
                full = other.ge(constant) if full is None else full.and_(other.ge(constant))
        return Trip(last + 1, full, bound, strict)
    return None


def _min_operands(expr: isl.AstExpr) -> list[isl.AstExpr]:
    """The operands of nested ``min`` expressions, flattened."""
    if expr.get_type() != isl.ast_expr_type.op or \
            expr.get_op_type() != isl.ast_expr_op_type.min:
        return [expr]
    return [leaf for k in range(expr.get_op_n_arg())
            for leaf in _min_operands(expr.get_op_arg(k))]
