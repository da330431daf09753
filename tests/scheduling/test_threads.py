"""Thread partition: the threads of a parallel tiled nest share out boxes of the
parallel loops' values (polyc.scheduling.threads), each cut in whole register blocks.

Values are checked under several thread counts (set through libgomp, the OpenMP
runtime the kernels run on): a box that overlapped another would add a product
twice, a gap would leave elements at their initial value.
"""
import contextlib
import ctypes
import ctypes.util
import sys
from pathlib import Path

import islpy as isl
import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

import polyc
from polyc.compiler import frontend, generate
from polyc.errors import InternalError
from polyc.options import Options
from polyc.scheduling.marks import decision_mark, node_mark
from polyc.scheduling.threads import Partition, SharedLoop, check_partitions, partition_nests

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "benchmarks"))
from triangular import KERNELS, inputs  # noqa: E402

MATMUL = "def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }"
SCALED = """def smm(float alpha, float(M,K) A, float(K,N) B) -> (C) {
  C(m, n) +=! alpha * A(m, k) * B(k, n)
}"""
NARROW = """def narrow(float(M, N, R) X, float(D, R) W) -> (Y) {
  Y(m, n, d) +=! X(m, n, r) * W(d, r)
}"""


def _gomp():
    path = ctypes.util.find_library("gomp")
    return ctypes.CDLL(path) if path else None


@contextlib.contextmanager
def threads(count: int):
    gomp = _gomp()
    if gomp is None:
        pytest.skip("no libgomp to set the thread count with")
    before = gomp.omp_get_max_threads()
    gomp.omp_set_num_threads(count)
    try:
        yield
    finally:
        gomp.omp_set_num_threads(before)


def _partitions(source: str):
    compilation = generate(frontend(source), Options())
    return partition_nests(compilation.schedule.tree)[1], compilation


def test_matmul_shares_rows_and_columns_in_whole_register_blocks():
    partitions, compilation = _partitions(MATMUL)
    (partition,) = partitions.values()
    rows, columns = partition.loops
    assert str(rows.value).endswith("-> [(m)] }") and str(columns.value).endswith("-> [(n)] }")
    assert rows.unit > 1 and columns.unit > 1          # the register block's rows, columns
    c = compilation.c_source.text
    assert f"{rows.unit} * (polyc_units[0] * polyc_t0 / polyc_parts[0])" in c
    # The box's parameters bound the loops, and never appear outside the region.
    assert "c0 < min(M, polyc_hi0_0)" in compilation.ast_text
    region = c[c.index("void polyc_mm_region0("):c.index("#undef polyc_status")]
    assert "polyc_lo0_0" in region and "polyc_lo0_0" not in c[c.index("\nint polyc_mm("):]


def test_a_thread_partition_is_proven_like_any_other():
    compilation = generate(frontend(MATMUL), Options())
    partitioned = compilation.partitioned
    check_partitions(partitioned, compilation.dependences)  # the one polyc made

    def threads_mark(node):
        if isinstance(node_mark(node), Partition):
            return node
        found = (threads_mark(node.child(k)) for k in range(node.n_children()))
        return next((n for n in found if n is not None), None)

    mark = threads_mark(partitioned.get_root())
    made = node_mark(mark)
    # The same boxes cut along the reduction index too: threads would race on C.
    k = isl.UnionPwAff("[M, K, N] -> { S0[m, n, k] -> [(k)] }")
    forged_partition = Partition(made.nest, made.loops + (SharedLoop(k, made.loops[0].first,
                                                                    made.loops[0].last, 1),))
    forged = mark.delete().insert_mark(decision_mark(forged_partition)).get_schedule()
    with pytest.raises(InternalError, match="split dependences"):
        check_partitions(forged, compilation.dependences)


def test_other_nests_keep_the_openmp_schedule():
    elementwise = "def add(float(M, N) A, float(M, N) B) -> (C) { C(m, n) = A(m, n) + B(m, n) }"
    partitions, compilation = _partitions(elementwise)
    assert partitions == {}
    assert "omp for" in compilation.c_source.text
    # A batch loop has no register block: boxes would cut where its tiles do.
    batched = """def bmm(float(P,M,K) X, float(P,K,N) Y) -> (Z) {
      Z(p, m, n) +=! X(p, m, k) * Y(p, k, n)
    }"""
    partitions, compilation = _partitions(batched)
    assert partitions == {} and "omp for collapse(" in compilation.c_source.text
    serial = generate(frontend(MATMUL), Options().with_(parallel=False))
    assert "polyc_thread_grid" not in serial.c_source.text


def _check(source, args, expected):
    got = polyc.define(source)(*args)
    np.testing.assert_allclose(got, expected, rtol=1e-4, atol=1e-3)


@pytest.mark.needs_cc
@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_values_under_each_thread_count(count):
    rng = np.random.default_rng(count)
    A = rng.standard_normal((203, 70)).astype(np.float32)
    B = rng.standard_normal((70, 150)).astype(np.float32)
    X = rng.standard_normal((9, 13, 40)).astype(np.float32)
    W = rng.standard_normal((37, 40)).astype(np.float32)
    A64, B64 = A.astype(np.float64), B.astype(np.float64)
    with threads(count):
        _check(MATMUL, (A, B), A64 @ B64)
        _check(SCALED, (1.5, A, B), 1.5 * A64 @ B64)
        _check(NARROW, (X, W), np.einsum("mnr,dr->mnd", X.astype(np.float64),
                                         W.astype(np.float64)))


@pytest.mark.needs_cc
@settings(max_examples=10, deadline=None)
@given(m=st.integers(1, 300), k=st.integers(1, 60), n=st.integers(1, 300),
       count=st.integers(1, 6))
def test_matmul_values_property(m, k, n, count):
    rng = np.random.default_rng(m * 5 + k * 3 + n)
    A = rng.standard_normal((m, k)).astype(np.float32)
    B = rng.standard_normal((k, n)).astype(np.float32)
    with threads(count):
        _check(MATMUL, (A, B), A.astype(np.float64) @ B.astype(np.float64))


@pytest.mark.needs_cc
@pytest.mark.parametrize("count", [1, 2, 3, 4, 7])
def test_triangles_shared_by_their_work_under_each_thread_count(count):
    # boxes cut where the work divides evenly: a gap or an overlap between two
    # threads' rows would leave zeros or add products twice
    rng = np.random.default_rng(count)
    with threads(count):
        for name, sizes in (("trmm", dict(M=203, N=40)), ("symm", dict(M=150, N=130)),
                            ("syrk", dict(N=211, M=30)),
                            ("causal_attention", dict(T=190, D=16, E=24))):
            source, reference, _ = KERNELS[name]
            args = inputs(name, sizes, rng)
            got = polyc.define(source)(*args)
            np.testing.assert_allclose(got, reference(*args)[0], rtol=1e-4, atol=1e-3)


UNEVEN = {
    # the work of row i: N - i products
    "upper": ("""def upper(float(N, N) A, float(N, M) B) -> (O) {
      O(i, m) +=! A(i, k) * B(k, m) where k in i:N
    }""", lambda A, B: np.triu(A) @ B),
    # 2 i + 1 products up to a clamp at N
    "clamped": ("""def clamped(float(N, N) A, float(N, M) B) -> (O) {
      O(i, m) +=! A(i, k) * B(k, m) where k in 0:min(N, 2 * i + 1)
    }""", lambda A, B: np.where(np.arange(len(A))[None, :] < np.minimum(
        len(A), 2 * np.arange(len(A))[:, None] + 1), A, 0.0) @ B),
    # k's range depends on j, not on i: the extents' product bounds the work
    "tetrahedron": ("""def tetrahedron(float(N, N) A, float(N, M) B) -> (O) {
      O(i, m) +=! A(j, k) * B(k, m) where i in 0:N, j in 0:i + 1, k in 0:j + 1
    }""", lambda A, B: np.cumsum(np.tril(A) @ B, axis=0)),
}


@pytest.mark.needs_cc
@pytest.mark.parametrize("name", sorted(UNEVEN))
def test_other_uneven_domains_under_several_thread_counts(name):
    source, reference = UNEVEN[name]
    op = polyc.define(source)
    [loop] = [l for p in op.compilation().partitions.values() for l in p.loops if l.work]
    assert str(loop.value).endswith("-> [(i)] }")
    rng = np.random.default_rng(7)
    for n, m in ((150, 40), (77, 130), (300, 9)):
        A = rng.standard_normal((n, n)).astype(np.float32)
        B = rng.standard_normal((n, m)).astype(np.float32)
        expected = reference(A.astype(np.float64), B.astype(np.float64))
        for count in (1, 2, 3, 5):
            with threads(count):
                np.testing.assert_allclose(op(A, B), expected, rtol=1e-4,
                                           atol=1e-4 * np.abs(expected).max())
