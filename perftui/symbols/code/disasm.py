"""Disassemble one function with capstone: instructions, branch targets, relocation names.

API:

* :func:`disassemble_function(image, *, size, vaddr=..., | section=..., offset=...,
  section_bases=None, bias=0, lookup=None, name="") <disassemble_function>`
  -> :class:`Disassembly`.  ET_EXEC/ET_DYN: the function at ``vaddr`` (objdump's
  address), shown at ``vaddr + bias``.  ET_REL (a ``.ko``): the function at ``offset`` of
  ``section``, shown at that section's load address (``section_bases[section]``, from
  KMOD_SEC_MAP; 0 without it, as ``objdump -d`` shows) plus the offset, never at the
  module base.  A section that holds no code (``.data``, ``.rodata``, ``.bss``) gives a
  :class:`Disassembly` with ``is_code`` False and a ``note`` saying so, not an exception.
* :func:`disassemble_symbol(image, symbol, ...) <disassemble_symbol>`: the same for a
  :class:`~perftui.symbols.code.elfcode.FunctionSymbol` of the file.
* :func:`disassemble_bytes(code, address, machine, ...) <disassemble_bytes>`: raw bytes.

The machine comes from the ELF header: x86-64, i386 (AT&T syntax by default, as
``objdump -d`` and so ``perf annotate`` print it; ``syntax="intel"`` for Intel) and
aarch64.  x86 mnemonics follow objdump's convention: capstone's operand-size suffix is
dropped when a register operand already gives the size (``mov %edx,%edx``, not ``movl``)
and never written on call/jmp/ret/push/pop/leave at the mode's default size; it stays where only
memory and immediates are involved (``addq $0x1,0x0(%rip)``, ``cvtsi2sdl 0x8(%rsp),%xmm0``:
a vector register gives no integer size).  Operands are written as objdump writes them
(:mod:`perftui.symbols.code.attformat`; aarch64's by :mod:`perftui.symbols.code.armformat`).

Names.  ``lookup`` (:data:`~perftui.symbols.code.elfcode.SymbolLookup`, address ->
``(symbol, offset)``) names direct jump and call targets and RIP-relative data
(``jle 5e <demo_nic_csum_partial+0x5e>``, ``# 4010 <counter>``); by default the file's own
symbols (:meth:`ElfCodeImage.lookup <perftui.symbols.code.elfcode.ElfCodeImage.lookup>`).  In a
``.ko``, the relocation that patches an instruction names what the zeros stand for:
``call __fentry__``, ``jmp __x86_return_thunk``, ``mov (%rip),%r13d  # demo_nic_ring``;
see :mod:`perftui.symbols.code.relocs`.  Bytes capstone cannot decode become one-byte
``.byte`` entries, and disassembly goes on.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from functools import cache
from typing import Any

import numpy as np

from perftui.symbols.code.armformat import objdump_arm
from perftui.symbols.code.attformat import objdump_operands
from perftui.symbols.code.elfcode import (
    CodeRange,
    ElfCodeImage,
    ElfFileError,
    FunctionSymbol,
    SymbolLookup,
)
from perftui.symbols.code.relocs import Relocation, RelocationTable, section_relocations

__all__ = [
    "Disassembly",
    "Instruction",
    "disassemble_bytes",
    "disassemble_function",
    "disassemble_symbol",
]

_SUFFIXES = "bwlq"
_BARE_REGISTER = re.compile(r"%[a-z0-9]+(?:\(\d\))?")  # "%eax", "%st(1)"
# registers that do not give an integer operand's size (cvtsi2sdl 0x8(%rsp),%xmm0)
_VECTOR = re.compile(r"[xyz]mm|mm|k[0-7]$")
# capstone's spelling -> objdump's
_ALIASES = {"fucompi": "fucomip", "fcompi": "fcomip", "wait": "fwait"}
_STRING_OPS = frozenset({"stos", "lods", "movs", "cmps", "scas", "ins", "outs"})
# objdump writes these without the suffix of the mode's default size (q in 64-bit code,
# l in 32-bit code) whatever their operands.
_NO_SUFFIX = frozenset({"call", "jmp", "ret", "push", "pop", "leave", "pushf", "popf"})


@dataclass(frozen=True, slots=True)
class Instruction:
    """One decoded instruction.

    ``asm`` is what a user reads: mnemonic and operands, a direct target written as
    objdump does (``5e <demo_nic_csum_partial+0x5e>``) or by the relocation's name
    (``printk``), a RIP-relative datum or a relocated operand named in a comment.
    ``target`` is the address of a direct jump or call (None for an indirect one, or for
    a call to a symbol outside the file); ``target_name`` is its ``symbol+0xoff``.
    """

    addr: int
    offset: int  # from the function's start
    raw: bytes
    mnemonic: str
    operands: str
    asm: str
    target: int | None = None
    target_name: str | None = None
    relocations: tuple[Relocation, ...] = ()
    is_call: bool = False
    is_jump: bool = False
    is_return: bool = False

    @property
    def size(self) -> int:
        return len(self.raw)

    @property
    def hex(self) -> str:
        """The bytes as objdump prints them: ``e8 00 00 00 00``."""
        return self.raw.hex(" ")


@dataclass
class Disassembly:
    """A function's instructions and where they come from.

    ``start`` is the displayed address of the first byte and ``size`` the symbol's size;
    ``instructions`` cover ``[start, start + size)``.  ``is_code`` is False (and
    ``instructions`` empty) for a range in a data section; ``note`` says why.
    ``warnings`` are one-line problems that did not stop the disassembly (an unreadable
    relocation table: the instructions are there, unnamed).
    """

    path: str
    name: str
    section: str
    start: int
    size: int
    machine: str | None
    objdump_start: int = 0  # the first byte as objdump shows it: vaddr; offset in a .ko
    instructions: list[Instruction] = field(default_factory=list)
    is_code: bool = True
    note: str | None = None
    warnings: list[str] = field(default_factory=list)

    @property
    def end(self) -> int:
        return self.start + self.size

    def addresses(self) -> np.ndarray:
        """Start address of every instruction (sorted, uint64)."""
        return np.array([i.addr for i in self.instructions], dtype=np.uint64)

    def index_of(self, addr: int) -> int | None:
        """Index of the instruction that contains ``addr``, None outside the function."""
        if not self.instructions or not self.start <= addr < self.end:
            return None
        starts = self.addresses()
        return int(np.searchsorted(starts, np.uint64(addr), side="right")) - 1


@cache
def _capstone(machine: str, syntax: str) -> Any:
    import capstone

    arch_mode = {
        "x86_64": (capstone.CS_ARCH_X86, capstone.CS_MODE_64),
        "i386": (capstone.CS_ARCH_X86, capstone.CS_MODE_32),
        "aarch64": (capstone.CS_ARCH_ARM64, capstone.CS_MODE_ARM),
    }[machine]
    md = capstone.Cs(*arch_mode)
    md.detail = True
    md.skipdata = True
    if machine != "aarch64":
        md.syntax = capstone.CS_OPT_SYNTAX_ATT if syntax == "att" else capstone.CS_OPT_SYNTAX_INTEL
    return md


def _name(lookup: SymbolLookup | None, addr: int) -> str | None:
    if lookup is None:
        return None
    try:
        hit = lookup(addr)
    except Exception:  # a caller's resolver must not break the disassembly
        return None
    if hit is None:
        return None
    sym, off = hit
    return sym if off == 0 else f"{sym}+{off:#x}"


def disassemble_bytes(
    code: bytes,
    address: int,
    machine: str,
    *,
    lookup: SymbolLookup | None = None,
    syntax: str = "att",
    relocs: RelocationTable | None = None,
    section_offset: int = 0,
    section_bases: Mapping[int, int] | None = None,
) -> list[Instruction]:
    """Decode ``code`` shown at ``address`` on ``machine`` ("x86_64", "i386", "aarch64").

    ``relocs`` (with ``section_offset``, where ``code`` starts in the relocated section,
    and ``section_bases``, section index -> load address) names relocated operands.
    """
    if machine not in ("x86_64", "i386", "aarch64"):
        raise ValueError(f"cannot disassemble {machine!r}")
    if syntax not in ("att", "intel"):
        raise ValueError(f"unknown syntax {syntax!r}")
    import capstone

    md = _capstone(machine, syntax)
    x86 = machine != "aarch64"
    att = x86 and syntax == "att"
    decoded = list(md.disasm(code, address))
    spans: tuple[np.ndarray, np.ndarray] | None = None
    if relocs is not None and len(relocs) and decoded:
        starts = np.array([i.address - address for i in decoded], np.uint64) + np.uint64(
            section_offset
        )
        ends = starts + np.array([i.size for i in decoded], np.uint64)
        spans = relocs.spans(starts, ends)
    out: list[Instruction] = []
    for k, insn in enumerate(decoded):
        groups = set(insn.groups) if insn.id else set()
        mnemonic = insn.mnemonic
        ops = insn.op_str
        words: list[str] = []
        arm_comment = None
        if not x86 and insn.id:
            mnemonic, ops, arm_comment = objdump_arm(insn, lambda a: _name(lookup, a))
        if att:
            mnemonic = _objdump_mnemonic(insn, machine)
            if insn.id:
                words, ops = objdump_operands(insn, machine, mnemonic)
            if mnemonic == "nop" and insn.bytes == b"\x66\x90":  # objdump: the 16-bit xchg
                mnemonic, ops = "xchg", "%ax,%ax"
        is_call = capstone.CS_GRP_CALL in groups
        is_ret = capstone.CS_GRP_RET in groups
        is_jump = capstone.CS_GRP_JUMP in groups and not is_call
        target = None
        target_name = None
        comment = None
        direct = capstone.CS_GRP_BRANCH_RELATIVE in groups
        if direct and insn.id:
            imms = [o.imm for o in insn.operands if o.type == _imm_type(machine)]
            if imms:
                target = imms[-1] & ((1 << 64) - 1)
        rels: tuple[Relocation, ...] = ()
        if spans is not None and spans[1][k] > spans[0][k]:
            assert relocs is not None
            rows = range(int(spans[0][k]), int(spans[1][k]))
            rels = tuple(relocs.relocation(r) for r in rows)
            end_off = section_offset + (insn.address - address) + insn.size
            sec, off, rname = relocs.target(rows[0], end_off)
            if direct:
                base = section_bases.get(sec) if sec is not None and section_bases else None
                target = base + off if base is not None else None
                target_name = rname
            else:
                comment = rname
        elif target is not None:
            target_name = _name(lookup, target)
        elif x86 and insn.id:  # (id 0: a skipped byte, no operands)
            rip = _rip_target(insn, machine)
            if rip is not None:
                nm = _name(lookup, rip)
                comment = f"{rip:x}" + (f" <{nm}>" if nm else "")
        if direct and (target is not None or target_name is not None):
            ops = _with_target(ops, machine, target, target_name, rels)
        shown = " ".join([*words, mnemonic])
        asm = f"{shown:<6} {ops}".rstrip() if ops else shown
        comment = comment or arm_comment
        if comment:
            asm += ("  # " if x86 else "  // ") + comment
        out.append(
            Instruction(
                insn.address, insn.address - address, bytes(insn.bytes), mnemonic, ops, asm,
                target, target_name, rels, is_call, is_jump, is_ret,
            )
        )
    return _wait_forms(out) if x86 else out


_WAITED = frozenset({"fnstsw", "fnstcw", "fnstenv", "fnsave", "fnclex", "fninit"})


def _wait_forms(insns: list[Instruction]) -> list[Instruction]:
    """``fwait`` joined to the x87 no-wait instruction after it, as objdump and the
    assembler write them: ``9b dd 7c 24 fc`` is one ``fstcw -0x4(%rsp)``."""
    out: list[Instruction] = []
    for insn in insns:
        prev = out[-1] if out else None
        if (prev is not None and prev.raw == b"\x9b" and insn.mnemonic in _WAITED
                and prev.addr + 1 == insn.addr):
            mnemonic = "f" + insn.mnemonic[2:]
            asm = f"{mnemonic:<6} {insn.operands}".rstrip() if insn.operands else mnemonic
            out[-1] = replace(insn, addr=prev.addr, offset=prev.offset, raw=prev.raw + insn.raw,
                              mnemonic=mnemonic, asm=asm)
        else:
            out.append(insn)
    return out


def _imm_type(machine: str) -> int:
    import capstone

    return int(capstone.arm64.ARM64_OP_IMM if machine == "aarch64" else capstone.x86.X86_OP_IMM)


def _with_target(
    ops: str, machine: str, target: int | None, name: str | None, rels: tuple[Relocation, ...]
) -> str:
    """Operands with the branch target written as objdump does, or by its relocation."""
    if rels and name:
        text = name
    elif name:
        text = f"{target:x} <{name}>" if target is not None else name
    else:
        text = f"{target:x}" if target is not None else ops
    if machine == "aarch64":
        head, sep, _ = ops.rpartition(", ")
        return f"{head}{sep}{text}"
    return text


def _rip_target(insn: Any, machine: str) -> int | None:
    if machine != "x86_64":
        return None
    import capstone.x86 as x86

    for o in insn.operands:
        if o.type == x86.X86_OP_MEM and o.mem.base == x86.X86_REG_RIP:
            return int((insn.address + insn.size + o.mem.disp) & ((1 << 64) - 1))
    return None


def _has_bare_register(op_str: str) -> bool:
    """Whether an AT&T operand list has a register operand (implicit ones included:
    capstone prints ``rep stosq %rax, (%rdi)`` with only the memory operand in detail)."""
    depth, start = 0, 0
    for k, ch in enumerate(op_str + ","):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            op = op_str[start:k].strip()
            if _BARE_REGISTER.fullmatch(op) and not _VECTOR.match(op[1:]):
                return True
            start = k + 1
    return False


def _objdump_mnemonic(insn: Any, machine: str) -> str:
    """capstone's AT&T mnemonic, without the size suffix where objdump omits it."""
    mn: str = _ALIASES.get(insn.mnemonic, insn.mnemonic)
    if not insn.id or mn[-1:] not in _SUFFIXES:
        return mn
    words = mn.split(" ")
    last = words[-1]
    base = last[:-1]
    if base in _NO_SUFFIX and last[-1] == ("q" if machine == "x86_64" else "l"):
        return " ".join([*words[:-1], base])  # the mode's default operand size
    name = insn.insn_name()
    if name != base and not (base in _STRING_OPS and name[:-1] == base):  # stosd -> stos
        return mn
    import capstone.x86 as x86

    if any(o.type == x86.X86_OP_REG and not _VECTOR.match(insn.reg_name(o.reg))
           for o in insn.operands) or _has_bare_register(insn.op_str):
        return " ".join([*words[:-1], base])
    return mn


def disassemble_function(
    image: ElfCodeImage,
    *,
    size: int,
    vaddr: int | None = None,
    section: str | int | None = None,
    offset: int | None = None,
    section_bases: Mapping[str, int] | None = None,
    bias: int = 0,
    lookup: SymbolLookup | None = None,
    name: str = "",
    syntax: str = "att",
) -> Disassembly:
    """Disassemble ``size`` bytes of a function of ``image`` (see the module docstring).

    Raises :class:`~perftui.symbols.code.elfcode.ElfFileError` when the range is not in the
    file (past its section, no section at ``vaddr``) or the machine is not one perftui
    disassembles.
    """
    load = None
    if image.kind == "rel" and section is not None:
        sec_name = image.section(section).name
        load = (section_bases or {}).get(sec_name, 0)
    code: CodeRange = image.code_range(
        size=size, vaddr=vaddr, section=section, offset=offset, load_address=load, bias=bias
    )
    result = Disassembly(
        image.path, name, code.section.name, code.address, code.size, image.machine,
        code.offset if image.kind == "rel" else code.section.addr + code.offset,
    )
    if not code.is_code:
        what = "has no bytes in the file" if code.section.nobits else "holds data"
        result.is_code = False
        result.note = f"{code.section.name} {what}, not code: nothing to disassemble"
        return result
    if image.machine is None:
        raise ElfFileError(image.path, f"cannot disassemble ELF machine {image.e_machine}")
    if lookup is None:
        lookup = image.lookup(section_bases, bias) if image.kind == "rel" else image.lookup(
            bias=bias
        )
        if image.kind == "rel" and not section_bases:
            lookup = image.lookup({code.section.name: code.address - code.offset})
    relocs = None
    bases: dict[int, int] = {}
    if image.kind == "rel":
        try:
            relocs = section_relocations(image, code.section)
        except ElfFileError as e:
            result.warnings.append(str(e))
        bases = {code.section.index: code.address - code.offset}
        for s in image.sections:
            if section_bases and s.name in section_bases and s.index not in bases:
                bases[s.index] = section_bases[s.name]
    result.instructions = disassemble_bytes(
        code.data, code.address, image.machine, lookup=lookup, syntax=syntax, relocs=relocs,
        section_offset=code.offset, section_bases=bases,
    )
    return result


def disassemble_symbol(
    image: ElfCodeImage,
    symbol: FunctionSymbol,
    *,
    section_bases: Mapping[str, int] | None = None,
    bias: int = 0,
    lookup: SymbolLookup | None = None,
    syntax: str = "att",
) -> Disassembly:
    """:func:`disassemble_function` for a symbol read from the same file."""
    if image.kind == "rel":
        return disassemble_function(
            image, size=symbol.size, section=symbol.section, offset=symbol.value,
            section_bases=section_bases, lookup=lookup, name=symbol.name, syntax=syntax,
        )
    sec = symbol.section if 0 < symbol.section < len(image.sections) else None
    return disassemble_function(
        image, size=symbol.size, vaddr=symbol.value, section=sec, bias=bias, lookup=lookup,
        name=symbol.name, syntax=syntax,
    )
