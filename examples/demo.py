"""polyc's demo: compile example operators, show what polyc inferred and scheduled,
and time them against numpy (medians of several runs, outputs preallocated).

Run with `make demo` (or `python examples/demo.py`).
"""
from __future__ import annotations

import os
import statistics
import time
from pathlib import Path

import numpy as np

import polyc
from polyc.lang import sizes as sz

HERE = Path(__file__).resolve().parent
RNG = np.random.default_rng(0)


# After a call, OpenBLAS's worker threads spin for about 0.1 s (libgomp's, polyc's,
# for a few ms): a kernel timed while they spin shares the 2 cores with them and ran
# up to 4x slower. Each contestant starts after this pause, as in benchmarks/run.py.
SETTLE_S = 0.2


def median_ms(run, repeat: int = 7) -> float:
    time.sleep(SETTLE_S)
    run()  # warm up
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return 1000 * statistics.median(times)


def softmax_numpy(X, out):
    shifted = X - X.max(axis=1, keepdims=True)
    np.exp(shifted, out=out)
    out /= out.sum(axis=1, keepdims=True)


def conv2d_numpy(I, F, out):
    """im2col + matmul: numpy's best idiom for a direct convolution."""
    N, C, H, W = I.shape
    K, _, R, S = F.shape
    windows = np.lib.stride_tricks.sliding_window_view(I, (R, S), axis=(2, 3))
    np.einsum("nchwrs,kcrs->nkhw", windows, F, out=out, optimize=True)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


EXAMPLES = [
    ("matmul.tc", lambda: (f32(512, 512), f32(512, 512)),
     lambda A, B, out: np.matmul(A, B, out=out),
     lambda A, B: A.astype(np.float64) @ B),
    ("fc_relu.tc", lambda: (f32(256, 512), f32(512, 512), f32(512)),
     lambda I, W, b, out: np.maximum(np.add(np.matmul(I, W.T, out=out), b, out=out), 0, out=out),
     lambda I, W, b: np.maximum(I.astype(np.float64) @ W.T + b, 0)),
    ("softmax.tc", lambda: (f32(1024, 1024),),
     softmax_numpy,
     lambda X: np.exp(X - X.max(1, keepdims=True)) / np.exp(
         X.astype(np.float64) - X.max(1, keepdims=True)).sum(1, keepdims=True)),
    ("conv2d.tc", lambda: (f32(2, 32, 30, 30), f32(32, 32, 3, 3)),
     conv2d_numpy,
     lambda I, F: np.einsum("nchwrs,kcrs->nkhw", np.lib.stride_tricks.sliding_window_view(
         I.astype(np.float64), (3, 3), axis=(2, 3)), F.astype(np.float64), optimize=True)),
]


def main() -> None:
    print(f"polyc {polyc.__version__} demo; OMP_NUM_THREADS={os.environ.get('OMP_NUM_THREADS', 'all')}"
          f", {os.cpu_count()} cores\n")
    rows = []
    for filename, make_inputs, numpy_version, reference in EXAMPLES:
        source = (HERE / filename).read_text()
        op = polyc.define(source, filename=str(HERE / filename))
        inputs = make_inputs()
        start = time.perf_counter()
        kernel = op.compile(*inputs)
        cold = time.perf_counter() - start
        result = op(*inputs)
        out_polyc = np.empty_like(result)
        out_numpy = np.empty_like(result)
        error = float(np.max(np.abs(result - reference(*inputs))))

        print(f"=== {op.name} ({filename}) " + "=" * max(0, 60 - len(op.name) - len(filename)))
        print(source.strip())
        print("\ninferred:")
        for tensor in op.ir.outputs + op.ir.temporaries:
            dims = ", ".join(sz.to_tc(d) for d in tensor.shape)
            concrete = "x".join(str(n) for n in result.shape) if tensor in op.ir.outputs else ""
            print(f"  {tensor.role:9} {tensor.name}: {tensor.type}({dims})"
                  + (f" = {concrete} here" if concrete else ""))
        print("\nschedule tree:")
        print("  " + str(kernel.schedule).replace("\n", "\n  "))
        polyc_ms = median_ms(lambda: op(*inputs, out=out_polyc))
        numpy_ms = median_ms(lambda: numpy_version(*inputs, out_numpy))
        print(f"\npolyc {polyc_ms:8.3f} ms   numpy {numpy_ms:8.3f} ms   "
              f"ratio numpy/polyc {numpy_ms / polyc_ms:5.2f}   max |error| {error:.2e}   "
              f"(first compile {cold * 1000:.0f} ms, cache {kernel.cache_hit})\n")
        rows.append((op.name, polyc_ms, numpy_ms, error))

    show_gradient()
    print("summary (median ms, outputs preallocated; ratio > 1 means polyc is faster)")
    print(f"  {'operator':10} {'polyc':>9} {'numpy':>9} {'ratio':>7} {'max error':>10}")
    for name, polyc_ms, numpy_ms, error in rows:
        print(f"  {name:10} {polyc_ms:9.3f} {numpy_ms:9.3f} {numpy_ms / polyc_ms:7.2f} "
              f"{error:10.2e}")


def show_gradient() -> None:
    """polyc.grad of the convolution: the backward operator, derived and printed as TC,
    checked against a finite difference."""
    op = polyc.define((HERE / "conv2d.tc").read_text())
    grad = polyc.grad(op)
    print(f"=== polyc.grad({op.name}): the backward operator, derived " + "=" * 20)
    print(str(grad).strip())
    inputs = [RNG.standard_normal(tuple(int(n) for n in shape)).astype(np.float32)
              for shape in ((2, 3, 9, 8), (4, 3, 3, 3))]
    cotangent = RNG.standard_normal(op(*inputs).shape).astype(np.float32)
    gradients = grad(*inputs, cotangent)
    direction = [RNG.standard_normal(x.shape) for x in inputs]
    step = 1e-3

    def along(t):
        shifted = [(x + t * v).astype(np.float32) for x, v in zip(inputs, direction)]
        return float(np.sum(op(*shifted).astype(np.float64) * cotangent))

    finite = (along(step) - along(-step)) / (2 * step)
    exact = sum(float(np.sum(g.astype(np.float64) * v)) for g, v in zip(gradients, direction))
    print(f"\ndirectional derivative: polyc.grad {exact:.5f}, finite difference {finite:.5f}\n")


if __name__ == "__main__":
    main()
