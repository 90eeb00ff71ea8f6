"""The numpy record walk finds exactly the records of the plain loop."""

from __future__ import annotations

import random
import struct
from array import array

import pytest

from perftui.perfdata.speculate import speculate
from perftui.perfdata.walk import SPECIAL, Walker


def reference(buf: bytes, order: str) -> list[int]:
    """Record starts by the obvious loop (specials and all, no payloads in these streams)."""
    out, pos = [], 0
    while pos + 8 <= len(buf):
        _t, _m, size = struct.unpack_from(order + "IHH", buf, pos)
        if size < 8 or pos + size > len(buf):
            break
        out.append(pos)
        pos += size
    return out


def stream(rng: random.Random, order: str, n: int) -> bytes:
    """Records whose bodies are full of words that look like record headers."""
    parts = []
    for _ in range(n):
        r = rng.random()
        if r < 0.03:  # an unaligned perf-tool record (HEADER_FEATURE-like, not special here)
            size = rng.randrange(9, 200)
            parts.append(struct.pack(order + "IHH", 75, 0, size) + bytes(size - 8))
            continue
        if r < 0.06:
            parts.append(struct.pack(order + "IHH", 68, 0, 8))
            continue
        words = rng.randrange(1, 40)
        body = []
        for _ in range(words):
            k = rng.random()
            if k < 0.3:  # a fake header: plausible type, size multiple of 8
                body.append(struct.pack(order + "IHH", rng.randrange(1, 23), 0,
                                        8 * rng.randrange(1, 300)))
            else:
                body.append(rng.getrandbits(64).to_bytes(8, "little"))
        t = rng.choice([9, 9, 9, 1, 3, 10, 4, 7])
        parts.append(struct.pack(order + "IHH", t, rng.randrange(0, 8), 8 + 8 * words)
                     + b"".join(body))
    return b"".join(parts)


@pytest.mark.parametrize("order", "<>")
@pytest.mark.parametrize("seed", range(12))
def test_speculation_matches_plain_loop(order: str, seed: int) -> None:
    rng = random.Random(seed)
    buf = stream(rng, order, rng.randrange(2000, 9000))
    if seed % 3 == 0:
        buf += b"\x01\x02\x03"  # a torn tail
    w = Walker(order, [], [])
    offs = array("q")
    pos, end = 0, len(buf)
    while True:
        pos = speculate(buf, pos, end, offs, order, 1 << 30)
        pos, status = w._scan(buf, pos, end, offs, len(offs) + 7)
        if status != 2:
            break
    assert list(offs) == reference(buf, order)
    assert all(struct.unpack_from(order + "I", buf, o)[0] not in SPECIAL for o in offs)


def test_speculation_respects_the_limit() -> None:
    rng = random.Random(5)
    buf = stream(rng, "<", 3000)
    offs = array("q")
    pos = speculate(buf, 0, len(buf), offs, "<", 100)
    assert len(offs) <= 100
    assert list(offs) == reference(buf, "<")[: len(offs)]
    if len(offs) < len(reference(buf, "<")):
        assert pos == reference(buf, "<")[len(offs)]
