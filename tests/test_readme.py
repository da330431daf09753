"""The README's Python examples run as written (with the arrays they define)."""
import ast
import importlib.util
import linecache
import re
from pathlib import Path

import numpy as np
import pytest

pytestmark = pytest.mark.needs_cc

README = Path(__file__).resolve().parents[1] / "README.md"


def python_blocks() -> list[str]:
    return re.findall(r"```python\n(.*?)```", README.read_text(), flags=re.S)


# Optional extras (`pip install polyc[dask]`, torch): a block importing one that is not
# installed is left out, as a reader without it would leave it out.
OPTIONAL = frozenset({"dask", "distributed", "torch"})


def missing_extras(block: str) -> set[str]:
    """The optional packages ``block`` imports that this Python cannot import."""
    imported = set()
    for node in ast.walk(ast.parse(block)):
        if isinstance(node, ast.Import):
            imported.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module:
            imported.add(node.module.split(".")[0])
    return {name for name in imported & OPTIONAL if importlib.util.find_spec(name) is None}


def test_tour_examples_run_and_compute_matmul():
    namespace: dict = {}
    blocks = python_blocks()
    assert len(blocks) >= 3
    for number, block in enumerate(blocks):
        if missing_extras(block):
            continue
        # Like IPython's cells: give each block a name inspect can read the source from.
        filename = f"<README block {number}>"
        linecache.cache[filename] = (len(block), None, block.splitlines(True), filename)
        exec(compile(block, filename, "exec"), namespace)
    A, B, C = namespace["A"], namespace["B"], namespace["C"]
    np.testing.assert_allclose(C, A.astype(np.float64) @ B, rtol=1e-4)
    python_form = namespace["matmul"]
    np.testing.assert_allclose(python_form(A, B), C, rtol=1e-5)
