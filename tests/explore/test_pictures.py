"""The dependence graph and the iteration space: content, order, tiles and SVG."""
import re

import pytest

import polyc
from polyc import explore

MATMUL = """
def matmul(float(M, K) A, float(K, N) B) -> (C) {
  C(m, n) +=! A(m, k) * B(k, n)
}
"""
SOFTMAX = """
def softmax(float(N, D) X) -> (Y) {
  row_max(n) max=! X(n, d)
  row_sum(n) +=! exp(X(n, d) - row_max(n))
  Y(n, d) = exp(X(n, d) - row_max(n)) / row_sum(n)
}
"""


def edges(graph):
    return {(e.kind, e.source, e.sink): e for e in graph.edges}


def test_matmul_dependence_graph():
    graph = explore.dependence_graph(polyc.define(MATMUL))
    found = edges(graph)
    assert set(found) == {("flow", "S0_init", "S0"), ("false", "S0_init", "S0"),
                          ("flow", "S0", "S0"), ("false", "S0", "S0")}
    assert found["flow", "S0", "S0"].vector == "(0, 0, 1)"
    assert found["flow", "S0", "S0"].distance == "{ [m = 0, n = 0, k = 1] }"
    assert found["false", "S0", "S0"].vector == "(0, 0, >=1)"
    # Different dimensions: the kind only.
    assert found["flow", "S0_init", "S0"].vector is None
    assert found["flow", "S0_init", "S0"].label == "flow"
    assert [name for name, _ in graph.statements] == ["S0_init", "S0"]
    assert dict(graph.statements)["S0_init"] == "C(m, n) = 0"


def test_dependence_graph_text_and_svg(tmp_path):
    graph = explore.dependence_graph(polyc.define(SOFTMAX, canonicalize=False))
    text = str(graph)
    assert text.startswith("dependence graph of softmax: 5 statements")
    assert re.search(r"S0 -> S2\s+flow\s+\(0, <=0\)", text)
    svg = graph.svg
    assert svg.startswith("<svg") and svg.endswith("</svg>")
    assert svg.count('class="polyc-node"') == 5
    assert svg.count('class="polyc-edge"') == len(graph.edges)
    assert "flow (0, 1)" in svg and "S2: Y(n, d) = exp(" in svg
    assert graph._repr_svg_() == svg
    saved = graph.save(tmp_path / "deps.svg").read_text()
    assert saved.strip() == svg
    assert "S0 -> S0" in graph.save(tmp_path / "deps.txt").read_text()


def test_iteration_space_order_and_tiles(tmp_path):
    softmax = polyc.define(SOFTMAX)
    space = explore.iteration_space(softmax, statement="S0", sizes={"N": 12, "D": 12},
                                    l2_bytes=2048)
    assert space.dims == ("n", "d")
    assert sorted(space.points) == [(n, d) for n in range(12) for d in range(12)]
    steps = space.steps
    # The row maximum reduces along d: within a row, d runs in increasing order.
    for n in range(12):
        assert [steps[n, d] for d in range(12)] == sorted(steps[n, d] for d in range(12))
    # A row reduction keeps no block of data in cache: its rows are not tiled.
    assert space.tile_sizes is None
    assert "scheduled as for a 2 KiB L2 cache" in space.note
    tiled = explore.iteration_space(polyc.define(MATMUL), statement="S0_init",
                                    sizes={"M": 12, "N": 12, "K": 12}, l2_bytes=2048)
    assert tiled.tile_sizes is not None and len(set(tiled.tiles)) > 1
    # A tile's points run one after the other: tile numbers never go back.
    assert list(tiled.tiles) == sorted(tiled.tiles)
    assert tiled.svg.count("<rect") == len(set(tiled.tiles))
    assert "n=11" in str(space) and "|" in str(tiled)
    svg = space.svg
    assert svg.count("<circle") == 144
    assert "<line" in svg
    assert space.save(tmp_path / "space.svg").read_text().startswith("<svg")


def test_iteration_space_defaults_and_fixed_dimensions():
    matmul = polyc.define(MATMUL)
    space = explore.iteration_space(matmul, sizes={"M": 5, "K": 4, "N": 6})
    assert space.statement == "S0" and space.dims == ("m", "n")
    assert space.fixed == (("k", 0),)
    assert len(space.points) == 30
    assert space.caption.startswith("S0[m, n, k] for M = 5, K = 4, N = 6 (k = 0): 30 points")


def test_untiled_schedule_has_no_tiles():
    softmax = polyc.define(SOFTMAX, optimize=False)
    space = explore.iteration_space(softmax, statement="S2", sizes={"N": 4, "D": 5})
    assert space.tile_sizes is None
    assert set(space.tiles) == {0}
    assert "not tiled" in space.caption
    assert "<rect" not in space.svg


def test_iteration_space_errors():
    matmul = polyc.define(MATMUL)
    with pytest.raises(ValueError, match="no statement S7"):
        explore.iteration_space(matmul, statement="S7")
    with pytest.raises(ValueError, match="dims must be two different indices"):
        explore.iteration_space(matmul, dims=("m", "x"))
    with pytest.raises(ValueError, match="too many to draw"):
        explore.iteration_space(matmul, sizes={"M": 100, "K": 2, "N": 100})


def test_schedule_summary_loop_nests():
    fc_relu = polyc.define("""
    def fc_relu(float(M, B) I, float(M, N) W, float(N) bias) -> (O) {
      O(b, n) +=! I(m, b) * W(m, n)
      O(b, n) = fmax(O(b, n) + bias(n), 0)
    }""")
    # The first nest (L0) copies I transposed: it is read across n with b in front.
    for fusion, nests in (("max", [("L0",), ("S0_init", "S0", "S1")]),
                          ("min", [("L0",), ("S0_init",), ("S0",), ("S1",)])):
        compilation = fc_relu.with_options(fusion=fusion).compilation()
        summary = explore.summarize_schedule(compilation.schedule, compilation.program)
        assert [nest.statements for nest in summary.nests] == nests
        assert summary.count("parallel") == len(nests)
        assert summary.brief().startswith(f"{len(nests)} loop nest")
    fused = explore.summarize_schedule(fc_relu.with_options(fusion="max").compilation()
                                       .schedule, fc_relu.compilation().program)
    assert [loop.name for loop in fused.nests[1].shared_loops] == ["b", "n"]
