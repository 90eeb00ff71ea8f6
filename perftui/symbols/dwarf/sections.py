"""A file's DWARF sections as byte arrays, and the list of its units.

Sections are read from an :class:`~perftui.symbols.code.elfcode.ElfCodeImage` by name
(``.debug_*``, or ``.zdebug_*``); ``SHF_COMPRESSED`` sections (zlib or zstd, the ELF
compression header) and ``.zdebug`` ones (``ZLIB`` and a big-endian size) are decompressed,
each up to :data:`MAX_SECTION` bytes: a size claimed past that, or an output that does
not match the claim, makes the section unusable, with a note.  The sections of a
relocatable file (``.ko``) are taken as they are: their references into other sections are
offsets, which only relocations would make right; perftui reads inline chains of user
programs and libraries only.

:func:`units` lists the units of ``.debug_info`` (compiled: a hostile file with 10^6
units is listed in milliseconds), stopping at the first header that does not fit.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass, field

import numpy as np
from numba import njit

from ..code.elfcode import SHT_NOBITS, ElfCodeImage
from .forms import ERR, i64, word

__all__ = ["MAX_SECTION", "DwarfSections", "Units", "aranges", "units"]

MAX_SECTION = 1 << 30
_SHF_COMPRESSED = 0x800
_NAMES = ("info", "abbrev", "str", "line", "line_str", "str_offsets", "addr", "ranges",
          "rnglists", "aranges")
_EMPTY = np.zeros(0, np.uint8)


@dataclass
class DwarfSections:
    """The DWARF sections of one file (an empty array for a missing one)."""

    path: str
    big: bool
    addr_size: int
    data: dict[str, np.ndarray] = field(default_factory=dict)
    raw: dict[str, bytes] = field(default_factory=dict)  # the same bytes (str.find)
    notes: list[str] = field(default_factory=list)

    def __getitem__(self, name: str) -> np.ndarray:
        return self.data.get(name, _EMPTY)

    def cstr(self, name: str, off: int) -> str | None:
        """The NUL-terminated string at ``off`` of a section (None: outside it; at most
        64 KiB: a longer one is cut there)."""
        raw = self.raw.get(name, b"")
        if not 0 <= off < len(raw):
            return None
        end = raw.find(b"\0", off, off + (1 << 16))
        return raw[off:end if end >= 0 else min(len(raw), off + (1 << 16))].decode(
            "utf-8", "backslashreplace")

    @classmethod
    def of(cls, image: ElfCodeImage) -> DwarfSections:
        out = cls(image.path, not image.little_endian, 8 if image.elfclass == 64 else 4)
        by_name = {s.name: s for s in image.sections}
        for n in _NAMES:
            sec = by_name.get(f".debug_{n}")
            z = False
            if sec is None:
                sec = by_name.get(f".zdebug_{n}")
                z = sec is not None
            if sec is None or sec.type == SHT_NOBITS or not sec.size:
                continue
            raw = bytes(image.section_bytes(sec))
            try:
                if sec.flags & _SHF_COMPRESSED:
                    raw = _elf_compressed(raw, image.elfclass == 64, image.little_endian)
                elif z and raw[:4] == b"ZLIB":
                    raw = _inflate(raw[12:], struct.unpack(">Q", raw[4:12])[0])
            except ValueError as e:
                out.notes.append(f"{image.path}: {sec.name}: {e}")
                continue
            out.raw[n] = raw
            out.data[n] = np.frombuffer(raw, np.uint8)
        return out


def _inflate(data: bytes, size: int) -> bytes:
    if size > MAX_SECTION:
        raise ValueError(f"claims {size} bytes decompressed, over the {MAX_SECTION} cap")
    d = zlib.decompressobj()
    try:
        out = d.decompress(data, size + 1)
    except zlib.error as e:
        raise ValueError(f"bad zlib data ({e})") from None
    if len(out) != size:
        raise ValueError(f"decompressed to {len(out)} bytes, not the {size} it claims")
    return out


def _elf_compressed(data: bytes, is64: bool, little: bool) -> bytes:
    o = "<" if little else ">"
    head = 24 if is64 else 12
    if len(data) < head:
        raise ValueError("compressed section shorter than its header")
    if is64:
        ch_type, _, size, _ = struct.unpack(o + "IIQQ", data[:24])
    else:
        ch_type, size, _ = struct.unpack(o + "III", data[:12])
    if ch_type == 1:
        return _inflate(data[head:], size)
    if ch_type == 2:
        if size > MAX_SECTION:
            raise ValueError(f"claims {size} bytes decompressed, over the {MAX_SECTION} cap")
        import zstandard

        try:
            out = zstandard.ZstdDecompressor().decompress(data[head:], max_output_size=size)
        except zstandard.ZstdError as e:
            raise ValueError(f"bad zstd data ({e})") from None
        if len(out) != size:
            raise ValueError(f"decompressed to {len(out)} bytes, not the {size} it claims")
        return out
    raise ValueError(f"unknown compression type {ch_type}")


@njit(cache=True, nogil=True)
def _aranges(b: np.ndarray, big: bool, out: np.ndarray) -> int:
    """``.debug_aranges`` into ``out`` (n x 3: address, length, unit offset); the count
    (a set that does not fit ends the section; -1: ``out`` is full)."""
    end = len(b)
    pos = 0
    n = 0
    while pos < end:
        start = pos
        length, pos = word(b, pos, end, 4, big)
        osize = 4
        if pos >= 0 and length == np.uint64(0xFFFFFFFF):
            length, pos = word(b, pos, end, 8, big)
            osize = 8
        if pos < 0 or length > np.uint64(end - pos):
            break
        set_end = pos + i64(length)
        _v, pos = word(b, pos, set_end, 2, big)
        info_off, pos = word(b, pos, set_end, osize, big)
        asz, pos = word(b, pos, set_end, 1, big)
        _s, pos = word(b, pos, set_end, 1, big)
        a = i64(asz)
        if pos < 0 or (a != 4 and a != 8):
            pos = set_end
            continue
        pos = start + ((pos - start + 2 * a - 1) // (2 * a)) * (2 * a)
        while pos + 2 * a <= set_end:
            x, pos = word(b, pos, set_end, a, big)
            ln, pos = word(b, pos, set_end, a, big)
            if x == 0 and ln == 0:
                break
            if ln != 0:
                if n >= out.shape[0]:
                    return -1
                out[n, 0] = x
                out[n, 1] = ln
                out[n, 2] = info_off
                n += 1
        pos = set_end
    return n


def aranges(b: np.ndarray, big: bool) -> np.ndarray:
    """``.debug_aranges``: (address, length, unit offset) rows, uint64 (n x 3)."""
    cap = max(16, len(b) // 16)
    while True:
        out = np.zeros((cap, 3), np.uint64)
        n = _aranges(b, big, out)
        if n >= 0:
            return out[:n]
        cap *= 2


@dataclass
class Units:
    """Parallel arrays, one entry per unit header of ``.debug_info``, in section order."""

    offset: np.ndarray  # int64: the header's offset
    end: np.ndarray  # int64: the unit's end
    die: np.ndarray  # int64: its first DIE
    version: np.ndarray  # int64
    offset_size: np.ndarray  # int64: 4 or 8 (64-bit DWARF)
    addr_size: np.ndarray  # int64
    abbrev: np.ndarray  # int64: its abbreviation table's offset
    unit_type: np.ndarray  # int64: DW_UT_* (1 compile, 3 partial; before DWARF 5: 1)
    truncated: bool  # a header that did not fit stopped the list

    def containing(self, off: int) -> int:
        """The index of the unit holding .debug_info offset ``off`` (-1: none)."""
        k = int(np.searchsorted(self.offset, off, side="right")) - 1
        return k if k >= 0 and off < int(self.end[k]) else -1


@njit(cache=True, nogil=True)
def _unit_headers(b: np.ndarray, big: bool, out: np.ndarray) -> tuple[int, bool]:
    """Fill ``out`` (n x 8) with the unit headers; (count, stopped at a bad one)."""
    end = len(b)
    pos = 0
    n = 0
    while pos < end and n < out.shape[0]:
        start = pos
        length, pos = word(b, pos, end, 4, big)
        osize = 4
        if pos >= 0 and length == np.uint64(0xFFFFFFFF):
            length, pos = word(b, pos, end, 8, big)
            osize = 8
        if pos < 0 or length > np.uint64(end - pos) or length < np.uint64(7):
            return n, True
        uend = pos + i64(length)
        ver, pos = word(b, pos, uend, 2, big)
        if pos < 0:
            return n, True
        utype = 1
        if ver >= 5:
            ut, pos = word(b, pos, uend, 1, big)
            asz, pos = word(b, pos, uend, 1, big)
            ab, pos = word(b, pos, uend, osize, big)
            utype = i64(ut)
            if utype == 2 or utype == 6:  # type units: signature and type offset
                pos = pos + 8 + osize if pos >= 0 else ERR
            elif utype == 4 or utype == 5:  # skeleton / split: dwo id
                pos = pos + 8 if pos >= 0 else ERR
        else:
            ab, pos = word(b, pos, uend, osize, big)
            asz, pos = word(b, pos, uend, 1, big)
        if pos < 0 or pos > uend:
            return n, True
        out[n, 0] = start
        out[n, 1] = uend
        out[n, 2] = pos
        out[n, 3] = i64(ver)
        out[n, 4] = osize
        out[n, 5] = i64(asz)
        out[n, 6] = i64(ab)
        out[n, 7] = utype
        n += 1
        pos = uend
    return n, pos < end


def units(info: np.ndarray, big: bool, cap: int = 1 << 22) -> Units:
    """Every unit header of ``.debug_info`` (at most ``cap``)."""
    out = np.zeros((min(cap, len(info) // 11 + 1), 8), np.int64)
    n, bad = _unit_headers(info, big, out)
    t = out[:n]
    return Units(t[:, 0].copy(), t[:, 1].copy(), t[:, 2].copy(), t[:, 3].copy(),
                 t[:, 4].copy(), t[:, 5].copy(), t[:, 6].copy(), t[:, 7].copy(), bool(bad))
