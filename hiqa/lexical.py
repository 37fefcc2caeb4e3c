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


def _scores(retriever: bm25s.BM25 | None, tokens: list[str], n: int) -> np.ndarray:
    if retriever is None:
        return np.zeros(n, dtype=np.float64)
    known = [t for t in tokens if t in retriever.vocab_dict]
    if not known:
        return np.zeros(n, dtype=np.float64)
    return np.asarray(retriever.get_scores(known), dtype=np.float64)


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
        self._body, self._head, self._context = body, head, context
        self._context_of = np.asarray(context_of, dtype=np.int64)
        self._context_docs = np.asarray(list(context_docs), dtype=object)
        self._pos = {sid: i for i, sid in enumerate(self.ids)}
        self.titles = dict(titles or {})
        # documents as small integers, so "segments of these documents" is a fast integer isin
        code = {d: i for i, d in enumerate(dict.fromkeys([*self.doc_ids, *self._context_docs]))}
        self._doc_codes = np.array([code[d] for d in self.doc_ids], dtype=np.int64)
        self._context_codes = np.array([code[d] for d in self._context_docs], dtype=np.int64)
        self._title_docs: dict[str, np.ndarray] = {}  # title term -> codes of docs titled with it
        by_term: dict[str, list[int]] = {}
        for doc, title in self.titles.items():
            for t in set(terms(title)):
                if doc in code:
                    by_term.setdefault(t, []).append(code[doc])
        self._title_docs = {t: np.array(c, dtype=np.int64) for t, c in by_term.items()}

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
        n = len(self.ids)
        if self._body is None:
            return np.zeros(n, dtype=np.float64)
        tokens = terms(query)
        title_terms = Counter(t for t in tokens if t in self._title_docs)
        body = self._without_title_terms(self._body, tokens, title_terms, self._doc_codes)
        total = body + _scores(self._head, tokens, n)
        if self._context is not None:
            context = self._without_title_terms(self._context, tokens, title_terms,
                                                self._context_codes)
            total += context[self._context_of]
        return total

    def _without_title_terms(self, field: bm25s.BM25, tokens: list[str],
                             title_terms: Counter[str], docs: np.ndarray) -> np.ndarray:
        """A field's scores with each title term's share removed in the documents it names."""
        scores = _scores(field, tokens, len(docs))
        for t, count in title_terms.items():
            scores -= count * _scores(field, [t], len(docs)) * np.isin(docs, self._title_docs[t])
        return np.maximum(scores, 0.0)

    def position(self, segment_id: str) -> int | None:
        return self._pos.get(segment_id)

    def __len__(self) -> int:
        return len(self.ids)

    def save(self, directory: Path, generation: str) -> None:
        directory.mkdir(parents=True, exist_ok=True)
        tmp = directory.with_name(directory.name + ".tmp")
        if tmp.exists():
            shutil.rmtree(tmp)
        tmp.mkdir(parents=True)
        fields = {"body": self._body, "head": self._head, "context": self._context}
        for name, field in fields.items():
            if field is not None:
                field.save(str(tmp / name), show_progress=False)
        (tmp / "ids.json").write_text(json.dumps({
            "format": FORMAT, "generation": generation, "ids": self.ids,
            "doc_ids": [str(d) for d in self.doc_ids], "titles": self.titles,
            "fields": [name for name, field in fields.items() if field is not None],
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
