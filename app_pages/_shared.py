"""What every page shares: settings, the cached collection handles, and error display.

Resources are opened once per server process (``st.cache_resource``) and shared by every browser
session: the Qdrant client (``hiqa.index.store`` keeps one per data dir), each ``Collection`` and,
through it, the embedder.
"""
from __future__ import annotations

import hmac
import math
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import streamlit as st

from app_pages.ui_helpers import PathNotAllowed, allowed_server_path, escape_markdown
from hiqa.collection import Collection, list_collections
from hiqa.errors import HiqaError
from hiqa.index.background import dense_worker, start_dense_worker
from hiqa.model import Segment
from hiqa.settings import Settings, data_dir_problem

DATA_DIR_KEY = "hiqa_data_dir"
COLLECTION_KEY = "hiqa_collection"
AUTH_KEY = "hiqa_signed_in"
FAILURES_KEY = "hiqa_login_failures"
LOCKED_KEY = "hiqa_login_locked_until"
MAX_LOGIN_DELAY_S = 60
PENDING_KEY = "hiqa_switch_to"
"""A collection to select on the next run (a widget's key cannot change once it is drawn)."""


def settings() -> Settings:
    """Settings from the environment, with the data dir chosen in the sidebar (if any).

    A chosen folder counts only inside ``HIQA_ALLOWED_DIRS`` (see ``server_path``), resolved,
    and only when it is empty or a HiQA data dir (``data_dir_problem``).
    """
    base = Settings()
    chosen = st.session_state.get(DATA_DIR_KEY)
    if not chosen or Path(chosen).expanduser().resolve() == base.data_dir.resolve():
        return base
    try:
        path = allowed_server_path(chosen, base.allowed_dirs)
    except PathNotAllowed:
        return base
    return base if data_dir_problem(path) else base.with_data_dir(path)


def server_path(raw: str, what: str, *, extra: tuple[Path, ...] = ()) -> Path | None:
    """``raw`` when server paths are allowed there (``HIQA_ALLOWED_DIRS``), else an error shown
    in the page and None."""
    try:
        return allowed_server_path(raw, Settings().allowed_dirs, extra=extra)
    except PathNotAllowed as exc:
        st.error(f"{what}: {escape_markdown(str(exc))}")
        return None


def server_paths_allowed() -> bool:
    return bool(Settings().allowed_dirs)


def _oidc_configured() -> bool:
    try:
        return "auth" in st.secrets
    except Exception:  # noqa: BLE001 - no or unreadable secrets.toml: no OIDC login configured
        return False


def require_login() -> None:
    """Ask for ``HIQA_APP_PASSWORD`` once per browser session; stop the page until it is given.

    Without the variable the app is open, as before (it binds 127.0.0.1 by default).  Where
    Streamlit's OIDC login is configured (an ``[auth]`` table in ``.streamlit/secrets.toml``),
    that login is required instead.
    """
    if _oidc_configured():  # Streamlit's own login ([auth] in .streamlit/secrets.toml)
        if not st.user.get("is_logged_in"):  # missing (e.g. under AppTest): not logged in
            st.title("HiQA")
            st.button("Log in", type="primary", on_click=st.login)
            st.stop()
        return
    password = Settings().app_password
    if not password or st.session_state.get(AUTH_KEY):
        return
    st.title("HiQA")
    with st.form("login"):
        given = st.text_input("Password", type="password",
                              help="This HiQA server is shared; ask its owner for the password")
        submitted = st.form_submit_button("Sign in", type="primary")
    if submitted:
        wait = st.session_state.get(LOCKED_KEY, 0.0) - time.monotonic()
        if wait > 0:  # not even compared: guessing stays as slow as the delay says
            st.error(f"Too many wrong passwords; try again in {math.ceil(wait)} s.")
            st.stop()
        if hmac.compare_digest(given.encode(), password.encode()):
            st.session_state[AUTH_KEY] = True
            st.session_state.pop(FAILURES_KEY, None)
            st.rerun()
        failures = st.session_state.get(FAILURES_KEY, 0) + 1
        delay = login_delay(failures)
        st.session_state[FAILURES_KEY] = failures
        st.session_state[LOCKED_KEY] = time.monotonic() + delay
        st.error(f"Wrong password. Try again in {delay:g} s.")
    st.stop()


def login_delay(failures: int) -> float:
    """Seconds before the next attempt after ``failures`` wrong passwords in a session: 1, 2, 4,
    ... up to a minute, so a script guessing through one session makes at most ~60 guesses an
    hour once it is past the first few."""
    return float(min(2 ** (failures - 1), MAX_LOGIN_DELAY_S))


@st.cache_resource(show_spinner=False)
def open_collection(data_dir: str, name: str) -> Collection:
    return Collection(name, Settings().with_data_dir(data_dir))


@st.cache_resource(show_spinner=False)
def warm_embedder(data_dir: str, name: str) -> Any:
    """Load the collection's embedder once per process (the first question pays for it)."""
    return open_collection(data_dir, name).embedder


@st.cache_resource(show_spinner=False)
def process_lock(name: str) -> threading.Lock:
    """A lock shared by all sessions of this server (e.g. one demo build at a time)."""
    return threading.Lock()


def forget_collections() -> None:
    """Drop cached handles after a collection was created or deleted."""
    open_collection.clear()
    warm_embedder.clear()


def collection_names() -> list[str]:
    try:
        return list_collections(settings())
    except HiqaError as exc:
        st.error(escape_markdown(str(exc)))
        return []


def current_collection(required: bool = True) -> Collection | None:
    """The collection picked in the sidebar; with none, explain what to do and stop the page.

    A collection with dense vectors pending (ingested with ``--dense later``, or left so by a
    stopped server) gets its background worker started here, whichever page is opened.
    """
    name = st.session_state.get(COLLECTION_KEY)
    col = None
    if name:
        try:
            col = open_collection(str(settings().data_dir), name)
            start_dense_worker(col.parts)
        except HiqaError as exc:
            st.error(escape_markdown(str(exc)))
    if col is None and required:
        st.info("No collection is open. Pick one in the sidebar, or create one on the Ingest page.")
        st.page_link("app_pages/ingest.py", label="Go to Ingest", icon=":material/upload_file:")
        st.stop()
    return col


def dense_status(col: Collection) -> None:
    """While dense vectors are being filled in: how far, refreshed every 2 s.  Read from this
    process's worker (``current_collection`` starts it), never from the store: a poll of the
    store every 2 s would keep it open, and a CLI command beside the app waiting for it."""
    worker = dense_worker(col.parts)
    if worker is not None and worker.error:
        st.error(f"Filling in the dense vectors failed: {escape_markdown(worker.error)}")
    if worker is not None and worker.running:
        _dense_progress(col)


@st.fragment(run_every=2)
def _dense_progress(col: Collection) -> None:
    """The worker's progress (a fragment, so the rest of the page is not rerun)."""
    worker = dense_worker(col.parts)
    if worker is None or worker.total <= worker.done:
        return
    total = len(col)
    done = total - (worker.total - worker.done)
    rate = worker.rate() if worker.running else 0.0
    eta = f" · about {(worker.total - worker.done) / rate / 60:.0f} min left" if rate > 0 else ""
    st.progress(max(0.0, done / total) if total else 1.0,
                text=f"Dense route: {done:,} of {total:,} segments embedded{eta}. Until then, "
                     "those segments are ranked by BM25 and keywords alone.")


def guarded(action: Callable[[], Any], what: str) -> Any:
    """Run ``action``; a HiqaError or a ValueError becomes an error message, not a traceback."""
    try:
        return action()
    except (HiqaError, ValueError) as exc:
        st.error(f"{what}: {escape_markdown(str(exc))}")
    except OSError as exc:
        st.error(f"{what}: {escape_markdown(str(exc.strerror or exc))}")
    return None


def show_figure(col: Collection, seg: Segment) -> None:
    """A figure segment's picture; its caption is the segment's text, shown beside it."""
    path = col.image_path(seg)
    if path is None:
        st.caption("The figure's picture is not available; re-ingest the document to render it.")
        return
    st.image(str(path))


@st.cache_data(show_spinner=False, max_entries=64)
def pdf_page_png(source: str, page: int, passage: str) -> bytes | None:
    """Page ``page`` (1-based) of the PDF ``source`` as a PNG, with ``passage`` highlighted
    where its words are found on the page (runs of five words, so a line break or a hyphen
    costs one run, not the passage); None when the file cannot be read any more."""
    import pymupdf

    words = passage.replace("*", " ").replace("#", " ").replace("|", " ").split()[:80]
    runs = [" ".join(words[i:i + 5]) for i in range(0, max(len(words) - 4, 1), 5)]
    try:
        with pymupdf.open(source) as doc:
            sheet = doc[page - 1]
            rects = [r for run in runs if run for r in sheet.search_for(run)]
            if rects:
                sheet.add_highlight_annot(rects)  # in memory only: the file is not written
            return bytes(sheet.get_pixmap(dpi=100, annots=True).tobytes("png"))
    except Exception:  # noqa: BLE001 - a file moved or damaged since ingest: no picture
        return None


MAX_CITED_PAGES = 3
"""Pages of one cited passage drawn side by side (a segment spans two at most, but a table)."""


def show_in_context(seg: Segment, label: str, key: str) -> None:
    """Where a cited passage sits: its PDF page, the passage highlighted; for every format a
    button that opens the segment in the Segments view."""
    if seg.source.casefold().endswith(".pdf") and seg.pages:
        # every page the passage covers (a statement's rows run on to the next page), each with
        # its part of the passage highlighted, side by side
        pages = seg.pages[:MAX_CITED_PAGES]
        shown = [(p, png) for p in pages
                 if (png := pdf_page_png(seg.source, p, seg.text)) is not None]
        for column, (page, png) in zip(st.columns(len(shown)) if len(shown) > 1 else [st],
                                       shown, strict=False):
            where = f" · page {page}" if len(seg.pages) > 1 else ""
            column.image(png, caption=f"{label}{where}: the cited passage highlighted")
        if len(seg.pages) > len(pages):
            st.caption(f"The passage runs on to page {seg.pages[-1]}; the first "
                       f"{len(pages)} of its pages are shown.")
    if st.button("Open in Segments", key=f"open_{key}", icon=":material/account_tree:"):
        st.session_state["segment"] = st.session_state["clicked"] = seg.segment_id
        st.switch_page("app_pages/segments.py", query_params={
            "collection": st.session_state.get(COLLECTION_KEY) or "",
            "document": seg.doc_id, "segment": seg.segment_id})


def persistent(key: str, default: Any) -> str:
    """Widget key for a value that must survive page switches.

    Streamlit forgets the state of widgets that a run does not draw; the value is kept under
    ``key`` and copied into the widget key ``_w_<key>`` before the widget is drawn.
    """
    widget_key = f"_w_{key}"
    if key not in st.session_state:
        st.session_state[key] = default
    st.session_state[widget_key] = st.session_state[key]
    return widget_key


def keep(key: str) -> None:
    """on_change callback for :func:`persistent` widgets."""
    st.session_state[key] = st.session_state[f"_w_{key}"]
