"""Parses TC source text into the syntax tree of ``polyc.lang.ast``.

A hand-written recursive-descent parser over the tokens of ``lexer.py``. The
grammar is TC's, with polyc's additions (call statements, ``exists`` and
let-bindings in ``where``, optional output types)::

    program  := def+
    def      := 'def' ID '(' [param {',' param}] ')' '->' '(' [output {',' output}] ')'
                '{' {stmt [';']} '}'
    param    := type ID
    output   := [type] ID
    type     := TYPENAME ['(' [dim {',' dim}] ')']          dim := ID | INT
    stmt     := ID ['(' [ID {',' ID}] ')'] ASSIGNOP expr ['<=>' expr]
                    ['where' clause {',' clause}]
              | ID ',' ID {',' ID} '=' ID '(' [ID {',' ID}] ')'
    clause   := ID 'in' or_expr ':' or_expr | ID '=' expr | 'exists' expr
    expr     := or_expr ['?' expr ':' expr]
    or_expr  := binary operators, loosest first: || && (== !=) (< <= > >=) (+ -) (* / %)
    unary    := {'-' | '!' | '+'} postfix
    postfix  := ID '(' [expr {',' expr}] ')' | ID '.' INT | ID | NUMBER | '(' expr ')'

Statements need no separator: an expression ends where the next token cannot
continue it, and every statement starts with an identifier.

    >>> parse("def f(float(N) A) -> (B) { B(i) = A(i) }").defs[0].body[0].tensor
    'B'
"""
from __future__ import annotations

import dataclasses
import difflib

from polyc.errors import ParseError, Source, Span
from polyc.lang import ast
from polyc.lang.lexer import END, IDENT, NUMBER, OPERATOR, Token, tokenize
from polyc.lang.types import TYPE_NAMES

# How loosely each binary operator binds (lower binds looser); all are left-associative.
BINARY_PRECEDENCE = {"||": 1, "&&": 2, "==": 3, "!=": 3, "<": 4, "<=": 4, ">": 4, ">=": 4,
                     "+": 5, "-": 5, "*": 6, "/": 6, "%": 6}
UNARY_OPS = ("-", "!", "+")

# Assignment operator as written -> (Assign.op, Assign.init).
ASSIGN_OPERATORS = {
    "=": ("=", False), "+=": ("+=", False), "*=": ("*=", False),
    "max=": ("max=", False), "min=": ("min=", False),
    "+=!": ("+=", True), "*=!": ("*=", True), "max=!": ("max=", True), "min=!": ("min=", True),
}

# Nested parentheses, calls, ternaries and where-expressions past this depth are
# rejected: each level costs a few Python frames, and the interpreter's
# recursion limit must never be what stops the parser.
MAX_NESTING = 100


def parse(text: str, filename: str = "<string>", first_line: int = 1) -> ast.Program:
    """The syntax tree of the TC source ``text`` (one or more ``def``).

    ``filename`` and ``first_line`` place the text in its file for error
    messages. Raises :class:`ParseError` on any malformed input, and nothing else.
    """
    return _Parser(Source(text, filename, first_line)).program()


def parse_expression(text: str, filename: str = "<string>", first_line: int = 1) -> ast.Expr:
    """The syntax tree of one TC expression, such as the right side of ``<=>``."""
    parser = _Parser(Source(text, filename, first_line))
    expr = parser.expression()
    parser.expect_end("after the expression")
    return expr


class _Parser:
    """Parsing state: the tokens, the current position and the nesting depth."""

    def __init__(self, source: Source):
        self.source = source
        self.tokens = tokenize(source)
        self.pos = 0
        self.depth = 0

    # ------------------------------------------------------------- token access

    @property
    def token(self) -> Token:
        return self.tokens[self.pos]

    def peek(self, ahead: int = 1) -> Token:
        return self.tokens[min(self.pos + ahead, len(self.tokens) - 1)]

    def advance(self) -> Token:
        """The current token; moves past it (never past ``END``)."""
        token = self.tokens[self.pos]
        if token.kind != END:
            self.pos += 1
        return token

    def previous_span(self) -> Span:
        """The span of the last token consumed."""
        return self.tokens[max(self.pos - 1, 0)].span

    def error(self, message: str, span: Span | None = None) -> ParseError:
        return ParseError(message, span or self.token.span)

    def expected(self, what: str, context: str = "") -> ParseError:
        """``expected <what> but found <token><context>``, at the current token."""
        return self.error(f"expected {what} but found {self.token.describe()}{context}")

    def expect_op(self, text: str, context: str = "") -> Token:
        if not self.token.is_op(text):
            raise self.expected(f"'{text}'", context)
        return self.advance()

    def expect_ident(self, what: str) -> Token:
        if self.token.kind != IDENT:
            raise self.expected(what)
        return self.advance()

    def expect_end(self, context: str) -> None:
        if self.token.kind != END:
            raise self.error(f"unexpected {self.token.describe()} {context}")

    # ------------------------------------------------------------- definitions

    def program(self) -> ast.Program:
        defs = []
        while self.token.kind != END:
            defs.append(self.definition())
        if not defs:
            raise self.error("no def in source")
        return ast.Program(tuple(defs), span=defs[0].span.to(defs[-1].span))

    def definition(self) -> ast.Def:
        if not self.token.is_keyword("def"):
            raise self.expected("'def'")
        start = self.advance().span
        name = self.expect_ident("the name of the def")
        self.expect_op("(", f" after 'def {name.text}'")
        params = self.comma_list(self.param, ")")
        self.expect_op("->", " after the parameters")
        self.expect_op("(", " after '->'")
        outputs = self.comma_list(self.output, ")")
        self.expect_op("{", f" (to open the body of def '{name.text}')")
        body = []
        while not self.token.is_op("}"):
            self.check_body_continues(name.text)
            body.append(self.statement())
            if self.token.is_op(";"):
                self.advance()
        end = self.advance().span
        return ast.Def(name.text, tuple(params), tuple(outputs), tuple(body),
                       span=start.to(end), name_span=name.span)

    def check_body_continues(self, def_name: str) -> None:
        if self.token.kind == END:
            raise self.error(f"unexpected end of input: unterminated def '{def_name}' "
                             f"(missing '}}')")
        if self.token.is_keyword("def"):
            raise self.error(f"unterminated def '{def_name}' (missing '}}' before the next "
                             f"'def')")

    def comma_list(self, item, closing: str) -> list:
        """``[item {',' item}] closing``: the items; consumes the closing bracket."""
        items = []
        if not self.token.is_op(closing):
            items.append(item())
            while self.token.is_op(","):
                self.advance()
                items.append(item())
        self.expect_op(closing)
        return items

    def param(self) -> ast.Param:
        if self.token.kind == IDENT and self.token.text not in TYPE_NAMES and (
                self.peek().is_op(",", ")")):
            raise self.error(f"parameter '{self.token.text}' has no type: write e.g. "
                             f"'float(N) {self.token.text}'")
        tensor_type = self.tensor_type()
        name = self.expect_ident("a parameter name")
        return ast.Param(name.text, tensor_type, span=tensor_type.span.to(name.span))

    def output(self) -> ast.OutputDecl:
        if self.token.kind == IDENT and (self.peek().kind == IDENT or self.peek().is_op("(")):
            tensor_type = self.tensor_type()
            name = self.expect_ident("an output name")
            return ast.OutputDecl(name.text, tensor_type, span=tensor_type.span.to(name.span))
        name = self.expect_ident("an output name")
        return ast.OutputDecl(name.text, None, span=name.span)

    def tensor_type(self) -> ast.TensorType:
        token = self.expect_ident("a type such as 'float(N)'")
        if token.text not in TYPE_NAMES:
            close = difflib.get_close_matches(token.text, TYPE_NAMES, n=1)
            hint = f" (did you mean '{close[0]}'?)" if close else ""
            raise self.error(f"unknown type '{token.text}'{hint}", token.span)
        if not self.token.is_op("("):
            return ast.TensorType(token.text, None, span=token.span)
        self.advance()
        dims = self.comma_list(self.dimension, ")")
        return ast.TensorType(token.text, tuple(dims), span=token.span.to(self.previous_span()))

    def dimension(self) -> str | int | ast.Expr:
        """A size name, an integer, or an extent derived from sizes (``H - KH + 1``)."""
        token = self.token
        plain = self.peek().is_op(",") or self.peek().is_op(")")
        if token.kind == IDENT and plain:
            return self.advance().text
        if token.kind == NUMBER and _is_integer_literal(token.text) and plain:
            self.advance()
            return _integer_value(token.text)
        if token.kind == NUMBER and not _is_integer_literal(token.text):
            raise self.error(f"a dimension must be an integer but found {token.describe()}")
        if token.kind in (IDENT, NUMBER) or token.is_op("("):
            return self.expression()
        raise self.expected("a dimension (a size name, an integer or an extent of sizes)")

    # ------------------------------------------------------------- statements

    def statement(self) -> ast.Stmt:
        if self.token.kind != IDENT:
            raise self.expected("a statement")
        if self.peek().is_op(","):
            return self.call_statement()
        return self.assignment()

    def assignment(self) -> ast.Assign:
        name = self.advance()
        indices = ()
        lhs_span = name.span
        if self.token.is_op("("):
            self.advance()
            indices = tuple(self.comma_list(self.lhs_index, ")"))
            lhs_span = name.span.to(self.previous_span())
        op_token = self.token
        if not op_token.is_op(*ASSIGN_OPERATORS):
            self.reject_foreign_assignment()
            raise self.expected("an assignment operator ('=', '+=', '+=!', 'max=!', ...)")
        self.advance()
        if op_token.text == "=" and self.token.is_op("!") and _adjacent(op_token, self.token):
            raise self.error("'=!' is not an operator: write '=', or an initializing "
                             "reduction such as '+=!'", op_token.span.to(self.token.span))
        op, init = ASSIGN_OPERATORS[op_token.text]
        rhs = self.expression()
        end = rhs.span
        equivalent = None
        if self.token.is_op("<=>"):
            self.advance()
            equivalent = self.expression()
            end = equivalent.span
        where = ()
        if self.token.is_keyword("where"):
            self.advance()
            where = tuple(self.where_clauses())
            end = where[-1].span
        return ast.Assign(name.text, indices, op, init, rhs, where=where, equivalent=equivalent,
                          span=name.span.to(end), lhs_span=lhs_span)

    def reject_foreign_assignment(self) -> None:
        """A clear error for C's ``-=``, ``/=``, ``%=`` (lexed as two tokens)."""
        token, following = self.token, self.peek()
        if token.is_op("-", "/", "%") and following.is_op("=") and _adjacent(token, following):
            raise self.error(f"'{token.text}=' is not a TC operator: TC assigns with '=', "
                             f"'+=', '*=', 'max=', 'min=' and their '!' forms",
                             token.span.to(following.span))

    def lhs_index(self) -> str:
        index = self.expression()
        if not isinstance(index, ast.Name):
            raise self.error("left-hand side indices must be index variables", index.span)
        return index.name

    def call_statement(self) -> ast.CallStmt:
        first = self.advance()
        targets = [first.text]
        while self.token.is_op(","):
            self.advance()
            targets.append(self.expect_ident("an output name").text)
        self.expect_op("=", " in a call statement")
        callee = self.expect_ident("the name of the def to call")
        self.expect_op("(", f" after '{callee.text}'")
        args = self.comma_list(self.call_argument, ")")
        return ast.CallStmt(tuple(targets), callee.text, tuple(args),
                            span=first.span.to(self.previous_span()))

    def call_argument(self) -> str:
        argument = self.expression()
        if not isinstance(argument, ast.Name):
            raise self.error("arguments of a call statement must be tensor names", argument.span)
        return argument.name

    def where_clauses(self) -> list[ast.WhereClause]:
        clauses = [self.where_clause()]
        while self.token.is_op(","):
            self.advance()
            clauses.append(self.where_clause())
        return clauses

    def where_clause(self) -> ast.WhereClause:
        token = self.token
        if token.is_keyword("exists"):
            self.advance()
            expr = self.expression()
            return ast.ExistsClause(expr, span=token.span.to(expr.span))
        if token.kind == IDENT and self.peek().is_keyword("in"):
            self.advance()
            self.advance()
            lo = self.logical_or()
            self.expect_op(":", f" in the range of '{token.text}'")
            hi = self.logical_or()
            if self.token.is_op("?"):
                raise self.error("a conditional expression in a range bound must be "
                                 "parenthesized: 'i in lo:(c ? a : b)'")
            return ast.RangeClause(token.text, lo, hi, span=token.span.to(hi.span))
        if token.kind == IDENT and self.peek().is_op("="):
            self.advance()
            self.advance()
            value = self.expression()
            return ast.LetClause(token.text, value, span=token.span.to(value.span))
        if token.is_op("max=", "min="):  # `max = ...` lexes as one operator
            self.advance()
            value = self.expression()
            return ast.LetClause(token.text[:-1], value, span=token.span.to(value.span))
        raise self.expected("a where clause ('i in lo:hi', 'name = expr' or 'exists expr')")

    # ------------------------------------------------------------- expressions

    def expression(self) -> ast.Expr:
        """``cond ? then : other`` (right-associative) or a logical-or expression."""
        self.enter()
        conditions = []  # (cond, then) pairs of a ternary chain, folded from the right
        other = self.logical_or()
        while self.token.is_op("?"):
            self.advance()
            then = self.expression()
            self.expect_op(":", " in a conditional expression")
            conditions.append((other, then))
            other = self.logical_or()
        for cond, then in reversed(conditions):
            other = ast.Ternary(cond, then, other, span=cond.span.to(other.span))
        self.depth -= 1
        return other

    def enter(self) -> None:
        self.depth += 1
        if self.depth > MAX_NESTING:
            raise self.error(f"expression nested too deeply (more than {MAX_NESTING} levels)")

    def logical_or(self) -> ast.Expr:
        """A chain of binary operators, by precedence climbing with explicit stacks."""
        operands = [self.unary()]
        operators: list[str] = []
        while self.token.kind == OPERATOR and self.token.text in BINARY_PRECEDENCE:
            precedence = BINARY_PRECEDENCE[self.token.text]
            while operators and BINARY_PRECEDENCE[operators[-1]] >= precedence:
                _reduce(operands, operators)
            operators.append(self.advance().text)
            operands.append(self.unary())
        while operators:
            _reduce(operands, operators)
        return operands[0]

    def unary(self) -> ast.Expr:
        prefixes = []
        while self.token.is_op(*UNARY_OPS):
            self.enter()  # each prefix nests the tree one level deeper
            prefixes.append(self.advance())
        expr = self.postfix()
        self.depth -= len(prefixes)
        for prefix in reversed(prefixes):
            if prefix.text != "+":
                expr = ast.Unary(prefix.text, expr, span=prefix.span.to(expr.span))
        return expr

    def postfix(self) -> ast.Expr:
        token = self.token
        if token.kind == IDENT:
            self.advance()
            if self.token.is_op("("):
                return self.application(token)
            dim = self.dimension_specifier(token)
            if dim is not None:
                return ast.DimOf(token.text, dim, span=token.span.to(self.previous_span()))
            return ast.Name(token.text, span=token.span)
        if token.kind == NUMBER:
            self.advance()
            return self.number(token)
        if token.is_op("("):
            self.advance()
            inner = self.expression()
            close = self.expect_op(")")
            return dataclasses.replace(inner, span=token.span.to(close.span))
        raise self.expected("an expression")

    def application(self, name: Token) -> ast.Apply:
        self.advance()
        self.enter()
        args = self.comma_list(self.expression, ")")
        self.depth -= 1
        return ast.Apply(name.text, tuple(args), span=name.span.to(self.previous_span()),
                         name_span=name.span)

    def dimension_specifier(self, tensor: Token) -> int | None:
        """``k`` of ``T.k`` (lexed ``T`` ``.k``, or ``T`` ``.`` ``k``); consumes it."""
        token = self.token
        if token.kind == NUMBER and token.text.startswith(".") and _adjacent(tensor, token):
            if not token.text[1:].isdigit():
                raise self.error(f"a dimension of '{tensor.text}' must be an integer "
                                 f"but found '{token.text[1:]}'")
            self.advance()
            return int(token.text[1:])
        if token.is_op("."):
            self.advance()
            if self.token.kind != NUMBER or not self.token.text.isdigit():
                raise self.expected(f"a dimension number after '{tensor.text}.'")
            return int(self.advance().text)
        return None

    def number(self, token: Token) -> ast.Number:
        text = token.text
        if _is_integer_literal(text):
            return ast.Number(_integer_value(text), False, span=token.span)
        value = float(text.rstrip("fF"))
        if value in (float("inf"), float("-inf")):
            raise self.error(f"floating literal '{text}' is out of range", token.span)
        return ast.Number(value, True, span=token.span)


def _reduce(operands: list[ast.Expr], operators: list[str]) -> None:
    rhs = operands.pop()
    lhs = operands.pop()
    operands.append(ast.Binary(operators.pop(), lhs, rhs, span=lhs.span.to(rhs.span)))


def _adjacent(first: Token, second: Token) -> bool:
    """Whether ``second`` starts exactly where ``first`` ends."""
    return (first.span.end_line, first.span.end_col) == (second.span.line, second.span.col)


def _is_integer_literal(text: str) -> bool:
    return text.isdigit() or text[:2] in ("0x", "0X")


def _integer_value(text: str) -> int:
    return int(text, 16) if text[:2] in ("0x", "0X") else int(text)
