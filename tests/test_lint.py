"""The code stays lint- and type-clean: ruff over everything tracked in Python, mypy over the
engine (its settings in pyproject.toml).  A finding fails with the tool's own report."""
from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", *args], cwd=ROOT, capture_output=True,
                          text=True, timeout=600, check=False)


def test_ruff_finds_nothing() -> None:
    done = _run("ruff", "check", "hiqa", "bench", "tests", "app.py", "app_pages")
    assert done.returncode == 0, done.stdout + done.stderr


def test_mypy_finds_nothing_in_the_engine() -> None:
    done = _run("mypy")
    assert done.returncode == 0, done.stdout + done.stderr
    assert "Success" in done.stdout
