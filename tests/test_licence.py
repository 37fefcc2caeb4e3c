"""LICENSE carries the AGPL's full text, and NOTICE names every runtime dependency (issue #15).

The AGPL asks that its text be conveyed with the program, so a LICENSE holding only a notice and
a URL is a defect; NOTICE is where a user learns what else they received under which terms, so
a dependency added to pyproject.toml without a NOTICE entry is one too.
"""
from __future__ import annotations

import re
import tomllib
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

AGPL_MARKERS = (
    "GNU AFFERO GENERAL PUBLIC LICENSE",
    "Version 3, 19 November 2007",
    "13. Remote Network Interaction",
    "END OF TERMS AND CONDITIONS",
    "How to Apply These Terms to Your New Programs",
)


def missing_agpl_parts(text: str) -> list[str]:
    return [marker for marker in AGPL_MARKERS if marker not in text]


def runtime_dependencies() -> list[str]:
    """Distribution names of pyproject.toml ``[project] dependencies``, without version specs."""
    project = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
    return [re.split(r"[\s<>=!~;\[(]", spec, maxsplit=1)[0] for spec in project["dependencies"]]


def _normalise(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def missing_notice_entries(notice: str, dependencies: list[str]) -> list[str]:
    """Dependencies with no NOTICE line that starts with their name (PEP 503 normalised)."""
    starts = {_normalise(line.split()[0]) for line in notice.splitlines() if line.strip()}
    return [d for d in dependencies if _normalise(d) not in starts]


def test_license_holds_the_full_agpl_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    assert missing_agpl_parts(text) == []
    assert text.index("Copyright (C) 2026 the HiQA contributors") < text.index(AGPL_MARKERS[0])


def test_license_check_fails_on_a_notice_without_the_text() -> None:
    text = (ROOT / "LICENSE").read_text(encoding="utf-8")
    notice_only = text[: text.index(AGPL_MARKERS[0])]
    assert "SPDX-License-Identifier: AGPL-3.0-or-later" in notice_only
    assert "END OF TERMS AND CONDITIONS" in missing_agpl_parts(notice_only)
    assert "GNU AFFERO GENERAL PUBLIC LICENSE" in missing_agpl_parts(notice_only)


def test_notice_names_every_runtime_dependency() -> None:
    dependencies = runtime_dependencies()
    assert {"pymupdf", "qdrant-client", "streamlit"} <= set(dependencies)
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    assert missing_notice_entries(notice, dependencies) == []


def test_notice_check_fails_when_an_entry_is_dropped() -> None:
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    without = "\n".join(line for line in notice.splitlines() if not line.startswith("bm25s "))
    assert missing_notice_entries(without, runtime_dependencies()) == ["bm25s"]


def test_notice_covers_shipped_data_and_weights() -> None:
    notice = (ROOT / "NOTICE").read_text(encoding="utf-8")
    for needle in ("intfloat/multilingual-e5-small", "MIT", "PostgreSQL Licence",
                   "data/demo/LICENSE-PostgreSQL.txt", "tldr-pages", "CC BY 4.0"):
        assert needle in notice
    assert (ROOT / "data" / "demo" / "LICENSE-PostgreSQL.txt").is_file()


def test_readme_links_notice() -> None:
    assert "](NOTICE)" in (ROOT / "README.md").read_text(encoding="utf-8")
