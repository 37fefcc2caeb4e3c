"""The README's two commands on a machine whose system Python refuses `pip install` (issue #43,
item 1).

Debian 12 and Ubuntu 24.04 mark their Python as externally managed (PEP 668): ``pip install``
with it stops with ``externally-managed-environment``.  These tests stand in such a Python: a
``python3`` first on ``PATH`` that runs the real interpreter but refuses every ``-m pip`` (and a
``pip``/``pip3`` that refuse too), outside any virtual environment.  On it, in a fresh clone of
this checkout, the first command installs the app and serves it, and the second command's
install step installs what the tests need: both into the project's own ``.venv``, never into
the system Python.
"""
from __future__ import annotations

import os
import re
import socket
import subprocess
import sys
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
INSTALL_TIMEOUT_S = 900

SYSTEM_PYTHON = """#!/bin/sh
# A system Python under PEP 668: it runs, but installs nothing.
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    echo "error: externally-managed-environment" >&2
    exit 1
fi
exec {real} "$@"
"""
SYSTEM_PIP = """#!/bin/sh
echo "error: externally-managed-environment" >&2
exit 1
"""


def _base_python() -> str:
    """The interpreter a venv of this one is made from (the tests may run inside a venv)."""
    base = Path(sys.base_prefix) / "bin" / f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return str(base if base.exists() else Path(sys.base_prefix) / "bin" / "python3")


@pytest.fixture(scope="module")
def fresh_machine(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """A clean clone of this checkout and the environment of a PEP 668 machine's shell."""
    tmp = tmp_path_factory.mktemp("fresh")
    bin_dir = tmp / "bin"
    bin_dir.mkdir()
    for name, text in (("python3", SYSTEM_PYTHON.format(real=_base_python())),
                       ("python", SYSTEM_PYTHON.format(real=_base_python())),
                       ("pip", SYSTEM_PIP), ("pip3", SYSTEM_PIP)):
        (bin_dir / name).write_text(text)
        (bin_dir / name).chmod(0o755)
    clone = tmp / "checkout"
    subprocess.run(["git", "clone", "-q", str(ROOT), str(clone)], check=True, timeout=120)
    # the working tree's scripts and README, so the test checks what is being committed
    for rel in ("scripts/env.sh", "scripts/run.sh", "scripts/test.sh", "README.md"):
        (clone / rel).write_bytes((ROOT / rel).read_bytes())
    env = {k: v for k, v in os.environ.items()
           if k not in ("VIRTUAL_ENV", "PYTHON", "PYTHONPATH", "PYTHONHOME")
           and not k.startswith("HIQA_")}
    path = [p for p in env.get("PATH", "").split(os.pathsep)
            if p and Path(p).resolve() != Path(sys.executable).parent.resolve()]
    env["PATH"] = os.pathsep.join([str(bin_dir), *path])
    env["HIQA_DATA_DIR"] = str(tmp / "data")
    return clone, env


def test_the_stand_in_system_python_refuses_pip(fresh_machine: tuple[Path, dict[str, str]]
                                                ) -> None:
    clone, env = fresh_machine
    done = subprocess.run(["python3", "-m", "pip", "install", "-e", "."], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode != 0 and "externally-managed-environment" in done.stderr


def test_readme_quick_start_is_the_two_scripts() -> None:
    text = README.read_text(encoding="utf-8")
    section = text.split("## Quick start", 1)[1]
    block = re.search(r"```bash\n(.*?)```", section, re.DOTALL)
    assert block is not None
    commands = [line.split("#")[0].strip() for line in block.group(1).splitlines()
                if line.strip()]
    assert commands == ["bash scripts/run.sh", "bash scripts/test.sh"]
    assert (ROOT / ".ci" / "run").read_text().strip().endswith("exec bash scripts/test.sh")


def test_first_command_installs_into_the_project_venv_and_serves_the_app(
        fresh_machine: tuple[Path, dict[str, str]]) -> None:
    clone, env = fresh_machine
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = subprocess.Popen(
        ["bash", "scripts/run.sh", "--server.headless", "true", "--server.port", str(port)],
        cwd=clone, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
        start_new_session=True)
    try:
        deadline = time.monotonic() + INSTALL_TIMEOUT_S
        healthy = False
        while time.monotonic() < deadline and proc.poll() is None:
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{port}/_stcore/health",
                                            timeout=2) as r:
                    healthy = r.status == 200
                    break
            except OSError:
                time.sleep(2)
        if not healthy:
            out = proc.stdout.read() if proc.poll() is not None and proc.stdout else ""
            pytest.fail(f"the app never served (exit {proc.poll()}):\n{out[-3000:]}")
    finally:
        os.killpg(proc.pid, 15)
        proc.wait(timeout=30)
    venv_python = clone / ".venv" / "bin" / "python"
    assert venv_python.exists()
    where = subprocess.run([str(venv_python), "-c", "import hiqa, streamlit; print(hiqa.__file__)"],
                           capture_output=True, text=True, timeout=120, check=True, env=env,
                           cwd=clone.parent)
    assert Path(where.stdout.strip()).resolve().is_relative_to(clone.resolve())


def test_second_command_installs_the_test_tools_into_the_project_venv(
        fresh_machine: tuple[Path, dict[str, str]]) -> None:
    clone, env = fresh_machine
    done = subprocess.run(["bash", "scripts/test.sh", "--install-only"], cwd=clone, env=env,
                          capture_output=True, text=True, timeout=INSTALL_TIMEOUT_S, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-3000:]
    venv_python = clone / ".venv" / "bin" / "python"
    found = subprocess.run([str(venv_python), "-c", "import pytest, playwright, mypy, hiqa"],
                           capture_output=True, text=True, timeout=120, check=False, env=env,
                           cwd=clone.parent)
    assert found.returncode == 0, found.stderr
