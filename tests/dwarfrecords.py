"""Hand-made ``--call-graph dwarf`` recordings (the project's writer): one process that maps
one ELF file, and samples with the registers and stack bytes a test chooses.

Registers are given by DWARF column (x86-64: rax 0, rdx 1, rcx 2, rbx 3, rsi 4, rdi 5,
rbp 6, rsp 7, r8-r15 8-15; aarch64: x0-x30 0-30, sp 31) plus ``"pc"``, and written in
perf's order for the attr's ``sample_regs_user`` (symbols/unwind/arch.py is not used to
write them: perf's numbers are spelled out here, from ``perf_regs.h``).
"""

from __future__ import annotations

import struct
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftui.perfdata import EventAttr, Feature, Sample
from perftui.perfdata.constants import Misc
from perftui.perfdata.writer import Writer

#: perf's x86-64 register numbers (arch/x86/include/uapi/asm/perf_regs.h) -> DWARF column
X86_PERF = {0: 0, 1: 3, 2: 2, 3: 1, 4: 4, 5: 5, 6: 6, 7: 7, 8: "pc",
            **{16 + k: 8 + k for k in range(8)}}
X86_MASK = 0xFF0FFF  # perf 6.1's: every general register but DS/ES/FS/GS
#: aarch64: x0-x30, sp (31), pc (32)
ARM_PERF = {**{k: k for k in range(32)}, 32: "pc"}
ARM_MASK = (1 << 33) - 1
EXCLUDE_CALLCHAIN_USER = 1 << 22
BASE = 0x7F0000000000
PID = 4242


@dataclass
class Sampled:
    regs: dict[Any, int]  # DWARF column or "pc" -> value
    stack: bytes = b""  # the copy, from the stack pointer up
    dyn_size: int | None = None  # default: len(stack)
    size: int | None = None  # the copy's size field (default: len(stack))
    callchain: list[int] = field(default_factory=list)
    misc: int = Misc.USER
    abi: int = 2


def regs_list(regs: dict[Any, int], mask: int, perf: dict[int, Any]) -> list[int]:
    return [regs.get(perf.get(bit, -1), 0) for bit in range(64) if mask >> bit & 1]


def dwarf_recording(path: Path, elf_path: str, samples: list[Sampled], *,
                    arch: str = "x86_64", mask: int | None = None, order: str = "<",
                    build_id: str | None = None, file_size: int = 0x10000,
                    stack_user: int = 8192) -> Path:
    """A recording of process :data:`PID` with ``elf_path`` mapped whole at :data:`BASE`
    (pgoff 0, r-x) and ``samples``."""
    x86 = arch == "x86_64"
    if mask is None:
        mask = X86_MASK if x86 else ARM_MASK
    perf = X86_PERF if x86 else ARM_PERF
    st = (Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN | Sample.PERIOD
          | Sample.REGS_USER | Sample.STACK_USER)
    attr = EventAttr(type=1, size=128, sample_period=1000, sample_type=int(st),
                     flags=1 << 8 | 1 << 9 | 1 << 18 | 1 << 23 | EXCLUDE_CALLCHAIN_USER,
                     sample_regs_user=mask, sample_stack_user=stack_user, ids=[7],
                     name="cpu-clock")
    with open(path, "wb") as f:
        w = Writer(f, [attr], {Feature.ARCH: arch, Feature.OSRELEASE: "6.1.0-test"},
                   order=order)
        b = w.b
        sid = {"pid": PID, "tid": PID, "time": 10, "cpu": 0}
        w.write(b.kernel("COMM", {"pid": PID, "tid": PID, "comm": "handmade"},
                         misc=Misc.COMM_EXEC, sample_id=sid))
        mm: dict[str, Any] = {"pid": PID, "tid": PID, "addr": BASE, "len": file_size,
                              "pgoff": 0, "prot": 5, "flags": 2, "filename": elf_path}
        if build_id:
            mm["build_id"] = build_id
        else:
            mm.update({"maj": 0, "min": 0, "ino": 1, "ino_generation": 0})
        w.write(b.kernel("MMAP2", mm, misc=Misc.USER, sample_id=sid))
        w.write(b.user("FINISHED_INIT"))
        for k, s in enumerate(samples):
            size = len(s.stack) if s.size is None else s.size
            stack = {"size": size, "data": s.stack, "dyn_size": (
                len(s.stack) if s.dyn_size is None else s.dyn_size)} if size else {"size": 0}
            w.write(b.sample({"ip": s.regs.get("pc", 0), "pid": PID, "tid": PID,
                              "time": 100 + k, "period": 1000, "callchain": s.callchain,
                              "regs_user": {"abi": s.abi,
                                            "regs": regs_list(s.regs, mask, perf)},
                              "stack_user": stack}, misc=s.misc))
        w.close()
    return path


def words(*values: int, order: str = "<") -> bytes:
    """Stack bytes: u64 words."""
    return struct.pack(f"{order}{len(values)}Q", *values)


def fuzz_seed(path: Path) -> Path:
    """tests/data/unwind/handmade-dwarf.data, the fuzzer's DWARF seed (tests/fuzzing.py):
    samples of 512-byte stack copies (a few with odd sizes) in a DSO no machine has, so a
    mutated copy reaches the stack fields and the unwinder's start."""
    ret = BASE + 0x1026
    good = words(ret, 0x3333, *range(62))
    samples = [Sampled({"pc": BASE + 0x1029 + k, 7: 0x7FFD0000 + 8 * k, 6: 0x7FFD0100}, good)
               for k in range(6)]
    samples += [Sampled({"pc": BASE + 0x1029, 7: 0x7FFD0000}, good[:64], dyn_size=32),
                Sampled({"pc": BASE + 0x1029, 7: 0x7FFD0000}, b"", size=0),
                Sampled({"pc": BASE + 0x1029, 7: 0x7FFD0000}, good[:64], abi=1)]
    return dwarf_recording(path, "/nonexistent/cfihostile.so", samples, stack_user=512)


if __name__ == "__main__":
    import sys

    fuzz_seed(Path(sys.argv[1]))
