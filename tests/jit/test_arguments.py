"""Binding a call's arguments to an operator: arity, dtypes, shapes, sizes,
preconditions, scalars and out= arrays."""
import re

import numpy as np
import pytest

import polyc
from polyc.errors import ArgumentError, InternalError
from polyc.jit import ArgumentBinder, BoundCall, bind_arguments
from polyc.lang import ir
from polyc.lang import sizes as sz
from polyc.lang import types as ty


def dim(extent):
    return sz.Affine.of(extent) if isinstance(extent, (int, str)) else extent


def tensor(name, type_, shape, role=ir.INPUT):
    return ir.Tensor(name, type_, tuple(dim(e) for e in shape), role)


def statement(number, output, op="=", init=False, rhs_tensor=None, reduce=()):
    """``output(i0, i1...) op rhs_tensor(...)`` over the output's box (the body does not
    matter for binding, only which tensor is written and how)."""
    indices = tuple(f"i{k}" for k in range(output.rank))
    domain = tuple(ir.IndexRange(i, sz.const(0), extent)
                   for i, extent in zip(indices, output.shape))
    rhs = ir.Read(output.type, rhs_tensor, ()) if rhs_tensor else ir.Const(output.type, 0)
    return ir.Statement(f"S{number}", output.name, indices, op, init, rhs, domain, reduce)


def make_op(name, inputs, outputs, statements=None, preconditions=(), sizes=None):
    statements = statements or tuple(statement(k, o) for k, o in enumerate(outputs))
    if sizes is None:
        sizes = []
        for t in inputs:
            for extent in t.shape:
                sizes += [n for n in sorted(extent.size_names()) if n not in sizes]
    return ir.Op(name, tuple(sizes), tuple(inputs), tuple(outputs), (), tuple(statements),
                 tuple(preconditions))


F32, F64, I32 = ty.FLOAT32, ty.FLOAT64, ty.INT32
A = tensor("A", F32, ("M", "K"))
B = tensor("B", F32, ("K", "N"))
C = tensor("C", F32, ("M", "N"), ir.OUTPUT)
MATMUL = make_op("matmul", [A, B], [C], [statement(0, C, "+", init=True, reduce=("k",))])
ALPHA = tensor("alpha", F32, ())
SCALED = make_op("scaled_matmul", [A, B, ALPHA], [C],
                 [statement(0, C, "+", init=True, reduce=("k",))])


def scalar_op(type_):
    x = tensor("x", type_, ())
    y = tensor("y", type_, ("N",), ir.OUTPUT)
    return make_op("fill", [x, tensor("Z", F32, ("N",))], [y])


def matrices(m=3, k=5, n=4, dtype=np.float32):
    rng = np.random.default_rng(0)
    return rng.random((m, k)).astype(dtype), rng.random((k, n)).astype(dtype)


def raises(message, call, *args, **kwargs):
    with pytest.raises(ArgumentError, match=re.escape(message)):
        call(*args, **kwargs)


# ----------------------------------------------------------------- the happy path


def test_binds_sizes_inputs_and_outputs():
    a, b = matrices()
    bound = ArgumentBinder(SCALED).bind((a, b, 2.0))
    assert isinstance(bound, BoundCall)
    assert bound.sizes == {"M": 3, "K": 5, "N": 4}
    assert list(bound.sizes) == ["M", "K", "N"]
    assert bound.inputs[0] is a and bound.inputs[1] is b
    assert type(bound.inputs[2]) is np.float32 and bound.inputs[2] == 2.0
    [c] = bound.outputs
    assert c.shape == (3, 4) and c.dtype == np.float32 and c.flags.c_contiguous
    assert bound.results == bound.outputs and bound.copy_back == ()
    assert bound.finish() == bound.results


def test_bind_arguments_is_the_one_off_form():
    a, b = matrices()
    assert bind_arguments(MATMUL, (a, b), None).sizes == {"M": 3, "K": 5, "N": 4}


def test_zero_sized_dimensions():
    a, b = matrices(m=0, k=5, n=0)
    bound = ArgumentBinder(MATMUL).bind((a, b))
    assert bound.sizes == {"M": 0, "K": 5, "N": 0} and bound.outputs[0].shape == (0, 0)


# ----------------------------------------------------------------- arity


def test_arity():
    a, b = matrices()
    raises("matmul takes 2 inputs (A, B) but 3 were given", ArgumentBinder(MATMUL).bind,
           (a, b, b))
    raises("matmul takes 2 inputs (A, B) but 1 was given", ArgumentBinder(MATMUL).bind, (a,))
    x = tensor("X", F32, ("N",))
    one = make_op("copy", [x], [tensor("Y", F32, ("N",), ir.OUTPUT)])
    raises("copy takes 1 input (X) but 0 were given", ArgumentBinder(one).bind, ())


# ----------------------------------------------------------------- tensors


def test_tensor_must_be_an_array():
    a, b = matrices()
    raises("A: expected a numpy array of float32 with shape (M, K) but got list "
           "(convert with np.asarray(A, dtype=np.float32))",
           ArgumentBinder(MATMUL).bind, (a.tolist(), b))


def test_no_silent_casts():
    a, b = matrices()
    raises("A: expected float32 but got float64 (convert with A.astype(np.float32))",
           ArgumentBinder(MATMUL).bind, (a.astype(np.float64), b))
    raises("B: expected float32 but got int32 (convert with B.astype(np.float32))",
           ArgumentBinder(MATMUL).bind, (a, b.astype(np.int32)))
    raises("A: expected float32 but got >f4", ArgumentBinder(MATMUL).bind,
           (a.astype(">f4"), b))


def test_rank():
    a, b = matrices()
    raises("A: expected 2 dimensions (M, K) but got shape (3,)", ArgumentBinder(MATMUL).bind,
           (np.zeros(3, np.float32), b))
    x = tensor("X", F32, ("N",))
    one = make_op("copy", [x], [tensor("Y", F32, ("N",), ir.OUTPUT)])
    raises("X: expected 1 dimension (N) but got shape (2, 2)", ArgumentBinder(one).bind,
           (np.zeros((2, 2), np.float32),))


def test_size_variables_must_agree():
    a, b = matrices(k=4)
    raises("size K is 4 from A.shape[1] but 5 from B.shape[0]", ArgumentBinder(MATMUL).bind,
           (a, np.zeros((5, 4), np.float32)))
    x = tensor("X", F32, ("N", "N"))
    square = make_op("diag", [x], [tensor("D", F32, ("N",), ir.OUTPUT)])
    raises("size N is 2 from X.shape[0] but 3 from X.shape[1]", ArgumentBinder(square).bind,
           (np.zeros((2, 3), np.float32),))


def test_constant_dimensions():
    x = tensor("X", F32, ("N", 3))
    op = make_op("rgb", [x], [tensor("Y", F32, ("N",), ir.OUTPUT)])
    assert ArgumentBinder(op).bind((np.zeros((7, 3), np.float32),)).sizes == {"N": 7}
    raises("X: expected shape (N, 3) but got (4, 2): X.shape[1] must be 3",
           ArgumentBinder(op).bind, (np.zeros((4, 2), np.float32),))


@pytest.mark.parametrize("layout", ["fortran", "strided", "transposed", "unaligned"])
def test_non_contiguous_inputs_are_copied(layout):
    a, b = matrices()
    if layout == "fortran":
        a = np.asfortranarray(a)
    elif layout == "strided":
        a = np.zeros((6, 5), np.float32)[::2]
    elif layout == "transposed":
        a = np.ascontiguousarray(a.T).T
    else:
        buffer = np.zeros(a.size * 4 + 1, np.uint8)[1:]
        a = buffer.view(np.float32).reshape(a.shape)
        assert not a.flags.aligned
    bound = ArgumentBinder(MATMUL).bind((a, b))
    assert bound.inputs[0].flags.c_contiguous and bound.inputs[0].flags.aligned
    np.testing.assert_array_equal(bound.inputs[0], a)
    assert bound.inputs[1] is b


def test_read_only_inputs_are_fine():
    a, b = matrices()
    a.setflags(write=False)
    assert ArgumentBinder(MATMUL).bind((a, b)).inputs[0] is a


# ----------------------------------------------------------------- scalars


@pytest.mark.parametrize("value", [2, 2.0, True, np.float32(2), np.array(2, np.float32)])
def test_float_scalar_accepts(value):
    a, b = matrices()
    bound = ArgumentBinder(SCALED).bind((a, b, value))
    assert type(bound.inputs[2]) is np.float32 and bound.inputs[2] == float(value)


def test_float_scalar_rejects():
    a, b = matrices()
    bind = ArgumentBinder(SCALED).bind
    raises("alpha: expected float32 but got float64 (convert with np.float32(alpha))",
           bind, (a, b, np.float64(2)))
    raises("alpha: expected float32 but got float64", bind, (a, b, np.array(2.0)))
    raises("alpha: expected a float32 scalar but got an array of shape (1,)",
           bind, (a, b, np.ones(1, np.float32)))
    raises("alpha: expected a float32 scalar (a Python number or a 0-d array) but got str",
           bind, (a, b, "2"))
    raises("alpha: 1e+300 is too large for float32", bind, (a, b, 1e300))
    assert np.isinf(bind((a, b, float("inf"))).inputs[2])


def test_integer_scalar():
    op = scalar_op(ty.INT8)
    z = np.zeros(4, np.float32)
    bind = ArgumentBinder(op).bind
    assert type(bind((-128, z)).inputs[0]) is np.int8
    raises("x: expected int8 but got float 2.0 (an integer scalar takes an int",
           bind, (2.0, z))
    raises("x: 200 does not fit in int8 (-128 to 127)", bind, (200, z))
    raises("x: expected int8 but got int64", bind, (np.int64(1), z))
    assert bind((np.int8(5), z)).inputs[0] == 5


def test_bool_scalar():
    op = scalar_op(ty.BOOL)
    z = np.zeros(4, np.float32)
    bind = ArgumentBinder(op).bind
    assert bind((True, z)).inputs[0] is np.True_
    assert bind((np.array(False), z)).inputs[0] == np.False_
    raises("x: expected a bool but got int 1", bind, (1, z))


def test_float64_scalar_takes_big_ints():
    bind = ArgumentBinder(scalar_op(F64)).bind
    assert bind((2**60, np.zeros(1, np.float32))).inputs[0] == float(2**60)
    raises("is too large for float64", bind, (10**400, np.zeros(1, np.float32)))


# ----------------------------------------------------------------- preconditions


def shift_op(condition="[N] -> { : N >= 2 }", size="N"):
    x = tensor("X", F32, (size,))
    y = tensor("Y", F32, (sz.sub(sz.var(size), sz.const(1)),), ir.OUTPUT)
    pre = ir.Precondition(condition, f"`X(i + 1)` in statement S0 stays inside `X` ({size}) "
                                     f"only if {size} >= 2")
    return make_op("shift", [x], [y], preconditions=[pre])


def test_precondition_holds_and_fails():
    binder = ArgumentBinder(shift_op())
    assert binder.bind((np.zeros(5, np.float32),)).outputs[0].shape == (4,)
    raises("shift: the sizes N = 1 do not fit: `X(i + 1)` in statement S0 stays inside `X` "
           "(N) only if N >= 2", binder.bind, (np.zeros(1, np.float32),))


def test_precondition_is_memoised(monkeypatch):
    binder = ArgumentBinder(shift_op())
    calls = []
    original = binder._failed_precondition
    monkeypatch.setattr(binder, "_failed_precondition",
                        lambda sizes: calls.append(sizes) or original(sizes))
    for _ in range(3):
        binder.bind((np.zeros(5, np.float32),))
        with pytest.raises(ArgumentError):
            binder.bind((np.zeros(1, np.float32),))
    assert calls == [{"N": 5}, {"N": 1}]


def test_precondition_parameters_found_by_name():
    # isl lists N before M; the op declares M first.
    x = tensor("X", F32, ("M",))
    y = tensor("Y", F32, ("N",))
    pre = ir.Precondition("[N, M] -> { : N >= M + 1 }", "N must exceed M")
    op = make_op("pair", [x, y], [tensor("Z", F32, ("M",), ir.OUTPUT)], preconditions=[pre])
    binder = ArgumentBinder(op)
    binder.bind((np.zeros(2, np.float32), np.zeros(3, np.float32)))
    raises("pair: the sizes M = 3, N = 3 do not fit: N must exceed M", binder.bind,
           (np.zeros(3, np.float32), np.zeros(3, np.float32)))


def test_precondition_on_an_isl_reserved_size_name():
    binder = ArgumentBinder(shift_op("[floor_] -> { : floor_ >= 2 }", size="floor"))
    binder.bind((np.zeros(2, np.float32),))
    raises("the sizes floor = 1 do not fit", binder.bind, (np.zeros(1, np.float32),))


def test_negative_output_extent():
    x = tensor("X", F32, ("N",))
    y = tensor("Y", F32, (sz.sub(sz.var("N"), sz.const(3)),), ir.OUTPUT)
    binder = ArgumentBinder(make_op("trim", [x], [y]))
    assert binder.bind((np.zeros(3, np.float32),)).outputs[0].shape == (0,)
    raises("trim: output Y would have shape (N - 3) = (-1,) for N = 2: the inputs are too "
           "small", binder.bind, (np.zeros(2, np.float32),))


# ----------------------------------------------------------------- outputs


def test_accumulating_outputs_start_at_zero(monkeypatch):
    x = tensor("X", F32, ("N",))
    outs = [tensor(name, F32, ("N",), ir.OUTPUT) for name in ("Sum", "Init", "Set", "Max")]
    statements = [statement(0, outs[0], "+", init=False, rhs_tensor="X"),
                  statement(1, outs[1], "+", init=True, rhs_tensor="X"),
                  statement(2, outs[2], "=", rhs_tensor="X"),
                  statement(3, outs[3], "max", init=False, rhs_tensor="X"),
                  statement(4, outs[2], "+", init=False, rhs_tensor="X")]
    op = make_op("acc", [x], outs, statements)
    allocated = []
    real_zeros, real_empty = np.zeros, np.empty
    monkeypatch.setattr(np, "zeros", lambda *a: allocated.append("zeros") or real_zeros(*a))
    monkeypatch.setattr(np, "empty", lambda *a: allocated.append("empty") or real_empty(*a))
    bound = ArgumentBinder(op).bind((real_zeros(4, np.float32),))
    monkeypatch.undo()
    assert allocated == ["zeros", "empty", "empty", "zeros"]
    assert not bound.outputs[0].any() and not bound.outputs[3].any()


def test_out_single_array_is_written_in_place():
    a, b = matrices()
    c = np.full((3, 4), 7, np.float32)
    for out in (c, (c,), [c]):
        bound = ArgumentBinder(MATMUL).bind((a, b), out)
        assert bound.outputs[0] is c and bound.results[0] is c and bound.copy_back == ()


def test_out_checks():
    a, b = matrices()
    bind = ArgumentBinder(MATMUL).bind
    raises("out[0] (C): expected shape (3, 4) float32 but got (4, 3) float32",
           bind, (a, b), (np.zeros((4, 3), np.float32),))
    raises("out (C): expected shape (3, 4) float32 but got (3, 4) float64",
           bind, (a, b), np.zeros((3, 4)))
    raises("out[0] (C): expected a numpy array of shape (3, 4) float32 but got list",
           bind, (a, b), ([[0.0] * 4] * 3,))
    read_only = np.zeros((3, 4), np.float32)
    read_only.setflags(write=False)
    raises("out (C) is read-only", bind, (a, b), read_only)
    raises("out: expected 1 array (C) but got 2", bind, (a, b),
           (np.zeros((3, 4), np.float32),) * 2)
    raises("out: expected a numpy array or a tuple of arrays (C) but got dict", bind, (a, b), {})


def two_output_op():
    x = tensor("X", F32, ("N",))
    outs = [tensor(name, F32, ("N",), ir.OUTPUT) for name in ("Lo", "Hi")]
    return make_op("split", [x], outs)


def test_out_with_several_outputs():
    binder = ArgumentBinder(two_output_op())
    x = np.zeros(4, np.float32)
    raises("out: split has 2 outputs (Lo, Hi): pass a tuple of 2 arrays", binder.bind, (x,),
           np.zeros(4, np.float32))
    hi = np.zeros(4, np.float32)
    bound = binder.bind((x,), (None, hi))
    assert bound.results[1] is hi and bound.results[0].shape == (4,)
    both = np.zeros(4, np.float32)
    raises("out[0] (Lo) and out[1] (Hi) share memory", binder.bind, (x,), (both, both))
    # Interleaved views share a buffer but not an element: allowed.
    pair = np.zeros(8, np.float32)
    bound = binder.bind((x,), (pair[0::2], pair[1::2]))
    assert len(bound.copy_back) == 2


def test_non_contiguous_out_is_copied_back():
    a, b = matrices()
    user = np.full((4, 3), 5, np.float32).T  # shape (3, 4), not C-contiguous
    bound = ArgumentBinder(MATMUL).bind((a, b), user)
    [(kernel_array, user_array)] = bound.copy_back
    assert user_array is user and bound.results[0] is user
    assert bound.outputs[0] is kernel_array and kernel_array.flags.c_contiguous
    assert (kernel_array == 5).all()  # accumulating kernels start from the user's values
    kernel_array[...] = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert bound.finish()[0] is user
    np.testing.assert_array_equal(user, np.arange(12).reshape(3, 4))


def test_input_sharing_memory_with_out_is_copied():
    x = tensor("X", F32, ("N",))
    op = make_op("neg", [x], [tensor("Y", F32, ("N",), ir.OUTPUT)])
    data = np.arange(6, dtype=np.float32)
    bound = ArgumentBinder(op).bind((data,), data)
    assert bound.outputs[0] is data
    assert not np.shares_memory(bound.inputs[0], data)
    np.testing.assert_array_equal(bound.inputs[0], np.arange(6))
    view = np.arange(8, dtype=np.float32)
    bound = ArgumentBinder(op).bind((view[2:],), view[:6])
    assert not np.shares_memory(bound.inputs[0], view)
    other = np.zeros(6, np.float32)
    assert ArgumentBinder(op).bind((data,), other).inputs[0] is data  # no needless copy


# ----------------------------------------------------------------- invariants


def test_size_in_no_input_is_an_internal_error():
    x = tensor("X", F32, ("N",))
    op = make_op("bad", [x], [tensor("Y", F32, ("P",), ir.OUTPUT)], sizes=["N", "P"])
    with pytest.raises(InternalError, match="P appear in no input shape"):
        ArgumentBinder(op)


def test_output_shapes_follow_the_sizes_the_inputs_bind():
    conv = polyc.define("def conv(float(N, C, H, W) I, float(K, C, R, S) F) -> (O) "
                        "{ O(n, k, h, w) +=! I(n, c, h + r, w + s) * F(k, c, r, s) }")
    assert conv.output_shapes((2, 3, 9, 8), (4, 3, 3, 2)) == ((2, 4, 7, 7),)
    pool = polyc.define("def pool(float(H, W) X) -> (Y) "
                        "{ Y(h, w) max=! X(2 * h + r, 2 * w + s) where r in 0:2, s in 0:2 }")
    assert pool.output_shapes((9, 6)) == ((4, 3),)
    # min/max extents with the caller's min and max (torch passes sym_min, sym_max)
    clipped = polyc.define("def f(float(M) A, float(N) B) -> (C) "
                           "{ C(i) = A(i) + B(i) where i in 0:min(M, N) }")
    calls = []
    assert clipped.output_shapes((5,), (3,), minimum=lambda a, b: calls.append(1) or min(a, b)
                                 ) == ((3,),) and calls == [1]
