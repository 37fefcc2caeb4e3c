"""Document identity relative to the collection (issue #29), on a real collection: release
notes cut from one template, told apart only by the version in their titles."""
from __future__ import annotations

import json

from hiqa.cli.main import main
from hiqa.collection import Collection
from hiqa.index import store

MODULES = ("contextlib", "os", "shutil")


def release(version: str) -> str:
    parts = [f"# What's New In Acme {version}\n", "## Summary\n",
             f"This article explains the new features in Acme {version}.\n",
             "## Improved Modules\n"]
    for m in MODULES:
        body = f"The {m} module gained a helper for temporary state and better error messages."
        parts += [f"### {m}\n", body + "\n"]
    return "\n".join(parts)


def build(settings, tmp_path, versions=("3.3", "3.4", "13.4")):
    folder = tmp_path / "notes"
    folder.mkdir()
    for v in versions:
        (folder / f"whatsnew-{v}.md").write_text(release(v), encoding="utf-8")
    col = Collection("notes", settings, create=True)
    col.ingest([folder])
    return col, folder


def test_releases_get_their_version_as_keyword_and_the_reason(settings, tmp_path, capsys):
    col, _ = build(settings, tmp_path)
    rows = {r["keyword"]: r for r in col.keywords("whatsnew-3.4.md").rows(len(col.documents))}
    assert {"3.4", "Acme 3.4"} <= set(rows)
    assert rows["3.4"]["why"] == "in this document only, among 3"
    assert "Acme" not in rows  # every title has it
    store.close_all()
    assert main(["--data-dir", str(settings.data_dir), "docs", "-c", "notes", "--json"]) == 0
    docs = {d["id"]: d for d in json.loads(capsys.readouterr().out)}
    assert {"keyword": "3.4", "sources": ["rule"], "why": "in this document only, among 3"} \
        in docs["whatsnew-3.4.md"]["keywords"]

    # removing a document recomputes the others' reasons (a payload update, no re-embedding)
    col = Collection("notes", settings)
    col.remove_document("whatsnew-3.3.md")
    rows = {r["keyword"]: r for r in col.keywords("whatsnew-3.4.md").rows(len(col.documents))}
    assert rows["3.4"]["why"] == "in this document only, among 2"
    head = next(s for s in col.segments("whatsnew-3.4.md"))
    assert "3.4" in head.keywords


def test_a_question_naming_the_release_gets_that_release_and_near_misses_name_none(
        settings, tmp_path):
    col, _ = build(settings, tmp_path)
    for version in ("3.3", "3.4", "13.4"):
        for question in (f"What changed in os in Acme {version}?",
                         f"What is new for os in the {version} release?"):
            result, hits = col.search_result(question, k=3)
            assert result.named_document == f"whatsnew-{version}.md", question
            assert hits[0].segment.doc_id == f"whatsnew-{version}.md", question
            assert hits[0].segment.path[-1] == "os", question
    for near_miss in ("What changed in os in 3.40?", "What changed in os in 23.4?",
                      "What changed in os in 3.4.1?", "What changed in os in 34?"):
        result, _ = col.search_result(near_miss, k=3)
        assert result.named == {}, near_miss


def test_one_document_has_nothing_to_tell_apart(settings, tmp_path):
    col, _ = build(settings, tmp_path, versions=("3.3",))
    assert col.keywords("whatsnew-3.3.md").rows(len(col.documents)) == []
