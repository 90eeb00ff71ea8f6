"""DWARF unwinding of hand-made samples: odd and hostile stacks, register masks and CFI.

The ELF files are assembled from tests/programs/cfi*.S (``gcc -shared -nostdlib``; their
CFI is what ``readelf --debug-dump=frames`` prints for them, their addresses ``nm``'s); the
recordings are written by tests/dwarfrecords.py with the registers and stack words a test
chooses, so the expected frames follow from the plan: each function's CFI rule applied by
hand.  Each hostile sample must stop its own unwinding with a counted note (the notes the
browser's ``i`` and the CLI's stderr show), never hang, crash or read outside its record.
Where perf 6.1 reads the file, its ``perf script`` frames are the oracle too.
"""

from __future__ import annotations

import contextlib
import io
import subprocess
from pathlib import Path

import numpy as np
import pytest
from dwarfrecords import BASE, X86_MASK, Sampled, dwarf_recording, words
from perfprograms import PROGRAMS, require

from perftui.cli import main as perftui_main
from perftui.perfdata import open_recording
from perftui.perfdata.constants import CONTEXT_USER
from perftui.symbols.naming.resolver import Resolver
from perftui.symbols.options import SymbolOptions
from perftui.symbols.unwind import walk as W
from perftui.symbols.unwind.session import ensure_unwound

SP, BP, BX = 7, 6, 3  # DWARF columns


def build(tmp: Path, name: str) -> tuple[Path, dict[str, int]]:
    """``tests/programs/<name>.S`` linked as a shared object; its symbols by ``nm``."""
    out = tmp / f"{name}.so"
    subprocess.run([require("gcc"), "-shared", "-nostdlib", "-Wl,--eh-frame-hdr", "-o",
                    str(out), str(PROGRAMS / f"{name}.S")], check=True, capture_output=True,
                   timeout=120)
    nm = subprocess.run([require("nm"), str(out)], check=True, capture_output=True, text=True)
    syms = {}
    for line in nm.stdout.splitlines():
        parts = line.split()
        if len(parts) == 3:
            syms[parts[2]] = int(parts[0], 16)
    return out, syms


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return build(tmp_path_factory.mktemp("cfihostile"), "cfihostile")


@pytest.fixture(scope="module")
def garbage(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return build(tmp_path_factory.mktemp("cfigarbage"), "cfigarbage")


def regs(pc: int, sp: int, **more: int) -> dict[object, int]:
    r: dict[object, int] = {"pc": pc, SP: sp, BP: 0x1111, BX: 0x2222}
    r.update({int(k[1:]): v for k, v in more.items()})
    return r


S = 0x7FFD0000  # the sampled stack pointer


def unwound(data: Path) -> tuple[dict[int, list[int]], dict[int, int], list[str]]:
    """Per sample (in order): its user frames, how its walk ended (-1: not unwound); the
    notes."""
    rec = open_recording(data)
    rec.build_index()
    res = Resolver(rec, SymbolOptions())
    ov = ensure_unwound(res)
    assert ov is not None
    samples = np.flatnonzero(rec.columns["type"] == 9)
    frames: dict[int, list[int]] = {}
    ends: dict[int, int] = {}
    for k, row in enumerate(samples.tolist()):
        hit, at, count = ov.spans(np.array([row]))
        if not hit[0]:
            frames[k], ends[k] = [], -1
            continue
        w = ov.buf[int(at[0]):int(at[0]) + 8 * int(count[0])].view("<u8").tolist()
        user = w[w.index(CONTEXT_USER) + 1:]
        frames[k] = user
        ends[k] = int(ov.outcome[int(np.searchsorted(ov.rows, row))])
    notes = list(res.notes)
    rec.close()
    return frames, ends, notes


def head_of(notes: list[str]) -> str:
    return next(n for n in notes if "samples with user stacks" in n)


def test_a_good_chain_and_a_short_copy(hostile: tuple[Path, dict[str, int]],
                                       tmp_path: Path) -> None:
    """good_leaf (CFA rsp+8, return address at CFA-8) called from good_mid (CFA rsp+16
    after its push of rbx): the return address into good_mid at [S], rbx at [S+8], good_mid's
    return address at [S+16].  A copy of 24 bytes ends before that last word (perf's
    access_mem: ``a + 8 < sp + dyn_size``); one of 40 bytes reads it: 0, the x86-64 end
    of nothing: its frame is perf's 0xffffffffffffffff, then no map."""
    so, sym = hostile
    leaf, ret = BASE + sym["good_leaf"] + 1, BASE + sym["good_mid"] + 6  # after push, call
    stack = words(ret, 0x3333, 0, 0, 0)
    data = dwarf_recording(tmp_path / "good.data", str(so), [
        Sampled(regs(leaf, S), stack[:24]),
        Sampled(regs(leaf, S), stack),
        Sampled(regs(BASE + sym["plt_like"], S), stack[:24]),
    ])
    frames, ends, notes = unwound(data)
    assert frames[0] == [leaf, ret - 1]
    assert ends[0] == W.STACK_END
    assert frames[1] == [leaf, ret - 1, 2**64 - 1]
    assert ends[1] == W.NO_MAP
    # a PLT entry's CFA expression at its first byte: rsp + 8, the return address at [S]
    assert frames[2] == [BASE + sym["plt_like"], ret - 1]
    assert ends[2] == W.STACK_END
    head = head_of(notes)
    assert "3 samples with user stacks, 0 unwound to the end" in head, notes
    assert "2 at the end of the copied stack" in head and "1 at an address in no map" in head


def test_perf_gives_the_same_frames(hostile: tuple[Path, dict[str, int]],
                                    tmp_path: Path) -> None:
    """perf 6.1 script on the same hand-made recording: the same user frames (perf prints
    a shared object's addresses relative to its load address)."""
    from perfprograms import perf_script_samples

    so, sym = hostile
    leaf, ret = BASE + sym["good_leaf"] + 1, BASE + sym["good_mid"] + 6
    data = dwarf_recording(tmp_path / "perf.data", str(so), [
        Sampled(regs(leaf, S), words(ret, 0x3333, 0)),
        Sampled(regs(BASE + sym["plt_like"], S), words(ret, 0x3333, 0)),
    ])
    theirs = perf_script_samples(data, callchain=True, extra=("--no-inline",))
    frames, _, _ = unwound(data)
    assert len(theirs) == 2
    for k, p in enumerate(theirs):
        assert [f[0] for f in p.frames] == [f - BASE for f in frames[k]], (p.frames, frames[k])
    assert [(f[1], f[2]) for f in theirs[0].frames] == [("good_leaf", 1), ("good_mid", 5)]


def test_loops_end(hostile: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """cfa_same (CFA = rsp, return address at CFA+0) with [S] its own pc: nothing moves,
    stopped at once; with cfa_other (return address at CFA+8) a two-frame cycle whose CFA
    never moves: stopped at perf's 127 frames."""
    so, sym = hostile
    same, other = BASE + sym["cfa_same"], BASE + sym["cfa_other"]
    data = dwarf_recording(tmp_path / "loop.data", str(so), [
        Sampled(regs(same, S), words(same, 0, 0)),
        Sampled(regs(same, S), words(other + 1, same + 1, 0, 0)),
    ])
    frames, ends, notes = unwound(data)
    assert frames[0] == [same] and ends[0] == W.LOOP
    assert ends[1] == W.MAX_FRAMES and len(frames[1]) == 127
    assert frames[1][:3] == [same, other, same]
    head = head_of(notes)
    assert "1 where the stack did not move (a loop)" in head and "1 at 127 frames" in head


def test_hostile_expressions_stop_their_sample(hostile: tuple[Path, dict[str, int]],
                                               tmp_path: Path) -> None:
    """A CFA expression that jumps to itself forever (DW_OP_skip -3) and one that reads
    64 KiB above the stack pointer: each sample keeps its first frame and is counted; the
    good sample after them is unwound as if they were not there."""
    so, sym = hostile
    leaf, ret = BASE + sym["good_leaf"] + 1, BASE + sym["good_mid"] + 6
    data = dwarf_recording(tmp_path / "expr.data", str(so), [
        Sampled(regs(BASE + sym["skip_loop"], S), words(ret, 0, 0)),
        Sampled(regs(BASE + sym["deref_far"], S), words(ret, 0, 0)),
        Sampled(regs(leaf, S), words(ret, 0, 0)),
    ])
    frames, ends, notes = unwound(data)
    assert frames[0] == [BASE + sym["skip_loop"]] and ends[0] == W.BAD_CFI
    assert frames[1] == [BASE + sym["deref_far"]] and ends[1] == W.BAD_CFI
    assert frames[2] == [leaf, ret - 1] and ends[2] == W.STACK_END
    assert "2 at CFI that cannot be used" in head_of(notes)
    assert f"DWARF unwinding: 2 samples stopped in {so}: CFI that cannot be used (a CFA or " \
        "register rule that cannot be evaluated)" in notes, notes


def test_an_undecodable_fde(garbage: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """CFA opcodes that do not exist (0x3f, 0x3e): that FDE is unusable and counted; its
    neighbour, found by walking .eh_frame (no .eh_frame_hdr table), still unwinds."""
    so, sym = garbage
    fine = BASE + sym["fine"]
    data = dwarf_recording(tmp_path / "garbage.data", str(so), [
        Sampled(regs(BASE + sym["garbage"], S), words(fine + 1, 0, 0)),
        Sampled(regs(fine, S), words(BASE + sym["garbage"] + 1, 0, 0)),
    ])
    frames, ends, notes = unwound(data)
    assert frames[0] == [BASE + sym["garbage"]] and ends[0] == W.BAD_CFI
    # fine's return address is garbage+1: looked up at garbage (pc - 1), the bad FDE again
    assert frames[1] == [fine, BASE + sym["garbage"]] and ends[1] == W.BAD_CFI
    assert any("2 samples stopped in" in n and "(1 FDEs undecodable)" in n for n in notes), \
        notes


def test_stack_fields_that_lie(hostile: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """A stack size past the end of its record (16 bytes of data said to be 8192, or
    2^63), a dyn_size larger than the copy, a copy of size 0, dyn_size 0: none unwound,
    each counted by why; a good sample among them unwound."""
    so, sym = hostile
    leaf, ret = BASE + sym["good_leaf"] + 1, BASE + sym["good_mid"] + 6
    st = words(ret, 0, 0)
    data = dwarf_recording(tmp_path / "lies.data", str(so), [
        Sampled(regs(leaf, S), st, size=8192),
        Sampled(regs(leaf, S), st, size=2**63),
        Sampled(regs(leaf, S), st, dyn_size=4096),
        Sampled(regs(leaf, S), b"", size=0),
        Sampled(regs(leaf, S), st, dyn_size=0),
        Sampled(regs(leaf, S), st),
    ])
    frames, ends, notes = unwound(data)
    assert [ends[k] for k in range(5)] == [-1] * 5
    assert frames[5] == [leaf, ret - 1]
    head = head_of(notes)
    assert "2 not unwound (user registers or stack past the end of the record)" in head, head
    assert "1 not unwound (user stack dyn_size larger than the copy)" in head, head
    assert "2 not unwound (no user stack copied)" in head, head


def test_odd_register_masks(hostile: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """A mask without the stack pointer, one with only bits perf has no register for, no
    registers (abi 0), a 32-bit abi and an abi that is neither: none unwound, counted."""
    so, sym = hostile
    leaf, ret = BASE + sym["good_leaf"] + 1, BASE + sym["good_mid"] + 6
    st = words(ret, 0, 0)
    cases = [(X86_MASK & ~(1 << 7), 2), ((1 << 63) | (1 << 40) | (1 << 9), 2),
             (X86_MASK, 0), (X86_MASK, 1), (X86_MASK, 7)]
    got = []
    for k, (mask, abi) in enumerate(cases):
        data = dwarf_recording(tmp_path / f"mask{k}.data", str(so),
                               [Sampled(regs(leaf, S), st, abi=abi)], mask=mask)
        frames, ends, notes = unwound(data)
        assert frames[0] == [] and ends[0] == -1, (mask, abi, ends)  # no frame at all
        got.append(head_of(notes))
    assert "1 without a sampled program counter and stack pointer" in got[0]
    assert "1 without a sampled program counter and stack pointer" in got[1]
    assert "1 not unwound (no user registers (abi 0))" in got[2]
    assert "1 not unwound (32-bit user registers)" in got[3]
    assert "1 not unwound (user registers of abi 7)" in got[4]


def test_the_cli_says_it_once(hostile: tuple[Path, dict[str, int]], tmp_path: Path) -> None:
    """``perftui report`` on hostile samples: exit 0, the report, and the notes once on
    stderr (no traceback)."""
    so, sym = hostile
    ret = BASE + sym["good_mid"] + 6
    data = dwarf_recording(tmp_path / "cli.data", str(so), [
        Sampled(regs(BASE + sym["skip_loop"], S), words(ret, 0, 0)),
        Sampled(regs(BASE + sym["cfa_same"], S), words(BASE + sym["cfa_same"], 0, 0)),
        Sampled(regs(BASE + sym["good_leaf"], S), words(ret, 0, 0), size=1 << 20),
    ])
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        assert perftui_main(["report", str(data), "--children", "--no-cache"]) == 0
    lines = err.getvalue().splitlines()
    heads = [ln for ln in lines if "samples with user stacks" in ln]
    assert len(heads) == 1, lines
    assert "3 samples with user stacks" in heads[0]
    assert "Traceback" not in err.getvalue()
    assert "skip_loop" in out.getvalue() and "cfa_same" in out.getvalue()
