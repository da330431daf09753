"""The loop nests of a kernel: isl AST nodes → C statements.

:class:`LoopNestEmitter` walks the AST. Loops, branches, blocks and statement
instances it writes itself; a loop whose marks or shape call for more it hands
to the module that knows how: OpenMP regions (:mod:`polyc.codegen.parallel_region`),
register blocks (:mod:`polyc.codegen.register_block`), vector reductions and
jammed rows (:mod:`polyc.codegen.vector_reductions`), prefetches
(:mod:`polyc.codegen.prefetch`) and streaming stores (:mod:`polyc.codegen.streaming`).
What the code sits inside (packed panels, private accumulators, a pending
prefetch) travels down the walk as a :class:`Scope`, never as emitter state.
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Mapping

import cgen
import islpy as isl

from polyc.codegen.c_expr import ExprEmitter, combine, identity, isl_expr_to_c, set_to_c
from polyc.codegen.c_names import braced, c_name, entry_name
from polyc.codegen.isl_ast import (exclusive_upper_bound, mentions, statement_loops,
                                   unparenthesized)
from polyc.codegen.outlining import Outliner, kernel_variables
from polyc.codegen.ast_build import loop_iterator
from polyc.codegen.panels import pack_code
from polyc.codegen.selected_iteration import selected_iteration
from polyc.codegen.parallel_region import (is_parallel_loop, parallel_loop, parallel_region,
                                           parallel_with_private_accumulators,
                                           parallel_with_private_temporaries, thread_box,
                                           with_private_temporaries)
from polyc.codegen.prefetch import RowPrefetch, chunked_loop, row_prefetch
from polyc.codegen.register_block import register_block_at, register_blocked
from polyc.codegen.streaming import streamed_loop
from polyc.codegen.transposed_blocks import transposed_block
from polyc.codegen.vector_reductions import jammed, simd_reduction
from polyc.errors import InternalError
from polyc.lang import ir
from polyc.lang import types as ty
from polyc.lang.ir import is_pure_reduction
from polyc.machine import Machine
from polyc.machine.rules import edge_slack
from polyc.poly.program import PolyProgram, PolyStatement, isl_name
from polyc.scheduling.folding import FoldedInit
from polyc.scheduling.marks import (PARALLEL_MARK, SELECTED_MARK, SIMD_MARK,
                                    SIMD_REDUCTION_MARK, PrivateAccumulators,
                                    StreamedStores, TransposedBlock, ast_children,
                                    band_depth, called_statements, decision_of,
                                    is_register_block, mark_name, node_mark)
from polyc.scheduling.packing import Panel
from polyc.scheduling.threads import Partition


@dataclass(frozen=True)
class Scope:
    """What the code being emitted sits inside: the packed panels its full register
    blocks read (operand -> panel), the private accumulators of a parallel loop
    (tensor -> this thread's copy), and the prefetch the next SIMD loop issues for
    the next row (a row's last pass)."""

    panels: Mapping[str, Panel] = field(default_factory=dict)
    private: Mapping[str, str] = field(default_factory=dict)
    prefetch: RowPrefetch | None = None


class LoopNestEmitter:
    """Writes the C of the isl AST's loop nests. Each node's code depends on the node,
    its marks and the :class:`Scope` it sits in; the emitter itself keeps the program's
    tables and records what the kernel's translation unit must add (helpers, threads,
    streamed outputs, the register blocks made)."""

    def __init__(self, program: PolyProgram, contractions, check_gathers: bool = True,
                 loops_around_marks: dict[object, frozenset[str]] | None = None,
                 stream_threshold: int | None = None,
                 *, machine: Machine):
        self.program = program
        self.machine = machine
        self.shared_out = False  # some nest's threads share out boxes
        self.parallel = False  # some region may run on several threads
        self.contractions = contractions
        self.exprs = ExprEmitter(program.op, contractions, check_gathers, edge_slack(machine))
        self.outliner = Outliner(entry_name(program.op), kernel_variables(program.op,
                                                                          contractions))
        self.statements = {s.name: s for s in program.statements}
        self.names = {isl_name(s): c_name(s) for s in program.op.parameters}
        self.loops_around_marks = loops_around_marks or {}
        self.stream_threshold = stream_threshold
        self.streamed: set[str] = set()  # the outputs some loop streams
        self.transposed_blocks: set[tuple[int, int, int]] = set()  # helpers' shapes
        # Folded initialisations: reduction -> C condition of a block visit that starts
        # from the identity; initialisation -> C condition under which its nest is skipped.
        self.first_visits: dict[str, str] = {}
        self.skipped_inits: dict[str, str] = {}
        self.register_marks: dict[str, int] = {}  # statement -> its register marks
        self.blocked: dict[str, int] = {}         # statement -> those emitted as blocks

    def folds_complete(self) -> bool:
        """Whether every register mark of a folded statement became a register block,
        where its first visits start from the identity (elsewhere an update would read
        the output that a skipped init nest never wrote). :meth:`fold_inits` takes up
        only folds whose marks all form blocks, so this holds after emission."""
        return all(self.blocked.get(name, 0) == self.register_marks.get(name, 0)
                   for name in self.first_visits)

    def fold_inits(self, folded: dict[str, FoldedInit], ast: isl.AstNode) -> None:
        """Take up the folded initialisations (:mod:`polyc.scheduling.folding`) that the
        C can carry out: every register mark of the statement forms a register block
        (:func:`~polyc.codegen.register_block.register_block_at`), and every iterator a
        condition names is a loop around each block (or init nest) it guards; isl emits
        no loop for a dimension with one value."""
        marks, nests = _scopes(ast, self)
        for names, _, _ in marks:
            for name in names:
                self.register_marks[name] = self.register_marks.get(name, 0) + 1
        for fold in folded.values():
            first = set_to_c(fold.first_visits, self.names)
            blocks = [scope for names, scope, _ in marks if names == {fold.statement}]
            if first is None or not blocks or not all(first[1] <= scope for scope in blocks):
                continue
            if not all(forms for names, _, forms in marks if fold.statement in names):
                continue
            self.first_visits[fold.statement] = first[0]
            skipped = (set_to_c(fold.skipped_inits, self.names)
                       if fold.skipped_inits is not None else None)
            inits = [scope for names, scope in nests if names == {fold.init}]
            if skipped is not None and all(skipped[1] <= scope for scope in inits):
                self.skipped_inits[fold.init] = skipped[0]

    def node(self, node: isl.AstNode, scope: Scope):
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            children = node.block_get_children()
            return cgen.Block([self.sequenced(children.get_at(k), scope)
                               for k in range(children.n_ast_node())])
        if kind == isl.ast_node_type.for_:
            return self._for(node, frozenset(), scope)
        if kind == isl.ast_node_type.if_:
            then = self.node(node.if_get_then_node(), scope)
            other = self.node(node.if_get_else_node(), scope) if node.if_has_else_node() else None
            return cgen.If(self.expr(node.if_get_cond()), braced(then), braced(other)
                           if other is not None else None)
        if kind == isl.ast_node_type.mark:
            marks, depth = set(), None
            while node.get_type() == isl.ast_node_type.mark:
                marks.add(node_mark(node))
                depth = band_depth(node) if depth is None else depth
                node = node.mark_get_node()
            block = decision_of(marks, TransposedBlock)
            if block is not None:
                marks.discard(block)
                fast = None if marks else transposed_block(self, block, node, depth, scope)
                if fast is not None:
                    usual = fast.edges or self._marked(node, frozenset(marks), scope, depth)
                    return cgen.If(fast.condition, fast.full, braced(usual))
            panels = {mark for mark in marks if isinstance(mark, Panel)}
            if panels:
                return self._packed(panels, node, frozenset(marks - panels), scope, depth)
            return self._marked(node, frozenset(marks), scope, depth)
        if kind == isl.ast_node_type.user:
            return self.user(node.user_get_expr(), scope)
        raise InternalError(f"unexpected isl AST node {node.to_C_str()}")

    def sequenced(self, node: isl.AstNode, scope: Scope):
        """One nest of a sequence; the nest of a folded initialisation runs only where
        some of its instances are live (:mod:`polyc.scheduling.folding`)."""
        code = self.node(node, scope)
        if not self.skipped_inits:
            return code
        names = called_statements(node)
        if len(names) == 1:
            skipped = self.skipped_inits.get(next(iter(names)))
            if skipped is not None:
                return cgen.If(f"!{skipped}", braced(code))
        return code

    def _marked(self, node: isl.AstNode, marks: frozenset, scope: Scope, depth: int | None):
        """The code of the node below ``marks``, the marks of the band at schedule ``depth``
        (:func:`~polyc.scheduling.marks.band_depth`; ``None``: the node is that band's loop)."""
        kind = node.get_type()
        if kind == isl.ast_node_type.block:
            # isl split the marked band's loop into pieces (peeled iterations); a piece
            # may be a block of its own around the loop (a peeled first iteration, then
            # the loop), which is split again. Other pieces run whole: what they hold
            # shares the private temporaries of one piece.
            children = node.block_get_children()
            return cgen.Block([
                self._marked(child, marks, scope, depth) if self._splits_band(child, depth)
                else self._marked_piece(child, marks, scope, depth)
                for child in (children.get_at(k) for k in range(len(children)))])
        if kind == isl.ast_node_type.if_ and self._splits_band(node, depth) and \
                decision_of(marks, Partition) is None:
            # isl guarded the band's loop, or split it between the branches (statements
            # over ranges of different extents: the loop over the shorter range, then
            # the rest, where the extents compare one way). The guard reads parameters
            # and outer loops only; each branch's pieces keep the band's marks, since
            # every piece runs a subset of the band's instances. (A thread box's guard
            # reads the box, declared inside the region: it stays a piece, below.)
            then = self._marked(node.if_get_then_node(), marks, scope, depth)
            other = (self._marked(node.if_get_else_node(), marks, scope, depth)
                     if node.if_has_else_node() else None)
            return cgen.If(self.expr(node.if_get_cond()), braced(then),
                           braced(other) if other is not None else None)
        return self._marked_piece(node, marks, scope, depth)

    @staticmethod
    def _splits_band(node: isl.AstNode, depth: int | None) -> bool:
        """Whether ``node``, a block or an if, holds pieces of the loop of the band at
        schedule ``depth``."""
        return node.get_type() in (isl.ast_node_type.block, isl.ast_node_type.if_) and \
            depth is not None and _holds_loop(node, loop_iterator(depth))

    def _packed(self, panels: set[Panel], node: isl.AstNode, marks: frozenset,
                scope: Scope, depth: int | None):
        """The tile's point loops (``node``) after copying the operands of ``panels``
        into packed buffers that its full register blocks read (:mod:`polyc.scheduling.packing`).
        A panel whose tile loops isl did not emit as loops is left out."""
        usable = [panel for panel in sorted(panels, key=mark_name)
                  if all(loop_iterator(dim.depth) in self.loops_around_marks.get(panel, ())
                         for dim in panel.dims)]
        code = []
        for panel in usable:
            code += pack_code(panel, self.statements[panel.statement].statement, self.exprs,
                              self.machine, self.transposed_blocks)
        panels = {**scope.panels, **{panel.operand: panel for panel in usable}}
        code.append(self._marked(node, marks, dataclasses.replace(scope, panels=panels), depth))
        return cgen.Block(code)

    def _marked_piece(self, node: isl.AstNode, marks: frozenset, scope: Scope,
                      depth: int | None):
        """One piece of a marked band: the band's loop gets the marks; a piece isl emitted
        without that loop (one iteration, a guard; it may start with the band's inner loops,
        which the marks do not describe) runs as it is, with the private temporaries of a
        parallel loop."""
        iterator = node.for_get_iterator().get_id().get_name() \
            if node.get_type() == isl.ast_node_type.for_ else None
        if iterator is not None and (depth is None or iterator == loop_iterator(depth)):
            return self._for(node, marks, scope)
        box = thread_box(self, marks)
        if box is not None:
            # isl guarded the thread's loops (a condition on its box, from isolating
            # full register blocks): the box is declared before the guard reads it.
            return parallel_region(self, cgen.Block(box + [self.node(node, scope)]))
        code = self.node(node, scope)
        if is_parallel_loop(marks) and self.contractions:
            return with_private_temporaries(self, node, code)
        return code

    def loop(self, node: isl.AstNode, body, iterator: str | None = None):
        """The C ``for`` of an isl AST ``for`` node around ``body``."""
        iterator = iterator or self.expr(node.for_get_iterator())
        return cgen.For(f"int64_t {iterator} = {self.expr(node.for_get_init())}",
                        unparenthesized(self.expr(node.for_get_cond())),
                        f"{iterator} += {self.expr(node.for_get_inc())}",
                        braced(body))

    def called(self, call: isl.AstExpr) -> tuple[PolyStatement, dict[str, isl.AstExpr]]:
        """The statement an isl AST call runs, and the expression bound to each index."""
        stmt = self.statements[call.get_op_arg(0).get_id().get_name()]
        return stmt, dict(zip(stmt.indices, (call.get_op_arg(k)
                                             for k in range(1, call.get_op_n_arg()))))

    def vector_reduction_call(self, call: isl.AstExpr, iterator: str):
        """``(stmt, bound, outer, inner)`` of a call updating a pure reduction whose element
        does not move with the vector loop ``iterator``: the bindings of the element's
        indices and of the others; ``None`` for any other call."""
        stmt, bound = self.called(call)
        statement = stmt.statement
        if stmt.is_init or not is_pure_reduction(statement) or \
                any(mentions(bound[i], iterator) for i in statement.indices):
            return None
        outer = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)), self.expr(bound[i]))
                 for i in statement.indices]
        inner = [cgen.Initializer(cgen.Value("const int64_t", c_name(i)), self.expr(bound[i]))
                 for i in stmt.indices if i not in statement.indices]
        return stmt, bound, outer, inner

    def accumulator(self, statement: ir.Statement, exprs: ExprEmitter, scope: Scope):
        """``(tensor, target, current, value)`` of a reduction: the C lvalue of the element
        it accumulates into, that element's value, and the right-hand side's value
        (:meth:`~polyc.codegen.c_expr.ExprEmitter.reduced_value`)."""
        tensor = self.program.op.tensor(statement.tensor)
        lhs = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
        exprs = self.update_exprs(statement, exprs, scope)
        target = exprs.access(tensor.name, lhs)
        current = exprs.expr(ir.Read(tensor.type, tensor.name, lhs))
        return tensor, target, current, exprs.reduced_value(statement, tensor)

    def update_exprs(self, statement: ir.Statement, exprs: ExprEmitter,
                      scope: Scope) -> ExprEmitter:
        """The expression emitter for an update of a pure reduction: inside a loop with
        private accumulators, its tensor is the thread's private copy."""
        private = scope.private.get(statement.tensor)
        if private is None or not is_pure_reduction(statement):
            return exprs
        return exprs.renamed({statement.tensor: private})

    def expr(self, expr: isl.AstExpr) -> str:
        return isl_expr_to_c(expr, self.names)

    def _for(self, node: isl.AstNode, marks: frozenset, scope: Scope):
        """A loop; a ``parallel`` mark makes it an OpenMP loop (collapsed with the loops
        inside it under a ``collapse`` mark), a ``simd`` mark a SIMD loop."""
        iterator = self.expr(node.for_get_iterator())
        if SELECTED_MARK in marks:
            selected = selected_iteration(self, node, iterator, scope)
            if selected is not None:
                return selected
        private = [t for mark in marks if isinstance(mark, PrivateAccumulators)
                   for t in mark.tensors]
        if private and not scope.private:
            return parallel_with_private_accumulators(self, node, iterator, private, scope)
        if PARALLEL_MARK in marks and self.contractions:
            return parallel_with_private_temporaries(self, node, marks, scope)
        blocked = register_blocked(self, node, iterator, scope)
        if blocked is not None:
            return blocked
        if marks & {SIMD_MARK, SIMD_REDUCTION_MARK}:
            jam = jammed(self, node, iterator, marks, scope)
            if jam is not None:
                return jam
        if SIMD_REDUCTION_MARK in marks:
            # Only the piece holding the reduction alone is vectorised (as a reduction);
            # peeled pieces with the initialisation or an epilogue stay scalar.
            reduction = simd_reduction(self, node, iterator, scope)
            if reduction is not None:
                return reduction
            marks = marks - {SIMD_REDUCTION_MARK}
        if PARALLEL_MARK in marks:
            return parallel_loop(self, node, iterator, marks, scope)
        if SIMD_MARK in marks:
            prefetch = scope.prefetch
            body = self.node(node.for_get_body(), dataclasses.replace(scope, prefetch=None))
            loop = cgen.Module([cgen.Pragma("omp simd"), self.loop(node, body, iterator)])
            upper = exclusive_upper_bound(node, iterator)
            if prefetch is not None and upper is not None:
                loop = chunked_loop(prefetch, iterator, self.expr(node.for_get_init()),
                                    self.expr(upper), body, loop)
            streamed = decision_of(marks, StreamedStores)
            return (streamed_loop(self, node, iterator, loop, streamed, prefetch)
                    if streamed is not None else None) or loop
        body = self.row_body(node.for_get_body(), row_prefetch(self, node, iterator, marks),
                              scope)
        return self.loop(node, body, iterator)

    def row_body(self, body: isl.AstNode, prefetch: RowPrefetch | None, scope: Scope):
        """The code of a row loop's ``body``; its last pass fetches for the next row."""
        if prefetch is None:
            return self.node(body, scope)
        children = body.block_get_children()
        code = [self.sequenced(children.get_at(k), scope) for k in range(len(children) - 1)]
        # after the first pass that loops over the row (polyc.codegen.prefetch)
        first = next((k for k in range(len(children) - 1)
                      if statement_loops(children.get_at(k))), 0)
        code[first + 1:first + 1] = prefetch.store_code()
        last = dataclasses.replace(scope, prefetch=prefetch)
        code.append(self.sequenced(children.get_at(len(children) - 1), last))
        return cgen.Block(code)

    def loops(self, nest: list[isl.AstNode], body):
        """The C loops of perfectly nested isl AST ``for`` nodes around ``body``."""
        for loop in reversed(nest):
            body = self.loop(loop, body)
        return body

    def user(self, call: isl.AstExpr, scope: Scope):
        name = call.get_op_arg(0).get_id().get_name()
        stmt = self.statements[name]
        args = [self.expr(call.get_op_arg(k)) for k in range(1, call.get_op_n_arg())]
        bindings = [cgen.Initializer(cgen.Value("const int64_t", c_name(index)), arg)
                    for index, arg in zip(stmt.indices, args)]
        return cgen.Block(bindings + [cgen.Statement(self._body(stmt, scope))])

    def _body(self, stmt: PolyStatement, scope: Scope) -> str:
        """The C assignment of one statement instance."""
        statement = stmt.statement
        tensor = self.program.op.tensor(statement.tensor)
        lhs_indices = tuple(ir.Index(ty.INT64, i) for i in statement.indices)
        if stmt.is_init:
            target = self.exprs.access(tensor.name, lhs_indices)
            return f"{target} = {identity(statement.op, tensor.type)}"
        exprs = self.update_exprs(statement, self.exprs, scope)
        target = exprs.access(tensor.name, lhs_indices)
        if statement.op == "=":
            return f"{target} = {exprs.expr(statement.rhs, tensor.type)}"
        value = exprs.reduced_value(statement, tensor)
        current = exprs.expr(ir.Read(tensor.type, tensor.name, lhs_indices))
        return f"{target} = {combine(statement.op, tensor, current, value)}"


def _scopes(ast: isl.AstNode, emitter: LoopNestEmitter):
    """``(marks, nests)``: for each ``register`` mark, the statements under it, the loop
    iterators around its accumulator load, and whether it forms a register block; for
    each nest of a sequence (a child of a block), its statements and the iterators
    around it. A block's accumulator is loaded outside the chain of loops directly
    above the mark that do not move its elements (its reduction loops): the walk down
    the loop nest tries ``register_blocked`` at each loop, outermost first, and this
    chain is the first one it can take."""
    marks, nests = [], []

    def walk(node: isl.AstNode, scope: frozenset[str], in_block: bool,
             path: tuple[isl.AstNode, ...]) -> set[str]:
        kind = node.get_type()
        children = ast_children(node)
        inner, inner_path = scope, ()
        if kind == isl.ast_node_type.for_:
            iterator = node.for_get_iterator().get_id().get_name()
            inner, inner_path = scope | {iterator}, path + (node,)
        elif kind == isl.ast_node_type.block and len(children) == 1:
            inner_path = path
        if kind == isl.ast_node_type.user:
            names = {emitter.called(node.user_get_expr())[0].name}
        else:
            names = set()
            for child in children:
                names |= walk(child, inner, kind == isl.ast_node_type.block, inner_path)
        if is_register_block(node_mark(node)):
            chain = _reduction_chain(node, path, emitter)
            forms = bool(chain) and register_block_at(emitter, chain[0]) is not None
            iterators = {loop.for_get_iterator().get_id().get_name() for loop in chain}
            marks.append((names, scope - iterators, forms))
        if in_block:
            nests.append((names, scope))
        return names

    walk(ast, frozenset(), False, ())
    return marks, nests


def _reduction_chain(mark: isl.AstNode, path: tuple[isl.AstNode, ...],
                     emitter: LoopNestEmitter) -> tuple[isl.AstNode, ...]:
    """The longest run of ``path``'s innermost loops that no index of the block's
    element mentions, outermost first."""
    node = mark
    while node.get_type() != isl.ast_node_type.user:
        children = ast_children(node)
        if not children:
            return ()
        node = children[0]
    stmt, bound = emitter.called(node.user_get_expr())
    element = [bound[i] for i in stmt.statement.indices]
    chain = []
    for loop in reversed(path):
        iterator = loop.for_get_iterator().get_id().get_name()
        if any(mentions(arg, iterator) for arg in element):
            break
        chain.append(loop)
    return tuple(reversed(chain))


def _holds_loop(block: isl.AstNode, iterator: str) -> bool:
    """Whether the AST block or if, or a block or if within it, holds a loop over
    ``iterator``."""
    for child in ast_children(block):
        kind = child.get_type()
        if kind == isl.ast_node_type.for_ and \
                child.for_get_iterator().get_id().get_name() == iterator:
            return True
        if kind in (isl.ast_node_type.block, isl.ast_node_type.if_) and \
                _holds_loop(child, iterator):
            return True
    return False
