"""The whole suite as other CPUs would run it: each named machine model in turn, every
kernel shaped by that model and compiled for its instruction set, on this host.

``make test`` shapes every kernel for the host. The tests that assert schedule structure
already run under five models (``conftest.MODEL_NAMES``), but the kernels the other
tests compile and check against numpy are the host's alone. This campaign runs the
whole suite once per model, with ``POLYC_MACHINE`` naming it and ``POLYC_CFLAGS``
holding the compiler to the model's instruction set (``-march=haswell`` for an AVX2
model: no AVX-512 instruction reaches the kernels), so that an AVX-512 host also
checks what an AVX2 or SSE2 machine would compute. A model whose instruction set this
CPU lacks is skipped and named. Caches, memory and the clock stay the host's.

    python -m tests.models                    # the five models of conftest.MODEL_NAMES
    python -m tests.models zen3 x86-64        # some models
    python -m tests.models zen3 -- -k matmul  # arguments after -- go to pytest

About 8–11 minutes per model on 2 cores (``make test-models``).
"""
from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
sys.path.insert(0, str(HERE))

from conftest import MODEL_NAMES  # noqa: E402
from polyc.machine import NAMED_MACHINES, host_features  # noqa: E402

# Each model's instruction set as a compiler target: the archspec name whose features
# the host must have, and gcc's -march for it. The oldest part of each set, so that
# the kernels use only what every CPU of that set has.
TARGETS = {
    "avx512": ("skylake_avx512", "skylake-avx512"),
    "avx2": ("haswell", "haswell"),
    "sse2": ("x86_64", "x86-64"),
}


def target_of(model: str) -> tuple[str, str] | None:
    """``(archspec name, -march)`` of ``model``'s instruction set; ``None`` for a generic
    model, which adds no flag."""
    return TARGETS.get(NAMED_MACHINES[model].isa)


def runnable(model: str) -> str | None:
    """Why this host cannot run code compiled for ``model``'s instruction set (the
    features it lacks), or ``None`` when it can."""
    target = target_of(model)
    if target is None:
        return None
    import archspec.cpu

    missing = sorted(archspec.cpu.TARGETS[target[0]].features - host_features())
    return f"this CPU lacks {', '.join(missing)}" if missing else None


def environment(model: str) -> dict[str, str]:
    """The variables that make a test process shape and compile for ``model`` (the
    caller's own ``POLYC_CFLAGS`` first: the last ``-march`` is the one gcc takes); its
    own kernel cache, kept between runs."""
    target = target_of(model)
    flags = [os.environ.get("POLYC_CFLAGS", ""), f"-march={target[1]}" if target else ""]
    return {**os.environ, "POLYC_MACHINE": model,
            "POLYC_CFLAGS": " ".join(flag for flag in flags if flag),
            "POLYC_CACHE_DIR": str(REPO / ".cache" / "polyc-models" / model)}


def main(argv: list[str]) -> int:
    if "--" in argv:
        split = argv.index("--")
        models, pytest_args = argv[:split], argv[split + 1:]
    else:
        models, pytest_args = argv, []
    models = models or list(MODEL_NAMES)
    unknown = [m for m in models if m not in NAMED_MACHINES]
    if unknown:
        print(f"unknown models: {', '.join(unknown)} (known: {', '.join(NAMED_MACHINES)})",
              file=sys.stderr)
        return 2
    results = []
    for model in models:
        reason = runnable(model)
        if reason is not None:
            results.append((model, "skipped", reason))
            continue
        env = environment(model)
        print(f"== {model}: POLYC_MACHINE={model} POLYC_CFLAGS={env['POLYC_CFLAGS']}",
              flush=True)
        start = time.perf_counter()
        status = subprocess.run([sys.executable, "-m", "pytest", "-n", "2",
                                 "--dist", "loadfile", "-p", "no:cacheprovider",
                                 *pytest_args, "tests"],
                                cwd=REPO, env=env).returncode
        minutes = (time.perf_counter() - start) / 60
        results.append((model, "passed" if status == 0 else f"failed (exit status {status})",
                        f"{minutes:.1f} min"))
    print("\n".join(f"{model:16s} {outcome:28s} {detail}" for model, outcome, detail in results))
    return 0 if all(outcome in ("passed", "skipped") for _, outcome, _ in results) else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
