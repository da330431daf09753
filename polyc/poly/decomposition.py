"""How an operator's outputs split into blocks for a chunked run, and how each block is
computed (:mod:`polyc.poly.block_runs` proves every block).

The outputs' dimensions fall into **axes**, each split in chunks or kept whole:

- an output dimension written by an index that reads an input dimension one to one
  (``Y(i, j) = ... X(i + c, ...)``, through temporaries too) follows that input's
  chunks, shifted by ``c`` and clipped to the output; outputs whose dimensions follow
  the same input dimension share the axis (``mean(i)`` and ``Y(i, j)``);
- the reduction index of an output's only statement, a ``!`` reduction that nothing
  else reads (``C(m, n) +=! A(m, k) * B(k, n)``), follows the chunks of the input it
  reads one to one: each chunk computes a partial output, combined by the reduction's
  operator;
- any other dimension is one axis of its own, whole unless chunks are asked for.

A block is one chunk of every axis. Each axis is first tried alone, every chunk of it
proven; an axis whose chunks are not all block runs is made whole, with the reason.
Then every block of the remaining product is proven (on failure the last split axis
is made whole and the product tried again). An output is produced by the blocks at
chunk 0 of every axis it does not span.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, replace

from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang.ranges import affine_of
from polyc.poly.block_runs import Block, BlockAnalysis, BlockRun, NotABlockRun, ReductionChunk


@dataclass(frozen=True)
class Axis:
    """One direction in which blocks are cut: ``chunks`` (lengths) of ``start:start +
    extent``; the output ``dims`` it blocks, or the ``reduction`` (statement, index,
    operator) it splits; ``whole_because`` says why it is not split, when it is not."""

    label: str
    extent: int
    chunks: tuple[int, ...]
    dims: tuple[tuple[str, int], ...] = ()
    reduction: tuple[str, str, str] | None = None
    reduced: str | None = None  # the output whose partial results a split reduction gives
    start: int = 0
    whole_because: str | None = None
    source: tuple[str, int, int, int] | None = None  # (input, dim, shift, stride) followed

    @property
    def bounds(self) -> tuple[tuple[int, int], ...]:
        """Each chunk's (start, stop)."""
        result, position = [], self.start
        for length in self.chunks:
            result.append((position, position + length))
            position += length
        return tuple(result)

    def made_whole(self, reason: str) -> Axis:
        return replace(self, chunks=(self.extent,), whole_because=reason)


@dataclass(frozen=True)
class Decomposition:
    """The axes, and for every block (one chunk index per axis) its proven run."""

    axes: tuple[Axis, ...]
    runs: dict[tuple[int, ...], BlockRun]

    def produces(self, output: str, block: tuple[int, ...]) -> bool:
        return _produces(self.axes, output, block)

    def partials(self, output: str) -> tuple[int, ...]:
        """The positions of the axes whose chunks give partial results of ``output``."""
        return tuple(k for k, a in enumerate(self.axes)
                     if a.reduced == output and len(a.chunks) > 1)


def decompose(analysis: BlockAnalysis, sizes: dict[str, int], shapes: tuple, chunks: tuple,
              output_chunks: dict[tuple[str, int], tuple[int, ...]] | None = None
              ) -> Decomposition:
    """The decomposition of a run on inputs of ``shapes`` (which bind ``sizes``) cut in
    ``chunks`` (per input, per dimension, the chunk lengths; ``None`` for a 0-rank
    input); ``output_chunks`` asks for chunks of given output dimensions."""
    op = analysis.op
    output_shapes = {t.name: tuple(sz.evaluate(e, sizes) for e in t.shape) for t in op.outputs}
    inputs = {t.name: (shape, chunk) for t, shape, chunk in zip(op.inputs, shapes, chunks)}
    axes = _axes(op, sizes, output_shapes, inputs, output_chunks or {})
    empty = any(0 in shape for shape in shapes if shape) or any(
        0 in shape for shape in output_shapes.values())
    if empty:
        axes = [a.made_whole("the arrays are empty") for a in axes]
    whole = _whole_run(op, sizes, output_shapes).parts
    proven: dict[Block, BlockRun] = {}  # a block the product meets again is not proven twice
    for k, axis in enumerate(axes):
        if len(axis.chunks) > 1:
            alone = [a if j == k else a.made_whole("") for j, a in enumerate(axes)]
            try:
                runs = _prove_all(analysis, sizes, alone, output_shapes, proven)
            except NotABlockRun as refusal:
                axes[k] = axis.made_whole(str(refusal))
                continue
            if all(run.parts == whole for run in runs.values()):
                axes[k] = axis.made_whole("every block would read the whole of every input")
    while True:
        try:
            runs = _prove_all(analysis, sizes, axes, output_shapes, proven)
            break
        except NotABlockRun as refusal:
            k = max(j for j, a in enumerate(axes) if len(a.chunks) > 1)
            axes[k] = axes[k].made_whole(f"split together with the other axes: {refusal}")
    return Decomposition(tuple(axes), runs)


def _produces(axes, output: str, block: tuple[int, ...]) -> bool:
    """Whether ``block`` produces (part of) ``output``: chunk 0 of every axis the output
    does not span (for a split reduction of it: every chunk)."""
    return all(k == 0 or axis.reduced == output or any(name == output for name, _ in axis.dims)
               for axis, k in zip(axes, block))


def _prove_all(analysis, sizes, axes, output_shapes, proven: dict
               ) -> dict[tuple[int, ...], BlockRun]:
    op = analysis.op
    if all(len(a.chunks) == 1 for a in axes):  # the operator on its whole inputs
        return {(0,) * len(axes): _whole_run(op, sizes, output_shapes)}
    runs = {}
    for block in itertools.product(*(range(len(a.chunks)) for a in axes)):
        boxes, reductions = [], []
        for t in op.outputs:
            if _produces(axes, t.name, block):
                box = [(0, n) for n in output_shapes[t.name]]
                for a, k in zip(axes, block):
                    for name, d in a.dims:
                        if name == t.name:
                            box[d] = a.bounds[k]
                boxes.append((t.name, tuple(box)))
        for a, k in zip(axes, block):
            if a.reduction is not None and len(a.chunks) > 1:
                statement, index, _ = a.reduction
                reductions.append(ReductionChunk(statement, index, *a.bounds[k]))
        wanted = Block(tuple(boxes), tuple(reductions))
        if wanted not in proven:
            proven[wanted] = analysis.run(sizes, wanted)
        runs[block] = proven[wanted]
    return runs


def _whole_run(op: ir.Op, sizes: dict[str, int], output_shapes) -> BlockRun:
    parts = tuple(tuple((0, sz.evaluate(e, sizes)) for e in t.shape) if t.rank else None
                  for t in op.inputs)
    trims = tuple((t.name, tuple((0, n) for n in output_shapes[t.name])) for t in op.outputs)
    return BlockRun(parts, tuple((s, sizes[s]) for s in op.sizes), trims)


# ----------------------------------------------------------------- the axes


def _axes(op, sizes, output_shapes, inputs, output_chunks) -> list[Axis]:
    axes: dict[object, Axis] = {}
    for t in op.outputs:
        taken = set()
        for d, extent in enumerate(output_shapes[t.name]):
            source = _source(op, t.name, d, inputs)
            key = source if source is not None and source not in taken else (t.name, d)
            taken.add(key)
            asked = output_chunks.get((t.name, d))
            if key in axes and asked is None:
                axes[key] = replace(axes[key], dims=axes[key].dims + ((t.name, d),))
                continue
            chunks = (extent,)
            if asked is not None:
                chunks = tuple(asked)
            elif source is not None:
                chunks = _mapped(inputs[source[0]], *source[1:], 0, extent)
            axes[key] = Axis(f"{t.name} dimension {d}", extent, chunks, ((t.name, d),),
                             source=source)
    result = list(axes.values())
    for stmt in op.statements:
        result += _reduction_axes(op, stmt, sizes, inputs)
    return result


def _one_to_one(expr: ir.Expr, index: str):
    """``(tensor, dim, shift, stride)`` for each read of ``expr`` at ``stride * index +
    shift`` (plus other indices: a window), the plain reads ``index + shift`` first."""
    plain, windows = [], []
    for read in ir.walk(expr):
        if isinstance(read, ir.Read):
            for dim, e in enumerate(read.indices):
                linear = affine_of(e)
                if linear is None or linear.coefficient(index) <= 0 \
                        or not isinstance(linear.offset, sz.Affine) \
                        or not linear.offset.is_constant:
                    continue
                found = (read.tensor, dim, linear.offset.const, linear.coefficient(index))
                (plain if linear.coefficients == ((index, 1),) else windows).append(found)
    return plain + windows


def _source(op, tensor: str, dim: int, inputs, depth: int = 0):
    """The input dimension (and shift) that ``tensor``'s ``dim`` follows, if any; one cut
    in chunks is preferred."""
    found = []
    for stmt in op.statements:
        if stmt.tensor != tensor:
            continue
        for name, d, shift, stride in _one_to_one(stmt.rhs, stmt.indices[dim]):
            if name in inputs:
                found.append((name, d, shift, stride))
            elif depth < 3 and stride == 1 and op.tensor(name).role == ir.TEMPORARY \
                    and name != tensor:
                inner = _source(op, name, d, inputs, depth + 1)
                if inner is not None:
                    found.append((inner[0], inner[1], inner[2] + inner[3] * shift, inner[3]))
    split = [s for s in found if len(inputs[s[0]][1][s[1]]) > 1]
    return (split or found or [None])[0]


def _mapped(given, dim: int, shift: int, stride: int, lo: int, hi: int) -> tuple[int, ...]:
    """The input's chunks along ``dim`` as chunks of ``lo:hi``, where index ``x`` reads
    element ``stride * x + shift``."""
    _, chunks = given
    cuts, position = {lo, hi}, 0
    for length in chunks[dim]:
        position += length
        cuts.add(min(max(-(-(position - shift) // stride), lo), hi))
    ordered = sorted(cuts)
    lengths = tuple(b - a for a, b in zip(ordered, ordered[1:]) if b > a)
    return lengths or (hi - lo,)


def _reduction_axes(op, stmt: ir.Statement, sizes, inputs) -> list[Axis]:
    writers = [s for s in op.statements if s.tensor == stmt.tensor]
    readers = [s for s in op.statements if stmt.tensor in s.tensors_read]
    if (writers != [stmt] or readers or not stmt.init or stmt.op not in ir.REDUCTION_OPS
            or op.tensor(stmt.tensor).role != ir.OUTPUT):
        return []
    axes = []
    for index in stmt.reduction_indices:
        r = stmt.range_of(index)
        if not r.is_box:
            continue
        lo, hi = sz.evaluate(r.lo, sizes), sz.evaluate(r.hi, sizes)
        sources = [s for s in _one_to_one(stmt.rhs, index) if s[0] in inputs
                   and len(inputs[s[0]][1][s[1]]) > 1]
        if sources and hi > lo:
            name, dim, shift, stride = sources[0]
            chunks = _mapped(inputs[name], dim, shift, stride, lo, hi)
            if len(chunks) > 1:
                axes.append(Axis(f"{index} of {stmt.name} ({stmt.tensor}, reduced by "
                                 f"{stmt.op})", hi - lo, chunks, (),
                                 (stmt.name, index, stmt.op), stmt.tensor, lo,
                                 source=sources[0]))
    return axes
