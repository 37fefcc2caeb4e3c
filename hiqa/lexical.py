"""Lexical route: BM25 (bm25s) over the augmented text, with HiQA's tokeniser.

Three fields, in the spirit of BM25F (Robertson, Zaragoza & Taylor 2004), whose scores add up:

* the segment's *head*: the cascaded path HCA puts on its first line (``doc > section > term``),
  scored with ``b = 0``.  With one field, a question that names the document would favour the
  document's shortest segments (its one-line summary, its synopsis): the name matches every
  segment, and BM25's length normalisation rewards the short ones.  Without length
  normalisation every segment of a document gets the same credit for the document's name, and
  one whose own heading or term matches gets more;
* its *body*, Okapi ``b = 0.75``;
* its *context*: the whole heading section it belongs to (for a term, its parent section with
  every sibling term), one BM25 document per section.  Finer segments (terms, pieces of a long
  section) carry few words, so on their own they match a question's wording by chance; the
  section says which part of which document the question is about, the segment's own fields
  say which piece of it.  This is HCA's hierarchy applied to the lexical route.

Terms of the document's title select the document, not the section: they are scored in the head
only, never in the body of that document's segments (a datasheet's part number or a man page's
name is written all over the document, and in a short section it would otherwise outweigh the
words that say what the question is about).

Word terms (letters only) are stemmed with Snowball's English stemmer, so "counts" meets
"count"; identifiers, options and CJK bigrams are left as the tokeniser wrote them.

bm25s rather than rank-bm25: both compute the same Okapi scores, but bm25s precomputes a sparse
term-document matrix so a query costs a few sparse row sums instead of a Python loop over every
document (see ``bench/bench_retrieval.py`` and the README for the measured ratio).  The index is
derived data: it is saved beside the collection and rebuilt from the Qdrant payloads when
missing or stale.
"""
from __future__ import annotations

import json
import logging
import shutil
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

import bm25s
import numpy as np
import Stemmer

from .tokenize import normalise, normalised_tokens, tokenize

logging.getLogger("bm25s").setLevel(logging.ERROR)

K1 = 1.5
B = 0.75
HEAD_B = 0.0
FORMAT = 4
"""Version of the saved index layout and term rules: an index saved by another is rebuilt."""

_STEMMER = Stemmer.Stemmer("english")


def terms(text: str, memo: dict[str, list[str]] | None = None) -> list[str]:
    """BM25 terms: HiQA's tokens with plain (ASCII-letter) words stemmed.

    ``memo`` (chunk -> terms) makes indexing a corpus cost one tokenisation per distinct
    whitespace-separated chunk instead of one per occurrence: the same result (no token spans
    whitespace, ``tokenize.normalised_tokens``), measured 4-5x faster on the dev corpus.
    """
    if memo is None:
        return _stemmed(tokenize(text))
    out: list[str] = []
    for chunk in normalise(text).split():
        found = memo.get(chunk)
        if found is None:
            found = memo[chunk] = _stemmed(normalised_tokens(chunk))
        out.extend(found)
    return out


def _stemmed(tokens: list[str]) -> list[str]:
    words = [i for i, t in enumerate(tokens) if t.isascii() and t.isalpha()]
    if words:
        stems = _STEMMER.stemWords([tokens[i] for i in words])
        for i, stem in zip(words, stems):
            tokens[i] = stem
    return tokens


def _index(texts: Sequence[str], b: float, memo: dict[str, list[str]] | None = None) -> bm25s.BM25:
    memo = {} if memo is None else memo
    retriever = bm25s.BM25(k1=K1, b=b, method="lucene")
    retriever.index([terms(t, memo) or [""] for t in texts], show_progress=False)
    return retriever


class _Field:
    """One BM25 field read straight from bm25s's precomputed term-document matrix.

    bm25s stores, for each term, the documents it occurs in and their finished BM25 weights
    (a CSC matrix).  ``bm25s.BM25.get_scores`` sums a query's rows with one ``np.add.at`` per
    term, in query order, in float32; this does the same sums with one ``np.add.at`` over the
    query's rows concatenated, which ``ufunc.at`` also applies element by element in order, so
    every score is bit for bit what bm25s returns, without its per-call overhead.
    """

    def __init__(self, bm25: bm25s.BM25):
        if bm25.nonoccurrence_array is not None:
            raise ValueError(f"BM25 variant {bm25.method!r} scores absent terms; "
                             "the lexical index is built with method='lucene'")
        self.bm25 = bm25
        self.vocab: dict[str, int] = bm25.vocab_dict
        matrix = bm25.scores
        self.indptr: np.ndarray = matrix["indptr"]
        self.indices: np.ndarray = matrix["indices"]
        self.data: np.ndarray = matrix["data"]
        self.n = int(matrix["num_docs"])

    def named_postings(self, title_docs: dict[str, np.ndarray], codes: np.ndarray
                       ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For each title term, the documents of this field it occurs in *and* whose document
        it names (``codes``: each field document's document as an integer), with its weight
        there as float64: exactly what a query holding the term takes back.  One pass over the
        title terms' rows, done once per index instead of once per query."""
        names = [t for t in title_docs if t in self.vocab]
        if not names or not len(codes):
            return {}
        rows = [np.arange(self.indptr[r], self.indptr[r + 1]) for r in
                (self.vocab[t] for t in names)]
        entry = np.concatenate(rows)  # positions in the matrix of every title term's postings
        owner = np.repeat(np.arange(len(names)), [len(r) for r in rows])  # and whose they are
        span = int(codes.max()) + 1
        wanted = np.concatenate([i * span + title_docs[t] for i, t in enumerate(names)])
        hit = np.isin(owner * span + codes[self.indices[entry]], wanted)
        entry, bounds = entry[hit], np.searchsorted(owner[hit], np.arange(len(names) + 1))
        return {t: (self.indices[entry[lo:hi]], self.data[entry[lo:hi]].astype(np.float64))
                for t, lo, hi in zip(names, bounds[:-1], bounds[1:]) if hi > lo}

    def sums(self, tokens: Sequence[str]) -> np.ndarray:
        """float32 BM25 score of every document for ``tokens`` (a repeated token counts again)."""
        scores = np.zeros(self.n, dtype=self.data.dtype)
        rows = [r for r in map(self.vocab.get, tokens) if r is not None]
        if not rows:
            return scores
        spans = self.indptr[np.array(rows)[:, None] + (0, 1)].tolist()
        if len(spans) == 1:  # one row: no repeats to accumulate
            start, end = spans[0]
            scores[self.indices[start:end]] = self.data[start:end]
        else:
            np.add.at(scores, np.concatenate([self.indices[a:b] for a, b in spans]),
                      np.concatenate([self.data[a:b] for a, b in spans]))
        return scores


def _without_title_terms(sums: np.ndarray, title_terms: Counter[str],
                         named: dict[str, tuple[np.ndarray, np.ndarray]]) -> np.ndarray:
    """A field's scores (float64) with each title term's share taken back in the documents
    it names, floored at 0 (a float32 sum can round below the share it holds).  Only those
    documents change; every other score is a sum of positive weights."""
    scores = sums.astype(np.float64)
    changed = []
    for t, count in title_terms.items():
        if t in named:
            docs, weights = named[t]
            scores[docs] -= count * weights
            changed.append(docs)
    if changed:
        docs = np.concatenate(changed) if len(changed) > 1 else changed[0]
        scores[docs] = np.maximum(scores[docs], 0.0)
    return scores


class LexicalIndex:
    """BM25 scores for every indexed segment, aligned with ``ids``.

    ``context_of[i]`` is the position of segment ``i``'s section in the context field.
    """

    def __init__(self, ids: Sequence[str], doc_ids: Sequence[str] | None = None, *,
                 body: bm25s.BM25 | None = None, head: bm25s.BM25 | None = None,
                 context: bm25s.BM25 | None = None, context_of: Sequence[int] = (),
                 context_docs: Sequence[str] = (), titles: dict[str, str] | None = None):
        self.ids = list(ids)
        self.doc_ids = np.asarray(list(doc_ids) if doc_ids is not None else [""] * len(self.ids),
                                  dtype=object)
        self._fields = {name: _Field(f) for name, f in
                        (("body", body), ("head", head), ("context", context)) if f is not None}
        self._body = self._fields.get("body")
        self._head = self._fields.get("head")
        self._context = self._fields.get("context")
        self._context_of = np.asarray(context_of, dtype=np.intp)
        self._context_docs = np.asarray(list(context_docs), dtype=object)
        self._pos = {sid: i for i, sid in enumerate(self.ids)}
        self.titles = dict(titles or {})
        # documents as small integers, so (title term, document) pairs match as integers
        code = {d: i for i, d in enumerate(dict.fromkeys([*self.doc_ids, *self._context_docs]))}
        by_term: dict[str, list[int]] = {}
        for doc, title in self.titles.items():
            for t in set(terms(title)):
                if doc in code:
                    by_term.setdefault(t, []).append(code[doc])
        title_docs = {t: np.array(c, dtype=np.int64) for t, c in by_term.items()}
        self._title_terms = frozenset(title_docs)
        doc_codes = np.array([code[d] for d in self.doc_ids], dtype=np.int64)
        context_codes = np.array([code[d] for d in self._context_docs], dtype=np.int64)
        # title term -> (field documents it names, its weight there), per field
        self._body_named = self._body.named_postings(title_docs, doc_codes) if self._body else {}
        self._context_named = (self._context.named_postings(title_docs, context_codes)
                               if self._context else {})

    @classmethod
    def build(cls, ids: Sequence[str], texts: Sequence[str],
              doc_ids: Sequence[str] | None = None,
              heads: Sequence[str] | None = None,
              titles: dict[str, str] | None = None,
              contexts: Sequence[str] | None = None) -> LexicalIndex:
        """Index the segments' bodies (``texts``), ``heads`` (cascaded paths, when the strategy
        has them) and ``contexts`` (a key naming each segment's section: segments with one key
        form one context document).  ``doc_ids`` (aligned) lets queries be scoped to documents;
        ``titles`` (document id -> title) keeps title terms out of that document's body and
        context scores."""
        if not ids:
            return cls([])
        doc_list = list(doc_ids) if doc_ids is not None else [""] * len(ids)
        memo: dict[str, list[str]] = {}  # one tokenisation per distinct chunk, all fields
        head = _index(heads, HEAD_B, memo) if heads is not None and any(heads) else None
        context = None
        context_of: list[int] = []
        context_docs: list[str] = []
        if contexts is not None:
            position: dict[str, int] = {}
            parts: list[list[str]] = []
            for key, text, doc, h in zip(contexts, texts, doc_list, heads or [""] * len(ids)):
                if key not in position:
                    position[key] = len(parts)
                    parts.append([])
                    context_docs.append(doc)
                context_of.append(position[key])
                own = h.rsplit(" > ", 1)[-1] if h else ""
                parts[position[key]].append(f"{own}\n{text}" if own else text)
            context = _index(["\n\n".join(p) for p in parts], B, memo)
        return cls(ids, doc_list, body=_index(texts, B, memo), head=head, context=context,
                   context_of=context_of, context_docs=context_docs,
                   titles=titles if head is not None else None)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment, head + body + context (0 where no query term occurs)."""
        if self._body is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        tokens = terms(query)
        title_terms = Counter(t for t in tokens if t in self._title_terms)
        total = _without_title_terms(self._body.sums(tokens), title_terms, self._body_named)
        if self._head is not None:
            total += self._head.sums(tokens)
        if self._context is not None:
            context = _without_title_terms(self._context.sums(tokens), title_terms,
                                           self._context_named)
            total += context.take(self._context_of)
        return total

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def positions(self, segment_ids: Sequence[str]) -> np.ndarray:
        """Each id's position in the arrays ``scores`` returns, -1 where the index lacks it:
        a candidate list's scores are then one fancy index, not a loop over the candidates."""
        get = self._pos.get
        return np.fromiter((get(sid, -1) for sid in segment_ids), dtype=np.intp,
                           count=len(segment_ids))

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory.with_name(directory.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for name, field in self._fields.items():
            field.bm25.save(str(tmp / name), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({
            "format": FORMAT, "generation": generation, "ids": self.ids,
            "doc_ids": [str(d) for d in self.doc_ids], "titles": self.titles,
            "fields": list(self._fields),
            "context_of": self._context_of.tolist(),
            "context_docs": [str(d) for d in self._context_docs]}))
        # ids.json goes last: it names the generation, so a crash mid-save reads as stale.
        (directory / "ids.json").unlink(missing_ok=True)
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "ids.json"):
            target = directory / f.name
            if target.is_dir():
                shutil.rmtree(target)
            f.replace(target)
        tmp.rmdir()

    @classmethod
    def load(cls, directory: Path, generation: str) -> LexicalIndex | None:
        """The saved index if it was built for ``generation``; ``None`` if missing or stale."""
        try:
            saved = json.loads((directory / "ids.json").read_text())
        except (OSError, ValueError):
            return None
        if saved.get("generation") != generation or saved.get("format") != FORMAT:
            return None
        if not saved["ids"]:
            return cls([])
        try:
            fields = {name: bm25s.BM25.load(str(directory / name), show_progress=False)
                      for name in saved["fields"]}
        except Exception:
            return None  # a half-written or foreign index: rebuild from the store
        return cls(saved["ids"], saved["doc_ids"], body=fields.get("body"),
                   head=fields.get("head"), context=fields.get("context"),
                   context_of=saved["context_of"], context_docs=saved["context_docs"],
                   titles=saved["titles"])
