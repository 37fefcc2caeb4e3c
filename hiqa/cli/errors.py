"""What the ``hiqa`` command prints when a command fails: one line with the fix, never a traceback.

``HiqaError`` messages are written for users already.  Errors the engine did not anticipate
(``OSError`` from the file system, ``sqlite3`` errors from the caches, a stray ``ValueError``) are
translated here; ``--debug`` prints the traceback as well, for a bug report.
"""
from __future__ import annotations

import errno
import sqlite3
import sys
import traceback
from pathlib import Path

from hiqa.errors import HiqaError, StorageError

EXIT_USAGE = 2
"""A bad argument or input the user can correct (also argparse's code)."""
EXIT_FAILURE = 1
"""The environment failed: file system, storage, an unexpected error."""

DEBUG_FLAG = "--debug"


def split_debug(argv: list[str]) -> tuple[list[str], bool]:
    """Remove ``--debug`` wherever it appears before ``--``, so it works after a subcommand too."""
    end = argv.index("--") if "--" in argv else len(argv)
    debug = DEBUG_FLAG in argv[:end]
    return [a for i, a in enumerate(argv) if i >= end or a != DEBUG_FLAG], debug


def describe(exc: BaseException, data_dir: Path) -> tuple[str, int]:
    """The one-line message and exit code for ``exc``."""
    if isinstance(exc, StorageError):
        return str(exc), EXIT_FAILURE
    if isinstance(exc, HiqaError):
        return str(exc), EXIT_USAGE
    if isinstance(exc, sqlite3.Error) or (_storage_errno(exc) and _under(exc, data_dir)):
        from hiqa.index.store import storage_error

        return str(storage_error(exc, data_dir)), EXIT_FAILURE
    if isinstance(exc, FileNotFoundError):
        message = (f"{exc.filename or exc}: no such file or directory; check the path "
                   "(relative paths start at the current folder)")
        return message, EXIT_USAGE
    if isinstance(exc, IsADirectoryError):
        return f"{exc.filename}: is a folder, not a file; give a file path", EXIT_USAGE
    if isinstance(exc, NotADirectoryError):
        message = (f"{exc.filename}: a file is in the way where a folder is needed; move it or "
                   "choose another --data-dir")
        return message, EXIT_FAILURE
    if isinstance(exc, OSError):
        where = f"{exc.filename}: " if exc.filename else ""
        message = (f"{where}{exc.strerror or exc}; check the path and its permissions "
                   f"(rerun with {DEBUG_FLAG} for details)")
        return message, EXIT_FAILURE
    if isinstance(exc, (ValueError, UnicodeError)):
        message = (f"invalid input: {exc} (rerun with {DEBUG_FLAG} for the traceback; report it "
                   "if the message does not say what to change)")
        return message, EXIT_USAGE
    message = (f"unexpected {type(exc).__name__}: {exc}. This is a bug: rerun with {DEBUG_FLAG} "
               "and report the traceback")
    return message, EXIT_FAILURE


def _storage_errno(exc: BaseException) -> bool:
    return isinstance(exc, OSError) and exc.errno in (
        errno.EROFS, errno.ENOSPC, errno.EDQUOT, errno.EACCES, errno.EPERM)


def _under(exc: BaseException, data_dir: Path) -> bool:
    """Whether the failing path is the data directory's (or unknown): a file the user named
    that cannot be read is their input's problem, not the data directory's."""
    name = getattr(exc, "filename", None)
    if name is None:
        return True
    try:
        Path(name).resolve().relative_to(data_dir.resolve())
    except (ValueError, OSError):
        return False
    return True


def report(exc: BaseException, data_dir: Path, debug: bool) -> int:
    """Print ``exc`` as one ``error:`` line (after the traceback with ``--debug``); return the
    exit code."""
    message, code = describe(exc, data_dir)
    if debug:
        traceback.print_exception(exc, file=sys.stderr)
    print(f"error: {message}", file=sys.stderr)
    return code
