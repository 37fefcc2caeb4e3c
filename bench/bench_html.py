"""HTML structure per documentation generator: the gold pages in ``tests/fixtures/html``.

    python bench/bench_html.py                 # gold pages: one row per generator + mean/worst
    python bench/bench_html.py --pages         # one row per page
    python bench/bench_html.py --speed         # + pages/s over pages of the installed dev
                                               #   packages, and the single-page autoconf manual
    python bench/bench_html.py --quick         # smoke run

Each ``NAME.html`` beside a ``NAME.gold.json`` (written by hand from the page's HTML, see
``tests/fixtures/html/GOLD_SPEC.md``) is read by HiQA's HTML reader and scored with
``../shared/bench/score_structure.py``: heading F1, level accuracy, path accuracy.  Besides:
the title (the gold document title), chrome leaked (a chrome string of the gold, or a permalink
mark, found in a heading or anywhere in the document's Markdown: segments are cut from it),
tables kept (a gold cell text found inside a Markdown table) and code kept (a gold code line
inside a fenced block).  Per generator the mean over its pages; overall the mean and the worst
generator.
"""
from __future__ import annotations

import argparse
import glob
import json
import re
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

from _common import ROOT, score_structure

sys.path.insert(0, str(ROOT))
from hiqa.errors import DocumentError
from hiqa.formats import load_document
from hiqa.model import Document

FIXTURES = ROOT / "tests" / "fixtures" / "html"
PERMALINK = re.compile(r"[¶◆🔗]|\[link\]|(?:^|\s)#$")
# the dev packages of issue #31, for the speed run (pages of each, globbed)
SPEED_SETS = {
    "sphinx": ["/usr/share/doc/sphinx-doc/html/**/*.html",
               "/usr/share/doc/python-requests-doc/html/**/*.html",
               "/usr/share/doc/python-cryptography-doc/html/**/*.html",
               "/usr/share/doc/python-django-doc/html/**/*.html"],
    "javadoc": ["/usr/share/doc/libcommons-lang3-java/api/org/**/*.html",
                "/usr/share/doc/libargparse4j-java/api/net/**/*.html"],
    "doxygen": ["/usr/share/doc/libjsoncpp-doc/*.html", "/usr/share/doc/libsdl2-doc/html/*.html"],
    "docbook": ["/usr/share/doc/postgresql-doc-15/html/*.html"],
    "gtkdoc": ["/usr/share/doc/gnutls-doc/api-reference/*.html"],
    "texinfo": ["/usr/share/doc/libgcrypt20-doc/html/*.html"],
    "rustdoc": ["/usr/share/doc/cargo/doc/**/*.html"],
    "mdbook": ["/usr/share/doc/rust-doc/html/book/**/*.html"],
    "mkdocs": ["/usr/share/doc/mkdocs/html/**/*.html"],
    "asciidoc": ["/usr/share/doc/git-doc/*.html"],
}
BIG_PAGE = Path("/usr/share/doc/autoconf/autoconf.html")


def table_texts(md: str) -> str:
    return "\n".join(ln for ln in md.splitlines() if ln.startswith("|"))


def code_texts(md: str) -> str:
    return "\n".join(re.findall(r"```[^\n]*\n(.*?)\n```", md, re.DOTALL))


def squash(text: str) -> str:
    return " ".join(text.split())


def score_page(gold_path: Path) -> dict:
    gold = json.loads(gold_path.read_text(encoding="utf-8"))
    page = gold_path.with_name(gold_path.name.removesuffix(".gold.json") + ".html")
    t0 = time.perf_counter()
    try:
        doc = load_document(page)
    except DocumentError as e:  # scored as an empty page: no title, no heading, no text
        print(f"{page.name}: {e}", file=sys.stderr)
        doc = Document(doc_id=page.name, title="", source=str(page), format="html",
                       markdown="", sections=())
    seconds = time.perf_counter() - t0
    pred = [{"level": h.level, "title": h.title, "page": 1} for h in doc.headings]
    ss = score_structure()
    row = ss.score(ss.load(str(gold_path)), pred)
    md = doc.markdown
    leaks = [c for c in gold.get("chrome", []) if squash(c) in squash(md)]
    leaks += [h.title for h in doc.headings if PERMALINK.search(h.title)]
    tables, code = squash(table_texts(md)), squash(code_texts(md))
    row.update(
        generator=gold["generator"], page=page.name, seconds=seconds,
        title_ok=ss.norm_title(doc.title) == ss.norm_title(gold["title"]), title=doc.title,
        leaks=leaks,
        tables=(sum(squash(t) in tables for t in gold.get("tables", [])), len(gold.get("tables", []))),
        code=(sum(squash(c) in code for c in gold.get("code", [])), len(gold.get("code", []))),
    )
    return row


def speed(limit: int) -> list[tuple[str, int, float, float, int, int, int]]:
    """Per dev package set, up to ``limit`` pages spread over it: pages/s, the slowest page,
    and three checks that need no gold: pages without a heading, pages whose title another
    page of the set shares (no document identity), and lines of the Markdown found on half of
    the set's pages or more (the site's frame leaking into every document)."""
    out = []
    for gen, patterns in SPEED_SETS.items():
        pages = [Path(p) for pat in patterns for p in sorted(glob.glob(pat, recursive=True))]
        pages = pages[:: max(1, len(pages) // limit)][:limit]
        if not pages:
            continue
        times, titles, lines, bare = [], Counter(), Counter(), 0
        for p in pages:
            t0 = time.perf_counter()
            try:
                doc = load_document(p)
            except DocumentError:  # an empty page (a redirect stub): timed as read
                times.append(time.perf_counter() - t0)
                continue
            times.append(time.perf_counter() - t0)
            titles[doc.title] += 1
            bare += not doc.headings
            lines.update({ln.strip() for ln in doc.markdown.splitlines()[1:] if len(ln.strip()) > 3})
        shared = sum(n for n in titles.values() if n > 1)
        frame = sum(1 for n in lines.values() if n >= max(3, len(pages) / 2))
        out.append((gen, len(pages), len(pages) / sum(times), max(times), bare, shared, frame))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--fixtures", type=Path, default=FIXTURES)
    ap.add_argument("--pages", action="store_true", help="one row per page")
    ap.add_argument("--speed", action="store_true", help="pages/s on the installed dev packages")
    ap.add_argument("--speed-pages", type=int, default=60, help="pages per generator (--speed)")
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: one gold page per generator, 2 pages per speed set")
    args = ap.parse_args()
    golds = sorted(args.fixtures.glob("*/*.gold.json"))
    if args.quick:
        golds = [next(g for g in golds if g.parent == d) for d in sorted({g.parent for g in golds})]
        args.speed_pages = 2
    rows = [score_page(g) for g in golds]
    if not rows:
        raise SystemExit(f"no *.gold.json under {args.fixtures}")
    if args.pages:
        print("| generator | page | F1 | level | path | title | leaks | tables | code |")
        print("|---|---|---:|---:|---:|---|---|---:|---:|")
        for r in rows:
            print(f"| {r['generator']} | {r['page']} | {r['heading_f1']:.3f} | {r['level_acc']:.3f}"
                  f" | {r['path_acc']:.3f} | {'ok' if r['title_ok'] else repr(r['title'])}"
                  f" | {'; '.join(r['leaks'][:3])} | {r['tables'][0]}/{r['tables'][1]}"
                  f" | {r['code'][0]}/{r['code'][1]} |")
        print()
    by_gen: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        by_gen[r["generator"]].append(r)
    print("| generator | pages | F1 | level | path | titles | chrome leaked | tables | code |"
          " pages/s |")
    print("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
    summary = []
    for gen, rs in sorted(by_gen.items()):
        f1, lv, pa = (statistics.mean(r[k] for r in rs) for k in ("heading_f1", "level_acc", "path_acc"))
        summary.append((gen, f1, lv, pa))
        tk = sum(r["tables"][0] for r in rs), sum(r["tables"][1] for r in rs)
        ck = sum(r["code"][0] for r in rs), sum(r["code"][1] for r in rs)
        print(f"| {gen} | {len(rs)} | {f1:.3f} | {lv:.3f} | {pa:.3f} | "
              f"{sum(r['title_ok'] for r in rs)}/{len(rs)} | {sum(len(r['leaks']) for r in rs)} | "
              f"{tk[0]}/{tk[1]} | {ck[0]}/{ck[1]} | {len(rs) / sum(r['seconds'] for r in rs):.0f} |")
    for label, pick in (("mean", statistics.mean), ("worst", min)):
        print(f"| **{label}** | {len(rows)} | {pick(s[1] for s in summary):.3f} | "
              f"{pick(s[2] for s in summary):.3f} | {pick(s[3] for s in summary):.3f} | | "
              f"{sum(len(r['leaks']) for r in rows)} | | | |")
    if args.speed:
        print("\n| generator | pages read | pages/s | slowest page (s) | no heading | shared title"
              " | lines on half the pages |\n|---|---:|---:|---:|---:|---:|---:|")
        for gen, n, rate, slow, bare, shared, frame in speed(args.speed_pages):
            print(f"| {gen} | {n} | {rate:.0f} | {slow:.2f} | {bare} | {shared} | {frame} |")
        if BIG_PAGE.is_file():
            t0 = time.perf_counter()
            doc = load_document(BIG_PAGE)
            print(f"\n{BIG_PAGE.name} ({BIG_PAGE.stat().st_size / 1e6:.1f} MB, one page): "
                  f"{time.perf_counter() - t0:.2f} s, {len(doc.headings)} headings")


if __name__ == "__main__":
    main()
