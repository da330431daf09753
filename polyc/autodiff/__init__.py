"""Automatic differentiation: the backward operator of a comprehension, as a comprehension.

:func:`~polyc.autodiff.adjoint.adjoint_op` derives it (reverse mode over the statements,
:mod:`~polyc.autodiff.derivatives` for each right-hand side, and
:mod:`~polyc.autodiff.inversion` to write each read's adjoint as a gather proven exact
by isl); ``polyc.grad`` checks and wraps it as an ordinary operator.
"""
from polyc.autodiff.adjoint import adjoint_op

__all__ = ["adjoint_op"]
