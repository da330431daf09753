"""examples/train_torch.py: a model of polyc layers trains like the same model of torch
layers, eager and under torch.compile."""
import importlib.util
from pathlib import Path

import pytest

torch = pytest.importorskip("torch")
pytestmark = pytest.mark.needs_cc

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "train_torch.py"


@pytest.fixture(scope="module")
def example():
    spec = importlib.util.spec_from_file_location("train_torch", EXAMPLE)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_losses_agree_with_torch_layers_at_every_step(example):
    polyc_model, reference = example.models()
    ours, theirs = example.train(polyc_model), example.train(reference)
    assert len(ours) == len(theirs) == 200
    for step, (a, b) in enumerate(zip(ours, theirs)):
        assert abs(a - b) <= 0.01 * abs(b), (step, a, b)
    assert ours[-1] < 0.5 * ours[0]  # it learns


def test_the_compiled_model_traces_once_for_three_batch_sizes(example):
    polyc_model, _ = example.models()
    torch._dynamo.reset()
    graphs = []

    def backend(graph, example_inputs):
        graphs.append(graph)
        return graph.forward

    compiled = torch.compile(polyc_model, fullgraph=True, dynamic=True, backend=backend)
    for batch in (5, 17, 64):
        x = torch.randn(batch, 16)
        loss = compiled(x).square().mean()
        loss.backward()
        torch.testing.assert_close(loss.detach(), polyc_model(x).square().mean().detach())
    assert len(graphs) == 1
