"""Page logic of the Streamlit app as pure functions (the app's pages only lay out widgets).

Nothing here imports Streamlit: tables are returned as lists of row dicts (``st.dataframe`` and
``st.table`` take them as is), text meant for Markdown widgets is escaped here, and uploads are
staged so that a failed ingest leaves the data directory as it was.
"""
from __future__ import annotations

import html
import math
import re
import shutil
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from hiqa.answer.cited import block_header, parse_citations
from hiqa.augment import render_path
from hiqa.keywords.records import KeywordSources
from hiqa.model import Segment, normalize_title, pages_label, segment_pages_label
from hiqa.retrieve.routes import Hit

# --------------------------------------------------------------------------- uploads

MAX_NAME_CHARS = 120


def safe_upload_name(name: str) -> str:
    """A file name from a browser upload that cannot leave its folder or hide itself.

    Keeps only the last path component (``/`` and ``\\`` both count), drops control characters,
    replaces anything but letters, digits, ``.``, ``-``, ``_`` and spaces, strips leading dots and
    caps the length while keeping the extension.
    """
    base = re.split(r"[\\/]", name or "")[-1]
    base = unicodedata.normalize("NFKC", base)
    base = "".join(ch for ch in base if unicodedata.category(ch)[0] != "C")
    base = re.sub(r"[^\w.\- ]+", "_", base).strip().lstrip(".").strip()
    base = re.sub(r"\s+", " ", base)
    if not base or set(base) <= {".", "_", "-", " "}:
        base = "upload"
    if len(base) > MAX_NAME_CHARS:
        stem, dot, ext = base.rpartition(".")
        if dot and 0 < len(ext) <= 10:
            base = stem[: MAX_NAME_CHARS - len(ext) - 1] + "." + ext
        else:
            base = base[:MAX_NAME_CHARS]
    return base


def inside(root: Path, name: str) -> Path:
    """``root / safe_upload_name(name)``, checked to resolve inside ``root``."""
    root = root.resolve()
    target = (root / safe_upload_name(name)).resolve()
    if target.parent != root:
        raise ValueError(f"upload name {name!r} would be written outside {root}")
    return target


@dataclass(frozen=True)
class StagedUpload:
    """An uploaded file written into the uploads folder; ``backup`` holds the file it replaced."""

    path: Path
    backup: Path | None


def stage_uploads(root: Path, files: Iterable[tuple[str, bytes]]) -> list[StagedUpload]:
    """Write uploads into ``root`` under safe names, keeping a backup of any file replaced.

    Two uploads with the same safe name: the last one wins (as a re-upload would).
    """
    root.mkdir(parents=True, exist_ok=True)
    staged: dict[Path, StagedUpload] = {}
    for name, data in files:
        target = inside(root, name)
        backup = None
        if target in staged:
            backup = staged[target].backup
        elif target.exists():
            backup = target.with_name(f".{target.name}.previous")
            shutil.copy2(target, backup)
        target.write_bytes(data)
        staged[target] = StagedUpload(target, backup)
    return list(staged.values())


def settle_uploads(staged: Sequence[StagedUpload], failed: Iterable[str], root: Path) -> None:
    """After ingest: restore (or remove) the files whose document failed, drop the backups.

    ``failed`` holds doc ids as ingest reports them (paths relative to ``root``).
    """
    failed_paths = {(root / d).resolve() for d in failed}
    for item in staged:
        if item.path.resolve() in failed_paths:
            if item.backup is not None:
                item.backup.replace(item.path)
                continue
            item.path.unlink(missing_ok=True)
        if item.backup is not None:
            item.backup.unlink(missing_ok=True)


def ingest_rows(results: Iterable[Any]) -> list[dict[str, Any]]:
    """The ingest results table: one row per document, a skip or failure with its reason."""
    return [
        {
            "document": r.doc_id, "status": r.status, "pages": r.pages,
            "sections": r.sections, "structure": r.structure, "segments": r.segments,
            "time (s)": round(r.seconds, 2),
            "warnings": "; ".join(r.warnings), "reason": r.error,
        }
        for r in results
    ]


def ingest_summary(results: Iterable[Any]) -> tuple[str, str]:
    """``(level, message)`` for an ingest: "success" unless a document failed; a skip (the same
    file content already indexed under another name) is not a failure."""
    counts: dict[str, int] = {}
    for r in results:
        counts[r.status] = counts.get(r.status, 0) + 1
    parts = [f"{counts[k]} {k}" for k in ("added", "updated", "unchanged", "skipped", "failed")
             if counts.get(k)]
    return ("warning" if counts.get("failed") else "success",
            (", ".join(parts) or "nothing to ingest") + ".")


# --------------------------------------------------------------------------- Markdown safety

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


WORD_JOINER = "\u2060"
_AUTOLINKS = (  # what GFM turns into links without any markup: URLs, www. names, e-mails
    (re.compile(r"(?<=\w)(?=://)"), WORD_JOINER),
    (re.compile(r"(?i)\b(www)(?=\.)"), r"\1" + WORD_JOINER),
    (re.compile(r"(?=@)"), WORD_JOINER),
)


def escape_markdown(text: str) -> str:
    """Document text for a Markdown widget, shown as written: no links, images or formatting.

    Streamlit renders Markdown (links, images, ``:red[...]``, ``$math$``), so every special
    character is backslash-escaped.  Escapes do not stop GFM's autolinks (they are found in the
    parsed text), so an invisible word joiner goes between ``https`` and ``://``, ``www`` and
    ``.``, and before ``@``: the text looks the same and no link is made.
    """
    text = text or ""
    for pattern, replacement in _AUTOLINKS:
        text = pattern.sub(replacement, text)
    return _MD_SPECIAL.sub(r"\\\1", text)


def plot_label(text: str) -> str:
    """Document text for a Plotly label, legend or hover text, shown literally.

    Plotly renders a subset of HTML in every text it draws (``<a href>`` becomes a live link,
    ``<b>``, ``<br>``); escaping ``& < >`` makes a heading such as
    ``<a href="https://evil.example">Login</a>`` appear as those characters instead.  Quotes are
    left alone: Plotly decodes ``&lt;``, ``&gt;`` and ``&amp;`` but shows ``&quot;`` as typed.
    """
    return html.escape(str(text), quote=False)


class PathNotAllowed(ValueError):
    """A server path outside the roots ``HIQA_ALLOWED_DIRS`` names (or none are named)."""


def allowed_server_path(raw: str, roots: Sequence[Path], *, extra: Sequence[Path] = ()) -> Path:
    """``raw`` resolved (symlinks followed) when it lies inside one of ``roots`` or ``extra``.

    Anyone who reaches the app's port could otherwise index, and then read, any file the server
    can read.  With no roots configured, server paths are refused and uploads are the way in.
    """
    allowed = [Path(r).resolve() for r in (*roots, *extra)]
    path = Path(raw.strip()).expanduser().resolve()
    if not any(path == root or root in path.parents for root in allowed) and not roots:
        raise PathNotAllowed(f"{path}: server paths are turned off; upload the files instead, "
                             "or set HIQA_ALLOWED_DIRS on the server to the folders the app may "
                             "read")
    if not any(path == root or root in path.parents for root in allowed):
        shown = ", ".join(str(r) for r in allowed)
        raise PathNotAllowed(f"{path} is outside the folders this app may read ({shown}); "
                             "HIQA_ALLOWED_DIRS on the server sets them")
    return path


_CITATION = re.compile(r"\[(\d+(?:\s*(?:[,;]|-|–)\s*\d+)*)\]")


def source_anchor(turn: int, number: int) -> str:
    return f"source-{turn}-{number}"


def render_answer(text: str, n_blocks: int, turn: int) -> str:
    """Answer text as safe Markdown whose valid citations ``[n]`` link to their source block.

    Citations that name no context block stay plain text and are flagged with a ``?``.
    """
    out: list[str] = []
    pos = 0
    for match in _CITATION.finditer(text):
        out.append(escape_markdown(text[pos:match.start()]))
        valid, invalid = parse_citations(match.group(0), n_blocks)
        parts = [f"[\\[{n}\\]](#{source_anchor(turn, n)})" for n in valid]
        parts += [f"\\[{n}?\\]" for n in invalid]
        out.append("".join(parts))
        pos = match.end()
    out.append(escape_markdown(text[pos:]))
    return "".join(out)


def source_labels(segments: Sequence[Segment]) -> list[str]:
    """``[n] …`` headers for a list of context blocks; where two would read the same (pieces of
    one long section), each gets its part number."""
    headers = [block_header(s, n) for n, s in enumerate(segments, 1)]
    bare = [h.split("] ", 1)[-1] for h in headers]
    return [h + (f" · part {s.piece + 1}" if bare.count(b) > 1 else "")
            for h, b, s in zip(headers, bare, segments)]


def segment_label(segment: Segment) -> str:
    """``document › path (p. n)``: how a segment is named in tables and source lists (plain)."""
    path = segment.section_path
    label = render_path([segment.doc_id, *path]) if path else segment.doc_id
    pages = segment_pages_label(segment)
    return f"{label} ({pages})" if pages else label


# --------------------------------------------------------------------------- rankings

def rank_moves(previous: Sequence[str] | None, current: Sequence[str]) -> list[int | None]:
    """For each id of ``current``: how many places it rose (+) or fell (−) since ``previous``.

    ``None`` marks an id that was not in the previous top list (it entered); with no previous
    ranking every move is 0.
    """
    if previous is None:
        return [0 for _ in current]
    before = {sid: i for i, sid in enumerate(previous)}
    return [None if sid not in before else before[sid] - i for i, sid in enumerate(current)]


def move_label(move: int | None) -> str:
    """``↑2`` (two places up), ``↓1``, ``new`` (not in the earlier list), ``=``."""
    if move is None:
        return "new"
    if move > 0:
        return f"↑{move}"
    if move < 0:
        return f"↓{-move}"
    return "="


def moved_count(moves: Sequence[int | None]) -> int:
    return sum(1 for m in moves if m != 0)


def short_path(parts: Sequence[str], max_chars: int = 70) -> str:
    """``a > b > c`` cut from the left (``… > b > c``) so that a deep path stays one table line;
    the last heading, the one that says what the segment is, is always kept."""
    full = render_path(parts)
    if len(full) <= max_chars or len(parts) <= 1:
        return full
    kept: list[str] = [parts[-1]]
    for part in reversed(parts[:-1]):
        if len(render_path(["…", part, *kept])) > max_chars:
            break
        kept.insert(0, part)
    return render_path(["…", *kept])


def hits_rows(hits: Sequence[Hit], moves: Sequence[int | None] | None = None, *,
              escape: bool = False, raw: bool = True) -> list[dict[str, Any]]:
    """The ranking table: one row per hit, its rank and how it moved, the document's title and
    the section, then its per-route shares of the fused score.

    ``escape=True`` for ``st.table``, which renders cells as Markdown.  ``raw=False`` leaves out
    the raw route scores (cosine, BM25, keyword matches), shown elsewhere so that the table fits
    a laptop screen; the page column is left out when no hit comes from a paginated source.
    """
    moves = list(moves) if moves is not None else [0] * len(hits)
    text = escape_markdown if escape else (lambda s: s)
    paginated = any(segment_pages_label(h.segment) for h in hits)
    rows = []
    for hit, move in zip(hits, moves):
        s = hit.segment
        row: dict[str, Any] = {
            "rank": hit.rank,
            "change": move_label(move),
            "document": text(s.doc_title or s.doc_id),
            "section": text(short_path(s.section_path) or s.doc_title),
        }
        if paginated:
            row["pages"] = segment_pages_label(s)
        row.update({
            "fused": round(hit.score, 4),
            "dense": round(hit.contributions.get("dense", 0.0), 4),
            "bm25": round(hit.contributions.get("bm25", 0.0), 4),
            "keyword": round(hit.contributions.get("keyword", 0.0), 4),
            "heading": round(hit.contributions.get("heading", 0.0), 4),
            "breadth": round(hit.contributions.get("breadth", 0.0), 4),
        })
        if raw:
            row.update(raw_scores(hit))
        rows.append(row)
    return rows


def raw_scores(hit: Hit) -> dict[str, Any]:
    """What each route measured before normalisation and weighting."""
    return {
        "cosine": _round(hit.raw.get("dense")),
        "bm25 raw": _round(hit.raw.get("bm25")),
        "kw matches": int(hit.raw.get("matches", 0)),
    }


def _round(value: float | None, digits: int = 4) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), digits)


ROUTES = ("dense", "bm25", "keyword", "heading", "breadth")
"""The fused score's parts: the two routes, Eq. 2's keyword bonus, the own-heading bonus
inside a named document (``retrieve.headings``) and the document route (the breadth of the
segment's document's evidence, ``breadth.document_bonus``: the "breadth" column)."""


def score_breakdown(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Long-format rows (label, route, share) for a stacked bar per hit: the fused score is the
    sum of the routes' weighted shares (Eq. 2)."""
    rows = []
    for hit in hits:
        label = plot_label(f"#{hit.rank} {hit.segment.doc_id} › {hit.segment.heading}")
        for route in ROUTES:
            rows.append({"segment": label, "route": route,
                         "share": float(hit.contributions.get(route, 0.0)),
                         "fused": float(hit.score)})
    return rows


# --------------------------------------------------------------------------- segments page

@dataclass(frozen=True)
class TreeNode:
    """One node of a document's heading tree, as the Segments page lists it.

    ``depth`` 0 is the document itself (text before the first heading); ``segment_ids`` are
    the node's own segments (empty for a heading whose text is all in its sub-sections);
    ``matched`` is False for an ancestor kept only so that a filtered match keeps its place.
    """

    doc_id: str
    path: tuple[str, ...]
    depth: int
    title: str
    kind: str
    pages: tuple[int, ...]
    segment_ids: tuple[str, ...]
    matched: bool
    terms: int = 0


def node_key(doc_id: str, path: Sequence[str]) -> str:
    return "\x1f".join((doc_id, *(normalize_title(p) for p in path)))


def section_tree(shown: Iterable[Segment], all_segments: Iterable[Segment] | None = None,
                 terms: Mapping[str, set[tuple[str, ...]]] | None = None,
                 ) -> dict[str, list[TreeNode]]:
    """Documents → their heading trees in document order, built from the segments' paths.

    Every heading on the path of a shown segment is a node, so a heading with no text of its
    own (only sub-sections, hence no segment) still holds its children, and a filter match keeps
    its ancestors.  ``all_segments`` gives each node its own segments even when the filter
    left them out; ``terms`` (doc id → normalised paths of definition terms, from the parsed
    document) marks term nodes and counts them on their parent.
    """
    shown = sorted(shown, key=lambda s: (s.doc_id, s.order, s.piece))
    every = sorted(all_segments, key=lambda s: (s.doc_id, s.order, s.piece)) if (
        all_segments is not None) else shown
    own: dict[str, list[Segment]] = {}
    for s in every:
        own.setdefault(node_key(s.doc_id, s.section_path), []).append(s)
    matched = {node_key(s.doc_id, s.section_path) for s in shown}
    shown_ids = {s.segment_id for s in shown}
    hidden = {node_key(s.doc_id, s.section_path[:d]) for s in every
              if s.segment_id not in shown_ids for d in range(len(s.section_path) + 1)}
    out: dict[str, list[TreeNode]] = {}
    seen: set[str] = set()
    for s in shown:
        path = s.section_path
        doc_terms = (terms or {}).get(s.doc_id, set())
        for depth in range(len(path) + 1):
            sub = path[:depth]
            key = node_key(s.doc_id, sub)
            if key in seen:
                continue
            seen.add(key)
            segs = own.get(key, [])
            kind = "term" if tuple(normalize_title(p) for p in sub) in doc_terms else "heading"
            out.setdefault(s.doc_id, []).append(TreeNode(
                doc_id=s.doc_id, path=sub, depth=depth, title=sub[-1] if sub else s.doc_title,
                kind=kind, pages=tuple(sorted({p for g in segs for p in g.pages})),
                segment_ids=tuple(g.segment_id for g in segs),
                matched=key in matched or (not segs and key not in hidden)))
    for doc_id, nodes in out.items():
        counts: dict[tuple[str, ...], int] = {}
        for n in nodes:
            if n.kind == "term":
                counts[n.path[:-1]] = counts.get(n.path[:-1], 0) + 1
        out[doc_id] = [replace(n, terms=counts.get(n.path, 0)) for n in nodes]
    return out


def term_paths(sections: Iterable[Any], doc_title: str) -> set[tuple[str, ...]]:
    """Normalised paths (below the document title) of a parsed document's definition terms."""
    title = normalize_title(doc_title)
    out = set()
    for sec in sections:
        if getattr(sec, "kind", "heading") != "term":
            continue
        path = [normalize_title(p) for p in sec.path]
        if path and path[0] == title:
            path = path[1:]
        out.add(tuple(path))
    return out


def visible_nodes(nodes: Sequence[TreeNode], open_paths: Iterable[tuple[str, ...]] = (),
                  all_terms: bool = False) -> list[TreeNode]:
    """The nodes to list: terms stay folded under their section unless it is open."""
    opened = {tuple(normalize_title(p) for p in path) for path in open_paths}
    return [n for n in nodes if n.kind != "term" or all_terms
            or tuple(normalize_title(p) for p in n.path[:-1]) in opened]


def tree_label(node: TreeNode, paginated: bool = False) -> str:
    """A one-line plain label: the title, with page numbers for paginated sources and the number
    of folded terms."""
    label = node.title
    if paginated and node.pages:
        label += f" · {pages_label(node.pages)}"
    if node.terms:
        label += f" · {node.terms} term{'s' if node.terms != 1 else ''}"
    return label


def filter_segments(segments: Iterable[Segment], *, documents: Sequence[str] | None = None,
                    path_text: str = "", keyword: str = "") -> list[Segment]:
    """Segments of the chosen documents whose path contains ``path_text`` and whose keywords
    contain ``keyword`` (both case-insensitive substrings; empty means no filter)."""
    docs = set(documents) if documents else None
    p = normalize_title(path_text)
    k = normalize_title(keyword)
    return [
        s for s in segments
        if (docs is None or s.doc_id in docs)
        and (not p or p in normalize_title(" ".join((s.doc_title, *s.path))))
        and (not k or any(k in normalize_title(kw) for kw in s.keywords))
    ]


def markdown_around(markdown: str, span: tuple[int, int], context: int = 400) -> tuple[str, str,
                                                                                     str]:
    """The canonical Markdown before, inside and after a segment's span (for display)."""
    start, end = max(0, span[0]), min(len(markdown), max(span[1], span[0]))
    before = markdown[max(0, start - context):start]
    after = markdown[end:end + context]
    return before, markdown[start:end], after


# --------------------------------------------------------------------------- embedding page

def section_key(segment: Segment) -> str:
    """The heading a segment sits under, normalised, so homologous sections share a colour."""
    return normalize_title(segment.heading) or "(root)"


# Ten colours that stay apart side by side and in colour-blind vision (Tableau 10, its grey
# swapped for near-black: grey means "not highlighted" here), times ten marker shapes: a
# document is told apart by its colour, and from the one ten places away by its shape.  (48
# Glasbey colours were tried: among 40 documents several magentas could not be told apart.)
PALETTE = ("#4E79A7", "#F28E2B", "#E15759", "#76B7B2", "#59A14F", "#EDC948", "#B07AA1",
           "#FF9DA7", "#9C755F", "#2B2B2B")
SYMBOLS = ("circle", "square", "diamond", "triangle-up", "cross", "x", "triangle-down",
           "pentagon", "hexagon", "star")
STYLES = len(PALETTE) * len(SYMBOLS)
"""Names with a style of their own before any repeats (100)."""
MUTED = "#C8CDD3"


def label_styles(names: Sequence[str], highlight: Iterable[str] = ()) -> dict[str, tuple[str, str]]:
    """A (colour, marker symbol) per name, no two alike among ``STYLES`` names; with a
    highlight chosen, the other names turn grey so the chosen ones can be found."""
    chosen = set(highlight)
    out = {}
    for i, n in enumerate(names):
        colour = PALETTE[i % len(PALETTE)] if not chosen or n in chosen else MUTED
        out[n] = (colour, SYMBOLS[(i // len(PALETTE)) % len(SYMBOLS)])
    return out


def robust_range(values: Any, fences: float = 3.0, pad: float = 0.06) -> tuple[float, float]:
    """An axis range holding every point except far outliers (beyond ``fences`` interquartile
    ranges from the quartiles, Tukey's "far out"), plus ``pad``: one stray segment no longer
    squashes the rest into a corner; it is simply off the plot."""
    import numpy as np

    v = np.asarray(values, dtype=float)
    v = v[np.isfinite(v)]
    if not len(v):
        return (-1.0, 1.0)
    q1, q3 = (float(x) for x in np.percentile(v, [25, 75]))
    iqr = q3 - q1
    inside = v[(v >= q1 - fences * iqr) & (v <= q3 + fences * iqr)]
    lo, hi = float(inside.min()), float(inside.max())
    width = hi - lo or 1.0
    return lo - pad * width, hi + pad * width


def projection_cache_path(collection_dir: Path, vector: str, method: str,
                          generation: str) -> Path:
    safe = re.sub(r"[^A-Za-z0-9]", "", generation)[:16]
    return collection_dir / "derived" / f"projection-{vector}-{method}-{safe}.npz"


# --------------------------------------------------------------------------- LLM settings

LLM_KEYS = ("HIQA_LLM_BASE_URL", "HIQA_LLM_MODEL", "HIQA_LLM_API_KEY")


def llm_settings_from_secrets(secrets: Mapping[str, Any]) -> dict[str, str]:
    """``HIQA_LLM_*`` values from ``.streamlit/secrets.toml`` (top level or an ``[hiqa]`` table)."""
    table = secrets.get("hiqa") if isinstance(secrets.get("hiqa"), Mapping) else {}
    out = {}
    for key in LLM_KEYS:
        value = secrets.get(key) or (table or {}).get(key) or (table or {}).get(
            key.removeprefix("HIQA_").lower())
        if value:
            out[key] = str(value)
    return out


# --------------------------------------------------------------------------- evaluation page

@dataclass(frozen=True)
class EvalDefaults:
    corpus: Path | None
    questions: Path | None


def eval_defaults(documents: Mapping[str, Mapping[str, Any]], demo: Path) -> EvalDefaults:
    """Where a collection's documents were ingested from (the folder their ids are relative
    to) and a ``questions.jsonl`` in it or beside it; with no collection, the demo's."""
    if not documents:
        return EvalDefaults(demo / "docs" if (demo / "docs").is_dir() else None,
                            demo / "questions.jsonl" if (demo / "questions.jsonl").is_file()
                            else None)
    roots: dict[Path, int] = {}
    for doc_id, record in documents.items():
        source = Path(str(record.get("source") or ""))
        parts = Path(doc_id).parts
        if len(source.parts) > len(parts) and source.parts[-len(parts):] == parts:
            root = Path(*source.parts[:-len(parts)])
            roots[root] = roots.get(root, 0) + 1
    corpus = max(roots, key=lambda r: roots[r]) if roots else None
    if corpus is None or not corpus.is_dir():
        return EvalDefaults(None, None)
    questions = next((q for q in (corpus / "questions.jsonl", corpus.parent / "questions.jsonl")
                      if q.is_file()), None)
    return EvalDefaults(corpus, questions)


def collection_keywords(documents: Mapping[str, Mapping[str, Any]]) -> dict[str, dict[str, list[str]]]:
    """A collection's expert-lexicon and LLM keywords per document (source → doc → keywords), to
    evaluate with what search uses; rule keywords are derived again by ingest itself."""
    out: dict[str, dict[str, list[str]]] = {}
    for doc_id, record in documents.items():
        for source, kws in KeywordSources.of(record).by_source().items():
            if source != "rule" and kws:
                out.setdefault(source, {})[doc_id] = list(kws)
    return out


METRICS = ("recall@5", "precision@5", "mrr", "ndcg@10", "log_rank")


def _interval(ci: Any) -> tuple[float, float] | None:
    if isinstance(ci, Mapping):
        lo = ci.get("low", ci.get("lo", ci.get("lower")))
        hi = ci.get("high", ci.get("hi", ci.get("upper")))
    elif isinstance(ci, Sequence) and not isinstance(ci, str) and len(ci) == 2:
        lo, hi = ci
    else:
        return None
    if lo is None or hi is None:
        return None
    return float(lo), float(hi)


def variants_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The ablation table: one row per variant, each metric as ``value [low, high]``."""
    rows = []
    for name, v in (report.get("variants") or {}).items():
        row: dict[str, Any] = {"variant": name, "segments": v.get("segments")}
        for m in METRICS:
            if m not in v:
                continue
            ci = _interval((v.get("ci") or {}).get(m))
            value = float(v[m])
            row[m] = f"{value:.3f}" + (f" [{ci[0]:.3f}, {ci[1]:.3f}]" if ci else "")
        rows.append(row)
    return rows


def degradation_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Long rows (variant, distractors, metric, value) for the degradation curve."""
    rows = []
    for name, by_n in (report.get("degradation") or {}).items():
        for n, metrics in by_n.items():
            if isinstance(metrics, Mapping):
                for m, value in metrics.items():
                    if isinstance(value, (int, float)):
                        rows.append({"variant": plot_label(name), "distractors": int(n),
                                     "metric": m,
                                     "value": float(value)})
    rows.sort(key=lambda r: (r["variant"], r["metric"], r["distractors"]))
    return rows


def fusion_method_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The fusion-method comparison (paper Table 9): one row per method at the report's weights."""
    methods = ((report.get("fusion_grid") or {}).get("methods") or {})
    return [{"method": m, **{k: round(float(v), 4) for k, v in row.items()
                             if isinstance(v, (int, float))}}
            for m, row in methods.items()]


def diagnostic_rows(report: Mapping[str, Any]) -> list[dict[str, Any]]:
    """Wrong-document diagnostics, one row per question, lists joined for display."""
    diag = report.get("diagnostics") or {}
    rows = []
    for r in diag.get("questions", []):
        rows.append({
            "id": r.get("id"), "question": r.get("question"),
            "gold": ", ".join(r.get("gold_docs") or []),
            "best gold rank": r.get("best_gold_rank"),
            "wrong document": r.get("wrong_doc"),
            "wrong section": render_path(r.get("wrong_path") or []),
            "wrong rank": r.get("wrong_rank"),
            "outranked gold": bool(r.get("outranked_gold")),
        })
    return rows

