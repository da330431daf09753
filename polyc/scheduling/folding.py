"""Folding a reduction's initialisation into its register block.

A reduction with ``!`` (``Y(m, n) +=! X(m, k) * W(k, n)``) has an initialisation
statement that sets each output to the identity before the first update. Inside a
tile the schedule runs it as a nest of its own, right before the register blocks
that then load those identities into their accumulators::

    for tiles:                                   for tiles:
      if (first reduction tile) Y(tile) = 0        (init nest skipped)
      for blocks:                          →       for blocks:
        acc = Y(block)                               acc = first visit ? 0 : Y(block)
        for k: acc += X * W                          for k: acc += X * W
        Y(block) = acc                               Y(block) = acc

Both rewrites are derived from the exact dataflow (``dep_flow``), not from the shape
of the loops:

* the *first* instances of the reduction are those that read the value the
  initialisation wrote; a block *visit* (the loops around the block's accumulator
  load) starts from the identity where it holds first instances, provided every
  element it updates has its first instance in that visit (else folding is off);
* an initialisation instance is *dead* when every instance that reads its value is
  such a first instance; the init nest is skipped at the loop values where all of
  its instances are dead. Where the reduction is empty (``K = 0``) nothing reads
  the identity, so it is live (an output) and the nest still runs.

Each condition is a set of values of the loops outside (an isl set over the schedule
dimensions above the block or the nest, simplified in the context of where those
loops run), printed as C by :func:`polyc.codegen.c_expr.set_to_c` over the AST's
iterators ``c<depth>``; code generation takes a fold up only where every iterator a
condition names is a loop around the code it guards.

Folding pays only where the output is no wider than a register block along its
vector index (a run-time test on that extent): there the init nest is a sweep of
short partial vectors (kronecker3's 16-wide output rows). Wider outputs lose,
because the init nest's dense sweep brings the output tile into cache ahead of the
blocks (measurements: benchmarks/README.md, "Design measurements"). Blocks that reuse
no operand across their rows (a window sum,
:func:`polyc.scheduling.register_blocks.reuses_nothing`) fold at every width: their
few loads per output leave the stores of an init nest and the blocks' reloads of them
the larger part of the work (an average pool 3 x 3: 0.42 → 0.30 ms).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.poly.dependences import Dependences
from polyc.poly.program import PolyProgram, isl_items, statement_names
from polyc.poly.relations import affine_inputs
from polyc.scheduling.marks import SIMD_MARK, is_register_block, node_mark
from polyc.scheduling.register_blocks import reuses_nothing


@dataclass(frozen=True)
class FoldedInit:
    """What code generation needs to fold ``init`` into the register blocks of
    ``statement``: the values of the loops around a block visit at which it starts from
    the identity, and those of the loops around the init nest at which the nest is
    skipped (sets over the schedule dimensions, outermost first, and the sizes: only
    outputs no wider than a block fold)."""

    statement: str
    init: str
    first_visits: isl.Set
    skipped_inits: isl.Set | None
    vector_index: str   # the index the block's vector lanes walk
    lanes: int          # the block's lanes along it


def folded_inits(tree: isl.Schedule, deps: Dependences,
                 program: PolyProgram) -> dict[str, FoldedInit]:
    """The reductions whose initialisation folds into their register blocks, by name."""
    folded = {}
    for mark in _register_marks(tree.get_root()):
        statement = _only_statement(mark.get_domain())
        if statement is None or program.statement(statement).is_init:
            continue
        init = next((s.name for s in program.statements
                     if s.is_init and s.statement is program.statement(statement).statement),
                    None)
        if init is None or statement in folded:
            continue
        found = _fold(mark, statement, init, deps, program, tree)
        if found is not None:
            folded[statement] = found
    return folded


def _register_marks(node: isl.ScheduleNode) -> list[isl.ScheduleNode]:
    found = []
    if is_register_block(node_mark(node)):
        found.append(node)
    for k in range(node.n_children()):
        found += _register_marks(node.child(k))
    return found


def _only_statement(domain: isl.UnionSet) -> str | None:
    names = set(statement_names(domain))
    return names.pop() if len(names) == 1 else None


def _single_map(union: isl.UnionMap) -> isl.Map | None:
    maps = isl_items(union.get_map_list())
    return maps[0] if len(maps) == 1 else None


def _fold(mark: isl.ScheduleNode, statement: str, init: str, deps: Dependences,
          program: PolyProgram, tree: isl.Schedule) -> FoldedInit | None:
    block_band = mark.parent()
    if block_band.get_type() != isl.schedule_node_type.band:
        return None
    instances = mark.get_domain()
    if not instances.is_equal(isl.UnionSet.from_set(_statement_set(program.domain,
                                                                   statement))):
        return None  # some updates run elsewhere (not as register blocks)
    # The visit: the loops down to the block band's row and column blocks; the rest of
    # the band is the reduction loops each visit runs.
    reductions = block_band.band_n_member() - 2
    prefix = _single_map(mark.get_prefix_schedule_union_map().intersect_domain(instances))
    if prefix is None or reductions < 0:
        return None
    depth = prefix.dim(isl.dim_type.out)
    visit = prefix.project_out(isl.dim_type.out, depth - reductions, reductions)

    inits = _statement_set(program.domain, init)
    flow = deps.dep_flow
    from_init = flow.intersect_domain(isl.UnionSet.from_set(inits))
    first = from_init.intersect_range(instances).range()
    if first.is_empty():
        return None
    writes = program.must_writes.intersect_domain(instances)
    # visit -> elements it updates; visit -> elements whose first update it holds
    updated = isl.UnionMap.from_map(visit).reverse().apply_range(writes)
    started = isl.UnionMap.from_map(visit).intersect_domain(first).reverse().apply_range(writes)
    first_visits = isl.UnionMap.from_map(visit).intersect_domain(first).range()
    mixed = updated.intersect_domain(first_visits).subtract(started)
    if not mixed.is_empty():
        return None
    visits = isl.UnionMap.from_map(visit).range()
    condition = _as_set(first_visits.gist(visits).gist_params(program.context))
    if condition is None:
        return None

    vector = _vector_index(mark, program.statement(statement).indices)
    if vector is None:
        return None
    lanes = node_mark(mark).columns
    # Only where the output is no wider than a block along the vector index does the
    # fold pay (module docstring): a condition on the sizes, tested at run time. Blocks
    # that reuse no operand across their rows (window sums) fold at every width.
    domain = _statement_set(program.domain, statement)
    narrow = isl.Set.universe(domain.params().get_space()) \
        if reuses_nothing(statement, vector, program) else \
        _no_wider_than(domain, program.statement(statement).indices.index(vector),
                       lanes).gist(domain.params().intersect(program.context))
    dead = _dead_inits(from_init, first)
    skipped = _skipped_inits(tree, init, inits, dead, program)
    return FoldedInit(statement, init, condition.intersect_params(narrow),
                      None if skipped is None else skipped.intersect_params(narrow),
                      vector, lanes)


def _no_wider_than(domain: isl.Set, dim: int, lanes: int) -> isl.Set:
    """The sizes at which ``domain`` spans at most ``lanes`` values of dimension ``dim``."""
    extent = domain.dim_max(dim).sub(domain.dim_min(dim))  # one less than the span
    return extent.neg().add_constant_val(isl.Val(lanes - 1)).nonneg_set()


def _vector_index(mark: isl.ScheduleNode, indices: tuple[str, ...]) -> str | None:
    """The index the block's vector level walks: the band under its ``simd`` mark."""
    node = mark.child(0)
    while node.n_children() == 1:
        if node.get_type() == isl.schedule_node_type.mark and \
                node_mark(node) == SIMD_MARK:
            parts = isl_items(node.child(0).band_get_partial_schedule().get_at(0)
                              .get_pw_aff_list())
            if len(parts) != 1 or len(parts[0].get_pieces()) != 1:
                return None
            walked = affine_inputs(parts[0])
            return indices[next(iter(walked))] if len(walked) == 1 else None
        node = node.child(0)
    return None


def _statement_set(domain: isl.UnionSet, name: str) -> isl.Set:
    return next(part for part in isl_items(domain.get_set_list())
                if part.get_tuple_name() == name)


def _as_set(union: isl.UnionSet) -> isl.Set | None:
    sets = isl_items(union.get_set_list())
    return sets[0] if len(sets) == 1 else None


def _dead_inits(from_init: isl.UnionMap, first: isl.UnionSet) -> isl.UnionSet:
    """The initialisation instances whose value only first updates read (which start
    from the identity instead)."""
    to_first = from_init.intersect_range(first).domain()
    to_others = from_init.subtract_range(first).domain()
    return to_first.subtract(to_others)


def _skipped_inits(tree: isl.Schedule, init: str, inits: isl.Set, dead: isl.UnionSet,
                   program: PolyProgram) -> isl.Set | None:
    """The values of the loops around the init nest at which all its instances are
    dead; ``None`` when the initialisation does not run as one nest of its own."""
    node = _nest_of(tree.get_root(), init)
    every = isl.UnionSet.from_set(inits)
    if node is None or dead.is_empty() or not node.child(0).get_domain().is_equal(every):
        return None
    prefix = _single_map(node.get_prefix_schedule_union_map().intersect_domain(every))
    if prefix is None:
        return None
    runs = isl.UnionMap.from_map(prefix)
    skipped = runs.intersect_domain(dead).range().subtract(
        runs.intersect_domain(every.subtract(dead)).range())
    if skipped.is_empty():
        return None
    return _as_set(skipped.gist(runs.range()).gist_params(program.context))


def _nest_of(node: isl.ScheduleNode, name: str) -> isl.ScheduleNode | None:
    """The child of a sequence whose filter holds only statement ``name``."""
    if node.get_type() == isl.schedule_node_type.filter and \
            node.parent().get_type() == isl.schedule_node_type.sequence and \
            _only_statement(node.filter_get_filter()) == name:
        return node
    for k in range(node.n_children()):
        found = _nest_of(node.child(k), name)
        if found is not None:
            return found
    return None
