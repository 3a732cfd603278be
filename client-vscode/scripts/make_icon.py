#!/usr/bin/env python3
"""Draws client-vscode/images/icon.png (128x128): a nabla (the gradient) with a warning mark, on a dark tile.

Pure Python (zlib + struct), so it runs anywhere:  python3 client-vscode/scripts/make_icon.py
"""
import math
import struct
import zlib
from pathlib import Path

SIZE = 128
SAMPLES = 4  # supersampling per axis, for smooth edges
TILE = (31, 36, 48)
ORANGE = (238, 76, 44)
WHITE = (255, 255, 255)


def in_rounded_square(x, y, margin=4, radius=22):
    lo, hi = margin, SIZE - margin
    cx = min(max(x, lo + radius), hi - radius)
    cy = min(max(y, lo + radius), hi - radius)
    return lo <= x <= hi and lo <= y <= hi and (x - cx) ** 2 + (y - cy) ** 2 <= radius ** 2


def seg_distance(px, py, ax, ay, bx, by):
    dx, dy = bx - ax, by - ay
    t = max(0.0, min(1.0, ((px - ax) * dx + (py - ay) * dy) / (dx * dx + dy * dy)))
    return math.hypot(px - (ax + t * dx), py - (ay + t * dy))


TRIANGLE = [(26, 35), (102, 35), (64, 103)]  # a nabla: point down


def on_nabla(x, y, width=11):
    return any(seg_distance(x, y, *TRIANGLE[i], *TRIANGLE[(i + 1) % 3]) <= width / 2 for i in range(3))


def on_mark(x, y):
    bar = seg_distance(x, y, 64, 50, 64, 73) <= 5
    dot = math.hypot(x - 64, y - 85) <= 5.5
    return bar or dot


def pixel(x, y):
    acc = [0.0, 0.0, 0.0, 0.0]
    for sx in range(SAMPLES):
        for sy in range(SAMPLES):
            px, py = x + (sx + 0.5) / SAMPLES, y + (sy + 0.5) / SAMPLES
            if not in_rounded_square(px, py):
                continue
            color = WHITE if on_mark(px, py) else ORANGE if on_nabla(px, py) else TILE
            for i in range(3):
                acc[i] += color[i]
            acc[3] += 255
    n = SAMPLES * SAMPLES
    alpha = acc[3] / n
    if alpha == 0:
        return (0, 0, 0, 0)
    covered = acc[3] / 255
    return tuple(round(acc[i] / covered) for i in range(3)) + (round(alpha),)


def png(width, height, rows):
    def chunk(kind, data):
        return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)

    raw = b"".join(b"\x00" + bytes(v for px in row for v in px) for row in rows)
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", zlib.compress(raw, 9)) + chunk(b"IEND", b"")


if __name__ == "__main__":
    out = Path(__file__).resolve().parents[1] / "images" / "icon.png"
    out.parent.mkdir(exist_ok=True)
    out.write_bytes(png(SIZE, SIZE, [[pixel(x, y) for x in range(SIZE)] for y in range(SIZE)]))
    print(out)
