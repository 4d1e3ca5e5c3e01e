"""The site's icon, ``/favicon.ico``: a die showing five, drawn here at 32x32 pixels.

Browsers ask for ``/favicon.ico`` on every site whatever the page says, so the answer is
a real ICO file (one PNG image inside, which every current browser reads), made once
from a few lines of arithmetic rather than a binary file in the repository.
"""

from __future__ import annotations

import struct
import zlib

SIZE = 32
_FACE = (255, 250, 240, 255)  # the die, as the board's dice
_EDGE = (122, 82, 48, 255)  # the site's brown
_PIP = (29, 29, 29, 255)
_CLEAR = (0, 0, 0, 0)
_PIPS = ((9, 9), (23, 9), (16, 16), (9, 23), (23, 23))


def _pixel(x: int, y: int) -> tuple[int, int, int, int]:
    cx, cy = x + 0.5, y + 0.5
    # A square with rounded corners (radius 6) from 1 to 31, its edge 2 pixels wide.
    dx = max(7 - cx, 0, cx - 25)
    dy = max(7 - cy, 0, cy - 25)
    outside = (dx * dx + dy * dy) ** 0.5
    if outside > 6:
        return _CLEAR
    if outside > 4:
        return _EDGE
    for px, py in _PIPS:
        if (cx - px) ** 2 + (cy - py) ** 2 <= 3.2 ** 2:
            return _PIP
    return _FACE


def _chunk(kind: bytes, data: bytes) -> bytes:
    body = kind + data
    return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))


def png() -> bytes:
    """The icon as an RGBA PNG."""
    rows = b"".join(
        b"\x00" + bytes(v for x in range(SIZE) for v in _pixel(x, y)) for y in range(SIZE))
    header = struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0)
    return (b"\x89PNG\r\n\x1a\n" + _chunk(b"IHDR", header)
            + _chunk(b"IDAT", zlib.compress(rows, 9)) + _chunk(b"IEND", b""))


def ico() -> bytes:
    """The PNG in an ICO container: a 6-byte header and one 16-byte directory entry."""
    image = png()
    header = struct.pack("<HHH", 0, 1, 1)
    entry = struct.pack("<BBBBHHII", SIZE, SIZE, 0, 0, 1, 32, len(image), 6 + 16)
    return header + entry + image
