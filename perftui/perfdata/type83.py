"""Type 83: upstream's COMPRESSED2 or the RFC's KMOD_SEC_MAP.

See docs/format.md, "Type 83".
"""

from __future__ import annotations

import struct

from .constants import KMOD_SEC_MAP, UNKNOWN_83, RecordType

ZSTD_MAGIC = b"\x28\xb5\x2f\xfd"


def classify_83(raw: bytes | memoryview, order: str) -> int:
    """Tell upstream COMPRESSED2 from the RFC's KMOD_SEC_MAP (docs/format.md)."""
    size = len(raw)
    if size >= 16:
        data_size = struct.unpack_from(order + "Q", raw, 8)[0]
        if 16 + data_size <= size < 16 + data_size + 8:
            return RecordType.COMPRESSED2
    if kmod_layout(raw, order) is not None:
        return KMOD_SEC_MAP
    if size > 20 and bytes(raw[16:20]) == ZSTD_MAGIC:
        return RecordType.COMPRESSED2
    return UNKNOWN_83


def kmod_layout(raw: bytes | memoryview, order: str) -> tuple[int, int, int] | None:
    """Where a KMOD_SEC_MAP's strings lie: (name_len, file_start, file_len) or None.

    The RFC synthesizer puts the file name at ``data[sec_name_len + 1]`` (one gap byte,
    docs/format.md); the struct comment pictures ``"name\\0filename\\0"``.  Both are accepted,
    the RFC's own layout first.
    """
    size = len(raw)
    if size < 48:
        return None
    snl, fnl = struct.unpack_from(order + "HH", raw, 40)
    if snl < 2 or fnl < 2 or 44 + snl + fnl > size:
        return None
    data = bytes(raw[44:])
    name = data[:snl]
    if name[-1] != 0 or 0 in name[:-1]:
        return None
    for start in (snl + 1, snl):
        path = data[start:start + fnl]
        if len(path) == fnl and path[-1] == 0 and 0 not in path[:-1]:
            return snl, 44 + start, fnl
    return None
