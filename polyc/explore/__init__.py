"""Exploring what polyc did: explanations, pictures and comparisons.

    polyc.explore.dependence_graph(op)            # statements and dependences (SVG)
    polyc.explore.iteration_space(op, l2_bytes=2048)   # points, tiles, execution order (SVG)
    polyc.explore.summarize_schedule(op.compilation().schedule, op.compilation().program)
    polyc.compare(op, args)                       # variants side by side: schedule, time

``op.explain(*arrays_or_shapes)`` (:mod:`polyc.explain`) puts them all together.
Pictures are SVG written by polyc itself: they render inline in Jupyter, print
as text in a terminal and save with ``.save("file.svg")``.
"""
from polyc.explore.compare import Comparison, Variant, compare
from polyc.explore.graph import DependenceGraph, Edge, dependence_graph
from polyc.explore.iteration_space import IterationSpace, iteration_space
from polyc.explore.schedule_view import ScheduleSummary, summarize_schedule

__all__ = ["Comparison", "DependenceGraph", "Edge", "IterationSpace", "ScheduleSummary",
           "Variant", "compare", "dependence_graph", "iteration_space", "summarize_schedule"]
