"""Questions only the tests ask of perftui's objects, answered from their public API (test
helpers: perftui itself never asks them)."""

from __future__ import annotations

from typing import TYPE_CHECKING

import numpy as np

from perftui.symbols.code.elfcode import (
    SHN_LORESERVE,
    SHN_UNDEF,
    STT_FUNC,
    STT_GNU_IFUNC,
    ElfCodeImage,
    FunctionSymbol,
)
from perftui.symbols.tables.dsotable import DsoSymbolTable
from perftui.symbols.tables.lookup import cstr

if TYPE_CHECKING:  # (the symbol tests need no textual)
    from perftui.ui.typeahead import TypeAheadApp


def functions(img: ElfCodeImage, name: str | None = None) -> list[FunctionSymbol]:
    """The defined FUNC/IFUNC symbols of ``img`` (all, or those called ``name``), in table
    order."""
    sym, strtab, _ = img.raw_symbols()
    typ = sym["info"] & 0xF
    keep = ((typ == STT_FUNC) | (typ == STT_GNU_IFUNC)) & (sym["shndx"] != SHN_UNDEF)
    keep &= sym["shndx"] < SHN_LORESERVE
    out = []
    for i in np.flatnonzero(keep):
        nm = cstr(strtab, int(sym["name"][i]))
        if name is not None and nm != name:
            continue
        r = sym[i]
        out.append(FunctionSymbol(nm, int(r["shndx"]), int(r["value"]), int(r["size"]),
                                  int(r["info"]) & 0xF, int(r["info"]) >> 4))
    return out


def name_at(table: DsoSymbolTable, addr: int) -> tuple[str, int] | None:
    """``(name, addr - symbol start)`` of one address in the table's ``space``, or None."""
    if addr < 0 or addr >= 1 << 64:
        return None
    i = int(table.lookup(np.array([addr], dtype=np.uint64))[0])
    if i < 0:
        return None
    return table.names[i], addr - int(table.starts[i])


def keys_pending(app: TypeAheadApp) -> bool:
    """Whether keys typed are still waiting for the app to settle.

    Read from the app's private state (the key on its way, the keys held behind it): the
    app has no public face for it, and none of its own code asks."""
    return app._key_busy or bool(app._held)
