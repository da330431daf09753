"""torch CPU tensors on the plain call path: numpy views in, torch tensors out, clear
errors for what a plain call cannot take (polyc/jit/torch_tensors.py)."""
import re

import numpy as np
import pytest

import polyc
from child_process import run_json

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc

MM = polyc.define("def mm(float(M, K) A, float(K, N) B) -> (C) { C(m, n) +=! A(m, k) * B(k, n) }")
MOMENTS = polyc.define("""def moments(double(N, D) X, double s) -> (mean, top) {
  mean(n) +=! X(n, d) * s
  top(n) max=! X(n, d)
}""")
GATHER = polyc.define("def gather(float(N) T, int64(M) idx) -> (G) { G(i) = T(idx(i)) }")


def test_tensors_in_tensors_out():
    A, B = torch.randn(3, 5), torch.randn(5, 4)
    C = MM(A, B)
    assert isinstance(C, torch.Tensor) and C.dtype == torch.float32 and C.shape == (3, 4)
    np.testing.assert_allclose(C.numpy(), A.double().numpy() @ B.double().numpy(),
                               rtol=1e-5, atol=1e-5)
    mixed = MM(A.numpy(), B)                      # one tensor is enough
    assert isinstance(mixed, torch.Tensor) and torch.equal(mixed, C)
    assert isinstance(MM(A.numpy(), B.numpy()), np.ndarray)


def test_out_tensors_are_filled_and_returned():
    A, B = torch.randn(3, 5), torch.randn(5, 4)
    out = torch.empty(3, 4)
    assert MM(A, B, out=out) is out
    np.testing.assert_allclose(out.numpy(), A.numpy() @ B.numpy(), rtol=1e-5, atol=1e-5)
    X = torch.arange(6, dtype=torch.float64).reshape(2, 3)
    outs = (torch.empty(2, dtype=torch.float64), torch.empty(2, dtype=torch.float64))
    mean, top = MOMENTS(X, torch.tensor(0.5, dtype=torch.float64), out=outs)
    assert mean is outs[0] and top is outs[1]
    assert mean.tolist() == [1.5, 6.0] and top.tolist() == [2.0, 5.0]


def test_index_tensors_and_their_range_check():
    T = torch.arange(5, dtype=torch.float32)
    assert GATHER(T, torch.tensor([4, 0, 2])).tolist() == [4.0, 0.0, 2.0]
    with pytest.raises(polyc.ArgumentError, match=re.escape("idx[1] = 7 but T has 5 entries")):
        GATHER(T, torch.tensor([0, 7]))


@pytest.mark.parametrize("make, message", [
    (lambda: torch.randn(3, 5, requires_grad=True), "A requires grad: a plain polyc call "
                                                    "records no gradient; pass A.detach()"),
    (lambda: torch.randn(5, 3).t(), "A: a non-contiguous tensor (strides (1, 3)): pass "
                                    "A.contiguous()"),
    (lambda: torch.randn(3, 5).bfloat16(), "A: polyc has no type for torch.bfloat16"),
    (lambda: torch.randn(3, 5, dtype=torch.complex64), "polyc has no type for torch.complex64"),
    (lambda: torch.empty(3, 5, device="meta"), "A: a tensor on meta: polyc runs on the CPU; "
                                               "pass A.cpu()"),
    (lambda: torch.randn(3, 5, dtype=torch.float64), "A: expected float32 but got float64"),
])
def test_what_a_plain_call_cannot_take_says_what_to_do(make, message):
    with pytest.raises(polyc.ArgumentError, match=re.escape(message)):
        MM(make(), torch.randn(5, 4))


def test_an_out_tensor_that_cannot_be_written_is_refused():
    with pytest.raises(polyc.ArgumentError, match=re.escape("out: a non-contiguous tensor")):
        MM(torch.randn(3, 5), torch.randn(5, 4), out=torch.empty(4, 3).t())


def test_bound_calls_return_tensors_and_read_the_inputs_each_run():
    A, B = torch.randn(3, 5), torch.randn(5, 4)
    run = MM.bind(A, B)
    first = run()
    assert isinstance(first, torch.Tensor) and repr(run) == "<polyc bound call of mm>"
    A.mul_(2)                                     # the same memory: no copy was made
    np.testing.assert_allclose(run().numpy(), A.numpy() @ B.numpy(), rtol=1e-5, atol=1e-5)


TENSOR_CALLS = {  # the plain case: the C launcher takes these itself once taught
    "inputs": lambda: (MM, (torch.randn(3, 5), torch.randn(5, 4)), None),
    "an offset slice": lambda: (MM, (torch.randn(40)[7:22].view(3, 5), torch.randn(5, 4)),
                                None),
    "out=": lambda: (MM, (torch.randn(3, 5), torch.randn(5, 4)), torch.empty(3, 4)),
    "numpy in, tensor out": lambda: (MM, (np.ones((3, 5), np.float32),
                                          np.ones((5, 4), np.float32)), torch.empty(3, 4)),
    "two outputs": lambda: (MOMENTS, (torch.randn(4, 3, dtype=torch.float64), 0.5), None),
    "two out= tensors": lambda: (MOMENTS, (torch.randn(4, 3, dtype=torch.float64), 0.5),
                                 [torch.empty(4, dtype=torch.float64) for _ in range(2)]),
    "index tensors": lambda: (GATHER, (torch.randn(5), torch.tensor([4, 0, 2, 4])), None),
}
BINDER_CALLS = {  # what only the Python binder takes or refuses
    "requires grad": lambda: (MM, (torch.randn(3, 5, requires_grad=True), torch.randn(5, 4))),
    "a Parameter": lambda: (MM, (torch.nn.Parameter(torch.randn(3, 5), requires_grad=False),
                                 torch.randn(5, 4))),
    "a transpose": lambda: (MM, (torch.randn(5, 3).t(), torch.randn(5, 4))),
    "float64": lambda: (MM, (torch.randn(3, 5, dtype=torch.float64), torch.randn(5, 4))),
    "meta": lambda: (MM, (torch.empty(3, 5, device="meta"), torch.randn(5, 4))),
    "a scalar tensor": lambda: (MOMENTS, (torch.randn(4, 3, dtype=torch.float64),
                                          torch.tensor(0.5, dtype=torch.float64))),
    "an index out of range": lambda: (GATHER, (torch.randn(5), torch.tensor([0, 5]))),
    "empty": lambda: (MM, (torch.randn(0, 5), torch.randn(5, 4))),
}


@pytest.fixture
def python_calls(monkeypatch):
    """The calls with tensors that reach polyc's Python side, counted (after a first
    call of each operator with tensors, which builds its C launcher and teaches the
    launchers torch; without it, a test run alone or first in its worker saw its own
    operator's first call)."""
    MM(torch.randn(3, 5), torch.randn(5, 4))
    MOMENTS(torch.randn(4, 3, dtype=torch.float64), 0.5)
    GATHER(torch.randn(5), torch.tensor([0]))
    if any(op._launcher is None for op in (MM, MOMENTS, GATHER)):
        pytest.skip("calls go through ctypes here: no C launcher")
    seen = []
    original = polyc.api.torch_call

    def counted(*args):
        seen.append(args)
        return original(*args)

    monkeypatch.setattr(polyc.api, "torch_call", counted)
    return seen


@pytest.mark.parametrize("name", sorted(TENSOR_CALLS))
def test_plain_tensors_stay_in_the_c_launcher(name, python_calls):
    op, args, out = TENSOR_CALLS[name]()
    result = op(*args, out=out)
    assert python_calls == []
    expected = op(*[a.numpy() if isinstance(a, torch.Tensor) else a for a in args])
    results = result if isinstance(result, (tuple, list)) else (result,)
    expected = expected if isinstance(expected, tuple) else (expected,)
    if out is not None:  # the caller's own out= objects
        assert list(results) == list(out) if isinstance(out, list) else results[0] is out
    for got, want in zip(results, expected):
        assert isinstance(got, torch.Tensor)
        np.testing.assert_array_equal(got.numpy(), want)


@pytest.mark.parametrize("name", sorted(BINDER_CALLS))
def test_other_tensors_go_to_the_binder_and_get_its_answer(name, python_calls):
    op, args = BINDER_CALLS[name]()
    try:
        got = op(*args)
    except polyc.ArgumentError as error:
        got = error
    assert python_calls and all(a is b for a, b in zip(python_calls[0][1], args))
    try:
        want = op._call_through_binder(args, None)
    except polyc.ArgumentError as error:
        assert isinstance(got, polyc.ArgumentError) and str(got) == str(error)
        return
    got, want = (got, want) if isinstance(want, tuple) else ((got,), (want,))
    for g, w in zip(got, want):
        assert isinstance(g, torch.Tensor) and torch.equal(g, w)


def test_numpy_callers_never_import_torch():
    child = """
import json, sys
import numpy as np
import polyc
op = polyc.define("def add(float(N) A) -> (B) { B(i) = A(i) + 1 }")
op(np.zeros(3, np.float32))
print(json.dumps({"torch": "torch" in sys.modules}))
"""
    assert run_json(child) == {"torch": False}
