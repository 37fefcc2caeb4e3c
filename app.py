"""HiQA analyst app: ``streamlit run app.py``.

The shell: sidebar (data dir, collection picker), first-start demo build, and navigation to the
pages in ``app_pages/`` (not ``pages/``: Streamlit treats a ``pages/`` folder next to the
main script as the old automatic multipage mode, which bypasses this shell). All work happens in
the ``hiqa`` engine.
"""
from __future__ import annotations

import time
from pathlib import Path

import streamlit as st

from app_pages._shared import (
    COLLECTION_KEY,
    DATA_DIR_KEY,
    PENDING_KEY,
    collection_names,
    forget_collections,
    keep,
    persistent,
    process_lock,
    require_login,
    server_path,
    server_paths_allowed,
    settings,
)
from app_pages.ui_helpers import escape_markdown
from hiqa.collection import list_collections
from hiqa.errors import HiqaError
from hiqa.index.progress import IngestProgress
from hiqa.index.store import start_idle_release
from hiqa.settings import data_dir_problem
from hiqa.version import version_line

st.set_page_config(page_title="HiQA", page_icon=":material/account_tree:", layout="wide")
require_login()  # HIQA_APP_PASSWORD: nothing below runs for a visitor without it
# the embedded store admits one process: hand it back when idle, so `hiqa search` works beside
# the app (it waits at most HIQA_STORE_IDLE plus what the app is doing)
start_idle_release(settings().store_idle)


def build_demo_if_empty() -> None:
    """First start: with no collection in the data dir, build the demo (once per process)."""
    s = settings()
    if list_collections(s):
        return
    try:
        from hiqa.demo import ensure_demo
    except ImportError:
        st.sidebar.info("No collection yet: create one on the Ingest page.")
        return
    lock = process_lock(f"demo::{s.data_dir.resolve()}")
    bar = st.progress(0.0, text="First start: building the demo collection…")
    model = IngestProgress()

    def progress(stage: str, doc_id: str, done: int, total: int) -> None:
        snap = model.update(stage, doc_id, done, total, time.monotonic())
        bar.progress(snap.fraction,
                     text="Building the demo collection: " + escape_markdown(snap.text()))

    with lock:
        if not list_collections(s):
            try:
                ensure_demo(s, progress=progress)
            except HiqaError as exc:
                bar.empty()
                st.error(f"The demo collection could not be built: {exc}")
                return
            forget_collections()
    bar.empty()
    st.session_state[COLLECTION_KEY] = "demo"


def sidebar() -> None:
    with st.sidebar:
        st.markdown("### HiQA")
        st.caption(version_line(settings()), help="package version and the default embedder's "
                   "model id: quote this line in a bug report")
        for page in PAGES:  # each link carries the collection (a new tab opens the same one)
            st.page_link(page, query_params=_collection_query())
        st.divider()
        with st.expander("Data directory", expanded=False):
            if not st.session_state.get(DATA_DIR_KEY):
                st.session_state[DATA_DIR_KEY] = str(settings().data_dir)
            st.text_input("Data directory", key=DATA_DIR_KEY, disabled=not server_paths_allowed(),
                          help="HIQA_DATA_DIR; collections, Markdown and caches live here. "
                               "Another folder can be chosen only inside HIQA_ALLOWED_DIRS.")
            chosen = st.session_state[DATA_DIR_KEY]
            if server_paths_allowed() and Path(chosen).resolve() != settings().data_dir.resolve():
                path = server_path(chosen, "Data directory")
                problem = data_dir_problem(path) if path is not None else None
                if problem:
                    st.error(f"Data directory: {escape_markdown(problem)}")
            if not Path(str(settings().data_dir)).exists():
                st.caption("This folder does not exist yet; it is created on the first ingest.")
        names = collection_names()
        if not names:
            st.caption("No collections in this data directory yet.")
            st.session_state.pop(COLLECTION_KEY, None)
            return
        st.session_state[COLLECTION_KEY] = chosen_collection(names)
        st.selectbox("Collection", names, key=persistent(COLLECTION_KEY, names[0]),
                     on_change=keep, args=(COLLECTION_KEY,))
        # the chosen collection is the app's state, kept in the URL: a reload, a link, a page
        # switch (a page switch drops the query; every run puts it back) open the same one
        st.query_params["collection"] = st.session_state[COLLECTION_KEY]


def chosen_collection(names: list[str]) -> str:
    """The collection this run shows: one just created or picked on the Ingest page, else the
    session's (kept apart from the selector's widget state, which Streamlit drops in a run
    that does not draw it: a page switch from a fragment), else the URL's (a reload or a
    link opens a new session), else the demo or the first."""
    asked = st.query_params.get("collection")
    if asked and asked not in names:
        st.warning(f"The link's collection “{escape_markdown(asked)}” is not in this data "
                   "directory.", icon=":material/link_off:")
    pending = st.session_state.pop(PENDING_KEY, None)
    if pending in names:
        return pending
    current = st.session_state.get(COLLECTION_KEY)
    if current in names:
        return current
    if asked in names:
        return asked
    return "demo" if "demo" in names else names[0]


PAGES = [
    st.Page("app_pages/chat.py", title="Chat", icon=":material/forum:", url_path="chat"),
    st.Page("app_pages/segments.py", title="Segments", icon=":material/account_tree:",
            url_path="segments"),
    st.Page("app_pages/ingest.py", title="Ingest", icon=":material/upload_file:",
            url_path="ingest"),
    st.Page("app_pages/embedding.py", title="Embedding space", icon=":material/scatter_plot:",
            url_path="embedding"),
    st.Page("app_pages/evaluate.py", title="Evaluate & tune", icon=":material/query_stats:",
            url_path="evaluate"),
]


def _collection_query() -> dict[str, str]:
    name = st.session_state.get(COLLECTION_KEY)
    return {"collection": name} if name else {}


def home() -> None:
    """The root URL opens Chat at its own address (``/chat``), with the URL's query."""
    st.switch_page(PAGES[0], query_params=linked)


linked = st.query_params.to_dict()  # as the URL came, before the sidebar writes its choice
build_demo_if_empty()
sidebar()
# Streamlit serves its default page at "/" only, so "/chat" would be "Page not found" if Chat
# were the default.  Every page gets a stable address instead; the default is a redirect, kept
# out of the menu by drawing the menu (in sidebar()) from PAGES.
navigation = st.navigation([st.Page(home, title="HiQA", default=True), *PAGES],
                           position="hidden")
navigation.run()
