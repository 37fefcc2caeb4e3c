"""The query side: every route's candidates for a question, with all raw scores (no fusion).

Routes (paper §3.3): dense (cosine of the ``hca`` vectors, in the store), lexical (BM25 over the
cascaded path, the body and the section, ``hiqa.index.lexical``) and the document-keyword count.  Each
returns points of registered document versions only: the dense route filters on the registry's
``doc_version`` keys in the store, the lexical index is built from registered points only.

The lexical index and the segments behind the candidates are derived data, one copy per registry
generation in the handle cache (``hiqa.handles``); the index is also saved under
``collections/<name>/derived/`` because rebuilding it costs more than loading it (docs/benchmarks.md, Store).
"""
from __future__ import annotations

import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field, replace
from functools import reduce
from typing import Any

import numpy as np

from hiqa.augment import segment_id
from hiqa.errors import QueryError
from hiqa.formats.statements import NAMES, families_of
from hiqa.formats.statements import asked as asked_in
from hiqa.index.derived import Derived, derived
from hiqa.index.lexical import LexicalIndex
from hiqa.index.parts import Parts
from hiqa.index.payload import payload_key, segment_reader
from hiqa.keywords.naming import Naming
from hiqa.keywords.rules import (
    normalize_keyword,
    query_phrases,
    without_phrases,
)
from hiqa.model import Segment
from hiqa.retrieve import names as docnames
from hiqa.retrieve.fusion import (
    Candidates,
    FusionMethod,
    Ranking,
    Weights,
    adaptive_weights,
    fuse,
    named_counts,
)
from hiqa.retrieve.headings import own_heading_weights
from hiqa.retrieve.params import DEFAULT_ALPHA, DEFAULT_BETA, DEFAULT_METHOD, check_k, check_weights

MAX_QUERY_CHARS = 4000
ROUTE_K = 100


@dataclass(frozen=True)
class Hit:
    """A ranked segment with its fused score and each route's share (for the score chart)."""

    rank: int
    segment: Segment
    score: float
    contributions: dict[str, float]
    raw: dict[str, float]


class CandidateSegments(Mapping[str, Segment]):
    """The candidates' segments, each read from the store the first time it is needed.

    A question has 100-200 candidates and shows 5-10 of them: reading every candidate's payload
    cost more than all the routes together (8-10 ms for 200 points at 20k, converting payloads
    to Python), so ``rank`` fetches the top ``k`` in one batch and a slider that lifts another
    candidate into view fetches that one.  Fetched segments are kept for the registry
    generation (``Derived.segments``), so a repeated question reads nothing.
    """

    def __init__(self, ids: Sequence[str], loader: Callable[[Sequence[str]], dict[str, Segment]]):
        self._ids = tuple(ids)
        self._known = frozenset(self._ids)
        self._loader = loader
        self._have: dict[str, Segment] = {}

    def prefetch(self, ids: Sequence[str]) -> None:
        missing = [i for i in ids if i in self._known and i not in self._have]
        if missing:
            self._have.update(self._loader(missing))

    def __getitem__(self, sid: str) -> Segment:
        if sid not in self._have:
            if sid not in self._known:
                raise KeyError(sid)
            self.prefetch([sid])
        return self._have[sid]

    def __iter__(self) -> Iterator[str]:
        return iter(self._ids)

    def __len__(self) -> int:
        return len(self._ids)


def prefetch(segments: Mapping[str, Segment], ids: Sequence[str]) -> None:
    """Read ``ids``' segments in one batch where ``segments`` is lazy (else nothing to do)."""
    if isinstance(segments, CandidateSegments):
        segments.prefetch(ids)


@dataclass
class SearchResult:
    """Candidates + the segments behind them; ``rank`` re-fuses without touching the index."""

    query: str
    candidates: Candidates
    segments: Mapping[str, Segment]
    timings: dict[str, float] = field(default_factory=dict)
    named: dict[str, tuple[str, ...]] = field(default_factory=dict)
    """The candidates' documents whose keywords the question uses as names most
    (``keywords.naming``), each with those keywords as written; one when the question names
    exactly one document, empty when it names none."""
    not_names: tuple[Naming, ...] = ()
    """The document keywords the question holds but uses as ordinary words: they keep Eq. 2's
    soft bonus only, and the app says so."""
    latest: str | None = None
    """The latest of the filings a question names by their company alone, put first
    (``names.filing_names``); None otherwise."""
    latest_title: str = ""

    def rank(self, method: str = DEFAULT_METHOD, alpha: float = DEFAULT_ALPHA,
             beta: float = DEFAULT_BETA, k: int = 10, *, adaptive: bool = False) -> list[Hit]:
        """Fuse (Eq. 2); ``adaptive`` moves α per question (``fusion.adaptive_weights``).

        Raises ``ParameterError`` for α, β, k or a method out of range (``hiqa.retrieve.params``).
        """
        w = check_weights(method, alpha, beta)
        alpha, beta = w.alpha, w.beta
        if adaptive:
            moved = self.weights(alpha, beta)
            alpha, beta = moved.alpha, moved.beta
        ranking = fuse(self.candidates, FusionMethod(w.method), alpha, beta)
        k = check_k(k)
        prefetch(self.segments, [self.candidates.ids[i] for i in ranking.order[:k]])
        return hits_from(ranking, self.candidates, self.segments, k)

    def weights(self, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA) -> Weights:
        """The query-adaptive α and β for this question, with the reason to show."""
        return adaptive_weights(self.candidates, alpha, beta)

    @property
    def names_document(self) -> bool:
        """Whether the question holds a keyword of some candidate's document (Eq. 2's M > 0)
        and uses it as a name."""
        return bool(len(self.candidates)) and int(named_counts(self.candidates).max()) > 0

    @property
    def named_document(self) -> str | None:
        """The one document the question names (``named``), or None."""
        return next(iter(self.named)) if len(self.named) == 1 else None

    @property
    def asked_statements(self) -> tuple[str, ...]:
        """The financial statements the question asks for by name whose segments are among
        the candidates, ranked first (``fusion.asked_first``); empty when none."""
        asked = self.candidates.asked
        if asked is None or not asked.any():
            return ()
        return tuple(sorted(asked_in(self.query)))

    def latest_note(self) -> str:
        """What the app and the CLI say when ``latest`` went first."""
        if self.latest is None:
            return ""
        return (f"The question names the company but no period: its latest filing, "
                f"{self.latest_title or self.latest}, comes first.")

    def statements_note(self) -> str:
        """What the app and the CLI say when ``asked_statements`` moved the order."""
        shown = " and the ".join(NAMES[n] for n in self.asked_statements)
        return (f"The question asks for the {shown}: the segments inside it come first "
                "(their scores are unchanged).")

    def dense_pending_note(self) -> str | None:
        """While some candidates have no dense vector yet (ingested with ``--dense later``, or
        being filled in the background): how many, and what that does to α.  None when every
        candidate has one."""
        pending = int(np.isnan(np.asarray(self.candidates.dense, dtype=np.float64)).sum())
        total = len(self.candidates.ids)
        if not pending:
            return None
        if pending == total:
            return (f"Dense vectors are pending for all {total:,} candidates: they are ranked "
                    "by BM25 and keywords alone, and α changes nothing until they are embedded.")
        return (f"Dense vectors are pending for {pending:,} of the {total:,} candidates: α moves "
                "only BM25 for them (their dense share is their BM25 share until they are "
                "embedded).")

    def names_of(self, doc_id: str) -> tuple[str, ...]:
        """The keywords of ``doc_id`` the question holds (empty unless it is in ``named``)."""
        return self.named.get(doc_id, ())

    def scope_hint(self, hits: Sequence[Hit]) -> ScopeHint | None:
        """The documents to offer when the question names none and ``hits`` (the evidence
        shown) come from more than one; None otherwise.  See :class:`ScopeHint`."""
        if self.names_document:
            return None
        titles = {h.segment.doc_id: h.segment.doc_title or h.segment.doc_id for h in hits}
        order = list(dict.fromkeys(h.segment.doc_id for h in hits))
        if len(order) < 2:
            return None
        shown = order[:SCOPE_HINT_DOCS]
        return ScopeHint(tuple(shown), tuple(titles[d] for d in shown), len(order))


SCOPE_HINT_DOCS = 5
"""At most this many documents are offered by a :class:`ScopeHint`."""


@dataclass(frozen=True)
class ScopeHint:
    """A question that names none of the collection's documents, answered from several.

    Naming the document is what HCA is for: on the dev sets, the questions that name their
    man page score 0.988-0.996 Recall@5 and the same questions without the name 0.835; asked
    within the right document, the unnamed ones score 0.996 (docs/benchmarks.md, "Questions that name no
    document").  Neither route can tell which page "Display help" means, so the documents the
    evidence comes from are offered, best first, for the analyst to name or ask within.
    ``doc_ids`` and ``titles`` are aligned; ``spread`` counts every document among the hits.
    """

    doc_ids: tuple[str, ...]
    titles: tuple[str, ...]
    spread: int

    def message(self) -> str:
        rest = self.spread - len(self.titles)
        more = f" and {rest} more" if rest > 0 else ""
        return (f"The question names none of the documents, and the evidence comes from "
                f"{self.spread}: {'; '.join(self.titles)}{more}. Name the one you mean in the "
                "question, or ask within it.")


def hits_from(ranking: Ranking, c: Candidates, segments: Mapping[str, Segment],
              k: int) -> list[Hit]:
    out = []
    for r, i in enumerate(ranking.order[:k], start=1):
        sid = c.ids[i]
        out.append(
            Hit(
                rank=r,
                segment=segments[sid],
                score=float(ranking.scores[i]),
                contributions={name: float(v[i]) for name, v in ranking.contributions.items()},
                raw={
                    "dense": float(c.dense[i]),
                    "dense_content": float(c.dense_content[i]),
                    "bm25": float(c.bm25[i]),
                    "matches": int(c.matches[i]),
                },
            )
        )
    return out


def retrieve(parts: Parts, query: str, *, k: int = ROUTE_K,
             doc_ids: Sequence[str] | None = None) -> SearchResult:
    """Run every route and return all candidates with all raw scores (no fusion yet)."""
    query = check_query(query)
    timings: dict[str, float] = {}
    t0 = time.perf_counter()
    qvec = np.asarray(parts.embedder.embed_query(query), dtype=np.float32)
    timings["embed"] = time.perf_counter() - t0
    return retrieve_vector(parts, query, qvec, k=k, doc_ids=doc_ids, timings=timings)


def retrieve_vector(parts: Parts, query: str, qvec: np.ndarray, *, k: int = ROUTE_K,
                    doc_ids: Sequence[str] | None = None,
                    timings: dict[str, float] | None = None) -> SearchResult:
    """Every route's top ``k`` for ``query`` (embedded as ``qvec``), unioned and fully scored."""
    timings = timings if timings is not None else {}
    t0 = time.perf_counter()
    d = derived(parts)
    scope = sorted(set(doc_ids)) if doc_ids is not None else None
    if scope is not None and not set(scope) & set(parts.registry.documents):
        raise QueryError("none of the chosen documents is in this collection")
    dense_hits = parts.store.nearest(qvec, using="hca", k=k, versions=d.version_filter(parts.store),
                                   doc_ids=scope)
    dense_scores = dict(dense_hits)
    timings["dense"] = time.perf_counter() - t0
    t1 = time.perf_counter()
    lexical = d.lexical
    bm25_all = lexical.scores(query)
    if scope is not None and len(bm25_all):
        bm25_all = np.where(np.isin(lexical.doc_ids, scope), bm25_all, -np.inf)
    top_b = top_k(bm25_all, k)
    bm25_ids = [lexical.ids[i] for i in top_b[bm25_all[top_b] > 0].tolist()]  # not 0, not -inf
    asked_for = asked_in(query)  # the statements the question asks for
    bm25_ids += _statement_ids(lexical, asked_for,
                               [sid for sid, _ in dense_hits[:10]] + bm25_ids[:10])
    timings["bm25"] = time.perf_counter() - t1
    t2 = time.perf_counter()
    # sorted: the store returns equal scores in no fixed order, and fusion breaks ties by
    # candidate order, so two fresh ingests of one corpus would rank identical text apart
    ids = sorted({sid for sid, _ in dense_hits} | set(bm25_ids))
    doc_of = visible_docs(parts, d, ids)  # registered versions only; payloads are read lazily
    ids = [i for i in ids if i in doc_of]
    missing = [i for i in ids if i not in dense_scores]
    dense_scores.update(parts.store.scores(missing, qvec, "hca"))
    dense = np.array([dense_scores.get(i, np.nan) for i in ids])
    content = np.full(len(ids), np.nan)
    pos = lexical.positions(ids)
    bm25 = _candidate_bm25(bm25_all, pos, np.ones(len(ids), dtype=bool), 0.0)
    phrases = query_phrases(query)
    documents = parts.registry.documents
    matched = docnames.longest({doc: docnames.normalized(d, documents, doc) & phrases
                        for doc in set(doc_of.values())}, query)
    namings = docnames.namings_of(d, documents, query, matched)
    named, latest = docnames.filing_names({doc: frozenset(k for k in found if namings[k].strong)
                                   for doc, found in matched.items()}, documents)
    matches = np.array([len(matched[doc_of[i]]) for i in ids], dtype=np.int64)
    names = np.array([len(named[doc_of[i]]) for i in ids], dtype=np.int64)
    timings["union"] = time.perf_counter() - t2
    unnamed = _unnamed_scores(parts, lexical, query, frozenset().union(*named.values()), ids, pos,
                              names > 0, timings)
    segments = CandidateSegments(ids, lambda wanted: fetch(parts, d, wanted))
    reading = _reading(lexical.wholly_titled(query), ids, doc_of, segments)
    # each candidate's document as a number: what the document route and the reorders group by
    number = {doc: n for n, doc in enumerate(sorted(set(doc_of.values())))}
    documents_of = np.array([number[doc_of[i]] for i in ids], dtype=np.int64)
    asked = _asked_statements(asked_for, ids, segments)
    heading = None
    if len(ids) and names.max() > 0:  # the section asked about, inside the named document
        segments.prefetch(ids)
        heading = own_heading_weights(query, [segments.get(i) for i in ids],
                                      lexical.head_share, lexical.body_share)
    most = max(map(len, named.values()), default=0)
    most_named = {doc: found for doc, found in sorted(named.items()) if most and len(found) == most}
    given = frozenset().union(*most_named.values())
    citing = None
    if given and all(k in namings and namings[k].by_usage for k in given):  # see named_first
        using = reduce(np.intersect1d, (lexical.using(k) for k in sorted(given)))
        citing = (names == 0) & np.isin(pos, using)
    cands = Candidates(ids=tuple(ids), dense=dense, dense_content=content, bm25=bm25,
                       matches=matches, names=names, query=query,
                       sections=lexical.sections(pos), asked=asked, heading=heading,
                       citing=citing, documents=documents_of, reading=reading, **unnamed)
    chosen = {doc: tuple(k for k in docnames.keyword_names(documents[doc])
                         if normalize_keyword(k) in found)
              for doc, found in most_named.items()}
    weak = tuple(sorted((n for n in namings.values() if not n.strong), key=lambda n: n.keyword))
    return SearchResult(query=query, candidates=cands, segments=segments, timings=timings,
                        named=chosen, not_names=weak, latest=latest,
                        latest_title=str(documents[latest].get("title", "")) if latest else "")


def _reading(titled: frozenset[str], ids: Sequence[str], doc_of: Mapping[str, str],
             segments: CandidateSegments) -> np.ndarray | None:
    """``Candidates.reading``: each candidate's place in its document's reading order (its
    section's order, then its piece) for the documents whose title is all the question says,
    -1 elsewhere; None when no candidate's document is one."""
    rows = [k for k, sid in enumerate(ids) if doc_of[sid] in titled]
    if not rows:
        return None
    segments.prefetch([ids[k] for k in rows])
    place = {k: (seg.order, seg.piece) for k in rows if (seg := segments.get(ids[k])) is not None}
    if not place:
        return None
    reading = np.full(len(ids), -1, dtype=np.int64)
    for n, k in enumerate(sorted(place, key=place.__getitem__)):
        reading[k] = n
    return reading


STATEMENT_K = 20
"""Candidates the statement a question asks for brings in (``_statement_ids``)."""


def _statement_ids(lexical: LexicalIndex, wanted: frozenset[str],
                   leading: Sequence[str]) -> list[str]:
    """The segments of the statements a question asks for (``wanted``), in the documents its best
    candidates (``leading``) come from: a question that asks for a statement by a measure
    shares few words with its rows ("Did Pfizer grow its PPNE between FY20 and FY21?": the row
    is "Property, plant and equipment, net"), so by both routes the statement may not be among
    the candidates ``asked_first`` can put first.  Scored by the statements' names in the
    segments' heads alone, which the statements' paths carry (``augment._path_line``): by the
    whole text, the notes that mention "the balance sheets" in every paragraph outrank the
    statement's own rows."""
    pos = lexical.positions(list(leading))
    if not wanted or not len(lexical) or not (pos >= 0).any():
        return []
    scores = lexical.head_scores(" ".join(NAMES[f] for f in sorted(wanted)))
    found: list[str] = []
    for doc in np.unique(lexical.doc_ids[pos[pos >= 0]]):  # each document's own best
        own = np.where(lexical.doc_ids == doc, scores, -np.inf)
        top = top_k(own, STATEMENT_K)
        found += [lexical.ids[i] for i in top[own[top] > 0].tolist()]
    return found


def _asked_statements(wanted: frozenset[str], ids: Sequence[str],
                      segments: CandidateSegments) -> np.ndarray | None:
    """``Candidates.asked``: which candidates are inside a financial statement the question
    asks for (``wanted``: "the balance sheet"), or None when it asks for none (then no payload
    is read)."""
    if not wanted or not ids:
        return None
    segments.prefetch(ids)
    return np.array([bool(families_of(segments[i].path) & wanted) if i in segments
                     else False for i in ids], dtype=np.int64)


def _unnamed_scores(parts: Parts, lexical: LexicalIndex, query: str, names: frozenset[str],
                    ids: Sequence[str], pos: np.ndarray, rows: np.ndarray,
                    timings: dict[str, float]) -> dict[str, Any]:
    """``Candidates``' unnamed fields: the question without the document names it holds,
    scored by both routes on the candidates of the documents it names (``fusion.within_named``).
    One more question embedding, only for a question that names a document and asks
    something besides."""
    rest = without_phrases(query, names) if names and rows.any() else ""
    if not rest:
        return {}
    t0 = time.perf_counter()
    qvec = np.asarray(parts.embedder.embed_query(rest), dtype=np.float32)
    chosen = [sid for sid, keep in zip(ids, rows.tolist(), strict=True) if keep]
    found = parts.store.scores(chosen, qvec, "hca")
    dense = np.full(len(ids), np.nan)
    dense[rows] = [found.get(sid, np.nan) for sid in chosen]
    bm25 = _candidate_bm25(lexical.scores(rest), pos, rows, np.nan)
    timings["unnamed"] = time.perf_counter() - t0
    return {"unnamed_query": rest, "unnamed_dense": dense, "unnamed_bm25": bm25}


def _candidate_bm25(scores: np.ndarray, pos: np.ndarray, rows: np.ndarray,
                    elsewhere: float) -> np.ndarray:
    """The candidates' BM25 scores from the lexical index's array over every segment (``pos``:
    each candidate's place in it, -1 when absent): for ``rows``, the score, 0 where it is not
    positive or not finite (scoped out); ``elsewhere`` for the other candidates."""
    out = np.full(len(pos), elsewhere)
    out[rows] = 0.0
    known = rows & (pos >= 0)
    if len(scores) and known.any():
        picked = scores[pos[known]]
        out[known] = np.where(np.isfinite(picked), np.maximum(picked, 0.0), 0.0)
    return out


def visible_docs(parts: Parts, d: Derived, ids: Sequence[str]) -> dict[str, str]:
    """The document of each of ``ids`` that belongs to a registered version (others dropped).

    The lexical index holds every segment of the registered versions and nothing else (it is
    built from them), so it answers without reading the store.
    """
    lexical = d.lexical
    pos = lexical.positions(ids)
    return {sid: str(lexical.doc_ids[p]) for sid, p in zip(ids, pos.tolist()) if p >= 0}


def fetch(parts: Parts, d: Derived, ids: Sequence[str]) -> dict[str, Segment]:
    """Segments by id, of registered versions only, each fetched once per generation."""
    missing = [i for i in ids if i not in d.segments]
    if missing:
        visible, read = set(d.versions), segment_reader(parts.registry.data)
        for rec in parts.store.retrieve(missing):
            p = rec.payload
            if payload_key(p) in visible:
                d.segments[rec.id] = read(rec.id, p)
    return {i: d.segments[i] for i in ids if i in d.segments}


ANSWER_WINDOW = 1
"""Pieces on each side of a ranked piece that join it in an answer's context block."""


def answer_blocks(parts: Parts, segments: Sequence[Segment],
                  window: int = ANSWER_WINDOW) -> list[Segment]:
    """The context blocks an answer is written from: each ranked segment with the pieces of
    its own heading or term next to it (``window`` on each side), joined in document order.

    A long section is cut into pieces to fit the embedder, and the sentence that answers is
    often in the piece after the one that matched best: on the demo's 34 questions the gold
    phrase was in the top 5 pieces for 26 and in these blocks for 32 (docs/benchmarks.md, Answers).  The
    ranking is not changed; pieces of one heading ranked twice become one block, at the
    better one's place.  ``fixed`` windows have no heading: they stay as they are.
    """
    d = derived(parts)
    documents = parts.registry.documents
    wanted: dict[tuple[str, int], list[str]] = {}
    for s in segments:
        version = str(documents.get(s.doc_id, {}).get("hash", ""))
        if version and s.strategy != "fixed" and window > 0:
            ids = wanted.setdefault((s.doc_id, s.order), [])
            ids += [segment_id(s.doc_id, s.strategy, s.order, p, version)
                    for p in range(max(0, s.piece - window), s.piece + window + 1)]
    found = fetch(parts, d, list(dict.fromkeys(i for ids in wanted.values() for i in ids)))
    blocks: list[Segment] = []
    joined: set[tuple[str, int]] = set()
    for s in segments:
        key = (s.doc_id, s.order)
        if key not in wanted:
            blocks.append(s)
            continue
        if key in joined:
            continue
        joined.add(key)
        pieces = list({p.piece: p for i in wanted[key] if (p := found.get(i))}.values()) or [s]
        blocks.append(s if len(pieces) == 1 else _joined(s, pieces))
    return blocks


def _joined(seg: Segment, pieces: Sequence[Segment]) -> Segment:
    """``seg`` holding the text of ``pieces`` (of its section) in the document's order: HCA
    makes a section's text its first pieces and its tables the pieces after them, so where a
    table heads its rows' lines (a statement's column header in a table, the rows below it as
    lines) piece order would put the rows above their header."""
    ordered = sorted(pieces, key=lambda p: (p.span[0], p.piece))
    return replace(seg, text="\n\n".join(p.text.strip() for p in ordered),
                   piece=min(p.piece for p in pieces),
                   pages=tuple(sorted({n for p in pieces for n in p.pages})),
                   span=(min(p.span[0] for p in pieces), max(p.span[1] for p in pieces)))


def earlier_sections(parts: Parts, seg: Segment, count: int) -> list[Segment]:
    """The pieces before ``seg`` in its own section, then the first two pieces of each of the
    ``count`` sections before it in its document, nearest first: where a statement's column
    header is printed once, above rows that its row groups split into sections of their own,
    or in the lines before a table that is a piece of its own ("December 31, / 2021 2020"), or
    in that table, the second piece, when the reader set lines of its rows before it (Corning's
    2020 statements)."""
    own = [(seg.order, p) for p in range(seg.piece - 1, -1, -1)]
    before = [(o, p) for o in range(seg.order - 1, max(-1, seg.order - 1 - count), -1)
              for p in (0, 1)]
    return _pieces_at(parts, seg, own + before)


def sections_at(parts: Parts, seg: Segment, orders: Sequence[int]) -> list[Segment]:
    """The sections of ``seg``'s document at ``orders``, in that order, each its first two
    pieces joined in the document's order (``_joined``: a statement's lines and the table
    heading them)."""
    found = _pieces_at(parts, seg, [(order, p) for order in orders if order >= 0
                                    for p in (0, 1)])
    by_order: dict[int, list[Segment]] = {}
    for piece in found:
        by_order.setdefault(piece.order, []).append(piece)
    return [pieces[0] if len(pieces) == 1 else _joined(pieces[0], pieces)
            for order in orders if (pieces := by_order.get(order))]


def _pieces_at(parts: Parts, seg: Segment, places: Sequence[tuple[int, int]]) -> list[Segment]:
    """The pieces of ``seg``'s document at ``places`` (section order, piece), in that order,
    read in one fetch; none for a ``fixed`` window or an unregistered document."""
    version = str(parts.registry.documents.get(seg.doc_id, {}).get("hash", ""))
    if not version or seg.strategy == "fixed":
        return []
    ids = [segment_id(seg.doc_id, seg.strategy, order, piece, version) for order, piece in places]
    found = fetch(parts, derived(parts), ids)
    return [found[i] for i in ids if i in found]


def search_document(parts: Parts, seg: Segment, text: str, n: int) -> list[Segment]:
    """The ``n`` segments of ``seg``'s document that BM25 ranks best for ``text``, best first
    (the cell a computation lacks: "total current liabilities 2021" in one filing)."""
    d = derived(parts)
    scores = np.where(d.lexical.doc_ids == seg.doc_id, d.lexical.scores(text), 0.0)
    ids = [d.lexical.ids[i] for i in top_k(scores, n) if scores[i] > 0]
    found = fetch(parts, d, ids)
    return [found[i] for i in ids if i in found]


def top_k(scores: np.ndarray, k: int) -> np.ndarray:
    """Positions of the ``k`` highest scores, best first (ties in position order)."""
    if len(scores) <= k:
        return np.argsort(-scores, kind="stable")
    part = np.argpartition(-scores, k)[:k]
    return part[np.argsort(-scores[part], kind="stable")]


def check_query(query: str) -> str:
    q = " ".join((query or "").split())
    if not q:
        raise QueryError("the question is empty; type a question")
    if len(q) > MAX_QUERY_CHARS:
        raise QueryError(f"the question is {len(q):,} characters long; the limit is "
                         f"{MAX_QUERY_CHARS:,}. Shorten it to the part you want answered.")
    return q
