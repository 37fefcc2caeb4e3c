"""Where the benchmarks find the shared scripts and keep their scratch files.

No machine path is written down: the shared folder is ``../shared`` next to the repository (the
layout of the development machines; ``HIQA_SHARED_BENCH`` points elsewhere), and scratch files
go under the system temporary folder (``tempfile``, so ``TMPDIR`` moves them).
"""
from __future__ import annotations

import os
import subprocess
import sys
import tempfile
from pathlib import Path
from types import ModuleType

ROOT = Path(__file__).resolve().parents[1]
SHARED_BENCH = Path(os.environ.get("HIQA_SHARED_BENCH") or ROOT.parent / "shared" / "bench")
MAKE_DEV_CORPUS = SHARED_BENCH / "make_dev_corpus.py"


def score_structure() -> ModuleType:
    """The shared heading scorer (``../shared/bench/score_structure.py``), its folder put on the
    import path once."""
    if str(SHARED_BENCH) not in sys.path:
        sys.path.insert(0, str(SHARED_BENCH))
    import score_structure as scorer

    return scorer


def nearest_rank(values: list[float], q: float) -> float:
    """The ``q`` quantile (0-1) of ``values`` by nearest rank: one of the measured values."""
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


def scratch(name: str) -> Path:
    """``name`` under the temporary folder: kept between runs, so corpora are built once."""
    return Path(tempfile.gettempdir()) / name


def ensure_dev_corpus(directory: Path, docs: int) -> Path:
    """The man-page dev corpus with at least ``docs`` pages in ``directory``, built if missing."""
    if (directory / "questions.jsonl").is_file() and len(list(directory.glob("*.md"))) >= docs:
        return directory
    if not MAKE_DEV_CORPUS.is_file():
        raise SystemExit(
            f"{MAKE_DEV_CORPUS} not found: the dev corpus is built by the shared benchmark "
            "scripts, expected in ../shared/bench beside the repository; set HIQA_SHARED_BENCH "
            "to the folder holding make_dev_corpus.py"
        )
    subprocess.run([sys.executable, str(MAKE_DEV_CORPUS), str(directory), "--docs", str(docs)],
                   check=True)
    return directory
