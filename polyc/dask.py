"""polyc operators on Dask arrays: blocks and halos derived by isl, one task per block.

    import dask.array as da, polyc.dask
    Y = polyc.dask.apply(op, X, W)            # dask arrays (or numpy) in, dask array out
    Y.compute()                               # any scheduler: threads, processes, a cluster
    print(polyc.dask.plan(op, X, W))          # the decomposition, its tasks and bytes

The decomposition comes from the operator (:mod:`polyc.poly.decomposition`): output
dimensions follow the chunks of the input dimensions they read one to one (or asked
with ``chunks=``), a reduction over a chunked input dimension gives partial results
combined by a tree, and every block is proven by isl to be computed by the operator
itself run on the parts of the inputs the block needs (:mod:`polyc.poly.block_runs`),
halos and borders included. Dimensions that cannot be split stay whole, and the plan
says why.

The graph has one task per block (it gathers the input chunks its parts overlap,
cuts the parts out, runs the compiled operator and trims the result), one per output
block of a multi-output operator, and the combining tree of split reductions. Inputs
are never rechunked. Workers rebuild the operator from its TC text and options and
compile it once per process, from polyc's shared disk cache (safe under concurrency).

Dask is optional (``pip install 'polyc[dask]'``); importing polyc never imports it.
"""
from __future__ import annotations

import bisect
import functools
import itertools
import threading
from dataclasses import dataclass

import numpy as np

from polyc.errors import ArgumentError, ConfigurationError
from polyc.lang.printer import to_tc
from polyc.poly.block_runs import BlockAnalysis
from polyc.poly.decomposition import Decomposition, decompose

SPLIT_EVERY = 8  # partial results combined per task of a reduction tree
_COMBINE = {"+": np.add, "*": np.multiply, "max": np.maximum, "min": np.minimum}
_LOCK = threading.Lock()
_ANALYSES: dict[object, BlockAnalysis] = {}
_OPERATORS: dict[tuple, object] = {}


def _import_dask():
    try:
        import dask.array as da
        from dask.base import tokenize
        from dask.highlevelgraph import HighLevelGraph
    except ImportError as error:
        raise ConfigurationError(f"polyc.dask needs dask ({error}): pip install "
                                 f"'polyc[dask]'") from None
    return da, tokenize, HighLevelGraph


@dataclass(frozen=True)
class Plan:
    """How :func:`apply` runs an operator on these arrays: the decomposition, the
    graph's tasks and the bytes each block reads. ``str(plan)`` shows it."""

    operator: str
    decomposition: Decomposition
    inputs: tuple[tuple[str, tuple, tuple, int], ...]  # name, shape, chunks, itemsize
    tasks: int
    face_tasks: int = 0  # of the tasks, those that cut halo faces from input chunks
    shared_parts: int = 0  # of the tasks, those that join a part several blocks read

    @property
    def blocks(self) -> int:
        return len(self.decomposition.runs)

    def bytes_read(self) -> list[int]:
        """Per block, the bytes of the input parts it reads."""
        result = []
        for run in self.decomposition.runs.values():
            total = 0
            for part, (_, _, _, itemsize) in zip(run.parts, self.inputs):
                if part is not None:
                    total += itemsize * int(np.prod([b - a for a, b in part]))
            result.append(total)
        return result

    def halos(self) -> dict[str, tuple[int, int]]:
        """Per split axis that follows an input dimension, the most its blocks' parts
        reach below and above the elements the block's own indices read there."""
        names = [name for name, *_ in self.inputs]
        found = {}
        for k, axis in enumerate(self.decomposition.axes):
            if axis.source is None or len(axis.chunks) == 1:
                continue
            name, dim, shift, stride = axis.source
            below = above = 0
            for block, run in self.decomposition.runs.items():
                start, stop = axis.bounds[block[k]]
                part = run.parts[names.index(name)]
                below = max(below, stride * start + shift - part[dim][0])
                above = max(above, part[dim][1] - (stride * (stop - 1) + shift + 1))
            found[f"{axis.label} (reads {name} dimension {dim})"] = (below, above)
        return found

    def __str__(self) -> str:
        lines = [f"polyc.dask plan of {self.operator}: {self.blocks} block"
                 f"{'s' if self.blocks != 1 else ''}, {self.tasks} tasks besides the inputs'"]
        for axis in self.decomposition.axes:
            dims = ", ".join(f"{name} dimension {d}" for name, d in axis.dims) or axis.label
            if len(axis.chunks) == 1:
                reason = f" ({axis.whole_because})" if axis.whole_because else ""
                lines.append(f"  {dims}: whole{reason}")
            elif axis.reduction is not None:
                levels, parts = 1, len(axis.chunks)
                while parts > SPLIT_EVERY:
                    parts, levels = -(-parts // SPLIT_EVERY), levels + 1
                lines.append(f"  {dims}: split in {len(axis.chunks)} chunks, partial results "
                             f"combined by {axis.reduction[2]} in a tree of {levels} level"
                             f"{'s' if levels != 1 else ''}")
            else:
                lines.append(f"  {dims}: split in {len(axis.chunks)} chunks "
                             f"{_chunks_text(axis.chunks)}")
        for label, (below, above) in self.halos().items():
            if below or above:
                lines.append(f"  halo of {label}: {below} below, {above} above")
        if self.face_tasks:
            lines.append(f"  {self.face_tasks} of the tasks cut the halos' faces from input "
                         f"chunks (only the faces travel to the neighbouring blocks)")
        if self.shared_parts:
            lines.append(f"  {self.shared_parts} of the tasks join a part that several blocks "
                         f"read from several chunks (joined once, fetched once per worker)")
        read = self.bytes_read()
        total_inputs = sum(itemsize * int(np.prod(shape)) for _, shape, _, itemsize
                           in self.inputs if shape)
        lines.append(f"  bytes read per block: at most {_bytes(max(read))}, in all "
                     f"{_bytes(sum(read))} (the inputs hold {_bytes(total_inputs)})")
        return "\n".join(lines)


def plan(operator, *args, chunks=None) -> Plan:
    """The plan :func:`apply` follows for these arguments (nothing runs)."""
    return _planned(operator, args, chunks)[0]


def apply(operator, *args, chunks=None):
    """``operator`` on dask arrays (numpy arrays and scalars accepted): a lazy dask
    array, or a tuple of them for several outputs. ``chunks`` chooses the first
    output's blocking (dask's notation); by default the outputs follow the inputs."""
    result = _planned(operator, args, chunks)[1]
    return result[0] if len(result) == 1 else tuple(result)


# ----------------------------------------------------------------- planning


def _planned(operator, args: tuple, chunks):
    da, tokenize, HighLevelGraph = _import_dask()
    op = operator.ir
    operator.binder.check_count(len(args))
    arrays = []
    for tensor, value in zip(op.inputs, args):
        if not tensor.rank:
            arrays.append(value)
            continue
        if not isinstance(value, da.Array):
            value = np.asarray(value)
            value = da.from_array(value, chunks=value.shape or ())
        if value.dtype != tensor.type.dtype:
            raise ArgumentError(f"{op.name}: {tensor.name} must be {tensor.type.name}, not "
                                f"{value.dtype} (polyc does not cast; use .astype)")
        if any(np.isnan(n) for n in value.shape):
            raise ArgumentError(f"{op.name}: {tensor.name} has unknown chunk sizes; call "
                                f"compute_chunk_sizes() first")
        arrays.append(value)
    shapes = tuple(a.shape if t.rank else None for t, a in zip(op.inputs, arrays))
    sizes, _ = operator.binder.sizes_of(shapes)
    operator.binder.check_sizes(sizes)
    asked = None
    if chunks is not None:
        first = op.outputs[0]
        shape = operator.output_shapes(*(s or () for s in shapes))[0]
        normal = da.core.normalize_chunks(chunks, shape, dtype=first.type.dtype)
        asked = {(first.name, d): c for d, c in enumerate(normal)}
    in_chunks = tuple(a.chunks if t.rank else None for t, a in zip(op.inputs, arrays))
    decomposition = _decomposition(op, tuple(sorted(sizes.items())), shapes, in_chunks,
                                   tuple(sorted(asked.items())) if asked else None)
    spec = (to_tc(op), op.name, operator.options)
    name = f"polyc-{op.name}-" + tokenize(spec[0], repr(spec[2]), [
        a.name if t.rank else a for t, a in zip(op.inputs, arrays)], asked)
    blocks, outputs, keys, (faces, shared) = _graph(name, op, decomposition, arrays, spec)
    block_layer = name if outputs else keys[op.outputs[0].name]
    layer = HighLevelGraph.from_collections(block_layer, blocks, dependencies=[
        a for t, a in zip(op.inputs, arrays) if t.rank])
    if outputs:  # a layer per output (named as its array), over the blocks' layer
        layer = HighLevelGraph({**layer.layers, **outputs}, {
            **layer.dependencies, **{output: {block_layer} for output in outputs}})
    results = []
    for tensor in op.outputs:
        dims = [next(a for a in decomposition.axes if (tensor.name, d) in a.dims)
                for d in range(tensor.rank)]
        results.append(da.Array(layer, keys[tensor.name], chunks=tuple(a.chunks for a in dims),
                                dtype=tensor.type.dtype,
                                meta=np.empty((0,) * tensor.rank, tensor.type.dtype)))
    inputs = tuple((t.name, s or (), c or (), t.type.dtype.itemsize)
                   for t, s, c in zip(op.inputs, shapes, in_chunks))
    tasks = len(blocks) - 1 + sum(len(tasks) for tasks in outputs.values())
    return Plan(op.name, decomposition, inputs, tasks, faces, shared), results


def _analysis(op) -> BlockAnalysis:
    with _LOCK:
        found = _ANALYSES.get(op)
        if found is None:
            found = _ANALYSES[op] = BlockAnalysis(op)
        return found


@functools.lru_cache(maxsize=64)
def _decomposition(op, sizes: tuple, shapes: tuple, chunks: tuple, asked: tuple | None
                   ) -> Decomposition:
    """The decomposition, proven once per operator, shapes and chunks (an operator
    applied again to arrays chunked the same way is not planned again)."""
    return decompose(_analysis(op), dict(sizes), shapes, chunks, dict(asked) if asked else None)


def _graph(name: str, op, decomposition: Decomposition, arrays: list, spec):
    """The tasks (see the module docstring): the blocks' and, unless the blocks are the
    only output's chunks, each output's (its chunks and its reduction tree); and each
    output's key name."""
    graph = {(f"{name}-operator",): spec}
    spec_key = (f"{name}-operator",)
    single = len(op.outputs) == 1 and not decomposition.partials(op.outputs[0].name)
    keys = {t.name: f"{name}-{t.name}" for t in op.outputs}
    block_key = {}
    output_position = {t.name: j for j, t in enumerate(op.outputs)}
    faces = [_Faces(f"{name}-faces-{k}", array, [run.parts[k] for run in
                                                 decomposition.runs.values()])
             if tensor.rank else None for k, (tensor, array) in enumerate(zip(op.inputs, arrays))]
    for found in faces:
        if found is not None:
            graph.update(found.tasks())
    shared = _shared_parts(name, faces, decomposition)
    graph.update({key: (_assembled, faces[k].pieces(part)) for (k, part), key in shared.items()})
    for block, run in decomposition.runs.items():
        parts = [array if found is None else shared.get((k, part)) or found.pieces(part)
                 for k, (found, array, part) in enumerate(zip(faces, arrays, run.parts))]
        produced = tuple((output_position[o], box) for o, box in run.trims)
        key = (keys[op.outputs[0].name], *_coordinates(decomposition, op.outputs[0].name,
                                                         block)) if single \
            else (f"{name}-block", *block)
        graph[key] = (_run_block, spec_key, single, produced, *parts)
        block_key[block] = key
    helpers = (sum(len(found.faces) for found in faces if found is not None), len(shared))
    if single:
        return graph, {}, keys, helpers
    outputs = {}
    for tensor in op.outputs:
        layer = outputs[keys[tensor.name]] = {}
        partial = decomposition.partials(tensor.name)
        operator = decomposition.axes[partial[0]].reduction[2] if partial else None
        groups: dict[tuple, list] = {}
        for block, run in decomposition.runs.items():
            if decomposition.produces(tensor.name, block):
                where = _coordinates(decomposition, tensor.name, block)
                position = [o for o, _ in run.trims].index(tensor.name)
                groups.setdefault(where, []).append((_item, block_key[block], position))
        for where, parts in groups.items():
            level, output_key = 0, (keys[tensor.name], *where)
            while len(parts) > SPLIT_EVERY:  # a tree of partial results
                merged = []
                for g in range(0, len(parts), SPLIT_EVERY):
                    key = (f"{name}-combine-{tensor.name}-{level}", *where, g)
                    layer[key] = (_combine, operator, list(parts[g:g + SPLIT_EVERY]))
                    merged.append(key)
                parts, level = merged, level + 1
            layer[output_key] = parts[0] if len(parts) == 1 else (_combine, operator, parts)
    return graph, outputs, keys, helpers


def _shared_parts(name: str, faces: list, decomposition: Decomposition) -> dict:
    """A task for each part that several blocks read and that spans several chunks (a
    gathered table kept whole, a contraction's operand whose reduction axis stays
    whole): joined once, then fetched by the blocks' tasks (once per worker)."""
    uses: dict[tuple, int] = {}
    for run in decomposition.runs.values():
        for k, part in enumerate(run.parts):
            if faces[k] is not None and len(faces[k].overlaps[part]) > 1:
                uses[k, part] = uses.get((k, part), 0) + 1
    shared = [use for use, count in uses.items() if count > 1]
    return {use: (f"{name}-part-{use[0]}", j) for j, use in enumerate(shared)}


def _coordinates(decomposition: Decomposition, output: str, block: tuple) -> tuple:
    """The output block's position in the output's chunk grid."""
    chunk = {d: k for axis, k in zip(decomposition.axes, block)
             for name, d in axis.dims if name == output}
    return tuple(chunk[d] for d in sorted(chunk))


class _Faces:
    """How the blocks' parts of one input are cut from its chunks. A part is the
    intersection of the part with each chunk it overlaps, joined. A piece is cut inside
    the block's task, unless the chunk is one whose pieces for the blocks that use a
    little of it (halos) hold at most half of it: those are cut by one task per chunk,
    where the chunk lies, so that only the faces travel and each block's task is placed
    where the most of its data is."""

    def __init__(self, name: str, array, parts: list):
        self.name, self.array = name, array
        self.bounds = [tuple(itertools.accumulate(c, initial=0)) for c in array.chunks]
        self.overlaps = {part: self._overlaps(part) for part in parts}
        self.faces: dict[tuple, list] = {}  # chunk -> the small pieces cut from it
        for overlaps in self.overlaps.values():
            for chunk, box in overlaps.items():
                if 0 < 2 * _size(box) <= _size(self._chunk_box(chunk)):
                    found = self.faces.setdefault(chunk, [])
                    if box not in found:
                        found.append(box)
        self.faces = {chunk: boxes for chunk, boxes in self.faces.items()
                      if 2 * sum(map(_size, boxes)) <= _size(self._chunk_box(chunk))}

    def tasks(self) -> dict:
        return {(self.name, *chunk): (_cut_faces, (self.array.name, *chunk), boxes)
                for chunk, boxes in self.faces.items()}

    def pieces(self, part) -> list:
        """The block's argument: the pieces of ``part`` nested per dimension."""
        pieces = {}
        for chunk, box in self.overlaps[part].items():
            if box in self.faces.get(chunk, ()):
                pieces[chunk] = (_item, (self.name, *chunk), self.faces[chunk].index(box))
            else:
                pieces[chunk] = (_cut, (self.array.name, *chunk), box)
        ranges = self._ranges(part)

        def nested(prefix: tuple, dim: int):
            if dim == len(ranges):
                return pieces[prefix]
            return [nested(prefix + (k,), dim + 1) for k in ranges[dim]]

        return [nested((), 0)]

    def _ranges(self, part) -> list[range]:
        """Per dimension, the chunks ``part`` overlaps (one, for an empty part)."""
        ranges = []
        for (start, stop), bounds in zip(part, self.bounds):
            first = min(bisect.bisect_right(bounds, start) - 1, len(bounds) - 2)
            last = max(first, bisect.bisect_left(bounds, stop) - 1)
            ranges.append(range(max(first, 0), last + 1))
        return ranges

    def _overlaps(self, part) -> dict[tuple, tuple]:
        """Each chunk ``part`` overlaps, with the part's box in the chunk's coordinates."""
        return {chunk: tuple((max(start, b[k]) - b[k], max(min(stop, b[k + 1]), start) - b[k])
                             for (start, stop), b, k in zip(part, self.bounds, chunk))
                for chunk in itertools.product(*self._ranges(part))}

    def _chunk_box(self, chunk: tuple):
        return tuple((0, b[k + 1] - b[k]) for b, k in zip(self.bounds, chunk))


def _size(box) -> int:
    return int(np.prod([stop - start for start, stop in box]))


# ----------------------------------------------------------------- tasks


def _operator(spec):
    """The operator of ``spec`` (its TC text, name and options), built once per process."""
    text, name, options = spec
    key = (text, name, repr(options))
    with _LOCK:
        found = _OPERATORS.get(key)
    if found is None:
        from polyc.api import define

        found = define(text, name, options=options)
        with _LOCK:
            found = _OPERATORS.setdefault(key, found)
    return found


def _cut(chunk: np.ndarray, box) -> np.ndarray:
    return chunk[tuple(slice(a, b) for a, b in box)]


def _cut_faces(chunk: np.ndarray, boxes: list) -> tuple:
    """Copies, so that the faces travel alone and the chunk is not kept alive by them."""
    return tuple(np.ascontiguousarray(_cut(chunk, box)) for box in boxes)


def _assembled(argument: list) -> np.ndarray:
    """The part: its pieces (nested per dimension, in a list that marks a part) joined,
    when there are several."""
    (pieces,) = argument
    joined = pieces
    while isinstance(joined, list) and len(joined) == 1:
        joined = joined[0]
    return np.block(pieces) if isinstance(joined, list) else joined


def _run_block(spec, single: bool, produced, *arguments):
    operator = _operator(spec)
    values = [_assembled(a) if isinstance(a, list) else a for a in arguments]
    results = operator(*values)
    if not isinstance(results, tuple):
        results = (results,)
    trimmed = tuple(results[j][tuple(slice(a, b) for a, b in box)] for j, box in produced)
    return trimmed[0] if single else trimmed


def _item(results, position):
    return results if position is None else results[position]


def _combine(operator: str, parts: list):
    return functools.reduce(_COMBINE[operator], parts)


def _chunks_text(chunks: tuple) -> str:
    if len(set(chunks)) == 1:
        return f"of {chunks[0]}"
    return "(" + ", ".join(map(str, chunks[:6])) + (", ...)" if len(chunks) > 6 else ")")


def _bytes(n: int) -> str:
    for unit in ("B", "KB", "MB", "GB"):
        if n < 1000 or unit == "GB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1000
    return f"{n:.1f} TB"
