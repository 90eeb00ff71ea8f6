"""aarch64 disassembly text against aarch64-linux-gnu-objdump's (binutils 2.40, what perf 6.1's
annotate prints on an arm64 machine), line for line (issue 29).

* tests/programs/armidioms.s, code as compilers write it, assembled with
  ``aarch64-linux-gnu-as -march=armv8.5-a`` and linked with ``aarch64-linux-gnu-ld``: every
  instruction's text equals ``objdump -d``'s, symbol names included.
* Seeded random 32-bit words as one function (``.inst``): every word both decode, outside
  SVE and SME (``z``/``p``/``za`` registers: counted, not required), reads as objdump's.
  Names of addresses outside the function are left out (objdump names any address by the
  nearest symbol before it, ``<f+0x4f8ac>``; perftui only by a symbol that holds it).

Compared: mnemonic, operands and comment, whitespace collapsed.  Before this test, 32 % of
the idiom lines and 72 % of the random words differed (``#0x30`` for objdump's ``#48``,
``#0x304`` for ``304 <f+0x304>``, no ``// ne = any``, ``b.hs`` for ``b.cs``...).
"""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from testapi import functions

from objdump_oracle import run_objdump, tool
from perftui.symbols.code.disasm import disassemble_symbol
from perftui.symbols.code.elfcode import open_elf

PROGRAMS = Path(__file__).parent / "programs"
OBJDUMP = "aarch64-linux-gnu-objdump"
_LINE = re.compile(r"^\s+([0-9a-f]+):\s+[0-9a-f]{8}\s+(.*)$")
_NAMED = re.compile(r" <([^<>+]+)(?:\+0x([0-9a-f]+))?>")
_SVE = re.compile(r"\b(?:[zp]\d+|za\w*|zt0)\b")


def _collapse(text: str) -> str:
    return re.sub(r"\s+", " ", text.strip())


def _objdump(path: Path) -> dict[int, str]:
    out = run_objdump(str(path), "-d", objdump=OBJDUMP)
    return {int(m.group(1), 16): _collapse(m.group(2))
            for m in map(_LINE.match, out.splitlines()) if m}


def _sizes(path: Path) -> dict[str, int]:
    """Symbol sizes by name, from ``nm -S``."""
    out = subprocess.run([tool("aarch64-linux-gnu-nm"), "-S", str(path)],
                         capture_output=True, text=True, check=True).stdout
    return {p[3]: int(p[1], 16) for p in (ln.split() for ln in out.splitlines())
            if len(p) == 4}


def _mine(path: Path) -> dict[int, str]:
    img = open_elf(str(path))
    return {i.addr: _collapse(i.asm) for fn in functions(img) if fn.size
            for i in disassemble_symbol(img, fn).instructions}


def _assemble(tmp_path: Path, source: Path) -> Path:
    obj, exe = tmp_path / "t.o", tmp_path / "t"
    subprocess.run([tool("aarch64-linux-gnu-as"), "-march=armv8.5-a", "-o", str(obj),
                    str(source)], check=True)
    subprocess.run([tool("aarch64-linux-gnu-ld"), "-e", "f", "-o", str(exe), str(obj)],
                   check=True)
    return exe


def test_compiler_idioms_read_as_objdump(tmp_path: Path) -> None:
    exe = _assemble(tmp_path, PROGRAMS / "armidioms.s")
    theirs, mine, sizes = _objdump(exe), _mine(exe), _sizes(exe)

    def within(m: re.Match[str]) -> str:  # a name past its symbol's end: objdump's alone
        off = int(m.group(2) or "0", 16)
        return m.group(0) if off < sizes.get(m.group(1), 0) else ""

    assert len(mine) > 200
    differ = [(f"{a:x}", text, _NAMED.sub(within, theirs.get(a, "")))
              for a, text in mine.items() if text != _NAMED.sub(within, theirs.get(a, ""))]
    assert differ == []
    # the rules the idioms exercise, as objdump writes them
    shown = set(mine.values())
    for want in ("stp x29, x30, [sp, #-48]!", "mov w1, #0xffffffff // #-1",
                 "cinc x0, x1, cc // cc = lo, ul, last", "fmov d0, #1.000000000000000000e+00",
                 "st1 {v0.2d-v3.2d}, [x0]", "and x0, x0, #0xff", "lsr w2, w3, #31"):
        assert want in shown, want
    assert any(t.startswith("bl ") and t.endswith(" <g>") for t in shown)


@pytest.mark.parametrize("seed", [1, 2])
def test_random_words_read_as_objdump(tmp_path: Path, seed: int) -> None:
    rng = random.Random(seed)
    words = [rng.getrandbits(32) for _ in range(6000)]
    src = tmp_path / "r.s"
    src.write_text("\t.text\n\t.globl f\n\t.type f, %function\nf:\n"
                   + "".join(f"\t.inst {w:#010x}\n" for w in words) + "\t.size f, .-f\n")
    exe = _assemble(tmp_path, src)

    def unnamed(text: str) -> str:
        return _NAMED.sub("", text)

    theirs = {a: unnamed(t) for a, t in _objdump(exe).items()}
    mine = {a: unnamed(t) for a, t in _mine(exe).items()}
    both = [a for a, t in theirs.items() if not t.startswith(".inst") and "undefined" not in t
            and a in mine and not mine[a].startswith(".byte")]
    base = [a for a in both if not _SVE.search(theirs[a])]
    assert len(base) > 1500  # a third of the words are instructions outside SVE
    differ = [(f"{a:x}", mine[a], theirs[a]) for a in base if mine[a] != theirs[a]]
    assert differ == []
