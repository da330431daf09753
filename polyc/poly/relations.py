"""isl idioms the scheduling passes share, each written once."""
from __future__ import annotations

import islpy as isl


def same_image(relation: isl.UnionMap) -> isl.UnionMap:
    """The pairs of instances ``relation`` maps to one value: with a schedule prefix,
    the instances that share the outer iterations; with accesses, those that touch one
    element; with a band member, those in one iteration of its loop."""
    return relation.apply_range(relation.reverse())


def affine_inputs(value: isl.PwAff) -> frozenset[int]:
    """The input dimensions ``value``'s expressions use (not its domain's constraints,
    which ``involves_dims`` counts too)."""
    return frozenset(k for _, aff in value.get_pieces()
                     for k in range(aff.dim(isl.dim_type.in_))
                     if not aff.get_coefficient_val(isl.dim_type.in_, k).is_zero())
