"""Answer generation with citations (paper §3.4, generation enhancement).

The retrieved segments are shown to the LLM as numbered context blocks headed by their cascaded
path (``[2] Manual v2 > Installation > Linux (p. 3)``), so the model knows which of several
near-identical documents a passage comes from and can cite it as ``[2]``.  Cited numbers are
checked against the blocks actually given.  Without an endpoint the answer is *extractive*: the
sentences of the context blocks that best answer the question, best first, each with its
citation (``hiqa.answer.extractive``), after the statement figures it asks about, each with its
row, its column's year and its page (``hiqa.answer.figures``), and first the measure it asks
for, computed from those cells with its formula shown (``hiqa.answer.calc``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any, Literal

from hiqa.answer.calc import compute
from hiqa.answer.extractive import pick_sentences
from hiqa.answer.figures import asked_unit, pick_figures, rows_table
from hiqa.augment import render_path
from hiqa.llm import ChatModel
from hiqa.model import Segment, segment_pages_label

AnswerMode = Literal["llm", "extractive"]

SYSTEM_PROMPT = (
    "You answer questions about technical documents using only the numbered context blocks "
    "given by the user. Each block starts with [n] and the document path it comes from. "
    "After every statement, cite the block(s) it is based on as [n], for example [1] or [2][3]. "
    "Only cite numbers that appear in the context. If the context does not contain the answer, "
    "say that the documents do not say. Be brief."
)

NO_EVIDENCE = "No passages were retrieved for this question, so there is nothing to answer from."
EXTRACTIVE_NOTE = (
    "No LLM endpoint is configured (set HIQA_LLM_BASE_URL and HIQA_LLM_MODEL), so this answer "
    "is extractive: the sentences are quoted from the best-matching passages."
)
NO_SENTENCE = ("The best-matching passage [1] has no sentence to quote (it is code or a table); "
               "see the source below.")

_CITATION = re.compile(r"\[(\d+(?:\s*(?:[,;]|-|–)\s*\d+)*)\]")


@dataclass(frozen=True)
class Answer:
    """The reply shown to the user; ``citations`` are valid block numbers in order of use."""

    text: str
    citations: tuple[int, ...]
    invalid_citations: tuple[int, ...]
    mode: AnswerMode
    note: str


def block_header(segment: Segment, number: int) -> str:
    """``[n] Document title > Chapter > Section (p. 3)`` for one context block (pages only for
    paginated sources such as PDF)."""
    header = render_path([segment.doc_title, *segment.section_path])
    pages = segment_pages_label(segment)
    if pages:
        header += f" ({pages})"
    return f"[{number}] {header}"


def build_context(segments: Sequence[Segment]) -> str:
    """Numbered, path-annotated context blocks, one per segment, in ranking order; a block
    whose statement rows are lines of text is followed by them as a table, each figure under
    its year (``figures.rows_table``), so the answer can cite the cell it read."""
    blocks = []
    for i, seg in enumerate(segments, 1):
        table = rows_table(seg)
        extra = f"\n\nThe figures of [{i}] by row and year:\n{table}" if table else ""
        blocks.append(f"{block_header(seg, i)}\n{seg.text.strip()}{extra}")
    return "\n\n".join(blocks)


def build_messages(question: str, segments: Sequence[Segment]) -> list[dict[str, str]]:
    """The chat messages; when the question asks for a measure the blocks' cells give, the
    computation (``calc.compute``: formula, cells, blocks) follows the context, for the model
    to check and cite rather than to redo in its head."""
    computed = compute(question, segments)
    worked = (f"\n\nComputed from the cells of the blocks: {computed.text()}"
              if computed is not None else "")
    user = f"Context:\n\n{build_context(segments)}{worked}\n\nQuestion: {question.strip()}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def parse_citations(text: str, n_blocks: int) -> tuple[list[int], list[int]]:
    """Cited block numbers split into valid (1..n_blocks) and invalid, each in first-use order.

    Accepts ``[2]``, ``[1, 3]``, ``[1][2]`` and ranges ``[2-4]``.
    """
    valid: list[int] = []
    invalid: list[int] = []
    for match in _CITATION.finditer(text):
        for number in _expand(match.group(1)):
            target = valid if 1 <= number <= n_blocks else invalid
            if number not in target:
                target.append(number)
    return valid, invalid


def _expand(group: str) -> list[int]:
    numbers: list[int] = []
    for part in re.split(r"\s*[,;]\s*", group):
        bounds = re.split(r"\s*[-–]\s*", part)
        if len(bounds) == 2 and int(bounds[0]) <= int(bounds[1]) <= int(bounds[0]) + 50:
            numbers.extend(range(int(bounds[0]), int(bounds[1]) + 1))
        else:
            numbers.extend(int(b) for b in bounds)
    return numbers


def answer_stream(
    question: str, segments: Sequence[Segment], llm: ChatModel | None,
    embedder: Any | None = None,
) -> Iterator[str]:
    """Yield the answer text piece by piece: LLM token deltas, or extractive sentences.

    ``embedder`` (the collection's) lets the extractive answer rank sentences by meaning as
    well as by shared words; without it they are ranked by shared words only.

    An ``LLMError`` raised by the endpoint mid-way propagates; the caller keeps the retrieved
    evidence on screen and shows the error.
    """
    if not segments:
        yield NO_EVIDENCE
        return
    if llm is None:
        yield from _extractive(question, segments, embedder)
        return
    yield from llm.stream(build_messages(question, segments))


def answer(question: str, segments: Sequence[Segment], llm: ChatModel | None,
           embedder: Any | None = None) -> Answer:
    """The whole answer with its citations checked against the context blocks."""
    text = "".join(answer_stream(question, segments, llm, embedder))
    valid, invalid = parse_citations(text, len(segments))
    mode: AnswerMode = "extractive" if llm is None else "llm"
    return Answer(
        text=text,
        citations=tuple(valid),
        invalid_citations=tuple(invalid),
        mode=mode,
        note=answer_note(mode, llm, len(segments), valid, invalid),
    )


def answer_note(
    mode: AnswerMode, llm: ChatModel | None, n_blocks: int, valid: list[int], invalid: list[int]
) -> str:
    if n_blocks == 0:
        return NO_EVIDENCE
    if mode == "extractive" or llm is None:
        return EXTRACTIVE_NOTE
    note = f"Answered by {llm.model} from {n_blocks} context block(s)."
    if invalid:
        shown = ", ".join(f"[{n}]" for n in invalid)
        note += f" Citation(s) {shown} do not match any context block and were not checked."
    elif not valid:
        note += " The answer cites no context block; check it against the evidence."
    return note


def contains_phrase(text: str, phrase: str) -> bool:
    """Whether an answer contains a gold phrase: case, whitespace, citations and typographic
    quotes or dashes ignored (how the demo's ``answer_phrase`` is checked)."""
    return _loose(phrase) in _loose(_CITATION.sub(" ", text))


def _loose(text: str) -> str:
    table = str.maketrans({"“": '"', "”": '"', "‘": "'", "’": "'", "–": "-", "—": "-"})
    return " ".join(text.translate(table).casefold().split())


def _extractive(question: str, segments: Sequence[Segment], embedder: Any | None) -> Iterator[str]:
    """The best sentences of the context blocks (``hiqa.answer.extractive``), best first, each followed
    by the number of the block it is quoted from.  With no quotable sentence (a segment that is
    all code or table), the top block is pointed to rather than quoted in pieces."""
    computed = compute(question, segments)
    if computed is not None:
        yield f"{computed.text()}\n\n"
    figures = pick_figures(question, segments)
    unit = asked_unit(question)
    for figure in figures:
        converted = figure.in_unit(unit)
        yield f"{figure.text()} [{figure.row.block}]" + (f" {converted}" if converted else "") \
            + "\n\n"
    picks = pick_sentences(question, segments, embedder)
    if not picks:
        if not figures:
            yield NO_SENTENCE
        return
    for i, pick in enumerate(picks):
        yield ("" if i == 0 else " ") + f"{pick.text} [{pick.block}]"
