"""Score fusion of the retrieval routes (paper §3.3, Eq. 2).

The paper ranks a segment by a weighted sum of its dense and BM25 scores plus a keyword bonus:

    score = α · dense + (1 − α) · bm25 + β · bonus,   bonus = log(1 + m) / log(1 + M)      (Eq. 2)

where ``m`` is the number of the segment's document keywords found in the question and ``M`` the
largest ``m`` among the candidates.  The routes' raw scores live on different scales (cosine in
[-1, 1], BM25 unbounded), so by default each route is min-max normalised over the candidate set
first; the other methods exist for ablations and for comparison with Qdrant's own RRF.

Everything here is a pure function of a :class:`Candidates` value: retrieval runs once, and a
slider that moves α or β only calls :func:`fuse` again (re-fusion), which costs microseconds.
Missing dense scores (NaN: a segment whose dense vector is still being filled in, ``hiqa ingest
--dense later``) take the candidate's own normalised BM25 score (its BM25 rank under RRF): with
no dense evidence a segment is judged on its lexical evidence alone instead of being pushed
below every embedded one.  When no candidate has a dense score the dense route adds nothing;
other missing scores count as the route's worst score among the candidates.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field

import numpy as np

from hiqa.retrieve.breadth import document_bonus
from hiqa.retrieve.params import (
    DEFAULT_ALPHA,
    DEFAULT_BETA,
    DEFAULT_METHOD,
    FusionMethod,
    check_alpha,
    check_beta,
)

RRF_K = 60
"""Rank constant of reciprocal rank fusion, ``1 / (k + rank)`` with 1-based ranks: Cormack et
al.'s (2009) 60.  Qdrant's server defaults to a much smaller one (``DEFAULT_RRF_K = 2`` over
0-based positions in ``lib/segment/src/common/reciprocal_rank_fusion.rs``, i.e. ``1 / (rank + 1)``),
which lets the first places of each route weigh far more; HiQA keeps the paper's."""

Contributions = dict[str, np.ndarray]


def _frozen(values: Sequence[float] | np.ndarray, dtype: type) -> np.ndarray:
    array: np.ndarray = np.array(values, dtype=dtype).reshape(-1)
    array.setflags(write=False)
    return array


@dataclass(frozen=True, eq=False)
class Candidates:
    """The union of all routes' hits for one question, with every route's raw score.

    Arrays are aligned with ``ids`` and copied read-only, so one value can be re-fused any number
    of times.  ``dense`` is the cosine of the route's main (``hca``) vector and is what fusion
    uses; ``dense_content`` (cosine of the plain ``content`` vector) is carried for display and
    ablations and may be all NaN.  ``bm25`` is 0 where no query term matched; ``matches`` is the
    ``m`` of Eq. 2.  Equality is identity (arrays have no single truth value).
    """

    ids: tuple[str, ...]
    dense: np.ndarray
    dense_content: np.ndarray
    bm25: np.ndarray
    matches: np.ndarray
    query: str = ""
    sections: np.ndarray | None = None
    """Each candidate's heading section (any integer naming it; a term's is its parent
    section's).  Given, :func:`fuse` ranks one segment per section first (``one_per_section``);
    None: every candidate is its own section."""
    documents: np.ndarray | None = None
    """Each candidate's document (any integer naming it); needed with the unnamed scores.
    Given, :func:`fuse` adds the document route (:func:`document_bonus`); None: no document
    has more than its own candidate's evidence."""
    unnamed_query: str = ""
    """The question without the document names it holds (``keywords.without_phrases``), when
    it names one and asks something besides; empty otherwise."""
    names: np.ndarray | None = None
    """Of the ``matches``, how many the question uses as names of the candidate's document
    (``keywords.naming``): what :func:`named_first` reads; None: every match is a name."""
    unnamed_dense: np.ndarray | None = None
    unnamed_bm25: np.ndarray | None = None
    """Both routes' raw scores for ``unnamed_query`` on the candidates of the documents the
    question names (``matches > 0``), NaN elsewhere (a dense one also NaN while pending);
    :func:`fuse` orders each named document's candidates among themselves with them
    (:func:`within_named`)."""
    heading: np.ndarray | None = None
    """How much the candidate's own heading is what the question asks about
    (``headings.own_heading_weights``), given when the question names a document; :func:`fuse`
    adds it, scaled over the named document's candidates, to theirs (:func:`heading_bonus`)."""
    citing: np.ndarray | None = None
    """1 where the candidate's own text uses every name the question gives while its document
    is not named at all (dircolors' description says ``ls``), given only for names the
    collection's usage alone tells from words: :func:`named_first` lets such a candidate that
    Eq. 2 ranks above every named one keep its place.  None: no such name."""
    reading: np.ndarray | None = None
    """The candidate's place in its document's reading order (any increasing integer) where the
    question says nothing but that document's title (``LexicalIndex.wholly_titled``), -1
    elsewhere; needs ``documents``.  :func:`fuse` lets the earlier of two near-tied
    candidates of such a document go first (:func:`earlier_on_ties`).  None: no such document."""
    asked: np.ndarray | None = None
    """1 where the candidate is inside a financial statement the question asks for by name
    ("the balance sheet", ``formats.statements.asked``), 0 elsewhere; None: it names none.
    :func:`fuse` ranks those candidates first (:func:`asked_first`)."""

    def __post_init__(self) -> None:
        n = len(self.ids)
        object.__setattr__(self, "ids", tuple(self.ids))
        arrays = {
            "dense": _frozen(self.dense, np.float64),
            "dense_content": _frozen(self.dense_content, np.float64),
            "bm25": _frozen(self.bm25, np.float64),
            "matches": _frozen(self.matches, np.int64),
        }
        for name in ("sections", "documents", "names", "asked", "citing", "reading"):
            if getattr(self, name) is not None:
                arrays[name] = _frozen(getattr(self, name), np.int64)
        for name in ("unnamed_dense", "unnamed_bm25", "heading"):
            if getattr(self, name) is not None:
                arrays[name] = _frozen(getattr(self, name), np.float64)
        unnamed = [self.unnamed_dense is not None, self.unnamed_bm25 is not None,
                   self.documents is not None]
        if any(unnamed[:2]) and not all(unnamed):
            raise ValueError("Candidates: unnamed_dense and unnamed_bm25 come together, "
                             "with documents")
        if self.reading is not None and self.documents is None:
            raise ValueError("Candidates: reading needs documents")
        wrong = {name: len(a) for name, a in arrays.items() if len(a) != n}
        if wrong:
            shown = ", ".join(f"{name} has {size}" for name, size in wrong.items())
            raise ValueError(f"Candidates: {n} ids but {shown} values; arrays must align with ids")
        if len(set(self.ids)) != n:
            raise ValueError("Candidates: segment ids must be unique")
        if n and arrays["matches"].min() < 0:
            raise ValueError("Candidates: keyword match counts must be >= 0")
        for name, array in arrays.items():
            object.__setattr__(self, name, array)

    def __len__(self) -> int:
        return len(self.ids)


@dataclass(frozen=True, eq=False)
class Ranking:
    """The fused order of a :class:`Candidates` value.

    ``scores`` and each array of ``contributions`` (keys ``dense``, ``bm25``, ``keyword``: the
    route's weighted share of the score) are in candidate order and sum to ``scores``; ``order``
    lists candidate indices best first, ties broken by candidate index.
    """

    candidate_ids: tuple[str, ...]
    order: np.ndarray
    scores: np.ndarray
    contributions: Contributions
    method: FusionMethod
    alpha: float
    beta: float
    _rank: dict[str, int] = field(init=False, repr=False)

    def __post_init__(self) -> None:
        ranks = {self.candidate_ids[i]: r for r, i in enumerate(self.order.tolist(), start=1)}
        object.__setattr__(self, "_rank", ranks)

    def __len__(self) -> int:
        return len(self.order)

    def ids(self) -> list[str]:
        """Segment ids, best first."""
        return [self.candidate_ids[i] for i in self.order.tolist()]

    def top(self, k: int) -> np.ndarray:
        """Candidate indices of the ``k`` best segments, best first."""
        return self.order[: max(k, 0)]

    def rank_of(self, segment_id: str) -> int | None:
        """1-based rank of a segment, or None when it is not a candidate (as the metrics expect)."""
        return self._rank.get(segment_id)


def minmax(values: np.ndarray) -> np.ndarray:
    """Scale to [0, 1] over the candidate set; a constant vector carries no signal and gives 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.copy()
    low, high = float(values.min()), float(values.max())
    if high - low <= 0:
        return np.zeros_like(values)
    return (values - low) / (high - low)


def zscore(values: np.ndarray) -> np.ndarray:
    """Zero mean, unit (population) variance; a constant vector gives 0."""
    values = np.asarray(values, dtype=np.float64)
    if values.size == 0:
        return values.copy()
    std = float(values.std())
    if std <= 0:
        return np.zeros_like(values)
    return (values - float(values.mean())) / std


def keyword_bonus(matches: np.ndarray) -> np.ndarray:
    """Eq. 2's bonus ``log(1 + m) / log(1 + M)``: 1 for the best-matching candidates, 0 for none.

    The log damps the reward for many matches, and dividing by ``M`` keeps the bonus in [0, 1]
    whatever the question; when no candidate matches (``M = 0``) every bonus is 0.
    """
    matches = np.asarray(matches, dtype=np.float64)
    if matches.size == 0 or matches.max() <= 0:
        return np.zeros_like(matches)
    bonus: np.ndarray = np.log1p(matches) / np.log1p(matches.max())
    return bonus


def route_ranks(values: np.ndarray) -> np.ndarray:
    """1-based rank of each candidate by one route's score, ties kept in candidate order."""
    order = np.argsort(-np.asarray(values, dtype=np.float64), kind="stable")
    ranks = np.empty(len(order), dtype=np.int64)
    ranks[order] = np.arange(1, len(order) + 1)
    return ranks


def _filled(values: np.ndarray) -> np.ndarray:
    missing = np.isnan(values)
    if not missing.any():
        return values
    if missing.all():
        return np.zeros_like(values)
    return np.where(missing, np.nanmin(values), values)


def _linear(alpha: float, beta: float) -> tuple[float, float, float]:
    return alpha, 1 - alpha, beta


def _convex(alpha: float, beta: float) -> tuple[float, float, float]:
    """``(1-β)α, (1-β)(1-α), β``: the weights sum to 1, so scores stay in [0, 1]."""
    return (1 - beta) * alpha, (1 - beta) * (1 - alpha), beta


def _rrf_weights(alpha: float, beta: float) -> tuple[float, float, float]:
    """The bonus scaled as if it were a rank-1 hit of a third route, so β means the same "one
    extra first place" whatever ``RRF_K`` is."""
    return alpha, 1 - alpha, beta / (RRF_K + 1)


def _rrf_share(values: np.ndarray) -> np.ndarray:
    """A route's reciprocal-rank share ``1 / (k + rank)``."""
    share: np.ndarray = 1.0 / (RRF_K + route_ranks(values))
    return share


def _as_is(values: np.ndarray) -> np.ndarray:
    return np.asarray(values, dtype=np.float64)


@dataclass(frozen=True)
class Combination:
    """How one fusion method puts the routes together: each route's scores on the fused scale
    (``scale``, ranx's normalisation), then a weighted sum whose weights come from α and β
    (``weights``: dense, BM25, keyword bonus)."""

    scale: Callable[[np.ndarray], np.ndarray]
    weights: Callable[[float, float], tuple[float, float, float]]
    fill_pending: bool = True
    """A candidate without a dense score takes its BM25 share (not under ``raw``, the paper's
    code, which scores it as the route's worst)."""


METHODS: dict[FusionMethod, Combination] = {
    FusionMethod.MINMAX: Combination(minmax, _linear),
    FusionMethod.ZSCORE: Combination(zscore, _linear),
    FusionMethod.CC: Combination(minmax, _convex),
    FusionMethod.RRF: Combination(_rrf_share, _rrf_weights),
    FusionMethod.RAW: Combination(_as_is, _linear, fill_pending=False),
}
"""The one dispatch: ``fuse`` and ``within_named`` both read the method's combination here."""


def _routes(raw_dense: np.ndarray, raw_bm25: np.ndarray,
            how: Combination) -> tuple[np.ndarray, np.ndarray]:
    """Both routes on the fused scale, a pending dense score replaced by the candidate's BM25
    share."""
    bm25 = how.scale(_filled(raw_bm25))
    dense = how.scale(_filled(raw_dense))
    pending = np.isnan(np.asarray(raw_dense, dtype=np.float64))
    if how.fill_pending and pending.any() and not pending.all():
        dense = np.where(pending, bm25, dense)
    return dense, bm25


def fuse(
    candidates: Candidates,
    method: FusionMethod | str = DEFAULT_METHOD,
    alpha: float = DEFAULT_ALPHA,
    beta: float = DEFAULT_BETA,
    *,
    named_documents_first: bool = True,
) -> Ranking:
    """Rank the candidates by Eq. 2 under ``method``; α weights dense against BM25, β the bonus.

    Calling it again on the same candidates with other α, β or method is re-fusion: no retrieval
    is repeated.  With β > 0 the documents the question names come first
    (:func:`named_first`, on ``names``: a keyword the question uses as an ordinary word keeps only
    the bonus); ``named_documents_first=False`` leaves them all to Eq. 2's bonus (the
    measurement against it).  With β > 0 each candidate also gets its document's breadth of
    evidence (``breadth.document_bonus``), reported as the ``breadth`` contribution.
    """
    if isinstance(method, str) and not isinstance(method, FusionMethod):
        method = FusionMethod.from_str(method)
    alpha, beta = check_alpha(alpha), check_beta(beta, method.value)
    how = METHODS[method]
    dense, bm25 = _routes(candidates.dense, candidates.bm25, how)
    w_dense, w_bm25, w_keyword = how.weights(float(alpha), float(beta))
    contributions = {"dense": w_dense * dense, "bm25": w_bm25 * bm25,
                     "keyword": w_keyword * keyword_bonus(candidates.matches),
                     "heading": how.weights(float(alpha), HEADING_WEIGHT)[2]
                     * heading_bonus(candidates, beta, named_documents_first)}
    segment = (contributions["dense"] + contributions["bm25"] + contributions["keyword"]
               + contributions["heading"])
    contributions["breadth"] = document_bonus(segment, candidates.documents, beta)
    for array in contributions.values():
        array.setflags(write=False)
    scores = segment + contributions["breadth"]
    scores.setflags(write=False)
    order = np.argsort(-scores, kind="stable")
    if names_reorder(candidates, beta):
        order = within_named(order, scores, candidates, method, float(alpha), float(beta))
    if candidates.asked is not None:
        order = asked_first(order, candidates.asked)
    if candidates.reading is not None and candidates.documents is not None:
        order = earlier_on_ties(order, scores, candidates.documents, candidates.reading)
    if candidates.sections is not None:
        order = one_per_section(order, candidates.sections)
    if beta > 0 and named_documents_first:
        order = named_first(order, named_counts(candidates), candidates.citing)
    order.setflags(write=False)
    return Ranking(
        candidate_ids=candidates.ids,
        order=order,
        scores=scores,
        contributions=contributions,
        method=method,
        alpha=float(alpha),
        beta=float(beta),
    )


HEADING_WEIGHT = 0.5
"""The own-heading bonus weighs as Eq. 2's keyword bonus would with β = 0.5, on each method's
scale.  Measured 0.2-2 on the named sets (docs/reports.md): Django's release notes gain from
0.2 up, the man pages' named questions lose from 1 up."""


def heading_bonus(c: Candidates, beta: float, named_documents_first: bool) -> np.ndarray:
    """Each candidate's own-heading weight (``Candidates.heading``) scaled to [0, 1] over the
    candidates of the documents the question names most, 0 elsewhere: the section asked about,
    found inside the document the name chose.  Nothing when the keyword route is off (β = 0)
    or names do not put their documents first."""
    if c.heading is None or beta <= 0 or not named_documents_first or not len(c):
        return np.zeros(len(c))
    counts = named_counts(c)
    if counts.max() <= 0:
        return np.zeros(len(c))
    return minmax(np.where(counts == counts.max(), c.heading, 0.0))


def named_counts(c: Candidates) -> np.ndarray:
    """Each candidate's count of keywords the question uses as its document's names."""
    return c.matches if c.names is None else c.names


def names_reorder(c: Candidates, beta: float) -> bool:
    """Whether :func:`fuse` orders the named documents' candidates by the question without
    their names: it names one and asks something besides, and the keyword route is on."""
    return c.unnamed_bm25 is not None and beta > 0


def within_named(order: np.ndarray, scores: np.ndarray, c: Candidates, method: FusionMethod,
                 alpha: float, beta: float) -> np.ndarray:
    """``order`` with each named document's candidates reordered among the places they hold.

    A question that names its document ("xxd: Display help") has the name matched by every
    segment of that document, whose paths all begin with it, and most by its shortest ones
    (the one-line NAME, the synopsis), which then outrank the section that answers.  The name's
    job is done once it has chosen the document, so the document's candidates are ordered
    among themselves by the whole question's score plus the question without the name
    ("Display help") scored the same way (each route normalised over those candidates, the
    same α).  They keep the places they had, so how a named document stands against the
    others does not change: a question that names a document it is not about ("set colours
    for ls", asked of dircolors) is ranked across documents as before.  Scores are unchanged.
    Measured on the dev sets' named questions (docs/benchmarks.md, Evaluation).
    """
    if c.unnamed_dense is None or c.unnamed_bm25 is None or c.documents is None:
        return order
    rows = ~np.isnan(c.unnamed_bm25)
    if not rows.any():
        return order
    how = METHODS[method]
    dense, bm25 = _routes(c.unnamed_dense[rows], c.unnamed_bm25[rows], how)
    w_dense, w_bm25, _ = how.weights(alpha, beta)
    key = scores.copy()
    key[rows] += w_dense * dense + w_bm25 * bm25
    order = order.copy()
    placed = rows[order]
    for doc in np.unique(c.documents[rows]):
        slots = np.flatnonzero(placed & (c.documents[order] == doc))
        members = order[slots]
        order[slots] = members[np.argsort(-key[members], kind="stable")]
    return order


def named_first(order: np.ndarray, matches: np.ndarray,
                citing: np.ndarray | None = None) -> np.ndarray:
    """``order`` with the candidates whose document the question names most (m = M > 0)
    before all others, each group in its own order.

    Eq. 2's bonus prefers the named document softly: β = 0.2 against routes normalised to
    [0, 1], so a segment of another document that shares the question's other words can
    still come first.  In a collection of near-identical reports it often does: "PostgreSQL
    15.5: update time zone data files" matches that line in every minor release equally,
    and with the soft bonus alone 5.2 % of such named questions had another release's
    segment at rank 1 (docs/benchmarks.md, Report collections).  A question that names a document means that
    document, so its segments are ranked first; when it names several equally ("3.3 and
    3.4") theirs are.  Scores are unchanged, and so is the order within each group; a
    question that names none (M = 0) keeps its order.  Measured against the soft bonus alone
    on every dev set (docs/benchmarks.md).

    ``citing`` (``Candidates.citing``) marks segments of documents the question does not name
    whose own text uses the name, given only when the name is the weakest kind (a plain word
    told a name by the collection's usage alone, ``keywords.naming``).  Those that Eq. 2 ranks
    above every named candidate, bonus and all, keep their place: "set colours for ls" is
    dircolors' description, which says ``ls``.  A version or a company names by its shape, so
    a later release's "upgrading from 15.1" never outranks 15.1 this way.
    """
    matches = np.asarray(matches)
    if not len(order) or matches.max() <= 0:
        return order
    named = matches[order] == matches.max()
    if citing is not None and named.any():
        ahead = np.arange(len(order)) < np.argmax(named)
        named = named | (ahead & (np.asarray(citing)[order] > 0))
    return np.concatenate([order[named], order[~named]])


TIE_SHARE = 0.05
"""Two candidates of one document tie when their scores differ by at most this share of the
span of every candidate's score (a scale any fusion method has).  Measured 0.01-0.2 on two
descriptions sets (docs/reports.md, "The earlier of near-tied sections"): 0.03-0.1 all
gain, 0.05 most; from 0.2 a usage line (a man page's SYNOPSIS, earlier than its DESCRIPTION)
starts to win."""


def earlier_on_ties(order: np.ndarray, scores: np.ndarray, documents: np.ndarray,
                    reading: np.ndarray, tie_share: float = TIE_SHARE) -> np.ndarray:
    """``order`` with the earlier of two near-tied candidates of one document first, for the
    documents whose title is all the question says (``reading`` >= 0).

    "Update a storage pool", asked of a collection of command pages, is the title of ``gcloud
    ... storage-pools update``: it asks what that command is.  Every segment of the page
    carries the title, so both routes score its DESCRIPTION ("Update a storage pool."), its
    positional argument ("Storage pool you want to update") and its example ("To update a
    storage pool …") within a hair of each other, and which comes first is noise.  A
    document states the general before the particular, so of candidates the scores do not
    tell apart the one it puts first is the better answer about the whole (the first passage
    is the strongest single stand-in for a document in passage retrieval: Dai & Callan's
    FirstP, 2019).  Each such document's candidates are swapped in the places they hold,
    nobody else moves, and scores are unchanged: a candidate moves above the one of its
    document ranked just before it when it comes earlier in the document and scores at most
    ``tie_share`` of the candidates' score span below it.
    """
    reading = np.asarray(reading)
    if not len(order) or reading.max() < 0:
        return order
    span = float(np.max(scores) - np.min(scores))
    tie = tie_share * span
    order = order.copy()
    for doc in np.unique(documents[reading >= 0]):
        slots = np.flatnonzero((documents[order] == doc) & (reading[order] >= 0))
        members = order[slots].tolist()
        moved = True
        while moved:  # a bubble pass over one document's few candidates
            moved = False
            for k in range(len(members) - 1):
                a, b = members[k], members[k + 1]
                if reading[b] < reading[a] and 0 <= scores[a] - scores[b] <= tie:
                    members[k], members[k + 1] = b, a
                    moved = True
        order[slots] = members
    return order


def asked_first(order: np.ndarray, asked: np.ndarray) -> np.ndarray:
    """``order`` with the candidates inside the statement the question asks for first, each
    group in its own order.

    "What were total current assets, as the balance sheet shows?" asks for a table whose rows
    are a few words and numbers: by both routes the MD&A paragraph that discusses the same
    line, or the note that details it, scores as high or higher, though the question said
    where to look.  Applied before ``one_per_section``, so the statement's best segment (one
    per section of it) leads and the sections that discuss it follow; before ``named_first``,
    so the named filing's statement comes before another filing's.  Scores are unchanged.
    """
    asked = np.asarray(asked)
    if not len(order) or not asked.any():
        return order
    inside = asked[order] > 0
    return np.concatenate([order[inside], order[~inside]])


def one_per_section(order: np.ndarray, sections: np.ndarray) -> np.ndarray:
    """``order`` with each section's best candidate first, then each one's second, and so on,
    score order kept within each round.

    A section split into many segments (a definition list's terms, a long section's pieces)
    otherwise fills the top ranks with one section: the question "copy files and set
    attributes" had ten options of cp(1)'s description as its top 10, and install(1), whose
    summary it is, at 12.  Recall counts a section once, whichever of its segments is ranked,
    and an answer is better for evidence from more sections, so the further segments of a
    section shown already wait until every section has had its turn.  This is result
    crowding (one hit per site in web search, field collapsing in Lucene) with the section as
    the unit; scores are unchanged, only the order.  Measured on every dev set (docs/benchmarks.md,
    Evaluation): Recall@5 and MRR up on all five, none down.
    """
    turn = np.empty(len(order), dtype=np.int64)
    seen: dict[int, int] = {}
    for r, section in enumerate(sections[order].tolist()):
        turn[r] = seen.get(section, 0)
        seen[section] = turn[r] + 1
    return np.asarray(order[np.argsort(turn, kind="stable")])


@dataclass(frozen=True)
class Weights:
    """α and β chosen for one question, with the reason shown beside the evidence."""

    alpha: float
    beta: float
    reason: str


def decisiveness(values: np.ndarray, k: int = 5) -> float:
    """How clearly a route's best candidate stands out, in [0, 1].

    The min-max-normalised gap between the route's top score and the mean of its next ``k``:
    near 1 when one segment wins by far (an identifier only it contains), near 0 when the route
    sees many equally good segments (a colloquial question whose words are everywhere).  A
    route that scored nothing (all equal) is 0.
    """
    scaled = minmax(_filled(np.asarray(values, dtype=np.float64)))
    if scaled.size < 2 or scaled.max() <= 0:
        return 0.0
    top = np.sort(scaled)[::-1]
    return float(top[0] - top[1 : k + 1].mean())


def adaptive_weights(candidates: Candidates, alpha: float = DEFAULT_ALPHA, beta: float = DEFAULT_BETA,
                     spread: float = 0.3) -> Weights:
    """Query-adaptive α (paper A.13 recommends adapting α and β to the query).

    α moves from the preset towards the route that is more decisive for this question, by at
    most ``spread``:  ``α = clip(α₀ + spread · (d_dense − d_bm25), 0, 1)`` with ``d`` from
    :func:`decisiveness`.  Route agreement is what it reads: when both routes single out a
    segment equally, α stays at the preset.  β stays at the preset; the keyword bonus is zero
    anyway when no document keyword is in the question (M = 0).
    """
    d_dense = decisiveness(candidates.dense)
    d_bm25 = decisiveness(candidates.bm25)
    chosen = float(np.clip(alpha + spread * (d_dense - d_bm25), 0.0, 1.0))
    if abs(chosen - alpha) < 0.01:
        why = f"routes equally decisive (dense {d_dense:.2f}, BM25 {d_bm25:.2f})"
    else:
        lead = "dense" if d_dense > d_bm25 else "BM25"
        why = f"{lead} route more decisive (dense {d_dense:.2f}, BM25 {d_bm25:.2f})"
    return Weights(round(chosen, 3), beta, f"α {chosen:.2f} from preset {alpha:.2f}: {why}")
