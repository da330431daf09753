"""polyc.compare: variants side by side, same results, a table for terminals and HTML."""
import numpy as np
import pytest

import polyc
from polyc.explore.compare import _agree

FC_RELU = """
def fc_relu(float(B, M) I, float(N, M) W, float(N) bias) -> (O) {
  O(b, n) +=! I(b, m) * W(n, m)
  O(b, n) = fmax(O(b, n) + bias(n), 0)
}
"""


@pytest.fixture(scope="module")
def comparison():
    rng = np.random.default_rng(1)
    args = (rng.standard_normal((9, 17)).astype(np.float32),
            rng.standard_normal((11, 17)).astype(np.float32),
            rng.standard_normal(11).astype(np.float32))
    return polyc.compare(polyc.define(FC_RELU), args, repeat=3)


@pytest.mark.needs_cc
def test_default_variants_agree(comparison):
    assert [v.name for v in comparison.variants] == ["fused", "unfused", "no-opt"]
    assert comparison.consistent
    assert comparison.variant("fused").options == {"fusion": "max"}
    # fc_relu reads W(n, m) across b: polyc copies it transposed (nest L0), or, where
    # the machine's register block packs it per tile, the panels transpose it
    copies = sum(s.name.startswith("L")
                 for s in polyc.define(FC_RELU, fusion="max").compilation().op.statements)
    assert len(comparison.variant("fused").schedule.nests) == 1 + copies
    # unfused: the initialisation, the contraction, the epilogue (and the copy)
    assert len(comparison.variant("unfused").schedule.nests) == 3 + copies
    assert not comparison.variant("no-opt").schedule.tiled
    assert all(v.seconds > 0 and len(v.times) == 3 for v in comparison.variants)


@pytest.mark.needs_cc
def test_table_text_and_html(comparison):
    text = str(comparison)
    assert text.splitlines()[0] == "polyc compare: fc_relu"
    header = text.splitlines()[1]
    for column in ("variant", "loop nests", "parallel", "simd", "median time", "same result"):
        assert column in header
    assert "fusion='min'" in text and "optimize=False" in text
    html = comparison._repr_html_()
    assert "<table" in html and html.count("<tr>") == 4
    assert "unfused" in html


@pytest.mark.needs_cc
def test_custom_variants():
    op = polyc.define("def twice(float(N) A) -> (B) { B(i) = 2 * A(i) }")
    result = polyc.compare(op, (np.arange(5, dtype=np.float32),),
                           variants={"serial": {"parallel": False}}, repeat=1)
    assert [v.name for v in result.variants] == ["serial"]
    assert result.variants[0].schedule.count("parallel") == 0


def test_agreement_check():
    a = np.array([1.0, 2.0, np.nan], np.float32)
    assert _agree((a,), (a.copy(),), None, None) == (0.0, True)
    difference, matches = _agree((a + np.float32(0.5),), (a,), None, None)
    assert not matches and difference == pytest.approx(0.5)
    ints = np.array([1, 2], np.int32)
    assert not _agree((ints + 1,), (ints,), None, None)[1]
