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
"""
from __future__ import annotations

import ast as py
import builtins
import inspect
import re
import types

from polyc.errors import ParseError, Source, Span
from polyc.lang import ast
from polyc.lang import pyspelling as spelling

_MISSING = object()

_BINARY_OPS = {py.Add: "+", py.Sub: "-", py.Mult: "*", py.Div: "/", py.Mod: "%"}
_COMPARE_OPS = {py.Eq: "==", py.NotEq: "!=", py.Lt: "<", py.LtE: "<=", py.Gt: ">", py.GtE: ">="}
_AUGMENTED_OPS = {py.Add: "+=", py.Mult: "*="}
_AUGMENTED_SYMBOLS = {py.Sub: "-=", py.Div: "/=", py.FloorDiv: "//=", py.Mod: "%=", py.Pow: "**=",
                      py.MatMult: "@=", py.BitAnd: "&=", py.BitOr: "|=", py.BitXor: "^=",
                      py.LShift: "<<=", py.RShift: ">>="}
_REDUCTION_OPS = {"sum": "+=", "prod": "*=", "max": "max=", "min": "min="}

_BINARY_HINTS = {
    py.FloorDiv: "`//` is not TC: use / (C semantics: integer division truncates toward zero)",
    py.MatMult: "`@` is not TC: write the contraction, e.g. `C[m, n] += A[m, k] * B[k, n]`",
}
_UNARY_HINTS = {py.Invert: "`~` is not TC: for logical negation write `not x`"}
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
_EXPRESSION_HINTS = {
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


def program_from_function(fn) -> tuple[ast.Program, str]:
    """The TC syntax tree of the Python-form operator ``fn`` and its def's name.

    The program holds ``fn``'s def, preceded by the defs of the operators it
    calls (and theirs), each once. Raises :class:`ParseError` with a span in
    ``fn``'s file for anything that is not the Python form of TC.
    """
    located = _LocatedFunction(fn)
    definition, callee_defs = _Reader(fn, located).read()
    program = ast.Program(tuple(callee_defs) + (definition,), located.span(located.node))
    return program, definition.name


# ----------------------------------------------------------------- source and spans


class _LocatedFunction:
    """``fn``'s ``def`` as a Python syntax tree, and the spans of its nodes.

    The source is not dedented: an indented ``def`` (a method, a function
    inside a function) is parsed as the body of an ``if 1:`` so that Python's
    columns are already the file's (textwrap.dedent would also fail on a
    docstring whose continuation lines are less indented than the ``def``).
    ``source.text`` holds the file's lines from the ``def`` on; decorators are
    left out.
    """

    def __init__(self, fn):
        name = getattr(fn, "__name__", repr(fn))
        try:
            lines, start = inspect.getsourcelines(fn)
        except (OSError, TypeError) as err:
            raise ParseError(f"cannot read the source of `{name}` ({err}): a Python-form "
                             f"operator must be a function defined in a file or notebook cell")
        filename = (inspect.getsourcefile(fn)
                    or getattr(getattr(fn, "__code__", None), "co_filename", "<unknown>"))
        text = "".join(lines)
        # Python numbers lines at \n, \r\n and \r only (unlike str.splitlines).
        self.lines = re.split(r"\r\n|\r|\n", text)
        wrapped = bool(lines) and lines[0][:1] in (" ", "\t")
        self.start = max(start, 1)  # the absolute line of lines[0]
        # The absolute line of line L of the parsed text is L + line_shift.
        self.line_shift = self.start - 1 - int(wrapped)
        try:
            module = py.parse("if 1:\n" + text if wrapped else text)
        except SyntaxError as err:
            line = (err.lineno or 1) + self.line_shift
            col = err.offset or 1
            source = Source(text, filename, self.start)
            raise ParseError(f"cannot parse the source of `{name}`: {err.msg}",
                             Span(line, col, line, col + 1, source))
        body = module.body[0].body if wrapped else module.body
        node = body[0] if body else None
        if not isinstance(node, (py.FunctionDef, py.AsyncFunctionDef)):
            raise ParseError(f"`{name}` is not written as a `def` statement (a lambda?): write "
                             f"the operator as `def {name}(...): ...`")
        def_line = node.lineno + self.line_shift
        self.source = Source("".join(lines[def_line - self.start:]), filename, def_line)
        self.node = node
        if isinstance(node, py.AsyncFunctionDef):
            raise ParseError("an operator must be a plain `def`, not `async def`", self.span(node))

    def _line(self, line: int) -> str:
        """The text of line ``line`` of the parsed text."""
        index = line + self.line_shift - self.start
        return self.lines[index] if 0 <= index < len(self.lines) else ""

    def position(self, line: int, byte_offset: int) -> tuple[int, int]:
        """(absolute line, 1-based column) of a position of the parsed text.

        Python's column offsets count UTF-8 bytes; spans count characters.
        """
        text = self._line(line)
        col = byte_offset if text.isascii() else len(
            text.encode("utf-8")[:byte_offset].decode("utf-8", "replace"))
        return line + self.line_shift, col + 1

    def span(self, node) -> Span:
        line, col = self.position(node.lineno, node.col_offset)
        end_line, end_col = self.position(node.end_lineno, node.end_col_offset)
        return Span(line, col, end_line, end_col, self.source)

    def name_span(self, node: py.FunctionDef) -> Span:
        """The span of the function's name in ``def name(``."""
        line, col = self.position(node.lineno, node.col_offset)
        found = self._line(node.lineno).find(node.name, col - 1 + len("def"))
        if found < 0:
            return self.span(node)
        return Span(line, found + 1, line, found + 1 + len(node.name), self.source)


# ----------------------------------------------------------------- the reader


class _Reader:
    """Turns one function's Python tree into an ``ast.Def`` (and collects callee defs)."""

    def __init__(self, fn, located: _LocatedFunction):
        self.fn = fn
        self.located = located
        self.namespace = _namespace(fn)
        annotations = getattr(fn, "__annotations__", None)
        self.annotations = annotations if isinstance(annotations, dict) else {}
        self.tensors: set[str] = set()  # parameters and tensors written so far
        self.callee_defs: dict[str, ast.Def] = {}

    def error(self, message: str, node) -> ParseError:
        return ParseError(message, self.located.span(node))

    def span(self, node) -> Span:
        return self.located.span(node)

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
            spec = self._resolve(node.value)
            if isinstance(spec, spelling.TensorTypeSpec) and spec.dims is None:
                parts = node.slice.elts if isinstance(node.slice, py.Tuple) else [node.slice]
                return ast.TensorType(spec.elem, tuple(self._dim(d) for d in parts),
                                      self.span(node))
        else:
            spec = self._resolve(node)
            if isinstance(spec, spelling.TensorTypeSpec):
                return ast.TensorType(spec.elem, spec.dims, self.span(node))
        raise self.error(f"the type of {what} must be a polyc tensor type such as "
                         f"`polyc.f32[\"M\", \"K\"]` or `polyc.i32` (found `{_text(node)}`)", node)

    def _dim(self, node) -> str | int:
        if isinstance(node, py.Constant):
            value = node.value
            if isinstance(value, str) and value.isidentifier():
                return value
            if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
                return value
        hint = f' (write size names as strings: "{node.id}")' if isinstance(node, py.Name) else ""
        raise self.error(f"a dimension must be a size name such as \"N\" or a non-negative "
                         f"int, not `{_text(node)}`{hint}", node)

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
                raise self.error(f"the expression statement `{_text(stmt)}` does nothing: write "
                                 f"an assignment `C[i] = ...`", stmt)
            else:
                keyword = re.search(r"\w+", _text(stmt) + " " + type(stmt).__name__).group()
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
        return ast.Assign(tensor, indices, op, init, self._expr(rhs), where,
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
        return ast.Assign(tensor, indices, op, init, self._expr(node.value), where,
                          self._equivalent(equivalent), self.span(node), lhs_span)

    def _lhs(self, target) -> tuple[str, tuple[str, ...], Span]:
        if isinstance(target, py.Name):
            return target.id, (), self.span(target)
        if isinstance(target, py.Subscript) and isinstance(target.value, py.Name):
            parts = target.slice.elts if isinstance(target.slice, py.Tuple) else [target.slice]
            for part in parts:
                if not isinstance(part, py.Name):
                    hint = _EXPRESSION_HINTS.get(type(part), "the indices of the written tensor "
                                                 "must be index names, as in `C[i, j] = ...`")
                    raise self.error(hint, part)
            return target.value.id, tuple(p.id for p in parts), self.span(target)
        if isinstance(target, py.Subscript) and isinstance(target.value, py.Subscript):
            raise self.error("write one subscript with all indices: `C[i, j]`, not `C[i][j]`",
                             target)
        raise self.error(f"cannot assign to `{_text(target)}`: write a tensor element "
                         f"`C[i, j] = ...` or a 0-rank tensor `s = ...`", target)

    def _reduction(self, value) -> tuple[str, bool, py.expr] | None:
        """(op, init, operand) when ``value`` is ``polyc.sum(e[, init=...])`` and the like."""
        if not isinstance(value, py.Call):
            return None
        marker = _marker_name(self._resolve(value.func))
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
                    and _marker_name(self._resolve(call.func)) == "where"):
                if isinstance(call, py.Call) and _text(call.func).split(".")[-1] == "where":
                    raise self.error(f"`{_text(call.func)}` is not polyc.where here: import it "
                                     f"(`from polyc import where`) or write `polyc.where(...)`",
                                     call.func)
                raise self.error(f"`with {_text(call)}` is not TC: the only block is "
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
                return ast.LetClause(left.id, self._expr(right), span)
        if isinstance(node, py.NamedExpr):
            return ast.LetClause(node.target.id, self._expr(node.value), span)
        if isinstance(node, py.Call) and _marker_name(self._resolve(node.func)) == "exists":
            if len(node.args) != 1 or node.keywords:
                raise self.error("polyc.exists takes one tensor access: `polyc.exists(A[i])`",
                                 node)
            return ast.ExistsClause(self._expr(node.args[0]), span)
        raise self.error(f"`{_text(node)}` is not a where clause: write `i in range(lo, hi)`, "
                         f"a binding `t == e` or `(t := e)`, or `polyc.exists(A[i])`", node)

    def _range(self, node) -> tuple[ast.Expr, ast.Expr]:
        if (isinstance(node, py.Call) and self._resolve(node.func) is builtins.range
                and not node.keywords and 1 <= len(node.args) <= 2):
            if len(node.args) == 1:
                return ast.Number(0, False, self.span(node.func)), self._expr(node.args[0])
            return self._expr(node.args[0]), self._expr(node.args[1])
        if isinstance(node, py.Call) and self._resolve(node.func) is builtins.range:
            raise self.error("a TC range is `range(lo, hi)` (half-open, step 1)", node)
        raise self.error(f"write the range of an index as `range(lo, hi)`, not `{_text(node)}`",
                         node)

    def _equivalent(self, node) -> ast.Expr | None:
        if node is None:
            return None
        from polyc.lang.parser import parse_expression  # the TC parser needs this module, too

        line, _ = self.located.position(node.lineno, node.col_offset)
        return parse_expression(node.value, self.located.source.filename, line)

    # ------------------------------------------------------------- call statements

    def _callee(self, value) -> tuple[ast.Program, str] | None:
        if not isinstance(value, py.Call):
            return None
        return _program_of(self._resolve(value.func))

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

    # ------------------------------------------------------------- expressions

    def _expr(self, node) -> ast.Expr:
        span = self.span(node)
        if isinstance(node, py.Constant):
            return self._constant(node, span)
        if isinstance(node, py.Name):
            return ast.Name(node.id, span)
        if isinstance(node, py.UnaryOp):
            operand = self._expr(node.operand)
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
            result = self._expr(node.values[0])
            for value in node.values[1:]:
                rhs = self._expr(value)
                result = ast.Binary(op, result, rhs, result.span.to(rhs.span))
            return result
        if isinstance(node, py.Compare):
            return self._compare(node, span)
        if isinstance(node, py.IfExp):
            return ast.Ternary(self._expr(node.test), self._expr(node.body),
                               self._expr(node.orelse), span)
        if isinstance(node, py.Call):
            return self._call(node, span)
        if isinstance(node, py.Subscript):
            return self._subscript(node, span)
        if isinstance(node, py.Attribute):
            if node.attr == "shape":
                raise self.error(f"`{_text(node)}` is a tuple: use one extent, "
                                 f"`{_text(node)}[k]` (TC's `T.k`)", node)
            raise self.error(f"attribute access `{_text(node)}` is not TC: only `T.shape[k]` "
                             f"(TC's `T.k`) and qualified functions such as `math.exp(x)`", node)
        keyword = re.search(r"\w+", _text(node) + " " + type(node).__name__).group()
        raise self.error(_EXPRESSION_HINTS.get(type(node), f"`{keyword}` is not TC"), node)

    def _constant(self, node: py.Constant, span: Span) -> ast.Number:
        value = node.value
        if isinstance(value, bool):
            return ast.Number(int(value), False, span)
        if isinstance(value, int):
            return ast.Number(value, False, span)
        if isinstance(value, float):
            return ast.Number(value, True, span)
        raise self.error(f"the literal `{_text(node)}` is not a TC value: only numbers, True "
                         f"and False", node)

    def _binary(self, node: py.BinOp, span: Span) -> ast.Expr:
        if isinstance(node.op, py.Pow):
            args = (self._expr(node.left), self._expr(node.right))
            return ast.Apply("pow", args, span, span)
        op = _BINARY_OPS.get(type(node.op))
        if op is None:
            hint = _BINARY_HINTS.get(type(node.op), "bitwise operators are not TC; for logic "
                                                    "write `and`, `or`, `not`")
            raise self.error(hint, node)
        return ast.Binary(op, self._expr(node.left), self._expr(node.right), span)

    def _compare(self, node: py.Compare, span: Span) -> ast.Expr:
        if len(node.ops) > 1:
            first, second = node.comparators[0], node.comparators[1]
            raise self.error(f"chained comparisons are not TC: write `{_text(node.left)} "
                             f"{_op_text(node.ops[0])} {_text(first)} and {_text(first)} "
                             f"{_op_text(node.ops[1])} {_text(second)}`", node)
        op = _COMPARE_OPS.get(type(node.ops[0]))
        if op is None:
            if isinstance(node.ops[0], (py.In, py.NotIn)):
                raise self.error("`in` is TC only in a range: `with polyc.where(i in "
                                 "range(lo, hi)):`", node)
            raise self.error("`is` is not TC: compare values with `==` or `!=`", node)
        return ast.Binary(op, self._expr(node.left), self._expr(node.comparators[0]), span)

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
            raise self.error(f"only tensors can be indexed: `A[i, j]`, not `{_text(node)}`",
                             node)
        if value.id not in self.tensors and isinstance(self._resolve(value),
                                                       spelling.TensorTypeSpec):
            raise self.error("tensor types belong in the parameter and return annotations",
                             node)
        parts = node.slice.elts if isinstance(node.slice, py.Tuple) else [node.slice]
        args = tuple(self._expr(p) for p in parts)
        return ast.Apply(value.id, args, span, self.span(value))

    def _call(self, node: py.Call, span: Span) -> ast.Expr:
        func = node.func
        base = func
        while isinstance(base, py.Attribute):
            base = base.value
        if isinstance(base, py.Name) and base.id in self.tensors:
            if func is base:
                raise self.error(f"index a tensor with square brackets: "
                                 f"`{base.id}[{', '.join(_text(a) for a in node.args)}]`", node)
            raise self.error(f"method calls on tensors (`{_text(func)}(...)`) are not TC: "
                             f"write the operation in index notation", node)
        if not isinstance(base, py.Name):
            if type(base) in _EXPRESSION_HINTS:
                raise self.error(_EXPRESSION_HINTS[type(base)], base)
            raise self.error(f"cannot call `{_text(func)}`: call a function by name, "
                             f"e.g. `exp(x)` or `math.exp(x)`", func)
        for arg in node.args:
            if isinstance(arg, py.Starred):
                raise self.error(_EXPRESSION_HINTS[py.Starred], arg)
        target = self._resolve(func)
        marker = _marker_name(target)
        name = func.id if isinstance(func, py.Name) else func.attr
        if isinstance(target, spelling.TensorTypeSpec):
            if target.dims is not None or len(node.args) != 1 or node.keywords:
                raise self.error(f"a cast takes one value: `{_text(func).split('[')[0]}(x)`",
                                 node)
            return ast.Apply(target.elem, (self._expr(node.args[0]),), span, self.span(func))
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
        elif _program_of(target) is not None:
            raise self.error("a call of another operator must be a whole statement: "
                             "`O1, O2 = other(A, B)`", node)
        if node.keywords:
            raise self.error(f"keyword arguments are not TC: pass the arguments of "
                             f"`{name}` by position", node.keywords[0])
        args = tuple(self._expr(a) for a in node.args)
        return ast.Apply(name, args, span, self.span(func))

    # ------------------------------------------------------------- name resolution

    def _resolve(self, node):
        """The object ``node`` names in ``fn``'s scope, or ``_MISSING``.

        Only looks names up and reads attributes of modules: nothing is evaluated.
        """
        if isinstance(node, py.Name):
            if node.id in self.tensors:
                return _MISSING
            return self.namespace(node.id)
        if isinstance(node, py.Attribute):
            base = self._resolve(node.value)
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


def _marker_name(obj) -> str | None:
    for name, marker in spelling.MARKERS.items():
        if obj is marker:
            return name
    return None


def _program_of(obj) -> tuple[ast.Program, str] | None:
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


def _is_ignored(stmt) -> bool:
    """Docstrings (any string statement), ``pass`` and ``...``."""
    if isinstance(stmt, py.Pass):
        return True
    return (isinstance(stmt, py.Expr) and isinstance(stmt.value, py.Constant)
            and (isinstance(stmt.value.value, str) or stmt.value.value is Ellipsis))


def _text(node) -> str:
    return py.unparse(node)


def _op_text(op) -> str:
    return {py.Eq: "==", py.NotEq: "!=", py.Lt: "<", py.LtE: "<=", py.Gt: ">", py.GtE: ">=",
            py.In: "in", py.NotIn: "not in", py.Is: "is", py.IsNot: "is not"}[type(op)]
