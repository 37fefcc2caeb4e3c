"""The app's page logic: safe uploads, escaped Markdown, ranking moves, tables."""
from __future__ import annotations

import dataclasses
import itertools
import math
import re

import numpy as np
import pytest

from app_pages.ui_helpers import (
    MUTED,
    WORD_JOINER,
    PathNotAllowed,
    allowed_server_path,
    degradation_rows,
    diagnostic_rows,
    escape_markdown,
    filter_segments,
    fusion_method_rows,
    hits_rows,
    inside,
    label_styles,
    markdown_around,
    move_label,
    moved_count,
    plot_label,
    rank_moves,
    render_answer,
    robust_range,
    safe_upload_name,
    score_breakdown,
    section_key,
    section_tree,
    segment_label,
    settle_uploads,
    short_path,
    source_labels,
    stage_uploads,
    term_paths,
    tree_label,
    variants_rows,
    visible_nodes,
)
from hiqa.model import Segment
from hiqa.retrieve.fusion import Candidates
from hiqa.retrieve.routes import SearchResult


def seg(sid: str, doc: str = "a.md", path=("A", "Install"), order: int = 1, piece: int = 0,
        level: int = 1, pages=(2,), keywords=("tmp117",), text: str = "body",
        source: str = "corpus/a.pdf") -> Segment:
    return Segment(segment_id=sid, doc_id=doc, doc_title="A", source=source, path=tuple(path),
                   level=level, order=order, piece=piece, pages=tuple(pages), text=text,
                   augmented_text=" > ".join(path) + "\n" + text, is_table=False,
                   strategy="hca", span=(0, 4), keywords=tuple(keywords))


@pytest.mark.parametrize("name, expected", [
    ("report.pdf", "report.pdf"),
    ("../../etc/passwd", "passwd"),
    ("..\\..\\win.ini", "win.ini"),
    (".hidden.md", "hidden.md"),
    ("a\x00b\nc.md", "abc.md"),
    ("<script>.html", "_script_.html"),
    ("..", "upload"),
    ("", "upload"),
    ("Ünïcode name.md", "Ünïcode name.md"),
])
def test_safe_upload_name(name, expected):
    assert safe_upload_name(name) == expected


def test_safe_upload_name_keeps_extension_when_truncating():
    name = safe_upload_name("x" * 500 + ".pdf")
    assert len(name) == 120 and name.endswith(".pdf")


def test_uploads_cannot_leave_the_folder(tmp_path):
    root = tmp_path / "uploads"
    root.mkdir()
    for hostile in ("../../evil.md", "/etc/passwd", "..", "a/../../b.md"):
        assert inside(root, hostile).parent == root.resolve()


def test_failed_upload_restores_the_previous_file(tmp_path):
    root = tmp_path / "up"
    first = stage_uploads(root, [("doc.md", b"v1")])
    settle_uploads(first, [], root)
    staged = stage_uploads(root, [("doc.md", b"broken"), ("new.md", b"bad"), ("ok.md", b"fine")])
    settle_uploads(staged, ["doc.md", "new.md"], root)
    assert (root / "doc.md").read_bytes() == b"v1"  # previous version back
    assert not (root / "new.md").exists()  # a failed new file is removed
    assert (root / "ok.md").read_bytes() == b"fine"
    assert sorted(p.name for p in root.iterdir()) == ["doc.md", "ok.md"]  # no backups left


def test_escape_markdown_neutralises_links_html_and_directives():
    text = "[click](javascript:alert(1)) <img src=x> :red[x] $x$ **b** # h"
    escaped = escape_markdown(text)
    assert re.search(r"(?<!\\)[\[\]()<>:$*#]", escaped) is None  # every special is escaped
    assert escaped.replace("\\", "") == text


def test_render_answer_links_valid_citations_only():
    md = render_answer("Use -l [1][3]. See [2, 9] <b>x</b>", n_blocks=3, turn=4)
    assert "[\\[1\\]](#source-4-1)" in md and "[\\[3\\]](#source-4-3)" in md
    assert "[\\[2\\]](#source-4-2)" in md and "\\[9?\\]" in md
    assert "<b>" not in md


def test_rank_moves_and_labels():
    moves = rank_moves(["a", "b", "c"], ["c", "a", "d"])
    assert moves == [2, -1, None]
    assert [move_label(m) for m in moves] == ["↑2", "↓1", "new"]
    assert moved_count(moves) == 3 and rank_moves(None, ["a"]) == [0]
    assert move_label(0) == "="


def result() -> SearchResult:
    segs = {s.segment_id: s for s in (seg("s1", "a.md"), seg("s2", "b.md", path=("B", "Use")))}
    cands = Candidates(ids=("s1", "s2"), dense=np.array([0.9, 0.5]),
                       dense_content=np.array([np.nan, np.nan]), bm25=np.array([0.0, 3.0]),
                       matches=np.array([1, 0]), query="q")
    return SearchResult(query="q", candidates=cands, segments=segs)


def test_hits_rows_and_score_breakdown_follow_the_fusion():
    r = result()
    dense_only = hits_rows(r.rank("minmax", 1.0, 0.0, 2))
    bm25_only = hits_rows(r.rank("minmax", 0.0, 0.0, 2))
    assert [x["section"] for x in dense_only] == ["Install", "B > Use"]
    assert [x["section"] for x in bm25_only] == ["B > Use", "Install"]
    row = hits_rows(r.rank("minmax", 0.5, 0.2, 2), escape=True)[0]
    assert row["fused"] == pytest.approx(row["dense"] + row["bm25"] + row["keyword"]
                                         + row["heading"] + row["breadth"], abs=1e-3)
    # issue #34, item 8: the document's title, not its file id; the columns in reading order
    assert row["document"] == "A" and row["pages"] == "p. 2"
    assert list(row)[:4] == ["rank", "change", "document", "section"]
    untitled = hits_rows([dataclasses.replace(h, segment=dataclasses.replace(
        h.segment, doc_title="")) for h in r.rank("minmax", 0.5, 0.2, 1)], escape=True)[0]
    assert untitled["document"] == "a\\.md"  # no title: the file id
    parts = score_breakdown(r.rank("minmax", 0.5, 0.2, 2))
    assert {p["route"] for p in parts} == {"dense", "bm25", "keyword", "heading", "breadth"}
    assert len(parts) == 10
    assert sum(p["share"] for p in parts[:5]) == pytest.approx(parts[0]["fused"])


def test_section_tree_filters_and_labels():
    segs = [seg("1", order=1), seg("2", order=1, piece=1, pages=(3,)),
            seg("3", order=2, path=("A", "Install", "Linux"), level=2, keywords=()),
            seg("4", doc="b.md", order=1, path=("B", "Usage"))]
    tree = section_tree(segs)
    assert [(n.path, n.segment_ids) for n in tree["a.md"]] == [
        ((), ()), (("Install",), ("1", "2")), (("Install", "Linux"), ("3",))]
    assert tree["a.md"][1].pages == (2, 3) and tree["a.md"][2].depth == 2
    assert tree_label(tree["a.md"][2], paginated=True) == "Linux · p. 2"
    assert [s.segment_id for s in filter_segments(segs, path_text="linux")] == ["3"]
    assert [s.segment_id for s in filter_segments(segs, keyword="TMP")] == ["1", "2", "4"]
    assert [s.segment_id for s in filter_segments(segs, documents=["b.md"])] == ["4"]
    assert segment_label(segs[2]) == "a.md > Install > Linux (p. 2)"
    assert section_key(segs[0]) == section_key(seg("x", doc="b.md", path=("B", " install ")))
    html = seg("5", path=("A", "Install", "Linux"), source="corpus/a.html")
    assert segment_label(html) == "a.md > Install > Linux"  # no page for an HTML source


def test_section_tree_keeps_heading_only_parents_ancestors_and_folds_terms():
    """'Hash functions' has no text of its own (no segment): its children must sit under it,
    not under the section before; a filter match keeps its ancestors; terms fold."""
    segs = [seg("1", order=1, path=("A", "Intro")),
            seg("2", order=3, path=("A", "Hash functions", "sha256")),
            seg("3", order=4, path=("A", "Hash functions", "md5")),
            seg("4", order=6, path=("A", "Options", "-f")),
            seg("5", order=7, path=("A", "Options", "-n")),
            seg("6", order=5, path=("A", "Options"))]
    tree = section_tree(segs, terms={"a.md": {("options", "-f"), ("options", "-n")}})["a.md"]
    assert [(n.title, n.depth) for n in tree] == [
        ("A", 0), ("Intro", 1), ("Hash functions", 1), ("sha256", 2), ("md5", 2),
        ("Options", 1), ("-f", 2), ("-n", 2)]
    parent = tree[2]
    assert parent.segment_ids == () and parent.matched
    assert [n.kind for n in tree[-2:]] == ["term", "term"] and tree[5].terms == 2
    assert tree_label(tree[5]) == "Options · 2 terms"
    assert "-f" not in [n.title for n in visible_nodes(tree)]
    assert "-f" in [n.title for n in visible_nodes(tree, [("Options",)])]
    filtered = section_tree([segs[2]], segs)["a.md"]
    assert [(n.title, n.matched) for n in filtered] == [
        ("A", False), ("Hash functions", False), ("md5", True)]
    assert term_paths([type("S", (), {"kind": "term", "path": ("A", "Options", "-f")})()],
                      "A") == {("options", "-f")}


def test_short_path_keeps_the_last_heading():
    parts = ["Chapter one about things", "A long section title", "Sub", "The segment's heading"]
    assert short_path(parts, 200) == " > ".join(parts)
    cut = short_path(parts, 45)
    assert cut.startswith("… > ") and cut.endswith("The segment's heading") and len(cut) <= 45



def test_markdown_around_clamps_to_the_document():
    md = "0123456789"
    assert markdown_around(md, (2, 5), context=3) == ("01", "234", "567")
    assert markdown_around(md, (8, 50), context=3) == ("567", "89", "")


def test_evaluation_tables_from_a_report():
    report = {
        "variants": {"full": {"segments": 10, "recall@5": 0.8, "mrr": 0.5, "log_rank": 0.7,
                              "ci": {"recall@5": [0.7, 0.9]}}},
        "degradation": {"full": {"5": {"recall@5": 0.7}, "1": {"recall@5": 0.9}}},
        "fusion_grid": {"methods": {"rrf": {"recall@5": 0.6, "mrr": 0.4}}},
        "diagnostics": {"questions": [{"id": "q", "question": "?", "gold_docs": ["a"],
                                       "best_gold_rank": 3, "wrong_doc": "b",
                                       "wrong_path": ["B", "X"], "wrong_rank": 1,
                                       "outranked_gold": True}]},
    }
    row = variants_rows(report)[0]
    assert row["recall@5"] == "0.800 [0.700, 0.900]" and row["mrr"] == "0.500"
    assert [r["distractors"] for r in degradation_rows(report)] == [1, 5]
    assert fusion_method_rows(report) == [{"method": "rrf", "recall@5": 0.6, "mrr": 0.4}]
    assert diagnostic_rows(report)[0]["wrong section"] == "B > X"


def test_source_labels_tell_pieces_of_one_section_apart():
    segs = [seg("1", piece=0), seg("2", piece=1), seg("3", path=("A", "Usage"))]
    assert source_labels(segs) == ["[1] A > Install (p. 2) · part 1",
                                   "[2] A > Install (p. 2) · part 2", "[3] A > Usage (p. 2)"]
    html = [seg("1", source="a.html"), seg("2", source="a.html", path=("A", "Usage"))]
    assert source_labels(html) == ["[1] A > Install", "[2] A > Usage"]


def _rgb(colour: str) -> tuple[int, ...]:
    return tuple(int(colour[i:i + 2], 16) for i in (1, 3, 5))


def test_label_styles_tell_40_documents_apart_and_highlight_greys_the_rest():
    """Issue #34, item 12: among 40 documents several magenta shades could not be told apart.
    Every document has its own colour and shape, and any two colours used are far apart."""
    names = [f"doc{i}.html" for i in range(40)]
    styles = label_styles(names)
    assert len(set(styles.values())) == 40
    colours = sorted({c for c, _ in styles.values()})
    closest = min(math.dist(_rgb(a), _rgb(b)) for a, b in itertools.combinations(colours, 2))
    assert closest > 60, closest  # the 48-colour palette had pairs 20 apart (#FB00D1, #FE00CE)
    assert all(math.dist(_rgb(c), _rgb(MUTED)) > 60 for c in colours)
    picked = label_styles(names, ["doc3.html"])
    assert picked["doc3.html"] == styles["doc3.html"]
    assert {c for n, (c, _) in picked.items() if n != "doc3.html"} == {MUTED}


def test_robust_range_ignores_an_outlier():
    values = np.concatenate([np.linspace(-1, 1, 200), [80.0]])
    lo, hi = robust_range(values)
    assert -1.2 < lo < -1.0 and 1.0 < hi < 1.2  # the outlier at 80 does not stretch the axis
    lo, hi = robust_range([0.0, 0.1, 0.2, 0.3, 0.7])  # a merely spread point stays on the plot
    assert lo < 0.0 and hi > 0.7
    assert robust_range([]) == (-1.0, 1.0) and robust_range([2.0, 2.0])[0] < 2.0


# ------------------------------------------------------------------ issue #13: shown as text
def test_escape_markdown_defuses_autolinks_without_changing_the_visible_text():
    text = "see https://evil.example/x, www.evil.example or admin@evil.example"
    out = escape_markdown(text)
    assert "https:" not in out and "://" not in out.replace(WORD_JOINER + "\\://", "")
    assert "www." not in out.replace("\\", "") and WORD_JOINER + "@" in out
    unescaped = re.sub(r"\\(.)", r"\1", out).replace(WORD_JOINER, "")
    assert unescaped == text


def test_plot_label_escapes_markup_plotly_would_render():
    label = plot_label('<a href="https://evil.example">Login</a> & <b>x</b>')
    assert "<" not in label and ">" not in label
    assert label.startswith('&lt;a href="https://evil.example"&gt;Login') and "&amp;" in label


def test_allowed_server_path_needs_a_root(tmp_path):
    inner = tmp_path / "docs"
    inner.mkdir()
    (tmp_path / "link").symlink_to("/etc")
    with pytest.raises(PathNotAllowed, match="server paths are turned off"):
        allowed_server_path(str(inner), ())
    assert allowed_server_path(str(inner), (tmp_path,)) == inner.resolve()
    assert allowed_server_path(str(inner), (), extra=(inner,)) == inner.resolve()
    for outside in ("/etc", str(tmp_path / ".." / "x"), str(tmp_path / "link")):
        with pytest.raises(PathNotAllowed, match="outside the folders"):
            allowed_server_path(outside, (tmp_path,))
