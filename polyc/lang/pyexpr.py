"""The Python form of TC: Python expressions translated into TC expressions.

:class:`ExpressionReader` turns the expressions of one ``@polyc.op``
function's body (``A[i, j]``, ``T.shape[1]``, ``a if c else b``, calls, casts,
operators) into :class:`polyc.lang.ast.Expr` nodes, and resolves names as the
body sees them. The reader of the def, its statements and its where clauses
(``pyfront.py``) builds on it. Nothing is evaluated: names are looked up in
``fn``'s closure, globals and builtins, and attributes read on modules only.
"""
from __future__ import annotations

import ast as py
import builtins
import re
import types

from polyc.errors import ParseError, Span
from polyc.lang import ast
from polyc.lang import pyspelling as spelling
from polyc.lang.pysource import LocatedFunction

_MISSING = object()

_BINARY_OPS = {py.Add: "+", py.Sub: "-", py.Mult: "*", py.Div: "/", py.Mod: "%"}
_COMPARE_OPS = {py.Eq: "==", py.NotEq: "!=", py.Lt: "<", py.LtE: "<=", py.Gt: ">", py.GtE: ">="}
_BINARY_HINTS = {
    py.FloorDiv: "`//` is not TC: use / (C semantics: integer division truncates toward zero)",
    py.MatMult: "`@` is not TC: write the contraction, e.g. `C[m, n] += A[m, k] * B[k, n]`",
}
_UNARY_HINTS = {py.Invert: "`~` is not TC: for logical negation write `not x`"}
EXPRESSION_HINTS = {
    py.Lambda: "`lambda` is not TC",
    py.NamedExpr: "`:=` binds only inside polyc.where(...): `with polyc.where((t := e)):`",
    py.Tuple: "a tuple is not a TC value (index a tensor with `A[i, j]`)",
    py.List: "a list is not a TC value",
    py.Dict: "a dict is not a TC value",
    py.Set: "a set is not a TC value",
    py.ListComp: "comprehensions are not TC: the statement itself is the comprehension",
    py.SetComp: "comprehensions are not TC: the statement itself is the comprehension",
    py.DictComp: "comprehensions are not TC: the statement itself is the comprehension",
    py.GeneratorExp: "generators are not TC: for a reduction write `C[i] = polyc.sum(e)`",
    py.Starred: "starred expressions are not TC",
    py.Slice: "slices are not TC: index with index variables, `A[i, j]`, and give ranges "
              "with `with polyc.where(i in range(lo, hi)):`",
    py.JoinedStr: "strings are not TC values",
}


class ExpressionReader:
    """Turns one function's Python expressions into ``ast.Expr`` nodes.

    ``tensors`` holds the names known to be tensors (parameters and tensors
    written so far); whoever reads the statements adds to it.
    """

    def __init__(self, fn, located: LocatedFunction):
        self.located = located
        self.namespace = _namespace(fn)
        self.tensors: set[str] = set()  # parameters and tensors written so far

    def error(self, message: str, node) -> ParseError:
        return ParseError(message, self.located.span(node))

    def span(self, node) -> Span:
        return self.located.span(node)

    # ------------------------------------------------------------- expressions

    def expr(self, node) -> ast.Expr:
        span = self.span(node)
        if isinstance(node, py.Constant):
            return self._constant(node, span)
        if isinstance(node, py.Name):
            return ast.Name(node.id, span)
        if isinstance(node, py.UnaryOp):
            operand = self.expr(node.operand)
            if isinstance(node.op, py.USub):
                return ast.Unary("-", operand, span)
            if isinstance(node.op, py.Not):
                return ast.Unary("!", operand, span)
            if isinstance(node.op, py.UAdd):
                return operand
            raise self.error(_UNARY_HINTS[type(node.op)], node)
        if isinstance(node, py.BinOp):
            return self._binary(node, span)
        if isinstance(node, py.BoolOp):
            op = "&&" if isinstance(node.op, py.And) else "||"
            result = self.expr(node.values[0])
            for value in node.values[1:]:
                rhs = self.expr(value)
                result = ast.Binary(op, result, rhs, result.span.to(rhs.span))
            return result
        if isinstance(node, py.Compare):
            return self._compare(node, span)
        if isinstance(node, py.IfExp):
            return ast.Ternary(self.expr(node.test), self.expr(node.body),
                               self.expr(node.orelse), span)
        if isinstance(node, py.Call):
            return self._call(node, span)
        if isinstance(node, py.Subscript):
            return self._subscript(node, span)
        if isinstance(node, py.Attribute):
            if node.attr == "shape":
                raise self.error(f"`{text_of(node)}` is a tuple: use one extent, "
                                 f"`{text_of(node)}[k]` (TC's `T.k`)", node)
            raise self.error(f"attribute access `{text_of(node)}` is not TC: only `T.shape[k]` "
                             f"(TC's `T.k`) and qualified functions such as `math.exp(x)`", node)
        keyword = re.search(r"\w+", text_of(node) + " " + type(node).__name__).group()
        raise self.error(EXPRESSION_HINTS.get(type(node), f"`{keyword}` is not TC"), node)

    def _constant(self, node: py.Constant, span: Span) -> ast.Number:
        value = node.value
        if isinstance(value, bool):
            return ast.Number(int(value), False, span)
        if isinstance(value, int):
            return ast.Number(value, False, span)
        if isinstance(value, float):
            return ast.Number(value, True, span)
        raise self.error(f"the literal `{text_of(node)}` is not a TC value: only numbers, True "
                         f"and False", node)

    def _binary(self, node: py.BinOp, span: Span) -> ast.Expr:
        if isinstance(node.op, py.Pow):
            args = (self.expr(node.left), self.expr(node.right))
            return ast.Apply("pow", args, span, span)
        op = _BINARY_OPS.get(type(node.op))
        if op is None:
            hint = _BINARY_HINTS.get(type(node.op), "bitwise operators are not TC; for logic "
                                                    "write `and`, `or`, `not`")
            raise self.error(hint, node)
        return ast.Binary(op, self.expr(node.left), self.expr(node.right), span)

    def _compare(self, node: py.Compare, span: Span) -> ast.Expr:
        if len(node.ops) > 1:
            first, second = node.comparators[0], node.comparators[1]
            raise self.error(f"chained comparisons are not TC: write `{text_of(node.left)} "
                             f"{_op_text(node.ops[0])} {text_of(first)} and {text_of(first)} "
                             f"{_op_text(node.ops[1])} {text_of(second)}`", node)
        op = _COMPARE_OPS.get(type(node.ops[0]))
        if op is None:
            if isinstance(node.ops[0], (py.In, py.NotIn)):
                raise self.error("`in` is TC only in a range: `with polyc.where(i in "
                                 "range(lo, hi)):`", node)
            raise self.error("`is` is not TC: compare values with `==` or `!=`", node)
        return ast.Binary(op, self.expr(node.left), self.expr(node.comparators[0]), span)

    def _subscript(self, node: py.Subscript, span: Span) -> ast.Expr:
        value = node.value
        if isinstance(value, py.Attribute) and value.attr == "shape":
            if not isinstance(value.value, py.Name):
                raise self.error("`.shape[k]` applies to a tensor name: `T.shape[1]`", value)
            k = node.slice
            if not (isinstance(k, py.Constant) and isinstance(k.value, int)
                    and not isinstance(k.value, bool) and k.value >= 0):
                raise self.error("the dimension in `T.shape[k]` must be a non-negative integer "
                                 "literal", k)
            return ast.DimOf(value.value.id, k.value, span)
        if isinstance(value, py.Subscript):
            raise self.error("write one subscript with all indices: `A[i, j]`, not `A[i][j]`",
                             node)
        if not isinstance(value, py.Name):
            raise self.error(f"only tensors can be indexed: `A[i, j]`, not `{text_of(node)}`",
                             node)
        if value.id not in self.tensors and isinstance(self.resolve(value),
                                                       spelling.TensorTypeSpec):
            raise self.error("tensor types belong in the parameter and return annotations",
                             node)
        parts = node.slice.elts if isinstance(node.slice, py.Tuple) else [node.slice]
        args = tuple(self.expr(p) for p in parts)
        return ast.Apply(value.id, args, span, self.span(value))

    def _call(self, node: py.Call, span: Span) -> ast.Expr:
        func = node.func
        base = func
        while isinstance(base, py.Attribute):
            base = base.value
        if isinstance(base, py.Name) and base.id in self.tensors:
            if func is base:
                raise self.error(f"index a tensor with square brackets: "
                                 f"`{base.id}[{', '.join(text_of(a) for a in node.args)}]`", node)
            raise self.error(f"method calls on tensors (`{text_of(func)}(...)`) are not TC: "
                             f"write the operation in index notation", node)
        if not isinstance(base, py.Name):
            if type(base) in EXPRESSION_HINTS:
                raise self.error(EXPRESSION_HINTS[type(base)], base)
            raise self.error(f"cannot call `{text_of(func)}`: call a function by name, "
                             f"e.g. `exp(x)` or `math.exp(x)`", func)
        for arg in node.args:
            if isinstance(arg, py.Starred):
                raise self.error(EXPRESSION_HINTS[py.Starred], arg)
        target = self.resolve(func)
        marker = marker_name(target)
        name = func.id if isinstance(func, py.Name) else func.attr
        if isinstance(target, spelling.TensorTypeSpec):
            if target.dims is not None or len(node.args) != 1 or node.keywords:
                raise self.error(f"a cast takes one value: `{text_of(func).split('[')[0]}(x)`",
                                 node)
            return ast.Apply(target.elem, (self.expr(node.args[0]),), span, self.span(func))
        if marker in ("where", "exists"):
            raise self.error(f"polyc.{marker} belongs in `with polyc.where(...):`", node)
        if marker is not None or target in (builtins.max, builtins.min):
            if name in ("max", "min") and len(node.args) == 2 and not node.keywords:
                name = marker or name
            elif marker is not None:
                raise self.error(f"polyc.{marker}(e) must be the whole right-hand side: "
                                 f"`C[i] = polyc.{marker}(e)`", node)
            else:
                raise self.error(f"Python's `{name}` with one argument is not a reduction: "
                                 f"write `C[i] = polyc.{name}(e)`, or `{name}(a, b)`", node)
        elif target is builtins.sum:
            raise self.error("Python's `sum` is not a reduction: write `C[i] += e` or "
                             "`C[i] = polyc.sum(e)`", node)
        elif target is builtins.range:
            raise self.error("`range` is TC only in `with polyc.where(i in range(lo, hi)):`",
                             node)
        elif program_of(target) is not None:
            raise self.error("a call of another operator must be a whole statement: "
                             "`O1, O2 = other(A, B)`", node)
        if node.keywords:
            raise self.error(f"keyword arguments are not TC: pass the arguments of "
                             f"`{name}` by position", node.keywords[0])
        args = tuple(self.expr(a) for a in node.args)
        return ast.Apply(name, args, span, self.span(func))

    # ------------------------------------------------------------- name resolution

    def resolve(self, node):
        """The object ``node`` names in ``fn``'s scope, or ``_MISSING``.

        Only looks names up and reads attributes of modules: nothing is evaluated.
        """
        if isinstance(node, py.Name):
            if node.id in self.tensors:
                return _MISSING
            return self.namespace(node.id)
        if isinstance(node, py.Attribute):
            base = self.resolve(node.value)
            if isinstance(base, types.ModuleType):
                try:
                    return getattr(base, node.attr)
                except Exception:  # a module's __getattr__ may raise anything
                    return _MISSING
        return _MISSING


def _namespace(fn):
    """A lookup of names as ``fn``'s body sees them: closure, globals, builtins."""
    closure: dict[str, object] = {}
    code = getattr(fn, "__code__", None)
    for name, cell in zip(getattr(code, "co_freevars", ()), getattr(fn, "__closure__", None) or ()):
        try:
            closure[name] = cell.cell_contents
        except ValueError:  # a variable of the enclosing function not yet assigned
            pass
    global_names = getattr(fn, "__globals__", {})

    def lookup(name: str):
        if name in closure:
            return closure[name]
        if name in global_names:
            return global_names[name]
        return getattr(builtins, name, _MISSING)

    return lookup


def marker_name(obj) -> str | None:
    for name, marker in spelling.MARKERS.items():
        if obj is marker:
            return name
    return None


def program_of(obj) -> tuple[ast.Program, str] | None:
    """The ``(Program, def name)`` of a ``@polyc.op`` object, else ``None``."""
    if obj is _MISSING or isinstance(obj, (types.ModuleType, spelling.TensorTypeSpec)):
        return None
    try:
        program = getattr(obj, "_polyc_program", None)
    except Exception:
        return None
    if (isinstance(program, tuple) and len(program) == 2
            and isinstance(program[0], ast.Program) and isinstance(program[1], str)):
        return program
    return None


def text_of(node) -> str:
    """The Python source text of ``node``."""
    return py.unparse(node)


def _op_text(op) -> str:
    return {py.Eq: "==", py.NotEq: "!=", py.Lt: "<", py.LtE: "<=", py.Gt: ">", py.GtE: ">=",
            py.In: "in", py.NotIn: "not in", py.Is: "is", py.IsNot: "is not"}[type(op)]
