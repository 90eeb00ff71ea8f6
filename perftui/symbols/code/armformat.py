"""capstone's aarch64 text written as aarch64-linux-gnu-objdump (binutils 2.40) writes it.

:func:`objdump_arm(insn, name) <objdump_arm>` -> ``(mnemonic, operands, comment)``, by the
rules of binutils' ``aarch64_print_operand`` (opcodes/aarch64-opc.c) where capstone differs:

* offsets and indexes of memory operands, shift and extend amounts, bit numbers, bitfield
  positions and vector shifts in decimal (``[sp, #-48]!``, ``lsr w2, w3, #31``,
  ``tbz x0, #63``); arithmetic, logical and move-wide immediates, condition flags, vector
  immediates and exception numbers in hex (``add x0, x0, #0x1``, ``#0xfffffffffffffff0``
  for a logical immediate of an x register), a ``mov`` immediate masked to its register
  with its signed value as a comment (``mov w1, #0xffffffff // #-1``);
* floating-point immediates as ``%.18e`` (``#1.000000000000000000e+00``);
* a pc-relative address (``adr``, ``adrp``, a literal load or ``prfm``) as a hex address
  and the symbol holding it (``adrp x0, 10000 <main+0x10>``);
* conditions by their first name with the others as a comment (``cinc x0, x1, cc //
  cc = lo, ul, last``; ``b.cs 304 <f+0x304> // b.hs, b.nlast``);
* a list of more than two consecutive registers as a range (``{v0.2d-v3.2d}``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from itertools import pairwise
from typing import Any

__all__ = ["objdump_arm"]

# binutils' aarch64_conds: the names of each condition, objdump's first
_CONDS = [["eq", "none"], ["ne", "any"], ["cs", "hs", "nlast"], ["cc", "lo", "ul", "last"],
          ["mi", "first"], ["pl", "nfrst"], ["vs"], ["vc"], ["hi", "pmore"],
          ["ls", "plast"], ["ge", "tcont"], ["lt", "tstop"], ["gt"], ["le"], ["al"], ["nv"]]
_COND_OF = {n: names for names in _CONDS for n in names}
_COND_MNEMONICS = frozenset({
    "csel", "csinc", "csinv", "csneg", "cset", "csetm", "cinc", "cinv", "cneg", "ccmp",
    "ccmn", "fcsel", "fccmp", "fccmpe"})
# mnemonics whose plain immediates objdump writes in hex (the rest: decimal)
_HEX = frozenset({
    "add", "adds", "sub", "subs", "cmp", "cmn", "and", "ands", "orr", "eor", "tst", "bic",
    "mov", "movz", "movk", "movn", "ccmp", "ccmn", "fccmp", "fccmpe", "movi", "mvni",
    "svc", "hvc", "smc", "brk", "hlt", "hint", "dcps1", "dcps2", "dcps3", "msr", "clrex",
    "addg", "subg", "tcancel"})
# mnemonics with a pc-relative address as their last operand (when not a memory operand)
_PCREL = frozenset({"adr", "adrp", "ldr", "ldrsw", "prfm"})
_NUM = r"-?(?:0x[0-9a-f]+|\d+)"
_IMM = re.compile(rf"#({_NUM})\b")
_SHIFTED = re.compile(rf"\b(lsl|lsr|asr|ror|msl|[su]xt[bhwx]) #({_NUM})\b")
_FLOAT = re.compile(r"#(-?\d+\.\d+(?:e[-+]?\d+)?)$")
_HEXWORD = re.compile(r"#([0-9a-f]{16})\b")  # capstone's 64-bit vector immediate
_LIST = re.compile(r"\{([^{}]*)\}")
_VREG = re.compile(r"([vzqdsbh])(\d+)(\.\w+)?$")


def _int(text: str) -> int:
    return int(text, 0)


def _dec(m: re.Match[str]) -> str:
    v = _int(m.group(1))
    return f"#{v - (1 << 64) if v >= 1 << 63 else v}"  # (capstone writes some unsigned)


def _memory_decimal(ops: str) -> str:
    """Immediates inside ``[...]`` and a post-index after it, in decimal."""
    out: list[str] = []
    depth = 0
    for part in re.split(r"([\[\]])", ops):
        if part == "[":
            depth += 1
        elif part == "]":
            depth -= 1
        elif depth or (out and out[-1] == "]"):
            part = _IMM.sub(_dec, part)
        out.append(part)
    return "".join(out)


def _width(ops: str) -> int:
    first = ops.split(",", 1)[0].strip()
    return 32 if first[:1] == "w" or first == "wsp" else 64


def _ranges(m: re.Match[str]) -> str:
    regs = [r.strip() for r in m.group(1).split(",")]
    parts = [_VREG.match(r) for r in regs]
    if len(regs) > 2 and all(parts):
        kinds = {(p.group(1), p.group(3)) for p in parts if p}
        nums = [int(p.group(2)) for p in parts if p]
        if len(kinds) == 1 and all(b == a + 1 for a, b in pairwise(nums)):
            return f"{{{regs[0]}-{regs[-1]}}}"
    return m.group(0)


def _address(ops: str, name: Callable[[int], str | None]) -> str:
    """The last operand, a pc-relative ``#imm``, as objdump writes an address."""
    head, sep, last = ops.rpartition(", ")
    m = re.fullmatch(rf"#({_NUM})", last)
    if m is None:
        return ops
    addr = _int(m.group(1)) & ((1 << 64) - 1)
    nm = name(addr)
    return f"{head}{sep}{addr:x}" + (f" <{nm}>" if nm else "")


def _prefetch(insn: Any, mn: str, ops: str) -> str:
    """A prefetch operation with no name as its number: ``#0x%02x`` (SVE's: ``#%d``)."""
    sve = mn in ("prfb", "prfh", "prfw", "prfd")
    if not (sve or mn in ("prfm", "prfum")) or ops[:1] not in ",#":
        return ops
    op = int.from_bytes(insn.bytes, "little") & (0xF if sve else 0x1F)
    return re.sub(rf"^(#{_NUM})?(?=, )", f"#{op}" if sve else f"#{op:#04x}", ops)


def objdump_arm(insn: Any, name: Callable[[int], str | None]) -> tuple[str, str, str | None]:
    """objdump's mnemonic, operands and comment of a capstone aarch64 instruction
    (``name(addr)``: ``sym`` or ``sym+0xoff`` of an address, None when no symbol holds it)."""
    mn: str = insn.mnemonic
    ops: str = insn.op_str
    comment: str | None = None
    if mn.startswith(("b.", "bc.")):
        head, _, cond = mn.partition(".")
        names = _COND_OF.get(cond)
        if names:
            mn = f"{head}.{names[0]}"
            others = [f"{head}.{n}" for n in names if n != names[0]]
            comment = ", ".join(others) or None
        if head == "bc":  # (capstone gives bc.cond no branch group: its target is written here)
            ops = _address(ops, name)
        return mn, ops, comment
    if mn in ("sys", "sysl"):
        ops = re.sub(r"\bc(\d+)\b", r"C\1", ops)
    ops = _LIST.sub(_ranges, ops)
    ops = re.sub(r"\[(0x[0-9a-f]+)\]", lambda m: f"[{int(m.group(1), 16)}]", ops)  # a lane
    ops = _memory_decimal(ops)
    ops = _SHIFTED.sub(lambda m: f"{m.group(1)} #{_int(m.group(2))}", ops)
    if mn in _PCREL and "[" not in ops:
        return mn, _prefetch(insn, mn, _address(ops, name)), None
    if mn in _COND_MNEMONICS:
        head, sep, cond = ops.rpartition(", ")
        names = _COND_OF.get(cond)
        if names:
            ops = f"{head}{sep}{names[0]}"
            if len(names) > 1:
                comment = f"{names[0]} = {', '.join(names[1:])}"
    fm = _FLOAT.search(ops)
    if fm is not None and mn.startswith("fcm"):  # a compare with zero
        ops = ops[:fm.start()] + "#0.0"
    elif fm is not None:
        ops = ops[:fm.start()] + f"#{float(fm.group(1)):.18e}"
    elif mn == "mov" and ops[:1] == "z":  # SVE's signed (shifted) 8-bit immediate
        def signed(m: re.Match[str]) -> str:
            v = _int(m.group(1))
            bits = 8 if 0 <= v <= 0xFF else 16 if 0 <= v <= 0xFFFF else 64
            return f"#{v - (1 << bits) if v >> (bits - 1) == 1 else v}"

        ops = _IMM.sub(signed, ops)
    elif mn in _HEX:
        ops = _HEXWORD.sub(lambda m: f"#{int(m.group(1), 16):#x}", ops)
        bits = _width(ops)

        def hexed(m: re.Match[str]) -> str:
            return f"#{_int(m.group(1)) & ((1 << bits) - 1):#x}"

        imm = _IMM.search(ops)
        ops = re.sub(rf"(?<![\w\]] )(?<!\[)#({_NUM})\b(?![^\[]*\])", hexed, ops)
        if mn == "mov" and imm is not None:
            v = _int(imm.group(1)) & ((1 << bits) - 1)
            comment = f"#{v - (1 << bits) if v >> (bits - 1) else v}"
    else:
        ops = _IMM.sub(_dec, ops)
    return mn, _prefetch(insn, mn, ops), comment
