"""Stores of a constant every written element already holds are dropped
(polyc.poly.redundant_stores), and only those: the operator computes the same."""
import numpy as np
import pytest

import polyc
from polyc.compiler import frontend
from polyc.poly.redundant_stores import drop_redundant_stores
from polyc.rewrite.split_selects import split_selects


def _kept(source: str) -> list[str]:
    op = split_selects(frontend(source))
    return [line.strip() for line in str(drop_redundant_stores(op)).splitlines()[1:-1]]


def test_zeros_over_the_zeros_of_an_initialisation_are_dropped():
    assert _kept("def f(float(N, M) A) -> (D) {\n D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0\n"
                 " D(i, j) = j <= i ? 2.0 * D(i, j) : 0.0\n}") == [
        "D(i, j) +=! A(i, k) * A(j, k) where i in 0:N, j in 0:min(N, i + 1), k in 0:M",
        "D(i, j) = 2.0 * D(i, j) where i in 0:N, j in 0:min(N, i + 1)"]


def test_ones_over_a_product_initialisation_and_a_store_over_a_store_are_dropped():
    assert _kept("def f(float(N, M) A) -> (P, Z) {\n P(i) *=! A(i, k) where k in 0:i\n"
                 " P(i) = 1.0 where i in 0:1\n Z(i) = 3.0 where i in 0:N\n"
                 " Z(i) = 3.0 where i in 1:N\n}") == [
        "P(i) *=! A(i, k) where i in 0:N, k in 0:i", "Z(i) = 3.0 where i in 0:N"]


@pytest.mark.parametrize("source", [
    # the reduction writes the elements in between: they no longer hold 0
    "def f(float(N, M) A) -> (D) { D(i) +=! A(i, k)\n D(i) = 0.0 }",
    # another constant, and zero of the other sign
    "def f(float(N, M) A) -> (D) { D(i, j) +=! A(i, k) where j in 0:i + 1\n"
    " D(i, j) = 1.0 where j in i + 1:N }",
    "def f(float(N, M) A) -> (D) { D(i, j) +=! A(i, k) where j in 0:i + 1\n"
    " D(i, j) = -0.0 where j in i + 1:N }",
    # only part of what it writes holds 0 (the diagonal was summed into)
    "def f(float(N, M) A) -> (D) { D(i, j) +=! A(i, k) where j in 0:i + 1\n"
    " D(i, j) = 0.0 where j in i:N }",
    # a max initialisation holds the lowest value, not 0
    "def f(float(N, M) A) -> (D) { D(i, j) max=! A(i, k) where j in 0:i + 1\n"
    " D(i, j) = 0.0 where j in i + 1:N }",
])
def test_stores_that_change_an_element_stay(source):
    op = frontend(source)
    assert drop_redundant_stores(op) == op


def test_the_dropped_store_changes_no_result():
    source = ("def f(float(N, M) A) -> (D) {\n D(i, j) +=! j <= i ? A(i, k) * A(j, k) : 0.0\n"
              " D(i, j) = j <= i ? 2.0 * D(i, j) : 0.0\n}")
    A = np.random.default_rng(0).standard_normal((9, 4)).astype(np.float32)
    want = np.tril(2.0 * A.astype(np.float64) @ A.T.astype(np.float64))
    for canonicalize in (True, False):
        got = polyc.define(source, canonicalize=canonicalize)(A)
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-5)
