"""The registers an unwinder reads, per architecture: perf's sample register numbers (the
bits of ``sample_regs_user``) and the DWARF register numbers CFI rules name.

x86-64 (``arch/x86/include/uapi/asm/perf_regs.h`` and the System V psABI): perf numbers
AX 0, BX 1, CX 2, DX 3, SI 4, DI 5, BP 6, SP 7, IP 8, ..., R8-R15 16-23; DWARF numbers rax 0,
rdx 1, rcx 2, rbx 3, rsi 4, rdi 5, rbp 6, rsp 7, r8-r15 8-15, and the return address column
16.  aarch64: perf's x0-x30 are 0-30, sp 31, pc 32; DWARF's x0-x30 0-30 and sp 31 (the
return address column is x30, the link register).  The unwinder keeps one location per DWARF
column and the program counter apart; on x86-64 the program counter is also column 16
(libunwind's ``rip``, what ``DW_OP_breg16`` reads), on aarch64 it is no column.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

EM_X86_64 = 62
EM_AARCH64 = 183


@dataclass(frozen=True)
class Arch:
    """What the walk needs to know of one architecture."""

    name: str
    machine: int  # ELF e_machine
    n_cols: int  # DWARF columns kept (registers 0..n_cols-1)
    ra_col: int  # the return address column
    sp_col: int  # the stack pointer's column
    fp_col: int  # the frame pointer's column (libunwind's frame-chain guess)
    pc_col: int  # the program counter's column, -1 when it has none
    #: DWARF column of each perf register number (-1: not kept; PC_SLOT: the program counter)
    perf_to_dwarf: tuple[int, ...]

    def columns(self, mask: int) -> np.ndarray:
        """For a ``sample_regs_user`` mask: where each register value of the sample goes, in
        their order (lowest perf number first): its DWARF column, :data:`PC_SLOT` for the
        program counter, -1 for one the walk does not keep."""
        out = [self.perf_to_dwarf[bit] if bit < len(self.perf_to_dwarf) else -1
               for bit in range(64) if mask >> bit & 1]
        return np.asarray(out, dtype=np.int64)


PC_SLOT = -2
_X86_PERF = (0, 3, 2, 1, 4, 5, 6, 7, PC_SLOT, -1, -1, -1, -1, -1, -1, -1,
             8, 9, 10, 11, 12, 13, 14, 15)
X86_64 = Arch("x86_64", EM_X86_64, 17, 16, 7, 6, 16, _X86_PERF)
AARCH64 = Arch("aarch64", EM_AARCH64, 32, 30, 31, 29, -1, (*range(32), PC_SLOT))


def arch_named(name: str | None) -> Arch | None:
    """The :class:`Arch` of a recording's ARCH feature (``uname -m``), None if unsupported."""
    if name in ("x86_64", "amd64"):
        return X86_64
    if name in ("aarch64", "arm64"):
        return AARCH64
    return None
