"""Markdown, plain text and HTML parsing, the title rule, and bad input."""
import json

import pytest

from hiqa.cli.main import main
from hiqa.errors import DocumentError, EmptyDocumentError, UnsupportedFormatError
from hiqa.formats import load_document


def write(tmp_path, name, text, encoding="utf-8"):
    p = tmp_path / name
    p.write_bytes(text.encode(encoding) if isinstance(text, str) else text)
    return p


def paths(doc):
    return [doc.path_of(s) for s in doc.sections]


MD = """Preface text before any heading.

# Guide

Intro.

```bash
# not a heading
echo hi
```

### Deep / skipped > level | with pipes

Deep body.

## Usage

Usage body.

Setext Heading
==============

Setext body.

Second setext
-------------

## Usage

Duplicate heading body.
"""


def test_markdown_hierarchy_rules(tmp_path):
    doc = load_document(write(tmp_path, "guide.md", MD))
    assert doc.title == "Guide"  # first top-level heading
    heads = [(h.level, h.title) for h in doc.headings]
    assert heads == [
        (1, "Guide"),
        (3, "Deep / skipped > level | with pipes"),
        (2, "Usage"),
        (1, "Setext Heading"),
        (2, "Second setext"),
        (2, "Usage"),
    ]
    # text before the first heading belongs to the document root
    root = doc.sections[0]
    assert root.level == 0 and "Preface text" in root.body
    assert doc.path_of(root) == ("Guide",)
    # fenced code stays in the body of "Guide"
    guide = doc.sections[1]
    assert "# not a heading" in guide.body
    # skipped level: H3 directly under H1 gets the H1 as parent; the title is one path element
    deep = doc.sections[2]
    assert deep.parent == guide.order
    assert doc.path_of(deep) == ("Guide", "Deep / skipped > level | with pipes")
    # duplicates stay separate, each with its own parent and body
    usages = [s for s in doc.sections if s.title == "Usage"]
    assert len(usages) == 2
    assert doc.path_of(usages[0]) == ("Guide", "Usage")
    assert doc.path_of(usages[1]) == ("Guide", "Setext Heading", "Usage")
    assert "Usage body" in usages[0].body and "Duplicate heading body" in usages[1].body


def test_markdown_spans_cover_canonical_text(tmp_path):
    doc = load_document(write(tmp_path, "guide.md", MD))
    for s in doc.sections:
        body = doc.markdown[s.body_span[0]:s.body_span[1]]
        for b in s.blocks:
            assert b.text.strip() in body
    # sections tile the canonical Markdown
    assert doc.sections[0].span[0] == 0
    assert doc.sections[-1].span[1] == len(doc.markdown)
    for a, b in zip(doc.sections, doc.sections[1:]):
        assert a.span[1] == b.span[0]


def test_markdown_tables_and_caption(tmp_path):
    text = "# T\n\nTable 1: Pin functions\n| Pin | Name |\n|-----|------|\n| 1 | VCC |\n| 2 | GND |\n\nAfter.\n"
    doc = load_document(write(tmp_path, "t.md", text))
    table = next(b for s in doc.sections for b in s.blocks if b.kind == "table")
    assert table.caption == "Table 1: Pin functions"
    assert table.rows == (("Pin", "Name"), ("1", "VCC"), ("2", "GND"))
    assert "| 2 | GND |" in doc.markdown


def test_title_falls_back_to_file_name(tmp_path):
    doc = load_document(write(tmp_path, "notes-2024.md", "just text, no heading\n"))
    assert doc.title == "notes-2024"
    assert doc.headings == []


def test_front_matter_title_wins(tmp_path):
    doc = load_document(write(tmp_path, "x.md", "---\ntitle: Real Title\n---\n# Other\n\nbody\n"))
    assert doc.title == "Real Title"


def test_plain_text_headings(tmp_path):
    text = (
        "ACME WIDGET MANUAL\n\nIntro paragraph.\n\n1 Overview\n\nOverview text.\n\n"
        "1.1 Scope\n\nScope text.\n\n1. Open the lid and remove the cover.\n\n"
        "2 Installation\n\nSteps.\n"
    )
    doc = load_document(write(tmp_path, "manual.txt", text))
    heads = [(h.level, h.title) for h in doc.headings]
    assert heads == [(1, "ACME WIDGET MANUAL"), (1, "1 Overview"), (2, "1.1 Scope"),
                     (1, "2 Installation")]
    scope = next(s for s in doc.sections if s.title == "1.1 Scope")
    assert "1. Open the lid" in scope.body  # a numbered sentence is not a heading


def test_html_headings_tables_and_navigation(tmp_path):
    html = """<html><head><title>CREATE INDEX</title><style>h1{}</style></head><body>
    <div class="navheader"><h1>Navigation junk</h1></div>
    <h1>CREATE INDEX</h1><p>define a <b>new</b> index</p>
    <h2>Parameters</h2><dl><dt>CONCURRENTLY</dt><dd>build without locking</dd></dl>
    <table><caption>Table 2. Options</caption><tr><th>Name</th><th>Default</th></tr>
    <tr><td>fillfactor</td><td>90</td></tr></table>
    <script>var x = "<h2>no</h2>";</script>
    </body></html>"""
    doc = load_document(write(tmp_path, "sql-createindex.html", html))
    assert doc.title == "CREATE INDEX"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "CREATE INDEX"), (2, "Parameters")]
    params = doc.sections[-1]
    table = next(b for b in params.blocks if b.kind == "table")
    assert table.caption == "Table 2. Options"
    assert table.rows[1] == ("fillfactor", "90")
    assert "CONCURRENTLY" in params.body and "Navigation junk" not in doc.markdown


def test_non_utf8_text_is_detected(tmp_path):
    text = "# Überblick\n\nDie Größe der Straße ist ungefähr zwölf Meter, schön und grün.\n" * 3
    doc = load_document(write(tmp_path, "de.md", text, encoding="latin-1"))
    assert doc.title == "Überblick"
    assert "Größe" in doc.markdown
    assert any("not UTF-8" in w for w in doc.warnings)


@pytest.mark.parametrize(
    "name,data,error,message",
    [
        ("empty.md", b"", EmptyDocumentError, "empty"),
        ("blank.txt", b"  \n\n ", EmptyDocumentError, "no text"),
        ("data.xlsx", b"PK\x03\x04", UnsupportedFormatError, "unsupported file type '.xlsx'"),
        ("bin.txt", b"\x00\x01\x02binary", DocumentError, "binary"),
    ],
)
def test_bad_input_errors(tmp_path, name, data, error, message):
    with pytest.raises(error, match=message):
        load_document(write(tmp_path, name, data))


def test_cli_structure_json(tmp_path, capsys):
    p = write(tmp_path, "guide.md", MD)
    assert main(["structure", str(p), "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out[0] == {"level": 1, "title": "Guide", "page": 1}
    assert out[1]["title"] == "Deep / skipped > level | with pipes"


def test_cli_reports_errors_without_traceback(tmp_path, capsys):
    p = write(tmp_path, "empty.md", b"")
    assert main(["structure", str(p)]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "empty" in err and "Traceback" not in err


def test_html_admonitions_line_breaks_and_list_items(tmp_path):
    html = """<html><head><title>REINDEX</title></head><body>
    <h2>Parameters</h2>
    <p>Rebuild the index
    without locking writes.</p>
    <div class="note"><h3 class="title">Note</h3><p>Takes longer.</p></div>
    <ul><li><p>first item</p></li></ul>
    <h2>Notes</h2><p>After the box.</p>
    </body></html>"""
    doc = load_document(write(tmp_path, "sql-reindex.html", html))
    # a note box is no section; the <title> heads the page (no heading spells it)
    assert [h.title for h in doc.headings] == ["REINDEX", "Parameters", "Notes"]
    params = next(s for s in doc.sections if s.title == "Parameters")
    assert "Rebuild the index without locking writes." in params.body  # source newline = space
    assert "Note: Takes longer." in params.body
    assert "- first item" in params.body


# ------------------------------------------------------------------ issue #13: encodings
@pytest.mark.parametrize("text,encoding,expected", [
    ("Ceci est très, très important pour le système français.\n", "latin-1", "cp1252"),
    ("très bien\n", "latin-1", "cp1252"),  # nine bytes: the detector said BOM-less UTF-16
    ("Größe und Maße: „Straße“ – für Übergrößen.\n", "cp1252", "cp1252"),
    ("Привет, как дела? Это тестовый документ на русском языке.\n", "cp1251", "cp1251"),
    ("Zażółć gęślą jaźń. Łódź jest pięknym miastem w Polsce.\n", "cp1250", "cp1250"),
    ("這是一份繁體中文文件，描述電源與精度。資料手冊說明了量測範圍。\n", "big5", "big5"),
])
def test_decode_prefers_western_only_when_it_reads_as_western(text, encoding, expected):
    from hiqa.formats.textio import decode_bytes

    decoded, warnings = decode_bytes(text.encode(encoding), "f.txt")
    assert decoded == text
    assert warnings == [f"f.txt: not UTF-8; decoded as {expected}"
                        + (" (Western European)" if expected == "cp1252" else "")]


def test_decode_refuses_mostly_symbols():
    from hiqa.errors import DocumentError
    from hiqa.formats.textio import decode_bytes

    with pytest.raises(DocumentError, match="does not look like text"):
        decode_bytes("%%%% $$$$ ### 12 ± € ¶ ¤ \n".encode("cp1252") * 20, "f.txt")


@pytest.mark.parametrize("text, title, source", [
    ("---\ntitle: Front Matter\n---\n# Heading\n\nx\n", "Front Matter", "metadata"),
    ("# First Heading\n\nx\n\n## Sub\n\ny\n", "First Heading", "heading"),
    ("no heading at all, just text\n", "plain-notes", "filename"),
])
def test_title_source_is_recorded(tmp_path, text, title, source):
    doc = load_document(write(tmp_path, "plain-notes.md", text))
    assert (doc.title, doc.metadata["title_source"]) == (title, source)


@pytest.mark.parametrize(("heading", "text"), [
    ("[`django.contrib.admin`](../ref/admin/index.html#module-admin \"Django's admin site.\")",
     "django.contrib.admin"),
    ("`Model.save()` when providing a default", "Model.save() when providing a default"),
    ("**Bold** and *emphasis* and <b>tags</b>", "Bold and emphasis and <b>tags</b>"),
    ("Changes¶", "Changes"),
    ("gcloud_alpha_asset_query(1)", "gcloud_alpha_asset_query(1)"),
    ("Using <tags> and 2*3*4", "Using <tags> and 2*3*4"),
    ("See [the guide][ref] and ![logo](a.png)", "See the guide and logo"),
])
def test_markdown_heading_titles_are_their_text_not_their_markup(heading, text, tmp_path):
    from hiqa.formats.markdown import heading_text

    assert heading_text(heading) == text
    doc = tmp_path / "doc.md"
    doc.write_text(f"# Report\n\n## {heading}\n\nBody text.\n", encoding="utf-8")
    assert [s.title for s in load_document(doc).sections if s.level == 2] == [text]


def test_html_doxygen_title_block_and_member_marks(tmp_path):
    """Issue #31: a Doxygen class page (markup as libjsoncpp-doc ships it) has no <title>; its
    title is the generator's title block, and its member headings carry a "◆" permalink."""
    html = """<html><head><meta charset="utf-8"/></head><body>
    <div id="top"><div id="titlearea">jsoncpp 1.9.5</div></div>
    <div class="header"><div class="summary"><a href="#nested-classes">Classes</a></div>
    <div class="headertitle"><div class="title">Json::Value Class Reference</div></div></div>
    <div class="contents"><a name="details" id="details"></a>
    <h2 class="groupheader">Detailed Description</h2><div class="textblock">
    <p>Represents a JSON value.</p></div>
    <h2 class="groupheader">Member Typedef Documentation</h2>
    <h2 class="memtitle"><span class="permalink"><a href="#a0cfec">&#9670;&nbsp;</a></span>ArrayIndex</h2>
    <div class="memitem"><p>An index into an array.</p></div></div></body></html>"""
    doc = load_document(write(tmp_path, "class_json_1_1_value.html", html))
    assert doc.title == "Json::Value Class Reference"
    assert [(h.level, h.title) for h in doc.headings] == [
        (1, "Json::Value Class Reference"), (2, "Detailed Description"),
        (2, "Member Typedef Documentation"), (2, "ArrayIndex")]
    assert "\u25c6" not in doc.markdown


def test_html_table_cells_keep_their_words_apart(tmp_path):
    """Block elements inside a cell (paragraphs, line breaks, code) separate words: before,
    "<p>cell text</p><pre>line1</pre>" read as "cell textline1"."""
    html = """<html><head><title>T</title></head><body><h1>T</h1><table>
    <tr><th>Option</th><th>Meaning</th></tr>
    <tr><td><p>-v</p><p>--verbose</p></td><td>print more<br>and more<pre>hiqa -v</pre></td></tr>
    <tr><td><b>-q</b>uiet</td><td>print less</td></tr></table></body></html>"""
    table = next(b for s in load_document(write(tmp_path, "t.html", html)).sections
                 for b in s.blocks if b.kind == "table")
    assert table.rows == (("Option", "Meaning"), ("-v --verbose", "print more and more hiqa -v"),
                          ("-quiet", "print less"))


def test_a_caption_in_capitals_over_terms_heads_them_and_options_stay_terms():
    """Issue #46: a statement's caption read as a term without text lost its place in the
    rows' paths; two option tags on two lines must not become a heading."""
    from hiqa.formats.structure import build_document
    from hiqa.model import Block, Heading

    events = [Heading(1, "Item 8. Financial Statements"),
              Heading(0, "CONSOLIDATED BALANCE SHEETS", kind="term"),
              Heading(0, "Current assets:", kind="term"), Block("text", "Inventories 5,622 5,261"),
              Heading(0, "Current liabilities:", kind="term"),
              Block("text", "Accounts payable 2,612 2,279"),
              Heading(1, "OPTIONS"),
              Heading(0, "-e", kind="term"), Heading(0, "--regexp=PATTERNS", kind="term"),
              Block("text", "Use PATTERNS as the patterns."),
              Heading(0, "-i", kind="term"), Block("text", "Ignore case.")]
    doc = build_document(doc_id="d.pdf", source="d.pdf", fmt="pdf", events=events)
    paths = {s.title: (doc.path_of(s)[-3:], s.kind) for s in doc.sections if s.level}
    assert paths["Current assets:"] == (("Item 8. Financial Statements",
                                         "CONSOLIDATED BALANCE SHEETS", "Current assets:"), "term")
    assert paths["CONSOLIDATED BALANCE SHEETS"][1] == "heading"
    assert paths["-e"][1] == "term"
    assert paths["--regexp=PATTERNS"][0][-2:] == ("OPTIONS", "--regexp=PATTERNS")
