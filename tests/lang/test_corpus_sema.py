"""Every corpus operator parses, passes sema and gets the expected output shapes (no C)."""
import pytest

from corpus import CORPUS
from polyc.compiler import frontend
from polyc.lang import sizes as sz


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_shapes(entry):
    op = frontend(entry.source, entry.def_name)
    for sizes in entry.shapes:
        shapes = tuple(tuple(sz.evaluate(d, sizes) for d in t.shape) for t in op.outputs)
        assert shapes == tuple(tuple(s) for s in entry.expected_output_shapes(sizes))
