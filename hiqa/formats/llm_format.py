"""LLM-assisted Markdown Formatter: a validated repair step for badly structured documents.

The rule-based parsers are fast and exact about content but can get the heading tree wrong
(headings set in body font, numbering only).  ``structure_confidence`` scores a parsed document;
when the score is low (or the user asks), ``llm_reformat`` sends the raw page text through the
paper's sliding-window formatter (Eq. 1): windows of ``W`` lines with step ``W``; the model sees
the previous window, its own previous output, the current window and ``K`` lines of padding
from the next window, so heading levels and numbering stay consistent across windows.

The model's Markdown is never trusted as is.  ``validate_reformat`` checks that it covers the
source words almost entirely (no content lost), adds almost none (no content invented), has no
lines of chatter and only headings that exist in the source; a failure keeps the rule-based
document and adds a warning.  This avoids the known defects of the paper's code: dropping the
last section, overwriting repeated headings (sections are a list here, never a dict keyed by
title), deleting words and keeping model chatter in the data.
"""

from __future__ import annotations

import dataclasses
import re
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Literal

from hiqa.errors import LLMError
from hiqa.formats.markdown import markdown_events
from hiqa.formats.structure import Event, build_document
from hiqa.llm import ChatModel, Completion
from hiqa.model import Document, Heading

FormatMode = Literal["auto", "always", "never"]
FORMAT_MODES: tuple[str, ...] = ("auto", "always", "never")

WINDOW_LINES = 40
PADDING_LINES = 5
CONFIDENCE_THRESHOLD = 0.6
# Validation thresholds on word multisets (see validate_reformat).  Joining a hyphenated line
# break ("instal- lation" -> "installation") or fixing a ligature changes a word or two per
# hundred; a dropped sentence or paragraph, or a line of chatter, changes more.
COVERAGE_MIN = 0.97
PRECISION_MIN = 0.97
CHATTER_LINE_MAX_FOREIGN = 0.5

ProgressFn = Callable[[int, int], None]

SYSTEM_PROMPT = (
    "You convert plain text extracted from a PDF into Markdown.\n"
    "Rules:\n"
    "1. Copy every word of the CURRENT text exactly and in the same order. Do not summarise, "
    "reword, translate, add or remove anything.\n"
    "2. Put # before chapter headings, ## before section headings and ### before subsection "
    "headings. Follow the heading numbering: 1 is #, 1.2 is ##, 1.2.3 is ###.\n"
    "3. Keep heading levels consistent with your previous output.\n"
    "4. Join lines of the same paragraph; separate paragraphs with a blank line.\n"
    "5. Output only the Markdown of the CURRENT text: no explanations, no code fences, nothing "
    "from the PREVIOUS or NEXT text."
)


@dataclass(frozen=True)
class FormatReport:
    """What the LLM formatter did to one document: cost, validation and structure scores.

    ``used`` is ``"llm"`` when the LLM's document replaced the rule-based one, ``"rule"`` when
    validation failed and the rule-based document was kept.
    """

    doc_id: str
    model: str
    windows: int
    cached_windows: int
    prompt_tokens: int
    completion_tokens: int
    seconds: float
    coverage: float
    precision: float
    ok: bool
    problems: tuple[str, ...]
    rule_score: float
    rule_reasons: tuple[str, ...]
    llm_score: float
    llm_reasons: tuple[str, ...]
    used: Literal["llm", "rule"]

    def summary(self) -> str:
        verdict = "using the LLM result" if self.used == "llm" else "kept the rule-based result"
        text = (
            f"{self.doc_id}: LLM formatter ({self.model}) {self.windows} window(s)"
            f" [{self.cached_windows} cached], {self.prompt_tokens}+{self.completion_tokens}"
            f" tokens, {self.seconds:.1f} s; coverage {self.coverage:.1%}, precision"
            f" {self.precision:.1%}; structure {self.rule_score:.2f} (rule) ->"
            f" {self.llm_score:.2f} (llm); {verdict}"
        )
        if self.problems:
            text += "; problems: " + "; ".join(self.problems)
        return text


# --------------------------------------------------------------------------- confidence

_NUMBERED = re.compile(r"^\s*((?:\d+\.)*\d+)\.?\s+\S")
_HEADING_LIKE = re.compile(r"^\s*((?:\d+\.)*\d+)\.?\s+[^\W\d_][^\n]{0,70}$")


def _numbering(title: str) -> tuple[int, ...] | None:
    m = _NUMBERED.match(title)
    return tuple(int(p) for p in m.group(1).split(".")) if m else None


def structure_confidence(doc: Document) -> tuple[float, list[str]]:
    """How much to trust a document's heading tree: a score in [0, 1] and the reasons.

    Penalties, each named in the reasons: no headings at all; one flat level in a document
    with many headings or with multi-part numbering; numbered headings whose level disagrees
    with their numbering depth; numbering that jumps (1.1 then 1.4: headings were missed);
    body lines that look like numbered headings (weighted by their share of all heading-like
    lines); one section holding most of a long text.
    """
    headings = [s for s in doc.sections if s.level > 0]
    length = len(doc.markdown)
    reasons: list[str] = []
    if not headings:
        if length < 1000:
            return 0.5, ["no headings in a short document"]
        return 0.0, ["no headings detected: the whole document is one flat block"]
    score = 1.0
    levels = {s.level for s in headings}
    numbered = [(s, n) for s in headings if (n := _numbering(s.title)) is not None]
    depths = {len(n) for _, n in numbered}
    if len(levels) == 1 and (len(headings) >= 8 or len(depths) > 1):
        score -= 0.3
        reasons.append(f"one flat level: all {len(headings)} headings are level {levels.pop()}")
    if numbered:
        level_of_depth: dict[int, Counter[int]] = {}
        for s, n in numbered:
            level_of_depth.setdefault(len(n), Counter())[s.level] += 1
        usual = {d: c.most_common(1)[0][0] for d, c in level_of_depth.items()}
        odd = sum(1 for s, n in numbered if s.level != usual[len(n)])
        order = sorted(usual)
        inverted = sum(1 for a, b in pairwise(order) if usual[a] >= usual[b])
        if odd or inverted:
            frac = (odd + inverted) / (len(numbered) + len(order))
            score -= 0.2 + 0.4 * frac
            reasons.append(
                f"inconsistent numbering: {odd + inverted} numbered heading(s) sit at a level "
                "that does not match their numbering depth"
            )
        jumps = _numbering_jumps([n for _, n in numbered])
        if jumps:
            score -= min(0.3, 0.1 * jumps)
            reasons.append(f"numbering jumps {jumps} time(s): headings were probably missed")
    missed = sum(
        1
        for s in doc.sections
        for b in s.blocks
        if b.kind == "text"
        for line in b.text.splitlines()
        if _HEADING_LIKE.match(line) and not line.rstrip().endswith((".", ",", ";", ":"))
    )
    if missed:
        score -= 0.7 * missed / (missed + len(headings))
        reasons.append(f"{missed} line(s) in the body look like numbered headings")
    biggest = max((s.span[1] - s.span[0] for s in doc.sections), default=0)
    if length > 3000 and biggest > 0.6 * length:
        score -= 0.2
        reasons.append(f"one section holds {biggest / length:.0%} of the text")
    return round(min(1.0, max(0.0, score)), 3), reasons


def _numbering_jumps(numbers: list[tuple[int, ...]]) -> int:
    """Count numbered headings that are neither the first child nor the next sibling."""
    jumps = 0
    prev: tuple[int, ...] | None = None
    for n in numbers:
        if prev is not None and not _follows(prev, n):
            jumps += 1
        prev = n
    return jumps


def _follows(prev: tuple[int, ...], n: tuple[int, ...]) -> bool:
    if n == (*prev, 1):  # first child
        return True
    for cut in range(len(prev), 0, -1):  # next sibling at this or an outer level
        if n == (*prev[: cut - 1], prev[cut - 1] + 1):
            return True
    return False


# --------------------------------------------------------------------------- validation

_TOKEN = re.compile(r"[^\W_]+")
_ATX = re.compile(r"^ {0,3}(#{1,6})[ \t]+(.+?)(?:[ \t]+#+)?[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")


def _tokens(text: str) -> list[str]:
    return _TOKEN.findall(text.casefold())


def _plain(text: str) -> str:
    return " ".join(re.sub(r"[*_`]", "", text).split()).casefold()


def validate_reformat(source_text: str, llm_markdown: str) -> tuple[bool, float, list[str]]:
    """Check the LLM's Markdown against the source text it was made from.

    Returns ``(ok, coverage, problems)``.  Words are compared as multisets of lower-cased
    letter/digit runs, so Markdown syntax and line joins do not count.  *Coverage* is the share
    of source words found in the output (at least ``COVERAGE_MIN``: nothing lost); *precision*
    the share of output words found in the source (at least ``PRECISION_MIN``: nothing
    invented).  Every heading must start a line of the source, and no output line may consist
    mostly of words absent from the source (model chatter such as "Here is the Markdown:").
    """
    src = Counter(_tokens(source_text))
    out_lines = llm_markdown.splitlines()
    out = Counter(_tokens(llm_markdown))
    common = sum((src & out).values())
    coverage = common / max(1, sum(src.values()))
    precision = common / max(1, sum(out.values()))
    problems: list[str] = []
    if coverage < COVERAGE_MIN:
        lost = list((src - out).keys())[:8]
        problems.append(
            f"content lost: the output covers {coverage:.1%} of the source words (minimum "
            f"{COVERAGE_MIN:.0%}); missing e.g. {', '.join(lost)}"
        )
    if precision < PRECISION_MIN:
        added = list((out - src).keys())[:8]
        problems.append(
            f"content invented: {1 - precision:.1%} of the output words are not in the source "
            f"(maximum {1 - PRECISION_MIN:.0%}); e.g. {', '.join(added)}"
        )
    starts = _line_starts(source_text)
    bad_headings = [
        title for _, title in _headings_of(out_lines) if not _starts_a_line(_plain(title), starts)
    ]
    if bad_headings:
        shown = "; ".join(repr(t) for t in bad_headings[:5])
        problems.append(f"{len(bad_headings)} heading(s) not found in the source: {shown}")
    chatter = [
        line.strip()
        for line in out_lines
        if not _ATX.match(line) and _foreign_share(line, src) > CHATTER_LINE_MAX_FOREIGN
    ]
    if chatter:
        shown = "; ".join(repr(c[:60]) for c in chatter[:3])
        problems.append(f"{len(chatter)} line(s) not from the source (model chatter?): {shown}")
    return not problems, round(coverage, 4), problems


def _precision(source_text: str, llm_markdown: str) -> float:
    src, out = Counter(_tokens(source_text)), Counter(_tokens(llm_markdown))
    return round(sum((src & out).values()) / max(1, sum(out.values())), 4)


def _foreign_share(line: str, src: Counter[str]) -> float:
    words = _tokens(line)
    return sum(1 for w in words if w not in src) / len(words) if words else 0.0


def _line_starts(source_text: str) -> tuple[str, set[int]]:
    """The source flattened to one normalised string, and the offsets where its lines start."""
    flat_parts: list[str] = []
    offsets: set[int] = set()
    pos = 0
    for line in source_text.splitlines():
        norm = _plain(line)
        if not norm:
            continue
        offsets.add(pos)
        flat_parts.append(norm)
        pos += len(norm) + 1
    return " ".join(flat_parts), offsets


def _starts_a_line(title: str, starts: tuple[str, set[int]]) -> bool:
    flat, offsets = starts
    if not title:
        return False
    at = flat.find(title)
    while at != -1:
        if at in offsets:
            return True
        at = flat.find(title, at + 1)
    return False


def _headings_of(lines: Sequence[str]) -> list[tuple[int, str]]:
    found: list[tuple[int, str]] = []
    in_fence = False
    for line in lines:
        if _FENCE.match(line):
            in_fence = not in_fence
            continue
        m = None if in_fence else _ATX.match(line)
        if m:
            found.append((len(m.group(1)), m.group(2).strip()))
    return found


# --------------------------------------------------------------------------- formatter


@dataclass(frozen=True)
class _Line:
    text: str
    page: int


def source_lines(raw_text_pages: Sequence[str]) -> list[_Line]:
    """Non-blank lines of the raw page text with their 1-based page numbers."""
    return [
        _Line(line.rstrip(), page)
        for page, text in enumerate(raw_text_pages, 1)
        for line in text.splitlines()
        if line.strip()
    ]


def window_messages(
    current: Sequence[str], previous: Sequence[str], previous_output: str, padding: Sequence[str]
) -> list[dict[str, str]]:
    """The prompt of Eq. 1: previous window, own previous output, current window, padding."""
    parts = []
    if previous:
        parts.append("PREVIOUS text (already converted):\n<<<\n" + "\n".join(previous) + "\n>>>")
        parts.append("Your PREVIOUS output:\n<<<\n" + previous_output.strip() + "\n>>>")
    parts.append("CURRENT text (convert this):\n<<<\n" + "\n".join(current) + "\n>>>")
    if padding:
        parts.append(
            "NEXT text (context only, do not convert):\n<<<\n" + "\n".join(padding) + "\n>>>"
        )
    return [
        {"role": "system", "content": SYSTEM_PROMPT},
        {"role": "user", "content": "\n\n".join(parts)},
    ]


def clean_reply(text: str) -> str:
    """Strip a wrapping code fence and echoed ``<<<``/``>>>`` delimiters; nothing else.

    Everything else the model wrote goes to validation, so chatter is caught, not hidden.
    """
    lines = text.strip().splitlines()
    if lines and _FENCE.match(lines[0]) and lines[-1].strip() in ("```", "~~~"):
        lines = lines[1:-1]
    return "\n".join(line for line in lines if line.strip() not in ("<<<", ">>>")).strip()


def llm_reformat(
    doc: Document,
    raw_text_pages: Sequence[str],
    llm: ChatModel,
    window: int = WINDOW_LINES,
    padding: int = PADDING_LINES,
    progress: ProgressFn | None = None,
) -> tuple[Document, FormatReport]:
    """Re-derive ``doc``'s structure with the sliding-window LLM formatter, validated.

    Returns the LLM-built document when validation passes, else ``doc`` itself with a warning
    added; the report says which, with token/time cost and both structure scores.
    ``LLMError`` from the endpoint propagates (``maybe_reformat`` decides what to do with it).
    """
    if window < 1 or padding < 0:
        raise ValueError(f"window must be >= 1 and padding >= 0 (got {window}, {padding})")
    lines = source_lines(raw_text_pages)
    windows = [lines[i : i + window] for i in range(0, len(lines), window)]
    started = time.monotonic()
    outputs: list[str] = []
    replies: list[Completion] = []
    truncated: list[int] = []
    previous_output = ""
    for i, current in enumerate(windows):
        previous = [ln.text for ln in windows[i - 1]] if i else []
        pad = [ln.text for ln in lines[(i + 1) * window : (i + 1) * window + padding]]
        text = [ln.text for ln in current]
        messages = window_messages(text, previous, previous_output, pad)
        reply = llm.chat(messages, max_tokens=_budget(text))
        replies.append(reply)
        if reply.finish_reason == "length":
            truncated.append(i + 1)
        previous_output = clean_reply(reply.text)
        outputs.append(previous_output)
        if progress is not None:
            progress(i + 1, len(windows))
    seconds = time.monotonic() - started
    markdown = "\n\n".join(outputs)
    source_text = "\n".join(ln.text for ln in lines)
    ok, coverage, problems = validate_reformat(source_text, markdown)
    if truncated:
        ok = False
        problems.append(f"reply cut at the token limit in window(s) {truncated}")
    candidate = markdown_to_document(markdown, doc, windows, outputs)
    rule_score, rule_reasons = structure_confidence(doc)
    llm_score, llm_reasons = structure_confidence(candidate)
    report = FormatReport(
        doc_id=doc.doc_id,
        model=llm.model,
        windows=len(windows),
        cached_windows=sum(1 for r in replies if r.cached),
        prompt_tokens=sum(r.prompt_tokens for r in replies),
        completion_tokens=sum(r.completion_tokens for r in replies),
        seconds=seconds,
        coverage=coverage,
        precision=_precision(source_text, markdown),
        ok=ok,
        problems=tuple(problems),
        rule_score=rule_score,
        rule_reasons=tuple(rule_reasons),
        llm_score=llm_score,
        llm_reasons=tuple(llm_reasons),
        used="llm" if ok else "rule",
    )
    if not ok:
        warning = (
            f"{doc.source}: the LLM formatter's output ({llm.model}) failed validation and was "
            f"discarded; kept the rule-based structure ({'; '.join(problems)})"
        )
        return dataclasses.replace(doc, warnings=(*doc.warnings, warning)), report
    return candidate, report


def _budget(text: Sequence[str]) -> int:
    """Max tokens for one window's reply: its text (~3.5 chars/token) plus room for markup."""
    chars = sum(len(t) + 1 for t in text)
    return int(chars / 3.5 * 1.3) + 32


def markdown_to_document(
    markdown: str,
    doc: Document,
    windows: Sequence[Sequence[_Line]] = (),
    outputs: Sequence[str] = (),
) -> Document:
    """Build a ``Document`` from the formatter's Markdown (``hiqa.formats.markdown``'s parser).

    Pages come from matching
    each output line to the source lines of its window; identity comes from ``doc`` and the
    title follows the usual rule (metadata title, else the first top-level heading).
    """
    events: list[Event] = []
    if windows and len(outputs) == len(windows):
        for lines_in, out in zip(windows, outputs):
            events.extend(_events(out.splitlines(), _PageFinder(lines_in)))
    else:
        events.extend(_events(markdown.splitlines(), _PageFinder([])))
    return build_document(
        doc_id=doc.doc_id,
        source=doc.source,
        fmt=doc.format,
        events=events,
        metadata_title=doc.title,
        page_count=doc.page_count,
        warnings=doc.warnings,
        metadata={**doc.metadata, "formatter": "llm"},
    )


class _PageFinder:
    """Page of an output line: the page of the next source line that starts the same way."""

    def __init__(self, lines: Sequence[_Line]):
        self.keys = [(_tokens(ln.text)[:3], ln.page) for ln in lines]
        self.pos = 0
        self.page = lines[0].page if lines else 1

    def __call__(self, line: str) -> int:
        head = _tokens(line)[:3]
        if head:
            for j in range(self.pos, len(self.keys)):
                key, page = self.keys[j]
                n = min(len(key), len(head))
                if n and key[:n] == head[:n]:
                    self.pos, self.page = j + 1, page
                    break
        return self.page


def _events(lines: Sequence[str], page_of: Callable[[str], int]) -> list[Event]:
    """The Markdown parser's events, each given the page of its first line."""
    events, _ = markdown_events("\n".join(lines))
    return [
        dataclasses.replace(ev, page=page_of(ev.title if isinstance(ev, Heading)
                                             else ev.text.split("\n", 1)[0]))
        for ev in events
    ]


def maybe_reformat(
    doc: Document,
    pages: Sequence[str],
    llm: ChatModel | None,
    mode: str = "auto",
    threshold: float = CONFIDENCE_THRESHOLD,
    window: int = WINDOW_LINES,
    padding: int = PADDING_LINES,
    progress: ProgressFn | None = None,
) -> tuple[Document, FormatReport | None]:
    """Apply the ``--llm-format auto|always|never`` option to one rule-based document.

    ``auto`` reformats when ``structure_confidence`` is below ``threshold`` and an endpoint is
    configured; an endpoint failure then keeps the rule-based document with a warning.
    ``always`` reformats every document and lets ``LLMError`` propagate.  The report is
    ``None`` when the LLM was not called.
    """
    if mode not in FORMAT_MODES:
        raise ValueError(f"unknown --llm-format mode {mode!r}; valid: {', '.join(FORMAT_MODES)}")
    if mode == "never":
        return doc, None
    if mode == "always":
        if llm is None:
            raise LLMError(
                "--llm-format always needs an LLM endpoint: set HIQA_LLM_BASE_URL and "
                "HIQA_LLM_MODEL, or use --llm-format auto|never"
            )
        return llm_reformat(doc, pages, llm, window=window, padding=padding, progress=progress)
    score, reasons = structure_confidence(doc)
    if score >= threshold:
        return doc, None
    if llm is None:
        warning = (
            f"{doc.source}: low structure confidence {score:.2f} ({'; '.join(reasons)}); "
            "set HIQA_LLM_BASE_URL to let the LLM formatter repair it"
        )
        return dataclasses.replace(doc, warnings=(*doc.warnings, warning)), None
    try:
        return llm_reformat(doc, pages, llm, window=window, padding=padding, progress=progress)
    except LLMError as exc:
        warning = f"{doc.source}: LLM formatter skipped, kept the rule-based structure: {exc}"
        return dataclasses.replace(doc, warnings=(*doc.warnings, warning)), None
