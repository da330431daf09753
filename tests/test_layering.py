"""The shape of the package, checked on its source: imports between packages point one
way (``lang`` → ``rewrite`` → ``poly`` → ``autodiff`` → ``scheduling`` → ``codegen`` → ``jit``, then
``explore`` and the top-level modules), and no module grows past the size one reader
can hold (STYLE.md: split past ~600 lines)."""
import ast
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parent.parent / "polyc"
# Each package may import the packages before it, never one after it.
LAYERS = ("machine", "lang", "rewrite", "poly", "autodiff", "scheduling", "codegen", "jit", "explore")
# Top-level modules every package may import: they import no package themselves.
LEAVES = ("errors", "version")
MAX_LINES = 600


def _modules():
    return sorted(p for p in PACKAGE.rglob("*.py"))


def _imported(path: Path) -> set[str]:
    """The ``polyc.<name>`` each import in ``path`` reaches (lazy imports included)."""
    names = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            parts = node.module.split(".")
            if parts[0] == "polyc":
                names.add(parts[1] if len(parts) > 1 else "")
        elif isinstance(node, ast.Import):
            names |= {a.name.split(".")[1] if "." in a.name else "" for a in node.names
                      if a.name.split(".")[0] == "polyc"}
    return names


def test_the_layers_name_every_package():
    packages = {p.name for p in PACKAGE.iterdir() if (p / "__init__.py").exists()}
    assert packages == set(LAYERS)


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_imports_point_down_the_layers(path):
    relative = path.relative_to(PACKAGE)
    if len(relative.parts) == 1:
        if relative.stem in LEAVES:  # errors, version: below every package
            assert _imported(path) <= set(LEAVES) - {relative.stem}
        return  # api, compiler, explain, options: the application, above the packages
    own = LAYERS.index(relative.parts[0])
    for name in _imported(path):
        if name in LEAVES or name == relative.parts[0]:
            continue
        assert name in LAYERS and LAYERS.index(name) < own, (
            f"{relative} imports polyc.{name or '(the package root)'}, "
            f"a layer above {relative.parts[0]}")


@pytest.mark.parametrize("path", _modules(), ids=lambda p: str(p.relative_to(PACKAGE)))
def test_no_module_outgrows_one_reader(path):
    assert len(path.read_text().splitlines()) <= MAX_LINES
