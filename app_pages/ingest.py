"""Ingest: add documents (upload or folder), watch each stage, manage collections and lexicons."""
from __future__ import annotations

import tempfile
import time
from pathlib import Path

import streamlit as st

from app_pages._shared import (
    COLLECTION_KEY,
    PENDING_KEY,
    collection_names,
    current_collection,
    dense_status,
    forget_collections,
    guarded,
    open_collection,
    server_path,
    server_paths_allowed,
    settings,
)
from app_pages.ui_helpers import (
    escape_markdown,
    ingest_rows,
    ingest_summary,
    safe_upload_name,
    settle_uploads,
    stage_uploads,
)
from hiqa.augment import Strategy
from hiqa.collection import Collection, check_name
from hiqa.embed.factory import EmbedderName
from hiqa.errors import HiqaError
from hiqa.formats import SUPPORTED_EXTENSIONS
from hiqa.index.background import start_dense_worker
from hiqa.index.ingest import expected_segments, file_sizes
from hiqa.index.llm_ingest import add_llm_keywords, cached_llm, format_step
from hiqa.index.progress import IngestProgress
from hiqa.keywords.records import KeywordSources

INTO = {"existing": ":material/folder_open: An existing collection",
        "new": ":material/add_circle: A new collection"}
# Bumped after a successful ingest: the form is drawn with fresh keys, so it comes back empty
# (clear_on_submit would also empty it after a failure, losing what the user typed).
FORM_KEY = "ingest_form_generation"
DENSE = {"later": "In the background (searchable at once)", "now": "Before finishing"}

st.title("Ingest")
s = settings()
names = collection_names()
current = st.session_state.get(COLLECTION_KEY)


class StageProgress:
    """One bar for the whole ingest, a status line per document.

    The bar's share and ETA come from ``hiqa.index.progress.IngestProgress``: embedding, the slow
    stage, gets most of the width, and the bar moves after every batch of it.
    """

    def __init__(self, dense: str, existing_segments: int, sizes: dict[str, int],
                 expected: dict[str, float] | None = None):
        self.model = IngestProgress(dense, existing_segments, sizes, expected)
        self.stages = self.model.stages
        self.bar = st.progress(0.0, text="Starting…")
        self.table = st.empty()
        self.state: dict[str, dict[str, str]] = {}
        self.last = 0.0

    def __call__(self, stage: str, doc_id: str, done: int, total: int) -> None:
        now = time.monotonic()
        snap = self.model.update(stage, doc_id, done, total, now)
        if doc_id and stage in self.stages:
            row = self.state.setdefault(doc_id, dict.fromkeys(self.stages, ""))
            row[stage] = "✓" if total and done >= total else f"{done}/{total}"
        final = total and done >= total
        if now - self.last < 0.15 and not final:
            return
        self.last = now
        self.bar.progress(snap.fraction, text=escape_markdown(snap.text()))
        if self.state:
            self.table.dataframe([{"document": d, **r} for d, r in self.state.items()],
                                 hide_index=True)


def run_ingest(col: Collection, paths: list[Path], root: Path, llm_format: str = "auto",
               llm_keywords: bool = False, dense: str = "later",
               replace_others: bool = False) -> list | None:
    progress = StageProgress(dense, len(col), file_sizes(paths, root),
                             expected_segments(paths, root))
    notes: list[str] = []
    try:
        llm = cached_llm(s) if llm_format != "never" or llm_keywords else None
        if llm is None and (llm_format == "always" or llm_keywords):
            raise HiqaError("the LLM formatter 'always' and LLM keywords need an endpoint: set "
                            "HIQA_LLM_BASE_URL and HIQA_LLM_MODEL")
        prepare = format_step(llm_format, llm, report=notes.append)
        results = col.ingest(paths, root=root, progress=progress, prepare=prepare, dense=dense,
                             replace_others=replace_others)
        if llm_keywords and llm is not None:
            done = [r.doc_id for r in results if r.status not in ("failed", "skipped")]
            with st.spinner("Asking the LLM for document keywords…"):
                add_llm_keywords(col, done, llm)
    except HiqaError as exc:
        progress.bar.empty()
        st.error(f"Ingest failed: {escape_markdown(str(exc))}")
        return None
    progress.bar.progress(1.0, text="Done")
    start_dense_worker(col.parts)
    for note in notes:
        st.caption("LLM formatter: " + escape_markdown(note))
    return results


def switch_to(name: str, message: str) -> None:
    """Select ``name`` in the sidebar (applied by app.py before it draws the picker)."""
    forget_collections()
    st.session_state[PENDING_KEY] = name
    st.session_state["ingest_message"] = message
    st.rerun()


def show_results(results: list, into: str) -> None:
    level, message = ingest_summary(results)
    (st.warning if level == "warning" else st.success)(
        f"Ingest into {escape_markdown(into)}: {message}")
    st.dataframe(ingest_rows(results), hide_index=True)


# ------------------------------------------------------------------ add documents
st.subheader("Add documents")
generation = st.session_state.setdefault(FORM_KEY, 0)
# Where the documents go is chosen outside the form, so the button can name it: an existing
# collection is the one chosen in the sidebar (the form once kept its own pick, and a file
# went silently into a collection the sidebar no longer showed)
into = st.radio("Into", list(INTO), format_func=INTO.get, horizontal=True,
                index=0 if names else 1, key=f"into-{generation}")
if into == "existing" and names:
    target = current if current in names else names[0]
    new_name = ""
    st.caption(f"Into **{escape_markdown(target)}**, the collection chosen in the sidebar; "
               "choose another there.")
else:
    new_name = st.text_input("New collection name", placeholder="manuals-2024",
                             key=f"name-{generation}")
    target = new_name.strip()
with st.form(f"ingest-{generation}"):
    left, right = st.columns(2)
    strategy = left.selectbox("Chunking strategy", [x.value for x in Strategy],
                              index=[x.value for x in Strategy].index("hca"),
                              help="Fixed for a collection once created")
    embedder = right.selectbox("Embedder", [e.value for e in EmbedderName],
                               index=[e.value for e in EmbedderName].index(s.embedder)
                               if s.embedder in [e.value for e in EmbedderName] else 0,
                               help="Fixed for a collection once created")
    llm_left, llm_right = st.columns(2)
    llm_format = llm_left.selectbox(
        "LLM formatter", ["auto", "always", "never"],
        help="Repair the heading structure with the LLM endpoint: auto = only documents whose "
             "structure looks wrong, and only when HIQA_LLM_BASE_URL is set")
    llm_keywords = llm_right.checkbox(
        "LLM keywords", help="Also ask the LLM endpoint for each document's identifiers and "
                             "aliases (keyword bonus, source 'llm')")
    dense = st.radio("Dense vectors", list(DENSE), format_func=DENSE.get, horizontal=True,
                     help="Embedding is the slow stage (about 10 segments a second on 2 cores). "
                          "In the background, documents answer at once through BM25 and "
                          "keywords, and the dense route catches up while you work.",
                     key=f"dense-{generation}")
    uploads = st.file_uploader("Upload files", accept_multiple_files=True,
                               type=sorted(e.lstrip(".") for e in SUPPORTED_EXTENSIONS),
                               key=f"uploads-{generation}")
    folder = st.text_input("…or a folder on the server", placeholder="/path/to/documents",
                           disabled=not server_paths_allowed(),
                           help="Every supported file under it, recursively; only inside "
                                "HIQA_ALLOWED_DIRS (unset: uploads only)",
                           key=f"folder-{generation}")
    replace_same = st.checkbox(
        "Replace documents of the same name", key=f"replace-{generation}",
        help="An uploaded file named like a document already in the collection, or a file whose "
             "id belongs to another file's document, replaces it only when this is ticked")
    # keyed: a label that names the target must not make a new button of it (a name typed
    # just before the click changes the label in the very run the click arrives in)
    submitted = st.form_submit_button(f"Ingest into {target}" if target else "Ingest",
                                      type="primary", key=f"ingest-submit-{generation}")

if submitted:
    created = False
    col = None
    kept = ""
    if into == "new" or not names:
        try:
            name = check_name(new_name.strip())
            if name in names:
                raise HiqaError(f"collection {name!r} already exists; pick it in the list")
            col = Collection(name, s, create=True, strategy=strategy, embedder=embedder)
            created = True
        except (HiqaError, ValueError) as exc:
            st.error(f"Cannot create the collection: {escape_markdown(str(exc))}")
    else:
        col = guarded(lambda: open_collection(str(s.data_dir), target), "Cannot open the collection")
        if col is not None and (col.strategy != strategy or col.meta["embedder"] != embedder):
            kept = (f"{target} uses strategy {col.strategy} and embedder {col.meta['embedder']}; "
                    "those were kept.")
            st.info(kept)
    if col is not None and not uploads and not folder.strip():
        if created:
            switch_to(col.name, f"Created the empty collection {col.name}; add documents to it.")
        else:
            st.warning("Choose files to upload or give a folder.")
    elif col is not None:
        results = None
        if uploads and not replace_same:  # ask before an upload replaces a document
            clash = [f.name for f in uploads if safe_upload_name(f.name) in col.documents]
            if clash:
                st.warning("Already in the collection, so not ingested: "
                           + escape_markdown(", ".join(clash)) + ". Tick *Replace documents of "
                           "the same name* and ingest again to replace them.")
            uploads = [f for f in uploads if f.name not in clash]
        if uploads:
            root = s.data_dir / "uploads" / col.name
            staged = guarded(lambda: stage_uploads(root, [(f.name, f.getvalue()) for f in uploads]),
                             "Saving the uploads failed")
            if staged is not None:
                results = run_ingest(col, [x.path for x in staged], root, llm_format, llm_keywords,
                                     dense, replace_same)
                failed = [r.doc_id for r in results or [] if r.status in ("failed", "skipped")]
                settle_uploads(staged, failed if results is not None
                               else [x.path.name for x in staged], root)
                renamed = [f.name for f in uploads if safe_upload_name(f.name) != f.name]
                if renamed:
                    st.caption("Renamed for safety: " + escape_markdown(", ".join(renamed)))
        path = server_path(folder, "Folder") if folder.strip() else None
        if path is not None:
            if not path.is_dir():
                st.error(f"Folder not found: {escape_markdown(str(path))}")
            else:
                more = run_ingest(col, [path], path, llm_format, llm_keywords, dense, replace_same)
                results = (results or []) + (more or [])
        if results is not None:
            st.session_state["ingest_results"] = (results, col.name)
        if created and not col.documents:
            col.delete()  # a new collection whose every document failed is not left behind
            st.error("No document could be indexed, so the new collection was not created.")
        elif results is not None:
            # success: empty the form and show (in the sidebar and below) the collection that
            # was just ingested into, which need not be the one the sidebar had selected
            st.session_state[FORM_KEY] = generation + 1
            switch_to(col.name, f"Created collection {col.name}." if created else kept)

if st.session_state.get("ingest_message"):
    st.success(escape_markdown(st.session_state.pop("ingest_message")))
if st.session_state.get("ingest_results"):
    show_results(*st.session_state["ingest_results"])

# ------------------------------------------------------------------ manage
st.subheader("Manage collections")
col = current_collection(required=False)
if col is None:
    st.caption("No collection selected.")
else:
    docs = col.documents
    st.markdown(f"**{escape_markdown(col.name)}**: strategy `{col.strategy}`, embedder "
                f"`{col.meta['embedder']}` ({escape_markdown(str(col.meta.get('model_id', '')))})"
                f", {len(docs)} documents, {len(col)} segments")
    dense_status(col)
    older = col.older_format()
    if older:
        st.info(f"{len(older)} of {len(docs)} documents were segmented by an older HiQA: their "
                "segments lack the document's lead (its first sentence), which helps questions "
                "that name no document find them. Re-reading embeds them again.",
                icon=":material/update:")
        if st.button(f"Re-read {len(older)} documents", key="reread_older"):
            sources = {d: Path(docs[d].get("source", "")) for d in older}
            sizes = {d: p.stat().st_size for d, p in sources.items() if p.is_file()}
            progress = StageProgress("now", len(col), sizes)
            results = guarded(lambda: col.reread_older(progress=progress), "Re-reading failed")
            if results is not None:
                progress.bar.progress(1.0, text="Done")
                st.session_state["ingest_results"] = (results, col.name)
                st.session_state["ingest_message"] = f"Re-read {len(older)} documents."
                st.rerun()
    st.dataframe([{"document": d, "title": m.get("title", ""), "pages": m.get("pages", 0),
                   "sections": m.get("sections", 0),
                   "structure": (m.get("structure") or {}).get("summary", ""),
                   "segments": m.get("segments", 0),
                   "dense pending": m.get("dense_pending", 0),
                   "warnings": "; ".join(m.get("warnings", []))} for d, m in sorted(docs.items())],
                 hide_index=True)
    tab_remove, tab_lexicon, tab_delete = st.tabs(["Remove a document", "Expert lexicon",
                                                   "Delete collection"])
    with tab_remove, st.form("remove_doc"):
        doc = st.selectbox("Document", sorted(docs), index=None, placeholder="Choose…")
        if st.form_submit_button("Remove document") and doc and guarded(
                lambda: col.remove_document(doc) or True, "Removing failed"):
            st.session_state["ingest_message"] = f"Removed {doc}."  # escaped when shown
            st.rerun()
    with tab_lexicon:
        st.caption("CSV with columns `doc,keyword`: expert keywords per document (paper §3.3). "
                   "They take effect at once, without re-embedding.")
        with st.form("lexicon"):
            csv = st.file_uploader("Lexicon CSV", type=["csv"])
            if st.form_submit_button("Install lexicon") and csv is not None:
                with tempfile.TemporaryDirectory() as tmp:
                    path = Path(tmp) / "lexicon.csv"
                    path.write_bytes(csv.getvalue())
                    problems = guarded(lambda: col.set_lexicon(path), "The lexicon was not installed")
                if problems is not None:
                    st.success("Lexicon installed.")
                    for p in problems[:20]:
                        st.warning(escape_markdown(p))
        by_source = {d: KeywordSources.of(m).by_source() for d, m in docs.items()}
        st.dataframe([{"document": d, "source": src, "keywords": ", ".join(kws)}
                      for d, srcs in sorted(by_source.items()) for src, kws in srcs.items() if kws],
                     hide_index=True)
    with tab_delete, st.form("delete_collection"):
        confirm = st.text_input(f"Type {col.name} to confirm")
        if st.form_submit_button("Delete collection", type="primary"):
            if confirm != col.name:
                st.error("The name does not match; nothing was deleted.")
            elif guarded(lambda: col.delete() or True, "Deleting failed"):
                forget_collections()
                st.session_state["ingest_message"] = f"Deleted {col.name}."
                st.rerun()
