"""Running a Python script in a new process against this checkout (the tests of what a
second process sees: disk caches, records, debug output)."""
import json
import os
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]


def child_environment(env: dict | None = None) -> dict:
    """This process's environment with ``env`` set and this checkout first on the
    import path; the rest of ``PYTHONPATH`` stays, where dependencies may come from
    (wheels unpacked into a folder of their own)."""
    path = [str(REPO)] + [entry for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep)
                          if entry]
    return {**os.environ, **(env or {}), "PYTHONPATH": os.pathsep.join(path)}


def run_json(script: str, *args: str, timeout: float = 120, env: dict | None = None) -> dict:
    """``python -c script *args`` in a new process that imports this checkout's polyc
    (``env``: variables to set); what it printed, read as JSON (its stderr in the failure
    when it fails)."""
    result = subprocess.run([sys.executable, "-c", script, *args], capture_output=True,
                            text=True, timeout=timeout, cwd=REPO, env=child_environment(env))
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)
