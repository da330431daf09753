"""polyc: a polyhedral tensor compiler for Python.

    import polyc
    matmul = polyc.define('''
        def matmul(float(M, K) A, float(K, N) B) -> (C) {
          C(m, n) +=! A(m, k) * B(k, n)
        }''')
    C = matmul(A, B)
    matmul.explain(A, B)                  # every stage; pictures in Jupyter
    polyc.compare(matmul, (A, B))         # fused / unfused / unoptimised side by side
    dA, dB = polyc.grad(matmul)(A, B, dC)  # the backward operator, derived
"""
from polyc.api import GradWithResiduals, Operator, define, grad, grad_with_residuals, op
from polyc.errors import (ArgumentError, CompileError, CompileTimeout, ConfigurationError,
                          InternalError, ParseError, PolycError, SemanticError)
from polyc.lang.pyspelling import (bool_, exists, f16, f32, f64, i8, i16, i32, i64, max, min,
                                   prod, sum, u8, u16, u32, u64, where)
from polyc.machine import NAMED_MACHINES, Machine
from polyc.options import Options
from polyc.version import __version__

__all__ = [
    "ArgumentError", "CompileError", "CompileTimeout", "ConfigurationError",
    "GradWithResiduals", "InternalError",
    "Machine", "NAMED_MACHINES", "Operator", "Options", "ParseError",
    "PolycError", "SemanticError", "__version__", "bool_", "compare", "define", "exists",
    "f16", "f32", "f64", "grad", "grad_with_residuals", "i8", "i16", "i32", "i64", "max", "min",
    "op", "prod", "sum", "u8", "to_torch", "u16", "u32", "u64", "where",
]


def __getattr__(name: str):
    """``polyc.compare`` loads the exploring tools (and the compiler) on first use."""
    if name == "compare":
        from polyc.explore.compare import compare

        return compare
    if name == "to_torch":  # imports torch, on first use
        from polyc.torch_ops import to_torch

        return to_torch
    raise AttributeError(f"module 'polyc' has no attribute {name!r}")
