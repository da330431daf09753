"""Schedule tree → isl AST (loops, conditions, statement calls, marks).

The AST is built in the sizes' context (sizes non-negative, preconditions
hold), so isl drops conditions that the context already guarantees.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.program import PolyProgram
from polyc.scheduling.marks import with_band_depths


def build_ast(program: PolyProgram, tree: isl.Schedule) -> isl.AstNode:
    build = isl.AstBuild.from_context(program.context)
    return build.node_from_schedule(with_band_depths(tree))


def loop_iterator(depth: int) -> str:
    """The iterator of the loop of schedule dimension ``depth`` (isl's default name), as in C:
    a tile loop's is the tile's origin."""
    return f"c{depth}"


def ast_text(node: isl.AstNode) -> str:
    """isl's C-like rendering of the AST, for explain() and debugging."""
    return node.to_C_str()
