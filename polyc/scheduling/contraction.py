"""Array contraction: temporaries whose values live within one iteration of the outer
parallel loop shrink to that iteration's footprint.

Softmax's ``row_max(n)`` is written and read only in iteration ``n`` of the row
loop. Instead of ``N`` floats in memory shared by all threads, each iteration
needs one float of its own::

    float *row_max = malloc(N * sizeof(float));      #pragma omp parallel for
    #pragma omp parallel for                          for (n ...) {
    for (n ...) { ... row_max[n] ... }        →         float row_max[1];
                                                        ... row_max[0] ...
                                                      }

The test, with isl: take the schedule prefix P up to and including the outermost
parallel loop; every two instances that touch the same element of the temporary
must have the same prefix ({ a -> b : acc(a) = acc(b) } ⊆ { a -> b : P(a) = P(b) }).
Then a dimension of the temporary is *fixed* when the prefix determines its index
(one value per prefix: the footprint is one wide there); fixed dimensions shrink
to extent 1 and are indexed with 0. A dimension whose indices for one prefix lie
within a window of ``W`` consecutive values (``W`` at most :data:`MAX_WINDOW`:
the rows of a block that :mod:`polyc.scheduling.jam` jams together) shrinks to ``W``
and is indexed ``i % W``, which tells apart any ``W`` consecutive indices. The
others keep their extent. The storage is declared inside the parallel loop's
body, so it is private to each iteration.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.poly.program import PolyProgram, isl_items, isl_name
from polyc.poly.relations import same_image
from polyc.scheduling.marks import (ast_children, called_statements, collapsed_loops,
                                    is_parallel, node_mark)


MAX_WINDOW = 16  # the widest window of indices a dimension shrinks to


@dataclass(frozen=True)
class Contraction:
    """How a temporary is stored: ``windows[d]`` is ``None`` when dimension ``d`` keeps
    its extent, else the extent it shrinks to (1: fixed, indexed 0; ``W``: indexed
    ``i % W``)."""

    tensor: str
    windows: tuple[int | None, ...]

    @property
    def kept(self) -> tuple[bool, ...]:
        return tuple(window is None for window in self.windows)

    def shape(self, tensor: ir.Tensor) -> tuple[sz.SizeExpr, ...]:
        return tuple(extent if window is None else sz.const(window)
                     for extent, window in zip(tensor.shape, self.windows))

    def constant_elements(self, tensor: ir.Tensor) -> int | None:
        """The number of elements when it does not depend on the sizes, else ``None``."""
        count = 1
        for extent in self.shape(tensor):
            if not (isinstance(extent, sz.Affine) and extent.is_constant):
                return None
            count *= max(extent.const, 0)
        return count


def contract_temporaries(program: PolyProgram, schedule, ast: isl.AstNode | None = None
                         ) -> dict[str, Contraction]:
    """The temporaries that can live in the outermost parallel loop's iterations.

    Where isl split that loop into pieces (an iteration peeled before the loop), each
    piece declares its own storage: a temporary that statements of two pieces touch
    keeps its memory (``ast``, when given, shows the pieces)."""
    prefix = _parallel_prefix(schedule.tree)
    if prefix is None or not program.op.temporaries:
        return {}
    shared = _touched_in_several_pieces(program, ast) if ast is not None else set()
    prefix = prefix.intersect_domain(program.domain)
    same_prefix = same_image(prefix)
    accesses = program.reads.union(program.may_writes)
    result = {}
    viewed = {view.storage for view in program.op.views}
    for tensor in program.op.temporaries:
        if tensor.rank == 0 or tensor.name in shared | viewed:
            continue  # a single element, split across pieces, or read with another shape
        touches = _accesses_of(accesses, tensor)
        if touches.is_empty():
            continue
        same_element = same_image(touches)
        if not same_element.is_subset(same_prefix):
            continue
        footprint = prefix.reverse().apply_range(touches)  # { prefix -> T[e] }
        windows = tuple(_window(footprint, d) for d in range(tensor.rank))
        if all(window is None for window in windows):
            continue
        result[tensor.name] = Contraction(tensor.name, windows)
    return result


def _touched_in_several_pieces(program: PolyProgram, ast: isl.AstNode) -> set[str]:
    """The tensors that isl's pieces of the parallel loop may touch at one iteration.

    isl emits a marked loop as a block of pieces when it peels iterations (each piece
    then runs the loop's statements) or when it emits a statement as a component of
    its own, possibly at an iteration that a loop piece runs too. Each piece declares
    its own storage, so a tensor touched by a statement that only one piece runs, and
    by another piece, keeps its memory."""
    marked = _first_parallel_mark(ast)
    if marked is None:
        return set()
    body = marked.mark_get_node()
    while body.get_type() == isl.ast_node_type.mark:
        body = body.mark_get_node()
    if body.get_type() != isl.ast_node_type.block:
        return set()
    children = body.block_get_children()
    pieces = [called_statements(children.get_at(k)) for k in range(len(children))]

    def touched(names) -> set[str]:
        result = set()
        for name in names:
            poly = program.statement(name)
            result.add(poly.statement.tensor)
            if not poly.is_init:
                result |= ir.tensors_read(poly.statement.rhs)
        return result

    shared = set()
    for k, piece in enumerate(pieces):
        others = set().union(*(p for j, p in enumerate(pieces) if j != k))
        alone = touched(piece - others)
        shared |= alone & touched(others)
    return shared


def _first_parallel_mark(node: isl.AstNode) -> isl.AstNode | None:
    if node.get_type() == isl.ast_node_type.mark and is_parallel(node_mark(node)):
        return node
    for child in ast_children(node):
        found = _first_parallel_mark(child)
        if found is not None:
            return found
    return None


def _accesses_of(accesses: isl.UnionMap, tensor: ir.Tensor) -> isl.UnionMap:
    result = isl.UnionMap.empty(accesses.get_space())
    for access in isl_items(accesses.get_map_list()):
        if access.get_tuple_name(isl.dim_type.out) == isl_name(tensor.name):
            result = result.union(isl.UnionMap.from_map(access))
    return result


def _window(footprint: isl.UnionMap, dim: int) -> int | None:
    """The number of consecutive indices that each prefix value touches at most in
    dimension ``dim`` (1: a single index), or ``None`` when more than
    :data:`MAX_WINDOW` or unbounded."""
    widest = 1
    for part in isl_items(footprint.get_map_list()):
        rank = part.dim(isl.dim_type.out)
        projected = part.project_out(isl.dim_type.out, dim + 1, rank - dim - 1) \
            .project_out(isl.dim_type.out, 0, dim)
        if projected.is_single_valued():
            continue
        # { e -> e' : one prefix touches both }; its deltas are e' - e
        spread = projected.reverse().apply_range(projected).deltas()
        width = next((w for w in range(2, MAX_WINDOW + 1) if spread.is_subset(
            isl.Set(f"{{ [d] : -{w} < d < {w} }}").align_params(spread.get_space()))), None)
        if width is None:
            return None
        widest = max(widest, width)
    return widest


def _parallel_prefix(tree: isl.Schedule) -> isl.UnionMap | None:
    """The schedule prefix up to and including the members of the outermost ``parallel``
    loop (the first member, or the loops it collapses), as ``{ S[...] -> [prefix] }``;
    ``None`` without a parallel loop."""
    def find(node: isl.ScheduleNode):
        if is_parallel(node_mark(node)):
            band, marks = node.child(0), []
            while band.get_type() == isl.schedule_node_type.mark:
                marks.append(node_mark(band))
                band = band.child(0)
            count = collapsed_loops(marks)
            if band.get_type() != isl.schedule_node_type.band:
                return None
            prefix = band.get_prefix_schedule_union_map()
            partial = band.band_get_partial_schedule()
            for k in range(count):
                prefix = prefix.flat_range_product(
                    isl.UnionMap.from_union_pw_aff(partial.get_at(k)))
            return prefix
        for position in range(node.n_children()):
            found = find(node.child(position))
            if found is not None:
                return found
        return None

    return find(tree.get_root())
