"""Running a Python script in a new process against this checkout (the tests of what a
second process sees: disk caches, records, debug output)."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def run_json(script: str, *args: str, timeout: float = 120, env: dict | None = None) -> dict:
    """``python -c script *args`` in a new process that imports this checkout's polyc
    (``env``: variables to set); what it printed, read as JSON (its stderr in the failure
    when it fails)."""
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                            text=True, timeout=timeout, cwd=REPO,
                            env={**os.environ, **(env or {}), "PYTHONPATH": str(REPO)})
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
