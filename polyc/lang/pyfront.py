r"""The Python form of TC: a decorated function's body, read as a syntax tree.

``program_from_function(fn)`` reads ``fn``'s source with :mod:`ast` — the
function is never called — and gives the same :class:`polyc.lang.ast.Program`
the TC parser gives for the equivalent TC text, with spans that point into
``fn``'s ``.py`` file (absolute lines; columns as in the file, indentation
included, so carets line up under the original line)::

    @polyc.op
    def matmul(A: polyc.f32["M", "K"], B: polyc.f32["K", "N"]):
        C[m, n] += A[m, k] * B[k, n]
        return C

    # is read as
    def matmul(float32(M, K) A, float32(K, N) B) -> (C) {
      C(m, n) +=! A(m, k) * B(k, n)
    }

Names of types and markers (``polyc.f32``, ``polyc.sum``, ``polyc.where``, …)
are resolved through ``fn``'s closure, globals and builtins, by name lookups
and attribute lookups on modules only, so ``import polyc as pc; pc.f32``,
``from polyc import f32, sum`` and ``polyc.sum`` all work. Nothing of the body
is evaluated. Parameter and return annotations are taken from the values
Python computed for them, or read from the source when they are postponed
(``from __future__ import annotations``).

| TC | Python |
|---|---|
| `def f(float(M,K) A, float alpha) -> (C)` | `def f(A: polyc.f32["M", "K"], alpha: polyc.f32):` |
| `-> (C, D)` | `return C, D`: the last statement, the only `return`, of names |
| `-> (float(M,N) C, D)` (typed outputs) | `-> (polyc.f32["M", "N"], None)`; one: `-> polyc.f32` |
| `C(m, n) = e` | `C[m, n] = e` |
| `s = e` (0-rank) | `s = e` or `s[()] = e` |
| `C(m, n) +=! e` | `C[m, n] += e` as the first write of `C`; `C[m, n] = polyc.sum(e)` |
| `C(m, n) += e` | `C[m, n] += e` after a write of `C`; `polyc.sum(e, init=False)` |
| `*=!`, `*=` | `*=` by the same rule; `polyc.prod(e)`, `polyc.prod(e, init=False)` |
| `max=!`, `max=` | `C[i] = polyc.max(e)`, `polyc.max(e, init=False)` |
| `min=!`, `min=` | `C[i] = polyc.min(e)`, `polyc.min(e, init=False)` |
| `where i in lo:hi` | `with polyc.where(i in range(lo, hi)):` (`range(hi)`: `0:hi`) (1) |
| `where t = e` | `t == e` or `(t := e)` in `polyc.where(...)` |
| `where exists A(i)` | `polyc.exists(A[i])` in `polyc.where(...)` |
| `<=> matmul(A, B)` | `polyc.where(..., equivalent="matmul(A, B)")` |
| `A(i, j)`, `A()` (reads) | `A[i, j]`, `A[()]` |
| `T.1` | `T.shape[1]` |
| size variable `N` as a value | `N` |
| `c ? a : b` | `a if c else b` |
| `&&`, `\|\|`, `!x` | `and`, `or`, `not x` (`a and b and c` nests to the left) |
| `-x`, `+ - * / %`, `== != < <= > >=` | the same, unchained (no `a < b < c`); no `//` |
| `pow(a, b)` | `a ** b` or `pow(a, b)` |
| `exp(x)`, `fmax(a, b)` | `exp(x)`, `math.exp(x)`, `np.fmax(a, b)`: a qualifier is dropped |
| `max(a, b)`, `min(a, b)`, `abs(x)` | the same (Python's builtins), or `polyc.max(a, b)` |
| `float32(x)`, `int32(x)`, `float(x)` | `polyc.f32(x)`, `polyc.i32(x)`, `float(x)` |
| `O1, O2 = other(A, B)`, `O = other(A)` | the same, `other` an `@polyc.op` operator (2) |
| `2`, `.5`, `1e-5` | the same; `True`, `False` are `1`, `0` |
| `# comment` | `# comment` |

(1) Around one or more statements; each gets the clauses, and nested
``with`` blocks (or several ``polyc.where(...)`` in one ``with``) add up.
(2) The callee's defs, and those it calls, join the program before this one,
each once. A callee is any object with a ``_polyc_program`` attribute holding
``(Program, def name)``, which is what ``@polyc.op`` returns.

Docstrings, ``pass`` and ``...`` in the body are ignored. Everything else —
loops, ``if``, imports, ``lambda``, slices, starred arguments, keyword
arguments other than ``init=``/``equivalent=``, ``//``, chained comparisons,
attribute access other than ``T.shape[k]`` and qualified function names,
parameters without a type, a missing ``return`` — is a :class:`ParseError`
at the construct, naming what to write instead. Calls of unknown functions
become ``Apply`` nodes for sema to judge.

This module reads the ``def``: its parameters and return annotation (the
declarations), its statements and its ``polyc.where`` clauses. Expressions are
translated by :mod:`polyc.lang.pyexpr`; the source and its spans come from
:mod:`polyc.lang.pysource`.
"""
from __future__ import annotations

import ast as py
import builtins
import re

from polyc.errors import ParseError, Span
from polyc.lang import ast
from polyc.lang import pyspelling as spelling
from polyc.lang.parser import parse_expression
from polyc.lang.pyexpr import EXPRESSION_HINTS, ExpressionReader, marker_name, program_of, text_of
from polyc.lang.pysource import LocatedFunction

_AUGMENTED_OPS = {py.Add: "+=", py.Mult: "*="}
_AUGMENTED_SYMBOLS = {py.Sub: "-=", py.Div: "/=", py.FloorDiv: "//=", py.Mod: "%=", py.Pow: "**=",
                      py.MatMult: "@=", py.BitAnd: "&=", py.BitOr: "|=", py.BitXor: "^=",
                      py.LShift: "<<=", py.RShift: ">>="}
_REDUCTION_OPS = {"sum": "+=", "prod": "*=", "max": "max=", "min": "min="}

_STATEMENT_HINTS = {
    py.For: "`for` loops are not TC: loops are implicit in the indices; give a range with "
            "`with polyc.where(i in range(lo, hi)):`",
    py.While: "`while` loops are not TC: loops are implicit in the indices",
    py.If: "`if` statements are not TC: use a conditional expression `a if c else b`",
    py.Import: "imports are not TC: import at module level, outside the operator",
    py.ImportFrom: "imports are not TC: import at module level, outside the operator",
    py.FunctionDef: "nested functions are not TC: define another @polyc.op operator and call "
                    "it as `O = other(A, B)`",
    py.AnnAssign: "annotated assignments are not TC: types go on the parameters and the "
                  "return annotation; write `C[i] = ...`",
    py.AsyncWith: "`async with` is not TC: write `with polyc.where(...):`",
}


def program_from_function(fn) -> tuple[ast.Program, str]:
    """The TC syntax tree of the Python-form operator ``fn`` and its def's name.

    The program holds ``fn``'s def, preceded by the defs of the operators it
    calls (and theirs), each once. Raises :class:`ParseError` with a span in
    ``fn``'s file for anything that is not the Python form of TC.
    """
    located = LocatedFunction(fn)
    definition, callee_defs = _Reader(fn, located).read()
    program = ast.Program(tuple(callee_defs) + (definition,), located.span(located.node))
    return program, definition.name


# ----------------------------------------------------------------- the reader


class _Reader(ExpressionReader):
    """Turns one function's Python tree into an ``ast.Def`` (and collects callee defs)."""

    def __init__(self, fn, located: LocatedFunction):
        super().__init__(fn, located)
        self.fn = fn
        annotations = getattr(fn, "__annotations__", None)
        self.annotations = annotations if isinstance(annotations, dict) else {}
        self.callee_defs: dict[str, ast.Def] = {}

    # ------------------------------------------------------------- the def

    def read(self) -> tuple[ast.Def, list[ast.Def]]:
        node = self.located.node
        params = self._params(node.args)
        statements = [s for s in node.body if not _is_ignored(s)]
        if not statements or not isinstance(statements[-1], py.Return):
            early = [s for s in statements if isinstance(s, py.Return)]
            if early:
                raise self.error("`return` must be the last statement of the operator", early[0])
            raise ParseError(f"`{node.name}` must end by returning its outputs: `return C` "
                             f"(or `return C, D`)",
                             self.span(statements[-1]) if statements
                             else self.located.name_span(node))
        outputs = self._outputs(statements[-1], node.returns)
        stmts = self._statements(statements[:-1], (), None)
        definition = ast.Def(getattr(self.fn, "__name__", node.name), params, outputs,
                             tuple(stmts), self.span(node), self.located.name_span(node))
        return definition, list(self.callee_defs.values())

    def _params(self, args: py.arguments) -> tuple[ast.Param, ...]:
        for stars, extra in (("*", args.vararg), ("**", args.kwarg)):
            if extra is not None:
                raise self.error(f"`{stars}{extra.arg}` parameters are not TC: list each input "
                                 f"with its type", extra)
        if args.kwonlyargs:
            raise self.error("keyword-only parameters are not TC: remove the `*`",
                             args.kwonlyargs[0])
        defaults = list(args.defaults) + [d for d in args.kw_defaults if d is not None]
        if defaults:
            raise self.error("default values are not TC: every input is passed at the call",
                             defaults[0])
        params = []
        for arg in list(args.posonlyargs) + list(args.args):
            if arg.annotation is None:
                raise self.error(f"parameter `{arg.arg}` needs a type: write "
                                 f"`{arg.arg}: polyc.f32[\"M\", \"K\"]` (or `polyc.f32` for a "
                                 f"scalar)", arg)
            tensor_type = self._tensor_type(arg.annotation, f"parameter `{arg.arg}`",
                                            self.annotations.get(arg.arg))
            params.append(ast.Param(arg.arg, tensor_type, self.span(arg)))
            self.tensors.add(arg.arg)
        return tuple(params)

    def _tensor_type(self, node, what: str, evaluated=None) -> ast.TensorType:
        """``polyc.f32["M", 3]``, ``polyc.f32`` or a name bound to a spec.

        ``evaluated`` is the annotation's value, which Python computed when it
        ran the ``def`` (in scopes the body cannot see); postponed annotations
        (strings) are read from ``node``.
        """
        if isinstance(evaluated, spelling.TensorTypeSpec):
            return ast.TensorType(evaluated.elem, evaluated.dims, self.span(node))
        if isinstance(node, py.Subscript):
            spec = self.resolve(node.value)
            if isinstance(spec, spelling.TensorTypeSpec) and spec.dims is None:
                parts = node.slice.elts if isinstance(node.slice, py.Tuple) else [node.slice]
                return ast.TensorType(spec.elem, tuple(self._dim(d) for d in parts),
                                      self.span(node))
        else:
            spec = self.resolve(node)
            if isinstance(spec, spelling.TensorTypeSpec):
                return ast.TensorType(spec.elem, spec.dims, self.span(node))
        raise self.error(f"the type of {what} must be a polyc tensor type such as "
                         f"`polyc.f32[\"M\", \"K\"]` or `polyc.i32` (found `{text_of(node)}`)",
                         node)

    def _dim(self, node) -> str | int:
        if isinstance(node, py.Constant):
            value = node.value
            if isinstance(value, str) and value.isidentifier():
                return value
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        hint = f' (write size names as strings: "{node.id}")' if isinstance(node, py.Name) else ""
        raise self.error(f"a dimension must be a size name such as \"N\" or a non-negative "
                         f"int, not `{text_of(node)}`{hint}", node)

    def _outputs(self, ret: py.Return, returns) -> tuple[ast.OutputDecl, ...]:
        value = ret.value
        names = value.elts if isinstance(value, py.Tuple) else [value]
        if value is None or not names or not all(isinstance(n, py.Name) for n in names):
            raise self.error("return the output tensors by name: `return C` or `return C, D`",
                             value if value is not None else ret)
        types_ = [None] * len(names)
        if returns is not None:
            annotations = returns.elts if isinstance(returns, py.Tuple) else [returns]
            if len(annotations) != len(names):
                raise self.error(f"the return annotation gives {len(annotations)} type(s) for "
                                 f"{len(names)} output(s): give one per output, "
                                 f"`-> (polyc.f32[\"M\"], None)` (None: inferred)", returns)
            evaluated = self.annotations.get("return")
            if not isinstance(returns, py.Tuple):
                evaluated = (evaluated,)
            if not (isinstance(evaluated, tuple) and len(evaluated) == len(annotations)):
                evaluated = (None,) * len(annotations)
            types_ = [None if isinstance(a, py.Constant) and a.value is None
                      else self._tensor_type(a, f"output `{n.id}`", e)
                      for a, n, e in zip(annotations, names, evaluated)]
        return tuple(ast.OutputDecl(n.id, t, self.span(n)) for n, t in zip(names, types_))

    # ------------------------------------------------------------- statements

    def _statements(self, stmts, where: tuple, equivalent) -> list[ast.Stmt]:
        """A block's statements, given the ``where``/``equivalent`` of the enclosing blocks."""
        result: list[ast.Stmt] = []
        for stmt in stmts:
            if _is_ignored(stmt):
                continue
            if isinstance(stmt, py.Assign):
                result.append(self._assign(stmt, where, equivalent))
            elif isinstance(stmt, py.AugAssign):
                result.append(self._augmented(stmt, where, equivalent))
            elif isinstance(stmt, py.With):
                result.extend(self._with(stmt, where, equivalent))
            elif isinstance(stmt, py.Return):
                raise self.error("`return` must be the last statement of the operator, outside "
                                 "any `with` block", stmt)
            elif isinstance(stmt, py.Expr):
                raise self.error(f"the expression statement `{text_of(stmt)}` does nothing: write "
                                 f"an assignment `C[i] = ...`", stmt)
            else:
                keyword = re.search(r"\w+", text_of(stmt) + " " + type(stmt).__name__).group()
                raise self.error(_STATEMENT_HINTS.get(type(stmt), f"`{keyword}` is not TC"), stmt)
        return result

    def _assign(self, node: py.Assign, where, equivalent) -> ast.Stmt:
        if len(node.targets) != 1:
            raise self.error("chained assignment `a = b = e` is not TC: write one statement "
                             "per tensor", node)
        target, value = node.targets[0], node.value
        callee = self._callee(value)
        if isinstance(target, (py.Tuple, py.List)) or callee is not None:
            return self._call_statement(node, target, callee, where)
        tensor, indices, lhs_span = self._lhs(target)
        reduction = self._reduction(value)
        if reduction is None:
            op, init, rhs = "=", False, value
        else:
            op, init, rhs = reduction
        self.tensors.add(tensor)
        return ast.Assign(tensor, indices, op, init, self.expr(rhs), where,
                          self._equivalent(equivalent), self.span(node), lhs_span)

    def _augmented(self, node: py.AugAssign, where, equivalent) -> ast.Assign:
        op = _AUGMENTED_OPS.get(type(node.op))
        if op is None:
            symbol = _AUGMENTED_SYMBOLS.get(type(node.op), "this operator")
            fix = " (accumulate the negation: `C[i] += -e`)" if isinstance(node.op, py.Sub) else ""
            raise self.error(f"`{symbol}` is not TC: accumulate with `+=` or `*=`, or write "
                             f"`C[i] = polyc.max(e)` / `polyc.min(e)`{fix}", node)
        tensor, indices, lhs_span = self._lhs(node.target)
        if self._reduction(node.value) is not None:
            raise self.error(f"`{op}` and a polyc reduction do not combine: write either "
                             f"`C[i] {op} e` or `C[i] = polyc.sum(e)`", node.value)
        # The first write of a tensor initialises it: TC's `+=!`.
        init = tensor not in self.tensors
        self.tensors.add(tensor)
        return ast.Assign(tensor, indices, op, init, self.expr(node.value), where,
                          self._equivalent(equivalent), self.span(node), lhs_span)

    def _lhs(self, target) -> tuple[str, tuple[str, ...], Span]:
        if isinstance(target, py.Name):
            return target.id, (), self.span(target)
        if isinstance(target, py.Subscript) and isinstance(target.value, py.Name):
            parts = target.slice.elts if isinstance(target.slice, py.Tuple) else [target.slice]
            for part in parts:
                if not isinstance(part, py.Name):
                    hint = EXPRESSION_HINTS.get(type(part), "the indices of the written tensor "
                                                 "must be index names, as in `C[i, j] = ...`")
                    raise self.error(hint, part)
            return target.value.id, tuple(p.id for p in parts), self.span(target)
        if isinstance(target, py.Subscript) and isinstance(target.value, py.Subscript):
            raise self.error("write one subscript with all indices: `C[i, j]`, not `C[i][j]`",
                             target)
        raise self.error(f"cannot assign to `{text_of(target)}`: write a tensor element "
                         f"`C[i, j] = ...` or a 0-rank tensor `s = ...`", target)

    def _reduction(self, value) -> tuple[str, bool, py.expr] | None:
        """(op, init, operand) when ``value`` is ``polyc.sum(e[, init=...])`` and the like."""
        if not isinstance(value, py.Call):
            return None
        marker = marker_name(self.resolve(value.func))
        if marker not in _REDUCTION_OPS:
            return None
        if marker in ("max", "min") and len(value.args) == 2 and not value.keywords:
            return None  # the binary function max(a, b)
        if len(value.args) != 1 or any(isinstance(a, py.Starred) for a in value.args):
            raise self.error(f"polyc.{marker} takes one expression to reduce: "
                             f"`C[i] = polyc.{marker}(e)`", value)
        init = True
        for keyword in value.keywords:
            if keyword.arg != "init":
                raise self.error(f"polyc.{marker} has one keyword argument, `init=False` "
                                 f"(accumulate into the existing values)", keyword)
            if not (isinstance(keyword.value, py.Constant)
                    and isinstance(keyword.value.value, bool)):
                raise self.error("`init=` must be the literal True or False", keyword.value)
            init = keyword.value.value
        return _REDUCTION_OPS[marker], init, value.args[0]

    def _with(self, node: py.With, where, equivalent) -> list[ast.Stmt]:
        clauses = list(where)
        for item in node.items:
            call = item.context_expr
            if not (isinstance(call, py.Call)
                    and marker_name(self.resolve(call.func)) == "where"):
                if isinstance(call, py.Call) and text_of(call.func).split(".")[-1] == "where":
                    raise self.error(f"`{text_of(call.func)}` is not polyc.where here: import it "
                                     f"(`from polyc import where`) or write `polyc.where(...)`",
                                     call.func)
                raise self.error(f"`with {text_of(call)}` is not TC: the only block is "
                                 f"`with polyc.where(i in range(lo, hi), ...):`", call)
            if item.optional_vars is not None:
                raise self.error("`with polyc.where(...)` takes no `as`", item.optional_vars)
            for arg in call.args:
                clauses.append(self._clause(arg))
            for keyword in call.keywords:
                if keyword.arg != "equivalent":
                    raise self.error("polyc.where(...) has one keyword argument, "
                                     "`equivalent=\"matmul(A, B)\"` (TC's `<=>`)", keyword)
                if equivalent is not None:
                    raise self.error("`equivalent=` is already given by an enclosing "
                                     "polyc.where(...)", keyword)
                if not (isinstance(keyword.value, py.Constant)
                        and isinstance(keyword.value.value, str)):
                    raise self.error("`equivalent=` takes a string of TC, "
                                     "e.g. `equivalent=\"matmul(A, B)\"`", keyword.value)
                equivalent = keyword.value
        return self._statements(node.body, tuple(clauses), equivalent)

    def _clause(self, node) -> ast.WhereClause:
        span = self.span(node)
        if isinstance(node, py.Compare) and len(node.ops) == 1:
            left, right = node.left, node.comparators[0]
            if isinstance(node.ops[0], py.In):
                if not isinstance(left, py.Name):
                    raise self.error("a range is given for an index name: `i in range(lo, hi)`",
                                     left)
                lo, hi = self._range(right)
                return ast.RangeClause(left.id, lo, hi, span)
            if isinstance(node.ops[0], py.Eq) and isinstance(left, py.Name):
                return ast.LetClause(left.id, self.expr(right), span)
        if isinstance(node, py.NamedExpr):
            return ast.LetClause(node.target.id, self.expr(node.value), span)
        if isinstance(node, py.Call) and marker_name(self.resolve(node.func)) == "exists":
            if len(node.args) != 1 or node.keywords:
                raise self.error("polyc.exists takes one tensor access: `polyc.exists(A[i])`",
                                 node)
            return ast.ExistsClause(self.expr(node.args[0]), span)
        raise self.error(f"`{text_of(node)}` is not a where clause: write `i in range(lo, hi)`, "
                         f"a binding `t == e` or `(t := e)`, or `polyc.exists(A[i])`", node)

    def _range(self, node) -> tuple[ast.Expr, ast.Expr]:
        if (isinstance(node, py.Call) and self.resolve(node.func) is builtins.range
                and not node.keywords and 1 <= len(node.args) <= 2):
            if len(node.args) == 1:
                return ast.Number(0, False, self.span(node.func)), self.expr(node.args[0])
            return self.expr(node.args[0]), self.expr(node.args[1])
        if isinstance(node, py.Call) and self.resolve(node.func) is builtins.range:
            raise self.error("a TC range is `range(lo, hi)` (half-open, step 1)", node)
        raise self.error(f"write the range of an index as `range(lo, hi)`, not `{text_of(node)}`",
                         node)

    def _equivalent(self, node) -> ast.Expr | None:
        if node is None:
            return None
        line, _ = self.located.position(node.lineno, node.col_offset)
        return parse_expression(node.value, self.located.source.filename, line)

    # ------------------------------------------------------------- call statements

    def _callee(self, value) -> tuple[ast.Program, str] | None:
        if not isinstance(value, py.Call):
            return None
        return program_of(self.resolve(value.func))

    def _call_statement(self, node: py.Assign, target, callee, where) -> ast.Stmt:
        if callee is None:
            raise self.error("unpacking assigns the outputs of another @polyc.op operator: "
                             "`O1, O2 = other(A, B)`", node.value)
        call = node.value
        if where:
            raise self.error("a call of another operator cannot be inside polyc.where(...)",
                             node)
        if call.keywords or not all(isinstance(a, py.Name) for a in call.args):
            bad = call.keywords[0] if call.keywords else next(
                a for a in call.args if not isinstance(a, py.Name))
            raise self.error("pass whole tensors to another operator, by name: "
                             "`O = other(A, B)`", bad)
        names = target.elts if isinstance(target, (py.Tuple, py.List)) else [target]
        if not all(isinstance(n, py.Name) for n in names):
            raise self.error("a call of another operator assigns whole tensors: "
                             "`O1, O2 = other(A, B)`", target)
        program, callee_name = callee
        self._add_callee_defs(program, node)
        targets = tuple(n.id for n in names)
        args = tuple(a.id for a in call.args)
        self.tensors.update(targets)
        if len(targets) == 1:
            # As the TC parser reads `O = other(A, B)`; inlining turns it into a call.
            name_span = self.span(call.func)
            apply = ast.Apply(callee_name, tuple(ast.Name(a.id, self.span(a)) for a in call.args),
                              self.span(call), name_span)
            return ast.Assign(targets[0], (), "=", False, apply, (), None, self.span(node),
                              self.span(target))
        return ast.CallStmt(targets, callee_name, args, self.span(node))

    def _add_callee_defs(self, program: ast.Program, node) -> None:
        for definition in program.defs:
            known = self.callee_defs.get(definition.name)
            if known is None:
                self.callee_defs[definition.name] = definition
            elif known != definition:
                raise self.error(f"two different operators named `{definition.name}` are "
                                 f"called: rename one of them", node)


def _is_ignored(stmt) -> bool:
    """Docstrings (any string statement), ``pass`` and ``...``."""
    if isinstance(stmt, py.Pass):
        return True
    return (isinstance(stmt, py.Expr) and isinstance(stmt.value, py.Constant)
            and (isinstance(stmt.value.value, str) or stmt.value.value is Ellipsis))
