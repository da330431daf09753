"""The front end: TC text or a syntax tree to checked IR (parse, semantic analysis,
range inference, the isl proofs that every access is in bounds and that nothing
unwritten is read or returned). Defining an operator
needs only this; the optimising stages (:mod:`polyc.compiler`) load on first compile.
"""
from __future__ import annotations

from polyc.lang import ast as syntax
from polyc.lang import ir
from polyc.lang.parser import parse
from polyc.lang.sema import analyze
from polyc.poly.bounds import prove_accesses_in_bounds
from polyc.poly.coverage import prove_elements_written


def check(program: syntax.Program, name: str | None = None) -> ir.Op:
    """Syntax tree → IR with the preconditions its accesses need."""
    return prove_elements_written(prove_accesses_in_bounds(analyze(program, name)))


def frontend(source: str, name: str | None = None, filename: str = "<string>") -> ir.Op:
    """TC text → checked IR."""
    return check(parse(source, filename=filename), name)
