"""Sanity tests of the operator corpus itself (tests/corpus.py), without polyc.

Besides shape and dtype checks, every corpus source is run through a small,
deliberately naive TC interpreter defined here (parser, TC range inference on
concrete sizes, a static bounds check and loop-by-loop evaluation in float64)
and compared with the operator's numpy reference. That checks the sources and
the references against each other. A few references are also checked against
hand-written loops that share nothing with either.
"""
from __future__ import annotations

import itertools
import math
import re

import numpy as np
import pytest

from corpus import CORPUS, CORPUS_BY_NAME, CorpusOp, assert_close, make_inputs

# ======================================================================== a tiny TC interpreter

TC_TYPES = {
    "bool": "bool", "uint8": "uint8", "uint16": "uint16", "uint32": "uint32", "uint64": "uint64",
    "int8": "int8", "int16": "int16", "int32": "int32", "int64": "int64",
    "float16": "float16", "float32": "float32", "float64": "float64",
    "float": "float32", "double": "float64", "half": "float16", "int": "int32", "long": "int64",
    "byte": "uint8",
}

_MATH = {
    "exp": math.exp, "log": math.log, "sqrt": math.sqrt, "tanh": math.tanh, "erf": math.erf,
    "erfc": math.erfc, "fabs": math.fabs, "sin": math.sin, "cos": math.cos, "tan": math.tan,
    "log1p": math.log1p, "expm1": math.expm1, "log2": math.log2, "log10": math.log10,
    "floor": math.floor, "ceil": math.ceil, "cbrt": lambda x: math.copysign(abs(x) ** (1 / 3), x),
    "rsqrt": lambda x: 1.0 / math.sqrt(x), "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "pow": math.pow, "fmax": lambda a, b: float(max(a, b)), "fmin": lambda a, b: float(min(a, b)),
    "atan2": math.atan2, "hypot": math.hypot, "fmod": math.fmod,
}
_GENERIC = {"min": min, "max": max, "abs": abs}
_KEYWORDS = {"def", "where", "in", "exists"}


class TCError(Exception):
    pass


# ---------------------------------------------------------------- lexer

_TOKEN_RE = re.compile(r"""
    (?P<ws>\s+|\#[^\n]*)
  | (?P<dim>[A-Za-z_]\w*\.\d+(?![\w.]))
  | (?P<redop>(?:max|min)=!?(?!=))
  | (?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?)
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<op><=>|\+=!|\*=!|->|\+=|\*=|==|!=|<=|>=|&&|\|\||[-+*/%<>!?:,(){}=])
""", re.VERBOSE)


def tokenize(text: str) -> list[tuple[str, object]]:
    tokens, pos = [], 0
    while pos < len(text):
        m = _TOKEN_RE.match(text, pos)
        if not m:
            raise TCError(f"bad character {text[pos]!r} at {pos}")
        pos = m.end()
        kind = m.lastgroup
        value = m.group(kind)
        if kind == "ws":
            continue
        if kind == "dim":
            name, dim = value.split(".")
            tokens.append(("dim", (name, int(dim))))
        elif kind == "num":
            is_float = any(c in value for c in ".eE")
            tokens.append(("num", (float(value) if is_float else int(value), is_float)))
        elif kind in ("op", "redop"):
            tokens.append(("op", value))
        else:
            tokens.append(("ident", value))
    tokens.append(("eof", None))
    return tokens


# ---------------------------------------------------------------- parser
# Expressions are tuples: ("num", v, is_float) ("name", n) ("apply", n, args) ("dim", t, k)
# ("un", op, e) ("bin", op, l, r) ("tern", c, a, b).

_ASSIGN_OPS = {"=": ("=", False), "+=": ("+", False), "*=": ("*", False),
               "max=": ("max", False), "min=": ("min", False),
               "+=!": ("+", True), "*=!": ("*", True), "max=!": ("max", True),
               "min=!": ("min", True)}


class Parser:
    def __init__(self, text: str):
        self.toks = tokenize(text)
        self.i = 0
        self.def_names = set(re.findall(r"\bdef\s+([A-Za-z_]\w*)", text))

    def peek(self, k=0):
        return self.toks[self.i + k]

    def next(self):
        tok = self.toks[self.i]
        self.i += 1
        return tok

    def accept(self, value) -> bool:
        if self.peek()[1] == value and self.peek()[0] in ("op", "ident"):
            self.i += 1
            return True
        return False

    def expect(self, value):
        if not self.accept(value):
            raise TCError(f"expected {value!r}, found {self.peek()!r}")

    def ident(self) -> str:
        kind, value = self.next()
        if kind != "ident" or value in _KEYWORDS:
            raise TCError(f"expected an identifier, found {value!r}")
        return value

    # -- definitions
    def program(self) -> dict:
        defs = {}
        while self.peek()[0] != "eof":
            d = self.definition()
            if d["name"] in defs:
                raise TCError(f"duplicate def {d['name']}")
            defs[d["name"]] = d
        if not defs:
            raise TCError("no def")
        return defs

    def tensor_type(self):
        elem = self.ident()
        if elem not in TC_TYPES:
            raise TCError(f"unknown type {elem!r}")
        dims = None
        if self.accept("("):
            dims = []
            if not self.accept(")"):
                while True:
                    kind, value = self.next()
                    if kind == "num" and not value[1]:
                        dims.append(value[0])
                    elif kind == "ident":
                        dims.append(value)
                    else:
                        raise TCError(f"bad dimension {value!r}")
                    if self.accept(")"):
                        break
                    self.expect(",")
            dims = tuple(dims)
        return elem, dims

    def definition(self) -> dict:
        self.expect("def")
        name = self.ident()
        self.expect("(")
        params = []
        if not self.accept(")"):
            while True:
                elem, dims = self.tensor_type()
                params.append((self.ident(), elem, dims))
                if self.accept(")"):
                    break
                self.expect(",")
        self.expect("->")
        self.expect("(")
        outputs = []
        while True:
            if (self.peek(1)[0] == "ident") or (self.peek(1)[0] == "op" and self.peek(1)[1] == "("):
                self.tensor_type()
            outputs.append(self.ident())
            if self.accept(")"):
                break
            self.expect(",")
        self.expect("{")
        body = []
        while not self.accept("}"):
            body.append(self.statement())
        return {"name": name, "params": params, "outputs": outputs, "body": body}

    # -- statements
    def statement(self):
        k = self.i
        targets = [self.ident()]
        while self.accept(","):
            targets.append(self.ident())
        if len(targets) > 1 or (self.peek()[1] == "=" and self.peek(1)[0] == "ident"
                                and self.peek(1)[1] in self.def_names and self.peek(2)[1] == "("):
            self.expect("=")
            callee = self.ident()
            self.expect("(")
            args = []
            while True:
                args.append(self.ident())
                if self.accept(")"):
                    break
                self.expect(",")
            return ("call", tuple(targets), callee, tuple(args))
        self.i = k
        tensor = self.ident()
        indices = []
        if self.accept("("):
            if not self.accept(")"):
                while True:
                    indices.append(self.ident())
                    if self.accept(")"):
                        break
                    self.expect(",")
        kind, op = self.next()
        if kind != "op" or op not in _ASSIGN_OPS:
            raise TCError(f"expected an assignment operator after {tensor}, found {op!r}")
        rhs = self.expr()
        ranges, lets, exists = {}, {}, []
        if self.accept("where"):
            while True:
                if self.accept("exists"):
                    exists.append(self.expr())
                else:
                    name = self.ident()
                    if self.accept("in"):
                        lo = self.additive()
                        self.expect(":")
                        hi = self.additive()
                        if name in ranges:
                            raise TCError(f"two ranges for {name}")
                        ranges[name] = (lo, hi)
                    else:
                        self.expect("=")
                        lets[name] = self.expr()
                if not self.accept(","):
                    break
        if self.accept("<=>"):
            self.expr()
        for name, value in lets.items():  # bindings may use earlier ones
            lets[name] = _substitute(value, lets)
        rhs = _substitute(rhs, lets)
        exists = [_substitute(e, lets) for e in exists]
        red_op, init = _ASSIGN_OPS[op]
        return ("assign", tensor, tuple(indices), red_op, init, rhs, ranges, exists)

    # -- expressions
    def expr(self):
        cond = self.binary(0)
        if self.accept("?"):
            then = self.expr()
            self.expect(":")
            other = self.expr()
            return ("tern", cond, then, other)
        return cond

    _LEVELS = (("||",), ("&&",), ("==", "!="), ("<", "<=", ">", ">="), ("+", "-"), ("*", "/", "%"))

    def additive(self):
        return self.binary(4)

    def binary(self, level):
        if level == len(self._LEVELS):
            return self.unary()
        lhs = self.binary(level + 1)
        while self.peek()[0] == "op" and self.peek()[1] in self._LEVELS[level]:
            op = self.next()[1]
            lhs = ("bin", op, lhs, self.binary(level + 1))
        return lhs

    def unary(self):
        if self.peek()[0] == "op" and self.peek()[1] in ("-", "!", "+"):
            op = self.next()[1]
            operand = self.unary()
            return operand if op == "+" else ("un", op, operand)
        return self.primary()

    def primary(self):
        kind, value = self.next()
        if kind == "num":
            return ("num", value[0], value[1])
        if kind == "dim":
            return ("dim", value[0], value[1])
        if kind == "op" and value == "(":
            e = self.expr()
            self.expect(")")
            return e
        if kind == "ident" and value not in _KEYWORDS:
            if self.accept("("):
                args = []
                if not self.accept(")"):
                    while True:
                        args.append(self.expr())
                        if self.accept(")"):
                            break
                        self.expect(",")
                return ("apply", value, tuple(args))
            return ("name", value)
        raise TCError(f"unexpected {value!r}")


def _substitute(e, lets):
    if not lets:
        return e
    tag = e[0]
    if tag == "name":
        return lets.get(e[1], e)
    if tag == "apply":
        return ("apply", e[1], tuple(_substitute(a, lets) for a in e[2]))
    if tag == "un":
        return ("un", e[1], _substitute(e[2], lets))
    if tag == "bin":
        return ("bin", e[1], _substitute(e[2], lets), _substitute(e[3], lets))
    if tag == "tern":
        return ("tern",) + tuple(_substitute(x, lets) for x in e[1:])
    return e


def parse(text: str) -> dict:
    return Parser(text).program()


# ---------------------------------------------------------------- evaluation


def _c_div(a, b):
    if b == 0:
        raise ZeroDivisionError("integer division by zero")
    q = abs(a) // abs(b)
    return q if (a >= 0) == (b >= 0) else -q


def _c_mod(a, b):
    return a - b * _c_div(a, b)


class _Scope:
    """Names visible in one def while it runs."""

    def __init__(self):
        self.sizes: dict[str, int] = {}
        self.scalars: dict[str, object] = {}
        self.tensors: dict[str, np.ndarray] = {}


def _walk(e):
    yield e
    tag = e[0]
    children = ()
    if tag == "apply":
        children = e[2]
    elif tag == "un":
        children = (e[2],)
    elif tag == "bin":
        children = (e[2], e[3])
    elif tag == "tern":
        children = e[1:]
    for c in children:
        yield from _walk(c)


class Interpreter:
    def __init__(self, source: str):
        self.defs = parse(source)

    def run(self, def_name: str, args: tuple):
        d = self.defs[def_name]
        if len(args) != len(d["params"]):
            raise TCError(f"{def_name}: {len(d['params'])} inputs expected, got {len(args)}")
        scope = _Scope()
        for (name, elem, dims), value in zip(d["params"], args):
            if dims is None:
                scope.scalars[name] = (int(value) if np.dtype(TC_TYPES[elem]).kind in "iub"
                                       else float(value))
                continue
            arr = np.asarray(value)
            if arr.ndim != len(dims):
                raise TCError(f"{name}: rank {arr.ndim}, declared {len(dims)}")
            for dim, extent in zip(dims, arr.shape):
                if isinstance(dim, int):
                    if dim != extent:
                        raise TCError(f"{name}: extent {extent}, declared {dim}")
                elif scope.sizes.setdefault(dim, extent) != extent:
                    raise TCError(f"size {dim} bound to {scope.sizes[dim]} and {extent}")
            is_int = np.dtype(TC_TYPES[elem]).kind in "iub"
            scope.tensors[name] = arr.astype(np.int64 if is_int else np.float64)
        inputs = {p[0] for p in d["params"]}
        for stmt in d["body"]:
            if stmt[0] == "call":
                _, targets, callee, call_args = stmt
                if callee == def_name:
                    raise TCError("recursive call")
                results = self.run(callee, tuple(
                    scope.tensors[a] if a in scope.tensors else scope.scalars[a] for a in call_args))
                if len(results) != len(targets):
                    raise TCError(f"{callee} returns {len(results)} tensors")
                for t, r in zip(targets, results):
                    if t in inputs:
                        raise TCError(f"call writes input {t}")
                    scope.tensors[t] = r
            else:
                if stmt[1] in inputs:
                    raise TCError(f"statement writes input {stmt[1]}")
                self._assign(scope, stmt)
        missing = [o for o in d["outputs"] if o not in scope.tensors]
        if missing:
            raise TCError(f"outputs never defined: {missing}")
        return tuple(scope.tensors[o] for o in d["outputs"])

    # -- one statement
    def _assign(self, scope: _Scope, stmt):
        _, tensor, lhs, red_op, init, rhs, where_ranges, exists = stmt
        known = set(scope.sizes) | set(scope.scalars) | set(scope.tensors)
        exprs = [rhs] + list(exists) + [x for r in where_ranges.values() for x in r]
        indices = list(lhs)
        for e in exprs:
            for node in _walk(e):
                if node[0] == "name" and node[1] not in known and node[1] not in indices:
                    indices.append(node[1])
        if len(set(lhs)) != len(lhs):
            raise TCError(f"{tensor}: repeated lhs index")
        index_set = set(indices)
        accesses = [node for e in [rhs] + list(exists) for node in _walk(e)
                    if node[0] == "apply" and node[1] in scope.tensors]

        def affine(e):
            tag = e[0]
            if tag == "num":
                return None if e[2] else ({}, e[1])
            if tag == "name":
                if e[1] in index_set:
                    return ({e[1]: 1}, 0)
                if e[1] in scope.sizes:
                    return ({}, scope.sizes[e[1]])
                return None
            if tag == "dim":
                return ({}, scope.tensors[e[1]].shape[e[2]])
            if tag == "un" and e[1] == "-":
                a = affine(e[2])
                return None if a is None else ({k: -v for k, v in a[0].items()}, -a[1])
            if tag == "bin" and e[1] in "+-*":
                a, b = affine(e[2]), affine(e[3])
                if a is None or b is None:
                    return None
                if e[1] == "*":
                    if a[0] and b[0]:
                        return None
                    if a[0]:
                        a, b = b, a
                    return ({k: v * a[1] for k, v in b[0].items()}, a[1] * b[1])
                sign = 1 if e[1] == "+" else -1
                coeffs = dict(a[0])
                for k, v in b[0].items():
                    coeffs[k] = coeffs.get(k, 0) + sign * v
                return ({k: v for k, v in coeffs.items() if v}, a[1] + sign * b[1])
            return None

        def value_of_size_expr(e):
            a = affine(e)
            if a is None or a[0]:
                raise TCError(f"range bound is not a size expression: {e!r}")
            return a[1]

        ranges = {name: (value_of_size_expr(lo), value_of_size_expr(hi))
                  for name, (lo, hi) in where_ranges.items()}
        for name in ranges:
            if name not in index_set:
                raise TCError(f"where range for unused index {name}")

        def bounds(coeffs, const, exclude=None):
            lo = hi = const
            for k, c in coeffs.items():
                if k == exclude:
                    continue
                a, b = c * ranges[k][0], c * (ranges[k][1] - 1)
                lo += min(a, b)
                hi += max(a, b)
            return lo, hi

        # TC range inference, in rounds: an access dimension whose expression has
        # exactly one unresolved index bounds that index (intersected over accesses).
        while True:
            new: dict[str, tuple[int, int]] = {}
            for acc in accesses:
                shape = scope.tensors[acc[1]].shape
                if len(acc[2]) != len(shape):
                    raise TCError(f"{acc[1]} has rank {len(shape)}, accessed with {len(acc[2])}")
                for arg, extent in zip(acc[2], shape):
                    a = affine(arg)
                    if a is None:
                        continue
                    unresolved = [k for k in a[0] if k not in ranges]
                    if len(unresolved) != 1:
                        continue
                    v = unresolved[0]
                    c = a[0][v]
                    rmin, rmax = bounds(a[0], a[1], exclude=v)
                    # 0 <= c*v + r and c*v + r <= extent - 1 for all r in [rmin, rmax]
                    if c > 0:
                        lo, hi = -((rmin) // c), (extent - 1 - rmax) // c + 1
                    else:
                        b = -c
                        lo, hi = -((extent - 1 - rmax) // b), rmin // b + 1
                    old = new.get(v, (lo, hi))
                    new[v] = (max(old[0], lo), min(old[1], hi))
            if not new:
                break
            ranges.update(new)
        unresolved = [k for k in indices if k not in ranges]
        if unresolved:
            raise TCError(f"{tensor}: cannot infer ranges of {unresolved}")
        for k in lhs:
            if ranges[k][0] != 0:
                raise TCError(f"{tensor}: range of lhs index {k} starts at {ranges[k][0]}")
            if ranges[k][1] <= 0:
                raise TCError(f"{tensor}: empty range for lhs index {k}")
        # Static bounds check of every affine access (as polyc does).
        for acc in accesses:
            shape = scope.tensors[acc[1]].shape
            for arg, extent in zip(acc[2], shape):
                a = affine(arg)
                if a is None:
                    continue
                lo, hi = bounds(a[0], a[1])
                if lo < 0 or hi >= extent:
                    raise TCError(f"access to {acc[1]} may be out of bounds: [{lo}, {hi}] "
                                  f"not within [0, {extent})")
        shape = tuple(ranges[k][1] for k in lhs)
        is_int = self._is_int(rhs, scope, index_set)
        if tensor in scope.tensors:
            out = scope.tensors[tensor]
            if out.shape != shape:
                raise TCError(f"{tensor}: lhs ranges {shape} differ from its shape {out.shape}")
        else:
            out = np.zeros(shape, dtype=np.int64 if is_int else np.float64)
            scope.tensors[tensor] = out
        fn = self._compile(rhs, scope, index_set)
        reduction = [k for k in indices if k not in lhs]
        if red_op == "=" and reduction:
            raise TCError(f"{tensor}: '=' with reduction indices {reduction}")
        identity = {"+": 0, "*": 1, "max": -math.inf, "min": math.inf}.get(red_op)
        combine = {"+": lambda a, b: a + b, "*": lambda a, b: a * b,
                   "max": max, "min": min}.get(red_op)
        lhs_space = [range(*ranges[k]) for k in lhs]
        red_space = [range(*ranges[k]) for k in reduction]
        env: dict[str, int] = {}
        for point in itertools.product(*lhs_space):
            env.update(zip(lhs, point))
            if red_op == "=":
                out[point] = fn(env)
                continue
            acc = identity if init else out[point].item()
            for rpoint in itertools.product(*red_space):
                env.update(zip(reduction, rpoint))
                acc = combine(acc, fn(env))
            out[point] = acc

    def _is_int(self, e, scope, index_set) -> bool:
        tag = e[0]
        if tag == "num":
            return not e[2]
        if tag == "name":
            if e[1] in scope.scalars:
                return isinstance(scope.scalars[e[1]], int)
            return True  # index or size
        if tag == "dim":
            return True
        if tag == "apply":
            name, args = e[1], e[2]
            if name in scope.tensors:
                return scope.tensors[name].dtype.kind in "iub"
            if name in TC_TYPES:
                return np.dtype(TC_TYPES[name]).kind in "iub"
            if name in _GENERIC:
                return all(self._is_int(a, scope, index_set) for a in args)
            return False
        if tag == "un":
            return e[1] == "!" or self._is_int(e[2], scope, index_set)
        if tag == "bin":
            if e[1] in ("==", "!=", "<", "<=", ">", ">=", "&&", "||"):
                return True
            return self._is_int(e[2], scope, index_set) and self._is_int(e[3], scope, index_set)
        if tag == "tern":
            return self._is_int(e[2], scope, index_set) and self._is_int(e[3], scope, index_set)
        raise TCError(f"bad expression {e!r}")

    def _compile(self, e, scope: _Scope, index_set):
        tag = e[0]
        if tag == "num":
            v = e[1]
            return lambda env: v
        if tag == "dim":
            v = scope.tensors[e[1]].shape[e[2]]
            return lambda env: v
        if tag == "name":
            n = e[1]
            if n in index_set:
                return lambda env: env[n]
            if n in scope.sizes:
                v = scope.sizes[n]
                return lambda env: v
            if n in scope.scalars:
                v = scope.scalars[n]
                return lambda env: v
            if n in scope.tensors:
                t = scope.tensors[n]
                if t.ndim != 0:
                    raise TCError(f"tensor {n} used without indices")
                return lambda env: t[()].item()
            raise TCError(f"unknown name {n}")
        if tag == "apply":
            name = e[1]
            args = [self._compile(a, scope, index_set) for a in e[2]]
            if name in scope.tensors:
                t = scope.tensors[name]
                if len(args) != t.ndim:
                    raise TCError(f"{name} has rank {t.ndim}")
                shape = t.shape

                def read(env, t=t, args=args, shape=shape, name=name):
                    idx = tuple(a(env) for a in args)
                    for i, extent in zip(idx, shape):
                        if not isinstance(i, (int, np.integer)) or isinstance(i, bool):
                            raise TCError(f"non-integer index {i!r} into {name}")
                        if not 0 <= i < extent:
                            raise TCError(f"index {idx} out of bounds of {name}{shape}")
                    return t[idx].item()
                return read
            if name in TC_TYPES:
                if len(args) != 1:
                    raise TCError(f"cast {name} takes one argument")
                kind = np.dtype(TC_TYPES[name]).kind
                conv = float if kind == "f" else bool if kind == "b" else (lambda x: int(math.trunc(x)))
                a0 = args[0]
                return lambda env: conv(a0(env))
            if name in _MATH:
                f = _MATH[name]
                return lambda env: float(f(*(float(a(env)) for a in args)))
            if name in _GENERIC:
                f = _GENERIC[name]
                return lambda env: f(*(a(env) for a in args))
            raise TCError(f"unknown function or tensor {name}")
        if tag == "un":
            a = self._compile(e[2], scope, index_set)
            if e[1] == "-":
                return lambda env: -a(env)
            return lambda env: int(not a(env))
        if tag == "bin":
            op = e[1]
            a = self._compile(e[2], scope, index_set)
            b = self._compile(e[3], scope, index_set)
            both_int = self._is_int(e[2], scope, index_set) and self._is_int(e[3], scope, index_set)
            if op == "&&":
                return lambda env: int(bool(a(env)) and bool(b(env)))
            if op == "||":
                return lambda env: int(bool(a(env)) or bool(b(env)))
            if op == "/":
                if both_int:
                    return lambda env: _c_div(a(env), b(env))
                return lambda env: float(a(env)) / float(b(env))
            if op == "%":
                if both_int:
                    return lambda env: _c_mod(a(env), b(env))
                return lambda env: math.fmod(a(env), b(env))
            binops = {"+": lambda x, y: x + y, "-": lambda x, y: x - y, "*": lambda x, y: x * y,
                      "==": lambda x, y: int(x == y), "!=": lambda x, y: int(x != y),
                      "<": lambda x, y: int(x < y), "<=": lambda x, y: int(x <= y),
                      ">": lambda x, y: int(x > y), ">=": lambda x, y: int(x >= y)}
            f = binops[op]
            return lambda env: f(a(env), b(env))
        if tag == "tern":
            c = self._compile(e[1], scope, index_set)
            t = self._compile(e[2], scope, index_set)
            o = self._compile(e[3], scope, index_set)
            return lambda env: t(env) if c(env) else o(env)
        raise TCError(f"bad expression {e!r}")


def interpret(op: CorpusOp, inputs: tuple) -> tuple[np.ndarray, ...]:
    return Interpreter(op.source).run(op.def_name, inputs)


# ======================================================================== tests

CASES = [pytest.param(op, k, id=f"{op.name}-{k}") for op in CORPUS for k in range(len(op.shapes))]
OPS = [pytest.param(op, id=op.name) for op in CORPUS]


def _seed(op: CorpusOp, k: int) -> int:
    return sum(op.name.encode()) * 31 + k


def test_corpus_size_and_unique_names():
    assert len(CORPUS) >= 36
    names = [op.name for op in CORPUS]
    assert len(names) == len(set(names))
    assert set(CORPUS_BY_NAME) == set(names)


REQUIRED_TAGS = ("linalg", "conv", "pool", "gather", "polybench", "temporaries", "multi_output",
                 "zero_rank", "double", "int", "where", "let", "exists", "dim_specifier", "call",
                 "ternary", "math", "scalar", "strided", "cast")


@pytest.mark.parametrize("tag", REQUIRED_TAGS)
def test_corpus_covers_tag(tag):
    assert any(tag in op.tags for op in CORPUS), tag


@pytest.mark.parametrize("op", OPS)
def test_source_names_def(op: CorpusOp):
    assert f"def {op.def_name}" in op.source
    defs = parse(op.source)
    assert op.def_name in defs
    assert 2 <= len(op.shapes) <= 3
    assert op.tolerance >= 0


@pytest.mark.parametrize("op", OPS)
def test_input_specs_match_signature(op: CorpusOp):
    params = parse(op.source)[op.def_name]["params"]
    assert [p[0] for p in params] == [s.name for s in op.inputs]
    sizes_in_signature = set()
    for (name, elem, dims), spec in zip(params, op.inputs):
        assert TC_TYPES[elem] == np.dtype(spec.dtype).name, name
        if dims is None:
            assert spec.dims == () and spec.kind.startswith("scalar"), name
        else:
            assert tuple(dims) == tuple(spec.dims), name
            assert not spec.kind.startswith("scalar"), name
            sizes_in_signature |= {d for d in dims if isinstance(d, str)}
    for k, sizes in enumerate(op.shapes):
        assert set(sizes) == sizes_in_signature, f"shape dict {k} binds {sorted(sizes)}"
        assert all(isinstance(v, int) and 1 <= v <= 24 for v in sizes.values()), sizes
    for spec in op.inputs:
        if spec.kind.startswith("index:"):
            assert spec.kind.split(":", 1)[1] in sizes_in_signature
            assert np.dtype(spec.dtype).kind in "iu"


@pytest.mark.parametrize("op", OPS)
def test_shapes_include_unit_extent(op: CorpusOp):
    assert any(1 in sizes.values() for sizes in op.shapes), op.name


@pytest.mark.parametrize("op,k", CASES)
def test_inputs_and_reference_shapes(op: CorpusOp, k: int):
    sizes = op.shapes[k]
    inputs = make_inputs(op, sizes, np.random.default_rng(_seed(op, k)))
    assert len(inputs) == len(op.inputs)
    for spec, value in zip(op.inputs, inputs):
        if spec.kind.startswith("scalar"):
            assert isinstance(value, (float, int)) and not isinstance(value, bool), spec.name
            continue
        assert isinstance(value, np.ndarray), spec.name
        assert value.dtype == np.dtype(spec.dtype), spec.name
        expected_shape = tuple(d if isinstance(d, int) else sizes[d] for d in spec.dims)
        assert value.shape == expected_shape, spec.name
        assert value.flags.c_contiguous
        if spec.kind.startswith("index:"):
            bound = sizes[spec.kind.split(":", 1)[1]]
            assert value.min() >= 0 and value.max() < bound
        if spec.kind == "positive":
            assert value.min() >= 0.5
    expected_shapes = op.expected_output_shapes(sizes)
    outputs = op.reference(*inputs)
    assert isinstance(outputs, tuple)
    assert len(outputs) == len(expected_shapes)
    for out, shape in zip(outputs, expected_shapes):
        assert isinstance(out, np.ndarray)
        assert out.shape == tuple(shape)
        assert all(extent >= 1 for extent in shape), "empty output"
        assert np.all(np.isfinite(out))


def test_make_inputs_is_deterministic():
    op = CORPUS_BY_NAME["embedding_bag"]
    a = make_inputs(op, op.shapes[0], 5)
    b = make_inputs(op, op.shapes[0], np.random.default_rng(5))
    for x, y in zip(a, b):
        np.testing.assert_array_equal(x, y)


@pytest.mark.parametrize("op,k", CASES)
def test_source_agrees_with_reference(op: CorpusOp, k: int):
    """Run the TC source through the naive interpreter: output shapes come from
    TC range inference, values from loop-by-loop evaluation in float64."""
    sizes = op.shapes[k]
    inputs = make_inputs(op, sizes, np.random.default_rng(_seed(op, k)))
    got = interpret(op, inputs)
    expected = op.reference(*inputs)
    shapes = op.expected_output_shapes(sizes)
    assert len(got) == len(expected)
    for n, (g, e, s) in enumerate(zip(got, expected, shapes)):
        assert g.shape == tuple(s), f"output {n}: inferred shape {g.shape}, expected {s}"
        assert_close(g, e, 0.0 if op.tolerance == 0 else 1e-9, what=f"{op.name} output {n}")


# ---------------------------------------------------------------- interpreter self-checks


@pytest.mark.parametrize("source,error", [
    ("def f(float(N) I) -> (O) {\n  O(i) = I(i - 1)\n}", "starts at"),
    ("def f(float(N) I) -> (O) {\n  O(i) = I(i + 1) where i in 0:N\n}", "out of bounds"),
    ("def f(float(N) I) -> (O, P) {\n  O(i) = I(i)\n}", "never defined"),
])
def test_interpreter_rejects(source, error):
    with pytest.raises(TCError, match=error):
        Interpreter(source).run("f", (np.zeros(5, np.float32),))


def test_interpreter_range_inference_examples():
    src = ("def f(float(N) I, float(M) J) -> (A, B, C) {\n"
           "  A(i) = I(3 * i)\n"
           "  B(i) = I(i) + J(i)\n"
           "  C(i) +=! I(2 * i + k) where k in 0:3\n"
           "}\n")
    a, b, c = Interpreter(src).run("f", (np.arange(8.0), np.arange(5.0)))
    assert a.shape == (3,) and b.shape == (5,) and c.shape == (3,)
    np.testing.assert_array_equal(c, [3.0, 9.0, 15.0])


def test_interpreter_c_integer_semantics():
    src = "def f(int32(N) X) -> (Q, R) {\n  Q(i) = X(i) / 4\n  R(i) = X(i) % 4\n}\n"
    q, r = Interpreter(src).run("f", (np.array([-7, 7, -8, 3], np.int32),))
    np.testing.assert_array_equal(q, [-1, 1, -2, 0])
    np.testing.assert_array_equal(r, [-3, 3, 0, 3])


# ---------------------------------------------------------------- assert_close


def test_assert_close():
    e = np.array([1.0, -200.0, 3.0])
    assert_close(e + np.array([1e-5, 1e-2, -1e-5]), e, 1e-4)  # bound 1e-4 * 200
    with pytest.raises(AssertionError):
        assert_close(e + np.array([0.0, 0.0, 0.03]), e, 1e-4)
    with pytest.raises(AssertionError):
        assert_close(e[:2], e, 1e-4)
    with pytest.raises(AssertionError):
        assert_close(np.array([np.nan, 1.0]), np.array([0.0, 1.0]), 1e-4)
    assert_close(np.float32(0.5), np.asarray(0.5), 0.0)
    assert_close(np.array([1, 2], np.int32), np.array([1, 2]), 0.0)
    with pytest.raises(AssertionError):
        assert_close(np.array([1, 3], np.int32), np.array([1, 2]), 0.0)
    small = np.array([1e-3, 2e-3])
    assert_close(small + 5e-5, small, 1e-4)  # absolute below 1


# ---------------------------------------------------------------- hand-written loops


def _loops_conv2d(I, W, stride=1, dilation=1):
    N, C, H, Wd = I.shape
    M, _, KH, KW = W.shape
    Ho = (H - dilation * (KH - 1) - 1) // stride + 1
    Wo = (Wd - dilation * (KW - 1) - 1) // stride + 1
    O = np.zeros((N, M, Ho, Wo))
    for n in range(N):
        for m in range(M):
            for h in range(Ho):
                for w in range(Wo):
                    acc = 0.0
                    for c in range(C):
                        for kh in range(KH):
                            for kw in range(KW):
                                acc += (float(I[n, c, stride * h + dilation * kh,
                                                stride * w + dilation * kw])
                                        * float(W[m, c, kh, kw]))
                    O[n, m, h, w] = acc
    return O


def _loops_maxpool(I):
    N, C, H, W = I.shape
    O = np.zeros((N, C, H // 2, W // 2))
    for n, c, h, w in itertools.product(range(N), range(C), range(H // 2), range(W // 2)):
        O[n, c, h, w] = max(float(I[n, c, 2 * h + a, 2 * w + b]) for a in (0, 1) for b in (0, 1))
    return O


def _loops_softmax(X):
    out = np.zeros(X.shape)
    for n in range(X.shape[0]):
        row = [float(v) for v in X[n]]
        mx = max(row)
        ex = [math.exp(v - mx) for v in row]
        total = sum(ex)
        out[n] = [v / total for v in ex]
    return out


def _loops_layernorm(X, gamma, beta, eps):
    N, D = X.shape
    out = np.zeros((N, D))
    for n in range(N):
        row = [float(v) for v in X[n]]
        mu = sum(row) / D
        var = sum((v - mu) ** 2 for v in row) / D
        for d in range(D):
            out[n, d] = (row[d] - mu) / math.sqrt(var + eps) * float(gamma[d]) + float(beta[d])
    return out


def _loops_contraction(A, B):
    SA, SE, SB, SF = A.shape
    SD, _, SC, _ = B.shape
    out = np.zeros((SA, SB, SC, SD))
    for a, b, c, d in itertools.product(range(SA), range(SB), range(SC), range(SD)):
        out[a, b, c, d] = sum(float(A[a, e, b, f]) * float(B[d, f, c, e])
                              for e in range(SE) for f in range(SF))
    return out


def _loops_embedding_bag(LUT, I):
    B, L = I.shape
    out = np.zeros((B, LUT.shape[1]))
    for b in range(B):
        for l in range(L):
            out[b] += LUT[int(I[b, l])].astype(np.float64)
    return out


def _loops_cross_entropy(X, T):
    total = 0.0
    for b in range(X.shape[0]):
        row = [float(v) for v in X[b]]
        total += math.log(sum(math.exp(v) for v in row)) - row[int(T[b])]
    return np.asarray(total / X.shape[0])


HAND_WRITTEN = {
    "conv2d": lambda I, W: (_loops_conv2d(I, W),),
    "conv2d_strided": lambda I, W: (_loops_conv2d(I, W, stride=2),),
    "conv2d_dilated": lambda I, W: (_loops_conv2d(I, W, dilation=2),),
    "maxpool2x2": lambda I: (_loops_maxpool(I),),
    "softmax": lambda X: (_loops_softmax(X),),
    "layernorm": lambda X, g, b, eps: (_loops_layernorm(X, g, b, eps),),
    "tensor_contraction": lambda A, B: (_loops_contraction(A, B),),
    "embedding_bag": lambda LUT, I: (_loops_embedding_bag(LUT, I),),
    "cross_entropy": lambda X, T: (_loops_cross_entropy(X, T),),
}


@pytest.mark.parametrize("name", sorted(HAND_WRITTEN))
def test_reference_matches_hand_written_loops(name):
    op = CORPUS_BY_NAME[name]
    for k, sizes in enumerate(op.shapes):
        inputs = make_inputs(op, sizes, np.random.default_rng(100 + k))
        for got, want in zip(op.reference(*inputs), HAND_WRITTEN[name](*inputs)):
            assert_close(got, want, 1e-9, what=f"{name} shapes {k}")
