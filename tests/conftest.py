"""Shared test setup: tests/ on sys.path (corpus, strategies), the machine models, and
the tests marked ``needs_cc`` skipped when no C compiler is usable."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from polyc.errors import CompileError
from polyc.jit.toolchain import compiler_identity
from polyc.machine import NAMED_MACHINES
from polyc.options import Options

# Tests that assert schedule structure run under each of these machine models, whatever
# the host: AVX2 (16 registers), AVX-512 (32 registers, 512-bit), AVX-512 shaped for
# 256-bit vectors, an Intel part with a 2 MiB L2 (its tiles outgrew the packing budget
# until a rule bounded them), and the SSE2 baseline. Expectations come from
# polyc.machine.rules.
MODEL_NAMES = ("zen3", "zen5", "skylake-avx512", "sapphirerapids", "x86-64")


@pytest.fixture(params=MODEL_NAMES)
def machine(request):
    """A named machine model (every test that takes it runs once per model)."""
    return NAMED_MACHINES[request.param]


@pytest.hookimpl(trylast=True)  # after -m has deselected: no lookup when nothing needs it
def pytest_collection_modifyitems(config, items):
    """Skip the tests marked ``needs_cc`` when polyc finds no C compiler it can run."""
    marked = [item for item in items if item.get_closest_marker("needs_cc")]
    if not marked:
        return
    try:
        compiler_identity(Options.from_environment())
    except CompileError as error:
        skip = pytest.mark.skip(reason=f"needs a C compiler: {error}")
        for item in marked:
            item.add_marker(skip)
