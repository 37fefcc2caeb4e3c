"""Derived data of one registry generation: the lexical index and the segments read so far.

The lexical index is built from the registered versions' points only, so it answers "is this
segment visible" without reading the store.  One copy per registry generation is kept in the
handle cache (``hiqa.handles``); the index is also saved under ``collections/<name>/derived/``
because rebuilding it costs more than loading it (docs/benchmarks.md, Store).
"""
from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from hiqa.handles import HANDLES
from hiqa.index.lexical import LexicalIndex
from hiqa.index.parts import Parts
from hiqa.index.payload import LEXICAL_FIELDS, payload_key, segment_reader
from hiqa.index.terms import Terms, gather_terms, lexical_text
from hiqa.model import Segment


@dataclass
class Derived:
    """One registry generation's lexical index, visible version keys and fetched segments."""

    generation: str
    lexical: LexicalIndex
    versions: list[str]
    segments: dict[str, Segment] = field(default_factory=dict)
    keywords: dict[str, frozenset[str]] = field(default_factory=dict)
    """Each document's normalised keywords, filled as questions need them."""
    clean_at: int | None = None
    """The store's write count when it was found to hold registered versions only (None: not
    known, e.g. a server); while it has not moved, the dense route needs no version filter."""

    def version_filter(self, store: Any) -> list[str] | None:
        """The version keys to filter on, or None when the store holds nothing else."""
        if self.clean_at is not None and store.writes == self.clean_at:
            return None
        return self.versions


def derived(parts: Parts, *, force: bool = False, fresh: Sequence[Terms] = ()) -> Derived:
    """The collection's derived data for its current generation (built or loaded once).

    ``force`` rebuilds the lexical index even when one is saved for this generation; ``fresh``
    are the term counts of documents an ingest has just written (``hiqa.index.prepare``), so their
    payloads need not be read back from the store (``lexical_terms``).  Threads of one process
    build it one at a time: two sessions of the app (one asking, one finishing an ingest) wrote
    into one folder at once and one failed ``FileExistsError``.
    """
    with HANDLES.build_lock(parts.handle_key):  # another thread's build is waited for
        parts.registry.refresh()
        gen = parts.registry.generation
        cached = HANDLES.derived.get(parts.handle_key)
        if cached is not None and cached.generation == gen and not force:
            return cached
        directory = parts.lexical_dir
        versions = parts.registry.version_keys()
        lexical = None if force else LexicalIndex.load(directory, gen)
        if lexical is None:
            corpus = lexical_terms(parts, directory, fresh)
            lexical = LexicalIndex.from_terms(corpus)
            lexical.save(directory, gen, corpus)
        entry = Derived(gen, lexical, versions, {})
        if parts.store.writes is not None:
            writes = parts.store.writes
            if parts.store.count() == parts.registry.segment_count():
                entry.clean_at = writes
        HANDLES.derived[parts.handle_key] = entry
        return entry


def lexical_terms(parts: Parts, directory: Path, fresh: Sequence[Terms] = ()) -> Terms:
    """The term counts of every registered segment, tokenising as little as possible.

    Each registered version's counts come from, in turn: ``fresh`` (what an ingest just wrote,
    so it wins over anything saved for the same version), the counts saved with the last index
    (``Terms.load``: versions still registered with as many segments as the registry says),
    and, for versions neither holds, the store's payloads.  Rows end in segment-id order
    (``Terms.join``), so the corpus, and every score, is the one a full rebuild gives.
    """
    counts, wanted = gather_terms(parts.registry.version_segments(), directory, fresh)
    if wanted:
        read = segment_reader(parts.registry.data)
        stored = [lexical_text(read(rec.id, rec.payload), key)
                  for rec in parts.store.scroll(fields=LEXICAL_FIELDS)
                  if (key := payload_key(rec.payload)) in wanted]
        counts.append(Terms.of(stored).select(wanted))
    return Terms.join(counts)


