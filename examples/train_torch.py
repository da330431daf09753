"""Train a small torch model whose layers are polyc operators, next to the same model
built from torch's own layers.

    layer norm (TC)  →  linear + bias + GELU, fused (TC)  →  linear head (torch)

Nothing but the comprehensions is written by hand: polyc.to_torch registers each as a
torch op with its shapes and its gradient (polyc.grad). Both models start from the same
weights and see the same batches; their losses agree at every step.

    python examples/train_torch.py            # 200 steps, the losses side by side
"""
from __future__ import annotations

import torch

import polyc

LAYER_NORM = polyc.define("""
def layer_norm(float(B, D) X, float(D) gamma, float(D) beta) -> (Y) {
  mu(b) +=! X(b, d) / D
  var(b) +=! (X(b, d) - mu(b)) * (X(b, d) - mu(b)) / D
  Y(b, d) = (X(b, d) - mu(b)) * rsqrt(var(b) + 1e-5) * gamma(d) + beta(d)
}""")

LINEAR_GELU = polyc.define("""
def linear_gelu(float(B, K) X, float(N, K) W, float(N) bias) -> (Y) {
  Y(b, n) +=! X(b, k) * W(n, k)
  Y(b, n) = 0.5 * (Y(b, n) + bias(n)) * (1.0 + erf((Y(b, n) + bias(n)) * 0.7071067811865476))
}""")


class PolycLayer(torch.nn.Module):
    """A polyc operator as a layer: its first input is the layer's input, the others are
    parameters (created with ``shapes``, initialised by ``init``)."""

    def __init__(self, operator: polyc.Operator, shapes: dict, init):
        super().__init__()
        self.op = polyc.to_torch(operator)
        names = [t.name for t in operator.ir.inputs[1:]]
        self.names = names
        for name in names:
            self.register_parameter(name, torch.nn.Parameter(init(name, shapes[name])))

    def forward(self, x):
        return self.op(x, *(getattr(self, name) for name in self.names))


def models(features: int = 16, hidden: int = 32, outputs: int = 4, seed: int = 0):
    """The polyc model and the torch one, with the same initial weights."""
    torch.manual_seed(seed)
    reference = torch.nn.Sequential(
        torch.nn.LayerNorm(features), torch.nn.Linear(features, hidden), torch.nn.GELU(),
        torch.nn.Linear(hidden, outputs))
    norm, linear, _, head = reference
    weights = {"gamma": norm.weight, "beta": norm.bias, "W": linear.weight,
               "bias": linear.bias}

    def init(name, shape):
        return weights[name].detach().clone()

    polyc_model = torch.nn.Sequential(
        PolycLayer(LAYER_NORM, {"gamma": (features,), "beta": (features,)}, init),
        PolycLayer(LINEAR_GELU, {"W": (hidden, features), "bias": (hidden,)}, init),
        torch.nn.Linear(hidden, outputs))
    polyc_model[2].load_state_dict(head.state_dict())
    return polyc_model, reference


def train(model, steps: int = 200, batch: int = 64, features: int = 16, seed: int = 1,
          lr: float = 0.05) -> list[float]:
    """SGD on a synthetic regression; the loss of every step."""
    generator = torch.Generator().manual_seed(seed)
    target = torch.randn(features, 4, generator=generator)
    optimizer = torch.optim.SGD(model.parameters(), lr=lr)
    losses = []
    for _ in range(steps):
        x = torch.randn(batch, features, generator=generator)
        y = torch.tanh(x @ target)
        loss = torch.nn.functional.mse_loss(model(x), y)
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(float(loss.detach()))
    return losses


def main() -> None:
    polyc_model, reference = models()
    ours, theirs = train(polyc_model), train(reference)
    worst = max(abs(a - b) / abs(b) for a, b in zip(ours, theirs))
    for step in range(0, len(ours), 20):
        print(f"step {step:3}: polyc {ours[step]:.6f}  torch {theirs[step]:.6f}")
    print(f"largest relative difference over {len(ours)} steps: {worst:.2e}")


if __name__ == "__main__":
    main()
