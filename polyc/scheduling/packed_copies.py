"""Layout copies that only packed panels read: the panels copy from the source instead.

A layout copy (:mod:`polyc.rewrite.layout`) transposes a strided operand once, before
the loops, so that a register block reads it along its vector lanes: tbmm's
``Y_t021(b, k, n) = Y(b, n, k)``. Where every statement that reads the copy packs it
per tile (:mod:`polyc.scheduling.packing`), the copy is a second one: the whole
operand is written to memory and read back only to be copied again into the panels.
The panels can read the source themselves, transposing as they copy::

    L0: Y_t021(b, k, n) = Y(b, n, k)           (gone)
    S0: Z(b, m, n) +=! X(b, m, k) * Y_t021(b, k, n)
  →
    S0: Z(b, m, n) +=! X(b, m, k) * Y(b, n, k)
        with its panel of Y packed per tile as before, from Y

The copy statements go; their readers read the source at the same elements (the copy's
indices substituted), register blocks through their panels: full blocks, and the edge
blocks that stay within their columns (masked or narrowed; a block that would move back
over its neighbour's columns no longer does, since it would read the source across its
lanes: one element per lane and step; kronecker3, all of whose blocks are edges, ran
7.5 -> 40 ms reading ``W`` so).
The program is rebuilt from the rewritten operator, its dependences computed again, and
the schedule (restricted to the remaining statements) proven legal against them: the
source is an input that nothing writes, so reading it anywhere is legal, and no
statement reads what the copy wrote.

tbmm (64 × 128³, Intel Xeon, AVX-512, 2 threads): the copy was 0.23 of 1.4 ms
(benchmarks/README.md, "Design measurements").
"""
from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang.printer import statement_to_tc
from polyc.poly.dependences import Dependences, compute_dependences
from polyc.poly.program import PolyProgram, build_poly_program
from polyc.rewrite.layout import layout_copies
from polyc.scheduling.marks import (RegisterBlock, decision_mark, marks_by_statement,
                                    node_mark)
from polyc.scheduling.packing import Panel
from polyc.scheduling.schedule import Schedule


@dataclass(frozen=True)
class CopiesInPanels:
    """The operator, its program, dependences and schedule without the layout copies
    that only packed panels read (``dropped``, the copy statements)."""

    op: ir.Op
    program: PolyProgram
    dependences: Dependences
    schedule: Schedule
    dropped: tuple[ir.Statement, ...]

    def describe(self) -> str:
        return "\n".join(
            f"{copy.name}: {statement_to_tc(copy)}  dropped: the panels of "
            f"{_read_of(copy).tensor} transpose it as they pack it" for copy in self.dropped)


def read_copies_in_panels(op: ir.Op, schedule: Schedule) -> CopiesInPanels | None:
    """``op`` and its schedule without the layout copies that only packed panels read
    (module docstring), or ``None`` where there is none."""
    marks = marks_by_statement(schedule.tree)
    packed = {(value.statement, value.operand) for values in marks.values()
              for value in values if isinstance(value, Panel) and not value.is_factor}
    copies = {s.tensor: s for s in op.statements
              if s.name in layout_copies(op) and isinstance(s.rhs, ir.Read)}
    elided = {}
    for tensor, copy in copies.items():
        readers = [s for s in op.statements if tensor in s.tensors_read]
        if readers and all((s.name, tensor) in packed for s in readers):
            elided[tensor] = copy
    if not elided:
        return None
    statements = tuple(
        dataclasses.replace(s, rhs=ir.rewrite(s.rhs, lambda e: _source_read(e, elided)))
        for s in op.statements if s.tensor not in elided)
    for statement in statements:
        for source in {_read_of(copy).tensor for copy in elided.values()}:
            if len({e.indices for e in ir.walk(statement.rhs)
                    if isinstance(e, ir.Read) and e.tensor == source}) > 1:
                return None  # a panel holds one read of a tensor: the source read twice
    op = dataclasses.replace(op, statements=statements, temporaries=tuple(
        t for t in op.temporaries if t.name not in elided))
    program = build_poly_program(op)
    deps = compute_dependences(program)
    sources = {tensor: _read_of(copy).tensor for tensor, copy in elided.items()}
    tree = _panels_from_sources(schedule.tree.intersect_domain(program.domain), sources)
    return CopiesInPanels(op, program, deps, dataclasses.replace(schedule, tree=tree),
                          tuple(elided.values()))


def _read_of(copy: ir.Statement) -> ir.Read:
    return copy.rhs  # a layout copy's value: the read of its source


def _source_read(e: ir.Expr, elided: dict[str, ir.Statement]) -> ir.Expr | None:
    """The read of the copy's source at the element ``e`` (a read of a copy) holds."""
    if not (isinstance(e, ir.Read) and e.tensor in elided):
        return None
    copy = elided[e.tensor]
    return ir.substitute_indices(_read_of(copy), dict(zip(copy.indices, e.indices)))


def _panels_from_sources(tree: isl.Schedule, sources: dict[str, str]) -> isl.Schedule:
    """``tree`` with each panel of an elided copy naming the copy's source, and the
    register blocks below such a panel moving back at an edge only within their own
    columns: a block moved back before its first column reads outside them, so not
    from the panel, and the source read across its lanes is a gather per lane and
    step (narrowed or masked edge blocks read the panel,
    :mod:`polyc.codegen.register_block`)."""

    def visit(node: isl.ScheduleNode, below: bool) -> isl.ScheduleNode:
        mark = node_mark(node)  # returns the node at the same position
        if isinstance(mark, Panel) and mark.operand in sources:
            mark = dataclasses.replace(mark, operand=sources[mark.operand])
            node, below = node.delete().insert_mark(decision_mark(mark)), True
        elif below and isinstance(mark, RegisterBlock) and mark.edge_moves_back:
            mark = dataclasses.replace(mark, edge_within_columns=True)
            node = node.delete().insert_mark(decision_mark(mark))
        for position in range(node.n_children()):
            node = visit(node.child(position), below).parent()
        return node

    return visit(tree.get_root(), False).get_schedule()
