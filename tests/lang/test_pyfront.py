"""The Python form of TC: each construct's syntax tree, parity with TC text, errors.

The operators below are plain functions read by ``program_from_function``;
none of them is ever called, so their bodies use names (indices, sizes,
temporaries) that Python never defines.
"""
# ruff: noqa: F821, F841
import math
import os

import numpy as np
import pytest

import polyc.lang.pyspelling as pc
from polyc.errors import ParseError
from polyc.lang import ast
from polyc.lang.pyfront import program_from_function
from polyc.lang.pyspelling import exists, f32, f64, i32, where
from polyc.lang.pyspelling import max as pmax
from polyc.lang.pyspelling import sum as psum

THIS_FILE = os.path.abspath(__file__)


def read(fn) -> ast.Def:
    program, name = program_from_function(fn)
    assert name == fn.__name__ == program.defs[-1].name
    return program.defs[-1]


def body(fn) -> tuple[ast.Stmt, ...]:
    return read(fn).body


def rhs(fn) -> ast.Expr:
    (stmt,) = body(fn)
    return stmt.rhs


def N(name):  # noqa: N802 - short constructors keep expected trees readable
    return ast.Name(name)


def num(value):
    return ast.Number(value, isinstance(value, float))


def app(name, *args):
    return ast.Apply(name, tuple(args))


def assign(tensor, indices, op, init, value, where=(), equivalent=None):
    return ast.Assign(tensor, tuple(indices), op, init, value, tuple(where), equivalent)


class FakeOp:
    """What ``@polyc.op`` returns, as far as the front end cares."""

    def __init__(self, fn):
        self._polyc_program = program_from_function(fn)


# ----------------------------------------------------------------- signature


def sig_matmul(A: pc.f32["M", "K"], B: pc.f32["K", 3], alpha: pc.f32, s: f64[()]):
    C[m, n] = A[m, 0]
    return C


def test_parameters_and_untyped_output():
    definition = read(sig_matmul)
    assert definition.params == (
        ast.Param("A", ast.TensorType("float32", ("M", "K"))),
        ast.Param("B", ast.TensorType("float32", ("K", 3))),
        ast.Param("alpha", ast.TensorType("float32", None)),
        ast.Param("s", ast.TensorType("float64", ())),
    )
    assert definition.outputs == (ast.OutputDecl("C", None),)


def sig_typed(A: i32["N"]) -> (pc.f32["N"], None, pc.i64):
    B[i] = A[i]
    C[i] = A[i]
    D = A[0]
    return B, C, D


def sig_typed_one(A: i32["N"]) -> pc.f64["N"]:
    B[i] = A[i]
    return (B)


def test_typed_outputs():
    assert read(sig_typed).outputs == (
        ast.OutputDecl("B", ast.TensorType("float32", ("N",))),
        ast.OutputDecl("C", None),
        ast.OutputDecl("D", ast.TensorType("int64", None)),
    )
    assert read(sig_typed_one).outputs == (
        ast.OutputDecl("B", ast.TensorType("float64", ("N",))),)


def test_type_specs():
    assert pc.f32 == pc.TensorTypeSpec("float32", None)
    assert pc.f32["N"] == pc.TensorTypeSpec("float32", ("N",))
    assert pc.bool_["N", 2].dims == ("N", 2)
    assert pc.u8.elem == "uint8" and pc.f16.elem == "float16" and pc.i64.elem == "int64"
    assert repr(pc.f32["M", 3]) == "polyc.f32['M', 3]"
    with pytest.raises(TypeError):
        pc.f32["N"]["M"]
    with pytest.raises(TypeError):
        pc.f32["N", -1]
    with pytest.raises(RuntimeError, match="only meaningful inside"):
        pc.f32(1.0)
    for marker in (pc.sum, pc.prod, pc.max, pc.min, pc.where, pc.exists):
        with pytest.raises(RuntimeError, match="only meaningful inside"):
            marker(1)


def doc_and_pass(A: f32["N"]):
    """A docstring."""
    pass
    B[i] = A[i]
    ...
    return B


def test_docstrings_pass_and_ellipsis_are_ignored():
    assert body(doc_and_pass) == (assign("B", "i", "=", False, app("A", N("i"))),)


# ----------------------------------------------------------------- statements


def st_first_write(A: f32["N", "K"]):
    C[n] += A[n, k]
    C[n] += 1
    D[n] *= A[n, k]
    D[n] *= 2
    s += A[n, k]
    return C, D, s


def test_augmented_assignment_first_write_initialises():
    assert body(st_first_write) == (
        assign("C", "n", "+=", True, app("A", N("n"), N("k"))),
        assign("C", "n", "+=", False, num(1)),
        assign("D", "n", "*=", True, app("A", N("n"), N("k"))),
        assign("D", "n", "*=", False, num(2)),
        assign("s", (), "+=", True, app("A", N("n"), N("k"))),
    )


def st_markers(A: f32["N", "K"]):
    C[n] = psum(A[n, k])
    C[n] = pc.sum(A[n, k], init=False)
    C[n] = pc.sum(A[n, k], init=True)
    P[n] = pc.prod(A[n, k])
    P[n] = pc.prod(A[n, k], init=False)
    X[n] = pmax(A[n, k])
    X[n] = pc.max(A[n, k], init=False)
    Y[n] = pc.min(A[n, k])
    Y[n] = pc.min(A[n, k], init=False)
    Z[n] = pc.max(A[n, 0], A[n, 1])
    return C


def test_reduction_markers():
    a = app("A", N("n"), N("k"))
    assert body(st_markers) == (
        assign("C", "n", "+=", True, a),
        assign("C", "n", "+=", False, a),
        assign("C", "n", "+=", True, a),
        assign("P", "n", "*=", True, a),
        assign("P", "n", "*=", False, a),
        assign("X", "n", "max=", True, a),
        assign("X", "n", "max=", False, a),
        assign("Y", "n", "min=", True, a),
        assign("Y", "n", "min=", False, a),
        assign("Z", "n", "=", False, app("max", app("A", N("n"), num(0)),
                                         app("A", N("n"), num(1)))),
    )


def st_zero_rank(A: f32["N"]):
    s = A[0]
    t[()] = A[0]
    u = A[()]
    return s


def test_zero_rank_assignments():
    assert body(st_zero_rank) == (
        assign("s", (), "=", False, app("A", num(0))),
        assign("t", (), "=", False, app("A", num(0))),
        assign("u", (), "=", False, app("A")),
    )


def st_where(A: f32["N"], I: i32["N"]):
    with pc.where(i in range(1, N), j in range(N)):
        B[i, j] = A[i] * t
        with where((t := A[j]), exists(A[I[i]])), pc.where(u == 2 * t):
            C[i] = u
    D[i] = A[i]
    return B


def test_where_blocks_accumulate_and_end():
    ranges = (ast.RangeClause("i", num(1), N("N")), ast.RangeClause("j", num(0), N("N")))
    inner = (ast.LetClause("t", app("A", N("j"))),
             ast.ExistsClause(app("A", app("I", N("i")))),
             ast.LetClause("u", ast.Binary("*", num(2), N("t"))))
    assert body(st_where) == (
        assign("B", "ij", "=", False, ast.Binary("*", app("A", N("i")), N("t")), ranges),
        assign("C", "i", "=", False, N("u"), ranges + inner),
        assign("D", "i", "=", False, app("A", N("i"))),
    )


def st_equivalent(A: f32["M", "K"], B: f32["K", "N"]):
    with pc.where(m in range(0, M), equivalent="matmul(A, B)"):
        C[m, n] += A[m, k] * B[k, n]
    return C


def test_equivalent():
    pytest.importorskip("polyc.lang.parser")
    (stmt,) = body(st_equivalent)
    assert stmt.equivalent == app("matmul", N("A"), N("B"))
    assert stmt.where == (ast.RangeClause("m", num(0), N("M")),)


# ----------------------------------------------------------------- expressions


def ex_arith(A: f32["N"], alpha: f32):
    B[i] = -A[i] + 2 * alpha - 1.5 / A[i] % 3 + A[i] ** 2 + +A[i]
    return B


def test_arithmetic():
    a = app("A", N("i"))
    assert rhs(ex_arith) == ast.Binary(
        "+",
        ast.Binary("+",
                   ast.Binary("-",
                              ast.Binary("+", ast.Unary("-", a), ast.Binary("*", num(2),
                                                                          N("alpha"))),
                              ast.Binary("%", ast.Binary("/", num(1.5), a), num(3))),
                   app("pow", a, num(2))),
        a)


def ex_logic(A: f32["N"]):
    B[i] = (A[i] if A[i] > 0 and A[i] < 1 and not A[i] == 0.5 or i != 2 and i <= N
            else 0)
    return B


def test_logic_and_ternary():
    a = app("A", N("i"))
    cond = ast.Binary(
        "||",
        ast.Binary("&&", ast.Binary("&&", ast.Binary(">", a, num(0)), ast.Binary("<", a, num(1))),
                   ast.Unary("!", ast.Binary("==", a, num(0.5)))),
        ast.Binary("&&", ast.Binary("!=", N("i"), num(2)), ast.Binary("<=", N("i"), N("N"))))
    assert rhs(ex_logic) == ast.Ternary(cond, a, num(0))


def ex_literals(A: f32["N"]):
    B[i] = A[i] * 2 + .5 + 1e-5 + True + False + 3.0
    return B


def test_literals():
    expr = rhs(ex_literals)
    leaves = []
    while isinstance(expr, ast.Binary):
        leaves.append(expr.rhs)
        expr = expr.lhs
    leaves.reverse()
    assert leaves == [num(2), num(0.5), ast.Number(1e-5, True), num(1), num(0), num(3.0)]
    assert [leaf.is_float for leaf in leaves] == [False, True, True, False, False, True]


def ex_functions(A: f32["N"], I: i32["N"]):
    B[i] = math.exp(A[i]) + np.fmax(A[i], 0) + pc.tanh(A[i]) + max(A[i], 1) + min(A[i], 2) \
        + abs(A[i]) + log(A[i]) + pc.f32(I[i]) + i32(A[i]) + float(I[i])
    return B


def test_functions_and_casts():
    a = app("A", N("i"))
    expr = rhs(ex_functions)
    terms = []
    while isinstance(expr, ast.Binary):
        terms.append(expr.rhs)
        expr = expr.lhs
    terms.append(expr)
    assert terms[::-1] == [app("exp", a), app("fmax", a, num(0)), app("tanh", a),
                           app("max", a, num(1)), app("min", a, num(2)), app("abs", a),
                           app("log", a), app("float32", app("I", N("i"))), app("int32", a),
                           app("float", app("I", N("i")))]


def ex_gather_and_dims(LUT: f32["V", "E"], I: i32["B", "L"]):
    O[b, l, d] = LUT[I[b, l], d] * LUT.shape[1] + N
    return O


def test_gather_dimension_query_and_size_value():
    assert rhs(ex_gather_and_dims) == ast.Binary(
        "+",
        ast.Binary("*", app("LUT", app("I", N("b"), N("l")), N("d")), ast.DimOf("LUT", 1)),
        N("N"))


# ----------------------------------------------------------------- spans


def keep(fn):
    return fn


class Holder:
    @staticmethod
    @keep  # decorator lines are not part of the operator's source
    def indented(A: f32["N"]):
        B[i] = A[i] * 2.0  # SPAN:indented
        return B


def _line_of(marker: str) -> int:
    with open(THIS_FILE, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            if line.rstrip().endswith(marker):
                return number
    raise AssertionError(marker)


def _text_at(span) -> str:
    assert span.line == span.end_line
    return span.source.line_text(span.line)[span.col - 1:span.end_col - 1]


def test_spans_point_into_this_file():
    program, _ = program_from_function(sig_matmul)
    definition = program.defs[0]
    assert definition.span.source.filename == THIS_FILE
    assert definition.span.line == sig_matmul.__code__.co_firstlineno
    assert _text_at(definition.name_span) == "sig_matmul"
    assert _text_at(definition.params[0].span) == 'A: pc.f32["M", "K"]'
    assert _text_at(definition.params[0].type.span) == 'pc.f32["M", "K"]'
    (stmt,) = definition.body
    assert _text_at(stmt.span) == "C[m, n] = A[m, 0]"
    assert _text_at(stmt.lhs_span) == "C[m, n]"
    assert _text_at(stmt.rhs.span) == "A[m, 0]"
    assert _text_at(stmt.rhs.name_span) == "A"
    assert _text_at(stmt.rhs.args[1].span) == "0"
    assert _text_at(definition.outputs[0].span) == "C"


def test_spans_of_an_indented_function_keep_the_file_columns():
    definition = read(Holder.indented)
    (stmt,) = definition.body
    line = _line_of("# SPAN:indented")
    assert stmt.span.line == line and definition.span.line == line - 1
    assert stmt.span.col == 9
    assert _text_at(stmt.rhs.span) == "A[i] * 2.0"
    assert _text_at(stmt.rhs.rhs.span) == "2.0"
    assert _text_at(definition.name_span) == "indented"


def test_nested_function_with_a_flush_left_docstring():
    def nested(A: f32["N"]):
        """Doubles A.

Continuation lines at column 0 defeat textwrap.dedent.
        """
        B[i] = A[i] // 2  # ERR:nested
        return B

    with pytest.raises(ParseError) as info:
        program_from_function(nested)
    assert info.value.line == _line_of("# ERR:nested")
    assert str(info.value).splitlines()[1:] == [
        "            B[i] = A[i] // 2  # ERR:nested",
        "                   ^~~~~~~~~"]


def test_every_node_has_a_span():
    for fn in (st_where, ex_logic, ex_functions, ex_gather_and_dims, st_markers):
        _check_spans(read(fn))


def _check_spans(node):
    if isinstance(node, tuple):
        for item in node:
            _check_spans(item)
        return
    if not hasattr(node, "__dataclass_fields__"):
        return
    if hasattr(node, "span"):
        assert node.span is not None and node.span.source is not None, node
        assert node.span.source.filename == THIS_FILE
    for name in node.__dataclass_fields__:
        if name != "span":
            _check_spans(getattr(node, name))


# ----------------------------------------------------------------- call statements


def callee_moments(X: f32["N", "D"]):
    S[n] += X[n, d]
    Q[n] += X[n, d] * X[n, d]
    return S, Q


moments_op = FakeOp(callee_moments)


def callee_square(X: f32["N", "D"]):
    Y[n, d] = X[n, d] * X[n, d]
    return Y


def callee_wrap(X: f32["N", "D"]):
    S, Q = moments_op(X)
    return S, Q


wrap_op = FakeOp(callee_wrap)


def caller_twice(X: f32["N", "D"]):
    S1, Q1 = moments_op(X)
    S2, Q2 = wrap_op(X)
    return S1, Q2


def test_call_statements_include_callee_defs_once():
    program, name = program_from_function(caller_twice)
    assert [d.name for d in program.defs] == ["callee_moments", "callee_wrap", "caller_twice"]
    assert program.defs[-1].body == (
        ast.CallStmt(("S1", "Q1"), "callee_moments", ("X",)),
        ast.CallStmt(("S2", "Q2"), "callee_wrap", ("X",)),
    )


def test_single_target_call_and_closures():
    square_op = FakeOp(callee_square)

    def caller(X: f32["N", "D"]):
        Y = square_op(X)
        Z[n, d] = Y[n, d] + 1
        return Z

    program, _ = program_from_function(caller)
    assert [d.name for d in program.defs] == ["callee_square", "caller"]
    assert program.defs[-1].body[0] == assign("Y", (), "=", False,
                                              app("callee_square", N("X")))


# ----------------------------------------------------------------- parity with TC text


def tc_matmul(A: pc.f32["M", "K"], B: pc.f32["K", "N"]):
    C[m, n] += A[m, k] * B[k, n]
    return C


def tc_fc_relu(I: f32["B", "M"], W1: f32["N", "M"], B1: f32["N"]):
    O1[b, n] += I[b, m] * W1[n, m]
    O1[b, n] = O1[b, n] + B1[n]
    O1[b, n] = np.fmax(O1[b, n], 0)
    return O1


def tc_conv2d(I: f32["N", "C", "H", "W"], W1: f32["F", "C", "KH", "KW"]):
    O[n, f, h, w] += I[n, c, h + kh, w + kw] * W1[f, c, kh, kw]
    return O


def tc_avgpool(I: f32["B", "C", "H", "W"]):
    with pc.where(kh in range(0, 2), kw in range(2)):
        O[b, c, h, w] += I[b, c, 2 * h + kh, 2 * w + kw] / 4.0
    return O


def tc_softmax(I: f32["N", "D"]):
    mx[n] = pc.max(I[n, d])
    e[n, d] = math.exp(I[n, d] - mx[n])
    sm[n] = pc.sum(e[n, d])
    O[n, d] = e[n, d] / sm[n]
    return O


def tc_layernorm(X: f32["N", "D"], G: f32["D"], Bt: f32["D"], eps: f32):
    mean[n] += X[n, d] / D
    var[n] += (X[n, d] - mean[n]) * (X[n, d] - mean[n]) / D
    Y[n, d] = (X[n, d] - mean[n]) / math.sqrt(var[n] + eps) * G[d] + Bt[d]
    return Y


def tc_embedding(LUT: f32["V", "E"], I: i32["Bs", "L"]):
    O[b, l, d] = LUT[I[b, l], d]
    return O


def tc_leaky_relu(A: f32["N"], alpha: f32):
    O[i] = A[i] if A[i] > 0 else alpha * A[i]
    return O


def tc_total(A: f32["N"]):
    s += A[i]
    return s


def tc_dim_query(A: f32["M", "K"]):
    O[m] += A[m, k] / A.shape[1]
    return O


def tc_binding(X: f32["N"]):
    with pc.where(t == 0.5 * X[i]):
        Y[i] = t * (1.0 + tanh(t))
    return Y


def tc_binding_walrus(X: f32["N"]):
    with pc.where((t := 0.5 * X[i])):
        Y[i] = t * (1.0 + tanh(t))
    return Y


def tc_minmax(A: f32["N", "K"]) -> (f32["N"], None):
    mx[n] = pc.max(A[n, k])
    mx[n] = pc.max(A[n, k] * 2, init=False)
    mn[n] = pc.min(A[n, k])
    mn[n] = pc.min(-A[n, k], init=False)
    return mx, mn


def tc_misc(A: f32["N"], I: i32["N"]):
    O[i] = pc.f32(I[i]) if A[i] > 0 and A[i] < 1 or not (I[i] == 2) else A[i] ** 2
    O[i] += 1
    with pc.where(i in range(0, N)):
        P[i] *= A[i]
    P[i] *= 2.0
    return O, P


def tc_equivalent(A: f32["M", "K"], B: f32["K", "N"]):
    with pc.where(m in range(0, M), equivalent="matmul(A, B)"):
        C[m, n] += A[m, k] * B[k, n]
    return C


def tc_caller(X: f32["N", "D"]):
    S1, Q1 = moments_op(X)
    O[n] = Q1[n] / D - S1[n] * S1[n] / (D * D)
    return O


PARITY = [
    (tc_matmul, """
     def tc_matmul(float32(M, K) A, float32(K, N) B) -> (C) {
       C(m, n) +=! A(m, k) * B(k, n)
     }"""),
    (tc_fc_relu, """
     def tc_fc_relu(float32(B, M) I, float32(N, M) W1, float32(N) B1) -> (O1) {
       O1(b, n) +=! I(b, m) * W1(n, m)
       O1(b, n) = O1(b, n) + B1(n)
       O1(b, n) = fmax(O1(b, n), 0)
     }"""),
    (tc_conv2d, """
     def tc_conv2d(float32(N, C, H, W) I, float32(F, C, KH, KW) W1) -> (O) {
       O(n, f, h, w) +=! I(n, c, h + kh, w + kw) * W1(f, c, kh, kw)
     }"""),
    (tc_avgpool, """
     def tc_avgpool(float32(B, C, H, W) I) -> (O) {
       O(b, c, h, w) +=! I(b, c, 2 * h + kh, 2 * w + kw) / 4.0 where kh in 0:2, kw in 0:2
     }"""),
    (tc_softmax, """
     def tc_softmax(float32(N, D) I) -> (O) {
       mx(n) max=! I(n, d)
       e(n, d) = exp(I(n, d) - mx(n))
       sm(n) +=! e(n, d)
       O(n, d) = e(n, d) / sm(n)
     }"""),
    (tc_layernorm, """
     def tc_layernorm(float32(N, D) X, float32(D) G, float32(D) Bt, float32 eps) -> (Y) {
       mean(n) +=! X(n, d) / D
       var(n) +=! (X(n, d) - mean(n)) * (X(n, d) - mean(n)) / D
       Y(n, d) = (X(n, d) - mean(n)) / sqrt(var(n) + eps) * G(d) + Bt(d)
     }"""),
    (tc_embedding, """
     def tc_embedding(float32(V, E) LUT, int32(Bs, L) I) -> (O) {
       O(b, l, d) = LUT(I(b, l), d)
     }"""),
    (tc_leaky_relu, """
     def tc_leaky_relu(float32(N) A, float32 alpha) -> (O) {
       O(i) = A(i) > 0 ? A(i) : alpha * A(i)
     }"""),
    (tc_total, """
     def tc_total(float32(N) A) -> (s) {
       s +=! A(i)
     }"""),
    (tc_dim_query, """
     def tc_dim_query(float32(M, K) A) -> (O) {
       O(m) +=! A(m, k) / A.1
     }"""),
    (tc_binding, """
     def tc_binding(float32(N) X) -> (Y) {
       Y(i) = t * (1.0 + tanh(t)) where t = 0.5 * X(i)
     }"""),
    (tc_binding_walrus, """
     def tc_binding_walrus(float32(N) X) -> (Y) {
       Y(i) = t * (1.0 + tanh(t)) where t = 0.5 * X(i)
     }"""),
    (tc_minmax, """
     def tc_minmax(float32(N, K) A) -> (float32(N) mx, mn) {
       mx(n) max=! A(n, k)
       mx(n) max= A(n, k) * 2
       mn(n) min=! A(n, k)
       mn(n) min= -A(n, k)
     }"""),
    (tc_misc, """
     def tc_misc(float32(N) A, int32(N) I) -> (O, P) {
       O(i) = A(i) > 0 && A(i) < 1 || !(I(i) == 2) ? float32(I(i)) : pow(A(i), 2)
       O(i) += 1
       P(i) *=! A(i) where i in 0:N
       P(i) *= 2.0
     }"""),
    (tc_equivalent, """
     def tc_equivalent(float32(M, K) A, float32(K, N) B) -> (C) {
       C(m, n) +=! A(m, k) * B(k, n) <=> matmul(A, B) where m in 0:M
     }"""),
    (tc_caller, """
     def callee_moments(float32(N, D) X) -> (S, Q) {
       S(n) +=! X(n, d)
       Q(n) +=! X(n, d) * X(n, d)
     }
     def tc_caller(float32(N, D) X) -> (O) {
       S1, Q1 = callee_moments(X)
       O(n) = Q1(n) / D - S1(n) * S1(n) / (D * D)
     }"""),
]


@pytest.mark.parametrize("fn, tc_text", PARITY, ids=[fn.__name__ for fn, _ in PARITY])
def test_parity_with_tc_text(fn, tc_text):
    parser = pytest.importorskip("polyc.lang.parser")
    expected = parser.parse(tc_text)
    program, name = program_from_function(fn)
    assert name == fn.__name__
    assert program.defs == expected.defs


@pytest.mark.parametrize("fn", [fn for fn, _ in PARITY], ids=[fn.__name__ for fn, _ in PARITY])
def test_python_form_passes_sema(fn):
    pytest.importorskip("polyc.lang.parser")  # equivalent= and sema's callers need it
    from polyc.lang.sema import analyze

    program, name = program_from_function(fn)
    op = analyze(program, name)
    assert op.name == fn.__name__


# ----------------------------------------------------------------- errors


def bad_floordiv(A: f32["N"]):
    B[i] = A[i] // 2  # ERR:floordiv
    return B


def bad_chain(A: f32["N"]):
    B[i] = 0 < A[i] < 1  # ERR:chain
    return B


def bad_for(A: f32["N"]):
    for i in range(N):  # ERR:for
        B[i] = A[i]
    return B


def bad_if(A: f32["N"]):
    if N > 2:  # ERR:if
        B[i] = A[i]
    return B


def bad_lambda(A: f32["N"]):
    B[i] = (lambda x: x)(A[i])  # ERR:lambda
    return B


def bad_slice(A: f32["N"]):
    B[i] = A[1:]  # ERR:slice
    return B


def bad_keyword(A: f32["N"]):
    B[i] = exp(A[i], base=2)  # ERR:keyword
    return B


def bad_starred(A: f32["N"]):
    B[i] = exp(*A)  # ERR:starred
    return B


def bad_attribute(A: f32["N"]):
    B[i] = A.T  # ERR:attribute
    return B


def bad_import(A: f32["N"]):
    import os  # ERR:import
    return A


def bad_no_annotation(A: f32["N"], alpha):  # ERR:annotation
    B[i] = A[i] * alpha
    return B


def bad_no_return(A: f32["N"]):
    B[i] = A[i]  # ERR:return


def bad_return_expr(A: f32["N"]):
    B[i] = A[i]
    return B[0]  # ERR:return-expr


def bad_builtin_sum(A: f32["N"]):
    s = sum(A[i])  # ERR:builtin-sum
    return s


def bad_nested_reduction(A: f32["N"]):
    s = 1 + pc.sum(A[i])  # ERR:nested-reduction
    return s


def bad_minus_equals(A: f32["N"]):
    B[i] -= A[i]  # ERR:minus-equals
    return B


def bad_where_clause(A: f32["N"]):
    with pc.where(i < N):  # ERR:where-clause
        B[i] = A[i]
    return B


def bad_with(A: f32["N"]):
    with open("x"):  # ERR:with
        B[i] = A[i]
    return B


def bad_unresolved_where(A: f32["N"]):
    with polyx.where(i in range(0, N)):  # ERR:unresolved-where
        B[i] = A[i]
    return B


def bad_early_return(A: f32["N"]):
    return A  # ERR:early-return
    B[i] = A[i]


def bad_where_keyword(A: f32["N"]):
    with pc.where(i in range(0, N), equal="matmul(A)"):  # ERR:where-keyword
        B[i] = A[i]
    return B


def bad_init(A: f32["N"]):
    s = pc.sum(A[i], init=0)  # ERR:init
    return s


def bad_range_step(A: f32["N"]):
    with pc.where(i in range(0, N, 2)):  # ERR:range-step
        B[i] = A[i]
    return B


def bad_call_in_where(X: f32["N", "D"]):
    with pc.where(n in range(0, N)):
        S, Q = moments_op(X)  # ERR:call-in-where
    return S


def bad_lhs_index(A: f32["N"]):
    B[i + 1] = A[i]  # ERR:lhs-index
    return B


def bad_call_tensor(A: f32["N"]):
    B[i] = A(i)  # ERR:call-tensor
    return B


def bad_unicode(A: f32["N"]):
    Bé[i] = A[i] // 2  # ERR:unicode
    return Bé


def bad_op_in_expression(X: f32["N", "D"]):
    S = 1 + moments_op(X)  # ERR:op-expression
    return S


ERRORS = [
    (bad_floordiv, "ERR:floordiv", "A[i] // 2", "use / (C semantics"),
    (bad_chain, "ERR:chain", "0 < A[i] < 1", "write `0 < A[i] and A[i] < 1`"),
    (bad_for, "ERR:for", None, "`for` loops are not TC"),
    (bad_if, "ERR:if", None, "conditional expression `a if c else b`"),
    (bad_lambda, "ERR:lambda", "lambda x: x", "`lambda` is not TC"),
    (bad_slice, "ERR:slice", "1:", "slices are not TC"),
    (bad_keyword, "ERR:keyword", "base=2", "keyword arguments are not TC"),
    (bad_starred, "ERR:starred", "*A", "starred"),
    (bad_attribute, "ERR:attribute", "A.T", "only `T.shape[k]`"),
    (bad_import, "ERR:import", "import os", "imports are not TC"),
    (bad_no_annotation, "ERR:annotation", "alpha", "parameter `alpha` needs a type"),
    (bad_no_return, "ERR:return", "B[i] = A[i]", "`return C`"),
    (bad_return_expr, "ERR:return-expr", "B[0]", "by name"),
    (bad_builtin_sum, "ERR:builtin-sum", "sum(A[i])", "polyc.sum(e)"),
    (bad_nested_reduction, "ERR:nested-reduction", "pc.sum(A[i])", "whole right-hand side"),
    (bad_minus_equals, "ERR:minus-equals", "B[i] -= A[i]", "`-=` is not TC"),
    (bad_where_clause, "ERR:where-clause", "i < N", "not a where clause"),
    (bad_with, "ERR:with", 'open("x")', "polyc.where"),
    (bad_unresolved_where, "ERR:unresolved-where", "polyx.where", "not polyc.where here"),
    (bad_early_return, "ERR:early-return", "return A", "must be the last statement"),
    (bad_where_keyword, "ERR:where-keyword", 'equal="matmul(A)"', "`equivalent="),
    (bad_init, "ERR:init", "0", "literal True or False"),
    (bad_range_step, "ERR:range-step", "range(0, N, 2)", "step 1"),
    (bad_call_in_where, "ERR:call-in-where", "S, Q = moments_op(X)", "inside polyc.where"),
    (bad_lhs_index, "ERR:lhs-index", "i + 1", "index names"),
    (bad_call_tensor, "ERR:call-tensor", "A(i)", "`A[i]`"),
    (bad_unicode, "ERR:unicode", "A[i] // 2", "use /"),
    (bad_op_in_expression, "ERR:op-expression", "moments_op(X)", "whole statement"),
]


@pytest.mark.parametrize("fn, marker, culprit, message", ERRORS,
                         ids=[marker for _, marker, _, _ in ERRORS])
def test_errors_point_at_the_culprit(fn, marker, culprit, message):
    with pytest.raises(ParseError) as info:
        program_from_function(fn)
    err = info.value
    assert message in err.message
    assert err.span.source.filename == THIS_FILE
    assert err.line == _line_of(f"# {marker}")
    head, text, carets = str(err).split("\n")
    assert head.startswith(f"{THIS_FILE}:{err.line}:{err.column}: ")
    start = carets.index("^")
    underlined = text[start:len(carets)]
    if culprit is not None:
        assert underlined == culprit
    else:
        assert underlined.strip()


def test_error_column_counts_characters_not_bytes():
    with pytest.raises(ParseError) as info:
        program_from_function(bad_unicode)
    line = open(THIS_FILE, encoding="utf-8").read().splitlines()[info.value.line - 1]
    assert info.value.column == line.index("A[i] //") + 1


POSTPONED = '''from __future__ import annotations
import polyc.lang.pyspelling as polyc


def good(A: polyc.f32[M, "K"]) -> polyc.f32:
    s += A[i, k]
    return s


def bad(A: polyc.f32["M", 1.5]):
    return A
'''


def test_postponed_annotations_are_read_from_the_source(tmp_path, monkeypatch):
    (tmp_path / "postponed_op.py").write_text(POSTPONED)
    monkeypatch.syspath_prepend(str(tmp_path))
    import postponed_op

    with pytest.raises(ParseError) as info:
        program_from_function(postponed_op.good)
    assert 'write size names as strings: "M"' in info.value.message
    assert info.value.span.source.filename == str(tmp_path / "postponed_op.py")
    assert (info.value.line, info.value.column) == (5, POSTPONED.splitlines()[4].index("M,") + 1)
    with pytest.raises(ParseError, match="a dimension must be a size name") as info:
        program_from_function(postponed_op.bad)
    assert (info.value.line, info.value.column) == (10, POSTPONED.splitlines()[9].index("1.5") + 1)


def test_with_the_polyc_namespace_and_decorator():
    polyc = pytest.importorskip("polyc")
    if not hasattr(polyc, "op"):
        pytest.skip("polyc.op is not there yet")
    from polyc import f32 as F32

    @polyc.op
    def rowstats(X: polyc.f32["N", "D"]):
        S[n] = polyc.sum(X[n, d])
        M[n] = polyc.max(X[n, d])
        return S, M

    @polyc.op
    def centered(X: F32["N", "D"]):
        S, M = rowstats(X)
        with polyc.where(n in range(0, X.shape[0])):
            O[n, d] = X[n, d] - S[n] / D + polyc.f32(M[n] > 0)
        return O

    program, name = centered._polyc_program
    assert name == "centered"
    assert [d.name for d in program.defs] == ["rowstats", "centered"]
    first, second = program.defs[-1].body
    assert first == ast.CallStmt(("S", "M"), "rowstats", ("X",))
    assert second.where == (ast.RangeClause("n", num(0), ast.DimOf("X", 0)),)
    assert second.rhs.rhs == app("float32", ast.Binary(">", app("M", N("n")), num(0)))


def test_function_without_source():
    namespace = {}
    exec("def f(A):\n    return A\n", namespace)
    with pytest.raises(ParseError, match="cannot read the source"):
        program_from_function(namespace["f"])
