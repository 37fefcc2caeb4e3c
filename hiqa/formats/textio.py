"""Reading text files whose encoding is not known in advance.

Order of preference: a byte-order mark (UTF-8, UTF-16 or UTF-32, as Windows tools write them);
UTF-8 without one; then the Western code page cp1252 (a superset
of Latin-1's printable characters) when the bytes read as plausible Western text; then what
``charset_normalizer`` detects.  The detector alone is unreliable on short Western text: it read
Latin-1 "très" as cp1250 "trčs", and a nine-byte file as big5 or BOM-less UTF-16.  Whatever the
non-UTF-8 encoding, text that decodes to mostly non-letters (or to control characters) is refused as
binary instead of being indexed as gibberish.
"""
from __future__ import annotations

import codecs
import os
import stat
import unicodedata
from pathlib import Path

from hiqa.errors import DocumentError

WESTERN = ("cp1252", "latin_1", "iso8859_15")
MAX_FOREIGN_LETTERS = 0.35
"""Most a Western language's letters that are non-ASCII (Icelandic ~ 15 %, Russian in cp1251
read as cp1252: ~ 100 %)."""
MIN_LETTERS = 0.5
"""Least share of letters and digits among the non-space characters of text."""
MAX_CONTROLS = 0.01
"""Most share of control, unassigned or private-use characters (binary data has many)."""


BOMS = ((codecs.BOM_UTF32_LE, "utf-32"), (codecs.BOM_UTF32_BE, "utf-32"),
        (codecs.BOM_UTF8, "utf-8-sig"), (codecs.BOM_UTF16_LE, "utf-16"),
        (codecs.BOM_UTF16_BE, "utf-16"))
"""Byte-order marks, UTF-32's before UTF-16's (``FF FE 00 00`` begins with ``FF FE``)."""


def decode_bytes(data: bytes, source: str) -> tuple[str, list[str]]:
    """Decode ``data``: by its byte-order mark, else UTF-8, else as the module doc says.

    Returns the text and warnings (naming the encoding when it was not UTF-8).
    """
    for bom, codec in BOMS:
        if data.startswith(bom):
            try:
                text = data.decode(codec)
            except UnicodeDecodeError as exc:
                raise DocumentError(source, f"starts with a {codec.upper()} byte-order mark but "
                                    f"is not {codec.upper()} text ({exc.reason} at byte "
                                    f"{exc.start}); save it as UTF-8") from None
            note = [] if codec == "utf-8-sig" else [
                f"{source}: decoded as {codec.upper()} (byte-order mark)"]
            return _checked(text, source, codec), note
    if b"\x00" in data[:4096]:
        raise DocumentError(source, "looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig"), []  # valid UTF-8 is text: binary almost never is
    except UnicodeDecodeError:
        pass
    western = _western(data)
    if western is not None:
        return _checked(western, source, "cp1252"), [
            f"{source}: not UTF-8; decoded as cp1252 (Western European)"]
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None or (best.encoding.startswith(("utf_16", "utf_32")) and not best.bom):
        raise DocumentError(
            source, "cannot detect the text encoding, or it is not a text file; save the file as "
                    "UTF-8 and try again"
        )
    text = _checked(str(best), source, best.encoding)
    return text, [f"{source}: not UTF-8; decoded as {best.encoding}"]


def _western(data: bytes) -> str | None:
    """``data`` as cp1252 when that reads as Western text: every non-ASCII character a letter or
    common punctuation, and non-ASCII letters a minority (as in French, German, Spanish...)."""
    try:
        text = data.decode("cp1252")
    except UnicodeDecodeError:
        return None
    letters = foreign = 0
    for ch in text:
        if ch.isalpha():
            letters += 1
            if ord(ch) > 0x7F:
                foreign += 1
        elif ord(ch) > 0x7F and ch not in "«»–—‘’‚“”„…€£¥°§©®·•\u00a0×÷¡¿":
            return None
    return text if letters and foreign / letters <= MAX_FOREIGN_LETTERS else None


def _checked(text: str, source: str, encoding: str) -> str:
    """``text`` unless it is mostly non-letters or has control characters (binary data)."""
    visible = [ch for ch in text if not ch.isspace()]
    if not visible:
        return text
    letters = sum(1 for ch in visible if ch.isalnum())
    controls = sum(1 for ch in visible if unicodedata.category(ch) in ("Cc", "Cn", "Co", "Cs"))
    if letters / len(visible) < MIN_LETTERS or controls / len(visible) > MAX_CONTROLS:
        raise DocumentError(
            source, f"does not look like text (read as {encoding}, {letters / len(visible):.0%} "
                    "of its characters are letters or digits); if it is text, save it as UTF-8"
        )
    return text


def read_text(path: Path) -> tuple[str, list[str]]:
    """Read a regular file (a FIFO or device would block or never end) and decode it."""
    fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK)
    with os.fdopen(fd, "rb") as f:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise DocumentError(str(path), "not a regular file; only regular files are read")
        os.set_blocking(fd, True)
        data = f.read()
    return decode_bytes(data, str(path))
