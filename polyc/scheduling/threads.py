"""Thread partition: each thread of a parallel tiled nest takes an even share of the
parallel loops' values, not a whole number of tiles.

OpenMP's static schedule shares out a tile loop's tiles. 2mm's 800 rows are six
tiles of 128 and one of 32; its 900 columns seven of 128 and one of 4. Collapsed,
the 56 tiles go 28 to each of 2 threads, and one thread gets 448 rows' worth of
work, the other 352: the nest takes as long as the larger share, not an even one
(measurements: benchmarks/README.md, "Design measurements").

So the nest below a ``parallel`` mark (and the ``collapse N`` loops with it) is
generated for one thread's *box* of values: for the k-th shared loop, whose tile
loop walks ``g - g mod T`` for an affine ``g`` of each statement, a context node
introduces the parameters ``polyc_lo<n>_<k>`` and ``polyc_hi<n>_<k>`` (local to
the nest: isl keeps conditions on them inside it) and a filter keeps the instances
with ``lo <= g < hi``. Tiles stay where they were; a thread's box cuts the tiles
at its edges. The C computes the box per thread at run time
(:mod:`polyc.codegen.thread_boxes`): the threads are arranged as a grid over the
shared loops, and each loop's range is cut in equal numbers of *units*: for the
outermost loop the register block's extent along it, so that blocks stay whole;
for the others a whole tile.

Only nests whose outermost loop has a register block finer than its tile are
shared out this way (matmul-like nests: gemm, mlp, 2mm). Elsewhere boxes would
cut where tiles do, and cost more than they give: gcc spills the register block's
row pointers around the boxes' bounds (conv2d, with its four collapsed loops in
boxes and the same share of work per thread; measurements: benchmarks/README.md,
"Design measurements").

Over a triangle (a statement whose ranges' extents vary with other indices:
:func:`~polyc.lang.ranges.has_uneven_extent`) values of a loop hold uneven work:
row ``i`` of trmm's ``k in i + 1:M`` sums ``M - 1 - i`` products, so boxes of
even extent would give the first of two threads three quarters of the work. Such
a loop is cut in register blocks wherever it is in the band, and where its
*cumulative work* divides evenly: :func:`_work` derives, per statement, the
extents of its dimensions at one value ``v`` of the loop (isl: the instances with
``g = v``, each dimension's bounds), and the C sums their products over the blocks
at run time, for the sizes of the call (:mod:`polyc.codegen.thread_boxes`). One
such loop per nest is shared: the work of a grid over two (syrk's rows and
columns) is not a product of their works. Before, these nests went to OpenMP's
dynamic schedule over whole tiles: an output of at most one tile's columns was
one tile, one thread's work (symm with 128 columns ran 3.10 ms on one thread,
2.91 on two; measurements: benchmarks/README.md, "Design measurements").

Legality: a thread runs the instances of its box in the schedule's order, and the
schedule is the one proven legal. Threads run their boxes at the same time, so
:func:`check_partitions` proves with isl that no dependence joins instances of a
nest whose shared loops' values differ: instances of different boxes are
independent, however the boxes fall. (The tile loops ``check_parallel`` proved
parallel are not enough: a box cuts through tiles.) The boxes of all threads tile
the loops' ranges exactly (:func:`~polyc.codegen.thread_boxes.box_code`), so
every instance runs once.
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.errors import InternalError
from polyc.poly.dependences import Dependences
from polyc.poly.program import isl_items, statement_names
from polyc.poly.relations import same_image
from polyc.scheduling.marks import (PARALLEL_MARK, SIMD_MARK, Collapse,
                                    decision_mark, is_register_block, node_mark)

# The loops shared out at most: each adds bounds that stay live around the register
# blocks; two make a grid of rows and columns.
MAX_SHARED = 2


# The parameter standing for one value of a shared loop in its work (SharedLoop.work).
VALUE = "polyc_value"


@dataclass(frozen=True)
class SharedLoop:
    """One loop shared out among threads: its untiled value ``g`` per statement, the
    first and last value over the nest's instances (functions of the sizes), the unit
    its range is cut in, and its work where its values hold uneven work."""

    value: isl.UnionPwAff
    first: isl.PwAff
    last: isl.PwAff
    unit: int
    # Per statement (by name), the extents of its dimensions among its instances with
    # ``g`` equal to the parameter VALUE (functions of it and the sizes, 0 where there
    # are none). Their product counts the instances where no dimension's bounds
    # depend on another's than ``g`` (a triangle's rows: ``k in i + 1:M``), and bounds
    # them otherwise. Empty where every value of ``g`` holds the same work: the boxes
    # then cut even extents; else each holds an even share of the work.
    work: tuple[tuple[str, tuple[isl.PwAff, ...]], ...] = ()


@dataclass(frozen=True, eq=False)
class Partition:
    """The loops of parallel nest number ``nest`` that its threads share out (the
    decision a ``threads <nest>`` mark carries; one object per nest, equal only to
    itself)."""

    nest: int
    loops: tuple[SharedLoop, ...]

    def low(self, k: int) -> str:
        return f"polyc_lo{self.nest}_{k}"

    def high(self, k: int) -> str:
        return f"polyc_hi{self.nest}_{k}"

    def mark_name(self) -> str:
        return f"threads {self.nest}"

    def statements(self) -> frozenset[str]:
        return frozenset(statement_names(self.loops[0].value.domain()))

    def describe(self) -> str:
        """The decision in words, for :func:`polyc.explain.fusion_text`."""
        cuts = []
        for loop in self.loops:
            piece = isl_items(loop.value.get_pw_aff_list())[0]
            name = str(piece.get_pieces()[0][1]).rsplit("[(", 1)[-1].split(")]")[0]
            how = f"blocks of {loop.unit}" if loop.unit > 1 else "single values"
            if loop.work:
                how += ", cut where its work divides evenly"
            cuts.append(f"{name} ({how})")
        return "parallel (thread boxes): loops " + ", ".join(cuts)


def partition_nests(tree: isl.Schedule, uneven: frozenset[str] = frozenset()
                    ) -> tuple[isl.Schedule, dict[int, Partition]]:
    """``tree`` with each outermost parallel tiled nest generated for one thread's box
    (module docstring), and the partitions by nest number. Nests that do not qualify
    (inside outer loops, or a parallel loop isl did not tile as ``g - g mod T``)
    are left to OpenMP's schedule. In a nest with a statement of ``uneven``
    (:func:`~polyc.lang.ranges.has_uneven_extent`: a triangle) the loops whose values
    hold uneven work are cut where their work divides evenly (:class:`SharedLoop`)."""
    partitions: dict[int, Partition] = {}

    def visit(node: isl.ScheduleNode) -> isl.ScheduleNode:
        if node_mark(node) == PARALLEL_MARK:
            names = set(statement_names(node.get_domain()))
            partition = _partition(node, len(partitions), bool(names & uneven))
            if partition is None:
                return node
            partitions[partition.nest] = partition
            return _insert(node, partition)
        for position in range(node.n_children()):
            node = visit(node.child(position)).parent()
        return node

    root = visit(tree.get_root())
    return root.get_schedule(), partitions


def check_partitions(tree: isl.Schedule, deps: Dependences) -> None:
    """Prove every ``threads`` mark of ``tree``: among the instances below it, each
    coincidence dependence joins instances with the same values of all the shared
    loops (so threads with different boxes never wait on one another); raise
    :class:`InternalError` otherwise."""
    def visit(node: isl.ScheduleNode) -> None:
        partition = node_mark(node)
        if isinstance(partition, Partition):
            inside = node.get_domain()
            local = deps.coincidence.intersect_domain(inside).intersect_range(inside)
            same = same_image(node.get_prefix_schedule_union_map())
            local = local.intersect(same)
            for loop in partition.loops:
                same = same.intersect(same_image(isl.UnionMap.from_union_pw_aff(loop.value)))
            local = local.subtract(same)
            if not local.is_empty():
                raise InternalError(f"thread boxes of nest {partition.nest} split "
                                    f"dependences {local}")
        for position in range(node.n_children()):
            visit(node.child(position))

    visit(tree.get_root())


def _partition(mark: isl.ScheduleNode, nest: int, uneven: bool) -> Partition | None:
    if mark.get_schedule_depth() != 0:
        return None  # the box would depend on outer loops
    band, count = mark.child(0), 1
    if band.get_type() == isl.schedule_node_type.mark:
        collapse = node_mark(band)
        count = min(MAX_SHARED, collapse.loops) if isinstance(collapse, Collapse) else 0
        band = band.child(0)
    if count < 1 or band.get_type() != isl.schedule_node_type.band or \
            band.band_n_member() < count:
        return None
    domain = band.get_domain()
    loops, tiles = [], []
    for k in range(count):
        split = _untiled(band.band_get_partial_schedule().get_at(k))
        if split is None:
            return None
        value, tile = split
        values = _range(value, domain)
        if values is None:
            return None
        work = _work(value, domain, values) if uneven else ()
        if work and any(loop.work for loop in loops):
            break  # a grid over two such loops would not share their joint work evenly
        # The outermost loop is cut in register blocks; the others in whole tiles,
        # so that their point loops keep the bounds they had: cut in blocks, the extra
        # bounds cost more than the finer share gives (measurements:
        # benchmarks/README.md, "Design measurements"). A loop of uneven work is cut
        # in register blocks wherever it is: whole tiles would hold uneven shares.
        unit = _unit(band, value, tile) if (k == 0 or work) and tile > 1 else 1
        loops.append(SharedLoop(value, values.dim_min(0), values.dim_max(0),
                                unit if unit > 1 or work else tile, work))
        tiles.append(tile)
    if all(loop.unit >= tile for loop, tile in zip(loops, tiles)) or \
            (loops[0].unit >= tiles[0] and not any(loop.work for loop in loops)):
        return None  # boxes would cut where tiles do: OpenMP's schedule shares as well
    return Partition(nest, tuple(loops))


def _untiled(member: isl.UnionPwAff) -> tuple[isl.UnionPwAff, int] | None:
    """``(g, T)`` where the member is ``g - g mod T`` for every statement (``T = 1``: the
    member is ``g`` itself); ``None`` for any other form."""
    values, tiles = None, set()
    for piece in isl_items(member.get_pw_aff_list()):
        pieces = piece.get_pieces()
        if len(pieces) != 1:
            return None
        domain, aff = pieces[0]
        if not domain.is_equal(isl.Set.universe(domain.get_space())):
            return None  # defined on part of a statement: the filter would drop the rest
        if aff.dim(isl.dim_type.div) == 0:
            value, tile = aff, 1
        elif aff.dim(isl.dim_type.div) == 1:
            tile_val = aff.get_coefficient_val(isl.dim_type.div, 0)
            if not tile_val.is_int() or tile_val.to_python() < 2:
                return None
            tile = tile_val.to_python()
            value = aff.get_div(0).scale_val(isl.Val(tile))
            if not isl.PwAff.from_aff(value.sub(value.mod_val(isl.Val(tile)))).is_equal(
                    isl.PwAff.from_aff(aff)):
                return None
        else:
            return None
        tiles.add(tile)
        part = isl.UnionPwAff.from_pw_aff(isl.PwAff.from_aff(value).intersect_domain(domain))
        values = part if values is None else values.union_add(part)
    if values is None or len(tiles) != 1:
        return None
    return values, tiles.pop()


def _range(value: isl.UnionPwAff, domain: isl.UnionSet) -> isl.Set | None:
    """The values ``value`` takes over ``domain``, as one set."""
    image = isl.UnionMap.from_union_pw_multi_aff(
        isl.UnionPwMultiAff.from_union_pw_aff(value)).intersect_domain(domain).range()
    sets = isl_items(image.get_set_list())
    if not sets:
        return None
    result = sets[0]
    for other in sets[1:]:
        if not other.get_space().is_equal(result.get_space()):
            return None
        result = result.union(other)
    return result


def _work(value: isl.UnionPwAff, domain: isl.UnionSet,
          values: isl.Set) -> tuple[tuple[str, tuple[isl.PwAff, ...]], ...]:
    """The work of each value of the loop walking ``value`` over ``domain``
    (:attr:`SharedLoop.work`); empty where it is the same for every value in
    ``values``, the loop's range."""
    parameter = isl.Set(f"[{VALUE}] -> {{ : }}").get_space().get_dim_id(
        isl.dim_type.param, 0)  # as isl parsed it: an id made here would be another one
    in_range = values.move_dims(isl.dim_type.param, values.dim(isl.dim_type.param),
                                isl.dim_type.set, 0, 1)
    in_range = in_range.set_dim_id(isl.dim_type.param,
                                   in_range.dim(isl.dim_type.param) - 1, parameter)
    work, uneven = [], False
    for piece in isl_items(value.get_pw_aff_list()):
        instances = domain.extract_set(piece.domain().get_space())
        at_value = piece.intersect_domain(instances).eq_set(
            isl.PwAff.param_on_domain_id(instances, parameter))
        extents, n = [], at_value.dim(isl.dim_type.set)
        for d in range(n):
            one = at_value.project_out(isl.dim_type.set, d + 1, n - d - 1).project_out(
                isl.dim_type.set, 0, d)
            extent = one.dim_max(0).sub(one.dim_min(0)).add_constant_val(isl.Val(1))
            none = isl.PwAff.from_aff(isl.Aff.zero_on_domain(
                isl.LocalSpace.from_space(extent.get_domain_space())))
            extent = extent.union_max(none).gist_params(in_range).coalesce()
            position = extent.find_dim_by_name(isl.dim_type.param, VALUE)
            uneven |= position >= 0 and extent.involves_dims(isl.dim_type.param, position, 1)
            extents.append(extent)
        work.append((instances.get_tuple_name(), tuple(extents)))
    return tuple(sorted(work, key=lambda item: item[0])) if uneven else ()


def _unit(band: isl.ScheduleNode, value: isl.UnionPwAff, tile: int) -> int:
    """The register block's extent along the loop: the largest ``m`` dividing the tile
    for which a blocked loop below (``register`` or ``simd``) walks ``g mod m``; else 1
    (then the loop is cut in whole tiles)."""
    found = _blocked_members(band)
    for m in sorted((m for m in range(2, tile + 1) if tile % m == 0), reverse=True):
        target = value.mod_val(isl.Val(m))
        for member in found:
            for piece in isl_items(member.get_pw_aff_list()):
                wanted = target.extract_pw_aff(piece.get_space())
                common = piece.domain().intersect(wanted.domain())
                if not common.is_empty() and piece.intersect_domain(common).is_equal(
                        wanted.intersect_domain(common)):
                    return m
    return 1


def _blocked_members(node: isl.ScheduleNode) -> list[isl.UnionPwAff]:
    """The members of the bands below ``node`` that a register block or a vector loop
    walks (the bands right under ``register`` and ``simd`` marks)."""
    members = []

    def visit(n: isl.ScheduleNode, blocked: bool) -> None:
        if n.get_type() == isl.schedule_node_type.band and blocked:
            schedule = n.band_get_partial_schedule()
            members.extend(schedule.get_at(k) for k in range(n.band_n_member()))
        marked = node_mark(n) == SIMD_MARK or is_register_block(node_mark(n))
        for position in range(n.n_children()):
            visit(n.child(position), marked)

    visit(node, False)
    return members


def _insert(mark: isl.ScheduleNode, partition: Partition) -> isl.ScheduleNode:
    """Below the parallel mark: the partition's mark, the context introducing the box's
    parameters, and the filter keeping the box's instances; returns the mark's position."""
    names = [name for k in range(len(partition.loops))
             for name in (partition.low(k), partition.high(k))]
    constraints = []
    for k, loop in enumerate(partition.loops):
        constraints.append(f"{partition.high(k)} >= {partition.low(k)}")
        first = loop.first
        if first.is_cst() and first.n_piece() == 1:
            start = first.get_pieces()[0][1].get_constant_val().to_python()
            constraints.append(f"{partition.low(k)} >= {start}")
            if loop.unit > 1:  # both ends of every part are whole units from the start
                constraints.append(
                    f"exists (a{k} : {partition.low(k)} = {start} + {loop.unit} * a{k})")
                constraints.append(
                    f"exists (b{k} : {partition.high(k)} = {start} + {loop.unit} * b{k})")
    context = isl.Set(f"[{', '.join(names)}] -> {{ [] : {' and '.join(constraints)} }}")
    # The parameters' ids as isl parsed them: an id made here would be another one.
    ids = {name: context.get_space().get_dim_id(isl.dim_type.param, position)
           for position, name in enumerate(names)}
    filters = None  # per statement, every loop's value inside the box
    for k, loop in enumerate(partition.loops):
        per_loop = None
        for piece in isl_items(loop.value.get_pw_aff_list()):
            domain = piece.domain()
            low = isl.PwAff.param_on_domain_id(domain, ids[partition.low(k)])
            high = isl.PwAff.param_on_domain_id(domain, ids[partition.high(k)])
            part = isl.UnionSet.from_set(piece.ge_set(low).intersect(piece.lt_set(high)))
            per_loop = part if per_loop is None else per_loop.union(part)
        filters = per_loop if filters is None else filters.intersect(per_loop)
    node = mark.child(0).insert_mark(decision_mark(partition)).child(0)
    node = node.insert_context(context).child(0)
    node = node.insert_filter(filters)
    return node.parent().parent().parent()
