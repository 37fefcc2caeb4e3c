"""Lexical route: BM25 (bm25s's Lucene weights) over the augmented text, with HiQA's tokeniser.

Three fields, in the spirit of BM25F (Robertson, Zaragoza & Taylor 2004), whose scores add up:

* the segment's *head*: the cascaded path HCA puts on its first line (``doc > section > term``)
  and the document's lead on its second (``hiqa.augment.document_lead``), scored with
  ``b = 0``.  With one field, a question that names the document would favour the
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
words that say what the question is about) -- unless the question says nothing else: when every
term of it is in a document's title ("update a storage pool", asked of ``gcloud ... storage-pools
update``), that document's bodies keep them, since without them nothing lexical tells its
sections apart and the head scores every one the same (#45: the descriptions set's MRR 0.818 ->
0.834, no other set changed; docs/reports.md).

Word terms (letters only) are stemmed with Snowball's English stemmer, so "counts" meets
"count"; identifiers, options and CJK bigrams are left as the tokeniser wrote them.

Scores are bm25s's (method ``lucene``): a precomputed sparse term-document matrix of BM25
weights, so a query costs a few row sums instead of a Python loop over every document (see
``bench/bench_retrieval.py`` and docs/benchmarks.md for the measured ratio against rank-bm25).  The
matrix is built here, from term counts, with the same float operations as bm25s's ``index()``
(``bm25_weights``; ``tests/test_lexical.py`` checks the weights bit for bit against bm25s): at 200,000
segments bm25s's ``index()`` took 36 s of a 77 s rebuild (load 4.6), per-document Python loops
and Counters, where ``bm25_weights`` weighs the three fields in about 4 s (load 4; docs/benchmarks.md, Store).
Owning the counts is also what makes the index incremental: each document version's term
counts are kept (``Terms``, saved with the index), so an ingest tokenises only the documents it
writes and recomputes the weights, whose N, average length and idf are collection-wide, from the
counts.  bm25s is no longer imported here: it stays a dependency as the reference the tests and
``bench/bench_retrieval.py`` compare with.

The index is derived data: it is saved beside the collection as plain ``.npy`` arrays (memory-
mapped when opened) and rebuilt from the store's payloads when missing or stale.
"""
from __future__ import annotations

import json
import os
import shutil
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from functools import reduce
from pathlib import Path

import numpy as np

from hiqa.index.terms import FORMAT, HEAD_B, B, LexicalText, Terms, bm25_weights, terms


class _Field:
    """One BM25 field: its term-document weight matrix (CSC, ``bm25_weights``) and the vocabulary.

    ``bm25s.BM25.get_scores`` sums a query's rows with one ``np.add.at`` per term, in query
    order, in float32; ``sums`` does the same sums with one ``np.add.at`` over the query's rows
    concatenated, which ``ufunc.at`` also applies element by element in order, so every score
    is bit for bit what bm25s returns, without its per-call overhead.
    """

    def __init__(self, vocab: dict[str, int], indptr: np.ndarray, indices: np.ndarray,
                 data: np.ndarray, n: int):
        self.vocab = vocab
        self.indptr = indptr
        self.indices = indices
        self.data = data
        self.n = n

    def holding(self, term: str) -> np.ndarray | None:
        """The field documents that hold ``term`` (sorted positions), None when the
        vocabulary does not know it."""
        row = self.vocab.get(term)
        return None if row is None else self.indices[self.indptr[row]:self.indptr[row + 1]]

    def named_postings(self, title_docs: dict[str, np.ndarray], codes: np.ndarray
                       ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """For each title term, the documents of this field it occurs in *and* whose document
        it names (``codes``: each field document's document as an integer), with its weight
        there as float64: exactly what a query holding the term takes back.  One pass over the
        title terms' rows, done once per term and index instead of once per query."""
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
                         named: dict[str, tuple[np.ndarray, np.ndarray]],
                         codes: np.ndarray, whole: np.ndarray | None) -> np.ndarray:
    """A field's scores (float64) with each title term's share taken back in the documents
    it names but not in ``whole`` (codes of the documents the question names wholly, ``codes``
    the field documents' codes), floored at 0 (a float32 sum can round below the share it holds).  Only those
    documents change; every other score is a sum of positive weights."""
    scores = sums.astype(np.float64)
    changed = []
    for t, count in title_terms.items():
        if t in named:
            docs, weights = named[t]
            if whole is not None:
                keep = ~np.isin(codes[docs], whole)
                docs, weights = docs[keep], weights[keep]
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
                 vocab: Sequence[str] = (), fields: Mapping[str, _Field] | None = None,
                 context_of: Sequence[int] | np.ndarray = (), context_docs: Sequence[str] = (),
                 titles: dict[str, str] | None = None):
        self.ids = list(ids)
        self.doc_ids = np.asarray(list(doc_ids) if doc_ids is not None else [""] * len(self.ids),
                                  dtype=object)
        self.vocab = list(vocab)
        self._fields = dict(fields or {})
        self._body = self._fields.get("body")
        self._head = self._fields.get("head")
        self._context = self._fields.get("context")
        self._context_of = np.asarray(context_of, dtype=np.intp)
        self._context_docs = np.asarray(list(context_docs), dtype=object)
        self._pos = {sid: i for i, sid in enumerate(self.ids)}
        self.titles = dict(titles or {})
        # documents as small integers, so (title term, document) pairs match as integers
        code = {d: i for i, d in enumerate(dict.fromkeys([*self.doc_ids, *self._context_docs]))}
        self._code_docs = list(code)  # code -> document id
        by_term: dict[str, list[int]] = {}
        for doc, title in self.titles.items():
            for t in set(terms(title)):
                if doc in code:
                    by_term.setdefault(t, []).append(code[doc])
        self._title_docs = {t: np.array(c, dtype=np.int64) for t, c in by_term.items()}
        self._title_terms = frozenset(self._title_docs)
        self._codes = {"body": np.array([code[d] for d in self.doc_ids], dtype=np.int64),
                       "context": np.array([code[d] for d in self._context_docs], dtype=np.int64)}
        self._named: dict[str, dict[str, tuple[np.ndarray, np.ndarray]]] = {
            "body": {}, "context": {}}
        self._used_by: dict[str, frozenset[str]] = {}
        self._n_documents = 0  # counted on first use (head_share), not on every open

    def _named_postings(self, field: str, title_terms: Iterable[str]
                        ) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Title term -> (documents of ``field`` it names, its weight there), each term's
        computed the first time a question holds it: at 200,000 segments computing every title
        term's when the index opened cost 0.3 s of opening (docs/benchmarks.md, Store)."""
        named = self._named[field]
        new = {t: self._title_docs[t] for t in title_terms if t not in named}
        if new:
            found = self._fields[field].named_postings(new, self._codes[field])
            none = (np.zeros(0, dtype=np.intp), np.zeros(0))
            named.update({t: found.get(t, none) for t in new})
        return named

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
        n = len(ids)
        docs = list(doc_ids) if doc_ids is not None else [""] * n
        keys: Sequence[str | None] = contexts if contexts is not None else [None] * n
        titles = titles or {}
        return cls.from_terms(Terms.of([
            LexicalText(i, d, d, h or "", t, c, titles.get(d, "")) for i, t, d, h, c in
            zip(ids, texts, docs, heads or [""] * n, keys)]))

    @classmethod
    def from_terms(cls, t: Terms) -> LexicalIndex:
        """The index of a tokenised corpus, its rows in the corpus's order."""
        if not t.ids:
            return cls([])
        vocab = {w: i for i, w in enumerate(t.vocab)}
        fields = {"body": _Field(vocab, *bm25_weights(t.body, len(vocab), B), len(t.ids))}
        if t.has_head.any():
            fields["head"] = _Field(vocab, *bm25_weights(t.head, len(vocab), HEAD_B), len(t.ids))
        if t.context is not None:
            fields["context"] = _Field(vocab, *bm25_weights(t.context, len(vocab), B),
                                       len(t.context_docs))
        return cls(t.ids, t.doc_ids, vocab=t.vocab, fields=fields, context_of=t.context_of,
                   context_docs=t.context_docs, titles=t.titles if "head" in fields else None)

    def scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment, head + body + context (0 where no query term occurs)."""
        if self._body is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        tokens = terms(query)
        title_terms = Counter(t for t in tokens if t in self._title_terms)
        whole = self._wholly_named(tokens)
        total = _without_title_terms(self._body.sums(tokens), title_terms,
                                     self._named_postings("body", title_terms),
                                     self._codes["body"], whole)
        if self._head is not None:
            total += self._head.sums(tokens)
        if self._context is not None:
            context = _without_title_terms(self._context.sums(tokens), title_terms,
                                           self._named_postings("context", title_terms),
                                           self._codes["context"], whole)
            total += context.take(self._context_of)
        return total

    def _wholly_named(self, tokens: Sequence[str]) -> np.ndarray | None:
        """The documents (as codes) whose title holds every term of the question the index
        knows, None when there are none: for them a title term is all the question says, so
        their bodies keep it (see the module docstring)."""
        known = {t for t in tokens if self._body is not None and t in self._body.vocab}
        if not known or not known <= self._title_terms:
            return None
        common = reduce(np.intersect1d, (self._title_docs[t] for t in known))
        return common if len(common) else None

    def wholly_titled(self, query: str) -> frozenset[str]:
        """The documents whose title holds every term of ``query`` the index knows: a question
        that is all title ("update a storage pool") asks about that document as a whole."""
        codes = self._wholly_named(terms(query))
        return frozenset() if codes is None else frozenset(self._code_docs[c] for c in codes)

    def head_scores(self, query: str) -> np.ndarray:
        """BM25 score of every segment's head alone (its cascaded path and lead): which
        segments sit under a heading that holds the query's terms, however their bodies read."""
        if self._head is None:
            return np.zeros(len(self.ids), dtype=np.float64)
        return self._head.sums(terms(query)).astype(np.float64)

    def body_documents(self, text: str) -> frozenset[str] | None:
        """The documents some segment body of which holds every BM25 term of ``text``: how
        widely the collection uses a word (``keywords.naming``); None when ``text`` has no
        term the index keeps (a stop word).  Cached per index."""
        words = set(terms(text))
        if not words:
            return None
        found = self._used_by.get(text)
        if found is None:
            found = self._used_by[text] = frozenset.intersection(
                *(self._documents(self._body, "\x00body:", t) for t in words))
        return found

    def using(self, text: str) -> np.ndarray:
        """The positions of the segments whose own body holds every BM25 term of ``text``
        (sorted; empty when ``text`` has no term the index keeps)."""
        held = [self._body.holding(t) for t in set(terms(text))] if self._body is not None else []
        found = [h for h in held if h is not None]
        if not found or len(found) < len(held):
            return np.zeros(0, dtype=np.intp)
        return reduce(np.intersect1d, found)

    def head_share(self, term: str) -> float:
        """The share of the collection's documents some segment head of which holds ``term``
        (a BM25 term, stemmed): a word of the headings nearly every document has ("name",
        "descript" in man pages) is the document kind's, not a section's own.  Cached."""
        return self._share(self._documents(self._head, "\x00head:", term))

    def body_share(self, term: str) -> float:
        """The same for the bodies: a word nearly every document uses ("were", "changes" in
        release notes) is the collection's common vocabulary."""
        return self._share(self._documents(self._body, "\x00body:", term))

    def _documents(self, field: _Field | None, prefix: str, term: str) -> frozenset[str]:
        """The documents some segment of which holds ``term`` in ``field``.  Cached."""
        found = self._used_by.get(prefix + term)
        if found is None:
            segs = field.holding(term) if field is not None else None
            found = self._used_by[prefix + term] = frozenset(
                () if segs is None else (str(d) for d in np.unique(self.doc_ids[segs])))
        return found

    def _share(self, documents: frozenset[str]) -> float:
        if not self._n_documents:  # counted on first use, not on every open
            self._n_documents = len(set(self.doc_ids.tolist())) or 1
        return len(documents) / self._n_documents

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def positions(self, segment_ids: Sequence[str]) -> np.ndarray:
        """Each id's position in the arrays ``scores`` returns, -1 where the index lacks it:
        a candidate list's scores are then one fancy index, not a loop over the candidates."""
        get = self._pos.get
        return np.fromiter((get(sid, -1) for sid in segment_ids), dtype=np.intp,
                           count=len(segment_ids))

    def sections(self, positions: np.ndarray) -> np.ndarray:
        """The heading section of the segments at ``positions`` (as ``positions()`` gives
        them): its row in the context field, or, where the index has no context field (``fixed``
        windows have no section), a number of the segment's own."""
        if len(self._context_of) == len(self.ids):
            return self._context_of[positions]
        return -1 - positions  # negative: never a context row

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str, terms: Terms | None = None) -> None:
        """The weight matrices as ``.npy`` files (memory-mapped by ``load``) and, with
        ``terms`` (the corpus this index was built from), its term counts for the next
        incremental build."""
        directory.mkdir(parents=True, exist_ok=True)
        _sweep_tmp(directory)
        tmp = directory.with_name(f"{directory.name}.tmp-{os.getpid()}")  # one per process
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        for name, field in self._fields.items():
            for part in ("indptr", "indices", "data"):
                np.save(tmp / f"{name}.{part}.npy", getattr(field, part))
        np.save(tmp / "context_of.npy", self._context_of)
        saved = terms.save(tmp) if terms is not None else {}
        (tmp / "index.json").write_text(json.dumps({
            "format": FORMAT, "generation": generation, "ids": self.ids,
            "doc_ids": [str(d) for d in self.doc_ids], "titles": self.titles,
            "fields": list(self._fields), "vocab": self.vocab,
            "context_docs": [str(d) for d in self._context_docs], **saved}))
        # index.json goes last: it names the generation, so a crash mid-save reads as stale.
        (directory / "index.json").unlink(missing_ok=True)
        for f in directory.iterdir():
            if f.is_dir():
                shutil.rmtree(f)
            else:
                f.unlink()
        for f in sorted(tmp.iterdir(), key=lambda f: f.name == "index.json"):
            f.replace(directory / f.name)
        tmp.rmdir()

    @classmethod
    def load(cls, directory: Path, generation: str) -> LexicalIndex | None:
        """The saved index if it was built for ``generation``; ``None`` if missing or stale."""
        try:
            saved = json.loads((directory / "index.json").read_text())
        except (OSError, ValueError):
            return None
        if saved.get("generation") != generation or saved.get("format") != FORMAT:
            return None
        if not saved["ids"]:
            return cls([])
        vocab = {w: i for i, w in enumerate(saved["vocab"])}
        sizes = {"context": len(saved["context_docs"])}
        try:
            fields = {name: _Field(vocab, *_mapped(directory, name),
                                   sizes.get(name, len(saved["ids"])))
                      for name in saved["fields"]}
            context_of = np.load(directory / "context_of.npy")
        except (OSError, ValueError):
            return None  # a half-written or foreign index: rebuild from the store
        return cls(saved["ids"], saved["doc_ids"], vocab=saved["vocab"], fields=fields,
                   context_of=context_of, context_docs=saved["context_docs"],
                   titles=saved["titles"])


def _mapped(directory: Path, field: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """A saved field's matrix, memory-mapped, as plain arrays (slicing an ``np.memmap`` costs a
    Python call, and a query slices every query term's row)."""
    indptr, indices, data = (np.asarray(np.load(directory / f"{field}.{part}.npy", mmap_mode="r"))
                             for part in ("indptr", "indices", "data"))
    return indptr, indices, data


def _sweep_tmp(directory: Path) -> None:
    """Remove the half-written copies that processes no longer running left beside
    ``directory`` (a crash mid-save); a live process's copy is its own business."""
    for tmp in directory.parent.glob(f"{directory.name}.tmp*"):
        pid = tmp.name.rpartition("-")[2]
        if pid.isdigit() and Path(f"/proc/{pid}").exists():
            continue
        shutil.rmtree(tmp, ignore_errors=True)
