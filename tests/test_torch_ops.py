"""polyc.to_torch: operators as torch.library custom ops (eager, autograd, opcheck,
torch.compile), where torch is installed."""
import pytest

import polyc

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc

LINEAR = """def linear(float(M, K) X, float(N, K) W, float(N) b, float alpha) -> (Y, S) {
  Y(m, n) +=! X(m, k) * W(n, k)
  Y(m, n) = alpha * tanh(Y(m, n) + b(n))
  S(m) +=! Y(m, n) * Y(m, n)
}"""


@pytest.fixture(scope="module")
def linear():
    return polyc.to_torch(polyc.define(LINEAR))


def _reference(x, w, b, alpha):
    y = alpha * torch.tanh(x @ w.T + b)
    return y, (y * y).sum(dim=1)


def _recorded_calls():
    """A dispatch mode that records the ops called under it: ``ops``, and ``names``."""
    from torch.utils._python_dispatch import TorchDispatchMode

    class Calls(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.ops, self.names = [], []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.ops.append(func)
            self.names.append(str(func.overloadpacket))
            return func(*args, **(kwargs or {}))

    return Calls()


def _leaves(*shapes, seed=0):
    generator = torch.Generator().manual_seed(seed)
    return [torch.randn(*s, generator=generator, requires_grad=True) for s in shapes]


def test_the_same_operator_gives_the_same_op_named_after_it(linear):
    assert polyc.to_torch(polyc.define(LINEAR)) is linear
    assert linear.name() == "polyc::linear"
    other = polyc.to_torch(polyc.define(LINEAR.replace("tanh", "exp")))
    assert other is not linear and other.name() == "polyc::linear_2"


def test_eager_values_and_gradients_equal_torch(linear):
    x, w, b = _leaves((4, 5), (3, 5), (3,))
    y, s = linear(x, w, b, 1.5)
    (y.sum() + s.sum()).backward()
    x2, w2, b2 = (t.detach().clone().requires_grad_() for t in (x, w, b))
    y2, s2 = _reference(x2, w2, b2, 1.5)
    (y2.sum() + s2.sum()).backward()
    torch.testing.assert_close(y, y2)
    torch.testing.assert_close(s, s2)
    for ours, theirs in ((x, x2), (w, w2), (b, b2)):
        torch.testing.assert_close(ours.grad, theirs.grad, rtol=1e-4, atol=1e-5)


def test_opcheck_passes(linear):
    x, w, b = (t.detach() for t in _leaves((4, 5), (3, 5), (3,)))
    result = torch.library.opcheck(linear, (x, w, b, 0.5))
    assert set(result.values()) == {"SUCCESS"}


def test_double_backward(linear):
    x, w, b = _leaves((3, 4), (2, 4), (2,), seed=1)
    y, s = linear(x, w, b, 1.5)
    g, = torch.autograd.grad(s.sum() + y.sum(), x, create_graph=True)
    gg, = torch.autograd.grad(g.pow(2).sum(), w)
    x2, w2, b2 = (t.detach().clone().requires_grad_() for t in (x, w, b))
    y2, s2 = _reference(x2, w2, b2, 1.5)
    g2, = torch.autograd.grad(s2.sum() + y2.sum(), x2, create_graph=True)
    gg2, = torch.autograd.grad(g2.pow(2).sum(), w2)
    torch.testing.assert_close(gg, gg2, rtol=1e-4, atol=1e-4)


def test_compiled_once_for_every_batch_size_without_graph_breaks(linear):
    torch._dynamo.reset()
    graphs = []

    def backend(graph, example_inputs):
        graphs.append(graph)
        return graph.forward

    w = torch.randn(3, 5, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    model = torch.compile(lambda x: linear(x, w, b, 0.5)[1].sum(), fullgraph=True,
                          dynamic=True, backend=backend)
    for batch in (2, 3, 9):
        x = torch.randn(batch, 5)
        loss = model(x)
        loss.backward()
        expected = _reference(x, w.detach(), b.detach(), 0.5)[1].sum()
        torch.testing.assert_close(loss.detach(), expected)
    assert len(graphs) == 1


def test_compiled_graphs_run_the_forward_that_saves_and_the_backward_that_takes(linear):
    """Under torch.compile, AOTAutograd's forward graph calls ``polyc::<name>_forward``
    (which also returns the reductions the backward reads) and its backward graph
    ``polyc::<name>_backward``, not the backward that recomputes them."""
    from functorch.compile import make_boxed_func
    from torch._dynamo.backends.common import aot_autograd

    torch._dynamo.reset()
    called = {"forward": [], "backward": []}

    def recorder(kind):
        def compiler(graph, example_inputs):
            called[kind] += [node.target for node in graph.graph.nodes
                             if node.op == "call_function" and "polyc" in str(node.target)]
            return make_boxed_func(graph.forward)
        return compiler

    w = torch.randn(3, 5, requires_grad=True)
    b = torch.zeros(3, requires_grad=True)
    model = torch.compile(lambda x: linear(x, w, b, 0.5)[1].sum(), fullgraph=True,
                          dynamic=True, backend=aot_autograd(fw_compiler=recorder("forward"),
                                                             bw_compiler=recorder("backward")))
    x = torch.randn(4, 5)
    model(x).backward()
    (forward,), (backward,) = called["forward"], called["backward"]
    assert str(forward).startswith("polyc.linear_forward") and str(backward).startswith(
        "polyc.linear_backward")
    # x needs no gradient: the backward returns d_W and d_b only
    assert len(backward._schema.returns) == 2
    w2, b2 = (t.detach().clone().requires_grad_() for t in (w, b))
    expected = torch.autograd.grad(_reference(x, w2, b2, 0.5)[1].sum(), (w2, b2))
    torch.testing.assert_close((w.grad, b.grad), expected, rtol=1e-4, atol=1e-5)


def test_the_backward_computes_only_the_gradients_asked_for(linear):
    """Inputs that need no gradient (a model's data, a frozen weight) get none, and the
    backward does not compute it: the op it runs returns the others only."""
    x, w, b = _leaves((4, 5), (3, 5), (3,), seed=5)
    frozen = w.detach()
    with _recorded_calls() as calls:
        y, s = linear(x.detach(), frozen, b, 0.5)
        (d_b,) = torch.autograd.grad(y.sum() + s.sum(), (b,))
    (backward,) = [f for f in calls.ops if "linear_backward" in str(f)]
    assert len(backward._schema.returns) == 1
    b2 = b.detach().clone().requires_grad_()
    expected = torch.autograd.grad(sum(t.sum() for t in _reference(x.detach(), frozen, b2,
                                                                   0.5)), (b2,))
    torch.testing.assert_close((d_b,), expected, rtol=1e-4, atol=1e-5)


def test_shape_errors_are_polyc_argument_errors(linear):
    with pytest.raises(polyc.ArgumentError, match="size K is 5 from X.shape"):
        linear(torch.randn(4, 5), torch.randn(3, 6), torch.randn(3), 1.0)
    compiled = torch.compile(lambda x, w: linear(x, w, torch.zeros(3), 1.0)[0],
                             fullgraph=True, dynamic=True, backend="eager")
    with pytest.raises(polyc.ArgumentError, match="size K"):
        compiled(torch.randn(4, 5), torch.randn(3, 6))


def test_shape_errors_under_a_compiled_training_graph_are_polyc_argument_errors(linear):
    # AOTAutograd traces the backward too: the gradient of W must be traced with W's
    # shape (K from W, not from X), or torch's check of gradient shapes fails first
    w, b = _leaves((3, 6), (3,))
    compiled = torch.compile(lambda x: linear(x, w, b, 1.0)[1].sum(), fullgraph=True,
                             dynamic=True, backend="aot_eager")
    compiled(torch.randn(4, 6)).backward()
    with pytest.raises(polyc.ArgumentError, match="size K is 5 from X.shape"):
        compiled(torch.randn(4, 5)).backward()
    with pytest.raises(polyc.ArgumentError, match="size K is 7 from X.shape"):
        compiled(torch.randn(2, 7, requires_grad=True)).backward()


def test_integer_inputs_get_no_gradient():
    bag = polyc.to_torch(polyc.define(
        "def bag(float(V, D) E, int64(B, L) I) -> (O) { O(b, d) +=! E(I(b, l), d) }"))
    e = torch.randn(6, 3, requires_grad=True)
    i = torch.tensor([[0, 2, 2], [5, 1, 0]])
    bag(e, i).sum().backward()
    expected = torch.zeros(6, 3)
    expected.index_add_(0, i.flatten(), torch.ones(6, 3))
    torch.testing.assert_close(e.grad, expected)


def test_without_torch_to_torch_says_how_to_get_it(monkeypatch):
    import sys

    from polyc.torch_ops import to_torch

    monkeypatch.setitem(sys.modules, "torch", None)  # import torch raises ImportError
    with pytest.raises(polyc.ConfigurationError, match=r"pip install 'polyc\[torch\]'"):
        to_torch(polyc.define("def f(float(N) X) -> (Y) { Y(i) = X(i) }"))


def test_no_grad_calls_parameters_and_strided_views_run_the_kernel(linear):
    x, w, b = _leaves((4, 5), (3, 5), (3,), seed=2)
    y_expected, s_expected = _reference(x.detach(), w.detach(), b.detach(), 0.5)
    with torch.no_grad():  # leaves that require grad: no graph, the kernel detaches them
        y, s = linear(x, w, b, 0.5)
    assert y.grad_fn is None and not s.requires_grad
    torch.testing.assert_close(s, s_expected)
    strided = w.detach().t().contiguous().t()  # the same values, column-major
    assert not strided.is_contiguous()
    torch.testing.assert_close(linear(x.detach(), strided, b.detach(), 0.5)[0], y_expected)
    weight = torch.nn.Parameter(w.detach().clone())
    y, s = linear(x.detach(), weight, b.detach(), 0.5)
    s.sum().backward()
    torch.testing.assert_close(s, s_expected)
    assert weight.grad is not None and weight.grad.shape == (3, 5)


def test_backward_takes_the_saved_product_and_double_backward_recomputes_it(linear):
    x, w, b = _leaves((4, 5), (3, 5), (3,), seed=2)
    with _recorded_calls() as calls:
        y, s = linear(x, w, b, 0.5)
        saved = torch.autograd.grad(y.sum() + s.sum(), (x, w, b))
    assert "polyc.linear_forward" in calls.names and "polyc.linear_backward" in calls.names
    assert "polyc.linear_grad" not in calls.names
    with _recorded_calls() as calls:
        y, s = linear(x, w, b, 0.5)
        recomputed = torch.autograd.grad(y.sum() + s.sum(), (x, w, b), create_graph=True)
    # the recomputing backward, itself differentiable (through its own saving forward)
    assert "polyc.linear_backward" not in calls.names
    assert {"polyc.linear_grad", "polyc.linear_grad_forward"} & set(calls.names)
    for ours, theirs in zip(saved, recomputed):
        torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)


SOFTMAX = """def softmax(float(N, D) X) -> (Y) {
  m(n) max=! X(n, d)
  e(n, d) = exp(X(n, d) - m(n))
  s(n) +=! e(n, d)
  Y(n, d) = e(n, d) / s(n)
}"""


def test_the_backward_takes_the_output_it_reads_and_torch_guards_it():
    """softmax's backward reads its output (torch's saved tensor), not exp again; an
    output changed in place before the backward is torch's error, as for torch.softmax."""
    f = polyc.to_torch(polyc.define(SOFTMAX))
    (x,) = _leaves((5, 7), seed=3)
    y = f(x)
    d_y = torch.randn(5, 7, generator=torch.Generator().manual_seed(4))
    (ours,) = torch.autograd.grad(y, x, d_y)
    (theirs,) = torch.autograd.grad(torch.softmax(x, dim=1), x, d_y)
    torch.testing.assert_close(ours, theirs, rtol=1e-5, atol=1e-6)
    y = f(x)
    y.mul_(2.0)
    with pytest.raises(RuntimeError, match="modified by an inplace operation"):
        torch.autograd.grad(y, x, d_y)


def test_a_number_output_beside_a_number_input_traces():
    # 0-rank output and input: the fake gives the output its shape from the sizes (the
    # input is a Python number in torch's schema, with no shape to take)
    total = polyc.to_torch(polyc.define(
        "def total(float(N) x, float scale) -> (T) { T +=! scale * x(i) * x(i) }"))
    x = torch.randn(5, requires_grad=True)
    compiled = torch.compile(lambda x: total(x, 2.0), fullgraph=True, dynamic=True,
                             backend="aot_eager")
    value = compiled(x)
    value.backward()
    torch.testing.assert_close(value, 2.0 * (x.detach() ** 2).sum())
    torch.testing.assert_close(x.grad, 4.0 * x.detach())
