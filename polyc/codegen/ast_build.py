"""Schedule tree → isl AST (loops, conditions, statement calls, marks).

The AST is built in the sizes' context (sizes non-negative, preconditions
hold), so isl drops conditions that the context already guarantees.
"""
from __future__ import annotations

import islpy as isl

from polyc.poly.program import PolyProgram


def build_ast(program: PolyProgram, tree: isl.Schedule) -> isl.AstNode:
    build = isl.AstBuild.from_context(program.context)
    return build.node_from_schedule(tree)


def ast_children(node: isl.AstNode) -> list[isl.AstNode]:
    """The nodes directly under an AST node: a block's statements, a loop's body, an
    if's branches, a mark's node (none under a statement call)."""
    kind = node.get_type()
    if kind == isl.ast_node_type.block:
        children = node.block_get_children()
        return [children.get_at(k) for k in range(len(children))]
    if kind == isl.ast_node_type.for_:
        return [node.for_get_body()]
    if kind == isl.ast_node_type.if_:
        return [node.if_get_then_node()] + (
            [node.if_get_else_node()] if node.if_has_else_node() else [])
    if kind == isl.ast_node_type.mark:
        return [node.mark_get_node()]
    return []


def ast_text(node: isl.AstNode) -> str:
    """isl's C-like rendering of the AST, for explain() and debugging."""
    return node.to_C_str()
