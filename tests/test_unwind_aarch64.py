"""aarch64 DWARF unwinding on hand-made samples (perf 6.1 here unwinds only x86-64: its
libunwind is the host's).  tests/programs/cfiarm.S assembled and linked ``-shared`` by
binutils-aarch64-linux-gnu; the expected frames follow from its CFI as
``aarch64-linux-gnu-readelf --debug-dump=frames`` prints it (read in the test) and its
symbols by ``aarch64-linux-gnu-nm``:

- ``arm_leaf``: the CIE's rule only (CFA = sp, no rule for x30): the return address is the
  sampled x30 itself;
- ``arm_mid`` past its ``stp x29, x30, [sp, -16]!``: CFA = sp + 16, x29 at CFA-16, x30 at
  CFA-8; its call to ``arm_leaf`` returns to ``arm_mid + 12``.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from dwarfrecords import ARM_MASK, BASE, Sampled, dwarf_recording, words
from perfprograms import PROGRAMS, require
from test_unwind_hostile import S, head_of, unwound

from perftui.symbols.unwind import walk as W

SP, FP, LR = 31, 29, 30


@pytest.fixture(scope="module")
def arm(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    d = tmp_path_factory.mktemp("cfiarm")
    obj, so = d / "cfiarm.o", d / "cfiarm.so"
    subprocess.run([require("aarch64-linux-gnu-as"), "-o", str(obj), str(PROGRAMS / "cfiarm.S")],
                   check=True, capture_output=True, timeout=120)
    subprocess.run([require("aarch64-linux-gnu-ld"), "-shared", "--eh-frame-hdr", "-o", str(so),
                    str(obj)], check=True, capture_output=True, timeout=120)
    frames = subprocess.run([require("aarch64-linux-gnu-readelf"), "--debug-dump=frames",
                             str(so)], check=True, capture_output=True, text=True).stdout
    # the rules the expectations below are worked out from
    assert "Return address column: 30" in frames and "DW_CFA_def_cfa: r31 (sp) ofs 0" in frames
    assert "DW_CFA_def_cfa_offset: 16" in frames and "r30 (x30) at cfa-8" in frames
    nm = subprocess.run([require("aarch64-linux-gnu-nm"), str(so)], check=True,
                        capture_output=True, text=True).stdout
    syms = {p[2]: int(p[0], 16) for p in (ln.split() for ln in nm.splitlines()) if len(p) == 3}
    return so, syms


def regs(pc: int, sp: int, lr: int) -> dict[object, int]:
    return {"pc": pc, SP: sp, FP: sp + 0x100, LR: lr, **{k: k for k in range(19)}}


def test_arm_chain(arm: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """In arm_leaf: frame 1 from x30 (arm_mid + 12, given at - 1); arm_mid's return
    address at [S + 8]: 0 ends the chain (libunwind aarch64), or arm_mid + 12 again (a
    recursion), whose frame reads [S + 24]; a copy of 16 bytes cannot give [S + 8] (perf's
    access_mem: not the copy's last word) and stops there."""
    so, sym = arm
    leaf = BASE + sym["arm_leaf"] + 4
    back = BASE + sym["arm_mid"] + 12  # after the bl
    data = dwarf_recording(tmp_path / "arm.data", str(so), [
        Sampled(regs(leaf, S, back), words(0x1234, 0, 0)),
        Sampled(regs(leaf, S, back), words(0x1234, back, 0x5678, 0, 0)),
        Sampled(regs(leaf, S, back), words(0x1234, back, 0x5678, 0), dyn_size=16),
        Sampled(regs(BASE + sym["arm_mid"] + 8, S, 0), words(0x1234, 0, 0)),
    ], arch="aarch64")
    frames, ends, notes = unwound(data)
    assert frames[0] == [leaf, back - 1] and ends[0] == W.DONE
    assert frames[1] == [leaf, back - 1, back - 1] and ends[1] == W.DONE
    assert frames[2] == [leaf, back - 1] and ends[2] == W.STACK_END
    # at the bl itself (past the stp): the return address from the stack, 0: the end
    assert frames[3] == [BASE + sym["arm_mid"] + 8] and ends[3] == W.DONE
    assert "4 samples with user stacks, 3 unwound to the end" in head_of(notes)


def test_arm_mask_without_the_link_register(arm: tuple[Path, dict[str, int]],
                                            tmp_path: Path) -> None:
    """A mask without x30: arm_leaf's return address is in no sampled register: that
    sample stops at its first frame, counted; a mask without sp: no frame at all."""
    so, sym = arm
    leaf = BASE + sym["arm_leaf"] + 4
    back = BASE + sym["arm_mid"] + 12
    data = dwarf_recording(tmp_path / "nolr.data", str(so),
                           [Sampled(regs(leaf, S, back), words(0, 0, 0))],
                           arch="aarch64", mask=ARM_MASK & ~(1 << 30))
    frames, ends, notes = unwound(data)
    assert frames[0] == [leaf] and ends[0] == W.REGS
    assert "1 at a register the sample does not hold" in head_of(notes)
    data = dwarf_recording(tmp_path / "nosp.data", str(so),
                           [Sampled(regs(leaf, S, back), words(0, 0, 0))],
                           arch="aarch64", mask=ARM_MASK & ~(1 << 31))
    frames, ends, notes = unwound(data)
    assert frames[0] == []
    assert "1 without a sampled program counter and stack pointer" in head_of(notes)
