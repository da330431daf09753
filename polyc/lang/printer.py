"""Prints IR back to TC text; parsing the text gives an equal IR.

Ranges are printed as explicit ``where`` clauses and output types are
printed, so the text pins down everything sema inferred::

    def matmul(float32(M, K) A, float32(K, N) B) -> (float32 C) {
      C(m, n) +=! A(m, k) * B(k, n) where m in 0:M, n in 0:N, k in 0:K
    }
"""
from __future__ import annotations

from dataclasses import replace

from polyc.lang import ir
from polyc.lang.literals import literals_alone
from polyc.lang import sizes as sz

# Binding strength of each operator (higher binds tighter), as in the parser.
_PRECEDENCE = {"?": 1, "||": 2, "&&": 3, "==": 4, "!=": 4, "<": 5, "<=": 5, ">": 5, ">=": 5,
               "+": 6, "-": 6, "*": 7, "/": 7, "%": 7}
_UNARY = 8
_ATOM = 9


def to_tc(op: ir.Op) -> str:
    params = ", ".join(_param(t) for t in op.inputs)
    outputs = ", ".join(f"{t.type.name} {t.name}" for t in op.outputs)
    lines = [f"  # {d.name} = {' * '.join(_factor(f) for f in d.factors)}"
             for d in op.derived_sizes]
    lines += [f"  # {v.name}({', '.join(sz.to_tc(e) for e in v.shape)}): the memory of "
              f"{v.storage}" for v in op.views]
    body = "\n".join(lines + ["  " + statement_to_tc(s) for s in _typed_temporaries(op)])
    return f"def {op.name}({params}) -> ({outputs}) {{\n{body}\n}}\n"


def _typed_temporaries(op: ir.Op) -> list[ir.Statement]:
    """``op``'s statements, each temporary's first definition by literals alone cast to
    the temporary's type where that is wider than float32: TC gives such a temporary
    float32 (a tie count or a running product in a float64 gradient), and no signature
    states a temporary's type."""
    signature = {t.name for t in op.inputs + op.outputs}
    types = {t.name: t.type for t in op.temporaries}
    defined, statements = set(), []
    for stmt in op.statements:
        first = stmt.tensor not in signature and stmt.tensor not in defined
        defined.add(stmt.tensor)
        elem = types.get(stmt.tensor, stmt.rhs.type)
        if first and elem.is_float and elem.bits > 32 and literals_alone(stmt.rhs):
            stmt = replace(stmt, rhs=ir.Cast(elem, stmt.rhs))
        statements.append(stmt)
    return statements


def _factor(e: sz.SizeExpr) -> str:
    text = sz.to_tc(e)
    return text if sz.plain_name(e) is not None or (
        isinstance(e, sz.Affine) and e.is_constant) else f"({text})"


def _param(tensor: ir.Tensor) -> str:
    if tensor.rank == 0:
        return f"{tensor.type.name} {tensor.name}"
    dims = ", ".join(sz.to_tc(d) for d in tensor.shape)
    return f"{tensor.type.name}({dims}) {tensor.name}"


def statement_to_tc(stmt: ir.Statement) -> str:
    lhs = stmt.tensor + (f"({', '.join(stmt.indices)})" if stmt.indices else "")
    op = "=" if stmt.op == "=" else f"{stmt.op}=" + ("!" if stmt.init else "")
    text = f"{lhs} {op} {expr_to_tc(stmt.rhs)}"
    if stmt.equivalent:
        text += f" <=> {stmt.equivalent}"
    if stmt.domain:
        ranges = ", ".join(f"{r.index} in {range_bounds_to_tc(r)}" for r in stmt.domain)
        text += f" where {ranges}"
    return text


def range_bounds_to_tc(r: ir.IndexRange) -> str:
    """``lo:hi`` as written: a bound that depends on other indices as its expression."""
    lo = expr_to_tc(r.lo_bound) if r.lo_bound is not None else sz.to_tc(r.lo)
    hi = expr_to_tc(r.hi_bound) if r.hi_bound is not None else sz.to_tc(r.hi)
    return f"{lo}:{hi}"


def expr_to_tc(e: ir.Expr) -> str:
    return _expr(e)[0]


def _expr(e: ir.Expr) -> tuple[str, int]:
    """The text of ``e`` and its precedence."""
    if isinstance(e, ir.Const):
        return _const(e), _ATOM
    if isinstance(e, ir.Index):
        return e.name, _ATOM
    if isinstance(e, ir.SizeValue):
        text = sz.to_tc(e.size)
        simple = isinstance(e.size, sz.Affine) and len(e.size.terms) + bool(e.size.const) <= 1
        return (text, _ATOM) if simple or isinstance(e.size, sz.MinMax) else (f"({text})", _ATOM)
    if isinstance(e, ir.Read):
        if not e.indices:
            return e.tensor, _ATOM
        return f"{e.tensor}({', '.join(expr_to_tc(i) for i in e.indices)})", _ATOM
    if isinstance(e, ir.Call):
        return f"{e.function}({', '.join(expr_to_tc(a) for a in e.args)})", _ATOM
    if isinstance(e, ir.Cast):
        return f"{e.type.name}({expr_to_tc(e.operand)})", _ATOM
    if isinstance(e, ir.Unary):
        operand, precedence = _expr(e.operand)
        if precedence < _UNARY or operand.startswith("-"):
            operand = f"({operand})"
        return f"{e.op}{operand}", _UNARY
    if isinstance(e, ir.Binary):
        level = _PRECEDENCE[e.op]
        lhs, lhs_level = _expr(e.lhs)
        rhs, rhs_level = _expr(e.rhs)
        if lhs_level < level:
            lhs = f"({lhs})"
        if rhs_level <= level:  # left-associative: a - (b - c) keeps its parentheses
            rhs = f"({rhs})"
        return f"{lhs} {e.op} {rhs}", level
    if isinstance(e, ir.Select):
        cond, cond_level = _expr(e.cond)
        then, then_level = _expr(e.then)
        other, _ = _expr(e.other)
        if cond_level <= _PRECEDENCE["?"]:
            cond = f"({cond})"
        if then_level <= _PRECEDENCE["?"]:
            then = f"({then})"
        return f"{cond} ? {then} : {other}", _PRECEDENCE["?"]
    raise TypeError(f"cannot print {e!r}")


def _const(e: ir.Const) -> str:
    value = e.value
    if isinstance(value, bool):
        return "1" if value else "0"
    if e.type.is_float:
        text = repr(float(value))
        if text in ("inf", "-inf", "nan"):
            raise ValueError(f"cannot print the non-finite literal {text}")
        return text if any(c in text for c in ".e") else text + ".0"
    return str(int(value))
