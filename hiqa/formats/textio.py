"""Reading text files whose encoding is not known in advance."""
from __future__ import annotations

from pathlib import Path

from ..errors import DocumentError


def decode_bytes(data: bytes, source: str) -> tuple[str, list[str]]:
    """Decode ``data``: UTF-8 (with or without BOM) first, else the detected encoding.

    Returns the text and warnings (naming the detected encoding when it was not UTF-8).
    """
    if b"\x00" in data[:4096] and not data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise DocumentError(source, "looks like a binary file, not text")
    try:
        return data.decode("utf-8-sig"), []
    except UnicodeDecodeError:
        pass
    from charset_normalizer import from_bytes

    best = from_bytes(data).best()
    if best is None:
        raise DocumentError(
            source, "cannot detect the text encoding; save the file as UTF-8 and try again"
        )
    text = str(best)
    return text, [f"{source}: not UTF-8; decoded as {best.encoding}"]


def read_text(path: Path) -> tuple[str, list[str]]:
    return decode_bytes(path.read_bytes(), str(path))
