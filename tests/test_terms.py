"""Definition terms as the finest level of the heading tree (issue #17), in every text format."""
import json

import pytest

from hiqa.augment import segment_document
from hiqa.cli.main import main
from hiqa.formats import load_document


def write(tmp_path, name, text):
    p = tmp_path / name
    p.write_text(text, encoding="utf-8")
    return p


def tree(doc):
    return [(s.level, s.kind, s.title) for s in doc.sections if s.level]


MD_TERMS = """# tool(1)

## OPTIONS

Options come first.

- -f, --force

Never prompt.

- -n NUM

Stop after NUM lines.
A second line of the same paragraph.

Still about -n.

## ERRORS

EPERM
: Operation not permitted.

ENOENT
: No such file.

## SEE ALSO

- other(1)

A single item stays a paragraph.
"""


def test_markdown_definition_items_become_terms(tmp_path):
    doc = load_document(write(tmp_path, "tool.1.md", MD_TERMS))
    assert tree(doc) == [
        (1, "heading", "tool(1)"),
        (2, "heading", "OPTIONS"),
        (3, "term", "-f, --force"),
        (3, "term", "-n NUM"),
        (2, "heading", "ERRORS"),
        (3, "term", "EPERM"),
        (3, "term", "ENOENT"),
        (2, "heading", "SEE ALSO"),
    ]
    by_title = {s.title: s for s in doc.sections}
    # the section keeps its own intro; a term owns every block up to the next term or heading
    assert by_title["OPTIONS"].body == "Options come first."
    assert by_title["-n NUM"].body.endswith("Still about -n.")
    assert by_title["EPERM"].body == "Operation not permitted."
    # a one-item list stays a paragraph of its section
    assert by_title["SEE ALSO"].body.startswith("- other(1)")
    # terms hang under their section, and the canonical Markdown keeps the source's lines
    assert doc.path_of(by_title["-n NUM"]) == ("tool(1)", "OPTIONS", "-n NUM")
    assert "- -f, --force\n\nNever prompt." in doc.markdown


def test_term_segments_carry_document_section_and_term(tmp_path):
    doc = load_document(write(tmp_path, "tool.1.md", MD_TERMS))
    segs = {s.path[-1]: s for s in segment_document(doc)}
    assert segs["EPERM"].path == ("tool(1)", "ERRORS", "EPERM")
    assert segs["EPERM"].augmented_text.startswith("tool(1) > ERRORS > EPERM")
    assert "Operation not permitted." in segs["EPERM"].augmented_text
    assert segs["OPTIONS"].text == "Options come first."


def test_headings_leave_terms_out_unless_asked(tmp_path, capsys):
    f = write(tmp_path, "tool.1.md", MD_TERMS)
    doc = load_document(f)
    assert [h.title for h in doc.headings] == ["tool(1)", "OPTIONS", "ERRORS", "SEE ALSO"]
    assert main(["structure", str(f), "--json"]) == 0
    plain = json.loads(capsys.readouterr().out)
    assert [h["title"] for h in plain] == ["tool(1)", "OPTIONS", "ERRORS", "SEE ALSO"]
    assert all("kind" not in h for h in plain)
    assert main(["structure", str(f), "--json", "--terms"]) == 0
    full = json.loads(capsys.readouterr().out)
    assert {"level": 3, "title": "EPERM", "page": 1, "kind": "term"} in full
    assert len(full) == 8


def test_heading_after_terms_is_not_their_child(tmp_path):
    md = "# A\n\n## B\n\n- t1\n\nd1\n\n- t2\n\nd2\n\n#### Deep\n\nbody\n"
    doc = load_document(write(tmp_path, "a.md", md))
    deep = next(s for s in doc.sections if s.title == "Deep")
    assert doc.path_of(deep) == ("A", "B", "Deep")


def test_html_definition_lists(tmp_path):
    html = """<html><head><title>lib</title></head><body><h1>Errors</h1><p>Intro.</p>
    <dl class="variablelist"><dt><span class="term"><code>EPERM</code></span></dt>
    <dd><p>Operation not permitted.</p></dd><dt>-a</dt><dt>--all</dt><dd><p>All of them.</p></dd>
    </dl><h1>Other</h1><dl><dt>Lone</dt><dd>one</dd></dl></body></html>"""
    doc = load_document(write(tmp_path, "lib.html", html))
    # no heading spells the <title>: it heads the page, the h1 sections one below (issue #31)
    assert tree(doc) == [(1, "heading", "lib"), (2, "heading", "Errors"), (3, "term", "EPERM"),
                         (3, "term", "-a, --all"), (2, "heading", "Other")]
    by_title = {s.title: s for s in doc.sections}
    assert by_title["-a, --all"].body == "All of them."
    assert by_title["Other"].body == "Lone\n\none"


TEXT = """OPTIONS

       -f     Normally, the tool checks the superblock to make
              sure the log matches.

       -h     Display a usage message.

       -o offset
              Specify the offset in bytes.

       A closing remark that is prose, not a term, and ends like a sentence.
"""


@pytest.mark.parametrize("text, expected", [
    (TEXT, ["-f", "-h", "-o offset"]),
    # a table-like line pair is not a term list when nothing is indented under it
    ("NOTES\n\nName   Value\nalpha  1\n", []),
    # one term alone stays a paragraph
    ("NOTES\n\n   -x\n       Only one.\n", []),
])
def test_plain_text_indented_terms(tmp_path, text, expected):
    doc = load_document(write(tmp_path, "t.txt", text))
    assert [s.title for s in doc.sections if s.kind == "term"] == expected
    if expected:
        first = next(s for s in doc.sections if s.kind == "term")
        assert first.body.startswith("Normally, the tool checks")
        assert "sure the log matches." in first.body


def test_a_long_definition_list_does_not_fill_the_top_hits(settings, tmp_path):
    """One segment per section first (``fusion.one_per_section``), on a real collection: a
    question every option of one list matches still gets the other sections into its top
    hits, and the list's other options follow instead of being dropped."""
    from hiqa.collection import Collection
    from hiqa.index.terms import context_key

    root = tmp_path / "docs"
    root.mkdir()
    options = "\n\n".join(
        f"- --{name}\n\nCopy the files and keep their {name} attributes when copying."
        for name in ("mode", "owner", "timestamps", "links", "context", "xattr"))
    write(root, "copy.1.md", f"# copy(1)\n\n## OPTIONS\n\n{options}\n\n## BUGS\n\nNone known.\n")
    write(root, "place.1.md", "# place(1)\n\n## DESCRIPTION\n\nCopy files and set attributes "
                              "such as the mode and the owner.\n\n## EXIT STATUS\n\nZero.\n")
    col = Collection("crowd", settings, create=True)
    col.ingest([root])
    hits = col.retrieve("copy files and set their attributes").rank(k=10)
    keys = [context_key(h.segment) for h in hits]
    distinct = list(dict.fromkeys(keys))
    assert keys[:len(distinct)] == distinct  # every section once before any second segment
    assert sum(1 for h in hits if h.segment.kind == "term") == 6  # all six options still there
    assert "DESCRIPTION" in [h.segment.path[-1] for h in hits[:3]]
