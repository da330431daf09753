"""examples/render_explain.py writes the HTML pages, and skips the PNGs without Chromium."""
import importlib.util
from pathlib import Path

import pytest

pytestmark = pytest.mark.needs_cc

SCRIPT = Path(__file__).resolve().parents[2] / "examples" / "render_explain.py"


def test_pages_without_chromium(tmp_path, monkeypatch, capsys):
    spec = importlib.util.spec_from_file_location("render_explain", SCRIPT)
    script = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(script)
    monkeypatch.setattr(script, "find_chromium", lambda: None)
    assert script.main(["--out", str(tmp_path)]) == 0
    assert "chromium not found: writing HTML only" in capsys.readouterr().out
    pages = sorted(p.name for p in tmp_path.iterdir())
    assert pages == ["conv2d.html", "fc_relu.html", "matmul.html", "softmax.html"]
    assert "polyc &middot; explain" in (tmp_path / "softmax.html").read_text()
