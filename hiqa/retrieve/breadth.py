"""The document route: how broadly a candidate's document matches the question.

Every other part of Eq. 2 scores a segment by itself; the keyword bonus alone reads its
document, and only through the names the question gives.  A question that names nothing still
says which document it is about when that document matches it in several places: this module
adds that evidence to each of the document's segments (:func:`document_bonus`), and
:func:`hiqa.retrieve.fusion.fuse` reports it as the ``breadth`` part of the fused score.
"""

from __future__ import annotations

import numpy as np

DOCUMENT_WEIGHT = 0.2
"""The document route's weight, a share of the mean of the document's best ``DOCUMENT_DEPTH``
fused scores.  Measured 0.1-0.5 with three ways to sum a document up (docs/reports.md, "The
document route"): from 0.2 both descriptions sets gain; from 0.3 the tldr set loses."""

DOCUMENT_DEPTH = 3
"""How many of a document's candidates its evidence is the mean of (a document with fewer
counts the missing ones as the weakest candidate): a document the question matches in one
place is no more likely the one asked about than its one segment says."""


def document_bonus(segment: np.ndarray, documents: np.ndarray | None, beta: float,
                   weight: float = DOCUMENT_WEIGHT, depth: int = DOCUMENT_DEPTH) -> np.ndarray:
    """Each candidate's share of its document's evidence: ``weight`` times the mean of the
    document's ``depth`` best ``segment`` scores, each counted above the weakest candidate's
    and the missing ones as that weakest (0), so it reads the same on every method's scale.

    A question that describes a document as a whole ("make a hexdump or do the reverse",
    xxd's one-line summary) matches it in several sections, while a stray segment of another
    document (an option of ln(1) that says "reverse") matches it in one.  Ranked by segment
    alone the stray one can push the section that answers below rank 5; with the document's
    breadth of evidence added, every segment of the document the question is about rises
    together.  This is passage retrieval's document-score interpolation (Callan 1994; Bendersky
    & Kurland 2008) with the section's own document as the document, and the mean of the best
    few rather than the best one, so one strong segment does not lift its document's weak ones
    (max, measured, costs the Chinese set a question).  It is document-level evidence like
    Eq. 2's keyword bonus, so it comes and goes with it: nothing at β = 0.
    """
    segment = np.asarray(segment, dtype=np.float64)
    if documents is None or beta <= 0 or not len(segment):
        return np.zeros(len(segment))
    documents = np.asarray(documents)
    above = segment - segment.min()  # on any method's scale, the weakest candidate is 0
    bonus = np.empty(len(segment))
    for doc in np.unique(documents):
        mine = documents == doc
        best = np.sort(above[mine])[::-1][:depth]
        bonus[mine] = weight * float(best.sum()) / depth
    return bonus
