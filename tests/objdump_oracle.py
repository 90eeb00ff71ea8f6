"""Parse ``objdump -d[r][l]`` output: the independent disassembly the annotate tests compare with.

Only what the tests need: per function, each instruction's address, bytes, mnemonic,
operand text and direct target (``5e <demo_nic_csum_partial+0x5e>``), the relocations
printed under it (``R_X86_64_PLT32 printk-0x4``) and, with ``-l``, the source line in force.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
from dataclasses import dataclass, field

from conftest import skip_or_fail

_SECTION = re.compile(r"^Disassembly of section (\S+):$")
_FUNC = re.compile(r"^([0-9a-f]+) <(.+)>:$")
_INSN = re.compile(r"^ *([0-9a-f]+):\t((?:[0-9a-f]{2} ?|[0-9a-f]{8} ?)+)\s*(?:\t(.*))?$")
_RELOC = re.compile(r"^\t+([0-9a-f]+): (R_\S+)\t(.*)$")
_SOURCE = re.compile(r"^(/.*|[^\s:][^:]*):(\d+)(?: \(discriminator \d+\))?$")
_TARGET = re.compile(r"^([0-9a-f]+) <(.+)>$")


@dataclass
class OInsn:
    addr: int
    raw: bytes
    mnemonic: str
    operands: str
    relocs: list[tuple[int, str, str]] = field(default_factory=list)  # (offset, type, text)
    source: tuple[str, int] | None = None
    comment: str = ""  # after "#": "4060 <table>"

    @property
    def target(self) -> tuple[int, str] | None:
        """A direct target as objdump prints it: ``(address, "name+0xoff")``."""
        m = _TARGET.match(self.operands.split(",")[-1].strip())
        if m and self.mnemonic.startswith(("j", "call", "b", "cb", "tb", "loop", "jr")):
            return int(m.group(1), 16), m.group(2)
        return None


@dataclass
class OFunc:
    section: str
    name: str
    addr: int
    insns: list[OInsn] = field(default_factory=list)


def tool(name: str) -> str:
    """Path of an oracle tool; a missing one fails under CI=true, else skips."""
    path = shutil.which(name)
    if path is None:
        skip_or_fail(f"{name} is not on the PATH")
    return path


def run_objdump(path: str, *args: str, objdump: str = "objdump") -> str:
    exe = tool(objdump)
    return subprocess.run(
        [exe, *args, path], check=True, capture_output=True, text=True,
        env={**os.environ, "LC_ALL": "C"},
    ).stdout


def parse(text: str, word_units: bool = False) -> list[OFunc]:
    """Functions in objdump's order, each with its instructions.

    ``word_units``: objdump prints each instruction as a 32-bit word (aarch64); the bytes are
    turned back into memory order (little-endian).
    """
    funcs: list[OFunc] = []
    section = ""
    cur: OFunc | None = None
    source: tuple[str, int] | None = None
    for line in text.splitlines():
        if m := _SECTION.match(line):
            section, cur = m.group(1), None
            continue
        if m := _FUNC.match(line):
            cur = OFunc(section, m.group(2), int(m.group(1), 16))
            funcs.append(cur)
            source = None
            continue
        if cur is None:
            continue
        if m := _RELOC.match(line):
            cur.insns[-1].relocs.append((int(m.group(1), 16), m.group(2), m.group(3).strip()))
            continue
        if m := _INSN.match(line):
            raw = bytes.fromhex(m.group(2).replace(" ", ""))
            if word_units:
                raw = b"".join(raw[k : k + 4][::-1] for k in range(0, len(raw), 4))
            text_ = (m.group(3) or "").strip()
            if not text_ and cur.insns and m.group(3) is None:  # continuation of long bytes
                cur.insns[-1].raw += raw
                continue
            comment = ""
            if "#" in text_:
                text_, _, comment = text_.partition("#")
            text_ = text_.split("//")[0].strip()
            words = text_.split(None, 1)
            mnem, ops = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
            # prefixes objdump prints as words ("data16 cs nopw", "rep stos", "lock cmpxchg")
            while ops and mnem.split()[-1] in _PREFIX_WORDS:
                more = ops.split(None, 1)
                mnem = f"{mnem} {more[0]}"
                ops = more[1] if len(more) > 1 else ""
            cur.insns.append(
                OInsn(int(m.group(1), 16), raw, mnem, ops.strip(), source=source,
                      comment=comment.strip())
            )
            continue
        if m := _SOURCE.match(line.strip()):
            source = (m.group(1), int(m.group(2)))
    return funcs


def normalize_mnemonic(mnemonic: str) -> str:
    """objdump's mnemonic without the redundant prefixes it prints as words.

    objdump writes prefixes that change nothing as words (``data16 cs nopw``,
    ``data16 lea``, ``rex.W call``); capstone leaves them out of the mnemonic (the bytes
    are still compared).  ``rep``/``lock``/``notrack``/``bnd`` are kept: capstone prints them.
    """
    words = mnemonic.split()
    while len(words) > 1 and words[0] in _REDUNDANT:
        words.pop(0)
    return " ".join(words)


_REDUNDANT = frozenset(
    {"data16", "addr32", "cs", "ds", "es", "ss", "fs", "gs", "rex", "rex.W", "rex.B",
     "rex.R", "rex.X", "rex.WB", "rex.WR", "rex.WX", "rex.RB", "rex.XB", "rex.WRB",
     "rex.WXB", "rex.RXB", "rex.WRXB"}
)

_PREFIX_WORDS = frozenset(
    {"data16", "cs", "ds", "es", "ss", "fs", "gs", "rep", "repz", "repnz", "repe", "repne",
     "lock", "notrack", "bnd", "rex", "rex.W", "rex.B", "rex.R", "rex.X", "rex.WB", "addr32",
     "xacquire", "xrelease"}
)


def nm_values(path: str) -> dict[str, set[int]]:
    """``nm``'s value(s) of every defined symbol (section offsets in a .ko)."""
    out: dict[str, set[int]] = {}
    text = subprocess.run(
        [tool("nm"), "--defined-only", path], check=True, capture_output=True, text=True
    ).stdout
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 3:
            out.setdefault(parts[2], set()).add(int(parts[0], 16))
    return out


def nm_sizes(path: str) -> dict[str, tuple[int, int]]:
    """``nm -S``: value and size of each sized defined symbol."""
    text = subprocess.run(
        [tool("nm"), "-S", "--defined-only", path], check=True, capture_output=True, text=True
    ).stdout
    return {p[3]: (int(p[0], 16), int(p[1], 16)) for p in map(str.split, text.splitlines())
            if len(p) == 4}


def same_name(mine: str | None, theirs: str, values: dict[str, set[int]]) -> bool:
    """Whether ``sym+0xoff`` names agree, a different alias at the same address allowed
    (objdump and perf choose among aliases differently: ``init_module``/``demo_nic_init``)."""
    if mine is None:
        return False
    theirs = re.sub(r"@@?[^+-]*", "", theirs)  # symbol versions: abort@@GLIBC_2.2.5
    if mine == theirs:
        return True
    m_sym, _, m_off = mine.partition("+")
    t_sym, _, t_off = theirs.partition("+")
    return m_off == t_off and bool(values.get(m_sym, set()) & values.get(t_sym, set()))


def compare_function(mine, theirs: OFunc, values: dict[str, set[int]], shift: int = 0) -> int:
    """Assert that a perftui disassembly equals objdump's over the symbol's range.

    Compared: every instruction's address (objdump's + ``shift``), bytes and mnemonic; the
    address of every direct jump/call target (unless a relocation patches it) and its
    ``symbol+0xoff`` name (aliases allowed; objdump's synthetic ``@plt`` names are not
    perftui's business).  Returns the number of instructions compared.
    """
    end = theirs.addr + mine.size
    want = [i for i in theirs.insns if i.addr < end]
    got = mine.instructions
    where = f"{mine.path} {theirs.section} {theirs.name}"
    assert [i.addr for i in got] == [i.addr + shift for i in want], where
    for g, w in zip(got, want, strict=True):
        at = f"{where} at {w.addr:#x}"
        assert g.raw == w.raw, at
        assert g.mnemonic == normalize_mnemonic(w.mnemonic), f"{at}: {g.asm!r} vs {w.mnemonic}"
        t = w.target
        if t is not None and not w.relocs:
            assert g.target == t[0] + shift, f"{at}: target {g.target} vs {t[0] + shift}"
            if "@plt" not in t[1]:
                assert same_name(g.target_name, t[1], values), f"{at}: {g.target_name} vs {t[1]}"
    return len(want)
