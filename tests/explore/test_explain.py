"""op.explain(): every section's content on known operators, text and HTML."""
# ruff: noqa: F821  (Python-form operator bodies name indices and outputs freely)
import re

import numpy as np
import pytest

import polyc
import polyc.api
from polyc.explain import STAGES, explain, stage_texts
from polyc.options import DEBUG_CHANNELS

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
  C(m, n) +=! A(m, k) * B(k, n)
}
"""
FC_RELU = """
def fc_relu(float(B, M) I, float(N, M) W, float(N) bias) -> (O) {
  O(b, n) +=! I(b, m) * W(n, m)
  O(b, n) = fmax(O(b, n) + bias(n), 0)
}
"""
SOFTMAX = """
def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  row_sum(n) +=! exp(X(n, d) - row_max(n))
  Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
}
"""

COMPILER_STATS = r"C compiler: (\d+ ms \(cache miss\)|not run \(cache hit (on disk|in memory)\))"


@pytest.fixture(scope="module")
def matmul_shapes():
    """matmul explained for shapes: every stage, nothing compiled."""
    return polyc.define(MATMUL).explain((30, 20), (20, 10))


def html_section(html: str, key: str) -> str:
    start = html.index(f'data-polyc-section="{key}"')
    end = html.find("data-polyc-section=", start + 1)
    return html[start:end if end > 0 else len(html)]


def test_sections_in_order(matmul_shapes):
    assert matmul_shapes.keys == ("source", "ir", "shapes", "domains", "deps", "graph",
                                  "fusion", "schedule", "space", "ast", "c", "stats")
    text = str(matmul_shapes)
    for section in matmul_shapes.sections:
        assert f"== {section.title} ==" in text


def test_source_and_ir(matmul_shapes):
    assert "C(m, n) +=! A(m, k) * B(k, n)" in matmul_shapes.section("source")
    assert "where m in 0:M, n in 0:N, k in 0:K" in matmul_shapes.section("ir")


def test_shapes_are_evaluated_for_given_shapes(matmul_shapes):
    shapes = matmul_shapes.section("shapes")
    assert "M = 30 (A.shape[0]), K = 20 (A.shape[1]), N = 10 (B.shape[1])" in shapes
    assert "output    C: float32(M, N)  = (30, 10)" in shapes
    assert "(6,000 instances)" in shapes          # S0: 30 * 10 * 20
    assert matmul_shapes.sizes == {"M": 30, "K": 20, "N": 10}


def test_domains_and_dependences_in_isl_notation(matmul_shapes):
    assert "S0[m, n, k] : " in matmul_shapes.section("domains")
    deps = matmul_shapes.section("deps")
    assert re.search(r"flow  S0_init -> S0: \[M, K, N\] -> \{ S0_init\[m, n\] -> S0\[", deps)
    assert "flow  S0 -> S0:" in deps and "false S0 -> S0:" in deps
    # Distances of the reduction's self-dependences, from isl's deltas().
    assert "flow  S0 -> S0: (0, 0, 1)  { [m = 0, n = 0, k = 1] }" in deps


def test_fusion_names_loop_nests_and_shared_loops(matmul_shapes):
    fusion = matmul_shapes.section("fusion")
    assert "loop nest 1: S0_init, S0" in fusion
    assert "shared loops: m, n" in fusion
    assert "temporaries: none" in fusion
    # threads share boxes of rows and columns (polyc.scheduling.threads), not OpenMP's
    assert "parallel (thread boxes): loops m (blocks of" in fusion
    assert "parallel (OpenMP" not in fusion and "work divides evenly" not in fusion


def test_schedule_shows_bands_and_marks(matmul_shapes):
    schedule = matmul_shapes.section("schedule")
    assert "parallel" in schedule
    assert "band (" in schedule and "S0_init" in schedule
    assert 'mark: "parallel"' in schedule          # the isl tree itself, too


def test_loop_nest_and_c(matmul_shapes):
    assert "c0 < min(M, polyc_hi0_0); c0 += " in matmul_shapes.section("ast")
    assert "int polyc_matmul(int64_t M" in matmul_shapes.section("c")


def test_shapes_do_not_compile(monkeypatch):
    def no_compiler(*args, **kwargs):
        raise AssertionError("explain with shapes must not run the C compiler")

    monkeypatch.setattr(polyc.api, "load_operator", no_compiler)
    explanation = polyc.define(MATMUL).explain((4, 3), (3, 2))
    assert explanation.kernel is None
    assert "C compiler: not run (shapes given" in explanation.section("stats")


@pytest.mark.needs_cc
def test_arrays_compile_and_report_statistics():
    A = np.ones((8, 5), np.float32)
    B = np.ones((5, 3), np.float32)
    explanation = polyc.define(MATMUL).explain(A, B)
    stats = explanation.section("stats")
    assert explanation.kernel is not None
    assert re.search(r"polyc: [\d.]+ ms \(canonical form [\d.]+, layout copies", stats)
    from polyc.compiler import PIPELINE
    assert all(f"{stage.name} " in stats for stage in PIPELINE)  # every stage ran, timed
    assert re.search(COMPILER_STATS, stats)
    assert "fusion=default" in stats
    assert "output    C: float32(M, N)  = (8, 3)" in explanation.section("shapes")


def test_html_highlights_code_and_embeds_pictures(matmul_shapes):
    html = matmul_shapes._repr_html_()
    c_section = html_section(html, "c")
    assert "<span style=" in c_section                 # pygments, inline styles
    assert "polyc_matmul" in c_section
    assert '<span style="color: #B00040">int</span>' in c_section
    assert "<svg" in html_section(html, "graph") and "<svg" in html_section(html, "space")
    assert "<circle" in html_section(html, "space")
    assert "<span style=" in html_section(html, "source")   # TC highlighted too


def test_fusion_strategies_and_temporaries():
    softmax = polyc.define(SOFTMAX)
    fused_op = softmax.with_options(fusion="max")
    fused = fused_op.explain((64, 32)).section("fusion")
    assert "fusion: maximal fusion (fusion='max'); 1 loop nest" in fused
    default = softmax.explain((64, 32)).section("fusion")
    assert default.startswith("fusion: maximal fusion (the outer loop stays parallel")
    # the exponentials both S1 and S2 compute are computed once, by S1_shared
    assert "loop nest 1: S0_init, S0, S1_shared, S1_init, S1, S2" in fused
    assert "parallel (OpenMP): loop n" in fused
    if "row_max" in fused_op.compilation().contractions:
        assert ("row_max: float32(N), contracted to float32(1) per iteration of the parallel "
                "loop: 1 element, 4 B instead of 64 elements, 256 B") in fused
    else:
        assert "row_max: float32(N), full size = 64 elements, 256 B" in fused
    separate = softmax.with_options(fusion="min").explain((64, 32)).section("fusion")
    assert "6 loop nests" in separate
    assert "row_sum: float32(N), full size = 64 elements, 256 B" in separate
    # I(m, b), broadcast along the register block's rows, is copied transposed first
    fc_relu = FC_RELU.replace("float(B, M) I", "float(M, B) I").replace(
        "I(b, m) * W(n, m)", "I(m, b) * W(n, m)")
    unfused = explain(polyc.define(fc_relu, fusion="min"), ()).section("fusion")
    assert "4 loop nests" in unfused
    assert "loop nest 1: L0" in unfused and "loop nest 4: S1" in unfused
    assert "I_t10: float32(B, M), full size" in unfused


def test_python_form_shows_python_source():
    @polyc.op
    def scale(A: polyc.f32["N"]):
        B[i] = 2 * A[i]
        return B

    explanation = scale.with_options(parallel=False).explain((5,))
    assert "B[i] = 2 * A[i]" in explanation.section("source")
    source_html = html_section(explanation._repr_html_(), "source")
    assert '<span style="color: #008000; font-weight: bold">return</span>' in source_html
    assert "B(i) = 2.0 * A(i) where i in 0:N" in explanation.section("ir")
    assert "no picture" in explanation.section("space")   # one dimension only


def test_explain_without_arguments_and_saving(tmp_path):
    explanation = polyc.define(FC_RELU).explain()
    assert explanation.sizes is None
    assert "C compiler: not run" in explanation.section("stats")
    page = explanation.save(tmp_path / "fc.html").read_text()
    assert page.startswith("<!DOCTYPE html>") and "polyc &middot; explain" in page
    assert "== dependences ==" in explanation.save(tmp_path / "fc.txt").read_text()


@pytest.mark.parametrize("args, message", [
    (((3, 4),), "takes 2 inputs"),
    (((3, 4), (5,)), "B: expected 2 dimensions"),
    (((3, 4), (5, 6)), "size K is 4 from A.shape[1] but 5 from B.shape[0]"),
    (((3, "x"), (4, 5)), "a shape must be a tuple of non-negative integers"),
])
def test_bad_shapes_raise_argument_errors(args, message):
    with pytest.raises(polyc.ArgumentError, match=re.escape(message)):
        polyc.define(MATMUL).explain(*args)


def test_stage_keys_match_debug_channels():
    compilation = polyc.define(MATMUL).compilation()
    texts = stage_texts(compilation)
    assert tuple(texts) == STAGES
    assert set(DEBUG_CHANNELS) - {"cc"} <= set(STAGES)
