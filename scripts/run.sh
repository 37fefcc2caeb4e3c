#!/usr/bin/env bash
# The README's first command: install the app into the project's Python (scripts/env.sh) and
# run it.  Arguments go to `streamlit run` (e.g. --server.port 8502).
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/env.sh
"$PY" -m pip install -q --disable-pip-version-check -e .
exec "$PY" -m streamlit run app.py "$@"
