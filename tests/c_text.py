"""Reading the loops of generated C in tests: the vector loops the schedule made, not
the loops over a reduction's partial results (polyc/codegen/vector_reductions.py: a
row's reduction keeps several vectors of partial sums, whose lanes a loop of its own
walks, and runs the steps left over as the plain vector loop)."""
import re

_SIMD = re.compile(r"#pragma omp simd([^\n]*)\n\s*for \(int64_t (\w+)")


def vector_loops(text: str) -> list[str]:
    """The bodies of the C's SIMD loops over the schedule's iterators, one string each
    (a reduction kept in partial results: the loop of its steps left over)."""
    bodies = []
    for pragma in _SIMD.finditer(text):
        if pragma.group(2) == "polyc_lane":
            continue
        start = text.index("{", pragma.end())
        depth, end = 0, start
        for end in range(start, len(text)):
            depth += {"{": 1, "}": -1}.get(text[end], 0)
            if depth == 0:
                break
        bodies.append(text[start:end + 1])
    return bodies


def reduction_pragmas(text: str) -> list[str]:
    """The clauses of the C's vector reduction loops (``reduction(+:polyc_acc)``), one
    per reduction loop the schedule made, not the folds of partial results."""
    return [pragma.group(1).strip() for pragma in _SIMD.finditer(text)
            if pragma.group(2) != "polyc_lane" and "reduction(" in pragma.group(1)]
