# Sourced by scripts/run.sh and scripts/test.sh: sets PY to the project's Python.
#
# A stock Debian 12 / Ubuntu 24.04 Python refuses `pip install` (PEP 668,
# externally-managed-environment), so nothing is ever installed into it: PY is the active
# virtual environment's Python when there is one, $PYTHON when set, else the project's own
# .venv, made on first use (Debian ships venv's pip apart, in python3-venv: installed when
# missing).
if [ -n "${PYTHON:-}" ]; then
    PY=$PYTHON
elif [ -n "${VIRTUAL_ENV:-}" ] && [ -x "$VIRTUAL_ENV/bin/python" ]; then
    PY=$VIRTUAL_ENV/bin/python
else
    if [ ! -x .venv/bin/python ] || ! .venv/bin/python -m pip --version >/dev/null 2>&1; then
        rm -rf .venv
        if ! python3 -m venv .venv >/dev/null 2>&1; then
            rm -rf .venv
            SUDO=$([ "$(id -u)" = 0 ] && echo "" || echo sudo)
            echo "python3 -m venv needs Debian's python3-venv: installing it" >&2
            $SUDO apt-get update -qq && $SUDO apt-get install -y -qq --no-install-recommends \
                python3-venv >/dev/null
            python3 -m venv .venv
        fi
    fi
    PY=.venv/bin/python
fi
export PY
