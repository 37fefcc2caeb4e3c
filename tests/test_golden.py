"""Golden Markdown (issue #32): what the Markdown Formatter makes of every generated PDF fixture
and of the demo's 40 HTML pages, byte for byte, so that moving code between modules provably
changes nothing a user sees.

A difference fails with the first differing lines.  After a change that is *meant* to alter the
output, regenerate with ``HIQA_UPDATE_GOLDEN=1 python -m pytest tests/test_golden.py``, read the
diff of ``tests/golden/`` and commit it with the reason; in that mode every test fails on purpose
(after writing), so a run that regenerates can never pass as a check.
"""
from __future__ import annotations

import difflib
import os
from pathlib import Path

import pdf_fixtures as pf
import pytest

from hiqa.formats import load_document

GOLDEN = Path(__file__).parent / "golden"
DEMO = Path(__file__).resolve().parents[1] / "data" / "demo" / "docs"
UPDATE = os.environ.get("HIQA_UPDATE_GOLDEN") == "1"
# every generated PDF that reads without OCR (scanned pages depend on the installed tesseract)
PDF_BUILDERS = [
    pf.outline_pdf, pf.numbered_pdf, pf.skipped_levels_pdf, pf.unnumbered_pdf, pf.table_pdf,
    pf.running_header_pdf, pf.cover_pdf, pf.title_block_pdf, pf.man_page_pdf, pf.toc_pdf,
    pf.printed_toc_pdf, pf.book_pdf, pf.bold_body_headings_pdf, pf.code_pdf,
    pf.borderless_table_pdf, pf.plain_subsections_pdf, pf.roman_options_pdf,
    pf.indented_prose_pdf,
]


def rendered(path: Path) -> str:
    """The document as the formatter gives it: title, then the Markdown."""
    doc = load_document(path, doc_id=path.name)
    return f"title: {doc.title}\n\n{doc.markdown}\n"


def check(name: str, text: str) -> None:
    golden = GOLDEN / f"{name}.md"
    if UPDATE:
        golden.parent.mkdir(exist_ok=True)
        golden.write_text(text, encoding="utf-8")
        pytest.fail(f"{golden.name} rewritten (HIQA_UPDATE_GOLDEN=1): review the diff, then run "
                    "again without the variable")
    assert golden.is_file(), f"no golden file {golden}; create it with HIQA_UPDATE_GOLDEN=1"
    want = golden.read_text(encoding="utf-8")
    if text != want:
        diff = difflib.unified_diff(want.splitlines(), text.splitlines(), "golden", "now",
                                    lineterm="", n=1)
        pytest.fail(f"{name}: the Markdown changed\n" + "\n".join(list(diff)[:40]))


@pytest.mark.parametrize("build", PDF_BUILDERS, ids=lambda b: b.__name__)
def test_generated_pdf_markdown_is_unchanged(build, tmp_path):
    check(f"pdf-{build.__name__}", rendered(build(tmp_path)))


@pytest.mark.parametrize("page", sorted(p.name for p in DEMO.glob("*.html")))
def test_demo_page_markdown_is_unchanged(page):
    check(f"demo-{page.removesuffix('.html')}", rendered(DEMO / page))


def test_every_golden_file_has_its_test():
    names = {f"pdf-{b.__name__}" for b in PDF_BUILDERS}
    names |= {f"demo-{p.stem}" for p in DEMO.glob("*.html")}
    assert {p.stem for p in GOLDEN.glob("*.md")} == names
