"""A full disk (issue #33): a clear "no space left on device" error, never a SIGBUS, and the
index unchanged.

Qdrant Edge maps its files and grows them in 32 MB chunks, even when it opens a shard for a
search (its write-ahead log); on a full file system the first touch of such a page killed the
process with SIGBUS (exit 135), after "permission denied" from an ingest.  The test makes a
small file system (a 200 MB tmpfs) where the test environment may mount one, builds a
collection on it, fills it to 20 MB free and runs the commands in child processes, as a user
would; where mounting is not allowed, the free space is reported low instead (the same checks
answer, in this process).
"""
from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections import namedtuple
from pathlib import Path

from index_fixtures import DOCS

from hiqa.cli.main import main
from hiqa.index import store

FREE_LEFT = 20 * 1024 * 1024


def _mount(where: Path) -> bool:
    where.mkdir()
    try:
        done = subprocess.run(["mount", "-t", "tmpfs", "-o", "size=200m", "tmpfs", str(where)],
                              capture_output=True, check=False, timeout=30)
    except OSError:
        return False
    return done.returncode == 0


def _hiqa(data: Path, cache: Path, *words: str) -> tuple[int, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    env.update(HIQA_CACHE_DIR=str(cache), PYTHONPATH=str(Path(__file__).resolve().parents[1]))
    proc = subprocess.run([sys.executable, "-m", "hiqa.cli", "--data-dir", str(data), *words],
                          capture_output=True, text=True, env=env, check=False, timeout=300)
    return proc.returncode, proc.stdout + proc.stderr


def _snapshot(data: Path) -> dict[str, int]:
    """Every file of the data dir with its size: what 'unchanged' is checked against."""
    return {str(p.relative_to(data)): p.stat().st_size for p in data.rglob("*") if p.is_file()
            and p.name not in ("hiqa.owner", "ingest.lock", "registry.lock")}


def test_a_full_disk_is_a_clear_error_and_changes_nothing(tmp_path, embed_cache, monkeypatch):
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name in ("wc.1.md", "tail.1.md"):
        (corpus / name).write_text(DOCS[name], encoding="utf-8")
    extra = tmp_path / "extra.md"
    extra.write_text(DOCS["head.1.md"], encoding="utf-8")
    small = tmp_path / "small"
    mounted = _mount(small)
    try:
        if mounted:
            data = small / "data"

            def run(*words: str) -> tuple[int, str]:
                return _hiqa(data, embed_cache, *words)
        else:  # no mount here: the file system reports 20 MB free (after the build)
            data = small / "data"
            monkeypatch.setenv("HIQA_CACHE_DIR", str(embed_cache))

            def run(*words: str) -> tuple[int, str]:
                store.close_all()
                code = main(["--data-dir", str(data), *words])
                return code, ""
        code, out = run("ingest", str(corpus), "-c", "docs")
        assert code == 0, out
        store.close_all()
        if mounted:
            free = shutil.disk_usage(small).free
            (small / "filler").write_bytes(b"\0" * (free - FREE_LEFT))
        else:
            usage = namedtuple("usage", "total used free")
            monkeypatch.setattr("hiqa.files.shutil.disk_usage",
                                lambda path: usage(200 << 20, (200 << 20) - FREE_LEFT, FREE_LEFT))
        before = _snapshot(data)
        for words in (("search", "print the last lines", "-c", "docs"),
                      ("ingest", str(extra), "-c", "docs"), ("embed", "-c", "docs")):
            code, out = run(*words)
            assert code == 1, (words, code, out)  # an error exit, not a SIGBUS (135 / -7)
            if mounted:
                assert "no space left on device" in out and "MB are free" in out, out
                assert "Traceback" not in out
            assert _snapshot(data) == before, words
        if mounted:
            (small / "filler").unlink()
        else:
            monkeypatch.undo()
            monkeypatch.setenv("HIQA_CACHE_DIR", str(embed_cache))
        code, out = run("search", "tail: follow appended data", "-c", "docs", "--json")
        assert code == 0 and (not mounted or '"doc": "tail.1.md"' in out), out
    finally:
        store.close_all()
        if mounted:
            subprocess.run(["umount", str(small)], check=False, timeout=30)
