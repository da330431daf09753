"""The C of a transposed copy's full sub-tiles, moved through vector registers.

Under a :class:`~polyc.scheduling.marks.TransposedBlock` mark
(:mod:`polyc.scheduling.transposed_blocks`) the two point loops of a copy
``dst(..) = src(..)`` become::

    if (<both loops run the block's size>) {
      <the addresses of the block's first element, and of the next row of each side>
      polyc_transpose_32_16_16(dst, ld, src, ls);
    } else {                                  (a partial sub-tile at an edge)
      <the same addresses>
      for (<blocks of the edge's side over each loop's whole multiples of it>)
        polyc_transpose_32_8_8(<the block's first element>, ld, <...>, ls);
      for (<the rows>) for (<the columns no block copied in that row>) <the copy>
    }

The helper loads ``lanes`` source rows as vectors, transposes them in registers
(``log2(lanes)`` rounds of two-source shuffles: round ``b`` swaps the off-diagonal
``b`` × ``b`` blocks of each ``2b`` × ``2b`` block) and stores the destination rows;
a block wider than a vector is done as its ``lanes`` × ``lanes`` sub-blocks, in a
loop. A sub-block's loads, shuffles and stores are written out one statement each, on
variables of their own: written as loops over its rows, they were left rolled by gcc
12 inside a large function (tbmm's region), its rows copied 16 bytes at a time
through an array on the stack, and the pack of tbmm's ``Y`` cost about 4 cycles an
element (tbmm 1.10–1.29× faster written out; benchmarks/README.md, "Design
measurements"). The shuffles are the compilers' vector extensions (gcc's
``__builtin_shuffle``, clang's ``__builtin_shufflevector``), not ``<immintrin.h>``
(see :mod:`polyc.codegen.streaming` for what that header costs); another compiler gets
the scalar loops. Row strides come from the addresses the statement's own index
expressions give one row further on, so any linearisation of either tensor works.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

import cgen
import islpy as isl

from polyc.codegen.ast_build import loop_iterator
from polyc.codegen.c_expr import c_type
from polyc.codegen.c_names import c_name
from polyc.codegen.isl_ast import exclusive_upper_bound, mentions
from polyc.lang import ir
from polyc.lang import types as ty
from polyc.scheduling.marks import TransposedBlock

if TYPE_CHECKING:
    from polyc.codegen.loop_nest import LoopNestEmitter, Scope


def helper_name(element_bytes: int, size: int, lanes: int) -> str:
    """The C helper that copies blocks of this shape (:func:`block_shape`)."""
    return f"polyc_transpose_{8 * element_bytes}_{size}_{lanes}"


def transposed_block(emitter: LoopNestEmitter, block: TransposedBlock, node: isl.AstNode,
                     depth: int | None, scope: Scope) -> TransposedCode | None:
    """The block's copy for the loops of ``node`` (the marked band at schedule
    ``depth``): a full block where its condition holds (its loops run whole), else the
    edge blocks and the elements around them; ``None`` where isl's loops are not the
    two point loops of the mark's statement with unit steps and bounds the inner loop
    does not take from the outer one."""
    if depth is None:
        return None
    loops = []
    while node.get_type() == isl.ast_node_type.for_:
        loops.append(node)
        node = node.for_get_body()
    if len(loops) != 2 or node.get_type() != isl.ast_node_type.user:
        return None
    stmt, bound = emitter.called(node.user_get_expr())
    along_src = loop_iterator(depth + block.src_member)
    along_dst = loop_iterator(depth + block.dst_member)
    iterators = [emitter.expr(loop.for_get_iterator()) for loop in loops]
    if stmt.name != block.statement or sorted(iterators) != sorted((along_src, along_dst)):
        return None
    starts, ends = {}, {}
    for loop, iterator in zip(loops, iterators):
        upper = exclusive_upper_bound(loop, iterator)
        if upper is None or emitter.expr(loop.for_get_inc()) != "1":
            return None
        starts[iterator], ends[iterator] = emitter.expr(loop.for_get_init()), \
            emitter.expr(upper)
    inner = loops[1]
    if mentions(inner.for_get_init(), iterators[0]) or mentions(
            exclusive_upper_bound(inner, iterators[1]), iterators[0]):
        return None
    statement = stmt.statement
    target = emitter.exprs.access(statement.tensor,
                                  tuple(ir.Index(ty.INT64, i) for i in statement.indices))
    source = emitter.exprs.expr(statement.rhs)
    element = c_type(emitter.program.op.tensor(statement.tensor).type)

    def at(offsets: dict[str, str], assignments: list[str]) -> cgen.Block:
        code = [cgen.Initializer(cgen.Value("const int64_t", it),
                                 f"{starts[it]} + {offsets.get(it, '0')}")
                for it in iterators]
        code += [cgen.Initializer(cgen.Value("const int64_t", c_name(index)),
                                  emitter.expr(bound[index])) for index in stmt.indices]
        return cgen.Block(code + [cgen.Statement(a) for a in assignments])

    def copied(size: int, lanes: int, offsets: dict[str, str]) -> list:
        """The block of ``size`` whose first element is ``offsets`` into the loops (none:
        the first element, whose addresses the strides' code holds)."""
        shape = (block.element_bytes, size, lanes)
        emitter.transposed_blocks.add(shape)
        moved = [at(offsets, [f"polyc_dst = &{target}", f"polyc_src = &{source}"])] \
            if offsets else []
        return moved + [cgen.Statement(f"{helper_name(*shape)}(polyc_dst, polyc_ld, "
                                       "polyc_src, polyc_ls)")]

    strides = [cgen.Statement(f"{element} *polyc_dst"),
               cgen.Statement(f"const {element} *polyc_src"),
               cgen.Statement("int64_t polyc_ld, polyc_ls"),
               at({}, [f"polyc_dst = &{target}", f"polyc_src = &{source}"]),
               at({along_src: "1"}, ["polyc_ld = &" + target + " - polyc_dst"]),
               at({along_dst: "1"}, ["polyc_ls = &" + source + " - polyc_src"])]
    full = cgen.Block(strides + copied(block.size, block.lanes, {}))
    condition = " && ".join(f"({ends[it]}) - ({starts[it]}) == {block.size}"
                            for it in iterators)
    if not block.edge:
        return TransposedCode(condition, full, None)
    # Edge blocks over the whole multiples of their side, then the elements around
    # them: the rows past the blocks' last whole, and in the others the columns past it.
    outer, inner_it = iterators
    edge = block.edge
    extents = [f"polyc_whole{k} = (({ends[it]}) - ({starts[it]})) / {edge} * {edge}"
               for k, it in enumerate(iterators)]
    blocks = cgen.For("int64_t polyc_b0 = 0", "polyc_b0 < polyc_whole0", f"polyc_b0 += {edge}",
                      cgen.For("int64_t polyc_b1 = 0", "polyc_b1 < polyc_whole1",
                               f"polyc_b1 += {edge}", cgen.Block(copied(
                                   edge, block.edge_lanes,
                                   {outer: "polyc_b0", inner_it: "polyc_b1"}))))
    first_column = (f"{outer} - ({starts[outer]}) < polyc_whole0 ? "
                    f"({starts[inner_it]}) + polyc_whole1 : {starts[inner_it]}")
    around = cgen.For(f"int64_t {outer} = {starts[outer]}", f"{outer} < {ends[outer]}",
                      f"{outer} += 1",
                      cgen.For(f"int64_t {inner_it} = {first_column}",
                               f"{inner_it} < {ends[inner_it]}", f"{inner_it} += 1",
                               emitter.user(node.user_get_expr(), scope)))
    edges = cgen.Block(strides + [cgen.Statement(f"const int64_t {', '.join(extents)}"),
                                  blocks, around])
    return TransposedCode(condition, full, edges)


@dataclass(frozen=True)
class TransposedCode:
    """A transposed copy's C: ``full`` where ``condition`` holds (the loops run a whole
    block), ``edges`` elsewhere (``None``: the loops as usual)."""

    condition: str
    full: cgen.Generable
    edges: cgen.Generable | None


def block_shape(block: TransposedBlock) -> tuple[int, int, int]:
    """What the helper a block calls depends on: element bytes, size, lanes."""
    return block.element_bytes, block.size, block.lanes


def helpers(shapes: set[tuple[int, int, int]]) -> str:
    """The C helpers of the blocks of these shapes (:func:`block_shape`)."""
    return "".join(_helper(*shape) for shape in sorted(shapes))


def _helper(element_bytes: int, size: int, lanes: int) -> str:
    element = "float" if element_bytes == 4 else "double"
    mask_element = "int" if element_bytes == 4 else "long long"
    name = helper_name(element_bytes, size, lanes)
    vector, mask = f"{name}_v", f"{name}_m"
    vector_bytes = lanes * element_bytes
    block = _straight_block(vector, mask, lanes)
    return f"""
/* Copies a {size} x {size} block: dst[c * ld + r] = src[r * ls + c]. */
#if defined(__GNUC__) || defined(__clang__)
#ifndef POLYC_SHUFFLE
#if defined(__clang__)
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shufflevector(a, b, __VA_ARGS__)
#else
#define POLYC_SHUFFLE(mask_type, a, b, ...) __builtin_shuffle(a, b, (mask_type){{__VA_ARGS__}})
#endif
#endif
typedef {element} {vector} __attribute__((vector_size({vector_bytes})));
typedef {mask_element} {mask} __attribute__((vector_size({vector_bytes})));
static inline void {name}({element} *restrict dst, int64_t ld,
                          const {element} *restrict src, int64_t ls) {{
  for (int bi = 0; bi < {size}; bi += {lanes})
  for (int bj = 0; bj < {size}; bj += {lanes}) {block}}}
#else
static inline void {name}({element} *restrict dst, int64_t ld,
                          const {element} *restrict src, int64_t ls) {{
  for (int c = 0; c < {size}; c++)
    for (int r = 0; r < {size}; r++) dst[c * ld + r] = src[r * ls + c];
}}
#endif
"""


def _straight_block(vector: str, mask: str, lanes: int) -> str:
    """The helper's ``lanes`` × ``lanes`` sub-block at ``(bi, bj)``, every load, shuffle
    and store a statement of its own on a variable of its own."""
    lines = [f"    {vector} {', '.join(f'r{i}' for i in range(lanes))};"]
    lines += [f"    memcpy(&r{i}, src + (bj + {i}) * ls + bi, sizeof r{i});"
              for i in range(lanes)]
    width = lanes // 2
    while width:
        # lane k of the first result, then of the second: from a (k) or b (lanes + k)
        low = ", ".join(str(lanes + k - width if k & width else k) for k in range(lanes))
        high = ", ".join(str(lanes + k if k & width else k + width) for k in range(lanes))
        for i in range(lanes):
            if not i & width:
                j = i + width
                lines.append(f"    {{ {vector} a = r{i}, b = r{j}; "
                             f"r{i} = POLYC_SHUFFLE({mask}, a, b, {low}); "
                             f"r{j} = POLYC_SHUFFLE({mask}, a, b, {high}); }}")
        width //= 2
    lines += [f"    memcpy(dst + (bi + {i}) * ld + bj, &r{i}, sizeof r{i});"
              for i in range(lanes)]
    return "{\n" + "\n".join(lines) + "\n  }\n"
