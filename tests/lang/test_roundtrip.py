"""Printing IR back to TC and parsing it gives an equal IR."""
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from corpus import CORPUS  # noqa: E402
from strategies import einsum_programs  # noqa: E402

from polyc.compiler import frontend  # noqa: E402
from polyc.lang.printer import to_tc  # noqa: E402


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_corpus_round_trips(entry):
    op = frontend(entry.source, entry.def_name)
    printed = to_tc(op)
    again = frontend(printed)
    assert again == op, printed
    assert to_tc(again) == printed


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(einsum_programs())
def test_random_programs_round_trip(program):
    op = frontend(program.source)
    assert frontend(to_tc(op)) == op
