"""Page logic of the Streamlit app as pure functions (the app's pages only lay out widgets).

Nothing here imports Streamlit: tables are returned as lists of row dicts (``st.dataframe`` and
``st.table`` take them as is), text meant for Markdown widgets is escaped here, and uploads are
staged so that a failed ingest leaves the data directory as it was.
"""
from __future__ import annotations

import math
import re
import shutil
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from .answer import parse_citations
from .collection import Hit
from .model import Segment, normalize_title, pages_label
from .segment import render_path

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
    """The ingest results table: one row per document, errors with their reason."""
    return [
        {
            "document": r.doc_id, "status": r.status, "pages": r.pages,
            "sections": r.sections, "segments": r.segments, "time (s)": round(r.seconds, 2),
            "warnings": "; ".join(r.warnings), "error": r.error,
        }
        for r in results
    ]


# --------------------------------------------------------------------------- Markdown safety

_MD_SPECIAL = re.compile(r"([\\`*_{}\[\]()#+\-.!|<>~$:=^&])")


def escape_markdown(text: str) -> str:
    """Backslash-escape every Markdown/HTML/LaTeX/directive character of document text.

    Streamlit renders Markdown (links, images, ``:red[...]``, ``$math$``); document text shown
    through a Markdown widget must not be able to use any of it.
    """
    return _MD_SPECIAL.sub(r"\\\1", text or "")


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


def segment_label(segment: Segment) -> str:
    """``document › path (p. n)``: how a segment is named in tables and source lists (plain)."""
    path = segment.section_path
    label = render_path([segment.doc_id, *path]) if path else segment.doc_id
    pages = pages_label(segment.pages)
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
    if move is None:
        return "new"
    if move > 0:
        return f"▲{move}"
    if move < 0:
        return f"▼{-move}"
    return "="


def moved_count(moves: Sequence[int | None]) -> int:
    return sum(1 for m in moves if m != 0)


def hits_rows(hits: Sequence[Hit], moves: Sequence[int | None] | None = None, *,
              escape: bool = False) -> list[dict[str, Any]]:
    """The ranking table: one row per hit with its per-route scores (raw and weighted).

    ``escape=True`` for ``st.table``, which renders cells as Markdown.
    """
    moves = list(moves) if moves is not None else [0] * len(hits)
    text = escape_markdown if escape else (lambda s: s)
    rows = []
    for hit, move in zip(hits, moves):
        s = hit.segment
        rows.append({
            "rank": hit.rank,
            "move": move_label(move),
            "document": text(s.doc_id),
            "section": text(render_path(s.path) or s.doc_title),
            "pages": pages_label(s.pages),
            "fused": round(hit.score, 4),
            "dense": round(hit.contributions.get("dense", 0.0), 4),
            "bm25": round(hit.contributions.get("bm25", 0.0), 4),
            "keyword": round(hit.contributions.get("keyword", 0.0), 4),
            "cosine": _round(hit.raw.get("dense")),
            "bm25 raw": _round(hit.raw.get("bm25")),
            "kw matches": int(hit.raw.get("matches", 0)),
        })
    return rows


def _round(value: float | None, digits: int = 4) -> float | None:
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return None
    return round(float(value), digits)


ROUTES = ("dense", "bm25", "keyword")


def score_breakdown(hits: Sequence[Hit]) -> list[dict[str, Any]]:
    """Long-format rows (label, route, share) for a stacked bar per hit: the fused score is the
    sum of the routes' weighted shares (Eq. 2)."""
    rows = []
    for hit in hits:
        label = f"#{hit.rank} {hit.segment.doc_id} › {hit.segment.heading}"
        for route in ROUTES:
            rows.append({"segment": label, "route": route,
                         "share": float(hit.contributions.get(route, 0.0)),
                         "fused": float(hit.score)})
    return rows


# --------------------------------------------------------------------------- segments page

@dataclass(frozen=True)
class TreeNode:
    """One section of a document's heading tree as seen through its segments."""

    doc_id: str
    order: int
    level: int
    title: str
    path: tuple[str, ...]
    pages: tuple[int, ...]
    segment_ids: tuple[str, ...]


def section_tree(segments: Iterable[Segment]) -> dict[str, list[TreeNode]]:
    """Documents → their sections in document order (pieces of one section are merged)."""
    grouped: dict[tuple[str, int], list[Segment]] = {}
    for s in segments:
        grouped.setdefault((s.doc_id, s.order), []).append(s)
    out: dict[str, list[TreeNode]] = {}
    for (doc_id, order), segs in sorted(grouped.items()):
        segs.sort(key=lambda s: s.piece)
        first = segs[0]
        pages = tuple(sorted({p for s in segs for p in s.pages}))
        out.setdefault(doc_id, []).append(TreeNode(
            doc_id=doc_id, order=order, level=first.level, title=first.heading,
            path=first.path, pages=pages, segment_ids=tuple(s.segment_id for s in segs)))
    return out


def tree_label(node: TreeNode) -> str:
    """An indented one-line label (non-breaking spaces survive widget label trimming)."""
    indent = "\u2003" * max(node.level - 1, 0)
    pages = pages_label(node.pages)
    return f"{indent}{node.title}" + (f" · {pages}" if pages else "")


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
                        rows.append({"variant": name, "distractors": int(n), "metric": m,
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

