"""examples/explore.ipynb runs from a clean kernel and shows real content.

The kernel is this interpreter's: the test writes a ``python3`` kernelspec that
runs ``sys.executable`` into a scratch ``JUPYTER_PATH``, which jupyter_client
searches before the user's and the environment's kernelspecs.
"""
import json
import re
import sys
from pathlib import Path

import pytest

nbformat = pytest.importorskip("nbformat")
nbclient = pytest.importorskip("nbclient")
pytest.importorskip("ipykernel")

pytestmark = pytest.mark.needs_cc

NOTEBOOK = Path(__file__).resolve().parents[2] / "examples" / "explore.ipynb"

COMPILER_STATS = r"C compiler: (\d+ ms \(cache miss\)|not run \(cache hit (on disk|in memory)\))"


def executed_outputs() -> dict[str, list[str]]:
    notebook = nbformat.read(NOTEBOOK, as_version=4)
    assert not any(cell.get("outputs") for cell in notebook.cells if cell.cell_type == "code"), \
        "commit the notebook without outputs"
    client = nbclient.NotebookClient(notebook, kernel_name="python3", timeout=180,
                                     resources={"metadata": {"path": str(NOTEBOOK.parent)}})
    client.execute()
    found = {"html": [], "svg": [], "text": []}
    for cell in notebook.cells:
        for output in cell.get("outputs", []):
            assert output.output_type != "error", "".join(output.get("traceback", []))
            if output.output_type == "stream":
                found["text"].append(output.text)
            data = output.get("data", {})
            found["html"] += [data["text/html"]] if "text/html" in data else []
            found["svg"] += [data["image/svg+xml"]] if "image/svg+xml" in data else []
            found["text"] += [data["text/plain"]] if "text/plain" in data else []
    return found


def html_section(html: str, key: str) -> str:
    start = html.index(f'data-polyc-section="{key}"')
    end = html.find("data-polyc-section=", start + 1)
    return html[start:end if end > 0 else len(html)]


def test_notebook_runs_and_shows_real_content(tmp_path, monkeypatch):
    # One test, so that parallel test runners execute the notebook once.
    spec = tmp_path / "jupyter" / "kernels" / "python3"
    spec.mkdir(parents=True)
    (spec / "kernel.json").write_text(json.dumps({
        "argv": [sys.executable, "-m", "ipykernel_launcher", "-f", "{connection_file}"],
        "display_name": "Python 3 (polyc tests)", "language": "python"}))
    monkeypatch.setenv("JUPYTER_PATH", str(tmp_path / "jupyter"))
    monkeypatch.setenv("IPYTHONDIR", str(tmp_path / "ipython"))   # no user profile
    outputs = executed_outputs()
    check_explanations(outputs)
    check_printed_sections(outputs)
    check_pictures(outputs)
    check_comparison_table(outputs)


def check_explanations(outputs):
    explanations = [h for h in outputs["html"] if "polyc &middot; explain" in h]
    assert len(explanations) == 2                       # fc_relu and conv2d
    fc_relu = next(h for h in explanations if "fc_relu" in h)
    schedule = html_section(fc_relu, "schedule")
    for statement in ("S0_init", "S0", "S1"):
        assert re.search(rf"\b{statement}\b", schedule)
    assert "[parallel]" in schedule
    assert "polyc_fc_relu" in html_section(fc_relu, "c")
    assert "<span style=" in html_section(fc_relu, "c")
    for picture in ("graph", "space"):
        assert "<svg" in html_section(fc_relu, picture)


def check_printed_sections(outputs):
    text = "\n".join(outputs["text"])
    assert "int polyc_fc_relu(int64_t B, int64_t M, int64_t N" in text
    # nest 1 copies W transposed, unless the panels of the register block transpose it
    assert re.search(r"loop nest [12]: S0_init, S0, S1", text)
    assert "output    O: float32(B, N)  = (4096, 1024)" in text
    assert "polyc compare: softmax" in text
    assert re.search(COMPILER_STATS, text)


def check_pictures(outputs):
    assert len(outputs["svg"]) >= 3      # dependence graph and two iteration spaces
    for svg in outputs["svg"]:
        assert svg.lstrip().startswith("<svg") and len(svg) > 1000
        assert "<circle" in svg or "<rect" in svg
    assert any(svg.count("<circle") >= 100 for svg in outputs["svg"])


def check_comparison_table(outputs):
    table = next(h for h in outputs["html"] if "polyc compare: softmax" in h)
    assert "<table" in table
    for variant in ("fused", "unfused", "no-opt"):
        assert f">{variant}<" in table
    assert "WARNING" not in table
