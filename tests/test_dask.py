"""polyc.dask: operators on Dask arrays, checked against single-process polyc under
random chunkings (uneven, size-1 chunks, one chunk, empty arrays), the plans' splits,
halos and task counts, and a run on a two-process LocalCluster."""
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyc
from strategies import chunkings

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
polyc_dask = pytest.importorskip("polyc.dask")
get_dependencies = pytest.importorskip("dask.core").get_dependencies

OPERATORS = {
    "matmul": "def matmul(double(M, K) A, double(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }",
    "conv2d": """def conv2d(double(C, H, W) X, double(F, C, KH, KW) Wt) -> (O) {
        O(f, h, w) +=! X(c, h + kh, w + kw) * Wt(f, c, kh, kw) }""",
    "padded": """def padded(double(H, W) X, double(KH, KW) K) -> (O) {
        O(h, w) +=! (h + kh - 1 >= 0 && h + kh - 1 < H && w + kw - 1 >= 0 && w + kw - 1 < W)
                    ? X(h + kh - 1, w + kw - 1) * K(kh, kw) : 0.0
            where h in 0:H, w in 0:W, kh in 0:KH, kw in 0:KW }""",
    "strided": "def strided(double(H) X) -> (O) { O(h) +=! X(2 * h + r) where r in 0:3 }",
    "layernorm": """def layernorm(double(N, D) X) -> (Y, mean) {
        mean(i) +=! X(i, j) / D
        var(i) +=! (X(i, j) - mean(i)) * (X(i, j) - mean(i)) / D
        Y(i, j) = (X(i, j) - mean(i)) * rsqrt(var(i) + 1e-5) }""",
    "gather": "def gather(double(V, D) T, int32(B, L) I) -> (O) { O(b, d) +=! T(I(b, l), d) }",
    "rowmax": "def rowmax(double(N, M) X) -> (O) { O(j) max=! X(i, j) }",
    "transpose": "def transpose(double(N, M) X, double a) -> (O) { O(j, i) = a * X(i, j) + i }",
    "prefix": "def prefix(double(N) X) -> (O) { O(i) +=! X(j) where i in 0:N, j in 0:i + 1 }",
}
_OPS = {}


def _op(name):
    if name not in _OPS:
        _OPS[name] = polyc.define(OPERATORS[name])
    return _OPS[name]


def _inputs(name, rng, n):
    """Arguments of the operator ``name`` with extents around ``n``."""
    r = rng.standard_normal
    if name == "matmul":
        return [r((n, n + 1)), r((n + 1, n + 2))]
    if name == "conv2d":
        return [r((2, n + 2, n + 3)), r((3, 2, 3, 2))]
    if name == "padded":
        return [r((n, n + 1)), r((3, 3))]
    if name in ("strided", "prefix"):
        return [r(2 * n + 3)]
    if name == "gather":
        return [r((5, n)), rng.integers(0, 5, (n, 3)).astype(np.int32)]  # repeated rows
    if name == "transpose":
        return [r((n, n + 2)), 1.5]
    return [r((n, n + 1))]


def _chunked(draw, array):
    if not isinstance(array, np.ndarray):
        return array
    return da.from_array(array, chunks=draw(chunkings(array.shape)))


def _check(operator, arguments, chunked, **apply_options):
    want = operator(*arguments)
    got = polyc_dask.apply(operator, *chunked, **apply_options)
    got = dask.compute(got, scheduler="synchronous")[0]
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        assert g.shape == w.shape
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("name", sorted(OPERATORS))
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_chunking_gives_the_single_process_result(name, data):
    rng = np.random.default_rng(data.draw(st.integers(0, 2**16)))
    arguments = _inputs(name, rng, data.draw(st.integers(1, 7)))
    chunked = [_chunked(data.draw, a) for a in arguments]
    _check(_op(name), arguments, chunked)


@pytest.mark.parametrize("name", ["matmul", "layernorm", "gather", "padded"])
def test_empty_arrays(name):
    arguments = _inputs(name, np.random.default_rng(0), 0)
    _check(_op(name), arguments, [da.from_array(a) if isinstance(a, np.ndarray) else a
                                  for a in arguments])


def test_numpy_arrays_and_asked_output_chunks():
    rng = np.random.default_rng(1)
    arguments = _inputs("matmul", rng, 9)
    _check(_op("matmul"), arguments, arguments, chunks=(4, 5))
    result = polyc_dask.apply(_op("matmul"), *arguments, chunks=(4, 5))
    assert result.chunks == ((4, 4, 1), (5, 5, 1))


def test_a_split_reduction_is_a_tree_and_tasks_stay_near_the_blocks():
    rng = np.random.default_rng(2)
    A = da.from_array(rng.standard_normal((40, 90)), chunks=(20, 10))
    B = da.from_array(rng.standard_normal((90, 30)), chunks=(10, 15))
    plan = polyc_dask.plan(_op("matmul"), A, B)
    reduction = [a for a in plan.decomposition.axes if a.reduction is not None]
    assert [len(a.chunks) for a in reduction] == [9]
    output_blocks = 2 * 2
    assert plan.blocks == output_blocks * 9
    tree = output_blocks * 3  # 9 partial results: 2 combines of up to 8, then the last
    assert plan.tasks == plan.blocks + tree
    assert "combined by + in a tree of 2 levels" in str(plan)
    _check(_op("matmul"), [A.compute(), B.compute()], [A, B])


@pytest.mark.parametrize("update, combined", [("+=!", "+"), ("*=!", "*"), ("max=!", "max"),
                                              ("min=!", "min")])
def test_every_reduction_operator_combines_partial_results(update, combined):
    op = polyc.define(f"def columns(double(N, M) X) -> (O) {{ O(j) {update} X(i, j) }}")
    X = da.from_array(np.random.default_rng(7).uniform(0.5, 1.5, (30, 4)), chunks=(3, 2))
    plan = polyc_dask.plan(op, X)
    assert f"split in 10 chunks, partial results combined by {combined} in a tree of 2 " \
        f"levels" in str(plan)
    assert plan.blocks == 10 * 2 and plan.tasks == plan.blocks + 2 * 3
    _check(op, [X.compute()], [X])


def test_a_table_read_whole_by_every_block_is_joined_once():
    rng = np.random.default_rng(8)
    T = da.from_array(rng.standard_normal((12, 6)), chunks=(4, 6))  # 3 chunks, read whole
    index = rng.integers(0, 12, (10, 3)).astype(np.int32)
    I = da.from_array(index, chunks=(2, 3))
    plan = polyc_dask.plan(_op("gather"), T, I)
    assert plan.blocks == 5 and plan.shared_parts == 1
    assert plan.tasks == plan.blocks + 1
    assert "1 of the tasks join a part that several blocks read" in str(plan)
    graph = dict(polyc_dask.apply(_op("gather"), T, I).dask)
    (joined,) = [k for k in graph if isinstance(k, tuple) and "-part-" in k[0]]
    blocks = [k for k in graph if isinstance(k, tuple) and k[0].endswith("-O")]
    assert len(blocks) == 5
    assert all(joined in get_dependencies(graph, block) for block in blocks)
    _check(_op("gather"), [T.compute(), index], [T, I])


@pytest.mark.parametrize("name", ["conv2d", "gather", "layernorm", "matmul"])
def test_the_threads_scheduler_runs_blocks_of_one_operator_at_once(name):
    rng = np.random.default_rng(9)
    arguments = _inputs(name, rng, 9)
    chunked = [da.from_array(a, chunks=tuple(max(1, n // 3) for n in a.shape))
               if isinstance(a, np.ndarray) else a for a in arguments]
    want = _op(name)(*arguments)
    got = dask.compute(polyc_dask.apply(_op(name), *chunked), scheduler="threads",
                       num_workers=4)[0]
    want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
    for w, g in zip(want, got):
        np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)


def test_windows_get_exact_halos_and_fewer_tasks_than_map_overlap():
    rng = np.random.default_rng(3)
    X = da.from_array(rng.standard_normal((40, 36)), chunks=(10, 12))
    K = rng.standard_normal((3, 3))
    plan = polyc_dask.plan(_op("padded"), X, K)
    assert plan.blocks == 4 * 3
    assert set(plan.halos().values()) <= {(0, 2), (0, 0)}  # reads at h - 1 + kh, kh < 3
    # a task per block, and one per input chunk whose first rows or columns are a face
    # of its neighbours' halos (all but the first chunk)
    assert plan.face_tasks == 4 * 3 - 1 and plan.tasks == plan.blocks + plan.face_tasks
    assert "11 of the tasks cut the halos' faces" in str(plan)
    face_tasks = [t for k, t in dict(polyc_dask.apply(_op("padded"), X, K).dask).items()
                  if "faces" in k[0]]
    for _, chunk, boxes in face_tasks:  # faces of at most 2 rows or 2 columns
        assert all(min(b - a for a, b in box) <= 2 for box in boxes)
    overlap = X.map_overlap(lambda b: b, depth=1, boundary=0)
    overlap_tasks = len(dict(overlap.__dask_graph__())) - len(dict(X.__dask_graph__()))
    assert overlap_tasks >= 3 * plan.tasks
    _check(_op("padded"), [X.compute(), K], [X, K])


def test_blocks_read_what_they_need_and_dimensions_that_gain_nothing_stay_whole():
    X = da.from_array(np.arange(12.0), chunks=4)
    plan = polyc_dask.plan(_op("prefix"), X, chunks=4)  # O(i) follows no input: asked
    (axis,) = plan.decomposition.axes
    assert axis.chunks == (4, 4, 4)  # block k reads X[0:4k + 4] and keeps its last 4 rows
    assert [run.parts for run in plan.decomposition.runs.values()] == [
        (((0, 4),),), (((0, 8),),), (((0, 12),),)]
    _check(_op("prefix"), [X.compute()], [X], chunks=4)
    norm = polyc.define("def norm(double(N) X) -> (O) { O(i) = X(i) / N }")
    plan = polyc_dask.plan(norm, X)
    (axis,) = plan.decomposition.axes
    assert axis.chunks == (12,) and "whole of every input" in axis.whole_because
    assert "whole (every block would read the whole of every input)" in str(plan)
    _check(norm, [X.compute()], [X])


def test_layernorm_splits_rows_and_keeps_its_reduction_whole():
    X = da.from_array(np.random.default_rng(4).standard_normal((12, 10)), chunks=(5, 4))
    plan = polyc_dask.plan(_op("layernorm"), X)
    rows, columns = plan.decomposition.axes
    assert rows.dims == (("Y", 0), ("mean", 0)) and rows.chunks == (5, 5, 2)
    assert columns.chunks == (10,)
    assert plan.tasks == 3 + 2 * 3  # a task per block, and one per output block
    _check(_op("layernorm"), [X.compute()], [X])
    explained = _op("layernorm").explain(X)  # the plan is a section; nothing compiles
    assert explained.section("dask") == str(plan) and explained.kernel is None
    assert "Y dimension 1: whole (every block would read the whole of " \
        "every input)" in str(plan)


def test_outputs_compose_with_other_dask_operations_on_the_threads_scheduler():
    rng = np.random.default_rng(6)
    X = da.from_array(rng.standard_normal((12, 10)), chunks=(5, 4))
    Y, mean = polyc_dask.apply(_op("layernorm"), X)  # a tuple; an output layer per array
    assert isinstance(polyc_dask.apply(_op("layernorm"), X), tuple)
    B = da.from_array(rng.standard_normal((10, 7)), chunks=(3, 7))
    C = polyc_dask.apply(_op("matmul"), X, B)  # a split reduction's tree
    got = dask.compute((Y - mean[:, None]).sum(axis=1), (C * 2).T, Y.persist(),
                       scheduler="threads")
    want_y, want_mean = _op("layernorm")(X.compute())
    np.testing.assert_allclose(got[0], (want_y - want_mean[:, None]).sum(axis=1), rtol=1e-12)
    np.testing.assert_allclose(got[1], 2 * (X.compute() @ B.compute()).T, rtol=1e-12)
    np.testing.assert_allclose(got[2], want_y, rtol=1e-12)


def test_bad_arguments_are_argument_errors():
    A = da.ones((4, 5), chunks=2)
    with pytest.raises(polyc.ArgumentError, match="float64"):
        polyc_dask.apply(_op("matmul"), A.astype(np.float32), da.ones((5, 3)))
    with pytest.raises(polyc.ArgumentError):
        polyc_dask.apply(_op("matmul"), A, da.ones((4, 3)))
    with pytest.raises(polyc.ArgumentError):
        polyc_dask.apply(_op("matmul"), A)
    unknown = da.ones(10, chunks=5)
    unknown = unknown[unknown > 0]  # chunk sizes unknown until computed
    with pytest.raises(polyc.ArgumentError, match="compute_chunk_sizes"):
        _op("strided").explain(unknown)


def test_a_local_cluster_of_two_processes():
    distributed = pytest.importorskip("distributed")
    rng = np.random.default_rng(5)
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                  dashboard_address=None) as cluster, \
            distributed.Client(cluster) as client:
        for name in ("conv2d", "matmul", "layernorm"):
            arguments = _inputs(name, rng, 8)
            chunked = [da.from_array(a, chunks=tuple(max(1, n // 2) for n in a.shape))
                       if isinstance(a, np.ndarray) else a for a in arguments]
            want = _op(name)(*arguments)
            got = dask.compute(polyc_dask.apply(_op(name), *chunked), scheduler=client)[0]
            want, got = (want, got) if isinstance(want, tuple) else ((want,), (got,))
            for w, g in zip(want, got):
                np.testing.assert_allclose(g, w, rtol=1e-12, atol=1e-12)
        built = client.run(lambda: len(__import__("polyc.dask").dask._OPERATORS))
        assert len(built) == 2 and all(n >= 1 for n in built.values())  # ran in the workers
