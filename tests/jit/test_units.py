"""Kernels with several large parallel regions compile as several translation units at
once (polyc/jit/units.py), and run the same."""
import ctypes
import re

import numpy as np
import pytest

import polyc
from polyc.jit import units
from polyc.jit.build import build_shared_object
from polyc.options import Options

TWO_PRODUCTS = """def mm2(float(NI, NK) A, float(NK, NJ) B, float(NJ, NL) C) -> (E) {
  tmp(i, j) +=! A(i, k) * B(k, j)
  E(i, l) +=! tmp(i, j) * C(j, l)
}"""
ONE_PRODUCT = "def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"


def c_source(source: str) -> str:
    return polyc.define(source).compilation().c_source.text


def regions(text: str) -> list[str]:
    """The regions ``text`` defines (not those it declares)."""
    return re.findall(r"void (polyc_\w+_region\d+)\([^;{]*\)\n\{", text)


def test_large_regions_go_to_units_of_their_own():
    text = c_source(TWO_PRODUCTS)
    split = units.compile_units(text, cores=2)
    assert len(split) == 3 and split[0].lines > units.MIN_REGION_LINES
    *region_units, main = split
    defined = [name for unit in region_units for name in regions(unit.text)]
    assert sorted(defined) == sorted(set(regions(text)))            # each region once
    for unit in region_units:
        assert "static __attribute__((noinline)) void" not in unit.text
        assert 'visibility("hidden")' in unit.text and "int polyc_mm2(" not in unit.text
    assert "int polyc_mm2(" in main.text and "int polyc_mm2_launch(" in main.text
    assert all(f"{name}(int * polyc_status_at" in main.text for name in defined)  # prototypes
    assert "{" not in main.text[main.text.index(defined[0]):main.text.index("int polyc_mm2(")]


def test_every_unit_declares_a_function_before_calling_it():
    # A convolution's regions call its edge blocks, outlined functions of their own that
    # the split places by size: each unit declares every function first (clang 14 and
    # gcc 14 reject a call to an undeclared function). Two convolutions in a row: one
    # has no region long enough for a unit of its own.
    conv = """def conv2(float(N, C, H, W) I, float(K, C, R, S) F, float(J, K, R, S) G)
        -> (O, P) {
      O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s)
      P(n, j, h, w) +=! O(n, k, h + r, w + s) * G(j, k, r, s)
    }"""
    for source in (conv, TWO_PRODUCTS):
        split = units.compile_units(c_source(source), cores=2)
        assert len(split) > 2
        assert source is TWO_PRODUCTS or any(
            re.search(r"polyc_conv2_block\d*\(", unit.text) for unit in split[:-1])
        for unit in split:
            for name in set(re.findall(r"void (polyc_\w+)\((?:int64_t|int \*)", unit.text)):
                first = re.search(rf"\b{name}\(", unit.text)
                declared = unit.text.rfind("\n", 0, first.start())
                assert " void " in unit.text[declared:first.start()], (name, "called first")


@pytest.mark.parametrize("source, cores", [(TWO_PRODUCTS, 1), (ONE_PRODUCT, 4)])
def test_one_unit_where_splitting_does_not_pay(source, cores):
    text = c_source(source)
    assert [unit.text for unit in units.compile_units(text, cores=cores)] == [text]


@pytest.mark.needs_cc
def test_a_kernel_built_from_units_gives_numpys_answer(tmp_path, monkeypatch):
    monkeypatch.setattr(units, "usable_cores", lambda: 2)
    op = polyc.define(TWO_PRODUCTS)
    text = op.compilation().c_source.text
    assert len(units.compile_units(text)) == 3
    path = tmp_path / "mm2.so"
    build_shared_object(text, path, Options(cache_dir=tmp_path))
    kernel = ctypes.CDLL(str(path)).polyc_mm2
    rng = np.random.default_rng(0)
    A, B, C = (rng.standard_normal(shape).astype(np.float32)
               for shape in ((70, 40), (40, 50), (50, 30)))
    E = np.empty((70, 30), np.float32)
    pointer = lambda a: a.ctypes.data_as(ctypes.c_void_p)  # noqa: E731
    kernel.argtypes = [ctypes.c_int64] * 4 + [ctypes.c_void_p] * 4
    assert kernel(70, 40, 50, 30, pointer(A), pointer(B), pointer(C), pointer(E)) == 0
    expected = (A.astype(np.float64) @ B) @ C
    np.testing.assert_allclose(E, expected, rtol=1e-4, atol=1e-4)
