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
