"""The generated C of every corpus operator is the checked-in golden file, byte for
byte (``make golden`` regenerates them when a change means to alter the C), and it
parses as C (pycparser)."""
import difflib

import pytest

from c_parse import parse_entry
from corpus import CORPUS
from golden.regenerate import golden_c, path_of


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_the_generated_c_is_the_golden_file(entry):
    expected = path_of(entry).read_text()
    actual = golden_c(entry)
    if actual != expected:
        diff = "".join(list(difflib.unified_diff(
            expected.splitlines(keepends=True), actual.splitlines(keepends=True),
            "golden", "generated", n=2))[:60])
        pytest.fail(f"the C of {entry.name} changed (make golden, if meant):\n{diff}")


@pytest.mark.parametrize("entry", CORPUS, ids=[c.name for c in CORPUS])
def test_the_generated_c_parses(entry):
    # the C the test above generated (remembered by the process, not generated again)
    parse_entry(golden_c(entry))
