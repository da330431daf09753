"""Index-dependent ranges in one form (polyc.rewrite.redundant_bounds): bounds that never
bind are dropped, those that can stay, spellings meet, and the points are the same."""
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from polyc.compiler import frontend
from polyc.lang import sizes as sz
from polyc.poly.program import build_poly_program
from polyc.rewrite.redundant_bounds import drop_redundant_bounds, never_positive
from polyc.rewrite.split_selects import split_selects


def _statements(source: str) -> list[str]:
    op = drop_redundant_bounds(split_selects(frontend(source)))
    return [line.strip() for line in str(op).splitlines()[1:-1]]


def test_the_sizes_a_triangle_never_reaches_are_dropped():
    # split, the select's condition joined the box: k in 0:min(M, i + 1) while i < M
    assert _statements("def f(float(M, M) A, float(M, N) B) -> (C) "
                       "{ C(i, j) +=! (k <= i ? A(i, k) : A(k, i)) * B(k, j) }") == [
        "C(i, j) +=! A(i, k) * B(k, j) where i in 0:M, j in 0:N, k in 0:i + 1",
        "C(i, j) += A(k, i) * B(k, j) where i in 0:M, j in 0:N, k in i + 1:M"]


def test_a_bound_that_can_bind_stays():
    # i runs to M, k to K: which of K and i + 1 is smaller depends on the sizes
    assert _statements("def f(float(M, K) A) -> (B) { B(i) +=! k <= i ? A(i, k) : 0.0 }") == [
        "B(i) +=! A(i, k) where i in 0:M, k in 0:min(K, i + 1)"]
    # a band's borders bind at both ends
    band = ("def f(float(N) x) -> (y) "
            "{ y(i) +=! x(j) where i in 0:N, j in max(0, i - 2):min(N, i + 3) }")
    assert _statements(band) == [
        "y(i) +=! x(j) where i in 0:N, j in max(0, i - 2):min(N, i + 3)"]


def test_written_bounds_and_their_tightest_spelling_are_one_operator():
    def written(bounds):
        return drop_redundant_bounds(frontend(
            f"def f(float(N, M) A) -> (D) {{ D(i, j) +=! A(i, k) * A(j, k) where j in {bounds} }}"))
    for spelling in ("0:min(N, i + 1)", "0:min(i + 1, N + 3)", "0:1 + i",
                     "0:min(i + 1, N)"):
        assert written(spelling) == written("0:i + 1"), spelling


def test_a_range_whose_bounds_on_other_indices_never_bind_is_a_box():
    op = drop_redundant_bounds(frontend(
        "def f(float(N, M) A) -> (B) { B(i, j) = A(i, j) where i in 0:N, j in max(0, i - N):M }"))
    assert [line.strip() for line in str(op).splitlines()[1:-1]] == [
        "B(i, j) = A(i, j) where i in 0:N, j in 0:M"]
    assert op.statements[0].is_box


@pytest.mark.parametrize("bounds", [
    "0:i + 1", "i + 1:N", "max(0, i - K / 2):min(N, i + K - K / 2)"])
def test_bounds_written_as_tc_writes_them_with_nothing_to_drop_stay_as_they_are(bounds):
    # explain() shows no rewrite for them
    op = frontend(f"def f(float(N) x, float(K) w) -> (y) {{ y(i) +=! x(j) * w(0) "
                  f"where i in 0:N, j in {bounds} }}")
    assert drop_redundant_bounds(op) is op


def test_never_positive_decides_only_what_holds_for_every_size():
    n, m = sz.var("N"), sz.var("M")
    assert never_positive(sz.const(0)) and never_positive(sz.const(-3))
    assert not never_positive(sz.const(1)) and not never_positive(sz.neg(n))
    assert never_positive(sz.smin(n, sz.const(-1)))          # one argument decides a min
    assert not never_positive(sz.smax(n, sz.const(-1)))      # every argument a max
    assert never_positive(sz.smax(sz.const(0), sz.const(-2)))
    assert not never_positive(sz.smin(n, m))


_PIECE = st.tuples(st.sampled_from([0, 1, -1]), st.sampled_from(["", "N", "M", "N - M"]),
                   st.integers(-3, 3))


def _text(piece) -> str:
    coefficient, size, constant = piece
    terms = {1: ["i"], -1: ["-i"], 0: []}[coefficient] + ([size] if size else [])
    terms.append(str(constant))
    return " + ".join(terms).replace("+ -", "- ")


@settings(max_examples=60, deadline=None)
@given(st.lists(_PIECE, min_size=1, max_size=3), st.lists(_PIECE, min_size=1, max_size=3))
def test_the_points_are_the_same(lower, upper):
    # random lower and upper bounds on j, each a max / min of pieces in i and the sizes
    def combined(name, pieces):
        first = _text(pieces[0])
        return first if len(pieces) == 1 else f"{name}({first}, {combined(name, pieces[1:])})"
    lo, hi = combined("max", lower), combined("min", upper)
    source = (f"def f(float(N, M) A) -> (B) {{ B(i) +=! A(i, k) * j where i in 0:N, "
              f"k in 0:M, j in {lo}:{hi} }}")
    op = frontend(source)
    rewritten = drop_redundant_bounds(op)
    assert build_poly_program(rewritten).domain.is_equal(build_poly_program(op).domain)
    assert drop_redundant_bounds(rewritten) == rewritten
