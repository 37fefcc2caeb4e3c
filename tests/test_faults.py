"""Fault injection (issue #12): ``kill -9`` at every named point of ingest, re-ingest, embed and
remove (``hiqa.faults``), then check what a user sees.

Each case runs the CLI in a child process with ``HIQA_CRASH_AT=point@n`` and requires it to die
by SIGKILL there: a point the command never reaches fails the case instead of passing it.  This
process then opens the collection and checks, through the public API only:

- the store opens;
- every registered document is among the top hits of a search for a phrase unique to its
  registered version, and ``segments()`` lists exactly the segments of that version;
- no listed segment, search hit or content vector belongs to a document the registry does not
  name, or to a version of it other than the registered one;
- re-running the interrupted operation converges: registry, segments, search results (and
  content vectors) equal those of a crash-free run into a fresh data directory.

A version is recognised by its segment ids: a crash-free ingest of every file version the test
uses says which ids each version owns, so the test needs no knowledge of how ids are made.

The collections use the ``fast-use`` embedder (``hiqa[fast]``, installed by the test command):
the catalogue needs more segments than one write batch, which the default e5 model embeds too
slowly for a test, and every text is embedded once per session through a shared cache.
"""
from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import signal
import subprocess
import sys
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pytest

import hiqa
from hiqa import faults
from hiqa.collection import Collection
from hiqa.errors import CollectionError
from hiqa.index import store
from hiqa.index.repair import repair
from hiqa.settings import Settings

SEED = 12
NAME = "faults"
EMBEDDER = "fast-use"
MANUALS = ("quillbrook", "fernhollow", "ashmoor", "brackenridge", "duskvale")
CATALOGUE_PARTS = 270
"""A few more segments in one document than one write batch (256 points), so that
``ingest:mid-upsert`` and ``embed:mid-write`` are reached."""
TOP = 3
"""A registered document must be among this many hits of the search for its phrase."""
K = 10
CHILD_TIMEOUT_S = 60

_rng = random.Random(SEED)
CHANGED = tuple(sorted(_rng.sample(MANUALS, 2)))
REMOVED = _rng.choice(MANUALS) + ".md"


def manual(name: str, revision: int) -> str:
    return (f"# {name.title()} gauge manual\n\n## Overview\n\n"
            f"The {name} gauge measures pressure in sealed tanks.\n\n## Calibration\n\n"
            f"Calibrate the {name} gauge with procedure {name}-r{revision}.\n")


def manual_query(name: str, revision: int) -> str:
    return f"{name} gauge procedure {name}-r{revision}"


def catalogue() -> str:
    parts = (f"## Part Z{i:03}\n\nPart Z{i:03} fits slot {i * 7} of the zephyr rack.\n"
             for i in range(CATALOGUE_PARTS))
    return "# Zephyr parts catalogue\n\n" + "\n".join(parts)


CATALOGUE_QUERY = "zephyr parts catalogue part Z150"
V1 = {f"{n}.md": manual(n, 1) for n in MANUALS}
V2 = {**V1, **{f"{n}.md": manual(n, 2) for n in CHANGED}}
CORPORA = {
    "big": {**V1, "zephyr.md": catalogue()},
    "v1": V1,
    "v2": V2,
    "v1-removed": {f: t for f, t in V1.items() if f != REMOVED},
}
"""Named file sets; ``big`` first, so that the model a new collection loads embeds the most."""
QUERIES = {
    **{(f"{n}.md", manual(n, r)): manual_query(n, r) for n in MANUALS for r in (1, 2)},
    ("zephyr.md", catalogue()): CATALOGUE_QUERY,
}
"""(document, file text) -> a search phrase unique to that version of that document."""


@dataclass(frozen=True)
class Scenario:
    name: str
    before: str | None
    """Corpus ingested crash-free first (None: an empty data directory)."""
    command: tuple[str, ...]
    """CLI words after ``--data-dir D``; ``{corpus}`` is the folder of that corpus."""
    after: str
    """Corpus whose crash-free ingest the operation must end equal to."""
    content: bool = False
    """Compare content vectors too (the operation computes them)."""
    before_flags: tuple[str, ...] = ()
    """Extra words for the crash-free ingest of ``before``."""
    damage: str = ""
    """Done to the data dir after the setup: ``drop-store`` deletes the store (what a user
    recovers with ``hiqa repair``)."""


FIRST = Scenario("first-ingest", None, ("ingest", "{v1}"), "v1")
BIG = Scenario("big-ingest", None, ("ingest", "{big}"), "big")
REINGEST = Scenario("re-ingest", "v1", ("ingest", "{v2}", "--replace"), "v2")
"""New versions of some manuals from another folder: the same ids from other files, replaced
on purpose (``--replace``; without it the ingest refuses)."""
EMBED = Scenario("embed", "big", ("space",), "big", content=True)
REMOVE = Scenario("remove", "v1", ("remove-doc", REMOVED), "v1-removed")
DENSE = Scenario("dense-later", "big", ("embed",), "big", before_flags=("--dense", "later"))
REPAIR = Scenario("repair", "v1", ("repair",), "v1", damage="drop-store")


@dataclass(frozen=True)
class Case:
    scenario: Scenario
    point: str
    """``HIQA_CRASH_AT``: a name of ``faults.POINTS``, ``@n`` for its n-th pass."""

    @property
    def id(self) -> str:
        return f"{self.scenario.name}:{self.point}"


def _nth(passes: int) -> int:
    return _rng.randint(1, passes)


CASES = [
    Case(FIRST, f"ingest:before-upsert@{_nth(len(MANUALS))}"),
    Case(FIRST, f"ingest:after-markdown@{_nth(len(MANUALS))}"),
    Case(FIRST, "ingest:before-commit"),
    Case(BIG, "ingest:mid-upsert"),
    Case(REINGEST, f"ingest:after-upsert@{_nth(len(CHANGED))}"),
    Case(REINGEST, "ingest:before-commit"),
    Case(REINGEST, "ingest:after-commit"),
    Case(REINGEST, "ingest:mid-delete-old"),
    Case(REINGEST, "ingest:before-derived"),
    Case(REINGEST, "ingest:mid-finalize"),
    Case(EMBED, "embed:before-write"),
    Case(EMBED, "embed:mid-write"),
    Case(DENSE, "embed:before-write@2"),
    Case(DENSE, "embed:mid-write@3"),
    Case(REMOVE, "remove:after-registry"),
    Case(REPAIR, "repair:after-registry"),
    Case(REPAIR, f"repair:mid-reindex@{_nth(len(MANUALS) - 1)}"),
    Case(REPAIR, f"ingest:before-commit@{_nth(len(MANUALS))}"),
]


# --------------------------------------------------------------------------- what a user sees
@dataclass(frozen=True)
class Version:
    """One version of one document, as a crash-free ingest makes it."""

    segment_ids: frozenset[str]
    query: str
    """A search phrase unique to this version."""


@dataclass(frozen=True)
class View:
    documents: dict[str, tuple[str, int]]
    """Registry: doc_id -> (version hash, segment count)."""
    segments: dict[str, frozenset[str]]
    """``segments()`` grouped by document."""
    hits: dict[str, tuple[tuple[str, str], ...]]
    """Query -> (doc_id, segment_id) of its top ``K`` hits."""
    content: dict[str, np.ndarray] | None
    """Segment id -> its content vector, where one is stored (when asked for)."""


def settings_for(data: Path, cache: Path) -> Settings:
    return Settings(data_dir=data, qdrant_url=None, cache_override=cache, embedder=EMBEDDER)


def observe(col: Collection, *, content: bool) -> View:
    segments: dict[str, set[str]] = {}
    for s in col.segments():
        segments.setdefault(s.doc_id, set()).add(s.segment_id)
    hits = {q: tuple((h.segment.doc_id, h.segment.segment_id) for h in col.search(q, k=K))
            for q in sorted(set(QUERIES.values()))}
    vectors = None
    if content:
        segs, matrix = col.vectors("content")
        vectors = {s.segment_id: row for s, row in zip(segs, matrix)}
    return View(
        documents={d: (r["hash"], int(r["segments"])) for d, r in col.documents.items()},
        segments={d: frozenset(ids) for d, ids in segments.items()},
        hits=hits, content=vectors,
    )


def problems(v: View, known: dict[tuple[str, str], Version],
             reference_content: dict[str, np.ndarray]) -> list[str]:
    """What breaks the invariants in ``v``, one line each (empty: consistent)."""
    out = []
    visible: set[str] = set()
    for doc, (version, count) in sorted(v.documents.items()):
        ver = known.get((doc, version))
        if ver is None:
            out.append(f"{doc}: the registry names version {version[:12]}, which no crash-free "
                       "ingest of its file makes")
            continue
        visible |= ver.segment_ids
        missing = ver.segment_ids - v.segments.get(doc, frozenset())
        if missing:
            out.append(f"{doc}: segments() lacks {len(missing)} of the {len(ver.segment_ids)} "
                       "segments of its registered version")
        if count != len(ver.segment_ids):
            out.append(f"{doc}: the registry counts {count} segments, its version has "
                       f"{len(ver.segment_ids)}")
        top = {sid for _, sid in v.hits[ver.query][:TOP]}
        if not top & ver.segment_ids:
            out.append(f"{doc}: its registered version is not in the top {TOP} hits of "
                       f"{ver.query!r}")
    for doc, ids in sorted(v.segments.items()):
        if ids - visible:
            out.append(f"{doc}: segments() shows {len(ids - visible)} segments of "
                       f"{_what_is(doc, v)}")
    stray = Counter(doc for hits in v.hits.values() for doc, sid in hits if sid not in visible)
    for doc, n in sorted(stray.items()):
        out.append(f"{doc}: {len(v.hits)} searches return {n} hits of {_what_is(doc, v)}")
    if v.content is not None:
        outside = sorted(sid for sid in v.content if sid not in visible)
        wrong = sorted(sid for sid, vec in v.content.items() if sid in visible
                       and not np.allclose(vec, reference_content[sid], atol=1e-5))
        if outside:
            out.append(f"{len(outside)} content vectors of segments no registered version owns")
        if wrong:
            out.append(f"{len(wrong)} content vectors differ from a crash-free run's")
    return out


def _what_is(doc: str, v: View) -> str:
    """Why a segment of ``doc`` should not be visible."""
    if doc in v.documents:
        return "a version the registry does not name"
    return "a document the registry does not name"


def differences(v: View, ref: View) -> list[str]:
    """How ``v`` differs from the crash-free ``ref`` (empty: converged)."""
    out = []
    if v.documents != ref.documents:
        odd = sorted(d for d in v.documents.keys() | ref.documents.keys()
                     if v.documents.get(d) != ref.documents.get(d))
        out.append(f"registry differs for {', '.join(odd)}")
    if v.segments != ref.segments:
        odd = sorted(d for d in v.segments.keys() | ref.segments.keys()
                     if v.segments.get(d) != ref.segments.get(d))
        out.append(f"segments() differ for {', '.join(odd)}")
    odd_queries = sorted(q for q in ref.hits if v.hits.get(q) != ref.hits[q])
    if odd_queries:
        out.append(f"search results differ for {len(odd_queries)} queries, e.g. {odd_queries[0]!r}")
    if v.content is not None and ref.content is not None:
        got = v.content
        if got.keys() != ref.content.keys():
            out.append(f"{len(got)} content vectors stored, a crash-free run stores "
                       f"{len(ref.content)}")
        elif not all(np.allclose(got[s], ref.content[s], atol=1e-5) for s in got):
            out.append("content vectors differ from a crash-free run's")
    return out


# --------------------------------------------------------------------------- fixtures
@dataclass(frozen=True)
class References:
    corpora: dict[str, Path]
    views: dict[str, View]
    """Corpus name -> what a crash-free ingest of it shows (with content vectors)."""
    known: dict[tuple[str, str], Version]
    """(doc_id, version hash) -> that version, for every file version the corpora hold."""
    content: dict[str, np.ndarray]
    """Segment id -> its content vector."""

    def words(self, command: tuple[str, ...]) -> list[str]:
        """``command`` with each ``{corpus}`` replaced by that corpus's folder."""
        folders = {name: str(path) for name, path in self.corpora.items()}
        return [w.format(**folders) for w in command]


@pytest.fixture(scope="module")
def references(tmp_path_factory, embed_cache) -> References:
    """Crash-free ingests of every corpus, each into a fresh data directory.

    They also warm the embedding cache the crashing children share, so no case embeds.
    """
    root = tmp_path_factory.mktemp("faults")
    corpora, views = {}, {}
    known: dict[tuple[str, str], Version] = {}
    for name, files in CORPORA.items():
        folder = corpora[name] = root / "corpora" / name
        folder.mkdir(parents=True)
        for file, text in files.items():
            (folder / file).write_text(text, encoding="utf-8")
        try:
            col = Collection(NAME, settings_for(root / "ref" / name, embed_cache), create=True)
            col.ingest([folder])
            col.ensure_content_vectors()
            views[name] = observe(col, content=True)
        finally:
            store.close_all()
        for doc, (version, _) in views[name].documents.items():
            known[(doc, version)] = Version(views[name].segments[doc], QUERIES[(doc, files[doc])])
    content = {sid: vec for v in views.values() for sid, vec in (v.content or {}).items()}
    for name, view in views.items():
        assert problems(view, known, content) == [], f"crash-free {name} is inconsistent"
    return References(corpora, views, known, content)


# --------------------------------------------------------------------------- the test
CHILD = """
import json, os, shutil, sys
import hiqa.index.prepare
from hiqa.cli.main import main
from hiqa.index import store
hiqa.index.prepare.HELPER_FROM = 1  # these corpora are small: format in a helper, as large ones do
setup, damage, data, command, crash_at = json.loads(sys.argv[1])
for words in setup:
    if main(words) != 0:
        sys.exit("setup failed: hiqa " + " ".join(words))
if damage == "drop-store":
    store.close_all()
    shutil.rmtree(os.path.join(data, "store"))
os.environ["HIQA_CRASH_AT"] = crash_at
sys.exit(main(command))
"""


def crash(case: Case, data: Path, refs: References, cache: Path) -> None:
    """Run the case's command in a child (after its setup) and require a SIGKILL at its point."""

    def cli(words: tuple[str, ...]) -> list[str]:
        return ["--data-dir", str(data), *refs.words(words), "-c", NAME]

    setup = ([cli(("ingest", f"{{{case.scenario.before}}}", *case.scenario.before_flags))]
             if case.scenario.before else [])
    env = {k: v for k, v in os.environ.items() if not k.startswith("HIQA_")}
    repo = str(Path(hiqa.__file__).resolve().parents[1])
    env.update(HIQA_CACHE_DIR=str(cache), HIQA_EMBEDDER=EMBEDDER,
               PYTHONPATH=os.pathsep.join(p for p in (repo, env.get("PYTHONPATH")) if p))
    proc = subprocess.run(
        [sys.executable, "-c", CHILD, json.dumps([setup, case.scenario.damage, str(data),
                                                  cli(case.scenario.command), case.point])],
        check=False, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    assert proc.returncode == -signal.SIGKILL, (
        f"`hiqa {' '.join(case.scenario.command)}` exited with {proc.returncode} instead of being "
        f"killed at {case.point}, so that point was never reached:\n{proc.stderr[-3000:]}")
    # the helper shares the ingest's lock and may still be saving the lexical index; the next
    # ingest waits for it, as a user's would be told to
    lock = data / "collections" / NAME / "ingest.lock"
    with open(lock, "a+") if lock.exists() else contextlib.nullcontext() as fh:
        deadline = time.monotonic() + CHILD_TIMEOUT_S
        while fh is not None:
            try:
                fcntl.flock(fh, fcntl.LOCK_EX | fcntl.LOCK_NB)
                fcntl.flock(fh, fcntl.LOCK_UN)
                break
            except BlockingIOError:
                assert time.monotonic() < deadline, "the ingest's lock was never released"
                time.sleep(0.05)


def rerun(col: Collection, scenario: Scenario, refs: References) -> None:
    """The interrupted command again, without a crash, through the API the CLI calls.

    A document the crash already unregistered is not removed again: ``hiqa remove-doc`` would
    answer that it is not in the collection.
    """
    match refs.words(scenario.command):
        case ["ingest", folder]:
            col.ingest([folder])
        case ["ingest", folder, "--replace"]:
            col.ingest([folder], replace_others=True)
        case ["remove-doc", doc]:
            if doc in col.documents:
                col.remove_document(doc)
        case ["space"]:
            col.ensure_content_vectors()
        case ["embed"]:
            col.fill_dense()
        case ["repair"]:
            repair(Collection(NAME, col.settings, repairing=True).parts)
        case words:
            raise AssertionError(f"no re-run for `hiqa {' '.join(words)}`")


def test_every_point_has_a_case():
    """A checkpoint added to ``hiqa.faults`` needs a case here."""
    assert {c.point.partition("@")[0] for c in CASES} == set(faults.POINTS)


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_kill9_leaves_a_consistent_store_and_a_rerun_converges(case, references, embed_cache,
                                                               tmp_path):
    """The setup and the crash run in the child, so this process first opens ``data`` after the
    crash and sees what any new process would."""
    data = tmp_path / "data"
    crash(case, data, references, embed_cache)
    content = case.scenario.content
    settings = settings_for(data, embed_cache)
    try:
        try:
            col = Collection(NAME, settings, create=True)
            found = problems(observe(col, content=content), references.known, references.content)
        except CollectionError as exc:
            # a repair killed before it re-read every document leaves a store behind the
            # registry: opening says so, names them and the command that finishes the job
            assert case.scenario.damage and "hiqa repair -c faults" in str(exc), exc
            col = Collection(NAME, settings, repairing=True)
            found = []
        rerun(col, case.scenario, references)
        after = observe(Collection(NAME, settings_for(data, embed_cache)), content=content)
    finally:
        store.close_all()
    clean = references.views[case.scenario.after]
    found += [f"after a re-run: {p}" for p in differences(after, clean)]
    assert not found, f"{case.scenario.name}, kill -9 at {case.point}:\n" + "\n".join(found)
