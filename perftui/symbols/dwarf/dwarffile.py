"""The file a DSO's DWARF is read from, as binutils' ``addr2line -e`` finds it: the file
itself when it has ``.debug_info``, else ``/usr/lib/debug/.build-id/xx/rest.debug`` with
the same build id, else ``.gnu_debuglink``'s file next to it, in its ``.debug/``, under
``/usr/lib/debug``, its CRC checked.  ELF headers only: nothing compiled is imported (a
cached result's check of its sources asks this, and needs no DWARF reader).
"""

from __future__ import annotations

import os
import zlib

from ..files.elfheaders import open_elf_headers
from ..files.safefile import SymbolFileError, is_regular_file

DEBUG_ROOT = "/usr/lib/debug"  # binutils' DEBUGDIR
MAX_FILE = 1 << 30  # the largest file read whole


def _has_dwarf(path: str) -> bool:
    try:
        with open_elf_headers(path) as h:
            return any(h.section(n) is not None for n in (".debug_info", ".zdebug_info"))
    except SymbolFileError:
        return False


def _build_id(path: str) -> str | None:
    try:
        with open_elf_headers(path) as h:
            return h.build_id
    except SymbolFileError:
        return None


def _debuglink(path: str) -> tuple[str, int] | None:
    """(file name, CRC) of ``.gnu_debuglink``."""
    try:
        with open_elf_headers(path) as h:
            sec = h.section(".gnu_debuglink")
            if sec is None:
                return None
            data = h.read(sec, ".gnu_debuglink", 4096)
            big = h.endian == ">"
    except SymbolFileError:
        return None
    name = data.partition(b"\0")[0]
    if not name or b"/" in name or len(data) < 4:
        return None
    return name.decode("utf-8", "replace"), int.from_bytes(data[-4:], "big" if big
                                                           else "little")


def _crc_ok(path: str, crc: int) -> bool:
    try:
        if os.path.getsize(path) > MAX_FILE:
            return False
        with open(path, "rb") as f:
            value = 0
            while chunk := f.read(1 << 20):
                value = zlib.crc32(chunk, value)
    except OSError:
        return False
    return value == crc


def dwarf_file(exe: str, debug_root: str = DEBUG_ROOT) -> str | None:
    """The file ``addr2line -e exe`` reads DWARF from (None: none found)."""
    if _has_dwarf(exe):
        return exe
    bid = _build_id(exe)
    if bid and len(bid) > 2:
        cand = os.path.join(debug_root, ".build-id", bid[:2], bid[2:] + ".debug")
        if is_regular_file(cand) and _build_id(cand) == bid and _has_dwarf(cand):
            return cand
    link = _debuglink(exe)
    if link is not None:
        name, crc = link
        d = os.path.dirname(os.path.realpath(exe))
        for cand in (os.path.join(d, name), os.path.join(d, ".debug", name),
                     debug_root + d + "/" + name):
            if is_regular_file(cand) and _has_dwarf(cand) and _crc_ok(cand, crc):
                return cand
    return None
