"""isl idioms the scheduling passes share, each written once."""
from __future__ import annotations

import islpy as isl


def same_image(relation: isl.UnionMap) -> isl.UnionMap:
    """The pairs of instances ``relation`` maps to one value: with a schedule prefix,
    the instances that share the outer iterations; with accesses, those that touch one
    element; with a band member, those in one iteration of its loop."""
    return relation.apply_range(relation.reverse())
