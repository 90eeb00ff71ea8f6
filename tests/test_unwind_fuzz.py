"""Fuzzing the unwinder: random stacks, registers and damaged CFI never crash or hang it,
and it never reads a stack word past a sample's ``dyn_size``.

The ELF file is tests/programs/cfihostile.S (test_unwind_hostile.build); hypothesis draws
stack words (among them the functions' own addresses, so walks go deep), registers, the
copy's size fields, and bytes written over the file's ``.eh_frame`` and ``.eh_frame_hdr``.
The bytes of the copy past ``dyn_size`` hold a canary: an address inside ``good_mid``'s
call that no drawn word or pc is near; a frame at it (or at it - 1) would be a read outside
the valid copy.  (Frames repeating one pc up to the limit are no failure: CFI damaged so
that the return address column has no rule keeps the sampled pc, libunwind's "same value",
while the CFA moves up each step.)
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from dwarfrecords import BASE, Sampled, dwarf_recording, words
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from test_unwind_hostile import S, build, regs, unwound

from perftui.symbols.unwind import walk as W

_SETTINGS = settings(max_examples=60, deadline=None, derandomize=True, database=None,
                     suppress_health_check=[HealthCheck.too_slow,
                                            HealthCheck.function_scoped_fixture])


@pytest.fixture(scope="module")
def hostile(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, int]]:
    return build(tmp_path_factory.mktemp("cfifuzz"), "cfihostile")


def _targets(sym: dict[str, int]) -> list[int]:
    fns = ["good_mid", "good_leaf", "skip_loop", "cfa_same", "cfa_other", "deref_far",
           "plt_like"]
    out = [BASE + sym[f] + d for f in fns for d in (0, 1, 2)]
    return [a for a in out if abs(a - _canary(sym)) > 2]


def _canary(sym: dict[str, int]) -> int:
    return BASE + sym["good_mid"] + 3  # inside the call: no target is near it


def _check(frames: dict[int, list[int]], ends: dict[int, int], canary: int) -> None:
    for k, f in frames.items():
        assert len(f) <= 127
        assert canary - 1 not in f[1:] and canary not in f[1:], (k, f)
        assert ends[k] == -1 or 0 <= ends[k] <= W.REGS


@pytest.mark.slow
@_SETTINGS
@given(data=st.data())
def test_random_stacks(hostile: tuple[Path, dict[str, int]], tmp_path: Path,
                       data: st.DataObject) -> None:
    so, sym = hostile
    targets = _targets(sym)
    word = st.one_of(st.sampled_from(targets), st.sampled_from([0, S, S + 8, S + 16, 2**64 - 1]),
                     st.integers(0, 2**64 - 1))
    samples = []
    for _ in range(data.draw(st.integers(1, 4))):
        valid = data.draw(st.lists(word, max_size=12))
        pad = data.draw(st.integers(0, 4))
        stack = words(*valid, *([_canary(sym)] * pad))
        dyn = data.draw(st.sampled_from([None, 8 * len(valid)]))
        if dyn is None:
            dyn = 8 * len(valid) if pad else None
        sp = data.draw(st.sampled_from([S, S + 8, 0, 2**64 - 8]))
        pc = data.draw(st.one_of(st.sampled_from(targets), st.integers(0, 2**64 - 1)))
        bp = data.draw(st.sampled_from([0, sp, sp + 8, sp + 16])) & (2**64 - 1)
        samples.append(Sampled(regs(pc, sp, r6=bp), stack, dyn_size=dyn))
    rec = dwarf_recording(tmp_path / "case.data", str(so), samples)
    frames, ends, _ = unwound(rec)
    _check(frames, ends, _canary(sym))


@pytest.mark.slow
@_SETTINGS
@given(edits=st.lists(st.tuples(st.integers(0, 1 << 12), st.integers(0, 255)), min_size=1,
                      max_size=12))
def test_damaged_cfi(hostile: tuple[Path, dict[str, int]], tmp_path: Path,
                     edits: list[tuple[int, int]]) -> None:
    """Bytes of .eh_frame_hdr and .eh_frame (0x2000 on: readelf -S) overwritten; a sample in
    every function, each with a good stack."""
    so, sym = hostile
    bad = tmp_path / "cfihostile.so"
    shutil.copy(so, bad)
    buf = bytearray(bad.read_bytes())
    lo, hi = 0x2000, min(len(buf), 0x2000 + 0x140)
    for at, v in edits:
        buf[lo + at % (hi - lo)] = v
    bad.write_bytes(bytes(buf))
    ret = BASE + sym["good_mid"] + 6
    stack = words(ret, 0x3333, 0, _canary(sym))
    samples = [Sampled(regs(a, S), stack, dyn_size=24) for a in _targets(sym)]
    rec = dwarf_recording(tmp_path / "case.data", str(bad), samples)
    frames, ends, notes = unwound(rec)
    _check(frames, ends, _canary(sym))
    assert any("samples with user stacks" in n for n in notes)


def test_the_fuzz_seed_is_what_its_writer_writes(tmp_path: Path) -> None:
    """tests/data/unwind/handmade-dwarf.data (the record fuzzer's DWARF seed) is
    dwarfrecords.fuzz_seed's output, and every consumer reads it (fuzzing.run_all)."""
    from dwarfrecords import fuzz_seed

    from fuzzing import HERE, run_all

    seed = HERE / "data" / "unwind" / "handmade-dwarf.data"
    assert fuzz_seed(tmp_path / "again.data").read_bytes() == seed.read_bytes()
    run_all(str(seed))
