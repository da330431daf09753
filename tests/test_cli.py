"""The command line: python -m polyc FILE.tc --emit STAGE."""
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[1] / "examples"


def run(*args, stdin=None):
    return subprocess.run([sys.executable, "-m", "polyc", *args], input=stdin,
                          capture_output=True, text=True, timeout=120)


@pytest.mark.parametrize("stage, fragment", [
    ("ir", "C(m, n) +=! A(m, k) * B(k, n) where m in 0:M, n in 0:N, k in 0:K"),
    ("shapes", "output    C: float32(M, N)"),
    ("domains", "S0[m, n, k]"),
    ("deps", "flow  S0 -> S0"),
    ("schedule", 'mark: "parallel"'),
    ("ast", "c0 < min(M, polyc_hi0_0); c0 += "),
    ("c", "int polyc_matmul(int64_t M"),
])
def test_every_stage_prints(stage, fragment):
    result = run(str(EXAMPLES / "matmul.tc"), "--emit", stage)
    assert result.returncode == 0, result.stderr
    assert fragment in result.stdout


def test_errors_print_location_and_caret():
    result = run("-", "--emit", "ir", stdin="def f(float(N) A) -> (O) {\n  O(i) = B(i)\n}\n")
    assert result.returncode == 1
    assert "<stdin>:2:10: unknown tensor or function `B`" in result.stderr
    assert "^" in result.stderr


def test_name_selects_a_def():
    source = "def f(float(N) A) -> (O) { O(i) = A(i) }\ndef g(float(N) A) -> (P) { P(i) = A(i) }"
    assert "P(i) = A(i)" in run("-", "--name", "g", "--emit", "ir", stdin=source).stdout
    assert run("-", "--emit", "ir", stdin=source).returncode == 1


def test_grad_prints_the_backward_operator():
    result = run(str(EXAMPLES / "conv2d.tc"), "--grad", "--emit", "ir")
    assert result.returncode == 0, result.stderr
    assert "def conv2d_grad(" in result.stdout and "d_O_padded" in result.stdout
    refused = run("-", "--grad", "--emit", "ir",
                  stdin="def f(int32(N) X) -> (Y) { Y(i) = X(i) }")
    assert refused.returncode == 1 and "no floating-point input" in refused.stderr
