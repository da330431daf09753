"""Semantic analysis: a syntax tree becomes the typed, ranged IR of one operator.

``analyze(program, name)`` picks the ``def``, inlines call statements, then
walks the statements in order:

1. resolves every name (let-binding, size variable, scalar, tensor, index);
2. types every expression (``polyc.lang.types`` promotion rules);
3. splits indices into left-hand and reduction indices and checks the
   operator (a reduction index needs a reduction operator);
4. ranges every index (``polyc.lang.statement_ranges``): ``where`` clauses, which may
   depend on other indices (a triangle), then inference (``polyc.lang.ranges``) with
   reads under an affine guard consulted last (``polyc.lang.guards``);
5. defines the written tensor on its first statement (an output, or a
   temporary when it is not in the ``-> (...)`` list) with the shape given by
   the ranges of its left-hand indices, which must start at 0 so that no
   element stays unwritten.

Proving the accesses in bounds comes next, in ``polyc.poly.bounds``.
"""
from __future__ import annotations

import difflib
from dataclasses import dataclass, field

from polyc.errors import SemanticError, Span
from polyc.lang import ast, ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty
from polyc.lang.builtins import BUILTINS
from polyc.lang.guards import guarded_reads
from polyc.lang.inline import inline_calls
from polyc.lang.literals import widened
from polyc.lang.printer import range_bounds_to_tc
from polyc.lang.statement_ranges import GivenRange, size_bound, statement_ranges

_REDUCTION_OF = {"+=": "+", "*=": "*", "max=": "max", "min=": "min"}
# Lowering a range bound: indices allowed, but only those the statement already uses.
_KNOWN_INDICES = "known"


def select_def(program: ast.Program, name: str | None) -> ast.Def:
    """The ``def`` called ``name``, or the only one when ``name`` is ``None``."""
    seen: dict[str, ast.Def] = {}
    for definition in program.defs:
        if definition.name in seen:
            raise SemanticError(f"duplicate def name `{definition.name}`",
                                definition.name_span or definition.span)
        seen[definition.name] = definition
    if name is None:
        if len(program.defs) == 1:
            return program.defs[0]
        names = ", ".join(seen)
        raise SemanticError(f"the source defines several operators ({names}): "
                            f"pick one with name=...", program.span)
    if name not in seen:
        raise SemanticError(f"no def named `{name}` in the source{_did_you_mean(name, seen)}"
                            f" (it defines {', '.join(seen)})", program.span)
    return seen[name]


# Deeper expressions than this are rejected: every later stage walks them recursively.
MAX_EXPRESSION_DEPTH = 200


def analyze(program: ast.Program, name: str | None = None) -> ir.Op:
    """The IR of the operator ``name`` (see the module docstring)."""
    for definition in program.defs:
        _check_depth(definition)
    definition = select_def(program, name)
    definition = inline_calls(program, definition)
    return _OpBuilder(definition, program.span.source if program.span else None).build()


def _check_depth(definition: ast.Def) -> None:
    """Reject expressions nested deeper than :data:`MAX_EXPRESSION_DEPTH` (iteratively)."""
    for stmt in definition.body:
        roots = [stmt.rhs] if isinstance(stmt, ast.Assign) else []
        if isinstance(stmt, ast.Assign):
            for clause in stmt.where:
                roots += [getattr(clause, f) for f in ("lo", "hi", "value", "expr")
                          if hasattr(clause, f)]
        stack = [(root, 1) for root in roots]
        while stack:
            node, depth = stack.pop()
            if depth > MAX_EXPRESSION_DEPTH:
                raise SemanticError(
                    f"expression nested more than {MAX_EXPRESSION_DEPTH} levels deep: split "
                    f"it into several statements with temporaries", stmt.span)
            children = [getattr(node, f) for f in ("operand", "lhs", "rhs", "cond", "then",
                                                   "other") if hasattr(node, f)]
            children += list(getattr(node, "args", ()))
            stack.extend((child, depth + 1) for child in children)


# ----------------------------------------------------------------- typed expressions


@dataclass(frozen=True)
class _Typed:
    expr: ir.Expr
    weak: bool


@dataclass
class _StmtScope:
    """Names of one statement: its let-bindings and the index variables seen so far."""

    lets: dict[str, ast.LetClause]
    lowered_lets: dict[str, _Typed] = field(default_factory=dict)
    indices: dict[str, Span | None] = field(default_factory=dict)
    lets_in_progress: set[str] = field(default_factory=set)


class _OpBuilder:
    def __init__(self, definition: ast.Def, source):
        self.definition = definition
        self.source = source
        self.sizes: list[str] = []
        self.inputs: list[ir.Tensor] = []
        self.tensors: dict[str, ir.Tensor] = {}
        self.output_decls = {o.name: o for o in definition.outputs}
        self.defined_outputs: list[str] = []
        self.temporaries: list[str] = []
        self.statements: list[ir.Statement] = []

    # ------------------------------------------------------------- parameters

    def build(self) -> ir.Op:
        self._declare_params()
        self._check_output_decls()
        for stmt in self.definition.body:
            if not isinstance(stmt, ast.Assign):
                raise SemanticError("call statements must be inlined before sema", stmt.span)
            self._statement(stmt)
        for decl in self.definition.outputs:
            if decl.name not in self.tensors:
                raise SemanticError(f"output `{decl.name}` is never defined: add a statement "
                                    f"`{decl.name}(...) = ...`", decl.span)
        outputs = tuple(self.tensors[o.name] for o in self.definition.outputs)
        op = ir.Op(
            name=self.definition.name,
            sizes=tuple(self.sizes),
            inputs=tuple(self.inputs),
            outputs=outputs,
            temporaries=tuple(self.tensors[t] for t in self.temporaries),
            statements=tuple(self.statements),
            source=self.source,
        )
        return op

    def _declare_params(self) -> None:
        for param in self.definition.params:
            for dim in param.type.dims or ():
                if isinstance(dim, str) and dim not in self.sizes:
                    self.sizes.append(dim)
        for param in self.definition.params:
            if param.name in self.tensors:
                raise SemanticError(f"duplicate parameter name `{param.name}`", param.span)
            elem = self._scalar_type(param.type)
            dims: list[sz.SizeExpr] = []
            for dim in param.type.dims or ():
                if isinstance(dim, int):
                    dims.append(sz.const(dim))
                elif isinstance(dim, str):
                    dims.append(sz.var(dim))
                else:
                    dims.append(self._derived_extent(dim, param.name))
            tensor = ir.Tensor(param.name, elem, tuple(dims), ir.INPUT, param.span)
            self.tensors[param.name] = tensor
            self.inputs.append(tensor)
        for name in self.sizes:
            if name in self.tensors:
                raise SemanticError(f"`{name}` is both a size variable and a tensor",
                                    self.tensors[name].span)

    def _derived_extent(self, dim: ast.Expr, tensor: str) -> sz.SizeExpr:
        """An input extent written as an expression of sizes that plain dimensions name."""
        for name in (e.name for e in _names_in(dim)):
            if name not in self.sizes:
                raise SemanticError(f"`{name}` in the extent of `{tensor}` is not a size: an "
                                    f"extent may use the sizes that other dimensions name",
                                    dim.span)
        return self._size_expr(dim, _StmtScope({}))

    def _check_output_decls(self) -> None:
        seen: set[str] = set()
        for decl in self.definition.outputs:
            if decl.name in seen:
                raise SemanticError(f"output `{decl.name}` is listed twice", decl.span)
            if decl.name in self.tensors:
                raise SemanticError(f"`{decl.name}` is an input and cannot be an output "
                                    f"(inputs are read-only)", decl.span)
            if decl.name in self.sizes:
                raise SemanticError(f"`{decl.name}` is a size variable, not a tensor", decl.span)
            seen.add(decl.name)
            if decl.type is not None:
                self._scalar_type(decl.type)

    def _scalar_type(self, tensor_type: ast.TensorType) -> ty.ScalarType:
        elem = ty.TYPE_NAMES.get(tensor_type.elem)
        if elem is None:
            raise SemanticError(f"unknown type `{tensor_type.elem}`"
                                f"{_did_you_mean(tensor_type.elem, ty.TYPE_NAMES)}",
                                tensor_type.span)
        return elem

    # ------------------------------------------------------------- statements

    def _statement(self, stmt: ast.Assign) -> None:
        target = self.tensors.get(stmt.tensor)
        if target is not None and target.role == ir.INPUT:
            raise SemanticError(f"cannot assign to input `{stmt.tensor}`: inputs are read-only",
                                stmt.lhs_span or stmt.span)
        if stmt.tensor in self.sizes:
            raise SemanticError(f"cannot assign to size variable `{stmt.tensor}`",
                                stmt.lhs_span or stmt.span)
        if target is not None and target.rank != len(stmt.indices):
            raise SemanticError(f"`{stmt.tensor}` has {target.rank} dimension(s) but is "
                                f"written with {len(stmt.indices)} index(es)",
                                stmt.lhs_span or stmt.span)
        self._check_lhs_indices(stmt)

        lets = {}
        given_clauses: dict[str, ast.RangeClause] = {}
        exists: list[ast.Expr] = []
        for clause in stmt.where:
            if isinstance(clause, ast.LetClause):
                if clause.name in lets:
                    raise SemanticError(f"`{clause.name}` is bound twice", clause.span)
                lets[clause.name] = clause
            elif isinstance(clause, ast.RangeClause):
                if clause.index in given_clauses:
                    raise SemanticError(f"index `{clause.index}` has two ranges", clause.span)
                given_clauses[clause.index] = clause
            else:
                exists.append(clause.expr)
        scope = _StmtScope(lets)
        for index in stmt.indices:
            scope.indices.setdefault(index, stmt.lhs_span)

        rhs = self._lower(stmt.rhs, scope)
        exists_reads = [self._lower(e, scope).expr for e in exists]
        for index, clause in given_clauses.items():
            if index in lets or index in self.sizes or index in self.tensors:
                raise SemanticError(f"`{index}` in a range clause must be an index variable",
                                    clause.span)
            if index not in scope.indices:
                raise SemanticError(f"index `{index}` has a range but is not used in the "
                                    f"statement", clause.span)
        lhs_set = set(stmt.indices)
        reduction_indices = tuple(i for i in scope.indices if i not in lhs_set)
        op = "=" if stmt.op == "=" else _REDUCTION_OF[stmt.op]
        if stmt.op == "=" and stmt.init:
            raise SemanticError("`=!` is not an operator: use `=`", stmt.span)
        if reduction_indices and op == "=":
            first = reduction_indices[0]
            raise SemanticError(
                f"index `{first}` appears only on the right-hand side, so it is a reduction "
                f"index, but `=` is not a reduction: use a reduction operator such as `+=!`",
                scope.indices[first] or stmt.span)

        domain = self._ranges(stmt, scope, given_clauses, rhs.expr, exists_reads)
        equivalent = None
        if stmt.equivalent is not None:
            equivalent = _source_text(stmt.equivalent.span) or "equivalent"
        tensor = self._define_target(stmt, domain, rhs, op)
        # literals alone take the type of the tensor they are stored in or added to
        # (`Y(i) = 0.1` into a float64 `Y` stores 0.1, not 0.1 rounded to float32)
        value = _retype_literal(rhs, tensor.type.compute_type) \
            if tensor.type.is_float else rhs.expr
        statement = ir.Statement(
            name=f"S{len(self.statements)}",
            tensor=tensor.name,
            indices=tuple(stmt.indices),
            op=op,
            init=stmt.init,
            rhs=value,
            domain=domain,
            reduction_indices=reduction_indices,
            equivalent=equivalent,
            span=stmt.span,
        )
        self.statements.append(statement)

    def _check_lhs_indices(self, stmt: ast.Assign) -> None:
        seen: set[str] = set()
        for index in stmt.indices:
            if index in seen:
                raise SemanticError(f"index `{index}` appears twice on the left-hand side",
                                    stmt.lhs_span or stmt.span)
            if index in self.sizes or index in self.tensors:
                raise SemanticError(f"left-hand index `{index}` is already the name of a "
                                    f"{'size variable' if index in self.sizes else 'tensor'}",
                                    stmt.lhs_span or stmt.span)
            seen.add(index)

    def _ranges(self, stmt, scope, given_clauses, rhs, exists_reads) -> tuple[ir.IndexRange, ...]:
        given = [GivenRange(index, self._bound(clause.lo, scope), self._bound(clause.hi, scope),
                            clause.span, clause.lo.span, clause.hi.span)
                 for index, clause in given_clauses.items()]
        reads = [(read, guard) for root in (rhs, *exists_reads)
                 for read, guard in guarded_reads(root)]
        target = self.tensors.get(stmt.tensor)
        if target is not None:
            lhs = ir.Read(target.type, target.name,
                          tuple(ir.Index(ty.INT64, i) for i in stmt.indices))
            reads.append((lhs, None))
        return statement_ranges(tuple(stmt.indices), scope.indices, given, reads, self.tensors,
                                stmt.span)

    def _bound(self, expr: ast.Expr, scope) -> ir.Expr:
        """A range bound lowered: sizes, constants and the statement's indices."""
        return self._lower(expr, scope, allow_indices=_KNOWN_INDICES).expr

    def _define_target(self, stmt: ast.Assign, domain, rhs: _Typed, op: str) -> ir.Tensor:
        existing = self.tensors.get(stmt.tensor)
        if existing is not None:
            return existing
        if stmt.tensor not in self.output_decls and not op == "=" and not stmt.init:
            raise SemanticError(
                f"`{stmt.tensor}` accumulates with `{stmt.op}` before it has any value: "
                f"use `{stmt.op}!` to start from the operator's identity",
                stmt.lhs_span or stmt.span)
        shape = []
        ranges = {r.index: r for r in domain}
        for position, index in enumerate(stmt.indices):
            index_range = ranges[index]
            lo = index_range.lo
            if not index_range.is_box and not stmt.init:
                pass  # what it leaves unwritten, later statements may write: poly.coverage
            elif not index_range.is_box and not (lo == sz.const(0)):
                raise SemanticError(
                    f"`{stmt.tensor}` is defined here with `{index}` in "
                    f"{range_bounds_to_tc(index_range)}, whose `!` initialises only {sz.to_tc(lo)}:"
                    f"{sz.to_tc(index_range.hi)}, leaving the first elements of dimension "
                    f"{position} unwritten (polyc never returns unwritten elements); define "
                    f"`{stmt.tensor}` over its whole extent first",
                    stmt.lhs_span or stmt.span)
            elif not (isinstance(lo, sz.Affine) and lo.is_constant and lo.const == 0):
                negated = sz.neg(lo)
                shifted = (f"{index} - {_operand(negated)}" if sz.to_tc(lo).startswith("-")
                           else f"{index} + {_operand(lo)}")
                raise SemanticError(
                    f"`{stmt.tensor}` is defined here with `{index}` in "
                    f"{sz.to_tc(lo)}:{sz.to_tc(index_range.hi)}, which would leave its first "
                    f"elements of dimension {position} unwritten (polyc never returns unwritten "
                    f"elements); make `{index}` start at 0: write `{shifted}` where the "
                    f"right-hand side uses `{index}`, with "
                    f"`where {index} in 0:{sz.to_tc(sz.sub(index_range.hi, lo))}`",
                    stmt.lhs_span or stmt.span)
            shape.append(index_range.hi)
        decl = self.output_decls.get(stmt.tensor)
        if decl is not None and decl.type is not None:
            elem = self._scalar_type(decl.type)
            self._check_declared_shape(decl, shape)
        else:
            elem = _materialize(rhs)
            if elem.kind == "bool" and op in ("+", "*"):
                elem = ty.INT32
        role = ir.OUTPUT if decl is not None else ir.TEMPORARY
        tensor = ir.Tensor(stmt.tensor, elem, tuple(shape), role, stmt.lhs_span or stmt.span)
        self.tensors[stmt.tensor] = tensor
        (self.defined_outputs if decl is not None else self.temporaries).append(stmt.tensor)
        return tensor

    def _check_declared_shape(self, decl: ast.OutputDecl, shape) -> None:
        dims = decl.type.dims
        if dims is None:
            return
        declared = [sz.const(d) if isinstance(d, int) else sz.var(d) for d in dims]
        if len(declared) != len(shape) or any(a != b for a, b in zip(declared, shape)):
            want = ", ".join(sz.to_tc(d) for d in declared)
            got = ", ".join(sz.to_tc(s) for s in shape)
            raise SemanticError(f"output `{decl.name}` is declared with shape ({want}) but its "
                                f"statements give ({got})", decl.type.span or decl.span)

    # ------------------------------------------------------------- sizes

    def _size_expr(self, expr: ast.Expr, scope) -> sz.SizeExpr:
        """A range bound: an integer expression of sizes and constants."""
        return size_bound(self._lower(expr, scope, allow_indices=False).expr, expr.span)

    # ------------------------------------------------------------- expressions

    def _lower(self, expr: ast.Expr, scope: _StmtScope, allow_indices: bool = True) -> _Typed:
        lower = _ExprLowering(self, scope, allow_indices)
        return lower(expr)


class _ExprLowering:
    """Resolves names and types one expression of a statement."""

    def __init__(self, builder: _OpBuilder, scope: _StmtScope, allow_indices: bool):
        self.builder = builder
        self.scope = scope
        self.allow_indices = allow_indices

    def __call__(self, e: ast.Expr) -> _Typed:
        method = getattr(self, "_" + type(e).__name__.lower())
        return method(e)

    def _number(self, e: ast.Number) -> _Typed:
        if e.is_float:
            return _Typed(ir.Const(ty.FLOAT32, float(e.value)), True)
        value = int(e.value)
        if not -2**63 <= value < 2**64:
            raise SemanticError(f"integer literal {value} does not fit in 64 bits", e.span)
        elem = ty.INT32 if -2**31 <= value < 2**31 else (ty.INT64 if value < 2**63 else ty.UINT64)
        return _Typed(ir.Const(elem, value), True)

    def _name(self, e: ast.Name) -> _Typed:
        builder, scope = self.builder, self.scope
        if e.name in scope.lets:
            if e.name in scope.lets_in_progress:
                raise SemanticError(f"binding `{e.name}` refers to itself", e.span)
            if e.name not in scope.lowered_lets:
                scope.lets_in_progress.add(e.name)
                scope.lowered_lets[e.name] = self(scope.lets[e.name].value)
                scope.lets_in_progress.discard(e.name)
            return scope.lowered_lets[e.name]
        if e.name in builder.sizes:
            return _Typed(ir.SizeValue(ty.INT64, sz.var(e.name)), True)
        tensor = builder.tensors.get(e.name)
        if tensor is not None:
            if tensor.rank != 0:
                raise SemanticError(f"`{e.name}` has {tensor.rank} dimension(s): index it, "
                                    f"e.g. `{e.name}({', '.join('ijkl'[:tensor.rank])})`",
                                    e.span)
            return _Typed(ir.Read(tensor.type, e.name, ()), False)
        if e.name in builder.output_decls:
            raise SemanticError(f"output `{e.name}` is used before its definition", e.span)
        if e.name in ty.TYPE_NAMES or e.name in BUILTINS:
            raise SemanticError(f"`{e.name}` is a function: call it with arguments", e.span)
        if not self.allow_indices:
            raise SemanticError(f"`{e.name}` is not a size variable: range bounds may only use "
                                f"sizes ({', '.join(builder.sizes) or 'none declared'}) and "
                                f"integer constants", e.span)
        if self.allow_indices == _KNOWN_INDICES and e.name not in self.scope.indices:
            raise SemanticError(f"`{e.name}` in a range bound is neither a size variable nor an "
                                f"index of this statement", e.span)
        self.scope.indices.setdefault(e.name, e.span)
        return _Typed(ir.Index(ty.INT64, e.name), True)

    def _dimof(self, e: ast.DimOf) -> _Typed:
        tensor = self.builder.tensors.get(e.tensor)
        if tensor is None:
            raise SemanticError(f"unknown tensor `{e.tensor}` in dimension query", e.span)
        if not 0 <= e.dim < tensor.rank:
            raise SemanticError(f"`{e.tensor}` has {tensor.rank} dimension(s); "
                                f"`{e.tensor}.{e.dim}` does not exist", e.span)
        return _Typed(ir.SizeValue(ty.INT64, tensor.shape[e.dim]), True)

    def _unary(self, e: ast.Unary) -> _Typed:
        operand = self(e.operand)
        if e.op == "!":
            return _Typed(ir.Unary(ty.BOOL, "!", operand.expr), False)
        if e.op == "+":
            return operand
        elem = operand.expr.type.compute_type
        if elem.kind == "bool":
            elem = ty.INT32
        if isinstance(operand.expr, ir.Const) and not isinstance(operand.expr.value, bool):
            return _Typed(ir.Const(elem, -operand.expr.value), operand.weak)
        return _Typed(ir.Unary(elem, "-", operand.expr), operand.weak)

    def _binary(self, e: ast.Binary) -> _Typed:
        lhs, rhs = self(e.lhs), self(e.rhs)
        if e.op in ("&&", "||"):
            return _Typed(ir.Binary(ty.BOOL, e.op, lhs.expr, rhs.expr), False)
        elem, weak = ty.promote(lhs.expr.type, lhs.weak, rhs.expr.type, rhs.weak)
        if elem.kind == "bool":
            elem = ty.INT32
        a, b = _retype_literal(lhs, elem), _retype_literal(rhs, elem)
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            return _Typed(ir.Binary(ty.BOOL, e.op, a, b), False)
        return _Typed(ir.Binary(elem, e.op, a, b), weak)

    def _ternary(self, e: ast.Ternary) -> _Typed:
        cond, then, other = self(e.cond), self(e.then), self(e.other)
        elem, weak = ty.promote(then.expr.type, then.weak, other.expr.type, other.weak)
        if then.expr.type.kind == "bool" and other.expr.type.kind == "bool":
            elem = ty.BOOL
        return _Typed(ir.Select(elem, cond.expr, _retype_literal(then, elem),
                                _retype_literal(other, elem)), weak)

    def _apply(self, e: ast.Apply) -> _Typed:
        name_span = e.name_span or e.span
        tensor = self.builder.tensors.get(e.name)
        if tensor is not None:
            return self._read(tensor, e)
        if e.name in ty.TYPE_NAMES:
            if len(e.args) != 1:
                raise SemanticError(f"cast `{e.name}(...)` takes one argument", e.span)
            operand, target = self(e.args[0]), ty.TYPE_NAMES[e.name]
            # float64(0.1) is 0.1 in float64, not 0.1 rounded to float32 and widened
            value = _retype_literal(operand, target) if target.is_float else operand.expr
            return _Typed(ir.Cast(target, value), False)
        builtin = BUILTINS.get(e.name)
        if builtin is None:
            if e.name in self.builder.output_decls:
                raise SemanticError(f"output `{e.name}` is used before its definition", name_span)
            known = list(self.builder.tensors) + list(BUILTINS)
            raise SemanticError(f"unknown tensor or function `{e.name}`"
                                f"{_did_you_mean(e.name, known)}", name_span)
        if len(e.args) != builtin.arity:
            raise SemanticError(f"`{e.name}` takes {builtin.arity} argument(s) but "
                                f"{len(e.args)} were given", e.span)
        args = [self(a) for a in e.args]
        elem, weak = args[0].expr.type, args[0].weak
        for arg in args[1:]:
            elem, weak = ty.promote(elem, weak, arg.expr.type, arg.weak)
        if builtin.kind == "math" and not elem.is_float:
            elem = ty.FLOAT32
        elem = elem.compute_type
        if elem.kind == "bool":
            elem = ty.INT32
        return _Typed(ir.Call(elem, e.name, tuple(_retype_literal(a, elem) for a in args)), weak)

    def _read(self, tensor: ir.Tensor, e: ast.Apply) -> _Typed:
        if len(e.args) != tensor.rank:
            raise SemanticError(f"`{tensor.name}` has {tensor.rank} dimension(s) but is indexed "
                                f"with {len(e.args)}", e.span)
        indices = []
        for arg in e.args:
            index = self(arg)
            if not index.expr.type.is_integral or index.expr.type.kind == "bool":
                what = "gather index" if any(isinstance(x, ir.Read)
                                             for x in ir.walk(index.expr)) else "index"
                raise SemanticError(f"{what} of `{tensor.name}` must be an integer, but it is "
                                    f"{index.expr.type}", arg.span)
            indices.append(_retype_literal(index, ty.INT64))
        return _Typed(ir.Read(tensor.type, tensor.name, tuple(indices)), False)


def _names_in(expr: ast.Expr):
    """The :class:`ast.Name` nodes of an expression."""
    if isinstance(expr, ast.Name):
        yield expr
    for value in vars(expr).values():
        for item in value if isinstance(value, tuple) else (value,):
            if isinstance(item, ast.Expr):
                yield from _names_in(item)


def _retype_literal(typed: _Typed, elem: ty.ScalarType) -> ir.Expr:
    """A weak literal takes the type of the operation it appears in; so does a floating
    expression of literals alone where that type is wider (``1.0 / 9.0`` in a float64
    product is computed in float64, not rounded to float32 first)."""
    expr = typed.expr
    if typed.weak and isinstance(expr, ir.Const) and expr.type != elem:
        value = float(expr.value) if elem.is_float else expr.value
        if not elem.is_float and isinstance(expr.value, float):
            return expr
        return ir.Const(elem, value)
    if typed.weak and elem.is_float and expr.type.is_float and elem.bits > expr.type.bits:
        return widened(expr, elem)
    return expr


def _materialize(typed: _Typed) -> ty.ScalarType:
    """The element type a new tensor gets from its defining expression."""
    elem = typed.expr.type
    if typed.weak:
        if elem.is_float:
            return ty.FLOAT32 if elem.bits <= 32 else ty.FLOAT64
        if elem.kind in ("int", "uint") and elem.bits == 64 and isinstance(
                typed.expr, (ir.Index, ir.SizeValue, ir.Binary, ir.Unary)):
            return ty.INT32
    return elem


def _operand(e: sz.SizeExpr) -> str:
    """TC text of ``e`` fit to follow a ``+``."""
    text = sz.to_tc(e)
    simple = isinstance(e, sz.Affine) and len(e.terms) + bool(e.const) <= 1 and e.const >= 0
    return text if simple or isinstance(e, sz.MinMax) else f"({text})"


def _did_you_mean(name: str, candidates) -> str:
    close = difflib.get_close_matches(name, list(candidates), n=1)
    return f" (did you mean `{close[0]}`?)" if close else ""


def _source_text(span: Span | None) -> str | None:
    if span is None or span.source is None or span.line != span.end_line:
        return None
    return span.source.line_text(span.line)[span.col - 1:span.end_col - 1]
