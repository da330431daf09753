"""Sema: names, types, reductions, range inference (TC's conformance cases), errors."""
import numpy as np
import pytest

import polyc
from polyc.compiler import frontend
from polyc.errors import PolycError
from polyc.lang.parser import parse
from polyc.lang.sema import analyze
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty


def shapes(op: ir.Op) -> dict[str, tuple[str, ...]]:
    return {t.name: tuple(sz.to_tc(d) for d in t.shape)
            for t in op.outputs + op.temporaries}


def ranges(stmt: ir.Statement) -> dict[str, str]:
    return {r.index: f"{sz.to_tc(r.lo)}:{sz.to_tc(r.hi)}" for r in stmt.domain}


# ----------------------------------------------------------------- TC's inference tests


@pytest.mark.parametrize("source, expected", [
    ("def f(float(I_0) I) -> (O) { O(i) = I(i) }", {"O": ("I_0",)}),
    ("def f(float(I_0, I_1) I) -> (O) { O(i, j) = I(j, i) }", {"O": ("I_1", "I_0")}),
    ("def f(float(I_0, I_1, I_2, I_3) I) -> (O) { O(i, j, l, k) = I(j, i, k, l) }",
     {"O": ("I_1", "I_0", "I_3", "I_2")}),
    ("def f(float(I_0) I) -> (O) { O(i) = I(123 * i) }", {"O": ("(I_0 - 1)/123 + 1",)}),
    ("""def f(float(N,C,H,W) I, float(M,C,KH,KW) W1, float(M) B) -> (tmp, O) {
          tmp(n, m, h, w) +=! I(n, c, h + kh, w + kw) * W1(m, c, kh, kw)
          O(n, m, h, w) +=! tmp(n, m, h, w) + B(m)
        }""",
     {"tmp": ("N", "M", "H - KH + 1", "W - KW + 1"), "O": ("N", "M", "H - KH + 1", "W - KW + 1")}),
    ("""def f(float(B,IP,H,W) input, float(OP,IP,KH,KW) weight) -> (output) {
          output(b, op, h, w) +=! input(b, ip, 2 * h + 3 * w + kh, 2 * w + kw) *
                                  weight(op, ip, kh, kw)
        }""",
     {"output": ("B", "OP", "(H - KH - 3*((W - KW)/2))/2 + 1", "(W - KW)/2 + 1")}),
    ("def f(float(I_0, I_1, I_2) I) -> (O) { O(i) +=! I(j, i + j, k) }",
     {"O": ("I_1 - I_0 + 1",)}),
    ("""def f(float(A_0, A_1, A_2) A, float(B_0, B_1, B_2) B, float(C_0, C_1, C_2) C)
          -> (O2, O3) {
          O2(j, k, l) +=! B(j, k, l) + A(i, j, k)
          O3(k, l, m) +=! C(k, l, m) + O2(j, k, l)
        }""",
     {"O2": ("min(A_1, B_0)", "min(A_2, B_1)", "B_2"),
      "O3": ("min(A_2, B_1, C_0)", "min(B_2, C_1)", "C_2")}),
    ("""def f(float(A_0, A_1, A_2) A, float(B_0, B_1, B_2) B, float(C_0, C_1, C_2) C)
          -> (O1, O2, O3) {
          O1(i, j) +=! A(i, j, k)
          O2(j, k, l) +=! B(j, k, l) + O1(i, j)
          O3(k, l, m) +=! C(k, l, m) + O2(j, k, l)
        }""",
     {"O1": ("A_0", "A_1"), "O2": ("min(A_1, B_0)", "B_1", "B_2"),
      "O3": ("min(B_1, C_0)", "min(B_2, C_1)", "C_2")}),
    ("def f(float(10, 19, 10) I) -> (O) { O(i, j) = I(i, i + j, j) }", {"O": ("10", "10")}),
    ("def f(float(N,C,H,W) I, float(M,C,KH,KW) W1) -> (O) "
     "{ O(n, m, h, w) +=! I(n, c, 2*h + kh, 2*w + kw) * W1(m, c, kh, kw) }",
     {"O": ("N", "M", "(H - KH)/2 + 1", "(W - KW)/2 + 1")}),
])
def test_tc_inference_cases(source, expected):
    assert shapes(frontend(source)) == expected


@pytest.mark.parametrize("source, index", [
    ("def f(float(I_0, I_1, I_2, I_3, I_4) I) -> (O) { O(i, j, k, l, m) = I(j, i, k, i, l) }", "m"),
    ("def f(float(I_0, I_1, I_2) A) -> (O) { O(i) +=! A(i + j, i + j, i + j) }", "i"),
    ("def f(float(N, M) I) -> (O) { O(i, j) = I(10 + i - j, i + j) }", "i"),
    ("def f() -> (O) { O(i, j) = 3 }", "i"),
])
def test_unresolvable_ranges_name_the_index(source, index):
    with pytest.raises(polyc.SemanticError) as error:
        frontend(source)
    assert f"range of index `{index}`" in str(error.value)
    assert f"where {index} in" in str(error.value)


def test_derived_size_becomes_a_precondition():
    op = frontend("def f(float(N, NM, M) I) -> (O) { O(i, j) = I(i, i + j, j) }")
    assert shapes(op) == {"O": ("N", "M")}
    assert len(op.preconditions) == 1
    assert "I(i, i + j, j)" in op.preconditions[0].description


@pytest.mark.parametrize("source, start", [
    ("def f(float(N, M) I) -> (O) { O(i, j) = I(i, j) where i in 3:N-1 }", "3:N - 1"),
    ("def f(float(I_0) I) -> (O) { O(i) = I(i - 1) }", "1:I_0 + 1"),
    ("def f(float(I_0) I) -> (O) { O(i) = I(i + 5) }", "-5:I_0 - 5"),
    ("def f() -> (O) { O(i, j) = 3 where i in 4:8, j in 3:20 }", "4:8"),
])
def test_output_ranges_must_start_at_zero(source, start):
    with pytest.raises(polyc.SemanticError) as error:
        frontend(source)
    message = str(error.value)
    assert start in message and "unwritten" in message and "start at 0" in message


def test_where_overrides_inference_and_fix_from_message_works():
    op = frontend("def f(float(N) I) -> (O) { O(i) = I(i + 1) where i in 0:N-1 }")
    assert shapes(op) == {"O": ("N - 1",)}
    assert op.preconditions == ()


def test_reduction_indices_and_domain_order():
    op = frontend("def mm(float(M,K) A, float(K,N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }")
    (stmt,) = op.statements
    assert stmt.reduction_indices == ("k",)
    assert [r.index for r in stmt.domain] == ["m", "n", "k"]
    assert ranges(stmt) == {"m": "0:M", "n": "0:N", "k": "0:K"}
    assert stmt.op == "+" and stmt.init


def test_zero_rank_output_and_scalar_input():
    op = frontend("def f(float alpha, float(N) X) -> (s) { s +=! alpha * X(i) }")
    assert op.outputs[0].shape == ()
    assert op.inputs[0].rank == 0
    assert op.statements[0].reduction_indices == ("i",)


def test_exists_and_let_bindings():
    op = frontend("""def f(float(N) A, float(M) B) -> (O) {
        O(i) = t * 2 where t = A(i) + 1, exists B(i)
    }""")
    assert shapes(op) == {"O": ("min(M, N)",)}
    assert "A(i) + 1" in str(op)


def test_dimension_specifier_and_size_as_value():
    op = frontend("def f(float(N, M) A) -> (B) { B(i, j) = A(i, j) * A.1 + N }")
    assert "A(i, j) * M + N" in str(op)


def test_temporaries_are_not_outputs():
    op = frontend("""def f(float(N, M) X) -> (Y) {
        m(i) max=! X(i, j)
        Y(i, j) = X(i, j) - m(i)
    }""")
    assert [t.name for t in op.temporaries] == ["m"]
    assert [t.name for t in op.outputs] == ["Y"]


def test_call_statement_is_inlined():
    op = frontend("""
    def helper(float(N) X) -> (Y, Z) {
        T(i) = X(i) * 2
        Y(i) = T(i) + 1
        Z(i) = T(i) - 1
    }
    def main(float(M) A) -> (P, Q) {
        P, Q = helper(A)
    }""", name="main")
    assert [t.name for t in op.outputs] == ["P", "Q"]
    assert [t.name for t in op.temporaries] == ["helper_T__1"]
    assert shapes(op)["P"] == ("M",)


# ----------------------------------------------------------------- types


@pytest.mark.parametrize("source, expected", [
    ("def f(float(N) A) -> (O) { O(i) = A(i) * 2.5 }", ty.FLOAT32),
    ("def f(double(N) A) -> (O) { O(i) = A(i) * 2.5 }", ty.FLOAT64),
    ("def f(int32(N) A) -> (O) { O(i) = A(i) * 2 }", ty.INT32),
    ("def f(int32(N) A) -> (O) { O(i) = A(i) * 2.5 }", ty.FLOAT32),
    ("def f(int8(N) A, int64(N) B) -> (O) { O(i) = A(i) + B(i) }", ty.INT64),
    ("def f(float(N) A, double(N) B) -> (O) { O(i) = A(i) + B(i) }", ty.FLOAT64),
    ("def f(float(N) A) -> (O) { O(i) = A(i) > 0 }", ty.BOOL),
    ("def f(int32(N) A) -> (O) { O(i) = exp(A(i)) }", ty.FLOAT32),
    ("def f(float16(N) A) -> (O) { O(i) = A(i) + 1 }", ty.FLOAT32),
    ("def f(float(N) A) -> (O) { O(i) = int32(A(i)) }", ty.INT32),
    ("def f(float(N) A) -> (O) { O(i) = i where i in 0:N }", ty.INT32),
    ("def f(float(N) A) -> (double O) { O(i) = A(i) }", ty.FLOAT64),
])
def test_output_types(source, expected):
    assert frontend(source).outputs[0].type == expected


def _float_types(e: ir.Expr) -> set:
    """The types of ``e``'s floating subexpressions."""
    return {part.type for part in ir.walk(e) if part.type.is_float}


@pytest.mark.parametrize("expression", [
    "A(i) * (1.0 / 9.0)", "A(i) + -(2.0 / 3.0)", "A(i) * sqrt(2.0)",
    "A(i) * (i > 2 ? 1.0 / 3.0 : 0.1)", "A(i) - (i + 0.1) / 7.0",
])
def test_literals_alone_are_computed_in_the_type_they_meet(expression):
    # a float64 product with 1.0 / 9.0 divides in float64: rounding 1/9 to float32 first
    # left a float64 operator (and the gradient of `x / 9.0`) float32's precision
    op = frontend(f"def f(double(N) A) -> (O) {{ O(i) = {expression} where i in 0:N }}")
    assert _float_types(op.statements[0].rhs) == {ty.FLOAT64}
    narrow = frontend(f"def f(float(N) A) -> (O) {{ O(i) = {expression} where i in 0:N }}")
    assert _float_types(narrow.statements[0].rhs) == {ty.FLOAT32}


@pytest.mark.parametrize("source", [
    "def f(double(N) A) -> (double O) { O(i) = 0.1 where i in 0:N }",
    "def f(double(N) A) -> (O) { T(i) = float64(0.1) where i in 0:N\n O(i) = A(i) * T(i) }",
    "def f(double(N) A) -> (O) { O(i) = A(i)\n O(i) += i > 2 ? 0.1 : 0.2 where i in 0:N }",
])
def test_literals_stored_in_float64_are_float64(source):
    # stored, cast or added: each took float32's rounding of 0.1 before
    op = frontend(source)
    assert all(_float_types(s.rhs) <= {ty.FLOAT64} for s in op.statements)
    assert all(t.type == ty.FLOAT64 for t in op.outputs + op.temporaries)


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize("source, fragment", [
    ("def f(float(N) A) -> (O) { O(i) = B(i) }", "unknown tensor or function `B`"),
    ("def f(float(N) A) -> (O) { O(i) = A(i, j) }", "has 1 dimension(s) but is indexed with 2"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) + sqrt(A(i), 2) }", "`sqrt` takes 1 argument"),
    ("def f(float(N, M) A) -> (O) { O(i) = A(i, j) }", "index `j` appears only on the right"),
    ("def f(float(N) A) -> (O) { A(i) = 1 where i in 0:N\n O(i) = A(i) }",
     "cannot assign to input `A`"),
    ("def f(float(N) A, float(N) A) -> (O) { O(i) = A(i) }", "duplicate parameter name `A`"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) }\ndef f(float(N) A) -> (O) { O(i) = A(i) }",
     "duplicate def name `f`"),
    ("def f(float(N) A) -> (O, P) { O(i) = A(i) }", "output `P` is never defined"),
    ("def f(float(N) A, float(M) X) -> (O) { O(i) +=! A(X(i)) }", "gather index of `A`"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) + P(i)\n P(i) = A(i) }", "unknown tensor or function `P`"),
    ("def f(float(N) A) -> (O, P) { O(i) = A(i) + P(i)\n P(i) = A(i) }",
     "output `P` is used before its definition"),
    ("def f(float(N) A) -> (O) { O(i, i) = A(i) }", "appears twice on the left-hand side"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) where i in 0:j }",
     "`j` in a range bound is neither a size variable nor an index"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) where k in 0:N }", "is not used"),
    ("def f(float(N) A) -> (O) { T(i) += A(i)\n O(i) = T(i) }", "use `+=!`"),
    ("def f(float(N) A) -> (O) { O(i) = A(i + N + 1) where i in 0:1 }",
     "for every choice of sizes"),
    ("def f(float(N) A) -> (float(M) O) { O(i) = A(i) }", "declared with shape (M)"),
    ("def f(float(N) A) -> (O) { O(i) = A(i) * A.3 }", "`A.3` does not exist"),
    ("def f(float(N) A) -> (O) { O(i) = exp }", "is a function"),
])
def test_semantic_errors(source, fragment):
    with pytest.raises(polyc.SemanticError) as error:
        frontend(source)
    assert fragment in str(error.value)
    assert error.value.line is not None and error.value.column is not None
    assert "^" in str(error.value)


def test_several_defs_need_a_name():
    source = "def f(float(N) A) -> (O) { O(i) = A(i) }\ndef g(float(N) A) -> (O) { O(i) = A(i) }"
    with pytest.raises(polyc.SemanticError, match="several operators"):
        frontend(source)
    assert frontend(source, name="g").name == "g"
    with pytest.raises(polyc.SemanticError, match="did you mean `g`"):
        frontend(source, name="gg")


# ----------------------------------------------------------------- derived extents


def test_an_input_extent_may_be_derived_from_sizes():
    op = analyze(parse("def f(float(N) x, float(K) w, float(N - K + 1) d) -> (y) "
                       "{ y(i) +=! x(i + k) * w(k) * d(i) }"))
    assert op.sizes == ("N", "K")
    assert sz.to_tc(op.inputs[2].shape[0]) == "N - K + 1"
    # sizes named later in the signature count too
    op = analyze(parse("def f(float(2 * N) a, float(N) b) -> (y) { y(i) = a(2 * i) + b(i) }"))
    assert op.sizes == ("N",)


@pytest.mark.parametrize("source, message", [
    ("def f(float(N) x, float(N - Q) d) -> (y) { y(i) = x(i) }",
     "`Q` in the extent of `d` is not a size"),
    ("def f(float(N+1) A) -> (B) { B(i) = A(i) }", "`N` in the extent of `A` is not a size"),
    ("def f(float(N) x, float(N * N) d) -> (y) { y(i) = x(i) }",
     "an affine expression of size variables"),
    ("def f(float(N) x, float(N, 1.5) d) -> (y) { y(i) = x(i) }",
     "a dimension must be an integer"),
])
def test_derived_extents_are_affine_in_named_sizes(source, message):
    with pytest.raises(PolycError, match=message):
        analyze(parse(source))


@pytest.mark.needs_cc
def test_a_wrong_derived_extent_is_an_argument_error():
    op = polyc.define("def f(float(N) x, float(K) w, float(N - K + 1) d) -> (y) "
                      "{ y(i) +=! x(i + k) * w(k) * d(i) }")
    x = np.arange(6, dtype=np.float32)
    with pytest.raises(polyc.ArgumentError, match=r"d: expected shape \(N - K \+ 1\) but "
                       r"d.shape\[0\] is 4: it must be N - K \+ 1 = 5"):
        op(x, np.ones(2, np.float32), np.ones(4, np.float32))
    sizes, _ = op.binder.sizes_of(((6,), (2,), (5,)))
    assert sizes == {"N": 6, "K": 2}
