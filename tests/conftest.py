"""Shared test setup: tests/ on sys.path (corpus, strategies) and one operator cache."""
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import pytest

from polyc.machine import NAMED_MACHINES

# Tests that assert schedule structure run under each of these machine models, whatever
# the host: AVX2 (16 registers), AVX-512 (32 registers, 512-bit), AVX-512 shaped for
# 256-bit vectors, and the SSE2 baseline. Expectations come from polyc.machine.rules.
MODEL_NAMES = ("zen3", "zen5", "skylake-avx512", "x86-64")


@pytest.fixture(params=MODEL_NAMES)
def machine(request):
    """A named machine model (every test that takes it runs once per model)."""
    return NAMED_MACHINES[request.param]
