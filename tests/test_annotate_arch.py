"""The annotate core on other machines: aarch64 and i386 relocatable objects assembled here
(``aarch64-linux-gnu-as``, ``as --32``) against their objdump -dr and addr2line, and
hand-assembled byte strings whose decoding the architecture manuals fix."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from testapi import functions

from objdump_oracle import compare_function, nm_values, parse, run_objdump, tool
from perftui.analysis.annotate import source_lines
from perftui.symbols.code.disasm import disassemble_bytes, disassemble_symbol
from perftui.symbols.code.elfcode import open_elf

AARCH64_S = """
	.text
	.globl	work
	.type	work, %function
work:
	stp	x29, x30, [sp, #-32]!
	mov	x29, sp
	adrp	x1, counter
	ldr	w2, [x1, :lo12:counter]
	adrp	x0, msg
	add	x0, x0, :lo12:msg
	cbz	w2, 1f
	tbz	w2, #3, 2f
	bl	printk
1:	subs	w2, w2, #1
	b.ne	1b
2:	bl	helper
	ldp	x29, x30, [sp], #32
	b	external_tail
	.size	work, .-work
	.type	helper, %function
helper:
	add	w0, w0, w0, lsl #1
	ret
	.size	helper, .-helper
	.section .text.unlikely,"ax",%progbits
	.type	cold_path, %function
cold_path:
	bl	work
	nop
	ret
	.size	cold_path, .-cold_path
	.bss
	.type	counter, %object
counter: .zero 8
	.size counter, 8
	.section .rodata
	.type msg, %object
msg: .string "hi %d\\n"
	.size msg, 7
"""

I386_S = """
	.text
	.globl f32
	.type f32, @function
f32:
	push %ebp
	mov %esp,%ebp
	mov counter,%eax
	call printk
	lea counter+4,%ecx
	jne 1f
	call g32
1:	pop %ebp
	ret
	.size f32, .-f32
	.type g32, @function
g32:
	ret
	.size g32, .-g32
	.bss
	.type counter, @object
counter: .zero 8
	.size counter, 8
"""


def _assemble(tmp_path: Path, assembler: list[str], source: str) -> str:
    (tmp_path / "t.s").write_text(source)
    subprocess.run([*assembler, "-g", "-o", "t.o", "t.s"], cwd=tmp_path, check=True)
    return str(tmp_path / "t.o")


def _check_object(path: str, objdump: str, addr2line: str, words: bool) -> tuple[int, int]:
    img = open_elf(path)
    values = nm_values(path)
    sized = {(img.sections[f.section].name, f.value): f for f in functions(img) if f.size}
    insns = relocs = 0
    for of in parse(run_objdump(path, "-dr", objdump=objdump), word_units=words):
        sym = sized[(of.section, of.addr)]
        d = disassemble_symbol(img, sym)
        insns += compare_function(d, of, values)
        for got, want in zip(d.instructions, of.insns, strict=True):
            assert [(r.offset, r.type_name, r.text) for r in got.relocations] == want.relocs
            relocs += len(want.relocs)
        lines = source_lines(img, d)
        assert lines is not None
        out = subprocess.run(
            [addr2line, "-e", path, "-j", of.section, *[f"{i.addr:x}" for i in d.instructions]],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        assert [str(x) for x in lines] == out
    return insns, relocs


def test_aarch64_object_equals_its_objdump(tmp_path: Path) -> None:
    path = _assemble(tmp_path, [tool("aarch64-linux-gnu-as")], AARCH64_S)
    insns, relocs = _check_object(path, "aarch64-linux-gnu-objdump",
                                  tool("aarch64-linux-gnu-addr2line"), words=True)
    assert insns == 19 and relocs == 7
    img = open_elf(path)
    asm = {i.addr: i.asm for i in disassemble_symbol(img, functions(img, "work")[0]).instructions}
    # names objdump -dr gives in its relocation lines, read as the instruction's operand
    assert asm[0x20] == "bl     printk"
    assert asm[0x34] == "b      external_tail"
    assert asm[0x8].endswith("// counter") and asm[0xC].endswith("// counter")
    assert asm[0x10].endswith("// msg") and asm[0x14].endswith("// msg")
    assert asm[0x2C] == "bl     38 <helper>"


def test_i386_object_equals_its_objdump(tmp_path: Path) -> None:
    """i386 uses REL: the addend is the patched field (``e8 fc ff ff ff`` = -4)."""
    path = _assemble(tmp_path, [tool("as"), "--32"], I386_S)
    insns, relocs = _check_object(path, "objdump", tool("addr2line"), words=False)
    assert insns == 10 and relocs == 3
    img = open_elf(path)
    asm = {i.addr: i.asm for i in disassemble_symbol(img, functions(img, "f32")[0]).instructions}
    assert asm[0x8] == "call   printk"
    assert asm[0x3].endswith("# counter") and asm[0xD].endswith("# counter+0x4")


@pytest.mark.parametrize(
    "machine,code,want",
    [
        # Intel SDM: E8 cd = CALL rel32; 48 89 E5 = MOV r/m64,r64; 0F 1F /0 = NOP r/m
        # (a 5-byte NOP); C3 = RET; 66 90 = the 16-bit XCHG AX,AX; 75 cb = JNE rel8
        ("x86_64", "e8000000004889e50f1f440000c36690", [
            ("call", 5, 0x1005), ("mov", 3, None), ("nopl", 5, None), ("ret", 1, None),
            ("xchg", 2, None)]),
        ("x86_64", "75fe", [("jne", 2, 0x1000)]),
        # Arm ARM (little-endian words): d503201f NOP; d65f03c0 RET; 94000001 BL +4;
        # 17ffffff B -4; a9bf7bfd STP (pre-index)
        ("aarch64", "1f2003d5c0035fd601000094ffffff17fd7bbfa9", [
            ("nop", 4, None), ("ret", 4, None), ("bl", 4, 0x100C), ("b", 4, 0x1008),
            ("stp", 4, None)]),
        # i386: E8 cd = CALL rel32 (target = next + rel); C3 = RET
        ("i386", "e8fbffffffc3", [("call", 5, 0x1000), ("ret", 1, None)]),
    ],
)
def test_hand_assembled_bytes(machine: str, code: str, want: list[tuple]) -> None:
    def lookup(addr: int) -> tuple[str, int] | None:
        return ("fn", addr - 0x1000) if 0x1000 <= addr < 0x1100 else None

    got = disassemble_bytes(bytes.fromhex(code), 0x1000, machine, lookup=lookup)
    assert [(i.mnemonic, i.size, i.target) for i in got] == want
    for i in got:
        if i.target is not None:
            off = i.target - 0x1000
            assert i.target_name == ("fn" if off == 0 else f"fn+{off:#x}")
