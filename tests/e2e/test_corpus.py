"""Every corpus operator runs end to end and matches numpy (float64) for several shapes."""
import functools

import numpy as np
import pytest

import polyc
from corpus import CORPUS, assert_close, make_inputs

pytestmark = pytest.mark.needs_cc


# Every schedule variant must compute the same thing: polyc's default, no tiling or
# vectorisation and no threads, and the two extreme fusion strategies.
VARIANTS = {
    "default": {},
    "plain": {"optimize": False, "parallel": False},
    "fuse-max": {"fusion": "max"},
    "fuse-min": {"fusion": "min"},
}


@functools.lru_cache(maxsize=None)
def compiled(name: str, variant: str = "default") -> polyc.Operator:
    entry = next(c for c in CORPUS if c.name == name)
    return polyc.define(entry.source, entry.def_name, **VARIANTS[variant])


@pytest.mark.parametrize("variant", sorted(VARIANTS))
@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_operator_matches_numpy(entry, variant):
    op = compiled(entry.name, variant)
    for shape_number, sizes in enumerate(entry.shapes):
        inputs = make_inputs(entry, sizes, np.random.default_rng(shape_number))
        result = op(*inputs)
        results = result if isinstance(result, tuple) else (result,)
        expected = entry.reference(*inputs)
        assert len(results) == len(expected)
        for k, (actual, reference) in enumerate(zip(results, expected)):
            assert actual.shape == tuple(entry.expected_output_shapes(sizes)[k])
            assert_close(actual, reference, entry.tolerance,
                         what=f"{entry.name} output {k} at sizes {sizes}")


@pytest.mark.parametrize("entry", CORPUS[:12], ids=[c.name for c in CORPUS[:12]])
def test_out_argument_is_filled_in_place(entry):
    op = compiled(entry.name)
    sizes = entry.shapes[0]
    inputs = make_inputs(entry, sizes, np.random.default_rng(7))
    fresh = op(*inputs)
    fresh = fresh if isinstance(fresh, tuple) else (fresh,)
    outs = tuple(np.full_like(f, np.nan) for f in fresh)
    returned = op(*inputs, out=outs if len(outs) > 1 else outs[0])
    returned = returned if isinstance(returned, tuple) else (returned,)
    for out, again, first in zip(outs, returned, fresh):
        assert again is out
        np.testing.assert_array_equal(out, first)
