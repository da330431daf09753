"""Parallel regions outlined into functions, so that a small call never starts OpenMP.

``#pragma omp parallel if(work >= threshold)`` still forks and joins a team of one
thread when the condition is false: libgomp builds and frees a team (about 0.5 µs,
as long as a whole 4-element add). So every region's code becomes a static
function whose work-sharing constructs (``omp for``, ``omp critical``) are
orphaned, and the kernel calls it either inside a parallel region or directly::

    static void polyc_add_region0(int *polyc_status_at, int64_t N,
                                  const float *restrict a, float *restrict c)
    { #pragma omp for schedule(static) nowait
      for (int64_t c0 = 0; c0 < N; c0 += 1) ... }

    if (polyc_work >= 32768) {
      #pragma omp parallel
      polyc_add_region0(&polyc_status, N, a, c);
    } else {
      polyc_add_region0(&polyc_status, N, a, c);
    }

Called directly, an orphaned ``omp for`` runs every iteration on the calling thread
(OpenMP binds it to a team of one); inside the region it shares them out as
before. The function takes, by value, the kernel variables its code names: sizes,
tensors, temporaries, locals declared around the region (:class:`Variables`) and
the iterators of the loops around it; the kernel's status through a pointer
(``polyc_status`` is ``(*polyc_status_at)`` in the outlined functions), so that
threads set it as they did. ``noinline`` keeps the C compiler from copying the
region into both branches.
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field

import cgen

from polyc.codegen import streaming
from polyc.codegen.c_names import c_name, entry_parameters
from polyc.lang import ir
from polyc.machine.rules import PARALLEL_WORK_THRESHOLD

_IDENTIFIER = re.compile(r"\b[A-Za-z_]\w*\b")
_ITERATOR = re.compile(r"\bc\d+\b")  # isl's loop iterators (user names never look so)
_DECLARED_ITERATOR = re.compile(r"\bint64_t\s+(c\d+)\b")
STATUS_POINTER = "polyc_status_at"
REGION_QUALIFIERS = "static __attribute__((noinline)) void"
# Around the outlined functions: their code sets the kernel's status through the pointer.
STATUS_BEFORE = f"#define polyc_status (*{STATUS_POINTER})"
STATUS_AFTER = "#undef polyc_status"


@dataclass
class Variables:
    """The kernel's variables that region code may name, with their C types: the
    entry point's parameters and temporaries, and locals declared around regions."""

    types: dict[str, str] = field(default_factory=dict)

    def declare(self, name: str, ctype: str) -> None:
        self.types[name] = ctype


def kernel_variables(op: ir.Op, contractions) -> Variables:
    """The entry point's parameters, its work and the temporaries it allocates (the
    contracted ones are declared where they are used)."""
    variables = Variables({name: ctype for ctype, name in entry_parameters(op)})
    variables.declare("polyc_work", "int64_t")
    for derived in op.derived_sizes:
        variables.declare(c_name(derived.name), "int64_t")
    for tensor in op.temporaries:
        if tensor.name not in contractions:
            variables.declare(c_name(tensor.name), f"{tensor.type.c_type} *restrict")
    return variables


@dataclass
class Outliner:
    """Makes the outlined functions of one kernel (:meth:`region`) and keeps them for the
    translation unit (:attr:`functions`)."""

    entry: str
    variables: Variables
    functions: list = field(default_factory=list)

    def region(self, body, sharing: str | None = None):
        """The call site of a parallel region running ``body``; ``sharing``: the clauses
        of an ``omp for`` over ``body`` (a loop), for what was ``omp parallel for``."""
        if sharing is not None:
            body = cgen.Module([cgen.Pragma(f"omp for{sharing} nowait"), body])
        text = str(body)
        parameters = self._parameters(text)
        name = f"{self.entry}_region{len(self.functions)}"
        declaration = cgen.FunctionDeclaration(
            cgen.Value(REGION_QUALIFIERS, name),
            [cgen.Value("int *", STATUS_POINTER)]
            + [cgen.Value(ctype, variable) for variable, ctype in parameters])
        # In a block of its own: what the region declares may reuse a parameter's name.
        inner = body if isinstance(body, cgen.Block) else cgen.Block([body])
        self.functions.append(cgen.FunctionBody(declaration, cgen.Block(
            streaming.fenced([inner], text))))
        arguments = ", ".join(["&polyc_status"] + [variable for variable, _ in parameters])
        call = cgen.Statement(f"{name}({arguments})")
        return cgen.If(f"polyc_work >= {PARALLEL_WORK_THRESHOLD}",
                       cgen.Block([cgen.Pragma("omp parallel"), call]), cgen.Block([call]))

    def _parameters(self, text: str) -> list[tuple[str, str]]:
        """``(name, C type)`` of the variables declared outside ``text`` that it names:
        kernel variables, and loop iterators it does not declare itself."""
        named = set(_IDENTIFIER.findall(text))
        known = [(name, ctype) for name, ctype in self.variables.types.items()
                 if name in named]
        inner = set(_DECLARED_ITERATOR.findall(text))
        around = sorted(set(_ITERATOR.findall(text)) - inner, key=lambda it: int(it[1:]))
        return known + [(iterator, "int64_t") for iterator in around]
