"""Call frame information of one ELF file: which FDE covers an address, and its rows.

Where it comes from (docs/architecture.md, "DWARF unwinding"): ``.eh_frame``, its FDEs
listed by ``.eh_frame_hdr``'s binary-search table when the file has one, and
``.debug_frame`` (the DSO, its debug file or its ``.gnu_debuglink`` file).  The list of FDEs
(each one's first address and where it is in the section) is read once per file: from the
search table with numpy, else by walking the section's entry headers (:func:`_scan`; a few
ms where pyelftools' full parse of libc's ``.eh_frame`` takes 1.6 s and of libpython's 3.3
s, so only the FDEs that samples reach are decoded, by pyelftools, :meth:`CfiSource.decode`).

A decoded FDE is a list of rows (:class:`FdeRows`): from each row's address on, how to find
the CFA (a register plus an offset, or an expression) and every kept register's rule.
Everything here reads untrusted bytes: sizes are capped, every pyelftools error becomes
:class:`CfiError`, and an FDE that cannot be decoded is only that FDE's loss.
"""

from __future__ import annotations

import io
import struct
import zlib
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..files.elfheaders import SHT_NOBITS, ElfHeaders, SectionHeader
from ..files.safefile import SymbolFileError

#: the largest CFI section read (libpython's .eh_frame is 342 KB)
MAX_CFI_SECTION = 64 << 20
#: rows of one FDE beyond which it is refused (a real function has tens)
MAX_ROWS = 1 << 14
#: the longest DWARF expression kept
MAX_EXPR = 1 << 10
SHF_COMPRESSED = 0x800

# rule kinds (FdeRows.kind), libunwind's dwarf_where_t in spirit
SAME = 0  # the caller's value is this frame's (also: no rule)
UNDEF = 1  # undefined: the caller's value is unknown
OFFSET = 2  # saved at CFA + val
VAL_OFFSET = 3  # the value is CFA + val
REGISTER = 4  # in register val
EXPR = 5  # saved at the address expression val computes (CFA pushed first)
VAL_EXPR = 6  # the value is what expression val computes
# CFA kinds
CFA_REG = 0  # register + offset
CFA_EXPR = 1  # expression (0 pushed first, as libunwind)
CFA_BAD = 2  # no usable CFA rule

_DW_EH_PE_omit = 0xFF
_MASK64 = 2**64 - 1


class CfiError(Exception):
    """CFI that cannot be used (why, in words)."""


@dataclass
class FdeRows:
    """The decoded rows of one FDE."""

    start: int  # first address covered (link-time)
    end: int  # first address past it
    signal: bool  # its CIE says 'S': a signal frame
    ra_col: int  # the CIE's return address column
    pc: np.ndarray  # u8 first address of each row, non-decreasing
    cfa_kind: np.ndarray  # u1 CFA_REG, CFA_EXPR, CFA_BAD
    cfa_reg: np.ndarray  # i8 register (CFA_REG)
    cfa_val: np.ndarray  # i8 offset (CFA_REG) or expression index into ``exprs``
    kind: np.ndarray  # u1 [rows, cols] rule kinds
    val: np.ndarray  # i8 [rows, cols] rule arguments (offsets, registers, expression index)
    exprs: list[bytes]  # the expressions the rows name


@dataclass
class CfiSource:
    """One CFI section of one file (``.eh_frame`` or ``.debug_frame``) and its FDE list."""

    path: str
    kind: str  # "eh_frame" or "debug_frame"
    starts: np.ndarray  # u8 each FDE's first address (link-time), ascending
    offsets: np.ndarray  # i8 each FDE's offset in the section
    data: bytes
    addr: int  # the section's address
    little: bool
    address_size: int
    _cfi: Any = None

    def decode(self, k: int, n_cols: int) -> FdeRows:
        """The rows of FDE ``k`` (of :attr:`starts`); :class:`CfiError` when unusable."""
        from elftools.common.exceptions import ELFError
        from elftools.dwarf.callframe import FDE

        try:
            entry = self._frames()._parse_entry_at(int(self.offsets[k]))
            if not isinstance(entry, FDE):
                raise CfiError("not an FDE")
            # pyelftools 0.33 decodes every rule-changing instruction but has no case for
            # DW_CFA_GNU_args_size (0x2e, libc has it; it changes no rule): left out first
            entry.instructions = [i for i in entry.instructions if int(i.opcode) != 0x2E]
            table = entry.get_decoded().table
            cie = entry.cie
            if cie is None:
                raise CfiError("an FDE without its CIE")
            aug = cie.header.get("augmentation", b"") or b""
            ra = int(cie.header.get("return_address_register", -1))
            start = int(entry.header["initial_location"]) & _MASK64  # (pcrel: may be < 0)
            end = start + int(entry.header["address_range"])
        except CfiError:
            raise
        except (ELFError, ValueError, KeyError, TypeError, IndexError, AttributeError,
                AssertionError, struct.error, RecursionError, OverflowError,
                UnicodeDecodeError) as e:
            raise CfiError(f"undecodable FDE ({type(e).__name__})") from None
        except Exception as e:  # construct's errors, pyelftools' DWARFError: any is the FDE's
            raise CfiError(f"undecodable FDE ({type(e).__name__})") from None
        if len(table) > MAX_ROWS:
            raise CfiError(f"{len(table)} rows, over the limit of {MAX_ROWS}")
        if end > _MASK64:
            raise CfiError(f"an FDE from {start:#x} past the end of the address space")
        return _rows(table, start, end, b"S" in bytes(aug), ra, n_cols)

    def _frames(self) -> Any:
        if self._cfi is None:
            from elftools.dwarf.callframe import CallFrameInfo
            from elftools.dwarf.structs import DWARFStructs

            structs = DWARFStructs(little_endian=self.little, dwarf_format=32,
                                   address_size=self.address_size)
            self._cfi = CallFrameInfo(io.BytesIO(self.data), len(self.data), self.addr,
                                      structs, for_eh_frame=self.kind == "eh_frame")
        return self._cfi

    def find(self, addr: int) -> int:
        """The FDE whose start is the last at or before ``addr`` (-1: none)."""
        return int(np.searchsorted(self.starts, np.uint64(addr), side="right")) - 1


def _rows(table: list[dict[Any, Any]], start: int, end: int, signal: bool, ra: int,
          n_cols: int) -> FdeRows:
    from elftools.dwarf.callframe import CFARule, RegisterRule

    n = len(table)
    pc = np.zeros(n, np.uint64)
    cfa_kind = np.full(n, CFA_BAD, np.uint8)
    cfa_reg = np.zeros(n, np.int64)
    cfa_val = np.zeros(n, np.int64)
    kind = np.zeros((n, n_cols), np.uint8)
    val = np.zeros((n, n_cols), np.int64)
    exprs: list[bytes] = []
    kinds = {RegisterRule.UNDEFINED: UNDEF, RegisterRule.SAME_VALUE: SAME,
             RegisterRule.OFFSET: OFFSET, RegisterRule.VAL_OFFSET: VAL_OFFSET,
             RegisterRule.REGISTER: REGISTER, RegisterRule.EXPRESSION: EXPR,
             RegisterRule.VAL_EXPRESSION: VAL_EXPR}

    def expr(code: Any) -> int:
        b = bytes(code)
        if len(b) > MAX_EXPR:
            raise CfiError(f"a DWARF expression of {len(b)} bytes")
        exprs.append(b)
        return len(exprs) - 1

    last = start
    for i, line in enumerate(table):
        p = int(line["pc"]) & _MASK64
        if p < last:
            raise CfiError("rows out of order")
        last = p
        pc[i] = p
        cfa = line.get("cfa")
        if isinstance(cfa, CFARule):
            if cfa.expr is not None:
                cfa_kind[i], cfa_val[i] = CFA_EXPR, expr(cfa.expr)
            elif cfa.reg is not None and 0 <= int(cfa.reg) < n_cols and cfa.offset is not None:
                cfa_kind[i], cfa_reg[i], cfa_val[i] = CFA_REG, int(cfa.reg), int(cfa.offset)
        for reg, rule in line.items():
            if not isinstance(reg, int) or not 0 <= reg < n_cols:
                continue  # pc, cfa, and registers the walk does not keep
            if not isinstance(rule, RegisterRule) or rule.type not in kinds:
                raise CfiError(f"a register rule of kind {getattr(rule, 'type', '?')}")
            k = kinds[rule.type]
            kind[i, reg] = k
            if k in (EXPR, VAL_EXPR):
                val[i, reg] = expr(rule.arg)
            elif k in (OFFSET, VAL_OFFSET, REGISTER):
                if not isinstance(rule.arg, int):
                    raise CfiError("a register rule without its number")
                a = rule.arg
                if k == REGISTER and not 0 <= a < n_cols:
                    kind[i, reg] = UNDEF  # a register the walk does not keep: unknown
                val[i, reg] = a
    if not 0 <= ra < n_cols:
        raise CfiError(f"return address column {ra}")
    return FdeRows(start, end, signal, ra, pc, cfa_kind, cfa_reg, cfa_val, kind, val, exprs)


# -- finding the FDEs ------------------------------------------------------------------------
def _section_data(img: ElfHeaders, sec: SectionHeader) -> bytes:
    """A CFI section's bytes (a compressed one inflated, capped)."""
    if sec.type == SHT_NOBITS:
        return b""
    data = img.read(sec, sec.name, MAX_CFI_SECTION)
    if not sec.flags & SHF_COMPRESSED:
        return data
    head = 24 if img.elfclass == 64 else 12
    if len(data) < head:
        raise CfiError(f"{sec.name}: a compressed section of {len(data)} bytes")
    e = img.endian
    ch_type, = struct.unpack_from(e + "I", data, 0)
    size = struct.unpack_from(e + ("Q" if head == 24 else "I"), data, 8 if head == 24 else 4)[0]
    if ch_type != 1 or size > MAX_CFI_SECTION:  # ELFCOMPRESS_ZLIB only
        raise CfiError(f"{sec.name}: compressed as {ch_type}, {size} bytes")
    d = zlib.decompressobj()
    try:
        out = d.decompress(data[head:], size)
    except zlib.error as err:
        raise CfiError(f"{sec.name}: {err}") from None
    if len(out) != size:
        raise CfiError(f"{sec.name}: inflates to {len(out)} bytes, not {size}")
    return out


def eh_frame_source(img: ElfHeaders) -> CfiSource | None:
    """The ``.eh_frame`` of an opened file, its FDEs from ``.eh_frame_hdr`` when it has one
    (perf's way), else from the section itself; None without one."""
    sec = img.section(".eh_frame")
    if sec is None or sec.type == SHT_NOBITS or not sec.size:
        return None
    data = _section_data(img, sec)
    size = 8 if img.elfclass == 64 else 4
    hdr = img.section(".eh_frame_hdr")
    table = None
    if hdr is not None and hdr.type != SHT_NOBITS and hdr.size:
        table = _hdr_table(img.read(hdr, ".eh_frame_hdr", MAX_CFI_SECTION), hdr.addr,
                           sec.addr, len(data), img.endian)
    if table is None:
        table = _scan(data, sec.addr, True, img.endian, size)
    starts, offsets = table
    return CfiSource(img.path, "eh_frame", starts, offsets, data, sec.addr, img.little, size)


def debug_frame_source(img: ElfHeaders) -> CfiSource | None:
    """The ``.debug_frame`` of an opened file (None without one)."""
    sec = img.section(".debug_frame")
    if sec is None or sec.type == SHT_NOBITS or not sec.size:
        return None
    data = _section_data(img, sec)
    size = 8 if img.elfclass == 64 else 4
    starts, offsets = _scan(data, 0, False, img.endian, size)
    return CfiSource(img.path, "debug_frame", starts, offsets, data, 0, img.little, size)


def _hdr_table(hdr: bytes, hdr_addr: int, eh_addr: int, eh_size: int, e: str
               ) -> tuple[np.ndarray, np.ndarray] | None:
    """``.eh_frame_hdr``'s search table as (start, offset in .eh_frame) sorted by start;
    None when its encoding is not the one every linker writes (datarel sdata4, 0x3b)."""
    if len(hdr) < 4 or hdr[0] != 1 or hdr[3] != 0x3B:
        return None
    pos = 4
    enc_ptr, enc_count = hdr[1], hdr[2]
    try:
        _, pos = _encoded(hdr, pos, enc_ptr, hdr_addr, e)
        count, pos = _encoded(hdr, pos, enc_count, hdr_addr, e)
    except (struct.error, CfiError):
        return None
    if count <= 0 or pos + 8 * count > len(hdr):
        return None  # (no table: the section's own FDEs are walked)
    pairs = np.frombuffer(hdr, dtype=np.dtype(e + "i4"), count=2 * count, offset=pos)
    pairs = pairs.reshape(count, 2).astype(np.int64)
    with np.errstate(over="ignore"):
        starts = pairs[:, 0].astype(np.uint64) + np.uint64(hdr_addr)
    offsets = pairs[:, 1] + (hdr_addr - eh_addr)
    keep = (offsets >= 0) & (offsets + 8 <= eh_size)
    starts, offsets = starts[keep], offsets[keep]
    order = np.argsort(starts, kind="stable")
    return starts[order], offsets[order]


def _encoded(buf: bytes, pos: int, enc: int, base: int, e: str) -> tuple[int, int]:
    """A DW_EH_PE-encoded value at ``pos`` (absptr/pcrel/datarel of the usual formats)."""
    if enc == _DW_EH_PE_omit:
        return 0, pos
    fmt = {0x00: "Q", 0x03: "I", 0x04: "Q", 0x0B: "i", 0x0C: "q", 0x02: "H", 0x0A: "h"}
    f = fmt.get(enc & 0x0F)
    if f is None:
        raise CfiError(f"pointer encoding {enc:#x}")
    v = struct.unpack_from(e + f, buf, pos)[0]
    app = enc & 0x70
    if app == 0x10:  # pcrel
        v += base + pos
    elif app == 0x30:  # datarel (the .eh_frame_hdr's address)
        v += base
    elif app != 0:
        raise CfiError(f"pointer encoding {enc:#x}")
    return v & (2**64 - 1), pos + struct.calcsize(e + f)


def _scan(data: bytes, addr: int, eh: bool, e: str, address_size: int
          ) -> tuple[np.ndarray, np.ndarray]:
    """Every FDE of a CFI section as (start, offset), sorted by start, by walking the
    entries' length fields (each CIE's pointer encoding from pyelftools).  A malformed
    entry ends the walk: what came before is kept."""
    starts: list[int] = []
    offsets: list[int] = []
    cie_enc: dict[int, int | None] = {}
    source = CfiSource("", "eh_frame" if eh else "debug_frame", np.zeros(0, np.uint64),
                       np.zeros(0, np.int64), data, addr, e == "<", address_size)
    pos, n = 0, len(data)
    while pos + 4 <= n:
        length, = struct.unpack_from(e + "I", data, pos)
        head = 4
        if length == 0xFFFFFFFF:
            if pos + 12 > n:
                break
            length, = struct.unpack_from(e + "Q", data, pos + 4)
            head = 12
        if length == 0:
            if eh:
                break  # the terminator
            pos += head
            continue
        end = pos + head + length
        if end > n or length < 4:
            break
        wide = head == 12
        idf = "Q" if wide else "I"
        ident, = struct.unpack_from(e + idf, data, pos + head)
        is_cie = ident == 0 if eh else ident == (2**64 - 1 if wide else 0xFFFFFFFF)
        if not is_cie:
            cie = pos + head - ident if eh else ident
            at = pos + head + (8 if wide else 4)
            try:
                enc = cie_enc[cie] if cie in cie_enc else cie_enc.setdefault(
                    cie, _fde_encoding(source, cie, eh))
                if enc is not None:
                    start, _ = _encoded(data, at, enc, addr, e) if eh else (
                        struct.unpack_from(e + ("Q" if address_size == 8 else "I"), data,
                                           at)[0], 0)
                    starts.append(start)
                    offsets.append(pos)
            except (struct.error, CfiError):
                pass
        pos = end
    s = np.asarray(starts, dtype=np.uint64)
    o = np.asarray(offsets, dtype=np.int64)
    order = np.argsort(s, kind="stable")
    return s[order], o[order]


def _fde_encoding(source: CfiSource, cie_off: int, eh: bool) -> int | None:
    """The pointer encoding of a CIE's FDEs (None: not a usable CIE)."""
    if not eh:
        return 0  # .debug_frame: plain addresses
    from elftools.dwarf.callframe import CIE

    try:
        cie = source._frames()._parse_entry_at(cie_off)
    except Exception:  # any pyelftools or construct error: that CIE's FDEs are dropped
        return None
    if not isinstance(cie, CIE):
        return None
    enc = cie.augmentation_dict.get("FDE_encoding", 0) if cie.augmentation_dict else 0
    return enc if isinstance(enc, int) else None


def open_sources(img: ElfHeaders) -> list[CfiSource]:
    """Both CFI sections of an opened file, in perf's order (eh_frame, then debug_frame)."""
    out = []
    for make in (eh_frame_source, debug_frame_source):
        try:
            src = make(img)
        except (CfiError, SymbolFileError):
            src = None
        if src is not None and len(src.starts):
            out.append(src)
    return out
