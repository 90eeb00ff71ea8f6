"""Make a large recording by repeating the live part of a real one's data section."""

from __future__ import annotations

import struct
import sys


def repeat_data(src_path: str, dst_path: str, target: int) -> tuple[int, int]:
    """Write ``dst_path``: ``src_path`` (a little-endian file-mode recording) whose records
    after FINISHED_INIT are repeated until the file is about ``target`` bytes.

    Returns (repetitions, file size).  Feature offsets are moved past the new data.
    """
    with open(src_path, "rb") as f:
        src = f.read()
    d_off, d_size = struct.unpack_from("<QQ", src, 40)
    data = src[d_off:d_off + d_size]
    pos = 0
    while pos < len(data):
        t, _m, s = struct.unpack_from("<IHH", data, pos)
        pos += s
        if t == 82:  # FINISHED_INIT
            break
    head, body = data[:pos], data[pos:]
    reps = max(1, -(-(target - len(src)) // max(1, len(body))))  # at least target
    delta = len(head) + len(body) * reps - d_size
    feats = bytearray(src[d_off + d_size:])
    nbits = sum(bin(b).count("1") for b in src[72:104])
    for k in range(nbits):
        o, _s = struct.unpack_from("<QQ", feats, 16 * k)
        if o:
            struct.pack_into("<Q", feats, 16 * k, o + delta)
    header = bytearray(src[:d_off])
    struct.pack_into("<Q", header, 48, d_size + delta)
    with open(dst_path, "wb") as f:
        f.write(header)
        f.write(head)
        block = body * max(1, (8 << 20) // max(1, len(body)))
        per_block = len(block) // max(1, len(body))
        left = reps
        while left >= per_block:
            f.write(block)
            left -= per_block
        f.write(body * left)
        f.write(feats)
        size = f.tell()
    return reps, size


if __name__ == "__main__":
    print(repeat_data(sys.argv[1], sys.argv[2], int(float(sys.argv[3]))))
