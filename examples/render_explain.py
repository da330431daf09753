"""Render ``explain()`` of the demo operators to HTML and, with Chromium, to PNG.

    python examples/render_explain.py                 # -> build/explain/*.html, *.png
    python examples/render_explain.py --out DIR --per-section

Each operator's explanation is saved as a standalone HTML page; when a
Chromium (``chromium``, ``chromium-browser``, ``google-chrome``) is on the
PATH, headless Chromium captures each page as a PNG of its full height (and,
with ``--per-section``, one PNG per section, easier to read). Without
Chromium the script writes the HTML only and says so.
"""
from __future__ import annotations

import argparse
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import replace
from pathlib import Path

import numpy as np

import polyc

HERE = Path(__file__).resolve().parent
WIDTH = 1280
RNG = np.random.default_rng(0)


def f32(*shape):
    return RNG.standard_normal(shape).astype(np.float32)


OPERATORS = [
    ("matmul.tc", lambda: (f32(300, 200), f32(200, 100))),
    ("fc_relu.tc", lambda: (f32(64, 256), f32(128, 256), f32(128))),
    ("softmax.tc", lambda: (f32(256, 512),)),
    ("conv2d.tc", lambda: (f32(2, 16, 30, 30), f32(16, 16, 3, 3))),
]


def find_chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome", "google-chrome-stable"):
        path = shutil.which(name)
        if path:
            return path
    return None


def chromium_command(chromium: str, *args: str) -> list[str]:
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
            "--force-device-scale-factor=1", "--disable-dev-shm-usage", *args]


def page_height(chromium: str, page: Path) -> int:
    """The page's full height at :data:`WIDTH`, measured by Chromium itself."""
    probe = page.with_name(page.stem + ".probe.html")
    text = page.read_text(encoding="utf-8")
    script = ("<script>window.addEventListener('load', () => { document.title = 'height=' + "
              "document.documentElement.scrollHeight; });</script>")
    probe.write_text(text.replace("</body>", script + "</body>"), encoding="utf-8")
    try:
        result = subprocess.run(chromium_command(chromium, f"--window-size={WIDTH},800",
                                                 "--dump-dom", probe.as_uri()),
                                capture_output=True, text=True, timeout=120)
    finally:
        probe.unlink()
    match = re.search(r"height=(\d+)", result.stdout)
    return int(match.group(1)) + 8 if match else 4000


def screenshot(chromium: str, page: Path, png: Path) -> None:
    height = page_height(chromium, page)
    subprocess.run(chromium_command(chromium, f"--window-size={WIDTH},{height}",
                                    f"--screenshot={png}", page.as_uri()),
                   capture_output=True, text=True, timeout=120, check=True)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", default=str(HERE.parent / "build" / "explain"))
    parser.add_argument("--per-section", action="store_true",
                        help="also one PNG per section")
    args = parser.parse_args(argv)
    out = Path(args.out)
    out.mkdir(parents=True, exist_ok=True)
    chromium = find_chromium()
    if chromium is None:
        print("chromium not found: writing HTML only (install chromium for the PNGs)")
    for filename, make_inputs in OPERATORS:
        op = polyc.define((HERE / filename).read_text(), filename=filename)
        explanation = op.explain(*make_inputs())
        page = explanation.save(out / f"{op.name}.html")
        print(f"wrote {page}")
        if chromium is None:
            continue
        screenshot(chromium, page, out / f"{op.name}.png")
        print(f"wrote {out / f'{op.name}.png'}")
        if args.per_section:
            with tempfile.TemporaryDirectory() as scratch:
                for section in explanation.sections:
                    single = replace(explanation, sections=(section,))
                    part = single.save(Path(scratch) / f"{op.name}-{section.key}.html")
                    png = out / f"{op.name}-{section.key}.png"
                    screenshot(chromium, part, png)
                    print(f"wrote {png}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
