"""Disassembly text against objdump's (binutils 2.40, what perf 6.1's annotate prints), line for
line: hand-assembled bytes run through ``objdump -D -b binary``, and every sized function of real
binaries (x86-64 system libraries) against ``objdump -d``.

Compared: mnemonic and operands, whitespace collapsed.  Symbol names (``<free@plt>``, objdump's
nearest-symbol names past a symbol's end) and ``#`` comments are left out of the operand check.
"""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import pytest
from testapi import functions

from conftest import skip_or_fail
from objdump_oracle import run_objdump, tool
from perftui.symbols.code.disasm import disassemble_bytes, disassemble_symbol
from perftui.symbols.code.elfcode import open_elf

# Each a sequence of whole instructions (objdump is given them one string at a time).
CASES = [
    "4883c001",  # add $0x1,%rax
    "48895c2408",  # mov %rbx,0x8(%rsp)
    "0f1f4000",  # nopl 0x0(%rax): a zero disp8
    "662e0f1f840000000000",  # cs nopw 0x0(%rax,%rax,1)
    "66662e0f1f840000000000",  # data16 cs nopw
    "ff24c500000000",  # jmp *0x0(,%rax,8)
    "488b04f500000000",  # mov 0x0(,%rsi,8),%rax
    "f20f2a442408",  # cvtsi2sdl 0x8(%rsp),%xmm0
    "f20f2ac0",  # cvtsi2sd %eax,%xmm0
    "f2480f2ac0",  # cvtsi2sd %rax,%xmm0
    "f30f2a0424",  # cvtsi2ssl (%rsp),%xmm0
    "f348ab",  # rep stos %rax,%es:(%rdi)
    "a4ac",  # movsb %ds:(%rsi),%es:(%rdi); lods %ds:(%rsi),%al
    "f30f1107",  # movss %xmm0,(%rdi): not a string instruction
    "48d1f8d1e0c1e001",  # sar %rax; shl %eax; shl $0x1,%eax
    "4183dfff",  # sbb $0xffffffff,%r15d
    "6aff",  # push $0xffffffffffffffff
    "6683c0ff",  # add $0xffff,%ax
    "48c7c0ffffffff",  # mov $0xffffffffffffffff,%rax
    "48b80300000000000080",  # movabs $0x8000000000000003,%rax
    "48a10000000000000000",  # movabs 0x0,%rax
    "8b042510000000",  # mov 0x10,%eax
    "8b4500",  # mov 0x0(%rbp),%eax
    "8b0424",  # mov (%rsp),%eax
    "64488b042528000000",  # mov %fs:0x28,%rax
    "3e8b00268b00",  # ds mov (%rax),%eax; es mov (%rax),%eax
    "3effe0",  # notrack jmp *%rax
    "f3c3c20800",  # repz ret; ret $0x8
    "6bc0fe",  # imul $0xfffffffe,%eax,%eax
    "488b45f8",  # mov -0x8(%rbp),%rax
    "d8c9dec9dbf1dfe9dcc1dac1d9c9",  # x87: the implicit %st
    "f30f1efa",  # endbr64 (no operands)
    "9bdd7c24fc9bdfe0",  # fstcw -0x4(%rsp); fstsw %ax: fwait joined to the no-wait form
]


def _objdump_bytes(code: bytes, tmp_path: Path) -> list[str]:
    blob = tmp_path / "code.bin"
    blob.write_bytes(code)
    out = subprocess.run(
        [tool("objdump"), "-D", "-b", "binary", "-mi386:x86-64", str(blob)],
        capture_output=True, text=True, check=True, env={**os.environ, "LC_ALL": "C"},
    ).stdout
    lines = [ln.split("\t") for ln in out.splitlines() if re.match(r"^ +[0-9a-f]+:\t", ln)]
    return [" ".join(p[2].split()) for p in lines if len(p) > 2]


@pytest.mark.parametrize("code", CASES)
def test_bytes_read_as_objdump_writes_them(code: str, tmp_path: Path) -> None:
    raw = bytes.fromhex(code)
    want = _objdump_bytes(raw, tmp_path)
    got = [" ".join(i.asm.split()) for i in disassemble_bytes(raw, 0, "x86_64")]
    assert got == want


_LINE = re.compile(r"^ *([0-9a-f]+):\t[0-9a-f ]+\t(.*)$")


def _operands(text: str, aarch64: bool) -> str:
    text = text.split("//")[0] if aarch64 else re.split(r"\s# ", text)[0]
    return " ".join(re.sub(r" <[^>]*>", "", text).split())


def compare_binary(path: str, objdump: str, aarch64: bool) -> tuple[int, list[str]]:
    """Every instruction of every sized function: (how many, those whose text differs)."""
    theirs: dict[int, str] = {}
    for line in run_objdump(path, "-d", "-w", objdump=objdump).splitlines():
        if m := _LINE.match(line):
            theirs[int(m.group(1), 16)] = m.group(2)
    img = open_elf(path)
    done: set[int] = set()
    total, bad = 0, []
    for sym in functions(img):
        if not sym.size or sym.value in done:
            continue
        done.add(sym.value)
        for insn in disassemble_symbol(img, sym).instructions:
            o = theirs.get(insn.addr)
            if o is None:
                continue
            total += 1
            mine, want = _operands(insn.asm, aarch64), _operands(o, aarch64)
            if mine != want:
                bad.append(f"{insn.addr:#x} {insn.hex}: {mine!r} vs objdump {want!r}")
    return total, bad


def _system_file(path: str) -> str:
    if not Path(path).is_file():
        skip_or_fail(f"{path} is not installed")
    return path


@pytest.mark.slow
@pytest.mark.parametrize("path,objdump,aarch64", [
    ("/usr/lib/x86_64-linux-gnu/libc.so.6", "objdump", False),
    ("/usr/lib/x86_64-linux-gnu/libm.so.6", "objdump", False),
    ("/usr/lib/x86_64-linux-gnu/libz.so.1", "objdump", False),
])
def test_libraries_equal_objdump(path: str, objdump: str, aarch64: bool) -> None:
    total, bad = compare_binary(_system_file(path), objdump, aarch64)
    assert total > 10000 and not bad, f"{len(bad)}/{total} differ:\n" + "\n".join(bad[:20])
