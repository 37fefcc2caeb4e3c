"""No file in the repository names a folder of one particular machine (issue #16).

A bench that defaulted to the development machine's shared folder or to a fixed temporary path
ran nowhere else.  Shared scripts are found relative to the repository (``bench/_common.py``),
scratch space comes from ``tempfile``.  Every tracked text file is checked, documentation
included; ``ALLOWED`` is where a file may keep such a path, with the reason.
"""
from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
MACHINE_PATH = re.compile(r"(?<![\w.~/-])/(?:work|home|root|tmp)/")
"""An absolute path under a home, work or temporary folder; ``../tmp/x`` and URLs do not match."""
ALLOWED: dict[str, str] = {}
# third-party pages copied byte for byte as fixtures: their text is theirs (a "make DESTDIR=..."
# example in the GNU Coding Standards names a temporary folder), not a path of this project
COPIED = "tests/fixtures/html/"


def machine_paths(text: str) -> list[str]:
    return [line.strip() for line in text.splitlines() if MACHINE_PATH.search(line)]


def tracked_files() -> list[Path]:
    try:
        out = subprocess.run(["git", "ls-files", "-z", "--cached", "--others",
                              "--exclude-standard"], cwd=ROOT, capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        pytest.skip("not a git checkout: the tracked files are unknown")
    return [ROOT / name for name in out.decode().split("\0") if name]


def test_pattern_matches_machine_paths_only() -> None:
    bad = ['MAKE = Path("/' + 'work/shared/bench/make.py")', "cache = '/" + "tmp/hiqa-cache'",
           "see /" + "home/me/x", "/" + "root/.cache"]
    good = ["../shared/bench/make.py", "https://example.org/home/page", "~/tmp/x",
            "/usr/share/man", "tempfile.gettempdir()", "data/tmp/x"]
    assert [b for b in bad if not machine_paths(b)] == []
    assert [g for g in good if machine_paths(g)] == []


def test_no_tracked_file_names_a_machine_path() -> None:
    found = {}
    for path in tracked_files():
        rel = path.relative_to(ROOT).as_posix()
        if rel in ALLOWED or rel.startswith(COPIED) or not path.is_file():
            continue
        data = path.read_bytes()
        if b"\0" in data[:8192]:
            continue  # binary: vectors, screenshots
        hits = machine_paths(data.decode("utf-8", errors="replace"))
        if hits:
            found[rel] = hits[:3]
    assert found == {}, "absolute machine paths (use ../shared via bench/_common.py, tempfile):"
