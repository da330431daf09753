"""Reading the loops of generated C in tests: the vector loops the schedule made, not
the loops over a reduction's partial results (polyc/codegen/vector_reductions.py: a
row's reduction keeps several vectors of partial sums, whose lanes a loop of its own
walks, runs the steps left over as a vector loop over the row's iterator into the
first lanes, and folds the lanes in loops of their own)."""
import re

_SIMD = re.compile(r"#pragma omp simd([^\n]*)\n\s*for \(int64_t (\w+)")


def vector_loops(text: str) -> list[str]:
    """The bodies of the C's SIMD loops over the schedule's iterators, one string each
    (a reduction kept in partial results: the loop of its steps left over)."""
    bodies = []
    for pragma in _SIMD.finditer(text):
        if pragma.group(2) != "polyc_lane":
            bodies.append(_body(text, pragma.end()))
    return bodies


_ACCUMULATOR_UPDATE = re.compile(r"\b(polyc_acc\d*|polyc_part\d+)(?:\[[^\]]*\])? = ")


def accumulators(body: str) -> set[str]:
    """The reduction accumulators a vector loop's ``body`` updates: scalar ones
    (``polyc_acc0``) and arrays of partial results (``polyc_part0``)."""
    return set(_ACCUMULATOR_UPDATE.findall(body))


_PART_UPDATE = re.compile(r"\b(polyc_part\d+)\[\w+ - polyc_from\] = ")


def reduction_loops(text: str) -> list[tuple[str, ...]]:
    """The accumulators of each vector reduction loop the schedule made, in order: the
    names in its OpenMP reduction clauses (``polyc_acc0``), or the arrays of partial
    results its body updates (``polyc_part0``: a reduction kept in chains, seen at its
    loop of the steps left over)."""
    found = []
    for pragma in _SIMD.finditer(text):
        if pragma.group(2) == "polyc_lane":
            continue
        if "reduction(" in pragma.group(1):
            found.append(tuple(name.strip() for names in re.findall(
                r"reduction\([^:]*:([^)]*)\)", pragma.group(1)) for name in names.split(",")))
        elif parts := sorted(set(_PART_UPDATE.findall(_body(text, pragma.end())))):
            found.append(tuple(parts))
    return found


def _body(text: str, after: int) -> str:
    """The braced block that starts first after position ``after`` of ``text``."""
    start = text.index("{", after)
    depth, end = 0, start
    for end in range(start, len(text)):
        depth += {"{": 1, "}": -1}.get(text[end], 0)
        if depth == 0:
            break
    return text[start:end + 1]
