"""A seeded random sample of the PDF manuals Debian's texlive-doc ships, as heading cases.

    apt-get install -y --no-install-recommends texlive-latex-recommended-doc texlive-bibtex-extra \
        texlive-metapost-doc          # among others: the sample is drawn from what is installed
    python bench/make_texlive_sample.py DIR [--n 40] [--seed 7] [--disjoint-from 7]
    python bench/bench_structure.py --cases DIR

Held-out data for PDF structure (docs/pdf-structure.md): nobody chose these files. Every PDF
under ``/usr/share/doc/texlive-doc`` with 5 to 300 pages and an outline of 8 entries or more is
a candidate; ``--n`` of them are drawn with ``--seed``, and ``make_pdf_cases.py`` (shared bench)
copies each without its outline and keeps the outline as the gold.  ``--disjoint-from SEED``
leaves out the files the draw with SEED took: a second sample, drawn before a change and run
only to check it, shares no file with the one the change was decided on.  Repeated, the draws
are replayed in the order given, each from what the ones before it left (``--seed 11
--disjoint-from 7`` is the check sample of #44; ``--seed 13 --disjoint-from 7 --disjoint-from
11`` a third, disjoint from both).  The pool is what is installed, so installing another
package changes every draw: ``--package`` draws only from the named packages' PDFs,
``--without-package`` leaves them out.  The draws of seeds 7-17 were made before
texlive-science-doc and texlive-humanities-doc were installed (leave both out to replay them);
those two packages are a pool no earlier draw touched (seeds 19-31), and
texlive-publishers-doc another (seed 37; leave it out too to replay the others), and
texlive-latex-extra-doc a fourth (seeds 67-131; likewise).  Seed 7's pool is exactly the
PDFs of texlive-base, texlive-bibtex-extra, texlive-latex-recommended-doc and
texlive-metapost-doc (165; name them with ``--package`` to replay it wherever more is
installed); texlive-luatex, texlive-plain-generic, texlive-extra-utils and texlive-lang-greek
are a fifth pool (seed 137).  LaTeX manuals by hundreds of authors and classes: the outline is
hyperref's, a faithful gold as a rule.
"""
from __future__ import annotations

import argparse
import random
import subprocess
import sys
from pathlib import Path

import pymupdf
from _common import SHARED_BENCH

ROOT = Path("/usr/share/doc/texlive-doc")


def package_files(packages: list[str]) -> set[Path] | None:
    """The files Debian's ``packages`` installed (``dpkg -L``); None: no restriction."""
    if not packages:
        return None
    listed = subprocess.run(["dpkg", "-L", *packages], check=True, capture_output=True, text=True)
    return {Path(line) for line in listed.stdout.splitlines() if line.endswith(".pdf")}


def candidates(packages: list[str], without: list[str]) -> list[Path]:
    allowed, left_out = package_files(packages), package_files(without) or set()
    out = []
    for pdf in sorted(ROOT.rglob("*.pdf")):
        if (allowed is not None and pdf not in allowed) or pdf in left_out:
            continue
        try:
            with pymupdf.open(pdf) as doc:
                if 5 <= doc.page_count <= 300 and len(doc.get_toc()) >= 8:
                    out.append(pdf)
        except (RuntimeError, ValueError) as exc:  # a broken file is no candidate
            print(f"skipped {pdf}: {exc}", file=sys.stderr)
    return out


def _draw(arg: str) -> tuple[int, int]:
    """``SEED`` or ``SEED:N``: an earlier draw is replayed with its own size, not this one's (a
    smaller check draw replaying its predecessors with its own ``--n`` would leave part of
    each in the pool and share files with them)."""
    seed, _, n = arg.partition(":")
    try:
        return int(seed), int(n or DRAW)
    except ValueError:
        raise argparse.ArgumentTypeError(f"{arg!r}: expected SEED or SEED:N") from None


DRAW = 40
"""The size of every draw made before ``SEED:N`` could say another."""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("outdir", type=Path)
    ap.add_argument("--n", type=int, default=40)
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--package", action="append", default=[], metavar="DEB",
                    help="draw only from the PDFs these Debian packages installed (repeatable; "
                         "default: every texlive-doc PDF installed)")
    ap.add_argument("--without-package", action="append", default=[], metavar="DEB",
                    help="leave out the PDFs these Debian packages installed (repeatable)")
    ap.add_argument("--disjoint-from", type=_draw, action="append", default=[],
                    metavar="SEED[:N]",
                    help="leave out the files the draw with SEED took, N of them (default 40, "
                         "every earlier draw's size; repeatable, in the order drawn)")
    a = ap.parse_args()
    if not ROOT.is_dir():
        raise SystemExit(f"{ROOT} is missing: install Debian's texlive-*-doc packages")
    pool = candidates(a.package, a.without_package)
    for seed, n in a.disjoint_from:  # each earlier draw as it was made, from what was left
        other = list(pool)
        random.Random(seed).shuffle(other)
        taken = set(other[:n])
        pool = [pdf for pdf in pool if pdf not in taken]
    random.Random(a.seed).shuffle(pool)
    sample = pool[: a.n]
    args = [arg for pdf in sample for arg in ("--pdf", str(pdf))]
    subprocess.run([sys.executable, str(SHARED_BENCH / "make_pdf_cases.py"), str(a.outdir), *args],
                   check=True, stdout=subprocess.DEVNULL)
    print(f"{len(sample)} of {len(pool)} candidates in {a.outdir}")


if __name__ == "__main__":
    main()
