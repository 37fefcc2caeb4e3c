"""Headings an HTML page sets by styling instead of h1-h6 (issue #44, item 2;
``hiqa/formats/html/styled.py``): each rule on a small page written here, and the guard that
keeps the same styling used otherwise from becoming a heading."""
from __future__ import annotations

from hiqa.formats.fidelity import fidelity
from hiqa.formats.html import parse_html

BODY = "<p>This paragraph is the body text of the section, a sentence or two of it.</p>"


def read(html: str):
    return parse_html(html, doc_id="t", source="t.html")


def heads(html: str) -> list[tuple[int, str]]:
    return [(h.level, h.title) for h in read(html).headings]


def banner(title: str, content: str) -> str:
    """A table whose first row is one cell spanning it, over a decoration column and a content
    column."""
    return (f'<table><tr><td colspan="3"><strong>{title}</strong></td></tr>'
            f'<tr><td>&nbsp;</td><td>&nbsp;</td><td>{content}</td></tr></table>')


# -- banner tables ---------------------------------------------------------------------------

def test_a_banner_cell_heads_its_table_and_a_nested_banner_is_a_level_deeper():
    page = ("<html><head><title>Guide</title></head><body>"
            + banner("Classes", BODY + banner("class Reader(object)", BODY)
                     + banner("class Writer(object)", BODY))
            + banner("Data", BODY) + "</body></html>")
    got = heads(page)
    assert got == [(1, "Guide"), (2, "Classes"), (3, "class Reader(object)"),
                   (3, "class Writer(object)"), (2, "Data")]
    assert "body text of the section" in read(page).markdown


def test_a_data_tables_title_and_header_rows_are_no_headings():
    table = ('<table><tr><th colspan="2">Prices</th></tr><tr><th>Item</th><th>Price</th></tr>'
             '<tr><td>Apple</td><td>1.00</td></tr><tr><td>Pear</td><td>2.00</td></tr></table>')
    page = f"<html><head><title>Shop</title></head><body><h1>Shop</h1>{BODY}{table}</body></html>"
    doc = read(page)
    assert [h.title for h in doc.headings] == ["Shop"]
    assert "| Apple | 1.00 |" in doc.markdown


def test_a_one_column_table_is_no_banner():
    """A lone first-row cell heads a banner only when it spans columns the rows below have."""
    table = "<table><tr><td>Name</td></tr><tr><td>Alice</td></tr><tr><td>Bob</td></tr></table>"
    page = f"<html><head><title>People</title></head><body>{BODY}{table}</body></html>"
    assert [t for _, t in heads(page)] == ["People"]


# -- the opening bar ---------------------------------------------------------------------------

def test_a_bold_bar_opening_a_page_without_headings_is_its_title_and_its_links_are_frame():
    bar = ('<table><tr><td><strong>queue</strong></td>'
           '<td><a href="i.html">index</a><br><a href="q.py">/usr/lib/queue.py</a></td>'
           '</tr></table>')
    page = ("<html><head><title>Python: module queue</title></head><body>" + bar + BODY
            + banner("Classes", BODY) + banner("Data", BODY) + "</body></html>")
    doc = read(page)
    assert doc.title == "queue"
    assert [(h.level, h.title) for h in doc.headings] == [(1, "queue"), (2, "Classes"),
                                                          (2, "Data")]
    assert "/usr/lib/queue.py" not in doc.markdown
    assert fidelity(doc).evidence == "typography"
    assert fidelity(doc).summary.endswith("from typography (bold lines, banner cells, styled blocks)")


def test_a_page_opening_with_prose_has_no_opening_bar():
    page = ("<html><head><title>Notes</title></head><body><p>Some words first.</p>"
            "<p><b>Later bold</b></p>" + BODY + "</body></html>")
    assert [t for _, t in heads(page)] == ["Notes"]
    assert fidelity(read(page)).evidence == "markup"


# -- bold lines ----------------------------------------------------------------------------------

def man_page(*paragraphs: str) -> str:
    return ("<html><head><title>tool</title></head><body><h1>tool</h1><h2>DESCRIPTION</h2>"
            + "".join(paragraphs) + "<h2>SEE ALSO</h2><p>other(1)</p></body></html>")


def test_bold_lines_set_alike_head_subsections_below_the_h_element_before_them():
    page = man_page(BODY,
                    '<p style="margin-top: 1em"><b>Storage location</b><br>'
                    "Files are kept in one directory per user.</p>",
                    '<p style="margin-top: 1em"><b>Questions and answers</b></p>', BODY)
    assert heads(page) == [(1, "tool"), (2, "DESCRIPTION"), (3, "Storage location"),
                           (3, "Questions and answers"), (2, "SEE ALSO")]
    assert "Files are kept in one directory per user." in read(page).markdown


def test_a_single_bold_line_is_no_pattern():
    page = man_page(BODY, '<p style="margin-top: 1em"><b>Storage location</b><br>Text.</p>', BODY)
    assert [t for _, t in heads(page)] == ["tool", "DESCRIPTION", "SEE ALSO"]


def test_bold_words_in_prose_and_bold_sentences_are_no_headings():
    page = man_page("<p><b>Storage</b> is kept per user, in one directory.</p>",
                    "<p><b>Caching</b> is done per process, in memory.</p>",
                    "<p><b>Never run this as root.</b></p>", BODY,
                    "<p><b>Never run this twice.</b></p>", BODY)
    assert [t for _, t in heads(page)] == ["tool", "DESCRIPTION", "SEE ALSO"]


def test_a_bold_line_without_content_after_it_or_over_deeper_text_is_no_heading():
    """A synopsis line standing alone before the next heading; a hanging tag whose body is
    indented deeper (a term, not a section)."""
    tag = '<p style="margin-left:11%"><b>{}</b></p><p style="margin-left:18%">Its meaning.</p>'
    page = ("<html><head><title>tool</title></head><body><h1>tool</h1><h2>SYNOPSIS</h2>"
            '<p><b>tool [options]</b></p><h2>OPTIONS</h2><p><b>tool --all</b></p>'
            "<h2>FILES</h2>" + tag.format("hashed database") + tag.format("directory tree")
            + "</body></html>")
    assert [t for _, t in heads(page)] == ["tool", "SYNOPSIS", "OPTIONS", "FILES"]


def test_bold_captions_of_tables_and_code_and_bold_command_lines_are_no_headings():
    table = "<table><tr><td>a</td><td>1</td></tr><tr><td>b</td><td>2</td></tr></table>"
    page = man_page(BODY, "<p><b>Table of values</b></p>", table,
                    "<p><b>Example listing</b></p>", "<pre>run --fast\n</pre>", BODY,
                    "<p>Run it like this:</p><p><b>run it now</b></p>", BODY,
                    "<p>Then:</p><p><b>run it again</b></p>", BODY,
                    "<p><b><code>make all</code></b></p>", BODY,
                    "<p><b><code>make install</code></b></p>", BODY)
    assert [t for _, t in heads(page)] == ["tool", "DESCRIPTION", "SEE ALSO"]


def test_css_of_the_page_makes_a_class_bold():
    page = ("<html><head><title>tool</title><style>.lead { font-weight: bold }</style></head>"
            "<body><h1>tool</h1>" + BODY + '<p><span class="lead">First part</span></p>' + BODY
            + '<p><span class="lead">Second part</span></p>' + BODY + "</body></html>")
    assert [t for _, t in heads(page)] == ["tool", "First part", "Second part"]
    plain = page.replace("font-weight: bold", "font-style: italic")
    assert [t for _, t in heads(plain)] == ["tool"]


# -- anchored containers -------------------------------------------------------------------------

def member(ident: str, name: str, args: str) -> str:
    return (f'<div id="{ident}" class="member"><div class="head"><span class="n">{name}</span>'
            f'<span class="a">{args}</span> <span class="hint">click to show source</span></div>'
            f'<div class="desc"><p>What {name} does, in a sentence.</p></div></div>')


def test_anchored_containers_opening_with_a_short_block_are_sections_without_their_repeated_label():
    page = ("<html><head><title>class Address</title></head><body><h1>class Address</h1>"
            "<section><header><h3>Methods</h3></header>"
            + member("m-new", "new", "(string)") + member("m-parse", "parse", "(text)")
            + member("m-name", "name", "()") + "</section></body></html>")
    assert heads(page) == [(1, "class Address"), (2, "Methods"), (3, "new(string)"),
                           (3, "parse(text)"), (3, "name()")]


def test_titled_examples_inside_a_flowing_section_are_no_sections():
    """A container titled in bold that the section's prose continues after (a numbered
    example) would put that prose under its title."""
    example = ('<div class="example" id="ex{n}"><p class="title"><b>Example {n}. Setup</b></p>'
               '<div class="contents"><p>Text of the example.</p><pre>SELECT {n};</pre></div>'
               "</div>")
    page = ("<html><head><title>Indexes</title></head><body><h1>Indexes</h1>" + BODY
            + example.format(n=1) + BODY + example.format(n=2) + BODY + "</body></html>")
    assert [t for _, t in heads(page)] == ["Indexes"]


def test_pages_with_h_elements_and_no_styled_headings_keep_markup_evidence():
    page = f"<html><head><title>A</title></head><body><h1>A</h1><h2>B</h2>{BODY}</body></html>"
    doc = read(page)
    assert [t for _, t in heads(page)] == ["A", "B"]
    assert fidelity(doc).evidence == "markup"
