"""What every page shares: settings, the cached collection handles, and error display.

Resources are opened once per server process (``st.cache_resource``) and shared by every browser
session: the Qdrant client (``hiqa.store`` keeps one per data dir), each ``Collection`` and,
through it, the embedder.
"""
from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import streamlit as st

from hiqa.collection import Collection, list_collections
from hiqa.errors import HiqaError
from hiqa.settings import Settings

DATA_DIR_KEY = "hiqa_data_dir"
COLLECTION_KEY = "hiqa_collection"
PENDING_KEY = "hiqa_switch_to"
"""A collection to select on the next run (a widget's key cannot change once it is drawn)."""


def settings() -> Settings:
    """Settings from the environment, with the data dir chosen in the sidebar (if any)."""
    base = Settings()
    chosen = st.session_state.get(DATA_DIR_KEY)
    return base.with_data_dir(chosen) if chosen else base


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
        st.error(str(exc))
        return []


def current_collection(required: bool = True) -> Collection | None:
    """The collection picked in the sidebar; with none, explain what to do and stop the page."""
    name = st.session_state.get(COLLECTION_KEY)
    col = None
    if name:
        try:
            col = open_collection(str(settings().data_dir), name)
        except HiqaError as exc:
            st.error(str(exc))
    if col is None and required:
        st.info("No collection is open. Pick one in the sidebar, or create one on the Ingest page.")
        st.page_link("app_pages/ingest.py", label="Go to Ingest", icon=":material/upload_file:")
        st.stop()
    return col


def guarded(action: Callable[[], Any], what: str) -> Any:
    """Run ``action``; a HiqaError or a ValueError becomes an error message, not a traceback."""
    try:
        return action()
    except (HiqaError, ValueError) as exc:
        st.error(f"{what}: {exc}")
    except OSError as exc:
        st.error(f"{what}: {exc.strerror or exc}")
    return None


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
