"""Hierarchical Contextual Augmentor: paths, splitting, tables, strategies."""
import json

import pytest

from hiqa.augment import (
    LEAD_CHARS,
    Strategy,
    augmented_lead,
    document_lead,
    head_and_body,
    segment_document,
    table_embed_text,
)
from hiqa.cli.main import main
from hiqa.formats import load_document
from hiqa.tokenize import count_tokens


@pytest.fixture()
def doc(tmp_path):
    long_para = " ".join(f"Sentence number {i} explains the register map in detail." for i in range(300))
    text = f"""# ADC12QJ1600 Datasheet

Quad-channel 12-bit 1.6-GSPS ADC with JESD204C interface. Preface.

## 7 Detailed Description

### 7.1 Overview

Short overview.

### 7.2 Register Map

{long_para}

## 8 Electrical Characteristics

## 9 Pin Configuration

Table 3: Pin functions
| Pin | Name | Description |
|-----|------|-------------|
| 1 | AGND | Analog ground |
| 2 | VA11 | 1.1 V supply |

## 10 Empty Leaf
"""
    p = tmp_path / "adc12qj1600.md"
    p.write_text(text)
    return load_document(p)


def test_hca_segments_carry_full_path(doc):
    segs = segment_document(doc, "hca")
    overview = next(s for s in segs if s.path[-1] == "7.1 Overview")
    assert overview.path == ("ADC12QJ1600 Datasheet", "7 Detailed Description", "7.1 Overview")
    # the path on the first line, the document's lead (its first sentence) on the second
    assert overview.augmented_text == (
        "ADC12QJ1600 Datasheet > 7 Detailed Description > 7.1 Overview\n"
        "Quad-channel 12-bit 1.6-GSPS ADC with JESD204C interface.\n\nShort overview."
    )
    assert overview.text == "Short overview."
    # the H1 that repeats the document title is not repeated in the path
    top = next(s for s in segs if s.text.endswith("Preface."))
    assert top.path == ("ADC12QJ1600 Datasheet",) and top.level == 1
    # the segment that opens with the lead does not repeat it
    assert top.augmented_text == "ADC12QJ1600 Datasheet\n\n" + top.text
    # the lexical route's head is the path and the lead, its body the section's own text
    head = ("ADC12QJ1600 Datasheet > 7 Detailed Description > 7.1 Overview "
            "Quad-channel 12-bit 1.6-GSPS ADC with JESD204C interface.")
    assert head_and_body(overview.strategy, overview.path, overview.augmented_text) == (
        head, "Short overview.")


def test_head_and_body_reads_segments_written_before_the_lead():
    path = ("wc(1)", "OPTIONS")
    old = "wc(1) > OPTIONS\n\n-l\n\nprint the newline counts"
    assert head_and_body("hca", path, old) == ("wc(1) > OPTIONS", "-l\n\nprint the newline counts")
    assert augmented_lead("hca", path, old) == ""
    new = "wc(1) > OPTIONS\nwc - print counts\n\n-l\n\nprint the newline counts"
    assert augmented_lead("hca", path, new) == "wc - print counts"
    assert augmented_lead("title", path, new) == ""  # not a title segment's first line
    # a path that is not the segment's first line is not a head, whatever follows it
    assert head_and_body("hca", path, "wc(1) > NAME\n\nwc - count") == ("", "wc(1) > NAME\n\nwc - count")


def _lead_of(tmp_path, markdown, name="part.md"):
    p = tmp_path / name
    p.write_text(markdown, encoding="utf-8")
    return document_lead(load_document(p))


@pytest.mark.parametrize("markdown, lead", [
    # a man page's NAME line has no full stop: the whole line
    ("# wc(1)\n\n## NAME\n\nwc - print newline,\nword, and byte counts\n\n## OPTIONS\n\n-l lines\n",
     "wc - print newline, word, and byte counts"),
    # text before the first heading is the first text; a table is not a lead
    ("# Annual Report 2025\n\n| a | b |\n|---|---|\n| 1 | 2 |\n\n## Letter\n\nDear owners! We grew.\n",
     "Dear owners!"),
    # Chinese sentences end at 。 without a space
    ("# 名称\n\n## 描述\n\n在文件间建立链接。默认创建硬链接。\n", "在文件间建立链接。"),
    # a title page's copyright and licence notices are not what the document is about
    (("# Valgrind Documentation\n\nRelease 3.19.0 Copyright © 2000-2022 AUTHORS\n\n"
      "Permission is granted to copy this document.\n\n"
      "This is the top level of the documentation tree. It has six parts.\n"),
     "This is the top level of the documentation tree."),
    # a first sentence that only repeats the title says nothing more
    ("# Widget Manual\n\nWidget manual.\n\n## Use\n\nTurn it on.\n", ""),
    # no text at all
    ("# Empty\n\n## Heading only\n", ""),
])
def test_document_lead(tmp_path, markdown, lead):
    assert _lead_of(tmp_path, markdown) == lead


def test_long_lead_is_cut_at_a_word(tmp_path):
    words = " ".join(f"word{i}" for i in range(80))
    lead = _lead_of(tmp_path, f"# T\n\n{words}.\n\n## A\n\nBody.\n")
    assert lead.endswith(" …") and len(lead) <= LEAD_CHARS + 2
    assert words.startswith(lead[:-2]) and lead[:-2].split()[-1] in words.split()


def test_only_hca_carries_the_lead(doc):
    lead = document_lead(doc)
    assert lead == "Quad-channel 12-bit 1.6-GSPS ADC with JESD204C interface."
    for strategy in ("title", "section", "fixed"):
        assert not any(lead in s.augmented_text and lead not in s.text
                       for s in segment_document(doc, strategy, fixed_tokens=64))
    hca = segment_document(doc, "hca")
    assert all(s.augmented_text.split("\n")[1] == lead for s in hca if not s.text.startswith(lead))
    assert [s.augmented_text.count(lead) for s in hca if s.text.startswith(lead)] == [1]


def test_long_sections_split_and_keep_path(doc):
    segs = [s for s in segment_document(doc, "hca", max_tokens=200) if s.path[-1] == "7.2 Register Map"]
    assert len(segs) > 3
    assert [s.piece for s in segs] == list(range(len(segs)))
    for s in segs:
        assert s.augmented_text.startswith("ADC12QJ1600 Datasheet > 7 Detailed Description > 7.2 Register Map\n"
                                           "Quad-channel 12-bit 1.6-GSPS ADC with JESD204C interface.\n\n")
        assert count_tokens(s.augmented_text) <= 200
        assert s.text.endswith(".")  # split on sentence boundaries
    # nothing lost, nothing duplicated
    joined = " ".join(s.text for s in segs)
    assert joined.count("Sentence number") == 300
    # spans point at the piece in the canonical Markdown
    for s in segs:
        assert doc.markdown[s.span[0]:s.span[1]] == s.text


def test_heading_only_sections(doc):
    segs = segment_document(doc, "hca")
    titles = [s.path[-1] for s in segs]
    assert "7 Detailed Description" not in titles  # has children: its title lives in their paths
    assert "8 Electrical Characteristics" in titles  # a heading-only leaf is kept
    leaf = next(s for s in segs if s.path[-1] == "10 Empty Leaf")
    assert leaf.text == "10 Empty Leaf"


def test_tables_embed_caption_header_first_column(doc):
    segs = segment_document(doc, "hca")
    table = next(s for s in segs if s.is_table)
    assert "| 2 | VA11 | 1.1 V supply |" in table.text and table.text.startswith("Table 3")
    body = table.augmented_text.split("\n\n", 1)[1]
    assert body == "Table 3: Pin functions\nPin | Name | Description\n1, 2"
    assert "Analog ground" not in table.augmented_text  # values stay out of the embedding
    full = next(s for s in segment_document(doc, "hca", table_text="full") if s.is_table)
    assert "Analog ground" in full.augmented_text
    block = next(b for s in doc.sections for b in s.blocks if b.kind == "table")
    assert table_embed_text(block).startswith("Table 3: Pin functions")


def test_strategies(doc):
    hca = {s.order: s for s in segment_document(doc, "hca") if s.piece == 0}
    sec = {s.order: s for s in segment_document(doc, Strategy.SECTION) if s.piece == 0}
    title = {s.order: s for s in segment_document(doc, "title") if s.piece == 0}
    o = next(k for k, s in hca.items() if s.path[-1] == "7.1 Overview")
    assert sec[o].augmented_text == "Short overview."
    assert title[o].augmented_text == "7.1 Overview\n\nShort overview."
    assert sec[o].path == hca[o].path  # path kept in payload for evaluation, not in the text
    fixed = segment_document(doc, "fixed", fixed_tokens=64)
    assert len(fixed) > 5 and all(s.path == ("ADC12QJ1600 Datasheet",) for s in fixed)
    assert all(count_tokens(s.text) <= 64 for s in fixed)
    assert all(doc.markdown[s.span[0]:s.span[1]] == s.text for s in fixed)
    with pytest.raises(ValueError, match="choose one of: fixed, section, title, hca"):
        segment_document(doc, "bogus")


def test_ids_are_stable_and_version_dependent(doc):
    a = segment_document(doc, "hca", version="v1")
    b = segment_document(doc, "hca", version="v1")
    c = segment_document(doc, "hca", version="v2")
    assert [s.segment_id for s in a] == [s.segment_id for s in b]
    assert not {s.segment_id for s in a} & {s.segment_id for s in c}
    assert len({s.segment_id for s in a}) == len(a)


def test_cli_segments_json(doc, capsys):
    assert main(["segments", doc.source, "--strategy", "title", "--json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["strategy"] == "title"
    assert {"path", "augmented_text", "content_hash", "pages", "is_table"} <= set(rows[0])


def test_only_the_piece_that_opens_with_the_lead_leaves_it_out(tmp_path):
    lead = "The XR-7 pump moves coolant through the loop."
    rest = " ".join(f"Sentence {i} describes the impeller housing." for i in range(60))
    p = tmp_path / "xr7.md"
    p.write_text(f"# XR-7 Manual\n\n{lead} {rest}\n\n## Service\n\nReplace the seal yearly.\n")
    segs = segment_document(load_document(p), "hca", max_tokens=120)
    opening = [s for s in segs if s.path == ("XR-7 Manual",)]
    assert len(opening) > 2 and opening[0].text.startswith(lead)
    assert opening[0].augmented_text == "XR-7 Manual\n\n" + opening[0].text
    for s in [*opening[1:], *(s for s in segs if s.path[-1] == "Service")]:
        assert s.augmented_text.startswith(" > ".join(s.path) + "\n" + lead + "\n\n")
        assert count_tokens(s.augmented_text) <= 120
