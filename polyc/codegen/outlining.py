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

Regions and blocks that are the same code up to the names of their parameters and
locals (the two products of ``G = (A B) (C D)``, a gradient's pairs of transposed
products) are one function, called with each one's arguments: the C compiler merges
such functions itself (gcc's identical code folding), but only within one translation
unit, and :mod:`polyc.jit.units` puts equal regions, being of equal size, in different
units (measurements: benchmarks/README.md, "Design measurements").
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
_CALLED = re.compile(r"\b([A-Za-z_]\w*)\s*\(")
# A declaration in generated C: a scalar type, maybe a pointer, then the declared name.
_DECLARED = re.compile(r"\b(?:u?int(?:8|16|32|64)_t|float|double|_Bool|int|char)\s*"
                       r"(?:\*\s*(?:restrict\s+)?)?([A-Za-z_]\w*)")
_KEYWORDS = frozenset({"for", "if", "else", "const", "restrict", "sizeof", "return",
                       "_Alignas", "while", "do", "break", "continue", "void", "float",
                       "double", "_Bool", "int", "char", "int8_t", "int16_t", "int32_t",
                       "int64_t", "uint8_t", "uint16_t", "uint32_t", "uint64_t"})
_ITERATOR = re.compile(r"\bc\d+\b")  # isl's loop iterators (user names never look so)
_DECLARED_ITERATOR = re.compile(r"\bint64_t\s+(c\d+)\b")
STATUS_POINTER = "polyc_status_at"
REGION_QUALIFIERS = "static __attribute__((noinline)) void"
BLOCK_QUALIFIERS = REGION_QUALIFIERS
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
    # (kind, its text up to the names of its parameters and locals) -> the function's name
    _named: dict = field(default_factory=dict)

    def region(self, body, sharing: str | None = None):
        """The call site of a parallel region running ``body``; ``sharing``: the clauses
        of an ``omp for`` over ``body`` (a loop), for what was ``omp parallel for``."""
        if sharing is not None:
            body = cgen.Module([cgen.Pragma(f"omp for{sharing} nowait"), body])
        text = str(body)
        parameters = self._parameters(text)
        # In a block of its own: what the region declares may reuse a parameter's name.
        inner = body if isinstance(body, cgen.Block) else cgen.Block([body])
        name = self._function(
            "region", REGION_QUALIFIERS,
            [cgen.Value("int *", STATUS_POINTER)]
            + [cgen.Value(ctype, variable) for variable, ctype in parameters],
            cgen.Block(streaming.fenced([inner], text)))
        arguments = ", ".join(["&polyc_status"] + [variable for variable, _ in parameters])
        call = cgen.Statement(f"{name}({arguments})")
        return cgen.If(f"polyc_work >= {PARALLEL_WORK_THRESHOLD}",
                       cgen.Block([cgen.Pragma("omp parallel"), call]), cgen.Block([call]))

    def block(self, code, types: dict[str, str]):
        """The call of a function of its own running ``code`` (an edge register block,
        :mod:`polyc.codegen.register_block`), or ``code`` itself where it names a
        variable of the code around it whose type is not known here (a thread's private
        accumulator, a contracted temporary), or sets the kernel's status or streams.
        ``types``: the C types of variables declared around it besides the kernel's
        and the loop iterators (the block's trip counts and offsets, its packed panels).

        gcc compiles one variant of a block differently as others join it in a function
        (their loop invariants hoisted around all of them take the registers of the
        block's row pointers): a convolution whose rows were all half-width blocks ran
        13% slower once quarter-width variants were emitted beside them. In functions of
        their own, each is compiled alone; the call costs nothing beside the reduction it
        runs (measurements: benchmarks/README.md, "Design measurements")."""
        text = str(code)
        if "polyc_status" in text or streaming.STREAM_CALL in text:
            return code
        scanned = "\n".join(line for line in text.splitlines()
                             if not line.lstrip().startswith("#"))
        named = (set(_IDENTIFIER.findall(scanned)) - set(_CALLED.findall(scanned))
                 - set(_DECLARED.findall(scanned)) - _KEYWORDS)
        known = {**self.variables.types, **types}
        parameters = []
        for name in sorted(named):
            if name in known:
                parameters.append((name, known[name]))
            elif _ITERATOR.fullmatch(name):
                parameters.append((name, "int64_t"))
            else:
                return code
        inner = code if isinstance(code, cgen.Block) else cgen.Block([code])
        name = self._function("block", BLOCK_QUALIFIERS,
                              [cgen.Value(ctype, variable) for variable, ctype in parameters],
                              inner)
        return cgen.Statement(f"{name}({', '.join(v for v, _ in parameters)})")

    def _function(self, kind: str, qualifiers: str, parameters: list, body) -> str:
        """The name of the function of ``kind`` (``region``, ``block``) with these
        parameters and body: a new one, numbered in turn, or the one emitted before whose
        text differs only in the names of its parameters and locals."""
        placeholder = f"{self.entry}_{kind}"
        function = cgen.FunctionBody(
            cgen.FunctionDeclaration(cgen.Value(qualifiers, placeholder), parameters), body)
        text = str(function)
        declared = {value.name for value in parameters} | set(_DECLARED.findall(text))
        key = (kind, _renamed_apart(text, declared))
        if key in self._named:
            return self._named[key]
        number = sum(made == kind for made, _ in self._named)  # of this kind so far
        name = self._named[key] = f"{placeholder}{number}"
        function.fdecl.subdecl.name = name
        self.functions.append(function)
        return name

    def _parameters(self, text: str) -> list[tuple[str, str]]:
        """``(name, C type)`` of the variables declared outside ``text`` that it names:
        kernel variables, and loop iterators it does not declare itself."""
        named = set(_IDENTIFIER.findall(text))
        known = [(name, ctype) for name, ctype in self.variables.types.items()
                 if name in named]
        inner = set(_DECLARED_ITERATOR.findall(text))
        around = sorted(set(_ITERATOR.findall(text)) - inner, key=lambda it: int(it[1:]))
        return known + [(iterator, "int64_t") for iterator in around]


def _renamed_apart(text: str, names: set[str]) -> str:
    """``text`` with each identifier of ``names`` replaced by its order of first
    appearance: two functions that give the same text compute the same thing (their
    types, constants, calls and structure are the same) and differ only in the names
    of their parameters and locals."""
    order: dict[str, str] = {}
    return _IDENTIFIER.sub(lambda m: order.setdefault(m.group(0), f"@{len(order)}")
                           if m.group(0) in names else m.group(0), text)
