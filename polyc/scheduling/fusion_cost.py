"""The cost model the default fusion compares its candidates with.

A candidate is a finished schedule (tiled, register-blocked, vectorised, marked
parallel), seen as its loop nests in execution order (:class:`NestShape`). Its cost
is the sum over the nests of ::

    max(compute cycles, transfer cycles) / threads

at nominal sizes (:func:`nominal_sizes`; kernels are compiled for every size):

- **compute**: each statement's instances × its arithmetic operations
  (:func:`operations`), at the rate its loop gives it: scalar, a vector loop, or a
  register block (:func:`~polyc.machine.rules.operations_per_cycle`);
- **transfer**: each tensor a nest touches moves once, from the nearest level of the
  memory hierarchy (:func:`~polyc.machine.rules.memory_levels`) that holds it and
  every other tensor the nests in between touched (a reuse distance counted in
  whole nests); a tensor first touched comes from memory, and a
  temporary written and read within one nest never leaves L1 (it is contracted or
  used while its lines are in cache);
- **strides**: a tensor a nest walks across its lines along some statement's fastest
  loop (its vector loop: a column walk) moves a line per element, unless it fits L1;
- **threads**: the machine's cores for a nest whose statements all run below a
  parallel loop, else one.

What the model compares is what fusion changes: the passes over data between nests
(a temporary written by one nest and read by the next, an input walked twice), the
vector rate each statement keeps, and which nests run in parallel. Reuse within a nest
is taken as captured by its tiling; the candidates whose fusion would shrink a band
tiling needs or lose a vector loop or register block are turned down before the
comparison (:func:`polyc.scheduling.fusion_choice.default_fusion`).
"""
from __future__ import annotations

from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.machine import Machine, rules
from polyc.poly.program import PolyProgram, isl_items, isl_name, statements_named
from polyc.poly.relations import affine_inputs


@dataclass(frozen=True)
class NestShape:
    """What the cost model reads from one loop nest of a finished schedule."""

    statements: tuple[str, ...]
    parallel: bool                 # every statement runs below a parallel loop
    vector: frozenset[str]         # statements in a vector loop or register block
    blocked: frozenset[str]        # statements in a register block
    # for each statement, the positions of its indices its fastest loop walks (its
    # vector loop, else its innermost loop)
    walked: tuple[tuple[str, frozenset[int]], ...] = ()


@dataclass(frozen=True)
class NestCost:
    statements: tuple[str, ...]
    threads: int
    compute: float                          # cycles of arithmetic on one core
    transfer: tuple[tuple[str, int], ...]   # (level, bytes) the nest moves from it
    transfer_cycles: float                  # on one core

    @property
    def cycles(self) -> float:
        return max(self.compute, self.transfer_cycles) / self.threads


@dataclass(frozen=True)
class FusionCost:
    """A candidate's estimated cost, nest by nest."""

    nests: tuple[NestCost, ...]
    sizes: tuple[tuple[str, int], ...]  # the sizes it was estimated at

    @property
    def cycles(self) -> float:
        return sum(nest.cycles for nest in self.nests)

    def bytes_from(self, level: str) -> int:
        return sum(count for nest in self.nests for name, count in nest.transfer
                   if name == level)

    def __str__(self) -> str:
        moved = ", ".join(f"{_size(self.bytes_from(level))} from {level}"
                          for level in ("L2", "L3", "memory") if self.bytes_from(level))
        compute = sum(nest.compute / nest.threads for nest in self.nests)
        serial = sum(1 for nest in self.nests if nest.threads == 1)
        return (f"{self.cycles / 1e6:.3g} M cycles ({len(self.nests)} nest"
                f"{'s' if len(self.nests) != 1 else ''}"
                f"{f', {serial} serial' if serial else ''}; arithmetic "
                f"{compute / 1e6:.3g} M; {moved or 'nothing beyond L1'})")


def schedule_cost(program: PolyProgram, nests: tuple[NestShape, ...], machine: Machine,
                  sizes: dict[str, int]) -> FusionCost:
    """The cost of running ``nests`` in order, at ``sizes`` (:func:`nominal_sizes`)."""
    point = parameter_point(program, sizes)
    accesses = program.reads.union(program.may_writes).intersect_params(point)
    domain = program.domain.intersect_params(point)
    levels = rules.memory_levels(machine)
    rates = {name: rate for name, _, rate in levels}
    temporaries = {isl_name(t.name) for t in program.op.temporaries}
    users: dict[str, set[str]] = {}
    for relation in isl_items(accesses.get_map_list()):
        users.setdefault(relation.get_tuple_name(isl.dim_type.out), set()).add(
            relation.get_tuple_name(isl.dim_type.in_))
    walks = _access_dimensions(program)
    last_use: dict[str, int] = {}   # tensor -> the nest that last touched it
    footprints: list[dict[str, int]] = []  # per nest: tensor -> bytes it touched
    costs = []
    for position, nest in enumerate(nests):
        statements = set(nest.statements)
        compute = 0.0
        for part in isl_items(domain.get_set_list()):
            name = part.get_tuple_name()
            if name in statements:
                stmt = program.statement(name)
                element = _element_bytes(program, isl_name(stmt.statement.tensor))
                compute += _box_count(part) * operations(stmt) / rules.operations_per_cycle(
                    machine, element, name in nest.vector, name in nest.blocked)
        touched = accesses.intersect_domain(statements_named(domain, statements)).range()
        footprint = {part.get_tuple_name(): _box_count(part) * _element_bytes(
            program, part.get_tuple_name()) for part in isl_items(touched.get_set_list())}
        strided = _strided_tensors(walks, dict(nest.walked))
        moved: dict[str, int] = {}
        for tensor, size in footprint.items():
            if tensor in strided and size > machine.l1:
                size *= rules.line_elements(machine, _element_bytes(program, tensor))
            if tensor in temporaries and users.get(tensor, set()) <= statements:
                level = "L1"
            elif tensor in last_use:
                since = {other: count for between in footprints[last_use[tensor] + 1:]
                         for other, count in between.items() if other != tensor}
                distance = size + sum(since.values())
                level = next(name for name, capacity, _ in levels if distance <= capacity)
            else:
                level = levels[-1][0]
            moved[level] = moved.get(level, 0) + size
        footprints.append(footprint)
        last_use.update((tensor, position) for tensor in footprint)
        transfer = tuple((level, count) for level, count in moved.items())
        costs.append(NestCost(nest.statements, machine.cores if nest.parallel else 1,
                              compute, transfer,
                              sum(count / rates[level] for level, count in transfer)))
    return FusionCost(tuple(costs), tuple(sizes.items()))


def _access_dimensions(program: PolyProgram
                       ) -> list[tuple[str, str, tuple[frozenset[int], ...]]]:
    """``(statement, tensor, the statement's index positions each dimension uses)`` of
    every affine access (a gather reads a whole dimension in no order: left out)."""
    found = []
    for relation in isl_items(program.reads.union(program.may_writes).get_map_list()):
        try:
            access = isl.PwMultiAff.from_map(relation)
        except isl.Error:
            continue
        found.append((relation.get_tuple_name(isl.dim_type.in_),
                      relation.get_tuple_name(isl.dim_type.out),
                      tuple(affine_inputs(access.get_pw_aff(d))
                            for d in range(access.dim(isl.dim_type.out)))))
    return found


def _strided_tensors(accesses: list[tuple[str, str, tuple[frozenset[int], ...]]],
                     walked: dict[str, frozenset[int]]) -> set[str]:
    """The tensors some statement reads or writes across their lines along its fastest
    loop (``accesses``: :func:`_access_dimensions`): an index that loop walks in a
    dimension other than the last, and not in the last (a column walk: each element
    brings a line of its own)."""
    strided = set()
    for statement, tensor, dims in accesses:
        positions = walked.get(statement)
        if not positions or not dims:
            continue
        uses = [bool(positions & used) for used in dims]
        if not uses[-1] and any(uses):
            strided.add(tensor)
    return strided


def nominal_sizes(program: PolyProgram) -> dict[str, int]:
    """The sizes the model assumes: :data:`~polyc.machine.rules.NOMINAL_WINDOW` for a
    window size (:func:`window_sizes`), and for every other the largest power of two up
    to :data:`~polyc.machine.rules.NOMINAL_EXTENT` that keeps each statement within
    :data:`~polyc.machine.rules.NOMINAL_INSTANCES` instances (a five-deep contraction
    gets 64); where the sizes' known constraints exclude those, a point that satisfies
    them."""
    names = _size_names(program)
    windows = window_sizes(program)
    extent = rules.NOMINAL_EXTENT
    while True:
        sizes = {name: rules.NOMINAL_WINDOW if name in windows else extent for name in names}
        point = parameter_point(program, sizes)
        if point.is_empty() or extent <= rules.NOMINAL_WINDOW or all(
                _box_count(part) <= rules.NOMINAL_INSTANCES for part in
                isl_items(program.domain.intersect_params(point).get_set_list())):
            break
        extent //= 2
    if not point.is_empty():
        return sizes
    sample = program.context.sample_point()
    if sample.is_void():
        return sizes
    return {name: sample.get_coordinate_val(isl.dim_type.param, k).to_python()
            for k, name in enumerate(names)}


def operations(stmt) -> int:
    """Arithmetic operations of one instance of a polyhedral statement: its operators,
    :data:`~polyc.machine.rules.CALL_OPERATIONS` per math-library call, one for the
    accumulation of a reduction; at least one (a copy is a load and a store)."""
    if stmt.is_init:
        return 1
    count = sum(rules.CALL_OPERATIONS if isinstance(node, ir.Call) else 1
                for node in ir.walk(stmt.statement.rhs)
                if isinstance(node, (ir.Binary, ir.Unary, ir.Select, ir.Call)))
    return max(1, count + (stmt.statement.op != "="))


def window_sizes(program: PolyProgram) -> set[str]:
    """The sizes some statement's extent subtracts (``h in 0:H - KH + 1``: ``KH``)."""
    names = _size_names(program)
    windows = set()
    for part in isl_items(program.domain.get_set_list()):
        for k in range(part.dim(isl.dim_type.set)):
            for _, extent in part.dim_max(k).get_pieces():
                windows.update(names[p] for p in range(len(names))
                               if extent.get_coefficient_val(isl.dim_type.param, p)
                               .is_neg())
    return windows


def _size_names(program: PolyProgram) -> list[str]:
    space = program.context.get_space()
    return [space.get_dim_name(isl.dim_type.param, k)
            for k in range(space.dim(isl.dim_type.param))]


def parameter_point(program: PolyProgram, sizes: dict[str, int]) -> isl.Set:
    """The parameters fixed at ``sizes`` (the others at
    :data:`~polyc.machine.rules.NOMINAL_EXTENT`), within the sizes' constraints; a
    derived size (merged indices) at the product of its factors there."""
    values = {name: sizes.get(isl_name(name), rules.NOMINAL_EXTENT)
              for name in program.op.sizes}
    for derived in program.op.derived_sizes:
        values[derived.name] = derived.value(values)
    point = isl.Set.universe(program.context.get_space())
    for k in range(point.dim(isl.dim_type.param)):
        name = point.get_dim_name(isl.dim_type.param, k)
        value = next((v for n, v in values.items() if isl_name(n) == name),
                     sizes.get(name, rules.NOMINAL_EXTENT))
        point = point.fix_val(isl.dim_type.param, k,
                              isl.Val.int_from_si(point.get_ctx(), value))
    return point.intersect(program.context)


def _box_count(part: isl.Set) -> int:
    """The points of the bounding box of ``part`` (its parameters fixed)."""
    if part.is_empty():
        return 0
    count = 1
    for k in range(part.dim(isl.dim_type.set)):
        low, high = part.dim_min_val(k), part.dim_max_val(k)
        if not (low.is_int() and high.is_int()):
            count *= rules.NOMINAL_EXTENT
            continue
        count *= max(0, high.to_python() - low.to_python() + 1)
    return count


def _element_bytes(program: PolyProgram, tensor: str) -> int:
    for t in program.op.inputs + program.op.outputs + program.op.temporaries:
        if isl_name(t.name) == tensor:
            return max(1, t.type.bits // 8)
    return 4


def _size(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.3g} {unit}"
    return f"{count} B"
