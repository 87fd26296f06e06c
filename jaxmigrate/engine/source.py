"""Decode a Python file exactly as Python would, and encode it back byte-for-byte the same way.

The coding cookie and a UTF-8 BOM decide the encoding (``tokenize.detect_encoding``); line
endings are kept as they are (no universal-newline translation), so an unchanged text encodes
back to the identical bytes.
"""

from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass


@dataclass(frozen=True)
class DecodedSource:
    text: str
    encoding: str  # as Python names it, e.g. "utf-8", "utf-8-sig" (BOM), "iso-8859-1"; encode with it


def decode(data: bytes) -> DecodedSource:
    """Raises ``SyntaxError``/``LookupError``/``UnicodeDecodeError`` for undecodable files."""
    encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    codecs.lookup(encoding)
    return DecodedSource(data.decode(encoding), encoding)
