"""The C that shares a loop of uneven work among threads (polyc.codegen.thread_boxes):
``polyc_cut`` places each box's ends where the cumulative work divides evenly, and
``polyc_thread_grid`` weighs such a loop by its work, not its extent."""
import ctypes

import numpy as np
import pytest
from hypothesis import given, settings, strategies as st

from polyc.codegen.c_names import PREAMBLE
from polyc.codegen.thread_boxes import GRID_HELPER

from c_probe import compile_probe

pytestmark = pytest.mark.needs_cc

PROBE = PREAMBLE + GRID_HELPER + """
int64_t polyc_probe_cut(const double *work, int64_t units, int64_t part, int64_t parts) {
  return polyc_cut(work, units, part, parts);
}
void polyc_probe_grid(int64_t threads, int count, const int64_t *extents,
                      const int64_t *sizes, const double *const *work, int64_t *parts) {
  polyc_thread_grid(threads, count, extents, sizes, work, parts);
}
"""

_DOUBLES = ctypes.POINTER(ctypes.c_double)
_INT64S = ctypes.POINTER(ctypes.c_int64)


@pytest.fixture(scope="module")
def probe(tmp_path_factory):
    loaded = compile_probe(PROBE, tmp_path_factory.mktemp("thread_boxes"))
    loaded.polyc_probe_cut.restype = ctypes.c_int64
    loaded.polyc_probe_cut.argtypes = [_DOUBLES, ctypes.c_int64, ctypes.c_int64, ctypes.c_int64]
    loaded.polyc_probe_grid.restype = None
    loaded.polyc_probe_grid.argtypes = [ctypes.c_int64, ctypes.c_int, _INT64S, _INT64S,
                                        ctypes.POINTER(_DOUBLES), _INT64S]
    return loaded


def _cumulative(unit_work) -> np.ndarray:
    return np.concatenate([[0.0], np.cumsum(np.asarray(unit_work, dtype=np.float64))])


def _cuts(probe, cumulative: np.ndarray, parts: int) -> list[int]:
    pointer = cumulative.ctypes.data_as(_DOUBLES)
    return [probe.polyc_probe_cut(pointer, len(cumulative) - 1, t, parts)
            for t in range(parts + 1)]


@settings(max_examples=60, deadline=None)
@given(unit_work=st.lists(st.integers(0, 1000), min_size=1, max_size=200),
       parts=st.integers(1, 17))
def test_cuts_cover_the_units_once_and_hold_an_even_share_each(probe, unit_work, parts):
    cumulative = _cumulative(unit_work)
    cuts = _cuts(probe, cumulative, parts)
    # the boxes [cut t, cut t+1) tile the units: every value runs once
    assert cuts[0] == 0 and cuts[-1] == len(unit_work)
    assert all(a <= b for a, b in zip(cuts, cuts[1:]))
    # each end is the unit boundary nearest to its even share of the work, so a box
    # holds its share give or take one unit at each end
    total, heaviest = cumulative[-1], max(unit_work)
    for t in range(parts):
        held = cumulative[cuts[t + 1]] - cumulative[cuts[t]]
        assert abs(held - total / parts) <= heaviest + 1e-9 * total


def test_a_triangles_rows_are_cut_where_its_work_halves(probe):
    # rows i < 1000 of trmm hold 999 - i products each, in blocks of 8 rows: two
    # threads split at the block boundary nearest to 1 - 1/sqrt(2) of the rows
    rows = np.arange(1000)
    cumulative = _cumulative([(999 - rows[u:u + 8]).sum() for u in range(0, 1000, 8)])
    cuts = _cuts(probe, cumulative, 2)
    assert cuts[1] == np.argmin(np.abs(cumulative - cumulative[-1] / 2)) == 37  # row 296
    assert abs(cumulative[cuts[1]] / cumulative[-1] - 0.5) < 0.01
    # an even extent would have cut at row 496 and given the first thread 3/4 of the work


def _grid(probe, threads, extents, sizes, work):
    count = len(extents)
    extents_c = (ctypes.c_int64 * count)(*extents)
    sizes_c = (ctypes.c_int64 * count)(*sizes)
    keep = [None if w is None else _cumulative(w) for w in work]
    work_c = (_DOUBLES * count)(*[_DOUBLES() if w is None else w.ctypes.data_as(_DOUBLES)
                                  for w in keep])
    parts = (ctypes.c_int64 * count)()
    probe.polyc_probe_grid(threads, count, extents_c, sizes_c, work_c, parts)
    return list(parts)


def test_the_grid_gives_threads_to_the_loop_whose_work_they_share_evenly(probe):
    rows = np.arange(1000)
    triangle = [(999 - rows[u:u + 8]).sum() for u in range(0, 1000, 8)]
    # 96 columns: one block of 128, so both threads go to the rows, cut by their work
    assert _grid(probe, 2, [96, 1000], [128, 8], [None, triangle]) == [1, 2]
    # 1024 columns: eight blocks, an even half each: the outer loop takes the threads
    assert _grid(probe, 2, [1024, 1000], [128, 8], [None, triangle]) == [2, 1]
    # without work, the rows are weighed by their extent (the matmul rule)
    assert _grid(probe, 4, [1000], [8], [None]) == [4]
    # every grid multiplies to the thread count
    for threads in (1, 3, 6, 12, 16):
        assert np.prod(_grid(probe, threads, [300, 1000], [128, 8], [None, triangle])) == threads
