"""Development report collections (issue #29): release notes of one product, one per version,
all cut from one template, in three formats, with questions that name the release.

    apt-get install -y --no-install-recommends python-django-doc postgresql-doc-15 pandoc
    python bench/make_report_corpus.py OUTDIR            # all families, all formats
    python bench/bench_peers.py --corpus OUTDIR/django-html --questions OUTDIR/django-html/questions.jsonl

Families (each skipped, and named, when its Debian package is missing):

* ``django`` — ``python-django-doc``'s ``releases/X.Y.html``: the major release notes 0.95 …
  3.2 ("Django 3.0 release notes": What's new › Minor features › one sub-section per module,
  Backwards incompatible changes, Features deprecated, Features removed).
* ``pg15`` — ``postgresql-doc-15``'s ``release-15-N.html``: the minor release notes of one
  major version ("E.16. Release 15.5": Migration to Version 15.5, Changes).

Formats, each its own folder ``OUTDIR/FAMILY-FORMAT`` with its own ``questions.jsonl`` (index one
folder, never two):

* ``html`` — the pages as Debian ships them: site header, sidebar, permalink marks and all.
* ``md`` — the page's content converted by ``pandoc`` to GitHub Markdown, as an author who
  writes reports in Markdown would have it.
* ``pdf`` — that Markdown rendered by MuPDF's ``Story`` (no outline, no metadata title): what
  a report looks like when it arrives as a PDF.

Gold sections are read from the source HTML by this script's own small parser (never by HiQA's
reader): the heading path below the page title, each heading's text as the page prints it
without its permalink mark.  Questions name the release in several phrasings ("in Django 3.0",
"in the 3.0 release", "Django 3.0:", "version 15.5"), chosen by a seeded draw.
"""
from __future__ import annotations

import argparse
import json
import random
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from html.parser import HTMLParser
from pathlib import Path

DJANGO = Path("/usr/share/doc/python-django-doc/html/releases")
PG15 = Path("/usr/share/doc/postgresql-doc-15/html")
FORMATS = ("html", "md", "pdf")
PER_DOC = 16
"""At most this many questions per document, so no release dominates the set."""


@dataclass
class Heading:
    level: int
    text: str
    body: str = ""


class _Headings(HTMLParser):
    """``h1``–``h4`` texts (permalink anchors left out) and the text of the list items after
    each, from the page's content only."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.headings: list[Heading] = []
        self._level = 0
        self._buf: list[str] = []
        self._skip = 0
        self._item: list[str] | None = None

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        cls = dict(attrs).get("class") or ""
        if self._skip or (tag == "a" and "headerlink" in cls):
            self._skip += 1
        elif re.fullmatch(r"h[1-4]", tag):
            self._level, self._buf = int(tag[1]), []
        elif tag == "li" and self.headings:
            self._item = []

    def handle_endtag(self, tag: str) -> None:
        if self._skip:
            self._skip -= 1
        elif self._level and tag == f"h{self._level}":
            self.headings.append(Heading(self._level, " ".join("".join(self._buf).split())))
            self._level = 0
        elif tag == "li" and self._item is not None:
            self.headings[-1].body += " ".join("".join(self._item).split()) + "\n"
            self._item = None

    def handle_data(self, data: str) -> None:
        if self._skip:
            return
        if self._level:
            self._buf.append(data)
        elif self._item is not None:
            self._item.append(data)


def content_html(page: str, family: str) -> str:
    """The page's own content (no site header, sidebar, navigation or permalink marks)."""
    if family == "django":
        start = page.index('<div class="yui-g"')
        end = page.index('<div class="yui-b" id="sidebar">')
    else:
        start = page.index('<div class="sect1"')
        end = page.index('<div class="navfooter">')
    body = page[start:end]
    body = re.sub(r'<a class="headerlink"[^>]*>.*?</a>', "", body, flags=re.DOTALL)
    body = re.sub(r'<div class="toc">.*?</dl></div>', "", body, flags=re.DOTALL)
    return body


def sections(body: str) -> tuple[str, list[tuple[tuple[str, ...], str]]]:
    """The page title and each heading's path below it, with the text of its list items."""
    parser = _Headings()
    parser.feed(body)
    heads = parser.headings
    title = heads[0].text
    stack: list[Heading] = []
    out = []
    for h in heads[1:]:
        while stack and stack[-1].level >= h.level:
            stack.pop()
        stack.append(h)
        out.append((tuple(x.text for x in stack), h.body))
    return title, out


def _django_questions(version: str, secs: list[tuple[tuple[str, ...], str]],
                      rng: random.Random) -> list[tuple[str, tuple[str, ...]]]:
    name = [f"in Django {version}", f"in the {version} release", f"in Django {version}",
            f"for Django {version}"]
    out: list[tuple[str, tuple[str, ...]]] = []
    for path, _ in secs:
        last = path[-1]
        top = path[0].replace("\u2019", "'").casefold()
        if len(path) >= 2 and path[-2] == "Minor features":
            module = last
            q = rng.choice([f"What changed in {module} {rng.choice(name)}?",
                            f"What is new for {module} {rng.choice(name)}?",
                            f"Django {version}: minor features of {module}"])
            out.append((q, path))
        elif len(path) == 2 and top.startswith("what's new") and last != "Minor features":
            out.append((rng.choice([f"Tell me about {last} {rng.choice(name)}.",
                                    f"Django {version}: {last}"]), path))
        elif len(path) == 1 and last.startswith("Features deprecated"):
            out.append((rng.choice([f"What was deprecated {rng.choice(name)}?",
                                    f"Which features did Django {version} deprecate?"]), path))
        elif len(path) == 1 and last.startswith("Features removed"):
            out.append((rng.choice([f"What was removed {rng.choice(name)}?",
                                    f"Which features were removed in the {version} release?"]),
                        path))
        elif len(path) == 1 and re.match(r"backwards.incompatible", last, re.IGNORECASE):
            out.append((f"What are the backwards incompatible changes {rng.choice(name)}?",
                        path))
    if len(out) > PER_DOC:
        out = [out[i] for i in sorted(rng.sample(range(len(out)), PER_DOC))]
    return out


def _pg_questions(version: str, secs: list[tuple[tuple[str, ...], str]],
                  rng: random.Random) -> list[tuple[str, tuple[str, ...]]]:
    out: list[tuple[str, tuple[str, ...]]] = []
    for path, body in secs:
        if path[-1].endswith(f"Migration to Version {version}"):
            out.append((rng.choice([f"Do I need a dump and restore to upgrade to {version}?",
                                    f"How do I migrate to PostgreSQL {version}?"]), path))
        elif path[-1].endswith("Changes"):
            items = [ln for ln in body.splitlines() if len(ln.split()) >= 5]
            for item in rng.sample(items, min(6, len(items))):
                words = re.sub(r"\s*\([^)]*\)\s*$", "", item.split(". ")[0]).split()[:12]
                said = " ".join(words).rstrip(".,;:")
                out.append((rng.choice([f"PostgreSQL {version}: {said}",
                                        f"In release {version}, {said[0].lower() + said[1:]}?",
                                        f"Which fix in version {version}: {said}"]), path))
    return out


def build(family: str, pages: list[Path], out: Path, seed: int) -> int:
    """Write the family's three folders; returns the number of questions."""
    rng = random.Random(seed)
    dirs = {fmt: out / f"{family}-{fmt}" for fmt in FORMATS}
    for d in dirs.values():
        shutil.rmtree(d, ignore_errors=True)
        d.mkdir(parents=True)
    rows: list[tuple[str, str, tuple[str, ...]]] = []  # (stem, question, section)
    for page in pages:
        raw = page.read_text(encoding="utf-8")
        body = content_html(raw, family)
        title, secs = sections(body)
        stem = page.stem
        if family == "django":
            version = stem
            qs = _django_questions(version, secs, rng)
        else:
            version = re.sub(r"^release-(\d+)-(\d+)$", r"\1.\2", stem)
            qs = _pg_questions(version, secs, rng)
        rows += [(stem, q, s) for q, s in qs]
        shutil.copyfile(page, dirs["html"] / page.name)
        md = subprocess.run(["pandoc", "-f", "html-native_divs", "-t", "gfm-raw_html", "--wrap=none"],
                            input=body, capture_output=True, text=True, check=True).stdout
        (dirs["md"] / f"{stem}.md").write_text(md, encoding="utf-8")
        rendered = subprocess.run(["pandoc", "-f", "gfm", "-t", "html5"], input=md,
                                  capture_output=True, text=True, check=True).stdout
        _pdf(rendered, dirs["pdf"] / f"{stem}.pdf")
        print(f"{family} {stem}: {title!r}, {len(secs)} sections, {len(qs)} questions",
              file=sys.stderr)
    for fmt, d in dirs.items():
        suffix = {"html": ".html", "md": ".md", "pdf": ".pdf"}[fmt]
        with open(d / "questions.jsonl", "w", encoding="utf-8") as f:
            for n, (stem, q, sec) in enumerate(rows):
                f.write(json.dumps({"id": f"{family}-{n}", "question": q,
                                    "gold": [{"doc": stem + suffix, "section": list(sec)}]},
                                   ensure_ascii=False) + "\n")
    print(f"{family}: {len(pages)} documents, {len(rows)} questions -> {out}/{family}-*",
          file=sys.stderr)
    return len(rows)


def _pdf(body_html: str, path: Path) -> None:
    import pymupdf

    css = ("body {font-family: sans-serif; font-size: 10pt;} h1 {font-size: 20pt;} "
           "h2 {font-size: 15pt;} h3 {font-size: 12.5pt;} h4 {font-size: 11pt;} "
           "code, pre {font-family: monospace; font-size: 0.9em;}")
    story = pymupdf.Story(html=body_html, user_css=css)
    writer = pymupdf.DocumentWriter(str(path))
    rect = pymupdf.paper_rect("a4")
    where = rect + (54, 54, -54, -54)
    more = True
    while more:
        dev = writer.begin_page(rect)
        more, _ = story.place(where)
        story.draw(dev)
        writer.end_page()
    writer.close()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("out", type=Path, nargs="?", default=Path("reports"))
    ap.add_argument("--families", default="django,pg15")
    ap.add_argument("--seed", type=int, default=29)
    ap.add_argument("--quick", action="store_true",
                    help="smoke run: two documents per family, written to the temporary folder")
    args = ap.parse_args()
    families = {
        "django": sorted(p for p in DJANGO.glob("*.html")
                         if re.fullmatch(r"\d+\.\d+", p.stem)) if DJANGO.is_dir() else [],
        "pg15": sorted(p for p in PG15.glob("release-15-*.html")) if PG15.is_dir() else [],
    }
    out = Path(tempfile.gettempdir()) / "hiqa-reports-quick" if args.quick else args.out
    built: list[tuple[str, int, int]] = []
    for family in args.families.split(","):
        pages = families.get(family, [])[: 2 if args.quick else None]
        if not pages:
            print(f"{family}: its Debian package is not installed; skipped", file=sys.stderr)
            continue
        if not shutil.which("pandoc"):
            raise SystemExit("pandoc not found: apt-get install pandoc")
        built.append((family, len(pages), build(family, pages, out, args.seed)))
    print("| family | documents | questions | folders |\n|---|---:|---:|---|")
    for family, docs, questions in built:
        print(f"| {family} | {docs} | {questions} | "
              f"{', '.join(f'{out}/{family}-{fmt}' for fmt in FORMATS)} |")


if __name__ == "__main__":
    main()
