"""isl AST → one C99 + OpenMP translation unit, built with cgen.

The entry point takes the sizes, then the inputs (tensors as ``const T
*restrict``, 0-rank inputs by value), then the outputs, and returns a status
(0: done; 1: out of memory; 2: a gather index was out of range)::

    int polyc_matmul(int64_t M, int64_t K, int64_t N,
                     const float *restrict A, const float *restrict B, float *restrict C)

Temporaries are allocated inside. A loop under a ``parallel`` mark becomes
``#pragma omp parallel for``, with an ``if`` clause so that small problems
do not pay for starting threads.
"""
from __future__ import annotations

from dataclasses import dataclass

import cgen
import islpy as isl

import polyc
from polyc.codegen import streaming
from polyc.codegen.ast_build import ast_children
from polyc.codegen.c_expr import ExprEmitter, identity, index_names, isl_expr_to_c, set_to_c
from polyc.codegen.c_names import PREAMBLE, braced, c_name
from polyc.codegen.panels import (iterators_around_marks, pack_code, panel_element, panel_read,
                                  tile_origin)
from polyc.codegen.prefetch import RowPrefetch, chunked_loop
from polyc.codegen.thread_boxes import GRID_HELPER, box_code
from polyc.codegen.thread_placement import PLACEMENT_HELPERS, place_team, release_team
from polyc.codegen.vector_math import declarations
from polyc.errors import InternalError
from polyc.fusion.layout import read_only_tensors, write_once_outputs
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty
from polyc.lang.printer import to_tc
from polyc.machine import Machine
from polyc.machine.rules import PARALLEL_WORK_THRESHOLD, line_elements
from polyc.poly.dependences import is_pure_reduction
from polyc.poly.folding import FoldedInit
from polyc.poly.jam import JAM_MARK
from polyc.poly.marks import (PARALLEL_MARK, REGISTER_MARK, SIMD_MARK, SIMD_REDUCTION_MARK,
                              PrivateAccumulators, collapsed_loops, decision_of, is_parallel,
                              mark_name, node_mark)
from polyc.poly.packing import Panel, operand_expr
from polyc.poly.program import PolyProgram, PolyStatement, isl_name
from polyc.poly.threads import Partition

_IF_ENOUGH_WORK = f"if(polyc_work >= {PARALLEL_WORK_THRESHOLD})"


@dataclass(frozen=True)
class CSource:
    text: str
    entry: str                          # the entry function's name
    parameters: tuple[tuple[str, str], ...]  # (C type, name) in call order
    streamed: frozenset[str] = frozenset()  # outputs with streaming stores when large
    stream_threshold: int | None = None     # ... of at least this many bytes


def entry_name(op: ir.Op) -> str:
    return f"polyc_{op.name}"


def emit_c(program: PolyProgram, ast: isl.AstNode, settings: str,
           simd_math: frozenset[str] = frozenset(), contractions=None,
           check_gathers: bool = True, stream_threshold: int | None = None,
           folded: dict[str, FoldedInit] | None = None,
           *, machine: Machine, place_threads: bool = False) -> CSource:
    """The C translation unit for ``program`` scheduled as ``ast``.

    ``settings`` describes the options (for the header comment); ``simd_math`` names
    the math functions with vector versions to declare (:mod:`polyc.codegen.vector_math`);
    outputs of at least ``stream_threshold`` bytes written once get streaming stores
    (:mod:`polyc.codegen.streaming`; ``None``: never); ``folded`` names the reductions
    whose initialisation folds into their register blocks (:mod:`polyc.poly.folding`);
    ``machine`` gives the cache line (prefetches); ``place_threads``: the kernel pins
    its OpenMP team (:mod:`polyc.codegen.thread_placement`).
    """
    op = program.op
    contractions = contractions or {}
    emitter = _Emitter(program, contractions, check_gathers, iterators_around_marks(ast),
                       stream_threshold, machine=machine)
    emitter.fold_inits(folded or {}, ast)
    code = emitter.node(ast)
    if not emitter.folds_complete():  # some register mark was not emitted as a block
        emitter = _Emitter(program, contractions, check_gathers,
                           iterators_around_marks(ast), stream_threshold, machine=machine)
        code = emitter.node(ast)
    parameters = _parameters(op)
    shared = tuple(t for t in op.temporaries if t.name not in contractions)
    body = [cgen.Statement("int polyc_status = 0")]
    body.append(cgen.Initializer(cgen.Value("const int64_t", "polyc_work"), _work(program)))
    placed = emitter.parallel and place_threads
    if placed:
        body += place_team(f"polyc_work >= {PARALLEL_WORK_THRESHOLD}")
    body += _allocate_temporaries(shared, emitter.exprs)
    body.append(code)
    if shared:
        body.append(cgen.Line("polyc_done:"))
        body += [cgen.Statement(f"free({c_name(t.name)})") for t in shared]
    if placed:
        body += release_team()
    body.append(cgen.Statement("return polyc_status"))
    declaration = cgen.FunctionDeclaration(
        cgen.Value("int", entry_name(op)),
        [_declarator(ctype, name) for ctype, name in parameters])
    function = cgen.FunctionBody(declaration, cgen.Block(body))
    header = _header_comment(op, settings)
    vector_math = declarations(emitter.exprs.math_calls, simd_math)
    stream = streaming.HELPERS if emitter.streamed else ""
    grid = GRID_HELPER if emitter.shared_out else ""
    placement = PLACEMENT_HELPERS if placed else ""
    text = "\n".join([header, PREAMBLE, stream, grid, placement, vector_math, "",
                      str(function), ""])
    return CSource(text, entry_name(op), parameters, frozenset(emitter.streamed),
                   stream_threshold)


def _parameters(op: ir.Op) -> tuple[tuple[str, str], ...]:
    params = [("int64_t", c_name(s)) for s in op.sizes]
    for tensor in op.inputs:
        if tensor.rank == 0:  # by value; float16 travels as float (no ctypes half type)
            ctype = "float" if tensor.type == ty.FLOAT16 else tensor.type.c_type
            params.append((ctype, c_name(tensor.name)))
        else:
            params.append((f"const {tensor.type.c_type} *restrict", c_name(tensor.name)))
    for tensor in op.outputs:
        params.append((f"{tensor.type.c_type} *restrict", c_name(tensor.name)))
    return tuple(params)


def _declarator(ctype: str, name: str):
    return cgen.Value(ctype, name)


def _header_comment(op: ir.Op, settings: str) -> str:
    source = to_tc(op).replace("*/", "* /")
    lines = [f"polyc {polyc.__version__}: operator `{op.name}`", f"options: {settings}", "",
             *source.rstrip().splitlines()]
    return "/*\n" + "\n".join(f" * {line}".rstrip() for line in lines) + "\n */"


def _work(program: PolyProgram) -> str:
    """C expression: the number of statement instances (the parallel-or-not decision)."""
    terms = []
    for stmt in program.statements:
        ranges = (stmt.statement.domain if not stmt.is_init else
                  tuple(stmt.statement.range_of(i) for i in stmt.statement.indices))
        factors = [f"polyc_extent({sz.to_c(sz.sub(r.hi, r.lo), c_name)})" for r in ranges]
        terms.append(" * ".join(factors) if factors else "1")
    return " + ".join(f"({t})" for t in terms) if terms else "0"


def _malloc(ctype: str, c_var: str, count: str, times: str = ""):
    """``T *restrict v = (T *)malloc(sizeof(T) * max(1, count) [* times])``."""
    return cgen.Statement(f"{ctype} *restrict {c_var} = ({ctype} *)malloc(sizeof({ctype}) * "
                          f"(size_t)polyc_max(1, {count}){times})")


def _failed(in_parallel_region: bool) -> list:
    """The statements that record an allocation failure in the kernel's status."""
    status = cgen.Statement("polyc_status = 1")
    return [cgen.Pragma("omp atomic write"), status] if in_parallel_region else [status]


def _allocate_temporaries(temporaries: tuple[ir.Tensor, ...], exprs: ExprEmitter) -> list:
    lines = []
    for tensor in temporaries:
        lines.append(_malloc(tensor.type.c_type, c_name(tensor.name),
                             exprs.element_count(tensor.shape)))
    for tensor in temporaries:
        lines.append(cgen.If(f"!{c_name(tensor.name)}",
                             cgen.Block(_failed(False) + [cgen.Statement("goto polyc_done")])))
    return lines


class _Emitter:
    def __init__(self, program: PolyProgram, contractions, check_gathers: bool = True,
                 loops_around_marks: dict[object, frozenset[str]] | None = None,
                 stream_threshold: int | None = None,
                 *, machine: Machine):
        self.program = program
        self.machine = machine
        self.shared_out = False  # some nest's threads share out boxes
        self.parallel = False  # some region may run on several threads
        self.contractions = contractions
        self.exprs = ExprEmitter(program.op, contractions, check_gathers)
        self.statements = {s.name: s for s in program.statements}
        self.names = {isl_name(s): c_name(s) for s in program.op.sizes}
        self.private: dict[str, str] = {}  # tensor -> this thread's private accumulator
        self.loops_around_marks = loops_around_marks or {}
        self.panels: dict[str, Panel] = {}  # operand -> the packed tile that full blocks read
        self.stream_threshold = stream_threshold
        self.streamable = (write_once_outputs(program.op)
                           if stream_threshold is not None else frozenset())
        self.streamed: set[str] = set()  # the outputs some loop streams
        # Folded initialisations: reduction -> C condition of a block visit that starts
        # from the identity; initialisation -> C condition under which its nest is skipped.
        self.first_visits: dict[str, str] = {}
        self.skipped_inits: dict[str, str] = {}
        self.register_marks: dict[str, int] = {}  # statement -> its register marks
        self.blocked: dict[str, int] = {}         # statement -> those emitted as blocks
        self.prefetch: RowPrefetch | None = None  # for the SIMD loop of a row's last pass

    def folds_complete(self) -> bool:
        """Whether every register mark of a folded statement became a register block,
        where its first visits start from the identity (elsewhere an update would read
        the output that a skipped init nest never wrote)."""
        return all(self.blocked.get(name, 0) == self.register_marks.get(name, 0)
                   for name in self.first_visits)

    def fold_inits(self, folded: dict[str, FoldedInit], ast: isl.AstNode) -> None:
        """Take up the folded initialisations (:mod:`polyc.poly.folding`) whose conditions
        C can test where the code runs: every iterator a condition names must be a loop
        around each register block (or init nest) it guards; isl emits no loop for a
        dimension with one value."""
        marks, nests = _scopes(ast, self)
        for names, _ in marks:
            for name in names:
                self.register_marks[name] = self.register_marks.get(name, 0) + 1
        for fold in folded.values():
            first = set_to_c(fold.first_visits, self.names)
            blocks = [scope for names, scope in marks if names == {fold.statement}]
            if first is None or not blocks or not all(first[1] <= scope for scope in blocks):
                continue
            self.first_visits[fold.statement] = first[0]
            skipped = (set_to_c(fold.skipped_inits, self.names)
                       if fold.skipped_inits is not None else None)
            inits = [scope for names, scope in nests if names == {fold.init}]
            if skipped is not None and all(skipped[1] <= scope for scope in inits):
                self.skipped_inits[fold.init] = skipped[0]

    def node(self, node: isl.AstNode):
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            return cgen.Block([self._sequenced(children.get_at(k))
                               for k in range(children.n_ast_node())])
        if kind == isl.ast_node_type.for_:
            return self._for(node, marks=frozenset())
        if kind == isl.ast_node_type.if_:
            then = self.node(node.if_get_then_node())
            other = self.node(node.if_get_else_node()) if node.if_has_else_node() else None
            return cgen.If(self._expr(node.if_get_cond()), braced(then), braced(other)
                           if other is not None else None)
        if kind == isl.ast_node_type.mark:
            marks = set()
            while node.get_type() == isl.ast_node_type.mark:
                marks.add(node_mark(node))
                node = node.mark_get_node()
            panels = {mark for mark in marks if isinstance(mark, Panel)}
            if panels:
                return self._packed(panels, node, frozenset(marks - panels))
            return self._marked(node, frozenset(marks))
        if kind == isl.ast_node_type.user:
            return self._user(node.user_get_expr())
        raise InternalError(f"unexpected isl AST node {node.to_C_str()}")

    def _sequenced(self, node: isl.AstNode):
        """One nest of a sequence; the nest of a folded initialisation runs only where
        some of its instances are live (:mod:`polyc.poly.folding`)."""
        code = self.node(node)
        if not self.skipped_inits:
            return code
        names = _statement_names(node)
        if len(names) == 1:
            skipped = self.skipped_inits.get(next(iter(names)))
            if skipped is not None:
                return cgen.If(f"!{skipped}", braced(code))
        return code

    def _marked(self, node: isl.AstNode, marks: frozenset):
        """The code of the node below ``marks``."""
        if node.get_type() == isl.ast_node_type.for_:
            return self._for(node, marks)
        if node.get_type() == isl.ast_node_type.block:
            # isl split the marked band's loop into pieces (peeled iterations):
            # each piece is that loop, so each gets the marks.
            children = node.block_get_children()
            return cgen.Block([self._marked_piece(children.get_at(k), marks)
                               for k in range(len(children))])
        return self._marked_piece(node, marks)

    def _packed(self, panels: set[Panel], node: isl.AstNode, marks: frozenset):
        """The tile's point loops (``node``) after copying the operands of ``panels``
        into packed buffers that its full register blocks read (:mod:`polyc.poly.packing`).
        A panel whose tile loops isl did not emit as loops is left out."""
        usable = [panel for panel in sorted(panels, key=mark_name)
                  if all(tile_origin(dim.depth) in self.loops_around_marks.get(panel, ())
                         for dim in panel.dims)]
        code = []
        for panel in usable:
            code += pack_code(panel, self.statements[panel.statement].statement, self.exprs,
                              self.machine)
        saved = self.panels
        self.panels = {**saved, **{panel.operand: panel for panel in usable}}
        try:
            code.append(self._marked(node, marks))
        finally:
            self.panels = saved
        return cgen.Block(code)

    def _marked_piece(self, node: isl.AstNode, marks: frozenset):
        """One piece of a marked band: a loop gets the marks; a piece isl emitted without a
        loop (one iteration, a guard) still gets the private temporaries of a parallel loop."""
        if node.get_type() == isl.ast_node_type.for_:
            return self._for(node, marks)
        code = self.node(node)
        if _is_parallel(marks) and self.contractions:
            return self._with_private_temporaries(node, code)
        return code

    def _loop(self, node: isl.AstNode, body, iterator: str | None = None):
        """The C ``for`` of an isl AST ``for`` node around ``body``."""
        iterator = iterator or self._expr(node.for_get_iterator())
        return cgen.For(f"int64_t {iterator} = {self._expr(node.for_get_init())}",
                        _unparenthesized(self._expr(node.for_get_cond())),
                        f"{iterator} += {self._expr(node.for_get_inc())}",
                        braced(body))

    def _called(self, call: isl.AstExpr) -> tuple[PolyStatement, dict[str, isl.AstExpr]]:
        """The statement an isl AST call runs, and the expression bound to each index."""
        stmt = self.statements[call.get_op_arg(0).get_id().get_name()]
        return stmt, dict(zip(stmt.indices, (call.get_op_arg(k)
                                             for k in range(1, call.get_op_n_arg()))))

    def _vector_reduction_call(self, call: isl.AstExpr, iterator: str):
        """``(stmt, bound, outer, inner)`` of a call updating a pure reduction whose element
        does not move with the vector loop ``iterator``: the bindings of the element's
        indices and of the others; ``None`` for any other call."""
        stmt, bound = self._called(call)
        statement = stmt.statement
        if stmt.is_init or not is_pure_reduction(statement) or \
                any(_mentions(bound[i], iterator) for i in statement.indices):
            return None
        outer = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)), self._expr(bound[i]))
                 for i in statement.indices]
        inner = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)), self._expr(bound[i]))
                 for i in stmt.indices if i not in statement.indices]
        return stmt, bound, outer, inner

    def _accumulator(self, statement: ir.Statement):
        """``(tensor, target, current, value)`` of a reduction: the C lvalue of the element
        it accumulates into, that element's value, and the right-hand side's value."""
        tensor = self.program.op.tensor(statement.tensor)
        lhs = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
        exprs = self._update_exprs(statement)
        target = exprs.access(tensor.name, lhs)
        current = exprs.expr(ir.Read(tensor.type, tensor.name, lhs))
        value = exprs.expr(statement.rhs, tensor.type)
        return tensor, target, current, value

    def _update_exprs(self, statement: ir.Statement) -> ExprEmitter:
        """The expression emitter for an update of a pure reduction: inside a loop with
        private accumulators, its tensor is the thread's private copy."""
        private = self.private.get(statement.tensor)
        if private is None or not is_pure_reduction(statement):
            return self.exprs
        return self.exprs.renamed({statement.tensor: private})

    def _expr(self, expr: isl.AstExpr) -> str:
        return isl_expr_to_c(expr, self.names)

    def _for(self, node: isl.AstNode, marks: frozenset):
        """A loop; a ``parallel`` mark makes it an OpenMP loop (collapsed with the loops
        inside it under a ``collapse`` mark), a ``simd`` mark a SIMD loop."""
        iterator = self._expr(node.for_get_iterator())
        private = [t for mark in marks if isinstance(mark, PrivateAccumulators)
                   for t in mark.tensors]
        if private and not self.private:
            return self._parallel_with_private_accumulators(node, iterator, private)
        if PARALLEL_MARK in marks and self.contractions:
            return self._parallel_with_private_temporaries(node, marks)
        blocked = self._register_blocked(node, iterator)
        if blocked is not None:
            return blocked
        if marks & {SIMD_MARK, SIMD_REDUCTION_MARK}:
            jammed = self._jammed(node, iterator, marks)
            if jammed is not None:
                return jammed
        if SIMD_REDUCTION_MARK in marks:
            # Only the piece holding the reduction alone is vectorised (as a reduction);
            # peeled pieces with the initialisation or an epilogue stay scalar.
            reduction = self._simd_reduction(node, iterator)
            if reduction is not None:
                return reduction
            marks = marks - {SIMD_REDUCTION_MARK}
        if PARALLEL_MARK in marks:
            box = self._box(marks)
            if box is not None:
                loop = self._loop(node, self.node(node.for_get_body()), iterator)
                return cgen.Module([self._parallel_pragma(""),
                                    cgen.Block(box + [loop])])
            nest = self._collapsible(node, marks)
            prefetch = self._row_prefetch(node, iterator) if len(nest) == 1 else None
            loop = self._loops(nest, self._row_body(nest[-1].for_get_body(), prefetch))
            return cgen.Module([self._parallel_pragma(
                f" for{_simd(marks)}{_collapse(nest)} schedule(static)"), loop])
        if SIMD_MARK in marks:
            prefetch, self.prefetch = self.prefetch, None
            body = self.node(node.for_get_body())
            loop = cgen.Module([cgen.Pragma("omp simd"), self._loop(node, body, iterator)])
            upper = _exclusive_upper_bound(node, iterator)
            if prefetch is not None and upper is not None:
                loop = chunked_loop(prefetch, iterator, self._expr(node.for_get_init()),
                                    self._expr(upper), body)
            return self._streamed(node, iterator, loop, prefetch) or loop
        body = self._row_body(node.for_get_body(), self._row_prefetch(node, iterator))
        return self._loop(node, body, iterator)

    def _row_prefetch(self, row: isl.AstNode, iterator: str) -> RowPrefetch | None:
        """What the last pass of a row loop (``row``, a loop around a sequence of passes
        ending in a SIMD loop) fetches of the next row (:mod:`polyc.codegen.prefetch`);
        ``None`` when there is nothing to fetch."""
        body, row_end = row.for_get_body(), _exclusive_upper_bound(row, iterator)
        if body.get_type() != isl.ast_node_type.block or row_end is None:
            return None
        children = body.block_get_children()
        passes = [children.get_at(k) for k in range(len(children))]
        last, marks = passes[-1], set()
        while last.get_type() == isl.ast_node_type.mark:
            marks.add(node_mark(last))
            last = last.mark_get_node()
        if SIMD_MARK not in marks or last.get_type() != isl.ast_node_type.for_ or \
                _single(last.for_get_body()).get_type() != isl.ast_node_type.user:
            return None
        first = next((loop for node in passes[:-1] for loop in _innermost_loops(node)), None)
        if first is None:
            return None
        first_iterator = self._expr(first.for_get_iterator())
        first_end = _exclusive_upper_bound(first, first_iterator)
        stmt, bound = self._called(_single(first.for_get_body()).user_get_expr())
        known = {iterator, first_iterator, *self.names}
        if first_end is None or stmt.is_init or not all(_identifiers(e) <= known for e in (
                first.for_get_init(), first_end, *bound.values())):
            return None  # the first pass's loop is not the row's child
        addresses, widths = {}, []
        for read in ir.walk(stmt.statement.rhs):
            if not isinstance(read, ir.Read) or not read.indices:
                continue
            tensor = self.program.op.tensor(read.tensor)
            *outer, inner = read.indices
            if (tensor.role != ir.INPUT or not isinstance(inner, ir.Index)
                    or not index_names(read.indices) <= bound.keys()
                    or any(isinstance(e, ir.Read) for i in outer for e in ir.walk(i))
                    or _coefficient(bound[inner.name], first_iterator) != 1
                    or any(_mentions(bound[n], first_iterator) for n in index_names(outer))
                    or not any(_mentions(bound[n], iterator)
                               for n in index_names(read.indices))):
                continue
            addresses[self.exprs.access(read.tensor, read.indices)] = None
            widths.append(tensor.type.bits // 8)
        if not addresses:
            return None
        bindings = tuple((c_name(index), self._expr(arg)) for index, arg in bound.items())
        return RowPrefetch(iterator, f"({iterator} + 1)", self._expr(row_end), first_iterator,
                           self._expr(first.for_get_init()), self._expr(first_end),
                           bindings, tuple(addresses),
                           line_elements(self.machine, min(widths)))

    def _row_body(self, body: isl.AstNode, prefetch: RowPrefetch | None):
        """The code of a row loop's ``body``; its last pass fetches for the next row."""
        if prefetch is None:
            return self.node(body)
        children = body.block_get_children()
        code = [self._sequenced(children.get_at(k)) for k in range(len(children) - 1)]
        self.prefetch = prefetch
        try:
            code.append(self._sequenced(children.get_at(len(children) - 1)))
        finally:
            self.prefetch = None
        return cgen.Block(code)

    def _jammed(self, node: isl.AstNode, iterator: str, marks: frozenset):
        """A vector loop around a ``jam`` loop (:mod:`polyc.poly.jam`) of one statement:
        for a full block of rows, the jam loop unrolled into the vector loop's body,
        each row with its own accumulator when the vector loop is a reduction; the
        loops as they are for a partial block. ``None`` for any other loop."""
        inner = _single(node.for_get_body())
        if node_mark(inner) != JAM_MARK:
            return None
        rows = inner.mark_get_node()
        if rows.get_type() != isl.ast_node_type.for_:
            return None
        row = self._expr(rows.for_get_iterator())
        trip = _constant_trip(rows, row, [iterator])
        body = _single(rows.for_get_body())
        if trip is None or body.get_type() != isl.ast_node_type.user:
            return None
        call = body.user_get_expr()
        copies = [cgen.Initializer(cgen.Value("const int64_t", row), str(k))
                  for k in range(trip.trip)]
        if SIMD_REDUCTION_MARK in marks:
            full = self._jammed_reduction(node, iterator, row, call, copies)
            if full is None:
                return None
        else:
            full = cgen.Module([cgen.Pragma("omp simd"), self._loop(node, cgen.Block([
                cgen.Block([copy, self._user(call)]) for copy in copies]), iterator)])
        if trip.full is None:
            return full
        partial = self._loop(node, self.node(node.for_get_body()), iterator)
        if SIMD_MARK in marks:
            partial = cgen.Module([cgen.Pragma("omp simd"), partial])
        return cgen.If(self._expr(trip.full), braced(full), braced(partial))

    def _jammed_reduction(self, node: isl.AstNode, iterator: str, row: str,
                          call: isl.AstExpr, copies: list):
        """The vector reduction loop of :meth:`_jammed`: one accumulator per row. Rows
        that accumulate into one element (a sum over rows too) start the accumulators
        after the first at the identity and combine them after the loop."""
        parts = self._vector_reduction_call(call, iterator)
        if parts is None:
            return None
        stmt, bound, outer, inner = parts
        statement = stmt.statement
        shared = not any(_mentions(bound[i], row) for i in statement.indices)
        tensor, target, current, value = self._accumulator(statement)
        elem = tensor.type.compute_type
        nan_flags = elem.is_float and statement.op in ("max", "min")
        accs = [f"polyc_acc{k}" for k in range(len(copies))]
        nans = [f"polyc_nan{k}" for k in range(len(copies))]
        compare = ">" if statement.op == "max" else "<"
        before, updates, after = [], [], []
        for k, (copy, acc) in enumerate(zip(copies, accs)):
            start = identity(statement.op, tensor.type) if shared and k else current
            before.append(cgen.Statement(f"{elem.c_type} {acc}"))
            load = [cgen.Statement(f"{acc} = {start}")]
            if nan_flags:
                before.append(cgen.Statement(f"int {nans[k]}"))
                load.append(cgen.Statement(f"{nans[k]} = {acc} != {acc}"))
            before.append(cgen.Block([copy, *outer, *load]))
            if nan_flags:
                update = _nan_tracking_update(statement.op, elem, acc, nans[k], value)
            else:
                update = [cgen.Statement(
                    f"{acc} = {_combine(statement.op, tensor, acc, value)}")]
            updates.append(cgen.Block([copy, *outer, *inner, *update]))
        results = list(zip(copies, accs, nans))
        if shared:  # one element: fold the accumulators into the first
            total, nan_any = accs[0], " | ".join(nans)
            for acc in accs[1:]:
                total = (f"({acc} {compare} {total} ? {acc} : {total})" if nan_flags
                         else _combine(statement.op, tensor, total, acc))
            results = [(copies[0], total, f"({nan_any})")]
        for copy, result, nan in results:
            if nan_flags:
                result = f"{nan} ? ({elem.c_type})NAN : {result}"
            after.append(cgen.Block([copy, *outer, cgen.Statement(f"{target} = {result}")]))
        clause = f"reduction({_reduction_clause(statement.op, elem)}:{', '.join(accs)})"
        if nan_flags:
            clause = f"reduction({statement.op}:{', '.join(accs)}) " \
                     f"reduction(|:{', '.join(nans)})"
        return cgen.Block(before + [cgen.Pragma(f"omp simd {clause}"),
                                    self._loop(node, cgen.Block(updates), iterator)] + after)

    def _streamed(self, node: isl.AstNode, iterator: str, plain,
                  prefetch: RowPrefetch | None = None):
        """The SIMD loop ``node`` (C: ``plain``) with streaming stores for large outputs,
        if its body is one statement writing, along ``iterator`` with step 1, an output
        written once (:mod:`polyc.codegen.streaming`), each chunk after the prefetches of
        ``prefetch``; else ``None``."""
        body = _single(node.for_get_body())
        if not self.streamable or body.get_type() != isl.ast_node_type.user:
            return None
        stmt, bound = self._called(body.user_get_expr())
        statement = stmt.statement
        if stmt.is_init or statement.tensor not in self.streamable or not statement.indices:
            return None
        *outer, last = statement.indices
        upper = _exclusive_upper_bound(node, iterator)
        if (upper is None or _coefficient(bound[last], iterator) != 1
                or any(_mentions(bound[i], iterator) for i in outer)):
            return None
        tensor = self.program.op.tensor(statement.tensor)
        lhs = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
        bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                                     self._expr(arg)) for index, arg in bound.items()]
        size = (f"(int64_t)sizeof({tensor.type.c_type}) * "
                f"{self.exprs.element_count(tensor.shape)}")
        self.streamed.add(tensor.name)
        return streaming.staged_loop(
            iterator, self._expr(node.for_get_init()), self._expr(upper), tensor.type,
            bindings, self.exprs.access(tensor.name, lhs),
            self.exprs.expr(statement.rhs, tensor.type), size, self.stream_threshold, plain,
            prefetch)

    def _parallel_pragma(self, clauses: str) -> cgen.Pragma:
        """``#pragma omp parallel<clauses>`` with the ``if`` clause on the work; notes
        that the kernel places its team (:mod:`polyc.codegen.thread_placement`)."""
        self.parallel = True
        return cgen.Pragma(f"omp parallel{clauses} {_IF_ENOUGH_WORK}")

    def _box(self, marks: frozenset) -> list | None:
        """The C declaring this thread's box, for a nest under a ``threads`` mark
        (:mod:`polyc.codegen.thread_boxes`); ``None`` for any other."""
        partition = decision_of(marks, Partition)
        if partition is None:
            return None
        self.shared_out = True
        return box_code(partition, self.program.context, self.names)

    def _collapsible(self, node: isl.AstNode, marks: frozenset) -> list[isl.AstNode]:
        """The loops, ``node`` first, that a ``collapse N`` mark lets OpenMP share out as
        one: up to N perfectly nested loops whose bounds do not depend on each other,
        never an innermost loop (the one the C compiler vectorises and unrolls)."""
        count = collapsed_loops(marks)
        nest = [node]
        while len(nest) < count:
            inner = _single(nest[-1].for_get_body())
            if inner.get_type() != isl.ast_node_type.for_ or \
                    not _has_loop(inner.for_get_body()):
                break
            outer = [self._expr(loop.for_get_iterator()) for loop in nest]
            if any(_mentions(bound, name) for name in outer for bound in (
                    inner.for_get_init(), inner.for_get_cond(), inner.for_get_inc())):
                break
            nest.append(inner)
        return nest

    def _loops(self, nest: list[isl.AstNode], body):
        """The C loops of perfectly nested isl AST ``for`` nodes around ``body``."""
        for loop in reversed(nest):
            body = self._loop(loop, body)
        return body

    def _parallel_with_private_accumulators(self, node, iterator, tensors):
        """A parallel loop whose reductions into ``tensors`` each thread accumulates in a
        private copy, added into the tensor after the loop (:mod:`polyc.poly.privatize`).

            T *polyc_private_y = malloc(threads * |y|);
            #pragma omp parallel
            { T *polyc_mine_y = its part, set to the identity;
              #pragma omp for: the loop, its updates of y going to polyc_mine_y
              #pragma omp critical: y += polyc_mine_y }
        """
        allocations, setup, combine, frees = [], [], [], []
        for name in tensors:
            tensor = self.program.op.tensor(name)
            ctype, c_var = tensor.type.c_type, c_name(name)
            count = self.exprs.element_count(tensor.shape)
            op = next(s.statement.op for s in self.program.statements
                      if s.statement.tensor == name and not s.is_init
                      and is_pure_reduction(s.statement))
            pool, mine = f"polyc_private_{c_var}", f"polyc_mine_{c_var}"
            allocations.append(_malloc(ctype, pool, count, " * (size_t)omp_get_max_threads()"))
            setup += [
                cgen.Initializer(cgen.Value(f"{ctype} *restrict", mine),
                                 f"{pool} + (size_t)omp_get_thread_num() * "
                                 f"(size_t)polyc_max(1, {count})"),
                cgen.For("int64_t polyc_e = 0", f"polyc_e < {count}", "polyc_e += 1",
                         cgen.Statement(f"{mine}[polyc_e] = {identity(op, tensor.type)}"))]
            combine.append(cgen.For(
                "int64_t polyc_e = 0", f"polyc_e < {count}", "polyc_e += 1",
                cgen.Statement(f"{c_var}[polyc_e] = " + _combine(
                    op, tensor, f"{c_var}[polyc_e]", f"{mine}[polyc_e]"))))
            frees.append(cgen.Statement(f"free({pool})"))
            self.private[name] = mine
        try:
            body = self.node(node.for_get_body())
            if self.contractions:
                body = self._with_private_temporaries(node.for_get_body(), body)
            loop = self._loop(node, body, iterator)
        finally:
            self.private = {}
        failed = " || ".join(f"!polyc_private_{c_name(name)}" for name in tensors)
        region = cgen.Block(setup + [
            cgen.Pragma("omp for schedule(static)"), loop,
            cgen.Pragma("omp critical"), cgen.Block(combine)])
        parallel = cgen.Module([
            self._parallel_pragma(""), region])
        return cgen.Block(allocations + [
            cgen.If(failed, *_failed(False), cgen.Block([parallel]))]
            + frees)

    def _parallel_with_private_temporaries(self, node, marks: frozenset):
        """The parallel loop with the contracted temporaries it uses private to each
        thread (see polyc.fusion.contraction): fixed-size ones declared in the body, the
        others allocated once per thread around the loop, not once per iteration::

            #pragma omp parallel
            { float *e = malloc(...);
              #pragma omp for: the loop, its body skipped if the allocation failed
              free(e); }
        """
        box = self._box(marks)
        nest = [node] if box is not None else self._collapsible(node, marks)
        body_node = nest[-1].for_get_body()
        decls, allocated = self._private_temporaries(body_node)
        fixed = [d for d, c_var in decls if c_var not in allocated]
        prefetch = (self._row_prefetch(node, self._expr(node.for_get_iterator()))
                    if box is None and len(nest) == 1 else None)
        body = self._row_body(body_node, prefetch)
        if fixed:
            body = cgen.Block(fixed + [body])
        clauses = f"{_simd(marks)}{_collapse(nest)} schedule(static)"
        # Shared out in boxes, each thread runs the loops of its box; else OpenMP's.
        share = box if box is not None else [cgen.Pragma(f"omp for{clauses}")]
        if not allocated:
            if box is None:
                return cgen.Module([self._parallel_pragma(
                    f" for{clauses}"),
                    self._loops(nest, body)])
            return cgen.Module([self._parallel_pragma(""),
                                cgen.Block(box + [self._loops(nest, body)])])
        failed = " || ".join(f"!{c_var}" for c_var in allocated)
        loop = self._loops(nest, cgen.If(" && ".join(allocated), braced(body)))
        region = cgen.Block(
            [d for d, c_var in decls if c_var in allocated]
            + share + [loop,
               cgen.If(failed, cgen.Block(_failed(True)))]
            + [cgen.Statement(f"free({c_var})") for c_var in allocated])
        return cgen.Module([
            self._parallel_pragma(""), region])

    def _with_private_temporaries(self, node: isl.AstNode, body):
        """``body`` (the code of ``node``) in a block that declares the contracted
        temporaries its statements use; allocation failure skips it and sets the status."""
        decls, allocated = self._private_temporaries(node)
        if not decls:
            return body
        if not allocated:
            return cgen.Block([d for d, _ in decls] + [body])
        failed = " || ".join(f"!{c_var}" for c_var in allocated)
        guarded = cgen.If(failed, cgen.Block(_failed(True)), braced(body))
        return cgen.Block([d for d, _ in decls] + [guarded] +
                          [cgen.Statement(f"free({c_var})") for c_var in allocated])

    def _private_temporaries(self, node: isl.AstNode) -> tuple[list, list[str]]:
        """``([(declaration, C name)], [C names allocated with malloc])`` of the contracted
        temporaries that the statements under ``node`` use."""
        names = _statement_names(node)
        used = {self.statements[name].statement.tensor for name in names}
        used |= {read.tensor for name in names
                 for read in ir.walk(self.statements[name].statement.rhs)
                 if isinstance(read, ir.Read)}
        decls, allocated = [], []
        for name in sorted(used & self.contractions.keys()):
            tensor = self.program.op.tensor(name)
            contraction = self.contractions[name]
            count = contraction.constant_elements(tensor)
            c_var = c_name(name)
            if count is not None:
                decls.append((cgen.Statement(
                    f"{tensor.type.c_type} {c_var}[{max(count, 1)}]"), c_var))
                continue
            elements = self.exprs.element_count(contraction.shape(tensor))
            decls.append((_malloc(tensor.type.c_type, c_var, elements), c_var))
            allocated.append(c_var)
        return decls, allocated

    def _register_blocked(self, loop: isl.AstNode, iterator: str):
        """A reduction loop around a ``register`` nest: keep the block of outputs in a local
        array across the loop (unroll-and-jam with scalar replacement).

        Before:  for (k...) for (i < 6) simd for (j < 32) C[..i..j..] += A[..] * B[..];
        After:   float polyc_acc[6][32];  load it from C
                 for (k...) for (i < 6) simd for (j < 32) polyc_acc[i][j] += A[..] * B[..];
                 store it to C

        A partial block at an edge (bounds below the full trip) keeps the constant trip
        counts, so the accumulator still lives in registers: a row past the edge repeats
        the last row (the same loads, sums and stores again), and a vector lane past the
        edge reads zeros (masked loads) and is never stored.
        """
        chain = [loop]  # the reduction loops around the register nest, outermost first
        body = _single(loop.for_get_body())
        while body.get_type() == isl.ast_node_type.for_:
            chain.append(body)
            body = _single(body.for_get_body())
        if node_mark(body) != REGISTER_MARK:
            return None
        chain_iterators = [self._expr(c.for_get_iterator()) for c in chain]
        nest, simd_levels, node = [], [], body.mark_get_node()
        while True:
            inner_marks = set()
            while node.get_type() == isl.ast_node_type.mark:
                inner_marks.add(node_mark(node))
                node = node.mark_get_node()
            if node.get_type() != isl.ast_node_type.for_:
                break
            nest.append(node)
            simd_levels.append(SIMD_MARK in inner_marks)
            node = _single(node.for_get_body())
        if not nest or node.get_type() != isl.ast_node_type.user:
            return None
        call = node.user_get_expr()
        stmt, bound = self._called(call)
        statement = stmt.statement
        if stmt.is_init or not is_pure_reduction(statement):
            return None
        lhs_args = [bound[i] for i in statement.indices]
        iterators = [self._expr(n.for_get_iterator()) for n in nest]
        if any(_mentions(a, it) for a in lhs_args for it in chain_iterators) or not all(
                any(_mentions(a, it) for a in lhs_args) for it in iterators):
            return None
        trips = [_constant_trip(inner, iterators[level], chain_iterators + iterators)
                 for level, inner in enumerate(nest)]
        if any(trip is None for trip in trips):
            return None
        block = _RegisterBlock(chain, stmt, iterators, simd_levels, trips, call)
        self.blocked[stmt.name] = self.blocked.get(stmt.name, 0) + 1
        full = [self._expr(trip.full) for trip in trips if trip.full is not None]
        if not full:
            return self._emit_register_block(block, _FULL)
        counts = [cgen.Initializer(cgen.Value("const int64_t", f"polyc_count{level}"),
                                   self._trip_count(trip))
                  for level, trip in enumerate(trips)]
        nonempty = " && ".join(f"polyc_count{level} > 0" for level in range(len(trips)))
        edge = self._emit_register_block(block, _MASKED)
        shift = self._vector_shift(block)
        if shift is not None:
            edge = cgen.Block(shift + [self._unmasked_edge(block, edge)])
        return cgen.If(" && ".join(full), self._emit_register_block(block, _FULL),
                       cgen.Block(counts + [cgen.If(nonempty, braced(edge))]))

    def _unmasked_edge(self, block: _RegisterBlock, masked):
        """An edge block without masked loads where it can be had (``polyc_shift`` set):

        * all columns, or moved back by ``polyc_shift`` lanes: the full-width block;
        * exactly half the columns (16 against 32): one half-width block that owns
          all its lanes, so it stores them without a condition;
        * more than half the columns, where it may not move back (the first block of
          a narrow extent, e.g. 24 columns against 32): half-width blocks, the last
          one moved back over its neighbour's columns (24 = 16 + 16 moved by 8);
        * otherwise ``masked``.

        The exact half is common (16 channels, 16 float32 lanes of AVX-512) and is a
        block of its own because gcc compiles the conditional store of the general
        half-width block (``if (lane >= polyc_own)``) into accumulator spills and
        blends: kronecker3 (D = 16, every block at that edge) ran 8.0 ms, and 4.2–5.0
        with this block (Zen 5, 2 threads, interleaved); wider extents (24) run as
        before.
        """
        level = block.simd_levels.index(True)
        width, count = block.trips[level].trip, f"polyc_count{level}"
        full_width = cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", "polyc_base"), "-polyc_shift"),
            cgen.Initializer(cgen.Value("const int64_t", "polyc_own"), "polyc_shift"),
            self._emit_register_block(block, _SHIFTED)])
        narrow = braced(masked)
        if width % 2 == 0:
            half = width // 2
            halves = cgen.For(
                "int64_t polyc_sub = 0", f"polyc_sub < {count}", f"polyc_sub += {half}",
                cgen.Block([
                    cgen.Initializer(cgen.Value("const int64_t", "polyc_base"),
                                     f"polyc_min(polyc_sub, {count} - {half})"),
                    cgen.Initializer(cgen.Value("const int64_t", "polyc_own"),
                                     "polyc_sub - polyc_base"),
                    self._emit_register_block(block, _SHIFTED, vector_width=half)]))
            narrow = cgen.If(f"{count} > {half}", braced(halves), narrow)
            exact = self._emit_register_block(block, _OWNED, vector_width=half)
            narrow = cgen.If(f"{count} == {half}", braced(exact), narrow)
        return cgen.If(f"polyc_shift > 0 || {count} == {width}", full_width, narrow)

    def _vector_shift(self, block: _RegisterBlock) -> list | None:
        """C that sets ``polyc_shift`` for a block whose one vector level falls short: the
        number of lanes the block may move back so that it is full again (0: it may not).

        The moved block recomputes columns of the block before it but stores only its
        own, so it runs the full-width loop without masks. Statement domains are boxes, so
        moving back is legal while the first column stays within the vector index's range;
        the columns it does not own are read only from inputs (no race with the thread
        that owns them), and their accumulators start at 0, not from the output.
        """
        levels = [k for k, simd in enumerate(block.simd_levels) if simd]
        if len(levels) != 1:
            return None
        level = levels[0]
        iterator, bound = block.iterators[level], block.bound
        moved = block.vector_indices
        if len(moved) != 1 or any(_mentions(bound[moved[0]], it)
                                  for it in block.iterators if it != iterator):
            return None
        index = moved[0]
        statement = block.stmt.statement
        # The extra columns are read only from inputs and their layout copies (made
        # before the loops that read them): nothing another thread writes meanwhile.
        read_only = read_only_tensors(self.program.op)
        if any(read.tensor not in read_only
               for read in ir.walk(statement.rhs) if isinstance(read, ir.Read)
               and index in index_names(read.indices)):
            return None
        low = self.exprs.size(statement.range_of(index).lo)
        shift = f"{block.trips[level].trip} - polyc_count{level}"
        first = cgen.Block([
            cgen.Initializer(cgen.Value("const int64_t", iterator), f"-({shift})"),
            cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                             self._expr(bound[index])),
            cgen.If(f"{c_name(index)} >= {low}", cgen.Statement(f"polyc_shift = {shift}"))])
        return [cgen.Statement("int64_t polyc_shift = 0"), first]

    def _emit_register_block(self, block: _RegisterBlock, mode: str,
                             vector_width: int | None = None):
        """The C of one register block. ``mode`` says how a block at an edge (trip counts
        ``polyc_count<level>`` below the full ones) is handled: ``_FULL`` blocks have none;
        otherwise a row past the edge repeats the last row, and a vector lane past it
        reads zeros (``_MASKED``), or (``_SHIFTED``) the block's columns start at
        ``polyc_base`` and it stores only the lanes from ``polyc_own`` on, the others
        recomputing a neighbour's columns, or (``_OWNED``, narrowed to exactly the
        columns left) it owns every lane. ``vector_width`` narrows the vector level."""
        stmt, statement = block.stmt, block.stmt.statement
        tensor = self.program.op.tensor(statement.tensor)
        elem = tensor.type.compute_type
        levels = range(len(block.iterators))
        lanes = [f"polyc_lane{level}" for level in levels]
        counts = [f"polyc_count{level}" for level in levels]
        vector_lanes = [(lane, count) for lane, count, simd
                        in zip(lanes, counts, block.simd_levels) if simd]
        exprs, store_condition = self.exprs, ""
        if mode == _MASKED and vector_lanes:
            store_condition = " && ".join(f"{lane} < {count}" for lane, count in vector_lanes)
            exprs = exprs.masked(frozenset(block.vector_indices), store_condition)
        elif mode == _SHIFTED:
            store_condition = f"{vector_lanes[0][0]} >= polyc_own"
        elif mode == _FULL:
            exprs = self._panel_reads(block, exprs)
        saved, self.exprs = self.exprs, exprs
        try:
            tensor, target, current, value = self._accumulator(statement)
            if mode == _SHIFTED:  # lanes it does not own start at 0: no read of them
                self.exprs = exprs.masked(frozenset(statement.indices), store_condition)
                current = self._accumulator(statement)[2]
        finally:
            self.exprs = saved
        bind_all = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)),
                                     self._expr(block.bound[i])) for i in stmt.indices]
        bind_lhs = [b for b, i in zip(bind_all, stmt.indices) if i in statement.indices]
        acc = "polyc_acc" + "".join(f"[{lane}]" for lane in lanes)
        widths = [vector_width if simd and vector_width else trip.trip
                  for trip, simd in zip(block.trips, block.simd_levels)]

        def lane_value(lane: str, count: str, simd: bool) -> str:
            if mode == _FULL:
                return lane
            if simd:
                return f"{lane} + polyc_base" if mode == _SHIFTED else lane
            return f"polyc_min({lane}, {count} - 1)"

        def nest_loops(body_lines):
            """The block's loops over lanes, each binding its isl iterator."""
            lines = [cgen.Initializer(cgen.Value("const int64_t", it),
                                      lane_value(lane, count, simd))
                     for lane, count, it, simd in zip(lanes, counts, block.iterators,
                                                      block.simd_levels)]
            inner = cgen.Block(lines + body_lines)
            for lane, width, simd in reversed(list(zip(lanes, widths, block.simd_levels))):
                loop_ = cgen.For(f"int64_t {lane} = 0", f"{lane} < {width}",
                                 f"{lane} += 1", inner)
                inner = cgen.Module([cgen.Pragma("omp simd"), loop_]) if simd else loop_
                inner = cgen.Block([inner])
            return inner

        store = cgen.Statement(f"{target} = {acc}")
        if store_condition:
            store = cgen.If(store_condition, store)
        reduction = nest_loops(bind_all + [cgen.Statement(
            f"{acc} = {_combine(statement.op, tensor, acc, value)}")])
        for reduction_loop in reversed(block.chain):
            reduction = self._loop(reduction_loop, reduction)
        declare = cgen.Statement(f"{elem.c_type} polyc_acc" + "".join(f"[{w}]" for w in widths))
        load = nest_loops(bind_lhs + [cgen.Statement(f"{acc} = {current}")])
        save = nest_loops(bind_lhs + [store])
        block_code = cgen.Block([declare, load, reduction, save])
        first = self.first_visits.get(stmt.name)
        if first is None:
            return block_code
        # A visit holding the first updates starts from the identity: the whole block
        # twice, since gcc compiled the block ~15% slower around a branch between loads.
        start = nest_loops([cgen.Statement(f"{acc} = {identity(statement.op, tensor.type)}")])
        return cgen.If(first, cgen.Block([declare, start, reduction, save]), block_code)

    def _panel_reads(self, block: _RegisterBlock, exprs: ExprEmitter) -> ExprEmitter:
        """``exprs``, but the reads of a full block that go to packed panels do: those of
        the block's statement, in panels blocked along an index that one level of the
        block walks, as wide as that level; a row factor's panel, the whole factor."""
        reads, factors, bound = {}, {}, block.bound
        statement = block.stmt.statement
        for operand, panel in self.panels.items():
            if panel.statement != block.stmt.name:
                continue
            if not panel.lanes:  # row-major: any block inside the tile reads it
                factors[operand_expr(panel, statement)] = panel_element(panel, "")
                continue
            levels = [k for k, it in enumerate(block.iterators)
                      if _mentions(bound[panel.dims[0].index], it)]
            if len(levels) == 1 and block.trips[levels[0]].trip == panel.lanes:
                reads[operand] = panel_read(panel, statement, block.iterators[levels[0]])
        return exprs.redirected(reads).substituted(factors)

    def _trip_count(self, trip: _Trip) -> str:
        bound = self._expr(trip.bound)
        return bound if trip.strict else f"{bound} + 1"

    def _simd_reduction(self, node: isl.AstNode, iterator: str):
        """A SIMD loop whose body is one reduction into an element that does not depend on
        the loop: keep the accumulator in a scalar and let OpenMP vectorise the reduction.

        Before:  for (k...) C[m*N+n] = C[m*N+n] + A[m*K+k] * B[k*N+n];
        After:   float polyc_acc = C[m*N+n];
                 #pragma omp simd reduction(+:polyc_acc)
                 for (k...) polyc_acc = polyc_acc + A[m*K+k] * B[k*N+n];
                 C[m*N+n] = polyc_acc;
        """
        body = node.for_get_body()
        calls = ast_children(body) if body.get_type() == isl.ast_node_type.block else [body]
        if not all(call.get_type() == isl.ast_node_type.user for call in calls):
            return None
        found = [(k, self._vector_reduction_call(call.user_get_expr(), iterator))
                 for k, call in enumerate(calls)]
        found = [(k, parts) for k, parts in found if parts is not None]
        if len(found) != 1:
            return None
        position, (stmt, _, outer, inner) = found[0]
        statement = stmt.statement
        # The other statements of a fused pass (polyc.fusion.vector_passes) run beside
        # the reduction; none may touch its element, which lives in the accumulator.
        others = [self._called(call.user_get_expr())[0] for call in calls]
        if any(other is not stmt and _touches(other.statement, statement.tensor)
               for other in others):
            return None
        before = [self._user(call.user_get_expr()) for call in calls[:position]]
        after = [self._user(call.user_get_expr()) for call in calls[position + 1:]]
        tensor, target, current, value = self._accumulator(statement)
        elem = tensor.type.compute_type
        if elem.is_float and statement.op in ("max", "min"):
            return cgen.Block(outer + self._nan_tracking_reduction(
                node, iterator, statement.op, elem, (before, inner, after),
                (target, current, value)))
        update = cgen.Statement(
            f"polyc_acc = {_combine(statement.op, tensor, 'polyc_acc', value)}")
        loop = self._loop(node, cgen.Block(before + inner + [update] + after), iterator)
        clause = _reduction_clause(statement.op, elem)
        return cgen.Block(outer + [
            cgen.Initializer(cgen.Value(elem.c_type, "polyc_acc"), current),
            cgen.Pragma(f"omp simd reduction({clause}:polyc_acc)"),
            loop,
            cgen.Statement(f"{target} = polyc_acc"),
        ])

    def _nan_tracking_reduction(self, node: isl.AstNode, iterator: str, op: str,
                                elem: ty.ScalarType, body: tuple[list, list, list],
                                access: tuple[str, str, str]):
        """A float max/min reduction as OpenMP's own ``max``/``min`` plus an ``|`` of
        "saw a NaN": two short dependence chains per vector instead of one long one
        (compare, merge the masks, blend), about 3x faster in a row of floats. The
        result is NaN if the element or any value was, as with numpy's max and min.
        """
        target, current, value = access
        before, inner, after = body
        update = inner + _nan_tracking_update(op, elem, "polyc_acc", "polyc_nan", value)
        return [
            cgen.Initializer(cgen.Value(elem.c_type, "polyc_acc"), current),
            cgen.Initializer(cgen.Value("int", "polyc_nan"), "polyc_acc != polyc_acc"),
            cgen.Pragma(f"omp simd reduction({op}:polyc_acc) reduction(|:polyc_nan)"),
            self._loop(node, cgen.Block(before + update + after), iterator),
            cgen.Statement(f"{target} = polyc_nan ? ({elem.c_type})NAN : polyc_acc"),
        ]

    def _user(self, call: isl.AstExpr):
        name = call.get_op_arg(0).get_id().get_name()
        stmt = self.statements[name]
        args = [self._expr(call.get_op_arg(k)) for k in range(1, call.get_op_n_arg())]
        bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(index)), arg)
                    for index, arg in zip(stmt.indices, args)]
        return cgen.Block(bindings + [cgen.Statement(self._body(stmt))])

    def _body(self, stmt: PolyStatement) -> str:
        """The C assignment of one statement instance."""
        statement = stmt.statement
        tensor = self.program.op.tensor(statement.tensor)
        lhs_indices = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
        if stmt.is_init:
            target = self.exprs.access(tensor.name, lhs_indices)
            return f"{target} = {identity(statement.op, tensor.type)}"
        exprs = self._update_exprs(statement)
        target = exprs.access(tensor.name, lhs_indices)
        value = exprs.expr(statement.rhs, tensor.type)
        if statement.op == "=":
            return f"{target} = {value}"
        current = exprs.expr(ir.Read(tensor.type, tensor.name, lhs_indices))
        return f"{target} = {_combine(statement.op, tensor, current, value)}"


def _scopes(ast: isl.AstNode, emitter: "_Emitter"):
    """``(marks, nests)``: for each ``register`` mark and each nest of a sequence (a
    child of a block), the statements under it and the loop iterators around it. For a
    mark, those around its accumulator load: outside the chain of loops directly above
    it that do not move the block's elements (the reduction loops, as
    ``_register_blocked`` takes them)."""
    marks, nests = [], []

    def walk(node: isl.AstNode, scope: frozenset[str], in_block: bool,
             path: tuple[str, ...]) -> set[str]:
        kind = node.get_type()
        children = ast_children(node)
        inner, inner_path = scope, ()
        if kind == isl.ast_node_type.for_:
            iterator = node.for_get_iterator().get_id().get_name()
            inner, inner_path = scope | {iterator}, path + (iterator,)
        elif kind == isl.ast_node_type.block and len(children) == 1:
            inner_path = path
        if kind == isl.ast_node_type.user:
            names = {emitter._called(node.user_get_expr())[0].name}
        else:
            names = set()
            for child in children:
                names |= walk(child, inner, kind == isl.ast_node_type.block, inner_path)
        if node_mark(node) == REGISTER_MARK:
            marks.append((names, scope - set(_reduction_chain(node, path, emitter))))
        if in_block:
            nests.append((names, scope))
        return names

    walk(ast, frozenset(), False, ())
    return marks, nests


def _reduction_chain(mark: isl.AstNode, path: tuple[str, ...], emitter: "_Emitter"):
    """The longest run of ``path``'s innermost loops that no index of the block's
    element mentions."""
    node = mark
    while node.get_type() != isl.ast_node_type.user:
        children = ast_children(node)
        if not children:
            return ()
        node = children[0]
    stmt, bound = emitter._called(node.user_get_expr())
    element = [bound[i] for i in stmt.statement.indices]
    chain = []
    for iterator in reversed(path):
        if any(_mentions(arg, iterator) for arg in element):
            break
        chain.append(iterator)
    return tuple(chain)


def _combine(op: str, tensor: ir.Tensor, current: str, value: str) -> str:
    elem = tensor.type.compute_type
    if op in ("+", "*"):
        if elem.kind == "bool":
            return f"({current} {'||' if op == '+' else '&&'} {value})"
        return f"({current} {op} {value})"
    if elem.is_float:
        suffix = "d" if elem.bits == 64 else "f"
        return f"polyc_{op}{suffix}({current}, {value})"
    compare = ">" if op == "max" else "<"
    return f"(({value}) {compare} ({current}) ? ({value}) : ({current}))"


def _touches(statement: ir.Statement, tensor: str) -> bool:
    """Whether ``statement`` writes or reads ``tensor``."""
    return statement.tensor == tensor or tensor in statement.tensors_read


def _simd(marks: frozenset) -> str:
    return " simd" if SIMD_MARK in marks else ""


def _collapse(nest: list) -> str:
    return f" collapse({len(nest)})" if len(nest) > 1 else ""


def _is_parallel(marks: frozenset) -> bool:
    return any(is_parallel(mark) for mark in marks)


def _has_loop(node: isl.AstNode) -> bool:
    """Whether a ``for`` loop runs somewhere under an AST node."""
    return node.get_type() == isl.ast_node_type.for_ or any(
        _has_loop(child) for child in ast_children(node))


def _innermost_loops(node: isl.AstNode) -> list[isl.AstNode]:
    """The loops under an AST node (itself included) whose body is one statement, in
    order."""
    if node.get_type() == isl.ast_node_type.for_ and \
            _single(node.for_get_body()).get_type() == isl.ast_node_type.user:
        return [node]
    return [loop for child in ast_children(node) for loop in _innermost_loops(child)]


def _identifiers(expr: isl.AstExpr) -> set[str]:
    """The identifiers an isl AST expression uses."""
    if expr.get_type() == isl.ast_expr_type.id:
        return {expr.get_id().get_name()}
    if expr.get_type() == isl.ast_expr_type.op:
        return set().union(*(_identifiers(expr.get_op_arg(k))
                             for k in range(expr.get_op_n_arg())))
    return set()


def _statement_names(node: isl.AstNode) -> set[str]:
    """The statements executed somewhere under an AST node."""
    if node.get_type() == isl.ast_node_type.user:
        return {node.user_get_expr().get_op_arg(0).get_id().get_name()}
    return set().union(*(_statement_names(child) for child in ast_children(node)))


def _single(node: isl.AstNode) -> isl.AstNode:
    """The only child of a one-statement block, else the node itself."""
    if node.get_type() == isl.ast_node_type.block:
        children = node.block_get_children()
        if len(children) == 1:
            return children.get_at(0)
    return node


# Register-block edge modes (see _Emitter._emit_register_block).
_FULL, _MASKED, _SHIFTED, _OWNED = "full", "masked", "shifted", "owned"


@dataclass(frozen=True)
class _Trip:
    """A register-block loop ``for (it = 0; it <= bound; ++it)`` (``<`` when ``strict``)
    with a constant largest trip count; ``full`` is an isl condition for making all of
    them (``None``: always)."""

    trip: int
    full: isl.AstExpr | None
    bound: isl.AstExpr
    strict: bool


@dataclass(frozen=True)
class _RegisterBlock:
    chain: list                         # reduction loops around the block, outermost first
    stmt: PolyStatement
    iterators: list[str]                # the block's loop iterators, outermost first
    simd_levels: list[bool]             # which of them is a vector loop
    trips: list[_Trip]
    call: isl.AstExpr                   # the statement's isl call (its index expressions)

    @property
    def bound(self) -> dict[str, isl.AstExpr]:
        return dict(zip(self.stmt.indices, (self.call.get_op_arg(k)
                                            for k in range(1, self.call.get_op_n_arg()))))

    @property
    def vector_indices(self) -> tuple[str, ...]:
        """The statement's indices that move with a vector level's iterator."""
        vector = [it for it, simd in zip(self.iterators, self.simd_levels) if simd]
        bound = self.bound
        return tuple(i for i in self.stmt.indices
                     if any(_mentions(bound[i], it) for it in vector))


def _constant_trip(loop: isl.AstNode, iterator: str, invariant_in: list[str]) -> _Trip | None:
    """The :class:`_Trip` of a loop ``for (it = 0; it <= min(K, e); ++it)`` (or ``<= K``);
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
    if any(_mentions(bound, name) for name in invariant_in):
        return None
    if bound.get_type() == isl.ast_expr_type.int:
        last = bound.get_val().to_python() - (1 if strict else 0)
        return _Trip(last + 1, None, bound, strict) if last >= 0 else None
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
        return _Trip(last + 1, full, bound, strict)
    return None


def _min_operands(expr: isl.AstExpr) -> list[isl.AstExpr]:
    """The operands of nested ``min`` expressions, flattened."""
    if expr.get_type() != isl.ast_expr_type.op or \
            expr.get_op_type() != isl.ast_expr_op_type.min:
        return [expr]
    return [leaf for k in range(expr.get_op_n_arg())
            for leaf in _min_operands(expr.get_op_arg(k))]


def _nan_tracking_update(op: str, elem: ty.ScalarType, acc: str, nan: str, value: str) -> list:
    """One step of a float max/min reduction kept as a plain max/min into ``acc`` and an
    ``|`` of "this value is NaN" into ``nan``."""
    compare = ">" if op == "max" else "<"
    return [cgen.Initializer(cgen.Value(f"const {elem.c_type}", "polyc_v"), value),
            cgen.Statement(f"{acc} = polyc_v {compare} {acc} ? polyc_v : {acc}"),
            cgen.Statement(f"{nan} |= polyc_v != polyc_v")]


def _reduction_clause(op: str, elem: ty.ScalarType) -> str:
    """The OpenMP reduction identifier (float max/min take ``_nan_tracking_reduction``)."""
    if elem.kind == "bool":
        return "||" if op in ("+", "max") else "&&"
    return op


def _coefficient(expr: isl.AstExpr, name: str) -> int | None:
    """The coefficient of identifier ``name`` in an isl AST expression, if it is affine
    in ``name`` (sums, differences, negations, products by constants)."""
    if not _mentions(expr, name):
        return 0
    kind = expr.get_type()
    if kind == isl.ast_expr_type.id:
        return 1
    op = expr.get_op_type()
    args = [expr.get_op_arg(k) for k in range(expr.get_op_n_arg())]
    terms = [_coefficient(arg, name) for arg in args]
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


def _exclusive_upper_bound(node: isl.AstNode, iterator: str) -> isl.AstExpr | None:
    """``U`` of a loop ``for (it = ...; it < U; it += 1)`` (``it <= V``: ``V + 1``), else
    ``None``."""
    cond, inc = node.for_get_cond(), node.for_get_inc()
    if (inc.get_type() != isl.ast_expr_type.int or inc.get_val().to_python() != 1
            or cond.get_type() != isl.ast_expr_type.op or cond.get_op_n_arg() != 2):
        return None
    it, bound = cond.get_op_arg(0), cond.get_op_arg(1)
    if it.get_type() != isl.ast_expr_type.id or it.get_id().get_name() != iterator \
            or _mentions(bound, iterator):
        return None
    if cond.get_op_type() == isl.ast_expr_op_type.lt:
        return bound
    if cond.get_op_type() == isl.ast_expr_op_type.le:
        return bound.add(isl.AstExpr.from_val(isl.Val.one(bound.get_ctx())))
    return None


def _mentions(expr: isl.AstExpr, name: str) -> bool:
    """Whether the isl AST expression uses the identifier ``name``."""
    kind = expr.get_type()
    if kind == isl.ast_expr_type.id:
        return expr.get_id().get_name() == name
    if kind == isl.ast_expr_type.op:
        return any(_mentions(expr.get_op_arg(k), name) for k in range(expr.get_op_n_arg()))
    return False


def _unparenthesized(text: str) -> str:
    """``(c0 < M)`` → ``c0 < M``: OpenMP's canonical loop form wants a bare comparison."""
    if not (text.startswith("(") and text.endswith(")")):
        return text
    depth = 0
    for position, char in enumerate(text):
        depth += {"(": 1, ")": -1}.get(char, 0)
        if depth == 0 and position < len(text) - 1:
            return text
    return text[1:-1]
