#!/usr/bin/env python3
"""Draws resources/icons/tilescope.png: a tile heatmap (the config space, the best tile ringed)
on a rounded square. Plain Python (zlib), so it runs anywhere: python3 make_icon.py"""
import math
import os
import struct
import zlib

SIZE = 256
SS = 4  # supersampling per axis

# viridis at a few stops
VIRIDIS = [(68, 1, 84), (59, 82, 139), (33, 145, 140), (94, 201, 98), (253, 231, 37)]


def viridis(t):
    t = min(max(t, 0.0), 1.0) * (len(VIRIDIS) - 1)
    i = min(int(t), len(VIRIDIS) - 2)
    f = t - i
    a, b = VIRIDIS[i], VIRIDIS[i + 1]
    return tuple(round(a[k] + (b[k] - a[k]) * f) for k in range(3))


def rounded(x, y, x0, y0, x1, y1, r):
    """True when (x, y) lies inside the rounded rectangle."""
    if not (x0 <= x < x1 and y0 <= y < y1):
        return False
    cx = min(max(x, x0 + r), x1 - r)
    cy = min(max(y, y0 + r), y1 - r)
    return (x - cx) ** 2 + (y - cy) ** 2 <= r * r


N = 4
MARGIN, GAP = 36, 10
TILE = (SIZE - 2 * MARGIN - (N - 1) * GAP) / N
BEST = (2, 1)  # column, row


def tile_colour(col, row):
    # a smooth landscape with its optimum at BEST
    d = math.hypot(col - BEST[0], row - BEST[1])
    return viridis(1.0 - d / 3.6)


def sample(x, y):
    if not rounded(x, y, 8, 8, SIZE - 8, SIZE - 8, 44):
        return (0, 0, 0, 0)
    colour = (30, 36, 48, 255)
    for row in range(N):
        for col in range(N):
            x0 = MARGIN + col * (TILE + GAP)
            y0 = MARGIN + row * (TILE + GAP)
            if (col, row) == BEST and rounded(x, y, x0 - 6, y0 - 6, x0 + TILE + 6, y0 + TILE + 6, 12):
                colour = (255, 255, 255, 255)
            if rounded(x, y, x0, y0, x0 + TILE, y0 + TILE, 8):
                return tile_colour(col, row) + (255,)
    return colour


rows = []
for py in range(SIZE):
    row = bytearray([0])
    for px in range(SIZE):
        acc = [0, 0, 0, 0]
        for sy in range(SS):
            for sx in range(SS):
                c = sample(px + (sx + 0.5) / SS, py + (sy + 0.5) / SS)
                a = c[3]
                acc[0] += c[0] * a
                acc[1] += c[1] * a
                acc[2] += c[2] * a
                acc[3] += a
        alpha = acc[3]
        if alpha == 0:
            row += bytes(4)
        else:
            row += bytes([round(acc[0] / alpha), round(acc[1] / alpha), round(acc[2] / alpha), round(alpha / SS / SS)])
    rows.append(bytes(row))


def chunk(kind, data):
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data) & 0xFFFFFFFF)


png = b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", SIZE, SIZE, 8, 6, 0, 0, 0))
png += chunk(b"IDAT", zlib.compress(b"".join(rows), 9)) + chunk(b"IEND", b"")
with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "tilescope.png"), "wb") as f:
    f.write(png)
