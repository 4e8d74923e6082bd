"""A coarse integer copy of the entry vectors: every row's cosine with a query, within a known
error, in a few dozen big-integer operations and without numpy.

`<git dir>/loa-mem/vectors.coarse` holds, for each whole block of `BLOCK` rows of
`vectors.bin`, every row rounded to integers of at most `limit(dim)` (about 11 bits for 256
dimensions: each row scaled by its largest component) and stored by column: column j of a
block is one Python integer whose 32-bit lanes are the rows' j-th integers. A query rounds
its vector the same way; the sum over j of (query's j-th integer) x (column j) then holds in
lane r the integer dot product of row r, which cannot overflow a lane (dim x limit^2 < 2^31),
so one multiply and one add of a 1 KB integer per column and block score 256 rows at once.

The estimate of row r's cosine carries a bound that always holds: with x~ the rounded row,
e = x - x~ and d the query's rounding error, |q.x - q~.x~| <= |q| |e| + |d| |x~|; |e| and |x~|
are kept per row. `nearest` (in `vectors`) computes the exact cosine of every row whose bound
can reach the top, so the ranking is the exact one. Rows after the last whole block (at most
`BLOCK` - 1, the entries added since) are scored exactly.

The file shares `vectors.bin`'s generation and model stamp: another generation, another model,
a damaged block (each carries a CRC-32 of itself) or an estimate its exact cosine contradicts
make `vectors.sync` rebuild it from `vectors.bin` (no embedding). Blocks are
only ever appended, as rows are.
"""

from __future__ import annotations

import binascii
import math
import os
import struct
import sys
from array import array
from itertools import repeat
from operator import add, mul, sub
from typing import NamedTuple

MAGIC = b"LOACOARS"
FORMAT = 1
HEADER = struct.Struct("<8sIIII16s16s")  # magic, format, dim, block rows, blocks, generation, model
HEADER_SIZE = 64
FILE_NAME = "vectors.coarse"
BLOCK = 256
HALF = 1 << 31  # each lane's bias: lanes hold dot + HALF in [1, 2^32)
EPSILON = 1e-9  # the float arithmetic of an estimate and of an exact cosine, generously
_LANE = next(code for code in "IL" if array(code).itemsize == 4)
_BIG_ENDIAN = sys.byteorder == "big"


class Block(NamedTuple):
    scales: array[float]  # per row: its largest component / limit
    errors: array[float]  # per row: |x - x~|
    norms: array[float]  # per row: |x~|
    columns: list[int]


def limit(dim: int) -> int:
    """The largest integer a component is rounded to: dim x limit^2 fits a signed 32-bit lane."""
    return math.isqrt((HALF - 1) // dim)


def block_bytes(dim: int) -> int:
    return 24 * BLOCK + dim * (4 * BLOCK + 1) + 4


def encode(raw: bytes, dim: int) -> bytes:
    """Whole blocks of the file from the float32 rows `raw` of `vectors.bin` (a multiple of
    `BLOCK` rows). Written rarely (every `BLOCK` new entries, or with the whole vectors file),
    so numpy does it."""
    import numpy as np

    top = limit(dim)
    rows = np.frombuffer(raw, dtype="<f4").reshape(-1, dim).astype(np.float64)
    largest = np.abs(rows).max(axis=1)
    ints = np.rint(rows * (top / np.where(largest > 0, largest, 1.0))[:, None])
    unit = largest / top
    near = ints * unit[:, None]
    errors = np.sqrt(((rows - near) ** 2).sum(axis=1))
    norms = np.sqrt((near ** 2).sum(axis=1))
    lanes = (ints.astype(np.int64) + top).astype("<u4")  # lanes hold v + top >= 0
    shift = int.from_bytes(np.full(BLOCK, top, dtype="<u4").tobytes(), "little")
    out = []
    for start in range(0, len(rows), BLOCK):
        part = slice(start, start + BLOCK)
        body = b"".join([np.ascontiguousarray(v[part], dtype="<f8").tobytes()
                         for v in (unit, errors, norms)] + [
            (int.from_bytes(column.tobytes(), "little") - shift).to_bytes(
                4 * BLOCK + 1, "little", signed=True)
            for column in np.ascontiguousarray(lanes[part].T)])
        out.append(body + struct.pack("<I", binascii.crc32(body)))
    return b"".join(out)


def header(generation: str, model: str, dim: int, blocks: int) -> bytes:
    return HEADER.pack(MAGIC, FORMAT, dim, BLOCK, blocks, bytes.fromhex(generation),
                       bytes.fromhex(model)).ljust(HEADER_SIZE, b"\0")


def read_blocks(path: str, generation: str, model: str, dim: int) -> int | None:
    """How many whole blocks the file holds for this generation, model and dim (None: not
    this vectors file's copy, or damaged)."""
    try:
        with open(path, "rb") as handle:
            raw = handle.read(HEADER_SIZE)
        magic, form, found_dim, block, blocks, gen, mod = HEADER.unpack_from(raw)
        size = os.stat(path).st_size
    except (OSError, struct.error):
        return None
    if (magic != MAGIC or form != FORMAT or found_dim != dim or block != BLOCK
            or gen.hex() != generation or mod.hex() != model
            or size < HEADER_SIZE + blocks * block_bytes(dim)):
        return None
    return int(blocks)


def load(path: str, blocks: int, dim: int, first: int = 0) -> list[Block] | None:
    """Blocks `first` to `blocks` (excluded), each checked against its CRC-32 (None: one is
    damaged)."""
    import mmap

    size = block_bytes(dim)
    try:
        with open(path, "rb") as handle:
            mapped = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
    except (OSError, ValueError):  # ValueError: an empty file
        return None
    if len(mapped) < HEADER_SIZE + blocks * size:
        return None
    view = memoryview(mapped)[HEADER_SIZE:]
    width = 4 * BLOCK + 1
    out = []
    for start in range(first * size, blocks * size, size):
        body = view[start:start + size - 4]
        if binascii.crc32(body) != struct.unpack_from("<I", view, start + size - 4)[0]:
            return None
        meta = [array("d") for _ in range(3)]
        for n, part in enumerate(meta):
            part.frombytes(body[n * 8 * BLOCK:(n + 1) * 8 * BLOCK])
            if _BIG_ENDIAN:
                part.byteswap()
        at = 24 * BLOCK
        out.append(Block(meta[0], meta[1], meta[2], [
            int.from_bytes(body[at + j * width:at + (j + 1) * width], "little", signed=True)
            for j in range(dim)]))
    return out


def estimate(blocks: list[Block], query: tuple[float, ...]) -> tuple[list[float], list[float]]:
    """Each covered row's estimated cosine with the unit vector `query`, and its error bound."""
    dim = len(query)
    largest = max(map(abs, query), default=0.0)
    if largest == 0 or not blocks:
        rows = len(blocks) * BLOCK
        return [0.0] * rows, [EPSILON] * rows
    top = limit(dim)
    ints = [round(v * top / largest) for v in query]
    unit = largest / top
    size = math.sqrt(math.fsum(v * v for v in query))
    off = math.sqrt(math.fsum((v - i * unit) ** 2 for v, i in zip(query, ints, strict=True)))
    bias = int.from_bytes(struct.pack("<I", HALF) * BLOCK, "little")
    estimates: list[float] = []
    bounds: list[float] = []
    for block in blocks:
        total = sum(map(mul, ints, block.columns), bias)
        lanes = array(_LANE, total.to_bytes(4 * BLOCK, "little"))
        if _BIG_ENDIAN:
            lanes.byteswap()
        # (lane - HALF) x scale x unit, and size x error + off x norm + EPSILON, row by row
        estimates += map(mul, map(sub, lanes, repeat(HALF)), map(mul, block.scales,
                                                                 repeat(unit)))
        bounds += map(add, map(mul, block.errors, repeat(size)),
                      map(add, map(mul, block.norms, repeat(off)), repeat(EPSILON)))
    return estimates, bounds
