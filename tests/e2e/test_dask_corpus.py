"""polyc.dask on every corpus operator under random chunkings: the outputs match numpy
(float64) as closely as the single-process run must.

``POLYC_DASK_CHUNKINGS`` chunkings per operator: 2 in ``make test``, 200 in ``make
fuzz-dask``. A chunking cuts every input dimension at up to three random places (size-1
chunks and single chunks included) and sometimes asks for output chunks too.
"""
import functools
import os

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import polyc
from corpus import CORPUS, assert_close, make_inputs
from strategies import chunkings

da = pytest.importorskip("dask.array")
dask = pytest.importorskip("dask")
polyc_dask = pytest.importorskip("polyc.dask")

pytestmark = pytest.mark.needs_cc
CHUNKINGS = int(os.environ.get("POLYC_DASK_CHUNKINGS", "2"))


@functools.lru_cache(maxsize=None)
def compiled(name: str) -> polyc.Operator:
    entry = next(c for c in CORPUS if c.name == name)
    return polyc.define(entry.source, entry.def_name)


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
@settings(max_examples=CHUNKINGS, deadline=None, database=None,
          suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])
@given(data=st.data())
def test_corpus_operator_on_dask_arrays_matches_numpy(entry, data):
    op = compiled(entry.name)
    sizes = data.draw(st.sampled_from(entry.shapes), label="sizes")
    inputs = make_inputs(entry, sizes, np.random.default_rng(data.draw(st.integers(0, 99))))
    chunked = [da.from_array(x, chunks=data.draw(chunkings(x.shape)))
               if isinstance(x, np.ndarray) and x.ndim else x for x in inputs]
    first_shape = tuple(entry.expected_output_shapes(sizes)[0])
    asked = data.draw(chunkings(first_shape)) \
        if first_shape and data.draw(st.booleans(), label="ask output chunks") else None
    result = polyc_dask.apply(op, *chunked, chunks=asked)
    results = dask.compute(*(result if isinstance(result, tuple) else (result,)),
                           scheduler="synchronous")
    expected = entry.reference(*inputs)
    assert len(results) == len(expected)
    for k, (actual, reference) in enumerate(zip(results, expected)):
        assert_close(actual, reference, entry.tolerance,
                     what=f"{entry.name} output {k} at sizes {sizes}, chunks "
                          f"{[getattr(c, 'chunks', None) for c in chunked]}, asked {asked}")
