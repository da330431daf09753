"""Block runs: the operator itself, run on parts of its inputs, computes a block of its
outputs; isl finds the parts and proves it, one block at a time.

A distributed run (:mod:`polyc.dask`) splits the outputs into blocks and calls the
compiled operator once per block on the part of each input that the block needs. That
is right only where the operator commutes with the translation that maps the local
run onto the global one, which this module checks for each block, with the sizes known:

1. **Needed elements.** From the block's elements of the outputs it produces (and, for
   a split reduction, the chunk of the reduction index) to a fixed point: the instances
   that write needed elements, the elements those instances read, and so on. What they
   read of each input is the region the block needs.
2. **The translation.** Unknowns: the local sizes ``n``, each tensor's origin ``o`` in
   the global one (for inputs, where its part starts) and each statement index's shift
   ``s``. Every affine access must map the same element locally and globally,
   ``f(i; N) = f(i - s; n) + o_T``; left-hand indices move with their tensor; an index
   used as a value must not move and a size used as a value must keep its value; a
   data-dependent dimension stays whole. Each part must hold what the block needs and
   lie inside its input. isl takes the least local sizes satisfying all of it.
3. **The proof.** For every statement, the local domain translated by ``s`` contains
   exactly the global instances that write needed elements (none missing, none extra:
   an extra instance could add to a needed element), and every affine condition of its
   right-hand side holds at the same instances locally and globally. Then, in program
   order, every needed element receives the same updates from the same values.

A block that passes gives a :class:`BlockRun`: the parts to pass and where the block
lies in the local outputs. One that fails raises :class:`NotABlockRun` saying why.
"""
from __future__ import annotations

import re
from dataclasses import dataclass

import islpy as isl

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import LinearIndex, affine_of, linear_to_isl
from polyc.lang.sizes import isl_name
from polyc.lang.types import INT64
from polyc.poly.program import (PolyStatement, access_text, build_poly_program, isl_items,
                                params_prefix, tuple_text)

_COMPARISONS = {"<": "<", "<=": "<=", ">": ">", ">=": ">=", "==": "=", "!=": "!="}

Box = tuple[tuple[int, int], ...]  # (start, stop) per dimension


class NotABlockRun(Exception):
    """The operator run on parts of its inputs would not compute the block (why)."""


@dataclass(frozen=True)
class ReductionChunk:
    """A split reduction: statement ``statement`` runs only ``start <= index < stop``."""

    statement: str
    index: str
    start: int
    stop: int


@dataclass(frozen=True)
class Block:
    """The outputs' boxes one run must produce, and the reduction chunks it runs."""

    boxes: tuple[tuple[str, Box], ...]
    chunks: tuple[ReductionChunk, ...] = ()


@dataclass(frozen=True)
class BlockRun:
    """How a block is computed: ``parts`` (per input, the box passed in; ``None`` for a
    0-rank input), the local sizes they bind, and ``trims`` (per produced output, the
    block's box in the local output)."""

    parts: tuple[Box | None, ...]
    sizes: tuple[tuple[str, int], ...]
    trims: tuple[tuple[str, Box], ...]


@dataclass(frozen=True)
class _Facts:
    """What the translation must respect in one statement's right-hand side."""

    accesses: tuple[tuple[str, int, LinearIndex | None], ...]  # tensor, dim, affine index
    comparisons: tuple[str, ...]       # isl text of each affine comparison
    value_indices: frozenset[str]      # indices used as values
    value_sizes: frozenset[str]        # sizes used as values


def _facts(statement: ir.Statement) -> _Facts:
    accesses, comparisons, indices, sizes = [], [], set(), set()

    def value(expr: ir.Expr) -> None:
        if isinstance(expr, ir.Read):
            for dim, index in enumerate(expr.indices):
                linear = affine_of(index)
                accesses.append((expr.tensor, dim, linear))
                if linear is None:
                    value(index)  # a gather: its indices are values
            return
        if isinstance(expr, ir.Binary) and expr.op in _COMPARISONS:
            lhs, rhs = affine_of(expr.lhs), affine_of(expr.rhs)
            if lhs is not None and rhs is not None:
                comparisons.append(f"{linear_to_isl(lhs)} {_COMPARISONS[expr.op]} "
                                   f"{linear_to_isl(rhs)}")
                return
        if isinstance(expr, ir.Index):
            indices.add(expr.name)
        elif isinstance(expr, ir.SizeValue):
            sizes.update(sz.size_names(expr.size))
        for child in ir.children(expr):
            value(child)

    value(statement.rhs)
    return _Facts(tuple(accesses), tuple(comparisons), frozenset(indices), frozenset(sizes))


class _Concrete:
    """The program's domains and accesses for concrete sizes (parameters fixed, then
    projected out)."""

    def __init__(self, program, sizes: dict[str, int]):
        op = program.op
        fixed = " and ".join(f"{isl_name(s)} = {sizes[s]}" for s in op.sizes) or "true"
        params = isl.Set(f"{params_prefix(op)} -> {{ : {fixed} }}")
        self.valid = not program.context.intersect(params).is_empty()
        self.params = params
        self.domain = program.domain.intersect_params(params).project_out_all_params()
        self.reads = program.reads.intersect_params(params).project_out_all_params()
        self.writes = program.must_writes.intersect_params(params).project_out_all_params()
        self._sets: dict[str, isl.Set] = {}

    def set(self, text: str) -> isl.Set:
        """Isl text over the sizes, made concrete (parsed once)."""
        found = self._sets.get(text)
        if found is None:
            found = self._sets[text] = isl.Set(text).intersect_params(
                self.params).project_out_all_params()
        return found


def _parts(union: isl.UnionSet) -> dict[str, isl.Set]:
    return {part.get_tuple_name(): part for part in isl_items(union.get_set_list())}


def _bounds(part: isl.Set | None, rank: int) -> Box | None:
    if part is None or part.is_empty():
        return None
    return tuple((part.dim_min_val(d).to_python(), part.dim_max_val(d).to_python() + 1)
                 for d in range(rank))


class BlockAnalysis:
    """Block runs of one operator (build once per operator; see the module docstring)."""

    def __init__(self, op: ir.Op):
        self.op = op
        self.program = build_poly_program(op)
        self.facts = {s.name: _facts(s) for s in op.statements}
        self._concrete: dict[tuple[int, ...], _Concrete] = {}
        self._templates: dict[tuple, tuple[isl.Set, list[str]]] = {}
        self._texts: dict[str, object] = {}
        tensors = op.tensors
        self._writes = {}  # statement -> the elements its instances write, any instance
        for stmt in self.program.statements:
            text = access_text(stmt, tensors[stmt.statement.tensor], _lhs(stmt))
            self._writes[stmt.name] = isl.Map(f"{{ {text} }}")

    def concrete(self, sizes: dict[str, int]) -> _Concrete:
        key = tuple(sizes[s] for s in self.op.sizes)
        found = self._concrete.get(key)
        if found is None:
            found = self._concrete[key] = _Concrete(self.program, sizes)
        return found

    def _parsed(self, kind, text: str):
        """``kind(text)``, parsed once: parsing isl text costs more than using it."""
        found = self._texts.get(text)
        if found is None:
            found = self._texts[text] = kind(text)
        return found

    def run(self, sizes: dict[str, int], block: Block) -> BlockRun:
        """The run that computes ``block`` for the global ``sizes``, proven; raises
        :class:`NotABlockRun`."""
        whole = self.concrete(sizes)
        needed, instances = self._needed(whole, block)
        local, values = self._translation(sizes, needed)
        self._prove(whole, self.concrete(local), values, needed, instances)
        op = self.op
        parts = []
        for t, tensor in enumerate(op.inputs):
            if not tensor.rank:
                parts.append(None)
                continue
            parts.append(tuple((values[f"o{t}_{d}"], values[f"o{t}_{d}"]
                                + sz.evaluate(extent, local))
                               for d, extent in enumerate(tensor.shape)))
        position = {t.name: k for k, t in enumerate(_tensors(op))}
        trims = tuple((name, tuple((start - values[f"o{position[name]}_{d}"],
                                    stop - values[f"o{position[name]}_{d}"])
                                   for d, (start, stop) in enumerate(box)))
                      for name, box in block.boxes)
        return BlockRun(tuple(parts), tuple((s, local[s]) for s in op.sizes), trims)

    # ------------------------------------------------------------- 1. needed elements

    def _needed(self, whole: _Concrete, block: Block) -> tuple[isl.UnionSet, isl.UnionSet]:
        """The needed elements of every tensor and the needed instances."""
        elements = isl.UnionSet("{ }")
        for name, box in block.boxes:
            template = self._parsed(isl.Set, _box_text(name, len(box)))
            elements = elements.union(_at(template, [v for bounds in box for v in bounds]))
        excluded = isl.UnionSet("{ }")
        for chunk in block.chunks:
            stmt = self.program.statement(chunk.statement)
            index = isl_name(chunk.index)
            template = self._parsed(isl.Set, f"[start, stop] -> {{ {tuple_text(stmt)} : "
                                             f"{index} < start or {index} >= stop }}")
            excluded = excluded.union(_at(template, [chunk.start, chunk.stop]))
        written = whole.writes.range()
        while True:
            instances = whole.writes.intersect_range(elements).domain().subtract(excluded)
            read = whole.reads.intersect_domain(instances).range()
            grown = elements.union(read.intersect(written))
            if grown.is_subset(elements):
                return elements.union(read), instances
            elements = grown

    # ------------------------------------------------------------- 2. the translation

    def _translation(self, sizes: dict[str, int], needed: isl.UnionSet
                     ) -> tuple[dict[str, int], dict[str, int]]:
        """The least local sizes, and every origin and shift, that map the local run onto
        the global one (see the module docstring)."""
        op = self.op
        boxes = {name: _bounds(part, op.tensor(name).rank)
                 for name, part in _parts(needed).items()}
        boxes = {name: box for name, box in boxes.items() if box is not None}
        solutions, variables = self._solutions(sizes, frozenset(boxes))
        position = 0
        for tensor in _tensors(op):  # the parameters: each needed box's bounds, in order
            for start, stop in boxes.get(tensor.name, ()):
                solutions = solutions.fix_val(isl.dim_type.param, position, start)
                solutions = solutions.fix_val(isl.dim_type.param, position + 1, stop)
                position += 2
        solutions = solutions.project_out_all_params()
        if solutions.is_empty():
            raise NotABlockRun("no translation of the operator's indices maps a run on "
                               "parts of the inputs onto this block")
        point = solutions.lexmin().sample_point()
        values = {name: point.get_coordinate_val(isl.dim_type.set, k).to_python()
                  for k, name in enumerate(variables)}
        local = {s: values[f"n{k}"] for k, s in enumerate(op.sizes)}
        return local, values

    def _solutions(self, sizes: dict[str, int], boxed: frozenset[str]
                   ) -> tuple[isl.Set, list[str]]:
        """The translations for the global ``sizes``, with the needed boxes of the
        tensors ``boxed`` as parameters (built once: parsing is what costs)."""
        key = (tuple(sizes[s] for s in self.op.sizes), boxed)
        found = self._templates.get(key)
        if found is None:
            found = self._templates[key] = self._solution_template(sizes, boxed)
        return found

    def _solution_template(self, sizes: dict[str, int], boxed: frozenset[str]
                           ) -> tuple[isl.Set, list[str]]:
        op = self.op
        tensors = _tensors(op)
        position = {t.name: k for k, t in enumerate(tensors)}
        local = {s: f"n{k}" for k, s in enumerate(op.sizes)}

        def extent(tensor: ir.Tensor, d: int, size_names=local) -> str:
            return sz.to_isl(tensor.shape[d], name=size_names.__getitem__)

        def evaluated(e: sz.SizeExpr) -> int:
            return sz.evaluate(e, sizes)

        constraints = [f"{n} >= 0" for n in local.values()]
        constraints += [f"{local[s]} = {sizes[s]}" for f in self.facts.values()
                        for s in sorted(f.value_sizes)]
        shifts: list[str] = []
        bound = sum(evaluated(d) for t in tensors for d in t.shape) + 1
        for j, stmt in enumerate(op.statements):
            shift = {r.index: f"s{j}_{k}" for k, r in enumerate(stmt.domain)}
            shifts += shift.values()
            t = position[stmt.tensor]
            constraints += [f"{shift[i]} = o{t}_{d}" for d, i in enumerate(stmt.indices)]
            facts = self.facts[stmt.name]
            constraints += [f"{shift[i]} = 0" for i in sorted(facts.value_indices)]
            for name, d, linear in facts.accesses:
                tensor, t = op.tensor(name), position[name]
                if linear is None:  # a data-dependent dimension stays whole
                    constraints += [f"o{t}_{d} = 0",
                                    f"{extent(tensor, d)} = {evaluated(tensor.shape[d])}"]
                    continue
                moved = " + ".join(f"{c}*{shift[i]}" for i, c in linear.coefficients) or "0"
                offset = sz.to_isl(linear.offset, name=local.__getitem__)
                constraints.append(f"{moved} + {evaluated(linear.offset)} - ({offset}) "
                                   f"= o{t}_{d}")
        origins, parameters = [], []
        for t, tensor in enumerate(tensors):
            for d in range(tensor.rank):
                origin, span = f"o{t}_{d}", extent(tensor, d)
                origins.append(origin)
                constraints += [f"{span} >= 0", f"-{bound} <= {origin} <= {bound}"]
                if tensor.role == ir.INPUT:
                    constraints += [f"{origin} >= 0",
                                    f"{origin} + {span} <= {evaluated(tensor.shape[d])}"]
                if tensor.name in boxed:  # the part holds the needed box [start, stop)
                    start, stop = f"start{t}_{d}", f"stop{t}_{d}"
                    parameters += [start, stop]
                    constraints += [f"{origin} <= {start}", f"{origin} + {span} >= {stop}"]
        mentioned = set(re.findall(r"\w+", " ".join(constraints)))
        for shift in shifts:  # a shift nothing constrains stays 0
            constraints.append(f"-{bound} <= {shift} <= {bound}" if shift in mentioned
                               else f"{shift} = 0")
        variables = list(local.values()) + origins + shifts
        return isl.Set(f"[{', '.join(parameters)}] -> {{ [{', '.join(variables)}] : "
                       f"{' and '.join(constraints)} }}"), variables

    # ------------------------------------------------------------- 3. the proof

    def _prove(self, whole: _Concrete, local: _Concrete, values: dict[str, int],
               needed: isl.UnionSet, instances: isl.UnionSet) -> None:
        if not local.valid:
            raise NotABlockRun("the parts' sizes violate the operator's preconditions")
        position = {s.name: j for j, s in enumerate(self.op.statements)}
        wanted = _parts(instances)
        present = _parts(local.domain)
        for stmt in self.program.statements:
            j = position[stmt.statement.name]
            ranges = [r.index for r in stmt.statement.domain]
            shift = [values[f"s{j}_{ranges.index(i)}"] for i in stmt.indices]
            move = _at(self._parsed(isl.Map, _translation_text(stmt)), shift)
            empty = isl.Set(f"{{ {tuple_text(stmt)} : false }}")
            global_instances = wanted.get(stmt.name, empty)
            target = needed.extract_set(self._writes[stmt.name].get_space().range())
            writing = target.apply(self._writes[stmt.name].reverse())
            ran = present.get(stmt.name, empty).apply(move).intersect(writing)
            if not ran.is_equal(global_instances):
                raise NotABlockRun(f"{stmt.statement.name} would not run exactly the "
                                   f"instances that write this block: {ran} locally, "
                                   f"{global_instances} globally")
            if stmt.is_init:
                continue
            for comparison in self.facts[stmt.statement.name].comparisons:
                text = f"{params_prefix(self.op)} -> {{ {tuple_text(stmt)} : {comparison} }}"
                globally = global_instances.intersect(whole.set(text))
                locally = global_instances.intersect(local.set(text).apply(move))
                if not globally.is_equal(locally):
                    raise NotABlockRun(f"the condition {comparison} of "
                                       f"{stmt.statement.name} changes on this block's parts")


def _tensors(op: ir.Op) -> tuple[ir.Tensor, ...]:
    return op.inputs + op.outputs + op.temporaries


def _lhs(stmt: PolyStatement) -> tuple[ir.Expr, ...]:
    return tuple(ir.Index(INT64, i) for i in stmt.statement.indices)


def _box_text(tensor: str, rank: int) -> str:
    """A box of ``tensor``, its (start, stop) per dimension the parameters."""
    bounds = [f"start{d}, stop{d}" for d in range(rank)]
    inside = " and ".join(f"start{d} <= x{d} < stop{d}" for d in range(rank))
    return (f"[{', '.join(bounds)}] -> {{ {isl_name(tensor)}"
            f"[{', '.join(f'x{d}' for d in range(rank))}] : {inside or 'true'} }}")


def _translation_text(stmt: PolyStatement) -> str:
    """The statement's instances moved by a shift per index (the parameters)."""
    names = [isl_name(i) for i in stmt.indices]
    moved = [f"{n} + shift{k}" for k, n in enumerate(names)]
    return (f"[{', '.join(f'shift{k}' for k in range(len(names)))}] -> "
            f"{{ {tuple_text(stmt)} -> {stmt.name}[{', '.join(moved)}] }}")


def _at(template, values: list[int]):
    """``template`` (a set or map over parameters) with its parameters set to ``values``,
    in order."""
    for k, value in enumerate(values):
        template = template.fix_val(isl.dim_type.param, k, value)
    return template.project_out_all_params()
