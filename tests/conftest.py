"""Shared test setup: tests/ on sys.path (corpus, strategies), the machine models, the
tests marked ``needs_cc`` skipped when no C compiler is usable, and those marked
``needs_float16`` when the compiler has no ``_Float16`` (clang 14)."""
import functools
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

import polyc.compiler as compiler
from polyc.errors import CompileError
from polyc.jit.toolchain import compiler_identity, supports_float16
from polyc.machine import NAMED_MACHINES
from polyc.options import Options

# Tests that assert schedule structure run under each of these machine models, whatever
# the host: AVX2 (16 registers), AVX-512 (32 registers, 512-bit), AVX-512 shaped for
# 256-bit vectors, an Intel part with a 2 MiB L2 (its tiles outgrew the packing budget
# until a rule bounded them), and the SSE2 baseline. Expectations come from
# polyc.machine.rules.
MODEL_NAMES = ("zen3", "zen5", "skylake-avx512", "sapphirerapids", "x86-64")


# A test process generates the same operators under several machine models and in
# several tests of a file, more than the default keeps (e2e/test_triangular.py: 116 s
# of one worker's time with 32, 87 s with 256); at most some hundred MB.
compiler.remember(256)


@pytest.fixture(autouse=True)
def _fresh_compilations(request):
    """A test that patches polyc (``monkeypatch``) runs the pipeline at every
    ``generate``, past the process's remembered compilations, and adds none to them."""
    if "monkeypatch" in request.fixturenames:
        request.getfixturevalue("monkeypatch").setattr(
            compiler, "_remembered", functools.lru_cache(maxsize=0)(compiler._generated))


@pytest.fixture(params=MODEL_NAMES)
def machine(request):
    """A named machine model (every test that takes it runs once per model)."""
    return NAMED_MACHINES[request.param]


@pytest.hookimpl(trylast=True)  # after -m has deselected: no lookup when nothing needs it
def pytest_collection_modifyitems(config, items):
    """Skip the tests marked ``needs_cc`` when polyc finds no C compiler it can run, and
    those marked ``needs_float16`` when that compiler has no ``_Float16``."""
    marked = [item for item in items if item.get_closest_marker("needs_cc")]
    halves = [item for item in items if item.get_closest_marker("needs_float16")]
    if not marked and not halves:
        return
    options = Options.from_environment()
    try:
        compiler_identity(options)
    except CompileError as error:
        skip = pytest.mark.skip(reason=f"needs a C compiler: {error}")
        for item in marked + halves:
            item.add_marker(skip)
        return
    if halves and not supports_float16(options):
        skip = pytest.mark.skip(reason=f"the C compiler {options.cc!r} has no _Float16")
        for item in halves:
            item.add_marker(skip)
