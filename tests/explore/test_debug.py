"""POLYC_DEBUG: the chosen stages, named like explain()'s sections, on standard error."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"


def run(args, channels, cache_dir=None, stdin=None):
    env = dict(os.environ, POLYC_DEBUG=channels)
    if cache_dir is not None:
        env["POLYC_CACHE_DIR"] = str(cache_dir)
    return subprocess.run([sys.executable, *args], input=stdin, env=env, capture_output=True,
                          text=True, timeout=120)


def test_chosen_channels_print_and_others_do_not():
    result = run(["-m", "polyc", str(EXAMPLES / "matmul.tc"), "--emit", "ir"],
                 "deps,schedule")
    assert result.returncode == 0, result.stderr
    assert "[polyc deps] matmul\n" in result.stderr
    assert "flow  S0_init -> S0: " in result.stderr
    assert "[polyc schedule] matmul\n" in result.stderr
    assert 'mark: "parallel"' in result.stderr
    for quiet in ("ir", "domains", "ast", "c", "fusion"):
        assert f"[polyc {quiet}]" not in result.stderr
    # Standard output holds the --emit stage only.
    assert result.stdout.startswith("def matmul(")


def test_every_stage_channel(tmp_path):
    channels = "ir,domains,deps,fusion,schedule,ast,c"
    result = run(["-m", "polyc", str(EXAMPLES / "softmax.tc"), "--emit", "shapes"], channels)
    assert result.returncode == 0, result.stderr
    expected = {
        "ir": "row_max(n) max=! X(n, d) where n in 0:N, d in 0:D",
        "domains": "S2[n, d] : ",
        "deps": "flow  S1 -> S2: ",
        "fusion": "temporaries:",
        "schedule": "domain: ",
        "ast": "for (int c0 = 0;",
        "c": "int polyc_softmax(int64_t N, int64_t D",
    }
    positions = []
    for channel, fragment in expected.items():
        header = f"[polyc {channel}] softmax\n"
        assert header in result.stderr, channel
        body = result.stderr.split(header, 1)[1]
        assert fragment in body.split("[polyc ", 1)[0], channel
        positions.append(result.stderr.index(header))
    assert positions == sorted(positions)   # pipeline order


@pytest.mark.needs_cc
def test_cc_channel_reports_the_kernel_cache(tmp_path):
    script = ("import numpy as np, polyc\n"
              "op = polyc.define('def twice(float(N) A) -> (B) { B(i) = 2 * A(i) }')\n"
              "print(op(np.arange(3, dtype=np.float32)))\n")
    first = run(["-c", script], "cc", cache_dir=tmp_path)
    assert first.returncode == 0, first.stderr
    assert "[0. 2. 4.]" in first.stdout
    assert "polyc[cc]: kernel cache miss: " in first.stderr
    second = run(["-c", script], "cc", cache_dir=tmp_path)
    assert "polyc[cc]: kernel cache disk: " in second.stderr
    assert "[polyc c]" not in first.stderr + second.stderr
