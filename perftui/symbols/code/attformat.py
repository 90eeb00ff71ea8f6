"""capstone's AT&T operands written as objdump (binutils 2.40, so ``perf annotate``) writes them.

:func:`objdump_operands(insn, machine) <objdump_operands>` -> ``(prefix words, operands)``:

* immediates in hex, masked to the operand's size (``$-1`` on a 32-bit operand is
  ``$0xffffffff``); the implicit 1 of a shift by one (opcodes D0/D1) is not written;
* displacements in hex, ``0x0`` where the instruction encodes a zero displacement
  (``nopl 0x0(%rax)``, ``0x0(,%rsi,8)``, ``0x0(%rbp)``), and a scale of 1 written
  (``(%rax,%rax,1)``);
* in 64-bit code a ``cs``/``ds``/``es``/``ss`` override, which changes nothing there, is a
  word before the mnemonic (``cs nopw``), and each redundant 0x66 a ``data16``;
* string instructions name their implicit segments (``%ds:(%rsi)``, ``%es:(%rdi)``).
"""

from __future__ import annotations

import re
from typing import Any

# movs, cmps, stos, lods, scas, ins, outs
_STRING_OPCODES = frozenset({*range(0xA4, 0xA8), *range(0xAA, 0xB0), *range(0x6C, 0x70)})
_NULL_SEGMENTS = {0x2E: "cs", 0x3E: "ds", 0x26: "es", 0x36: "ss"}
_LEGACY = frozenset({0xF0, 0xF2, 0xF3, 0x2E, 0x36, 0x3E, 0x26, 0x64, 0x65, 0x66, 0x67})
_NUM = r"-?(?:0x[0-9a-f]+|\d+)"
_MEMORY = re.compile(rf"(\*?)(%[a-z]s:)?({_NUM})?(?:\((%\w+)?(?:, ?(%\w+)(?:, ?(\d))?)?\))?")
_IMM = re.compile(rf"\$({_NUM})")
_ST = re.compile(r"%st\(\d\)")


def _x87_pair(opcode: int, modrm: int, st: str) -> list[str]:
    """objdump's operands of an x87 register form whose other operand is the stack top,
    written ``%st``: ``fmul %st(1),%st``, ``fmulp %st,%st(1)``, ``fcmovb %st(1),%st``
    (capstone writes one ``%st(i)``, or ``%st(0)`` for the top)."""
    if modrm < 0xC0:
        return [st]
    reg = (modrm >> 3) & 7
    if ((opcode == 0xD8 and reg not in (2, 3))
            or (opcode in (0xDA, 0xDB) and reg in (0, 1, 2, 3, 5, 6))
            or (opcode == 0xDF and reg in (5, 6))):
        return [st, "%st"]
    if opcode in (0xDC, 0xDE) and reg not in (2, 3):
        return ["%st", st]
    return [st]


def split_operands(op_str: str) -> list[str]:
    """Top-level operands of capstone's AT&T text (commas inside parentheses kept)."""
    out, depth, start = [], 0, 0
    for k, ch in enumerate(op_str):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth -= 1
        elif ch == "," and depth == 0:
            out.append(op_str[start:k].strip())
            start = k + 1
    tail = op_str[start:].strip()
    if tail or out:
        out.append(tail)
    return out


def _hex(value: int, bits: int) -> str:
    return f"0x{value & ((1 << bits) - 1):x}"


def _signed_hex(value: int) -> str:
    return f"-0x{-value:x}" if value < 0 else f"0x{value:x}"


def objdump_operands(insn: Any, machine: str, mnemonic: str) -> tuple[list[str], str]:
    """The words objdump writes before ``mnemonic`` and the operands, for one capstone
    x86 instruction decoded in AT&T syntax with detail on."""
    import capstone.x86 as x86

    bits = 64 if machine == "x86_64" else 32
    raw = bytes(insn.bytes)
    n_prefix = 0
    while n_prefix < len(raw) and raw[n_prefix] in _LEGACY:
        n_prefix += 1
    prefixes = raw[:n_prefix]
    words: list[str] = ["data16"] * max(prefixes.count(0x66) - 1, 0)
    null_seg = None
    if bits == 64:
        null_seg = next((_NULL_SEGMENTS[b] for b in prefixes if b in _NULL_SEGMENTS), None)
    imms = [o for o in insn.operands if o.type == x86.X86_OP_IMM]
    at = n_prefix + (1 if n_prefix < len(raw) and raw[n_prefix] & 0xF0 == 0x40
                     and bits == 64 else 0)
    opcode = raw[at : at + 1]
    string_op = bool(opcode) and opcode[0] in _STRING_OPCODES
    out: list[str] = []
    used_seg = False
    for tok in split_operands(insn.op_str):
        m = _IMM.fullmatch(tok)
        if m:
            if opcode in (b"\xd0", b"\xd1") and insn.imm_size == 0:
                continue  # shift by one: objdump writes no count
            o = imms.pop(0) if imms else None
            size = 8 * o.size if o is not None and o.size else bits
            value = o.imm if o is not None else int(m.group(1), 0)
            out.append(f"${_hex(value, size)}")
            continue
        m = _MEMORY.fullmatch(tok)
        if m and (m.group(3) is not None or tok.endswith(")")):
            star, seg, disp, base, index, scale = m.groups()
            if seg and seg[1:3] == null_seg:
                seg, used_seg = None, True
            if seg is None and string_op and base is not None:
                if base.endswith("di"):
                    seg = "%es:"
                elif base.endswith("si"):
                    seg = "%ds:"
            text = ""
            value = int(disp, 0) if disp is not None else 0
            if tok.endswith(")"):
                if disp is not None or insn.disp_size:
                    text = _signed_hex(value)
                text += f"({base or ''}"
                if index is not None:
                    text += f",{index},{scale or 1}"
                text += ")"
            else:
                text = _hex(value, bits)
            out.append(f"{star}{seg or ''}{text}")
            continue
        if null_seg and tok.startswith(f"%{null_seg}:"):
            used_seg = True
            tok = tok[4:]
        out.append(tok.replace(", ", ","))
    if 0 < len(out) <= 2 and all(_ST.fullmatch(t) for t in out) and len(raw) > at + 1:
        out = _x87_pair(opcode[0], raw[at + 1], out[-1] if opcode == b"\xdc" else out[0])
    if null_seg and (used_seg or not insn.operands):
        words.append(null_seg)
    return words, ",".join(out)
