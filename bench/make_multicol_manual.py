"""Two LaTeX manuals alike but for their printed TOC, one column and two (``multicols``).

    python bench/make_multicol_manual.py DIR [SEED]   # needs pdflatex (Debian: texlive-latex-extra)
    python ../shared/bench/make_pdf_cases.py DIR/cases --pdf DIR/manual1col.pdf --pdf DIR/manual2col.pdf
    python bench/bench_structure.py --cases DIR/cases

Development data for reading a TOC printed in columns (docs/pdf-structure.md): 8 chapters of
2-4 sections and 1-2 subsections with seeded random titles, a third of the chapter titles long
enough to wrap in the TOC and in the body; the two-column TOC is narrow, so many entries wrap
over two or three rows with a hyphen.  The outline (hyperref bookmarks) is the gold.
"""
from __future__ import annotations

import random
import subprocess
import sys
from pathlib import Path

WORDS = ["valve", "pump", "filter", "pressure", "gauge", "seal", "housing", "rotor", "shaft", "bearing", "coupling", "motor", "inlet", "outlet", "flange", "gasket", "impeller", "casing", "drain", "vent"]
VERBS = ["checking", "cleaning", "replacing", "adjusting", "inspecting", "mounting", "aligning", "draining", "testing", "lubricating", "sealing", "tightening"]


def manual(seed: int = 3, parts: bool = False) -> str:
    rng = random.Random(seed)
    used: set[str] = set()

    def title(long: bool = False) -> str:
        while True:
            t = f"{rng.choice(VERBS).capitalize()} the {rng.choice(WORDS)} {rng.choice(WORDS)}"
            t += " assembly and its long service procedures" if long else ""
            if t not in used:
                used.add(t)
                return t

    def para(n: int) -> str:
        return " ".join(" ".join(rng.choice(WORDS) for _ in range(12)).capitalize() + "."
                        for _ in range(n))

    body = []
    for c in range(1, 9):
        if parts and c % 3 == 1:  # a part every three chapters, set at the chapters' indent
            body.append(f"\\part{{{rng.choice(WORDS).capitalize()} systems}}\n")
        body.append(f"\\chapter{{{title(long=c % 3 == 1)}}}\n{para(6)}\n")
        for _ in range(rng.randint(2, 4)):
            body.append(f"\\section{{{title()}}}\n{para(8)}\n")
            for _ in range(rng.randint(0, 2)):
                body.append(f"\\subsection{{{title()}}}\n{para(5)}\n")
    return "".join(body)


def main() -> None:
    if len(sys.argv) not in (2, 3):
        raise SystemExit(__doc__)
    out = Path(sys.argv[1])
    seed = int(sys.argv[2]) if len(sys.argv) == 3 else 3
    out.mkdir(parents=True, exist_ok=True)
    head = ("\\documentclass{report}\n\\usepackage{multicol}\n"
            "\\usepackage[bookmarks=true]{hyperref}\n"
            "\\title{Pump Service Manual}\\author{Maintenance}\n\\begin{document}\n\\maketitle\n")
    text = manual(seed)
    for name, toc in (("manual1col", "\\tableofcontents\n"),
                      ("manual2col", "\\begin{multicols}{2}\n\\tableofcontents\n\\end{multicols}\n")):
        (out / f"{name}.tex").write_text(head + toc + text + "\\end{document}\n", encoding="utf-8")
        for _ in range(2):  # the second run writes the TOC the first one collected
            subprocess.run(["pdflatex", "-interaction=batchmode", f"{name}.tex"], cwd=out,
                           check=True, capture_output=True)
        print(out / f"{name}.pdf")


if __name__ == "__main__":
    main()
