"""Every stage of one operator's compilation, for a terminal and for Jupyter.

``explain(operator, args)`` returns an :class:`Explanation`: ``str()`` is the
text, ``_repr_html_`` the notebook view (highlighted source and C, the
dependence graph and the iteration space as pictures), and each stage is a
named :class:`Section` for programs and tests::

    e = matmul.explain(A, B)          # arrays: compiles, shows compile statistics
    e = matmul.explain((300, 200), (200, 100))   # shapes: sizes known, nothing compiled
    e.section("deps")                 # the text of one section
    e.save("matmul.html")             # or .txt

Section keys, in order: ``source`` (as written), ``ir`` (TC, ranges explicit),
``shapes``, ``domains``, ``deps``, ``graph``, ``fusion``, ``schedule``,
``space`` (iteration space), ``ast`` (loop nest), ``c``, ``stats``, and with
Dask arrays (sizes from their shapes, nothing compiled) ``dask``: the plan of
:func:`polyc.dask.apply` on them.
:data:`STAGES` are those that depend on the compilation only;
``stage_texts`` gives their text for ``python -m polyc --emit`` and the
``POLYC_DEBUG`` channels, which carry the same names.
"""
from __future__ import annotations

import numbers
from dataclasses import dataclass, field
from pathlib import Path

from polyc.errors import ArgumentError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.jit.launcher import launcher_module
from polyc.lang.printer import statement_to_tc, to_tc
from polyc.machine import rules
from polyc.poly.program import isl_items
from polyc.scheduling.jam import JAM_MARK, JAM_ROWS
from polyc.scheduling.marks import (SIMD_MARK, SIMD_REDUCTION_MARK, PrefetchNextRow,
                                    PrivateAccumulators,
                                    collapsed_loops, is_parallel)
from polyc.scheduling.packing import Panel

STAGES = ("ir", "shapes", "domains", "deps", "fusion", "schedule", "ast", "c")

TITLES = {
    "source": "operator as written",
    "ir": "operator with every range explicit (TC)",
    "shapes": "inferred ranges and shapes",
    "domains": "iteration domains",
    "deps": "dependences",
    "graph": "dependence graph",
    "fusion": "fusion: which statements share loops",
    "schedule": "schedule tree",
    "space": "iteration space and execution order",
    "ast": "loop nest (isl AST)",
    "c": "C source",
    "stats": "compile statistics",
    "dask": "the run on Dask arrays: blocks, halos, reduction tree, tasks",
}


@dataclass(frozen=True)
class Part:
    """A piece of a section: text in a language (for highlighting), or a picture."""

    text: str
    language: str = "text"   # "tc", "python", "isl", "yaml", "c" or "text"
    label: str = ""          # a sub-heading
    collapsed: bool = False  # HTML: folded away at first
    svg: str | None = None   # HTML shows the picture instead of the text
    show: str = "both"       # "both", or only in "text" (terminals) or "html"


@dataclass(frozen=True)
class Section:
    key: str
    title: str
    parts: tuple[Part, ...]

    @property
    def text(self) -> str:
        chunks = []
        for part in self.parts:
            if part.show == "html":
                continue
            chunks.append((f"-- {part.label} --\n" if part.label else "") + part.text.rstrip())
        return "\n".join(chunks)


@dataclass(frozen=True)
class Explanation:
    """What polyc did with one operator, stage by stage."""

    name: str
    sections: tuple[Section, ...]
    sizes: dict | None = None               # size variables, when shapes were given
    summary: str = ""                       # one line: statements, nests, marks, times
    dependence_graph: object = field(default=None, repr=False, compare=False)
    iteration_space: object = field(default=None, repr=False, compare=False)
    compilation: object = field(default=None, repr=False, compare=False)
    kernel: object = field(default=None, repr=False, compare=False)

    @property
    def keys(self) -> tuple[str, ...]:
        return tuple(s.key for s in self.sections)

    def section(self, key: str) -> str:
        """The text of section ``key`` (see the module docstring for the keys)."""
        for section in self.sections:
            if section.key == key:
                return section.text
        raise KeyError(f"no section {key!r}; sections: {', '.join(self.keys)}")

    def __str__(self) -> str:
        parts = [f"polyc explain: {self.name}" + (f" ({self.summary})" if self.summary else "")]
        for section in self.sections:
            parts.append(f"== {section.title} ==\n{section.text}\n")
        return "\n".join(parts)

    def __repr__(self) -> str:
        return f"<polyc Explanation of {self.name}: {', '.join(self.keys)}>"

    def _repr_html_(self) -> str:
        from polyc.explore.html import explanation_html

        return explanation_html(self)

    def save(self, path) -> Path:
        """Write ``.html`` (a page of the notebook view) or text (any other suffix)."""
        from polyc.explore.html import page

        path = Path(path)
        if path.suffix.lower() in (".html", ".htm"):
            path.write_text(page(self._repr_html_(), f"polyc: {self.name}"), encoding="utf-8")
        else:
            path.write_text(str(self) + "\n", encoding="utf-8")
        return path


# ----------------------------------------------------------------- stage texts


def stage_texts(compilation, sizes: dict | None = None) -> dict[str, str]:
    """The text of every stage in :data:`STAGES` of a :class:`polyc.compiler.Compilation`."""
    from polyc.explore.schedule_view import summarize_schedule

    op = compilation.op
    program = compilation.program
    domains = "\n".join(str(s) for s in isl_items(program.domain.get_set_list()))
    deps = []
    for (kind, source, sink), relation in sorted(
            compilation.dependences.by_statement_pair().items(), key=lambda kv: kv[0]):
        deps.append(f"{kind:5} {source} -> {sink}: {relation}")
    summary = summarize_schedule(compilation.schedule, program)
    return {
        "ir": to_tc(op),
        "shapes": shapes_text(op, sizes),
        "domains": domains + f"\ncontext: {program.context}",
        "deps": "\n".join(deps) or "(none)",
        "fusion": fusion_text(op, summary, compilation.schedule.decision
                              or compilation.options.fusion, sizes,
                              getattr(compilation, "contractions", None),
                              compilation.c_source, compilation.schedule.candidates,
                              compilation.partitions.values()),
        "schedule": str(compilation.schedule),
        "ast": compilation.ast_text,
        "c": compilation.c_source.text,
    }


def shapes_text(op: ir.Op, sizes: dict | None = None, origins: dict | None = None) -> str:
    """Tensors with their (inferred) shapes, statements with their ranges, preconditions."""
    lines = []
    if sizes:
        lines.append("sizes: " + ", ".join(
            f"{name} = {value}" + (f" ({origins[name]})" if origins and name in origins else "")
            for name, value in sizes.items()))
    for tensor in op.inputs + op.outputs + op.temporaries:
        dims = ", ".join(sz.to_tc(d) for d in tensor.shape)
        line = f"{tensor.role:9} {tensor.name}: {tensor.type.name}({dims})"
        if sizes and tensor.rank:
            line += f"  = {tuple(sz.evaluate(d, sizes) for d in tensor.shape)}"
        lines.append(line)
    for stmt in op.statements:
        line = f"{stmt.name}: {statement_to_tc(stmt)}"
        if sizes:
            count = 1
            for index_range in stmt.domain:
                count *= max(0, sz.evaluate(index_range.hi, sizes)
                             - sz.evaluate(index_range.lo, sizes))
            line += (f"  ({count:,} instances)" if stmt.is_box else
                     f"  (at most {count:,} instances: its bounding box)")
        lines.append(line)
    for precondition in op.preconditions:
        lines.append(f"precondition: {precondition.description}")
    return "\n".join(lines)


def fusion_text(op: ir.Op, summary, strategy: str, sizes: dict | None = None,
                contractions: dict | None = None, c_source=None, candidates=(),
                partitions=()) -> str:
    """The candidates the default fusion weighed with their estimated costs, which
    statements share which loops (from the schedule tree) and how threads share them
    (``partitions``: :class:`~polyc.scheduling.threads.Partition`), the temporaries:
    their full size, and the shape they shrink to when contracted, and the outputs
    written with streaming stores (``c_source``: the emitted C's record of them)."""
    count = len(summary.nests)
    lines = [f"fusion: {strategy}; {count} loop nest{'s' if count != 1 else ''}"]
    lines += candidates_text(candidates)
    for number, nest in enumerate(summary.nests, 1):
        lines.append(f"loop nest {number}: {', '.join(nest.statements)}")
        if nest.outer is None:
            lines.append("  (no loops)")
            continue
        shared = [loop.name for loop in nest.shared_loops]
        if len(nest.statements) > 1:
            lines.append("  shared loops: " + (", ".join(shared) if shared else "(none)"))
        for loop in nest.outer.loops:
            if not loop.walks:
                continue
            tile = f" (tiles of {loop.tile})" if loop.tile else ""
            lines.append(f"  loop {loop.name}{tile}: {', '.join(loop.statements)}")
        collapsed = collapsed_loops(nest.outer.marks)
        boxes = next((p for p in partitions if p.statements() <= set(nest.statements)), None)
        for mark in nest.outer.marks:
            if is_parallel(mark) and nest.outer.loops and boxes is not None:
                lines.append(f"  {boxes.describe()}")
            elif is_parallel(mark) and nest.outer.loops:
                how = (f", private accumulators for {', '.join(mark.tensors)}"
                       if isinstance(mark, PrivateAccumulators) else "")
                if collapsed > 1:
                    names = ", ".join(loop.name for loop in nest.outer.loops[:collapsed])
                    lines.append(f"  parallel (OpenMP{how}, {collapsed} loops collapsed into "
                                 f"one): loops {names}")
                else:
                    lines.append(f"  parallel (OpenMP{how}): loop {nest.outer.loops[0].name}")
        vector = (SIMD_MARK, SIMD_REDUCTION_MARK)
        vectorised = {s for band in nest.bands if any(m in vector for m in band.marks)
                      for s in band.statements}
        jammed = sorted({s for band in nest.bands if JAM_MARK in band.marks
                         and band.loops and band.loops[-1].walks for s in band.statements}
                        & vectorised)
        if jammed:
            lines.append(f"  rows of loop {nest.outer.loops[0].name} jammed by {JAM_ROWS} "
                         f"into the vector loops (one accumulator per row): "
                         f"{', '.join(jammed)}")
        for band in nest.bands:
            for mark in band.marks:
                if isinstance(mark, (Panel, PrefetchNextRow)):
                    lines.append(f"  {mark.describe()}")
                if mark in vector and band.loops:
                    loop = band.loops[-1]
                    lines.append(f"  vectorised ({mark}): loop {loop.name} of "
                                 f"{', '.join(loop.statements or band.statements)}")
    lines.append("temporaries:" if op.temporaries else "temporaries: none")
    contractions = contractions or {}
    for tensor in op.temporaries:
        lines.append("  " + _temporary_text(tensor, contractions.get(tensor.name), sizes))
    if c_source is not None and c_source.streamed:
        lines.append("streaming stores (past the cache) for outputs of at least "
                     f"{_bytes(c_source.stream_threshold)}:")
        for tensor in op.outputs:
            if tensor.name in c_source.streamed:
                size = ""
                if sizes:
                    count = _element_count(tensor.shape, sizes) * max(1, tensor.type.bits // 8)
                    size = f": {_bytes(count)}, " + (
                        "streamed at these sizes" if count >= c_source.stream_threshold
                        else "plain stores at these sizes")
                lines.append(f"  {tensor.name}{size}")
    return "\n".join(lines)


def candidates_text(candidates) -> list[str]:
    """The default fusion's candidates, the chosen one marked ``→``, each with its
    estimated cost (:mod:`polyc.scheduling.fusion_cost`) or why it was turned down."""
    if not candidates:
        return []
    estimated = next((c.cost for c in candidates if c.cost is not None), None)
    at = ", ".join(f"{name} = {value}" for name, value in estimated.sizes) if estimated else ""
    lines = [f"candidates (cost estimated at {at or 'the nominal sizes'}):"]
    for candidate in candidates:
        what = (str(candidate.cost) if candidate.cost is not None
                else f"turned down: {candidate.verdict}")
        lines.append(f"  {'→' if candidate.chosen else ' '} {candidate.name}: {what}")
    return lines


def _temporary_text(tensor: ir.Tensor, contraction, sizes: dict | None) -> str:
    bytes_each = max(1, tensor.type.bits // 8)

    def shape_text(shape) -> str:
        return f"{tensor.type.name}({', '.join(sz.to_tc(d) for d in shape)})"

    def amount(shape) -> str:
        if not sizes:
            return ""
        elements = _element_count(shape, sizes)
        return f" = {elements:,} element{'s' if elements != 1 else ''}, " \
               f"{_bytes(elements * bytes_each)}"

    full = f"{tensor.name}: {shape_text(tensor.shape)}"
    if contraction is None or all(contraction.kept):
        return f"{full}, full size{amount(tensor.shape)}"
    small = contraction.shape(tensor)
    text = f"{full}, contracted to {shape_text(small)} per iteration of the parallel loop"
    if sizes:
        text += f"{amount(small).replace(' = ', ': ', 1)} instead of" \
                f"{amount(tensor.shape).replace(' = ', ' ', 1)}"
    return text


def _element_count(shape, sizes: dict) -> int:
    """The number of elements of an array of ``shape`` at ``sizes``."""
    count = 1
    for extent in shape:
        count *= sz.evaluate(extent, sizes)
    return count


def _bytes(count: int) -> str:
    for unit, scale in (("GiB", 1 << 30), ("MiB", 1 << 20), ("KiB", 1 << 10)):
        if count >= scale:
            return f"{count / scale:.1f} {unit}"
    return f"{count} B"


# ----------------------------------------------------------------- arguments


def bind_sizes(operator, args: tuple) -> tuple[dict[str, int], dict[str, str], bool]:
    """Sizes from arrays or shape tuples, bound as a call binds them
    (:meth:`~polyc.jit.arguments.ArgumentBinder.sizes_of`): ``(sizes, where each came
    from, all arrays?)``."""
    operator.binder.check_count(len(args))
    shapes, arrays = [], True
    for tensor, arg in zip(operator.ir.inputs, args):
        if tensor.rank == 0:
            shapes.append(None)
        elif isinstance(arg, (tuple, list)):
            if not all(isinstance(n, numbers.Integral) and n >= 0 for n in arg):
                raise ArgumentError(f"{tensor.name}: a shape must be a tuple of non-negative "
                                    f"integers, not {arg!r}")
            shapes.append(tuple(int(n) for n in arg))
            arrays = False
        elif hasattr(arg, "shape"):
            shapes.append(tuple(int(n) for n in arg.shape))
        else:
            raise ArgumentError(f"{tensor.name}: expected an array or a shape tuple, not "
                                f"{type(arg).__name__}")
    sizes, origins = operator.binder.sizes_of(tuple(shapes))
    return sizes, origins, arrays


# ----------------------------------------------------------------- explain


def explain(operator, args=()) -> Explanation:
    """All stages of ``operator``; ``args``: arrays (compiles) or shape tuples (does not)."""
    from polyc.explore.graph import dependence_graph
    from polyc.explore.schedule_view import summarize_schedule

    op = operator.ir
    chunked = any(hasattr(arg, "__dask_graph__") for arg in args)
    if chunked:  # first: it checks the dask arrays (unknown chunk sizes, dtypes)
        from polyc.dask import plan

        dask_plan = plan(operator, *args)
    sizes, origins, arrays = bind_sizes(operator, tuple(args)) if args else (None, None, False)
    arrays = arrays and not chunked  # dask arrays give sizes; nothing is compiled
    compilation = operator.compilation()
    kernel = operator.compile(*args) if args and arrays else None
    texts = stage_texts(compilation, sizes)
    summary = summarize_schedule(compilation.schedule, compilation.program)
    graph = dependence_graph(compilation)
    space, space_note = _iteration_space(compilation, sizes)

    source = op.source.text if op.source is not None else to_tc(op)
    language = "tc" if "{" in source else "python"   # a TC def always has a { body }
    sections = [
        Section("source", TITLES["source"], (Part(source.strip("\n"), language),)),
        Section("ir", TITLES["ir"], (Part(texts["ir"], "tc"),
                                     *_rewrite_parts(op, compilation.op))),
        Section("shapes", TITLES["shapes"], (Part(shapes_text(op, sizes, origins)),)),
        Section("domains", TITLES["domains"], (Part(texts["domains"], "isl"),)),
        Section("deps", TITLES["deps"], _dependence_parts(texts["deps"], graph)),
        Section("graph", TITLES["graph"], (Part(str(graph), svg=graph.svg),)),
        Section("fusion", TITLES["fusion"], (Part(texts["fusion"]),)),
        Section("schedule", TITLES["schedule"], (
            Part(summary.outline or "(no bands)", "schedule",
                 label="bands, outermost first, with the marks above them"),
            *_dropped_copies(compilation),
            Part(texts["schedule"], "yaml", label="isl schedule tree", collapsed=True))),
        Section("space", TITLES["space"],
                (Part(str(space), svg=space.svg),) if space is not None
                else (Part(space_note),)),
        Section("ast", TITLES["ast"], (Part(texts["ast"], "c"),)),
        Section("c", TITLES["c"], _c_parts(texts["c"], compilation.c_source.entry)),
    ]
    stats = _statistics(compilation, kernel, args and not arrays)
    if kernel is not None:
        stats.append("calls: " + launcher_module(operator.options).describe())
    stats.append("options: " + compilation.options.summary())
    stats.append(f"machine: {compilation.options.machine}")
    stats.append("derived: " + rules.summary(compilation.options.machine))
    sections.append(Section("stats", TITLES["stats"], (Part("\n".join(stats)),)))
    if chunked:
        sections.append(Section("dask", TITLES["dask"], (Part(str(dask_plan)),)))

    count = len(compilation.program.statements)
    brief = [f"{count} polyhedral statement{'s' if count != 1 else ''}", summary.brief(),
             f"polyc {1000 * sum(compilation.seconds.values()):.0f} ms"]
    if kernel is not None:
        brief.append(f"C compiler: {compiler_text(kernel)}")
    return Explanation(op.name, tuple(sections), sizes, "; ".join(brief), graph, space,
                       compilation, kernel)


def _rewrite_parts(written: ir.Op, compiled: ir.Op) -> tuple[Part, ...]:
    """The statements the canonical form rewrote, before and after: each written
    statement and the compiled statements named after it, where they differ
    (:mod:`polyc.rewrite.split_selects`, :mod:`polyc.rewrite.redundant_bounds`,
    :mod:`polyc.poly.redundant_stores`,
    :mod:`polyc.rewrite.merged_updates`, :mod:`polyc.rewrite.read_once`,
    :mod:`polyc.rewrite.invariant_factors`,
    :mod:`polyc.rewrite.common_values`, :mod:`polyc.rewrite.merged_indices`;
    ``canonicalize=False`` keeps the spelling)."""
    lines = []
    for statement in written.statements:
        became = [s for s in compiled.statements
                  if s.name == statement.name or s.name.startswith(statement.name + "_")]
        if became == [statement]:
            continue
        lines.append(f"{statement.name}: {statement_to_tc(statement)}")
        merged = next((s.name for s in compiled.statements if s.tensor == statement.tensor
                       and s.name != statement.name and statement.rhs in ir.walk(s.rhs)),
                      None)
        readers = [s.name for s in written.statements if statement.tensor in s.tensors_read]
        if not became and merged is not None:
            lines.append(f"  → gone: merged into the statement {merged} of its element "
                         f"(rewrite/merged_updates)")
        elif not became and statement.tensor not in compiled.tensors and len(readers) == 1:
            lines.append(f"  → gone: its value substituted into {readers[0]}, the statement "
                         f"that reads each element once (rewrite/read_once)")
        elif not became and statement.tensor not in compiled.tensors and readers:
            lines.append(f"  → gone: its value, cheap to compute, substituted into "
                         f"{', '.join(readers)}, the statements that read it "
                         f"(rewrite/read_once)")
        elif not became:
            lines.append("  → gone: a select its readers now split (rewrite/split_selects), "
                         "or a store of what the elements held (poly/redundant_stores)")
        lines += [("  → " if k == 0 else "    ") + statement_to_tc(s)
                  for k, s in enumerate(became)]
    if not lines:
        return ()
    return (Part("\n".join(lines), "tc",
                 label="rewritten to a canonical form: selects on the indices split into "
                       "domains, bounds that never bind dropped, "
                       "updates of an element merged into one statement, "
                       "temporaries read once or cheap substituted into their readers, "
                       "invariant factors and divisors scale the finished sum, "
                       "values two statements compute alike are computed once, "
                       "divisions by a value a loop does not change multiply by its "
                       "reciprocal, "
                       "indices that move together merged into one "
                       "(canonicalize=False keeps the spelling)"),)


def _dropped_copies(compilation) -> tuple[Part, ...]:
    """The layout copies dropped after scheduling (:mod:`polyc.scheduling.packed_copies`)."""
    dropped = compilation.copies_in_panels
    if dropped is None:
        return ()
    return (Part(dropped.describe(), "tc",
                 label="layout copies that only packed panels read, dropped (the schedule "
                       "proven legal without them)"),)


def _dependence_parts(deps_text: str, graph) -> tuple[Part, ...]:
    parts = [Part(deps_text, "isl", label="relations (flow: read after write; false: write "
                                          "after read, write after write)")]
    distances = [f"{e.kind:5} {e.source} -> {e.sink}: {e.vector}  {e.distance}"
                 for e in graph.edges if e.distance]
    if distances:
        parts.append(Part("\n".join(distances), "isl",
                          label="distances sink - source (statements with as many dimensions)"))
    return tuple(parts)


def _c_parts(text: str, entry: str) -> tuple[Part, ...]:
    """The translation unit for terminals; in HTML the kernel first, the helpers folded."""
    from polyc.codegen.translation_unit import kernel_code

    try:
        kernel = kernel_code(text)
    except ValueError:
        return (Part(text, "c"),)
    return (Part(text, "c", show="text"),
            Part(kernel, "c", label=f"the kernel: {entry}", show="html"),
            Part(text[:len(text) - len(kernel)].rstrip("\n"), "c",
                 label="before the kernel: header and helpers", collapsed=True, show="html"))


def _iteration_space(compilation, sizes):
    """The picture of the first 2-D statement, with tiles that fit the picture."""
    import islpy as isl

    from polyc.errors import InternalError
    from polyc.explore.iteration_space import DEFAULT_EXTENT, iteration_space, picture_sizes

    known = {n: min(v, DEFAULT_EXTENT) for n, v in (sizes or {}).items() if v > 0}
    values = picture_sizes(compilation.op, known)
    try:
        space = iteration_space(compilation, sizes=values)
    except (ValueError, isl.Error) as error:
        return None, f"(no picture: {error})"
    if space.tile_sizes and len(set(space.tiles)) == 1:
        # The real tiles are larger than the picture: show the tiles polyc picks for a
        # small cache instead (the picture says so).
        try:
            space = iteration_space(compilation, sizes=values, l2_bytes=2048)
        except (ValueError, isl.Error, InternalError):
            pass
    return space, ""


def compiler_text(kernel) -> str:
    """``812 ms (cache miss)`` or ``not run (cache hit on disk)``."""
    if kernel.cache_hit == "miss":
        return f"{kernel.compile_seconds * 1000:.0f} ms (cache miss)"
    where = {"disk": "on disk", "memory": "in memory"}.get(kernel.cache_hit, kernel.cache_hit)
    return f"not run (cache hit {where})"


def _statistics(compilation, kernel, shapes_only: bool) -> list[str]:
    seconds = compilation.seconds
    lines = [f"polyc: {1000 * sum(seconds.values()):.1f} ms ("
             + ", ".join(f"{k} {1000 * v:.1f}" for k, v in seconds.items()) + ")"]
    if kernel is not None:
        lines.append(f"C compiler: {compiler_text(kernel)}")
        lines.append(f"kernel: {kernel.so_path}")
    elif shapes_only:
        lines.append("C compiler: not run (shapes given; pass arrays to compile)")
    else:
        lines.append("C compiler: not run (pass arrays to compile)")
    return lines
