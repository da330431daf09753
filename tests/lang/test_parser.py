"""Tests of the TC lexer and parser: every construct, every error, and fuzzing."""
from __future__ import annotations

import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from polyc.errors import ParseError, Source
from polyc.lang import ast
from polyc.lang.lexer import END, IDENT, KEYWORD, NUMBER, OPERATOR, tokenize
from polyc.lang.parser import MAX_NESTING, parse, parse_expression
from polyc.lang.types import TYPE_NAMES

EXAMPLES = {
    "matmul": """def matmul(float(M,K) A, float(K,N) B) -> (C) {
  C(m, n) +=! A(m, k) * B(k, n)
}""",
    "fcrelu": """def fcrelu(float(B,M) I, float(N,M) W1, float(N) B1) -> (O1) {
  O1(b, n) +=! I(b, m) * W1(n, m)
  O1(b, n) = O1(b, n) + B1(n)
  O1(b, n) = fmax(O1(b, n), 0)
}""",
    "conv": """def conv(float(N,C,H,W) I, float(M,C,KH,KW) W1) -> (O) {
  O(n, m, h, w) +=! I(n, c, h + kh, w + kw) * W1(m, c, kh, kw)
}""",
    "avgpool": """def avgpool(float(B, C, H, W) input) -> (output) {
  output(b, c, h, w) +=! input(b, c, h * 2 + kh, w * 2 + kw) / (2 * 2) where kh in 0:2, kw in 0:2
}""",
    "softmax": """def softmax(float(N, D) I) -> (O, expsum, maxVal) {
  maxVal(n) max=! I(n, d)
  expsum(n) +=! exp(I(n, d) - maxVal(n))
  O(n, d) = exp(I(n, d) - maxVal(n)) / expsum(n)
}""",
    "scal": "def scal(float alpha, float(N) X) -> (Y) { Y(i) = alpha * X(i) }",
    "total": "def total(float(N) X) -> (s) { s +=! X(i) }",
    "emb": "def emb(float(E, D) LUT, int32(B, L) I) -> (O) "
           "{ O(b, d) +=! LUT(I(b, l), d) <=> gather(LUT, I) }",
    "relu_or": "def relu_or(double(N) X) -> (Y) { Y(i) = X(i) > 0 ? X(i) : 0.01 * X(i) # leaky\n}",
    "shifted": "def shifted(float(N) I) -> (O) "
               "{ O(i) = I(i + 1) + t where i in 0:N-1, t = 2 * I(i) }",
    "dims": "def dims(float(N, M) A) -> (B) { B(i, j) = A(i, j) * A.1 + N where exists A(i, j) }",
    "two": "def two(float(N) X) -> (Y, Z) { Y, Z = helper(X) }",
}
ALL_EXAMPLES = "\n".join(EXAMPLES.values()) + "\n"


def sexp(e: ast.Expr) -> str:
    """A compact, fully parenthesised rendering of an expression tree."""
    if isinstance(e, ast.Name):
        return e.name
    if isinstance(e, ast.Number):
        return repr(e.value)
    if isinstance(e, ast.DimOf):
        return f"{e.tensor}.{e.dim}"
    if isinstance(e, ast.Unary):
        return f"({e.op} {sexp(e.operand)})"
    if isinstance(e, ast.Binary):
        return f"({e.op} {sexp(e.lhs)} {sexp(e.rhs)})"
    if isinstance(e, ast.Ternary):
        return f"(? {sexp(e.cond)} {sexp(e.then)} {sexp(e.other)})"
    if isinstance(e, ast.Apply):
        return f"{e.name}[{' '.join(sexp(a) for a in e.args)}]"
    raise TypeError(e)


def expr(text: str) -> str:
    return sexp(parse_expression(text))


def body(text: str, params: str = "float(N) A") -> tuple[ast.Stmt, ...]:
    return parse(f"def f({params}) -> (O) {{\n{text}\n}}").defs[0].body


def stmt(text: str) -> ast.Stmt:
    (statement,) = body(text)
    return statement


def parse_error(text: str, **kwargs) -> ParseError:
    with pytest.raises(ParseError) as info:
        parse(text, **kwargs)
    return info.value


def span_text(span) -> str:
    assert span.line == span.end_line, "multi-line span"
    return span.source.line_text(span.line)[span.col - 1:span.end_col - 1]


# ----------------------------------------------------------------- lexer


def test_tokens_kinds_and_texts():
    tokens = tokenize(Source("def f x1 _y in where exists 2 .5 <=> +=! max=! min= ->"))
    assert [(t.kind, t.text) for t in tokens] == [
        (KEYWORD, "def"), (IDENT, "f"), (IDENT, "x1"), (IDENT, "_y"), (KEYWORD, "in"),
        (KEYWORD, "where"), (KEYWORD, "exists"), (NUMBER, "2"), (NUMBER, ".5"),
        (OPERATOR, "<=>"), (OPERATOR, "+=!"), (OPERATOR, "max=!"), (OPERATOR, "min="),
        (OPERATOR, "->"), (END, "")]


@pytest.mark.parametrize("op", ["+", "-", "*", "/", "%", "==", "!=", "<", "<=", ">", ">=",
                                "&&", "||", "!", "?", ":", "(", ")", ",", ".", "=", "+=",
                                "*=", "<=>", "->", "{", "}", ";", "+=!", "*=!"])
def test_every_operator_is_one_token(op):
    tokens = tokenize(Source(f"a {op} b"))
    assert [t.text for t in tokens] == ["a", op, "b", ""]
    assert tokens[1].kind == OPERATOR


def test_max_and_min_are_identifiers_unless_followed_by_equals():
    texts = [t.text for t in tokenize(Source("max(a, b) max==c min=d maxx=e max=!f max =g"))]
    assert texts == ["max", "(", "a", ",", "b", ")", "max", "==", "c", "min=", "d",
                     "maxx", "=", "e", "max=!", "f", "max", "=", "g", ""]


def test_token_spans_count_from_first_line_and_column_one():
    source = Source("a\n  bb # c\n\tc", "x.tc", first_line=7)
    a, bb, c, end = tokenize(source)
    assert (a.span.line, a.span.col, a.span.end_line, a.span.end_col) == (7, 1, 7, 2)
    assert (bb.span.line, bb.span.col, bb.span.end_col) == (8, 3, 5)
    assert (c.span.line, c.span.col) == (9, 2)
    assert (end.span.line, end.span.col) == (9, 3)
    assert bb.span.source is source


def test_crlf_and_lone_cr_count_as_one_line_break():
    tokens = tokenize(Source("a\r\nb\rc\n\nd"))
    assert [t.span.line for t in tokens[:4]] == [1, 2, 3, 5]


def test_comments_may_hold_anything():
    tokens = tokenize(Source("a # ünïcödé @ $ & ` \nb#c"))
    assert [t.text for t in tokens] == ["a", "b", ""]


@pytest.mark.parametrize("char", ["@", "$", "&", "|", "`", "'", '"', "\\", "[", "]", "~", "^",
                                  "é", "λ", "\x00", "\u00a0"])
def test_stray_character_is_an_error_at_it(char):
    with pytest.raises(ParseError) as info:
        tokenize(Source(f"ab\n  x {char} y"))
    assert (info.value.line, info.value.column) == (2, 5)
    assert "unexpected character" in info.value.message
    if char.isprintable():
        assert f"'{char}'" in info.value.message


# ----------------------------------------------------------------- numbers


@pytest.mark.parametrize("text, value, is_float", [
    ("2", 2, False), ("0", 0, False), ("123456789012345678901234", 123456789012345678901234, False),
    ("0x1F", 31, False), ("0X1f", 31, False), ("0x0", 0, False),
    (".5", 0.5, True), ("1.", 1.0, True), ("1e-5", 1e-5, True), ("2.5E+3", 2500.0, True),
    ("1.0f", 1.0, True), ("1.F", 1.0, True), ("1e5", 1e5, True), ("1e+5f", 1e5, True),
    ("0.0", 0.0, True), ("00.5", 0.5, True), ("3.25e2", 325.0, True), (".5e1F", 5.0, True),
])
def test_number_literals(text, value, is_float):
    number = parse_expression(text)
    assert isinstance(number, ast.Number)
    assert number.value == value and type(number.value) is (float if is_float else int)
    assert number.is_float is is_float
    assert span_text(number.span) == text


@pytest.mark.parametrize("text, message", [
    ("1e", "invalid number literal '1e'"), ("2x", "invalid number literal '2x'"),
    ("1f", "invalid number literal '1f'"), ("0x", "invalid number literal '0x'"),
    ("1.5fx", "invalid number literal '1.5fx'"), ("0x1G", "invalid number literal '0x1G'"),
    ("010", "no octal literals"), ("1e999", "floating literal '1e999' is out of range"),
])
def test_bad_number_literals(text, message):
    with pytest.raises(ParseError) as info:
        parse_expression(f"a + {text}")
    assert message in info.value.message
    assert info.value.column == 5


# ----------------------------------------------------------------- expressions


@pytest.mark.parametrize("text, tree", [
    ("a + b * c", "(+ a (* b c))"),
    ("a * b + c", "(+ (* a b) c)"),
    ("a - b - c", "(- (- a b) c)"),
    ("a / b / c", "(/ (/ a b) c)"),
    ("a % b * c", "(* (% a b) c)"),
    ("a - (b - c)", "(- a (- b c))"),
    ("a < b + c", "(< a (+ b c))"),
    ("a + b <= c", "(<= (+ a b) c)"),
    ("a > b == c >= d", "(== (> a b) (>= c d))"),
    ("a == b != c", "(!= (== a b) c)"),
    ("a == b && c != d", "(&& (== a b) (!= c d))"),
    ("a || b && c", "(|| a (&& b c))"),
    ("a && b || c && d", "(|| (&& a b) (&& c d))"),
    ("a || b || c", "(|| (|| a b) c)"),
    ("-a * b", "(* (- a) b)"),
    ("!a && b", "(&& (! a) b)"),
    ("- -a", "(- (- a))"),
    ("!!a", "(! (! a))"),
    ("-!a", "(- (! a))"),
    ("+a", "a"),
    ("a - -b", "(- a (- b))"),
    ("a*-b", "(* a (- b))"),
    ("-(a + b)", "(- (+ a b))"),
    ("a ? b : c", "(? a b c)"),
    ("a ? b : c ? d : e", "(? a b (? c d e))"),
    ("a ? b ? c : d : e", "(? a (? b c d) e)"),
    ("a || b ? c + d : e * f", "(? (|| a b) (+ c d) (* e f))"),
    ("(a ? b : c) ? d : e", "(? (? a b c) d e)"),
    ("a ? b : (c ? d : e) + 1", "(? a b (+ (? c d e) 1))"),
    ("f()", "f[]"),
    ("f(a, b + 1, g(c))", "f[a (+ b 1) g[c]]"),
    ("max(a, b) + min(c, d)", "(+ max[a b] min[c d])"),
    ("max == b", "(== max b)"),
    ("float(a) / 2", "(/ float[a] 2)"),
    ("A.1", "A.1"),
    ("A.0 * 2", "(* A.0 2)"),
    ("A.10+B . 2", "(+ A.10 B.2)"),
    ("((a))", "a"),
    ("a+b*c-d/e%f", "(- (+ a (* b c)) (% (/ d e) f))"),
])
def test_precedence_and_associativity(text, tree):
    assert expr(text) == tree


def test_comments_inside_expressions_across_lines():
    text = "A(i, # first index\n j) +  # plus\n\n  # a whole comment line\n B(j)#end"
    assert expr(text) == "(+ A[i j] B[j])"


def test_expression_spans():
    e = parse_expression("x + foo(a, b) * (c - 1)")
    assert span_text(e.span) == "x + foo(a, b) * (c - 1)"
    product = e.rhs
    assert span_text(product.span) == "foo(a, b) * (c - 1)"
    assert span_text(product.lhs.span) == "foo(a, b)"
    assert span_text(product.lhs.name_span) == "foo"
    assert span_text(product.rhs.span) == "(c - 1)"
    ternary = parse_expression("-a ? T.1 : !b")
    assert span_text(ternary.span) == "-a ? T.1 : !b"
    assert span_text(ternary.cond.span) == "-a"
    assert span_text(ternary.then.span) == "T.1"
    assert span_text(ternary.other.span) == "!b"


def test_dim_of_needs_an_integer():
    for text in ("A.1e3", "A.x", "A.1.5f"):
        with pytest.raises(ParseError):
            parse_expression(text)


def test_parse_expression_places_its_text():
    e = parse_expression("\n  a + b", filename="op.py", first_line=40)
    assert (e.span.line, e.span.col) == (41, 3)
    assert e.span.location() == "op.py:41:3"


@pytest.mark.parametrize("text, message, col", [
    ("", "expected an expression but found end of input", 1),
    ("a b", "unexpected 'b' after the expression", 3),
    ("a +", "expected an expression but found end of input", 4),
    ("(a", "expected ')' but found end of input", 3),
    ("a ? b", "expected ':' but found end of input", 6),
    ("f(a,)", "expected an expression but found ')'", 5),
    ("where", "expected an expression but found 'where'", 1),
    ("a = b", "unexpected '=' after the expression", 3),
])
def test_parse_expression_errors(text, message, col):
    with pytest.raises(ParseError) as info:
        parse_expression(text)
    assert message in info.value.message
    assert info.value.column == col


# ----------------------------------------------------------------- statements


@pytest.mark.parametrize("written, op, init", [
    ("=", "=", False), ("+=", "+=", False), ("*=", "*=", False), ("max=", "max=", False),
    ("min=", "min=", False), ("+=!", "+=", True), ("*=!", "*=", True), ("max=!", "max=", True),
    ("min=!", "min=", True),
])
def test_assignment_operators(written, op, init):
    assign = stmt(f"O(i, j) {written} A(i) * 2")
    assert assign == ast.Assign("O", ("i", "j"), op, init,
                                ast.Binary("*", ast.Apply("A", (ast.Name("i"),)), ast.Number(2,
                                                                                            False)))
    assert span_text(assign.span) == f"O(i, j) {written} A(i) * 2"
    assert span_text(assign.lhs_span) == "O(i, j)"


def test_reduction_operators_without_spaces():
    assign = stmt("O(i)max=!A(i,j)")
    assert (assign.op, assign.init) == ("max=", True)
    assert sexp(assign.rhs) == "A[i j]"


def test_zero_rank_lhs_and_empty_parentheses():
    assert stmt("s +=! A(i)").indices == ()
    assert span_text(stmt("s +=! A(i)").lhs_span) == "s"
    empty = stmt("s() = 1")
    assert empty.indices == () and span_text(empty.lhs_span) == "s()"


def test_statements_need_no_separator_and_take_optional_semicolons():
    statements = body("O(i) = A(i) P(i) = O(i) + 1; Q(i) = P(i);\n R(i) = -Q(i)")
    assert [s.tensor for s in statements] == ["O", "P", "Q", "R"]
    assert span_text(statements[2].span) == "Q(i) = P(i)"


def test_where_clauses_of_every_kind():
    assign = stmt("O(i) = A(i + 1) + t where i in 0:N-1, t = c ? 1 : 2, exists A(i), "
                  "j in lo + 1 : hi")
    range_i, let_t, exists, range_j = assign.where
    assert isinstance(range_i, ast.RangeClause) and range_i.index == "i"
    assert (sexp(range_i.lo), sexp(range_i.hi)) == ("0", "(- N 1)")
    assert isinstance(let_t, ast.LetClause) and let_t.name == "t"
    assert sexp(let_t.value) == "(? c 1 2)"
    assert isinstance(exists, ast.ExistsClause) and sexp(exists.expr) == "A[i]"
    assert (range_j.index, sexp(range_j.lo), sexp(range_j.hi)) == ("j", "(+ lo 1)", "hi")
    assert span_text(range_i.span) == "i in 0:N-1"
    assert span_text(let_t.span) == "t = c ? 1 : 2"
    assert span_text(exists.span) == "exists A(i)"
    assert span_text(assign.span).endswith("j in lo + 1 : hi")


def test_where_clauses_across_lines_and_the_next_statement():
    statements = body("O(i) = A(i) where\n  i in 0:N,  # range\n  k in 0:M\nP(i) = O(i)")
    assert [len(s.where) for s in statements] == [2, 0]
    assert statements[0].span.end_line == statements[0].span.line + 2


def test_let_clause_named_max():
    (clause,) = stmt("O(i) = A(i) + max where max = 3").where
    assert clause == ast.LetClause("max", ast.Number(3, False))


def test_equivalence_annotation():
    assign = stmt("O(b, d) +=! LUT(I(b, l), d) <=> gather(LUT, I) where l in 0:L")
    assert sexp(assign.equivalent) == "gather[LUT I]"
    assert span_text(assign.equivalent.span) == "gather(LUT, I)"
    assert len(assign.where) == 1


def test_call_statements():
    call = stmt("Y, Z = helper(X, W)")
    assert call == ast.CallStmt(("Y", "Z"), "helper", ("X", "W"))
    assert span_text(call.span) == "Y, Z = helper(X, W)"
    assert stmt("Y, Z, W = g()") == ast.CallStmt(("Y", "Z", "W"), "g", ())
    single = stmt("Y = helper(X, W)")
    assert single == ast.Assign("Y", (), "=", False,
                                ast.Apply("helper", (ast.Name("X"), ast.Name("W"))))


# ----------------------------------------------------------------- definitions


def test_all_examples_parse_together():
    program = parse(ALL_EXAMPLES, "examples.tc")
    assert [d.name for d in program.defs] == list(EXAMPLES)
    assert (program.span.line, program.span.col) == (1, 1)
    assert program.span.end_line == ALL_EXAMPLES.count("\n")


@pytest.mark.parametrize("name", list(EXAMPLES))
def test_each_example_parses_alone(name):
    (definition,) = parse(EXAMPLES[name]).defs
    assert definition.name == name
    assert span_text(definition.name_span) == name


def test_matmul_tree():
    (matmul,) = parse(EXAMPLES["matmul"]).defs
    assert matmul == ast.Def(
        "matmul",
        (ast.Param("A", ast.TensorType("float", ("M", "K"))),
         ast.Param("B", ast.TensorType("float", ("K", "N")))),
        (ast.OutputDecl("C", None),),
        (ast.Assign("C", ("m", "n"), "+=", True,
                    ast.Binary("*", ast.Apply("A", (ast.Name("m"), ast.Name("k"))),
                               ast.Apply("B", (ast.Name("k"), ast.Name("n"))))),))
    param_a = matmul.params[0]
    assert span_text(param_a.span) == "float(M,K) A"
    assert span_text(param_a.type.span) == "float(M,K)"
    assert matmul.span.end_line == 3 and matmul.span.end_col == 2


def test_types_with_constants_and_scalars():
    (definition,) = parse("def f(float(3, N, 0x10) A, float alpha, float() x, int64 n) "
                          "-> (float(M,N) C, float s, D, half() E) { C(i) = 1 }").defs
    assert [p.type.dims for p in definition.params] == [(3, "N", 16), None, (), None]
    assert [p.type.elem for p in definition.params] == ["float", "float", "float", "int64"]
    assert [(o.name, o.type) for o in definition.outputs] == [
        ("C", ast.TensorType("float", ("M", "N"))), ("s", ast.TensorType("float", None)),
        ("D", None), ("E", ast.TensorType("half", ()))]
    assert span_text(definition.outputs[0].span) == "float(M,N) C"


@pytest.mark.parametrize("type_name", sorted(TYPE_NAMES))
def test_every_type_name(type_name):
    (definition,) = parse(f"def f({type_name}(N) A) -> ({type_name} O) {{ O = A(0) }}").defs
    assert definition.params[0].type.elem == type_name


def test_empty_parameter_and_output_lists_and_empty_body():
    (definition,) = parse("def f() -> () {}").defs
    assert (definition.params, definition.outputs, definition.body) == ((), (), ())


def test_zero_rank_output():
    (definition,) = parse(EXAMPLES["total"]).defs
    assert definition.outputs == (ast.OutputDecl("s", None),)
    assert definition.body[0].indices == ()


def test_comments_anywhere_in_a_program():
    text = ("# header\ndef f( # params\n float(N # size\n ) A # input\n) -> # arrow\n"
            "(O) # outputs\n{ # body\n O(i) # lhs\n = # op\n A(i) # rhs\n} # done")
    (definition,) = parse(text).defs
    assert definition.body[0] == ast.Assign("O", ("i",), "=", False,
                                            ast.Apply("A", (ast.Name("i"),)))


def test_spans_know_their_file_and_first_line():
    program = parse("\n\ndef f(float(N) A) -> (O) {\n  O(i) = A(i) + 1\n}", "m.py",
                    first_line=100)
    assign = program.defs[0].body[0]
    assert (assign.span.line, assign.span.col, assign.span.end_col) == (103, 3, 18)
    assert assign.span.source.filename == "m.py"
    assert (program.span.line, program.span.end_line) == (102, 104)


def test_spaces_never_change_the_tree():
    dense = parse("def f(float(N)A)->(O){O(i)+=!A(i)*2 where i in 0:N}")
    spread = parse("def  f ( float ( N ) A ) -> ( O ) {\n\n O ( i ) +=! A ( i ) * 2 "
                   "where i in 0 : N\n}")
    assert dense == spread


# ----------------------------------------------------------------- errors


@pytest.mark.parametrize("text, message, line, col", [
    ("def f(float(N) A) -> (B) {\n  B(i) = A(i where i in 0:N\n}",
     "expected ')' but found 'where'", 2, 14),
    ("def foo(float(N) A) -> (B) {\n  B(i) = A(i)\n",
     "unexpected end of input: unterminated def 'foo' (missing '}')", 2, 14),
    ("def f(flaot(N) A) -> (B) { B(i) = A(i) }", "unknown type 'flaot' (did you mean 'float'?)",
     1, 7),
    ("def f(float(N) A) -> (flaot(N) B) { B(i) = A(i) }", "unknown type 'flaot'", 1, 23),
    ("def f(float(N) A) -> (B) {\n  + B(i) = A(i)\n}", "expected a statement but found '+'",
     2, 3),
    ("def f(float(N) A) -> (B) {\n  B(i+1) = A(i)\n}",
     "left-hand side indices must be index variables", 2, 5),
    ("def f(float(N) A) -> (B) {\n  B(i, 0) = A(i)\n}",
     "left-hand side indices must be index variables", 2, 8),
    ("def f(float(N) A) -> (B) { B(i) = A(i) @ 1 }", "unexpected character '@'", 1, 40),
    ("def f(float(N) A) -> (B) { B(i) = A(i) $ 1 }", "unexpected character '$'", 1, 40),
    ("def f(float(N) A) -> (B) { B(i) = A(i) & 1 }", "unexpected character '&'", 1, 40),
    ("def f(float(N) A) -> (B) { B(i) =! A(i) }", "'=!' is not an operator", 1, 33),
    ("def f(float(N) A) -> (B) { B(i) -= A(i) }", "'-=' is not a TC operator", 1, 33),
    ("def f(float(N) A) -> (B) { B(i) A(i) }", "expected an assignment operator", 1, 33),
    ("def f(float(N) A) -> (B) { B(i) = }", "expected an expression but found '}'", 1, 35),
    ("def f(float(N) A, B) -> (C) { C(i) = A(i) }", "parameter 'B' has no type", 1, 19),
    ("def f(float(N) A) -> (B) { B(i) = A(i) where }", "expected a where clause", 1, 46),
    ("def f(float(N) A) -> (B) { B(i) = A(i) where i in 0 }",
     "expected ':' but found '}' in the range of 'i'", 1, 53),
    ("def f(float(N) A) -> (B) { B(i) = A(i) where i in 0:N ? 1 : 2 }",
     "a conditional expression in a range bound must be parenthesized", 1, 55),
    ("def f(float(N, +) A) -> (B) { B(i) = A(i) }",
     "expected a dimension (a size name, an integer or an extent of sizes)", 1, 16),
    ("def f(float(2.5) A) -> (B) { B(i) = A(i) }",
     "a dimension must be an integer but found '2.5'", 1, 13),
    ("def f(float(N) A) -> (B) { Y, Z = g(A, 1) }",
     "arguments of a call statement must be tensor names", 1, 40),
    ("def f(float(N) A) -> (B) { Y, Z +=! g(A) }", "expected '=' but found '+=!'", 1, 33),
    ("def f(float(N) A) -> (B) { Y, 2 = g(A) }", "expected an output name but found '2'", 1, 31),
    ("def f(float(N) A) -> B { B(i) = A(i) }", "expected '(' but found 'B' after '->'", 1, 22),
    ("def f(float(N) A) (B) { B(i) = A(i) }", "expected '->' but found '('", 1, 19),
    ("def (float(N) A) -> (B) { }", "expected the name of the def but found '('", 1, 5),
    ("def f(float(N) A) -> (B) B(i) = A(i)", "expected '{' but found 'B'", 1, 26),
    ("def f(float(N) A) -> (B) { B(i) = A(i) }\nB(i) = 1", "expected 'def' but found 'B'",
     2, 1),
    ("def a(float(N) A) -> (B) { B(i) = A(i)\ndef b(float(N) A) -> (B) { B(i) = A(i) }",
     "unterminated def 'a' (missing '}' before the next 'def')", 2, 1),
    ("def f(float(N) A) -> (B) { B(i) = A(i) ? 1 }",
     "expected ':' but found '}' in a conditional expression", 1, 44),
    ("def f(float(N) A) -> (B) { B(i) = A.x }",
     "expected a dimension number after 'A.' but found 'x'", 1, 37),
    ("def f(float(N) A) -> (B) { B(i) = A(i) + é }", "unexpected character 'é'", 1, 42),
    ("def f(float(N) A) -> (B) {\n  B(i) = 1.5.2\n}", "expected a statement but found '.2'",
     2, 13),
    ("def f(float(N) A) -> (B) { where i in 0:N }", "expected a statement but found 'where'",
     1, 28),
])
def test_errors(text, message, line, col):
    error = parse_error(text, filename="bad.tc")
    assert message in error.message
    assert (error.line, error.column) == (line, col)
    rendered = str(error)
    assert rendered.startswith(f"bad.tc:{line}:{col}: ")
    source_line = text.splitlines()[line - 1]
    assert f"\n    {source_line}\n    {' ' * (col - 1)}^" in rendered


def test_error_lines_count_from_first_line():
    error = parse_error("def f(float(N) A) -> (B) {\n  B(i) = A(i) @\n}", first_line=20)
    assert (error.line, error.column) == (21, 15)
    assert "<string>:21:15:" in str(error)
    assert "    B(i) = A(i) @\n" in str(error)


@pytest.mark.parametrize("text", ["", "   \n\t\n", "# nothing but a comment\n"])
def test_no_def_in_source(text):
    assert parse_error(text).message == "no def in source"


def test_deep_nesting_is_a_parse_error_not_a_recursion_error():
    shallow = "(" * (MAX_NESTING - 5) + "a" + ")" * (MAX_NESTING - 5)
    assert expr(shallow) == "a"
    for deep in ("(" * 200 + "a" + ")" * 200, "(" * 5000 + "a",
                 "f(" * 200 + "a" + ")" * 200, "-" * 5000 + "a", "!-" * 3000 + "a",
                 "a ? " * 500 + "b", "x(" * 100 + "(a || b && c == d < e + f * " * 100):
        with pytest.raises(ParseError) as info:
            parse(f"def f(float(N) A) -> (B) {{ B(i) = {deep} }}")
        assert "nested too deeply" in info.value.message


def test_long_flat_chains_are_not_nesting():
    text = " + ".join(f"A({i})" for i in range(3000))
    assert isinstance(parse_expression(text), ast.Binary)
    chain = " : ".join(f"c{i} ? {i}" for i in range(500)) + " : 0"
    assert isinstance(parse_expression(chain), ast.Ternary)


# ----------------------------------------------------------------- speed


def test_parsing_a_2000_statement_program_is_fast():
    lines = [f"  T{i}(m, n) +=! A(m, k) * B(k, n) + {i}.5f * T{i - 1}(m, n) where k in 0:K"
             for i in range(1, 2001)]
    text = "def big(float(M,K) A, float(K,N) B) -> (T0) {\n" + "\n".join(lines) + "\n}\n"
    start = time.process_time()  # CPU time: other test processes must not make this flaky
    program = parse(text)
    elapsed = time.process_time() - start
    assert len(program.defs[0].body) == 2000
    assert elapsed < 5.0, f"parsing took {elapsed:.2f}s of CPU time (about 0.5s expected)"


# ----------------------------------------------------------------- round trip with the printer


@pytest.mark.parametrize("name", [n for n in EXAMPLES if n != "two"])
def test_printed_ir_parses_back_to_the_same_ir(name):
    from polyc.lang.printer import to_tc
    from polyc.lang.sema import analyze

    printed = to_tc(analyze(parse(EXAMPLES[name])))
    assert to_tc(analyze(parse(printed))) == printed


# ----------------------------------------------------------------- property tests

FUZZ = settings(max_examples=200, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.filter_too_much])

TC_ALPHABET = st.sampled_from(list("abcdefijkmnAIOTXY_019.+-*/%=!<>&|?:(),{};# \n\t\r@$é") +
                              ["def ", "where ", " in ", "exists ", "float", "int32(", "max=",
                               "+=!", "<=>", "->", "0x", "1e", ".5", "min", "T.1"])


def parses_or_raises_parse_error(text: str) -> None:
    try:
        parse(text, "fuzz.tc", first_line=3)
    except ParseError as error:
        assert error.span is not None and error.line >= 3
        str(error)


@FUZZ
@given(st.text(max_size=200))
def test_arbitrary_text_raises_only_parse_errors(text):
    parses_or_raises_parse_error(text)
    try:
        parse_expression(text)
    except ParseError:
        pass


@FUZZ
@given(st.lists(TC_ALPHABET, max_size=80).map("".join))
def test_tc_like_garbage_raises_only_parse_errors(text):
    parses_or_raises_parse_error(text)


def test_every_truncation_of_the_examples():
    for end in range(len(ALL_EXAMPLES) + 1):
        parses_or_raises_parse_error(ALL_EXAMPLES[:end])


@st.composite
def mutated_programs(draw):
    text = draw(st.sampled_from([ALL_EXAMPLES] + list(EXAMPLES.values())))
    for _ in range(draw(st.integers(1, 4))):
        position = draw(st.integers(0, len(text)))
        kind = draw(st.sampled_from(["delete", "insert", "replace", "duplicate"]))
        if kind == "delete":
            length = draw(st.integers(1, 10))
            text = text[:position] + text[position + length:]
        elif kind == "insert":
            text = text[:position] + draw(TC_ALPHABET) + text[position:]
        elif kind == "replace":
            text = text[:position] + draw(TC_ALPHABET) + text[position + 1:]
        else:
            length = draw(st.integers(1, 30))
            text = text[:position] + text[position:position + length] + text[position:]
    return text


@FUZZ
@given(mutated_programs())
def test_mutated_programs_raise_only_parse_errors(text):
    parses_or_raises_parse_error(text)


# Generated expression trees, printed with as few parentheses as precedence
# allows, must parse back to the same tree.

_KEYWORDS = {"def", "in", "where", "exists"}
_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
               "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
_TERNARY, _UNARY, _ATOM = 0, 7, 8

names = st.from_regex(r"[a-zA-Z_][a-zA-Z0-9_]{0,4}", fullmatch=True).filter(
    lambda name: name not in _KEYWORDS)
leaves = st.one_of(
    names.map(ast.Name),
    st.integers(0, 10**12).map(lambda value: ast.Number(value, False)),
    st.floats(0, 1e30, allow_nan=False, allow_infinity=False).map(
        lambda value: ast.Number(value, True)),
    st.builds(ast.DimOf, names, st.integers(0, 20)),
)


def _extend(children):
    return st.one_of(
        st.builds(ast.Unary, st.sampled_from(["-", "!"]), children),
        st.builds(ast.Binary, st.sampled_from(sorted(_PRECEDENCE)), children, children),
        st.builds(ast.Ternary, children, children, children),
        st.builds(ast.Apply, names, st.lists(children, max_size=3).map(tuple)),
    )


expressions = st.recursive(leaves, _extend, max_leaves=25)


def minimal_text(e: ast.Expr) -> tuple[str, int]:
    """``e`` printed with only the parentheses precedence needs, and its precedence."""
    if isinstance(e, ast.Name):
        return e.name, _ATOM
    if isinstance(e, ast.Number):
        return repr(e.value), _ATOM
    if isinstance(e, ast.DimOf):
        return f"{e.tensor}.{e.dim}", _ATOM
    if isinstance(e, ast.Apply):
        return f"{e.name}({', '.join(minimal_text(a)[0] for a in e.args)})", _ATOM
    if isinstance(e, ast.Unary):
        text, level = minimal_text(e.operand)
        return (f"{e.op}{text}" if level >= _UNARY else f"{e.op}({text})"), _UNARY
    if isinstance(e, ast.Binary):
        level = _PRECEDENCE[e.op]
        lhs, lhs_level = minimal_text(e.lhs)
        rhs, rhs_level = minimal_text(e.rhs)
        lhs = lhs if lhs_level >= level else f"({lhs})"
        rhs = rhs if rhs_level > level else f"({rhs})"
        return f"{lhs} {e.op} {rhs}", level
    cond, cond_level = minimal_text(e.cond)
    cond = cond if cond_level > _TERNARY else f"({cond})"
    return f"{cond} ? {minimal_text(e.then)[0]} : {minimal_text(e.other)[0]}", _TERNARY


@FUZZ
@given(expressions)
def test_minimally_parenthesised_expressions_parse_back(tree):
    text = minimal_text(tree)[0]
    assert parse_expression(text) == tree
    assign = stmt(f"O(i) = {text}")
    assert assign.rhs == tree
