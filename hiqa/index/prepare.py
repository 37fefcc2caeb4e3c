"""An ingest's first half: what needs only the file (format, segment, the title rule's
keywords, the lexical route's term counts), done a few documents ahead of the second half.

The second half (keywords of the collection, embedding, points, registry) runs in the ingest's
process.  With ``HELPER_FROM`` documents or more, ``Preparer`` runs the first half in a helper
process (``python -m hiqa.index.prepare``), so two cores work where one did (docs/benchmarks.md, Store), and at
the end the helper builds the lexical index from the term counts it kept while the store
builds its vector index.  With fewer documents, or a ``prepare`` hook that does not pickle
(the LLM formatter with an endpoint, which it calls through this process's settings and
cache), it runs in-process, as each document is reached.

The helper writes nothing but that index, after the commit: the ingest's crash rules are the
main process's, and the helper exits when the main process closes its end of the pipe, or
dies; it shares the ingest's lock meanwhile.  A helper that dies itself (the PDF library
crashing on a hostile file) fails the document it was reading; a new helper takes the rest.
"""
from __future__ import annotations

import json
import os
import pickle
import signal
import subprocess
import sys
import threading
import traceback
from collections import deque
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, replace
from itertools import chain
from pathlib import Path
from typing import IO, Any, Self

from hiqa.augment import segment_document
from hiqa.errors import DocumentError, HiqaError
from hiqa.formats import load_document
from hiqa.index.lexical import LexicalIndex
from hiqa.index.payload import version_key
from hiqa.index.terms import TermCounter, Terms, gather_terms, lexical_text
from hiqa.keywords.filing import read_filing
from hiqa.keywords.rules import document_candidates
from hiqa.model import Document, Segment

HELPER_FROM = 8
"""Documents to prepare from which a helper process does it (its start, about 0.3 s of
imports, runs beside the first document's)."""
AHEAD = 4
"""Documents sent to the helper before the main process asks for the first of them."""
TICK_S = 1.0
"""While a document is being prepared (a long PDF: 500 pages take 10-20 s), ``next_ticking``
calls its ``tick`` this often, so a progress line or bar shows life (issue #34: at least every
2 s)."""


@dataclass(frozen=True)
class Job:
    """A document to ingest: its file, id, version (content hash, or content and a corrected
    title) and the title the user set, if any."""

    path: Path
    doc_id: str
    version: str
    title: str | None = None
    file_hash: str = ""


@dataclass(frozen=True)
class Prepared:
    """A document formatted and segmented, with the keywords it might be told apart by
    (``keywords.document_candidates``: the collection keeps those that do), or why it could
    not be (``error``, the message for the ingest summary)."""

    doc: Document | None
    segments: tuple[Segment, ...] = ()
    keyword_candidates: tuple[str, ...] = ()
    error: str = ""


def prepare(job: Job, strategy: str, counter: TermCounter,
            hook: Callable[[Document], Document] | None = None) -> Prepared:
    """Format and segment ``job``'s file; its segments' lexical texts go to ``counter``."""
    try:
        doc = load_document(job.path, doc_id=job.doc_id)
        if hook is not None:
            doc = hook(doc)
        filing = read_filing(doc.markdown)
        if job.title:
            doc = replace(doc, title=job.title, metadata={**doc.metadata, "title_source": "user"})
        elif filing is not None:
            doc = replace(doc, title=filing.title(),
                          metadata={**doc.metadata, "title_source": "cover page"})
        if filing is not None:
            doc = replace(doc, metadata={**doc.metadata, "filing": json.dumps(filing.record())})
        segments = segment_document(doc, strategy, version=job.version[:16])
        if not segments:
            raise DocumentError(str(job.path), "no text segments could be made from this document")
    except HiqaError as exc:
        return Prepared(None, error=exc.reason if isinstance(exc, DocumentError) else str(exc))
    top = next((s.title for s in doc.sections if s.level > 0 and s.kind == "heading"), "")
    if filing is not None:  # the cover's identity; its addresses and exchanges name nothing
        candidates = (*filing.keywords(),
                      *document_candidates(doc.title, Path(job.doc_id).name, "", ""))
    else:
        first_page = "\n".join(s.text for s in segments if s.pages and s.pages[0] <= 1)[:4000]
        candidates = document_candidates(doc.title, Path(job.doc_id).name, first_page, top)
    key = version_key(job.doc_id, job.version)
    counter.add(lexical_text(s, key) for s in segments)
    return Prepared(doc, tuple(segments), candidates)


class Preparer:
    """Prepares ``run``'s jobs in order, in a helper process or in-process (see the module
    docstring); ``terms`` then holds the term counts of what it prepared."""

    def __init__(self, strategy: str, documents: int,
                 hook: Callable[[Document], Document] | None = None,
                 lock: int | None = None) -> None:
        self.strategy = strategy
        self.hook = hook
        self.lock = lock
        self.helper = documents >= HELPER_FROM and _portable(hook)
        self._counter = TermCounter()
        self._proc: subprocess.Popen[bytes] | None = None

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def run(self, jobs: Iterable[Job]) -> Iterator[Prepared]:
        waiting = iter(jobs)
        sent: deque[Job] = deque()
        while self.helper:
            while len(sent) < AHEAD and (job := next(waiting, None)) is not None:
                self._send(("job", job))
                sent.append(job)
            if not sent:
                return
            try:
                got = self._receive()
            except _HelperDied as died:
                self._stop()  # its term counts are lost: the index reads those from the store
                if not died.signalled:  # it exited: it could not run at all, no file's fault
                    self.helper = False
                    break
                sent.popleft()
                for again in sent:
                    self._send(("job", again))
                yield Prepared(None, error=(
                    f"the formatter stopped while reading this file ({died}); the file may be "
                    "corrupt or hostile"))
                continue
            sent.popleft()
            yield got
        for job in chain(sent, waiting):
            yield prepare(job, self.strategy, self._counter, self.hook)

    def start_index(self, wanted: dict[str, int], directory: Path, generation: str) -> bool:
        """Have the helper build and save the lexical index of registry ``generation`` (its
        versions ``wanted``, version key -> segments) from its term counts and those saved in
        ``directory``, while this process goes on (the store's vector index); ``False`` when
        there is no helper to ask.  ``index_saved`` says whether it could."""
        if self._proc is None:
            return False
        self._send(("index", (wanted, str(directory), generation)))
        return True

    def index_saved(self) -> bool:
        """Whether the index ``start_index`` asked for is saved; not when the helper lacked
        some versions' counts (its predecessor died, or the saved counts are gone) or died."""
        try:
            return bool(self._receive())
        except _HelperDied:
            self._stop()
            return False

    def terms(self) -> list[Terms]:
        """The term counts of the documents prepared, in parts (a helper that died took its
        part with it)."""
        parts = [self._counter.terms()]
        if self._proc is not None:
            try:
                self._send(("terms", None))
                parts.append(self._receive())
            except _HelperDied:
                pass
            self._stop()
        self._counter = TermCounter()
        return parts

    def close(self) -> None:
        self._stop()

    # ------------------------------------------------------------------ the helper process
    def _send(self, message: tuple[str, Any]) -> None:
        if self._proc is None:
            self._proc = _start(self.strategy, self.lock)
            if self.hook is not None:
                self._send(("hook", self.hook))
        try:
            pickle.dump(message, self._proc.stdin, protocol=pickle.HIGHEST_PROTOCOL)  # type: ignore[arg-type]
            self._proc.stdin.flush()  # type: ignore[union-attr]
        except OSError:
            pass  # it died; reading its answer says how

    def _receive(self) -> Any:
        proc = self._proc
        assert proc is not None
        try:
            kind, value = pickle.load(proc.stdout)  # type: ignore[arg-type]
        except (EOFError, OSError, pickle.UnpicklingError) as exc:
            raise _HelperDied(proc) from exc
        if kind == "bug":  # an exception the first half did not expect: as if in-process
            raise RuntimeError(f"preparing a document failed in the helper process:\n{value}")
        return value

    def _stop(self) -> None:
        proc, self._proc = self._proc, None
        if proc is None:
            return
        for pipe in (proc.stdin, proc.stdout):
            try:
                pipe.close()  # type: ignore[union-attr]
            except OSError:
                pass
        try:
            proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()


def next_ticking(prepared: Iterator[Prepared], tick: Callable[[], None],
                 every: float = TICK_S) -> Prepared:
    """``next(prepared)``, run in a helper thread while this one calls ``tick()`` every
    ``every`` seconds until it is ready (the caller's thread draws the progress: Streamlit
    draws from the script's thread only).  What ``next`` raises is raised here."""
    box: list[Any] = []
    done = threading.Event()

    def advance() -> None:
        try:
            box.append(("ok", next(prepared)))
        except BaseException as exc:  # noqa: BLE001 - handed to the caller's thread
            box.append(("raise", exc))
        done.set()

    threading.Thread(target=advance, name="hiqa-prepare", daemon=True).start()
    while not done.wait(every):
        tick()
    kind, value = box[0]
    if kind == "raise":
        raise value
    return value  # type: ignore[no-any-return]


def _portable(hook: Callable[[Document], Document] | None) -> bool:
    """Whether the helper can run ``hook``: none, or one that pickles (a function of the
    document alone, e.g. ``llm_ingest.format_step`` without an endpoint)."""
    try:
        pickle.dumps(hook)
    except (pickle.PicklingError, AttributeError, TypeError):
        return False
    return True


class _HelperDied(Exception):
    """The helper's pipe closed before its answer: says how it ended."""

    def __init__(self, proc: subprocess.Popen[bytes]):
        try:
            code: int | None = proc.wait(timeout=5)
        except subprocess.TimeoutExpired:
            proc.kill()
            code = None
        self.signalled = code is None or code < 0
        if code is None:
            how = "it stopped answering"
        elif code >= 0:
            how = f"exit status {code}"
        else:
            try:
                how = f"killed by {signal.Signals(-code).name}"
            except ValueError:
                how = f"killed by signal {-code}"
        super().__init__(how)


def _command(strategy: str) -> list[str]:
    return [sys.executable, "-m", "hiqa.index.prepare", strategy]


def _start(strategy: str, lock: int | None = None) -> subprocess.Popen[bytes]:
    """The helper, given the descriptor of the ingest's lock (``index.lock.ingest_lock``) when
    there is one: it shares the lock, so a helper still saving the lexical index after the
    ingest's process was killed keeps the next ingest out until it is done."""
    here = str(Path(__file__).resolve().parents[2])  # the folder holding this hiqa package
    path = os.environ.get("PYTHONPATH")
    env = {**os.environ, "PYTHONPATH": here + (os.pathsep + path if path else "")}
    return subprocess.Popen(_command(strategy), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                            env=env, pass_fds=() if lock is None else (lock,))


def _save_index(counter: TermCounter, wanted: dict[str, int], directory: str,
                generation: str) -> bool:
    parts, missing = gather_terms(wanted, Path(directory), [counter.terms()])
    if missing:
        return False
    corpus = Terms.join(parts)
    LexicalIndex.from_terms(corpus).save(Path(directory), generation, corpus)
    return True


def _serve(strategy: str, requests: IO[bytes], answers: IO[bytes]) -> None:
    counter = TermCounter()
    hook = None
    while True:
        try:
            kind, value = pickle.load(requests)
        except EOFError:
            return
        if kind == "hook":  # no answer
            hook = value
            continue
        try:
            if kind == "job":
                answer: tuple[str, Any] = ("ok", prepare(value, strategy, counter, hook))
            elif kind == "index":
                answer = ("ok", _save_index(counter, *value))
            else:
                answer = ("ok", counter.terms())
        except Exception:  # noqa: BLE001 - the ingest's process raises it, as in-process
            answer = ("bug", traceback.format_exc())
        pickle.dump(answer, answers, protocol=pickle.HIGHEST_PROTOCOL)
        answers.flush()


def main() -> None:
    # the protocol gets its own copy of stdout; anything printed (a C library's warning) goes to
    # stderr instead of into the pickles
    answers = os.fdopen(os.dup(sys.stdout.fileno()), "wb")
    os.dup2(sys.stderr.fileno(), sys.stdout.fileno())
    try:
        _serve(sys.argv[1], sys.stdin.buffer, answers)
    except (BrokenPipeError, KeyboardInterrupt):
        pass  # the ingest ended or was stopped


if __name__ == "__main__":  # run as a script: pickle the classes of ``hiqa.index.prepare``
    from hiqa.index.prepare import main as serve

    serve()
