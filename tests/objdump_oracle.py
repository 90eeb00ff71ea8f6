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

import pytest

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
        if os.environ.get("CI") == "true":
            pytest.fail(f"{name} is needed by this test and is not installed")
        pytest.skip(f"{name} is not installed")
    return path


def run_objdump(path: str, *args: str, objdump: str = "objdump") -> str:
    exe = tool(objdump)
    return subprocess.run(
        [exe, *args, path], check=True, capture_output=True, text=True,
        env={**os.environ, "LC_ALL": "C"},
    ).stdout


def parse(text: str) -> list[OFunc]:
    """Functions in objdump's order, each with its instructions."""
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
            text_ = (m.group(3) or "").strip()
            if not text_ and cur.insns and m.group(3) is None:  # continuation of long bytes
                cur.insns[-1].raw += raw
                continue
            text_ = text_.split("#")[0].strip() if "#" in text_ else text_
            text_ = text_.split("//")[0].strip()
            words = text_.split(None, 1)
            mnem, ops = (words[0], words[1] if len(words) > 1 else "") if words else ("", "")
            # prefixes objdump prints as words ("data16 cs nopw", "rep stos", "lock cmpxchg")
            while ops and mnem.split()[-1] in _PREFIX_WORDS:
                more = ops.split(None, 1)
                mnem = f"{mnem} {more[0]}"
                ops = more[1] if len(more) > 1 else ""
            cur.insns.append(OInsn(int(m.group(1), 16), raw, mnem, ops.strip(), source=source))
            continue
        if m := _SOURCE.match(line.strip()):
            source = (m.group(1), int(m.group(2)))
    return funcs


_PREFIX_WORDS = frozenset(
    {"data16", "cs", "ds", "es", "ss", "fs", "gs", "rep", "repz", "repnz", "repe", "repne",
     "lock", "notrack", "bnd", "rex", "rex.W", "rex.B", "rex.R", "rex.X", "rex.WB", "addr32",
     "xacquire", "xrelease"}
)
