"""Expressions to C text: IR expressions of statement bodies, isl AST expressions of loops.

Arithmetic happens in each IR node's type: an operand of another type is
cast explicitly, so C's promotion rules never silently differ from polyc's.
Affine indices are emitted from their :class:`~polyc.lang.ranges.LinearIndex`
(floor division, exactly as isl modelled them); element offsets are row-major
with int64 arithmetic.
"""
from __future__ import annotations

import copy
import math

import islpy as isl

from polyc.codegen.c_names import c_name
from polyc.errors import InternalError
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty
from polyc.lang.builtins import c_math_name
from polyc.lang.ranges import affine_of
from polyc.poly.program import isl_items

_INT_LIMITS = {t: (f"INT{t.bits}_MIN", f"INT{t.bits}_MAX") for t in
               (ty.INT8, ty.INT16, ty.INT32, ty.INT64)}
_INT_LIMITS.update({t: ("0", f"UINT{t.bits}_MAX") for t in (ty.UINT8, ty.UINT16, ty.UINT32)})


def c_type(elem: ty.ScalarType) -> str:
    return elem.c_type


def literal(value, elem: ty.ScalarType) -> str:
    """A C literal of type ``elem``."""
    if elem.is_float:
        value = float(value)
        suffix = "f" if elem.compute_type.bits == 32 else ""
        if math.isnan(value):
            return "NAN" if suffix else "(double)NAN"
        if math.isinf(value):
            text = "INFINITY" if suffix else "(double)INFINITY"
            return text if value > 0 else f"(-{text})"
        text = repr(value)
        if "e" not in text and "." not in text:
            text += ".0"
        return f"{text}{suffix}"
    if elem.kind == "bool":
        return "1" if value else "0"
    value = int(value)
    if elem.kind == "uint":
        return f"UINT64_C({value})" if elem.bits == 64 else f"{value}u"
    if elem.bits == 64 or not -2**31 < value < 2**31:
        return f"INT64_C({value})"
    return str(value)


def identity(op: str, elem: ty.ScalarType) -> str:
    """The C literal of the identity of reduction ``op`` in type ``elem``."""
    if op == "+":
        return literal(0, elem)
    if op == "*":
        return literal(1, elem)
    if elem.is_float:
        return literal(-math.inf if op == "max" else math.inf, elem.compute_type)
    if elem.kind == "bool":
        return "0" if op == "max" else "1"
    low, high = _INT_LIMITS.get(elem, ("0", "UINT64_MAX"))
    return low if op == "max" else high


def combine(op: str, tensor: ir.Tensor, current: str, value: str | tuple[str, ...]) -> str:
    """C for ``current`` combined with ``value`` by reduction ``op`` in ``tensor``'s type;
    a tuple of terms (:meth:`ExprEmitter.reduced_value`) is combined one term at a time."""
    if isinstance(value, tuple):
        for term in value:
            current = combine(op, tensor, current, term)
        return current
    elem = tensor.type.compute_type
    if op in ("+", "*"):
        if elem.kind == "bool":
            return f"({current} {'||' if op == '+' else '&&'} {value})"
        return f"({current} {op} {value})"
    if elem.is_float:
        suffix = "d" if elem.bits == 64 else "f"
        return f"polyc_{op}{suffix}({current}, {value})"
    compare = ">" if op == "max" else "<"
    return f"(({value}) {compare} ({current}) ? ({value}) : ({current}))"


class ExprEmitter:
    """Emits the IR expressions of one operator's statements as C."""

    def __init__(self, op: ir.Op, contractions=None, check_gathers: bool = True,
                 slack: int = 0):
        self.op = op
        self.slack = slack  # elements allocated past each heap temporary's end
        self.check_gathers = check_gathers
        self.tensors = op.tensors
        self.contractions = contractions or {}  # name -> polyc.scheduling.contraction.Contraction
        self.math_calls: set[str] = set()  # C math functions emitted, e.g. {"expf"}
        self.mask: tuple[frozenset[str], str, int] | None = None
        self.unselected = False  # masked lanes of heap temporaries loaded, not selected
        # the temporaries some lanes past an edge read unselected (their slack is zeroed);
        # shared by every view, as ``math_calls`` is
        self.unselected_reads: set[str] = set()
        self.renames: dict[str, str] = {}  # tensor -> the C array that stands for it
        self.redirects: dict = {}  # tensor -> indices -> C of the element elsewhere, or None
        self.substitutes: dict[ir.Expr, str] = {}  # expression -> C of its value elsewhere

    def renamed(self, renames: dict[str, str]) -> "ExprEmitter":
        """This emitter, but accesses of the tensors in ``renames`` go to other C arrays of
        the same shape (a thread's private accumulator, :mod:`polyc.scheduling.privatize`)."""
        view = copy.copy(self)
        view.renames = {**self.renames, **renames}
        return view

    def redirected(self, redirects: dict) -> "ExprEmitter":
        """This emitter, but a read of a tensor in ``redirects`` is the C its function
        gives for the read's indices, where it gives one (a packed panel's element,
        :mod:`polyc.codegen.panels`)."""
        view = copy.copy(self)
        view.redirects = {**self.redirects, **redirects}
        return view

    def substituted(self, substitutes: dict[ir.Expr, str]) -> "ExprEmitter":
        """This emitter, but an expression in ``substitutes`` is the C given for it (a
        packed row factor's element, :mod:`polyc.codegen.panels`)."""
        view = copy.copy(self)
        view.substitutes = {**self.substitutes, **substitutes}
        return view

    def masked(self, indices: frozenset[str], condition: str, lanes: int) -> "ExprEmitter":
        """This emitter, but a read whose indices use one of ``indices`` reads 0 unless
        ``condition`` holds: the ``lanes`` lanes of a vector block past the edge of a
        tensor compute on zeros and are never stored (see
        :mod:`polyc.codegen.register_block`)."""
        view = copy.copy(self)
        view.mask = (indices, condition, lanes)
        return view

    def lanes_unselected(self) -> "ExprEmitter":
        """This (masked) emitter, but the lanes past the edge of a temporary on the heap
        keep whatever they load: for a block whose lanes never meet (each is its own
        output) and whose expression has no effect but its value (no gathered index,
        float arithmetic), a lane past the edge is computed and dropped unseen. The
        temporaries read so (:attr:`unselected_reads`) have their slack zeroed when
        they are allocated. Without mask registers the select's masks had taken the
        registers of the block's accumulators (a convolution with 14 output columns
        under AVX2: 23.6 -> 14.4 ms). Panels keep the select: their lanes past the edge
        are never written."""
        view = copy.copy(self)
        view.unselected = True
        return view

    def loads_every_lane(self, e: ir.Expr) -> bool:
        """Whether, under this emitter's mask, every read of ``e`` that the mask touches
        loads all its lanes and selects (:meth:`_lanes_loadable`): none is a load under
        a condition, which gcc compiles with the block's accumulators in memory."""
        return all(self._lanes_loadable(r) for r in self._masked_reads(e))

    def masked_loads_contiguous(self, e: ir.Expr) -> bool:
        """Whether, under this emitter's mask, every read of ``e`` that the mask touches
        reads its lanes from consecutive elements: a packed panel, or a tensor whose
        masked indices move only its last index, by one element per lane (not a
        strided convolution's ``2 * w``, whose lanes gcc gathers with permutes)."""
        def contiguous(read: ir.Read) -> bool:
            steps = self._lane_steps(read)
            return self._from_panel(read) or (steps is not None and sum(steps) == 1)

        return all(contiguous(r) for r in self._masked_reads(e))

    def _masked_reads(self, e: ir.Expr) -> list[ir.Read]:
        """The reads of ``e`` whose indices this emitter's mask touches (none unmasked)."""
        if self.mask is None:
            return []
        return [r for r in ir.walk(e)
                if isinstance(r, ir.Read) and self.mask[0] & index_names(r.indices)]

    def _from_panel(self, e: ir.Read) -> bool:
        """Whether ``e`` is read from a packed panel (a redirect that takes it)."""
        redirect = self.redirects.get(e.tensor)
        return redirect is not None and redirect(e.indices) is not None

    def _lane_steps(self, e: ir.Read) -> tuple[int, ...] | None:
        """The elements each of the mask's indices moves ``e`` per lane, where they move
        only its last index, affinely; ``None`` otherwise."""
        masked = self.mask[0]
        if not e.indices or masked & index_names(e.indices[:-1]):
            return None
        last = affine_of(e.indices[-1])
        return None if last is None else tuple(last.coefficient(name) for name in masked)

    def _lanes_loadable(self, e: ir.Read) -> bool:
        """Whether a masked block's lanes past the edge may load ``e`` (then select 0):
        a packed panel holds every lane of the block; a temporary on the heap has
        ``slack`` elements past its end (:func:`polyc.machine.rules.edge_slack`), and
        where the masked indices move only its last index, ``c`` elements per lane
        (``c >= 0``), a lane past the edge reads at most ``c * (lanes - 1)`` elements
        past the last lane's element (a strided convolution's ``2 * w``: 2)."""
        if self._from_panel(e):
            return True
        tensor = self.tensors[e.tensor]
        if (tensor.role != ir.TEMPORARY or tensor.storage or e.tensor in self.contractions
                or e.tensor in self.renames):
            return False
        steps = self._lane_steps(e)
        return (steps is not None and min(steps, default=0) >= 0
                and sum(steps) * (self.mask[2] - 1) <= self.slack)

    def _math(self, name: str, double: bool) -> str:
        c_function = c_math_name(name, double)
        self.math_calls.add(c_function)
        return c_function

    def size(self, e: sz.SizeExpr) -> str:
        return sz.to_c(e, c_name)

    def element_count(self, shape: tuple[sz.SizeExpr, ...]) -> str:
        """C expression: the number of elements of an array of ``shape`` (never negative)."""
        return " * ".join(f"polyc_extent({self.size(d)})" for d in shape) or "1"

    def element_offset(self, tensor: ir.Tensor, indices: tuple[ir.Expr, ...]) -> str:
        """Row-major offset ``((i0) * D1 + i1) * D2 + i2`` in int64; a contracted
        temporary's dimensions shrunk to one element are left out (their index is
        always 0), those shrunk to a window of ``W`` are indexed ``i % W``."""
        contraction = self.contractions.get(tensor.name)
        shape = tensor.shape
        texts = [self.index(index, extent) for index, extent in zip(indices, shape)]
        if contraction is not None:
            shape = contraction.shape(tensor)
            texts = [text if window is None else f"({text}) % {window}"
                     for text, window in zip(texts, contraction.windows)]
            kept = [k for k, window in enumerate(contraction.windows) if window != 1]
            shape = tuple(shape[k] for k in kept)
            texts = [texts[k] for k in kept]
        offset = ""
        for k, text in enumerate(texts):
            offset = text if k == 0 else \
                f"({offset}) * {_parenthesized(self.size(shape[k]))} + {text}"
        return offset or "0"

    def index(self, index: ir.Expr, extent: sz.SizeExpr) -> str:
        linear = affine_of(index)
        if linear is not None:
            terms = [f"{c} * {c_name(n)}" if c != 1 else c_name(n)
                     for n, c in linear.coefficients]
            offset = linear.offset
            if not (isinstance(offset, sz.Affine) and offset.is_constant and offset.const == 0):
                terms.append(f"({self.size(offset)})")
            return " + ".join(terms) if terms else "0"
        value = self.expr(index, ty.INT64)
        if not self.check_gathers:  # the user opted out: an index outside is undefined
            return f"({value})"
        return f"polyc_gather_index({value}, {self.size(extent)}, &polyc_status)"

    def access(self, tensor_name: str, indices: tuple[ir.Expr, ...]) -> str:
        redirect = self.redirects.get(tensor_name)
        text = redirect(indices) if redirect is not None else None
        if text is not None:
            return text
        tensor = self.tensors[tensor_name]
        name = self.renames.get(tensor_name) or c_name(tensor.storage or tensor_name)
        if tensor.rank == 0 and tensor.role == ir.INPUT:
            return name
        return f"{name}[{self.element_offset(tensor, indices)}]"

    def expr(self, e: ir.Expr, want: ty.ScalarType | None = None) -> str:
        """C text of ``e``, converted to ``want`` when given and different."""
        text = self._expr(e)
        if want is not None and want.compute_type != e.type.compute_type:
            return self.convert(text, e.type, want)
        return text

    def reduced_value(self, statement: ir.Statement, tensor: ir.Tensor) -> str | tuple[str, ...]:
        """The C value a reduction combines into its element: the right-hand side, or for
        a floating-point sum of a sum, its terms (:func:`combine` adds them one at a time).

        ``acc + (A(j, k) * B(i, k) + B(j, k) * A(i, k))`` as written costs a multiply, a
        fused multiply-add and an add per point; ``(acc + A(j, k) * B(i, k)) + B(j, k) *
        A(i, k)`` two fused multiply-adds. Both sum the same terms of the reduction, in
        another order, as vectorised and tiled sums do."""
        elem = tensor.type.compute_type
        if statement.op != "+" or not elem.is_float or statement.rhs.type.compute_type != elem:
            return self.expr(statement.rhs, tensor.type)
        terms = summands(statement.rhs)
        if len(terms) == 1:
            return self.expr(statement.rhs, tensor.type)
        return tuple(self.expr(term, tensor.type) for term in terms)

    def convert(self, text: str, source: ty.ScalarType, target: ty.ScalarType) -> str:
        target = target.compute_type
        if source.is_float and target.is_integral and target.kind != "bool":
            if target == ty.UINT64:
                return f"polyc_f2u64({text})"
            low, high = _INT_LIMITS[target]
            return f"(({target.c_type})polyc_f2i({text}, (double){low}, (double){high}))"
        if target.kind == "bool":
            return f"(({text}) != 0)"
        return f"(({target.c_type})({text}))"

    def _expr(self, e: ir.Expr) -> str:
        if self.substitutes and e in self.substitutes:
            return self.substitutes[e]
        if isinstance(e, ir.Const):
            return literal(e.value, e.type.compute_type)
        if isinstance(e, ir.Index):
            return c_name(e.name)
        if isinstance(e, ir.SizeValue):
            return f"({self.size(e.size)})"
        if isinstance(e, ir.Read):
            text = self.access(e.tensor, e.indices)
            tensor = self.tensors[e.tensor]
            if tensor.type.compute_type != tensor.type:
                text = f"(({tensor.type.compute_type.c_type}){text})"
            if self.mask is not None and self.mask[0] & index_names(e.indices):
                if self._lanes_loadable(e):  # loaded whatever the lane, then selected
                    if self.unselected and not self._from_panel(e):
                        self.unselected_reads.add(e.tensor)
                        return text
                    return f"POLYC_LANE_KEEP({self.mask[1]}, {text})"
                zero = literal(0, tensor.type.compute_type)
                text = f"(({self.mask[1]}) ? {text} : {zero})"
            return text
        if isinstance(e, ir.Cast):
            return self.convert(self._expr(e.operand), e.operand.type, e.type)
        if isinstance(e, ir.Unary):
            if e.op == "!":
                return f"(!{self._paren(e.operand)})"
            return f"(-{self.expr(e.operand, e.type)})"
        if isinstance(e, ir.Binary):
            return self._binary(e)
        if isinstance(e, ir.Select):
            return (f"({self._paren(e.cond)} ? {self.expr(e.then, e.type)} : "
                    f"{self.expr(e.other, e.type)})")
        if isinstance(e, ir.Call):
            return self._call(e)
        raise InternalError(f"cannot emit {e!r}")

    def _paren(self, e: ir.Expr) -> str:
        text = self._expr(e)
        return text if text.startswith("(") and text.endswith(")") else f"({text})"

    def _binary(self, e: ir.Binary) -> str:
        if e.op in ("&&", "||"):
            return f"({self._paren(e.lhs)} {e.op} {self._paren(e.rhs)})"
        if e.op in ("==", "!=", "<", "<=", ">", ">="):
            common, _ = ty.promote(e.lhs.type, False, e.rhs.type, False)
            return f"({self.expr(e.lhs, common)} {e.op} {self.expr(e.rhs, common)})"
        elem = e.type.compute_type
        lhs, rhs = self.expr(e.lhs, elem), self.expr(e.rhs, elem)
        if e.op in ("/", "%") and elem.is_integral:
            helper = "div" if e.op == "/" else "mod"
            return f"polyc_{helper}_{elem.name}({lhs}, {rhs})"
        if e.op == "%":
            return f"{c_math_name('fmod', elem.bits == 64)}({lhs}, {rhs})"
        return f"({lhs} {e.op} {rhs})"

    def _call(self, e: ir.Call) -> str:
        elem = e.type.compute_type
        args = [self.expr(a, elem) for a in e.args]
        double = elem.bits == 64
        if e.function in ("fmin", "fmax") or (e.function in ("min", "max") and elem.is_float):
            name = e.function if e.function.startswith("f") else "f" + e.function
            return f"polyc_{c_math_name(name, double)}({args[0]}, {args[1]})"
        if e.function in ("min", "max"):
            compare = "<" if e.function == "min" else ">"
            return f"(({args[0]}) {compare} ({args[1]}) ? ({args[0]}) : ({args[1]}))"
        if e.function == "abs":
            if elem.is_float:
                return f"{c_math_name('fabs', double)}({args[0]})"
            return f"(({args[0]}) < 0 ? -({args[0]}) : ({args[0]}))"
        if e.function == "rsqrt":
            return f"({literal(1, elem)} / {self._math('sqrt', double)}({args[0]}))"
        return f"{self._math(e.function, double)}({', '.join(args)})"


def summands(e: ir.Expr) -> list[ir.Expr]:
    """The terms of ``e`` read as a sum ``t1 + t2 + ...`` (additions of ``e``'s type)."""
    if isinstance(e, ir.Binary) and e.op == "+" and e.lhs.type == e.type == e.rhs.type:
        return summands(e.lhs) + summands(e.rhs)
    return [e]


def index_names(indices: tuple[ir.Expr, ...]) -> frozenset[str]:
    """The loop indices that some of ``indices`` use (inside gathers too)."""
    return ir.index_names(*indices)


def _parenthesized(text: str) -> str:
    return text if text.isidentifier() or text.isdigit() else f"({text})"


# ----------------------------------------------------------------- isl AST expressions

_ISL_BINARY = {
    isl.ast_expr_op_type.add: "+", isl.ast_expr_op_type.sub: "-",
    isl.ast_expr_op_type.mul: "*", isl.ast_expr_op_type.div: "/",
    isl.ast_expr_op_type.pdiv_q: "/", isl.ast_expr_op_type.pdiv_r: "%",
    isl.ast_expr_op_type.zdiv_r: "%", isl.ast_expr_op_type.eq: "==",
    isl.ast_expr_op_type.le: "<=", isl.ast_expr_op_type.lt: "<",
    isl.ast_expr_op_type.ge: ">=", isl.ast_expr_op_type.gt: ">",
    isl.ast_expr_op_type.and_: "&&", isl.ast_expr_op_type.and_then: "&&",
    isl.ast_expr_op_type.or_: "||", isl.ast_expr_op_type.or_else: "||",
}


def isl_expr_to_c(expr: isl.AstExpr, names: dict[str, str]) -> str:
    """C text of an isl AST expression; ``names`` maps isl identifiers to C names."""
    kind = expr.get_type()
    if kind == isl.ast_expr_type.int:
        value = expr.get_val().to_python()
        return str(value) if -2**31 < value < 2**31 else f"INT64_C({value})"
    if kind == isl.ast_expr_type.id:
        name = expr.get_id().get_name()
        return names.get(name, name)
    op = expr.get_op_type()
    args = [isl_expr_to_c(expr.get_op_arg(k), names) for k in range(expr.get_op_n_arg())]
    if op in _ISL_BINARY:
        return f"({args[0]} {_ISL_BINARY[op]} {args[1]})"
    if op == isl.ast_expr_op_type.minus:
        return f"(-{args[0]})"
    if op == isl.ast_expr_op_type.fdiv_q:
        return f"polyc_floordiv({args[0]}, {args[1]})"
    if op in (isl.ast_expr_op_type.min, isl.ast_expr_op_type.max):
        helper = "polyc_min" if op == isl.ast_expr_op_type.min else "polyc_max"
        result = args[0]
        for other in args[1:]:
            result = f"{helper}({result}, {other})"
        return result
    if op in (isl.ast_expr_op_type.cond, isl.ast_expr_op_type.select):
        return f"({args[0]} ? {args[1]} : {args[2]})"
    raise InternalError(f"unsupported isl AST expression {expr.to_C_str()}")


def set_to_c(condition: isl.Set, names: dict[str, str]) -> tuple[str, frozenset[str]] | None:
    """C text of an isl set over schedule dimensions as a condition on the AST's loop
    iterators (dimension ``k`` is ``c<k>``), with the iterators it uses; ``names`` maps
    isl parameter names to C. ``None`` when the set needs existentially quantified
    variables."""
    condition = condition.coalesce()
    disjuncts, used = [], set()
    for piece in isl_items(condition.get_basic_set_list()):
        piece = piece.remove_redundancies()
        if piece.dim(isl.dim_type.div):
            return None
        terms = []
        for constraint in piece.get_constraints():
            parts = []
            for kind in (isl.dim_type.set, isl.dim_type.param):
                for k in range(piece.dim(kind)):
                    value = constraint.get_coefficient_val(kind, k).to_python()
                    if not value:
                        continue
                    if kind == isl.dim_type.set:
                        name = f"c{k}"
                        used.add(name)
                    else:
                        name = names.get(piece.get_dim_name(kind, k), piece.get_dim_name(kind, k))
                    parts.append(f"{value} * {name}")
            parts.append(str(constraint.get_constant_val().to_python()))
            relation = "==" if constraint.is_equality() else ">="
            terms.append(f"({' + '.join(parts)} {relation} 0)")
        disjuncts.append(" && ".join(terms) or "1")
    text = "(" + " || ".join(f"({d})" for d in disjuncts) + ")" if disjuncts else "0"
    return text, frozenset(used)

