"""Python source bytes as text and back: a UTF-8 BOM, a PEP 263 coding cookie, else UTF-8."""
from __future__ import annotations

import codecs
import io
import tokenize
from dataclasses import dataclass

from .fileio import SourceError


@dataclass
class Decoded:
    text: str  # line endings as in the file
    encoding: str = "utf-8"
    bom: bool = False


def decode_python(data: bytes) -> Decoded:
    """Source bytes as text, per PEP 263: a UTF-8 BOM, a coding cookie on line 1 or 2, else UTF-8."""
    bom = data.startswith(codecs.BOM_UTF8)
    body = data[3:] if bom else data
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
    except SyntaxError as exc:
        if "invalid or missing encoding declaration" not in str(exc):
            # an unknown codec in the cookie, or a cookie that contradicts the BOM
            raise SourceError(f"{exc}; not analysed") from None
        encoding = "utf-8"  # no cookie and not UTF-8: the decode below says where
    if encoding == "utf-8-sig":
        encoding = "utf-8"
    try:
        text = body.decode(encoding)
    except UnicodeDecodeError as exc:
        offset = exc.start + (3 if bom else 0)
        name = "UTF-8" if encoding == "utf-8" else encoding
        raise SourceError(f"not {name} (byte 0x{body[exc.start]:02x} at offset {offset}); not analysed") from None
    except LookupError:
        raise SourceError(f"unknown encoding {encoding!r}; not analysed") from None
    return Decoded(text, encoding, bom)


def encode_python(text: str, decoded: Decoded) -> bytes:
    return (codecs.BOM_UTF8 if decoded.bom else b"") + text.encode(decoded.encoding)
