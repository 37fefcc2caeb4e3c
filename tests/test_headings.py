"""The section a question asks about, inside the document it names (issue #45, item 2): its own
heading holds the question's words, a long sub-section of another section only shares them."""
from __future__ import annotations

import numpy as np
import pytest

from hiqa.collection import Collection
from hiqa.model import Segment
from hiqa.retrieve.headings import own_heading_weights


def release(version: str) -> str:
    """A release's notes: every release has an overview, what is new, its bug fixes and
    updated modules; some have a Security or a Deprecations section of their own."""
    extra = EXTRA.get(version, "")
    return f"""# Acme {version} release notes

## Overview

Acme {version} is a maintenance release of the Acme toolkit for data pipelines.

## What's new

### Selected bug fixes

Fixed a crash in the scheduler when a job changed its queue. Fixed checks that were skipped
for changed tokens. Many small changes were made to the command line parser, and changes were
made to how changed settings are reported.

### Updated modules

The HTTP client was updated{BACKPORTED.get(version, "")} and changes were made to its proxy
handling. The scheduler module was updated with changes to retries.

{extra}"""


BACKPORTED = {"1.1": "; security fixes of the TLS module were backported"}
EXTRA = {"1.1": """## Security

TLS 1.0 is refused by default.

## Deprecations

The old configuration format is deprecated.
""", "1.3": """## Security

Tokens expire after a day.
"""}


@pytest.fixture
def releases(settings, tmp_path):
    folder = tmp_path / "releases"
    folder.mkdir()
    for version in ("1.0", "1.1", "1.2", "1.3"):
        (folder / f"acme-{version}.md").write_text(release(version), encoding="utf-8")
    col = Collection("releases", settings, create=True)
    col.ingest([folder])
    return col


@pytest.mark.parametrize(("question", "section"), [
    ("What security changes were made in Acme 1.1?", "Security"),
    ("Which deprecations does Acme 1.1 announce?", "Deprecations"),
])
def test_a_question_naming_a_sections_heading_finds_it_inside_the_named_document(
        releases, question, section):
    result, hits = releases.search_result(question, k=5)
    assert result.named_document == "acme-1.1.md"
    assert hits[0].segment.doc_id == "acme-1.1.md"
    assert hits[0].segment.section_path[-1] == section
    assert hits[0].contributions["heading"] > 0
    # without the keyword route nothing names the document, and no heading bonus is given
    flat = result.rank("minmax", 0.5, 0.0, 5)
    assert all(h.contributions["heading"] == 0 for h in flat)


def test_a_short_heading_that_shares_one_word_of_a_longer_question_gets_no_bonus(releases):
    # "Security" is all of its heading but a fifth of what is asked: the answer is the
    # updated modules' backported TLS fixes, not the Security section
    result, hits = releases.search_result(
        "Which security fixes of the TLS module were backported in Acme 1.1?", k=5)
    assert result.named_document == "acme-1.1.md"
    assert hits[0].segment.section_path[-1] == "Updated modules"
    assert all(h.contributions["heading"] == 0 for h in hits)


def test_no_heading_bonus_when_the_question_names_no_document(releases):
    result, hits = releases.search_result("What security changes were made?", k=5)
    assert result.named_document is None
    assert all(h.contributions["heading"] == 0 for h in hits)


def segment(doc: str, path: tuple[str, ...]) -> Segment:
    return Segment(f"{doc}-{path[-1]}", doc, "Acme 1.1 release notes", doc, path, len(path), 1,
                   0, (), "text", "text", False, "hca", (0, 4))


def test_words_of_the_kinds_headings_and_a_minor_share_of_a_heading_do_not_count():
    segs = [segment("a", ("DESCRIPTION",)), segment("a", ("OPTIONS", "-font font")),
            segment("a", ("EXIT STATUS",)), segment("a", ("SEE ALSO", "regular expressions")),
            segment("a", ("Acme release notes",))]
    kinds = {"descript": 1.0, "option": 0.97}
    weights = own_heading_weights("The descriptions of font and exit",
                                  segs, lambda t: kinds.get(t, 0.1), lambda t: 0.5)
    assert weights[0] == 0  # "description": every document's heading, the kind's
    assert weights[1] > 0  # "font": one of the term's two words, half its heading
    assert weights[2] > 0  # "exit" of "EXIT STATUS"
    assert weights[3] == 0  # neither word of "regular expressions"
    assert weights[4] == 0  # the document's title words chose the document already
    assert np.all(weights >= 0)
    # the same headings, the question's other words most of what it asks: none is its topic
    weights = own_heading_weights("Search the descriptions for a font and exit, then restart",
                                  segs, lambda t: kinds.get(t, 0.1), lambda t: 0.5)
    assert not weights.any()
