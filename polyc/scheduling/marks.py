"""The marks the scheduling passes put in the schedule tree, and how to read them.

A leaf module: the passes that write marks (tiling, jams, parallel marks, packing,
the thread partition) and those that read them (fusion choice, contraction, legality
proofs, code generation) import the vocabulary from here, not from one another.

A mark is a flag or a decision. A flag mark is a name (``parallel``, ``simd``,
``jam``). A decision mark carries the frozen object the pass decided (a register
block's shape, how many loops a parallel loop collapses, which tensors it
privatises, a packed panel, a thread partition, streamed stores, row prefetches) in
its isl
identifier's user field;
its name is only the decision's text for people reading the schedule tree. Readers
take the object (:func:`mark_value`), never parse the name.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Iterable, TypeVar

import islpy as isl

from polyc.machine.model import size_text
from polyc.poly.program import statement_names

PARALLEL_MARK = "parallel"
SIMD_MARK = "simd"                      # a parallel member: plain `omp simd`
SIMD_REDUCTION_MARK = "simd-reduction"  # a reduction member: scalar accumulator + reduction
SELECTED_MARK = "selected"  # one iteration, where the data selects (scheduling.selected_loops)

Decision = TypeVar("Decision")


@dataclass(frozen=True)
class RegisterBlock:
    """The band below keeps a block of ``rows`` × ``columns`` outputs in registers
    across its ``reductions`` loops (:mod:`polyc.scheduling.tiling`); ``columns`` are
    the lanes of its vector loop. ``edge_moves_back``: a partial block at the end of
    the vector index may move back over its neighbour's columns, recomputing them
    without storing them (proven by tiling: the instances along that index are an
    interval independent of the statement's other indices, and what the recomputed
    columns read is read-only while the loops run). ``edge_within_columns``: it moves
    back only within its own columns (halves of the block), never before its first:
    its panels are the only copy of what it reads that runs along its lanes
    (:mod:`polyc.scheduling.packed_copies`). ``outer``: the steps of a second member
    its columns span, between the rows and the vector loop (1: none;
    :func:`~polyc.machine.rules.outer_column_steps`)."""

    rows: int
    columns: int
    reductions: int
    edge_moves_back: bool = False
    edge_within_columns: bool = False
    outer: int = 1

    def mark_name(self) -> str:
        return "register"


@dataclass(frozen=True)
class Collapse:
    """The parallel loop and the next ``loops - 1`` loops run as one OpenMP loop."""

    loops: int

    def mark_name(self) -> str:
        return f"collapse {self.loops}"


@dataclass(frozen=True)
class PrivateAccumulators:
    """The loop is parallel with each thread accumulating ``tensors`` privately
    (:mod:`polyc.scheduling.privatize`)."""

    tensors: tuple[str, ...]

    def mark_name(self) -> str:
        return "parallel private: " + ", ".join(self.tensors)


@dataclass(frozen=True)
class StreamedStores:
    """The SIMD loop below stores ``tensor``, an output written once, along its last
    dimension with step 1: past the cache when it is large
    (:mod:`polyc.scheduling.stream_stores`)."""

    tensor: str

    def mark_name(self) -> str:
        return f"stream {self.tensor}"


@dataclass(frozen=True)
class PrefetchNextRow:
    """The row loop below prefetches, during its last pass, what its earlier passes read
    of ``tensors`` in the next row; and, after its first pass, for writing, the lines of
    ``stores`` that its last pass stores in the current row; in a call where those
    tensors hold at least ``from_bytes`` together (:mod:`polyc.scheduling.row_prefetch`)."""

    tensors: tuple[str, ...]
    stores: tuple[str, ...] = ()
    from_bytes: int = 0

    def mark_name(self) -> str:
        written = f"; for writing: {', '.join(self.stores)}" if self.stores else ""
        return (f"prefetch next row from {self.from_bytes} bytes: " + ", ".join(self.tensors)
                + written)

    def describe(self) -> str:
        """The decision in words, for :func:`polyc.explain.fusion_text`."""
        size = size_text(self.from_bytes)
        fetched = ", ".join(self.tensors) or "nothing"
        written = f"; for writing: {', '.join(self.stores)}" if self.stores else ""
        return (f"prefetch of the next row during the last pass, where the tensors fetched "
                f"hold at least {size}: {fetched}{written}")


@dataclass(frozen=True)
class TransposedBlock:
    """The point band below copies ``statement`` (``dst(..) = src(..)``) in square
    blocks of ``size`` × ``size`` elements of ``element_bytes``: along the member at
    ``src_member`` (a position in the band) ``src`` is contiguous, along ``dst_member``
    ``dst``; a full block is transposed in vector registers of ``lanes`` lanes. A
    partial sub-tile at an edge is copied in blocks of ``edge`` × ``edge`` (of
    ``edge_lanes`` lanes) where they fit, and element by element where they do not
    (``edge`` 0: no edge blocks; :mod:`polyc.scheduling.transposed_blocks`)."""

    statement: str
    size: int
    lanes: int
    element_bytes: int
    src_member: int
    dst_member: int
    edge: int = 0
    edge_lanes: int = 0

    def mark_name(self) -> str:
        edges = f", edges {self.edge}x{self.edge}" if self.edge else ""
        return f"transposed block {self.size}x{self.size}, {self.lanes} lanes{edges}"


def decision_mark(decision) -> isl.Id:
    """The identifier of a mark that carries ``decision`` (an object with a
    ``mark_name()``: the text isl prints for the mark)."""
    return isl.Id(decision.mark_name(), user=decision)


@dataclass(frozen=True)
class _AboveBand:
    """What a mark directly above a band carries once :func:`with_band_depths` placed it:
    its own value, and the schedule depth of the band's first member."""

    value: object
    depth: int


def mark_value(mark: isl.Id):
    """What a mark says: the decision it carries, or a flag mark's name."""
    decision = mark.user
    if isinstance(decision, _AboveBand):
        return decision.value
    return decision if decision is not None else mark.get_name()


def with_band_depths(tree: isl.Schedule) -> isl.Schedule:
    """``tree`` with each mark directly above a band also carrying the band's schedule depth
    (:func:`band_depth`), for code generation: isl names the loop of schedule dimension d
    ``c<d>``, and splits a marked band's loop into pieces where it peels iterations; a piece
    that runs one iteration starts with the band's inner loops, which the marks do not
    describe. The marks' names, and so the printed AST, stay as they are."""
    def place(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node.get_type() != isl.schedule_node_type.mark or \
                node.child(0).get_type() != isl.schedule_node_type.band:
            return node
        mark = node.mark_get_id()
        placed = isl.Id(mark.get_name(), user=_AboveBand(mark_value(mark),
                                                           node.get_schedule_depth()))
        return node.delete().insert_mark(placed)

    return tree.get_root().map_descendant_bottom_up(place).get_schedule()


def band_depth(node: isl.AstNode) -> int | None:
    """The schedule depth of the band below an AST mark placed by :func:`with_band_depths`;
    ``None`` for any other node."""
    if node.get_type() != isl.ast_node_type.mark:
        return None
    placed = node.mark_get_id().user
    return placed.depth if isinstance(placed, _AboveBand) else None


def node_mark(node: isl.ScheduleNode | isl.AstNode):
    """:func:`mark_value` of a schedule-tree or AST mark node; ``None`` for other nodes."""
    mark = (isl.schedule_node_type.mark if isinstance(node, isl.ScheduleNode)
            else isl.ast_node_type.mark)
    return mark_value(node.mark_get_id()) if node.get_type() == mark else None


def ast_children(node: isl.AstNode) -> list[isl.AstNode]:
    """The nodes directly under an AST node: a block's statements, a loop's body, an
    if's branches, a mark's node (none under a statement call)."""
    kind = node.get_type()
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        return [children.get_at(k) for k in range(len(children))]
    if kind == isl.ast_node_type.for_:
        return [node.for_get_body()]
    if kind == isl.ast_node_type.if_:
        return [node.if_get_then_node()] + (
            [node.if_get_else_node()] if node.if_has_else_node() else [])
    if kind == isl.ast_node_type.mark:
        return [node.mark_get_node()]
    return []


def statement_calls(node: isl.AstNode) -> list[isl.AstExpr]:
    """The statement calls under an AST node, in order."""
    if node.get_type() == isl.ast_node_type.user:
        return [node.user_get_expr()]
    return [call for child in ast_children(node) for call in statement_calls(child)]


def called_statements(node: isl.AstNode) -> set[str]:
    """The statements executed somewhere under an AST node."""
    return {call.get_op_arg(0).get_id().get_name() for call in statement_calls(node)}


def mark_name(mark) -> str:
    """The text of a mark value, as isl prints the mark."""
    return mark if isinstance(mark, str) else mark.mark_name()


def decision_of(marks: Iterable, kind: type[Decision]) -> Decision | None:
    """The first decision of type ``kind`` among mark values; ``None`` if there is none."""
    return next((mark for mark in marks if isinstance(mark, kind)), None)


def is_register_block(mark) -> bool:
    """Whether a mark value is a register block's."""
    return isinstance(mark, RegisterBlock)


def is_parallel(mark) -> bool:
    """Whether a mark value makes its loop an OpenMP parallel loop."""
    return mark == PARALLEL_MARK or isinstance(mark, PrivateAccumulators)


def collapsed_loops(marks: Iterable) -> int:
    """The loops a parallel loop collapses, itself included (1: none collapsed)."""
    collapse = decision_of(marks, Collapse)
    return collapse.loops if collapse is not None else 1


def insert_decision_marks(tree: isl.Schedule, decide) -> isl.Schedule:
    """``tree`` with a decision mark above each node for which ``decide(node)`` returns a
    decision (``None``: no mark); the walk goes on below the marked node."""

    def visit(node: isl.ScheduleNode) -> isl.ScheduleNode:  # returns the same position
        decision = decide(node)
        if decision is not None:
            return children(node.insert_mark(decision_mark(decision)).child(0)).parent()
        return children(node)

    def children(node: isl.ScheduleNode) -> isl.ScheduleNode:
        for position in range(node.n_children()):
            node = visit(node.child(position)).parent()
        return node

    return visit(tree.get_root()).get_schedule()


def marks_by_statement(tree: isl.Schedule) -> dict[str, frozenset]:
    """For each statement, the values of the marks above its instances."""
    found: dict[str, set] = {}

    def visit(node: isl.ScheduleNode) -> None:
        mark = node_mark(node)
        if mark is not None:
            for name in statement_names(node.get_domain()):
                found.setdefault(name, set()).add(mark)
        for k in range(node.n_children()):
            visit(node.child(k))

    visit(tree.get_root())
    return {name: frozenset(marks) for name, marks in found.items()}
