"""Annotate core on real kernel modules: perftui's disassembly, relocation names, source
lines and per-instruction counts against binutils (objdump -d/-dr/--adjust-vma, addr2line,
nm) run on the same ``.ko`` files."""

from __future__ import annotations

import subprocess
from pathlib import Path

import numpy as np
import pytest
from testapi import functions

from objdump_oracle import compare_function, nm_values, parse, run_objdump, tool
from perftui.analysis.annotate import annotate, count_samples, source_lines
from perftui.present.annotate import annotation_dict
from perftui.symbols.code.disasm import disassemble_function, disassemble_symbol
from perftui.symbols.code.elfcode import open_elf
from perftui.symbols.code.relocs import section_relocations

MODULES = Path(__file__).parents[1] / "perftui" / "demo" / "modules"
KOS = sorted(str(p) for p in MODULES.glob("*.ko"))
CODE_SECTIONS = {".text", ".text.unlikely", ".noinstr.text", ".init.text", ".exit.text"}
LOAD = 0xFFFFFFFFC0A03000  # a section load address, as a KMOD_SEC_MAP record gives one


def _functions(path: str):
    """objdump's functions of a module that the symbol table sizes (FUNC symbols)."""
    img = open_elf(path)
    sized = {(img.sections[f.section].name, f.value): f for f in functions(img) if f.size}
    for of in parse(run_objdump(path, "-dr")):
        sym = sized.get((of.section, of.addr))
        if sym is not None:
            yield img, sym, of


def test_the_fixtures_cover_every_code_section() -> None:
    seen = {of.section for path in KOS for _, _, of in _functions(path)}
    assert seen >= CODE_SECTIONS


@pytest.mark.parametrize("path", KOS, ids=lambda p: Path(p).name)
def test_instructions_equal_objdump(path: str) -> None:
    values = nm_values(path)
    n = 0
    for img, sym, of in _functions(path):
        n += compare_function(disassemble_symbol(img, sym), of, values)
    assert n > 100


@pytest.mark.parametrize("path", KOS, ids=lambda p: Path(p).name)
def test_relocation_names_equal_objdump_dr(path: str) -> None:
    """Every relocation under every instruction: offset, type and ``sym+addend`` text."""
    checked = 0
    for img, sym, of in _functions(path):
        d = disassemble_symbol(img, sym)
        assert not d.warnings
        for got, want in zip(d.instructions, of.insns, strict=False):
            mine = [(r.offset, r.type_name, r.text) for r in got.relocations]
            assert mine == want.relocs, f"{path} {of.name} at {want.addr:#x}"
            checked += len(mine)
    assert checked > 20


def test_calls_through_relocations_are_named() -> None:
    """``e8 00 00 00 00`` + ``R_X86_64_PLT32 sym-0x4`` reads ``call sym`` (sym: objdump -dr)."""
    named = 0
    for path in KOS:
        for img, sym, of in _functions(path):
            d = disassemble_symbol(img, sym)
            for got, want in zip(d.instructions, of.insns, strict=False):
                plt = [r for r in want.relocs if r[1] == "R_X86_64_PLT32"]
                if got.mnemonic in ("call", "jmp") and plt and plt[0][2].endswith("-0x4"):
                    name = plt[0][2][: -len("-0x4")]
                    assert got.asm == f"{got.mnemonic:<6} {name}", got.asm
                    assert got.target_name == name
                    named += 1
    assert named > 20  # __fentry__, __x86_return_thunk, printk-style externals, locals


def test_rip_relative_data_is_named_by_its_symbol() -> None:
    """``mov 0x0(%rip),%r13d`` + ``R_X86_64_PC32 .bss`` names the .bss object it reads.

    Oracle: nm gives the object's offset in .bss; the datum is ``.bss + addend + (end of
    instruction - relocation offset)``, which must fall inside it.
    """
    path = str(MODULES / "demo_nic.ko")
    img = open_elf(path)
    bss = img.section(".bss")
    objects = img.section_symbols(bss.index)
    out = subprocess.run([tool("nm"), "-S", path], capture_output=True, text=True, check=True)
    sizes = {p[3]: (int(p[0], 16), int(p[1], 16)) for p in
             (ln.split() for ln in out.stdout.splitlines()) if len(p) == 4 and p[2] in "bB"}
    checked = 0
    for _, sym, of in _functions(path):
        d = disassemble_symbol(img, sym)
        for got, want in zip(d.instructions, of.insns, strict=False):
            pc32 = [r for r in want.relocs if r[1] == "R_X86_64_PC32" and r[2].startswith(".bss")]
            if not pc32:
                continue
            off, _, text = pc32[0]
            addend = int(text[4:], 16) if len(text) > 4 else 0
            datum = addend + (want.addr + len(want.raw) - off)
            name, inner = objects.resolve(datum) or ("?", 0)
            start, size = sizes[name]
            assert start <= datum < start + size
            assert got.asm.endswith(f"# {name}" + (f"+{inner:#x}" if inner else "")), got.asm
            checked += 1
    assert checked > 5


@pytest.mark.parametrize("path", KOS, ids=lambda p: Path(p).name)
def test_addresses_at_a_load_address_equal_objdump_adjust_vma(path: str) -> None:
    """A section shown at its load address: objdump --adjust-vma=LOAD -j SECTION."""
    values = nm_values(path)
    img = open_elf(path)
    compared = 0
    for section in sorted(CODE_SECTIONS & {s.name for s in img.sections}):
        text = run_objdump(path, "-dr", f"--adjust-vma={LOAD:#x}", "-j", section)
        for of in parse(text):
            sym = next((f for f in functions(img, of.name.split("+")[0]) if f.size), None)
            if sym is None or img.sections[sym.section].name != section:
                continue
            d = disassemble_symbol(img, sym, section_bases={section: LOAD})
            assert d.start == of.addr
            shifted = {k: {v + LOAD for v in s} for k, s in values.items()}
            compared += compare_function(d, of, shifted)
    assert compared > 100


def test_target_in_another_section_gets_its_load_address() -> None:
    """``jmp demo_nic_rx_one.cold`` (.text -> .text.unlikely): with both sections placed
    the target is the .cold function's load address (its nm value + the base)."""
    path = str(MODULES / "demo_nic.ko")
    img = open_elf(path)
    values = nm_values(path)
    bases = {".text": LOAD, ".text.unlikely": LOAD + 0x10000}
    sym = functions(img, "demo_nic_rx_one")[0]
    d = disassemble_symbol(img, sym, section_bases=bases)
    cold = [i for i in d.instructions if i.target_name and ".cold" in i.target_name]
    assert cold
    for i in cold:
        name, _, off = i.target_name.partition("+")
        at = {bases[".text.unlikely"] + v + (int(off, 16) if off else 0) for v in values[name]}
        assert i.target in at


@pytest.mark.parametrize("path", KOS, ids=lambda p: Path(p).name)
def test_source_lines_equal_addr2line(path: str) -> None:
    img = open_elf(path)
    checked = 0
    for _, sym, of in _functions(path):
        d = disassemble_symbol(img, sym)
        lines = source_lines(img, d)
        assert lines is not None
        out = subprocess.run(
            [tool("addr2line"), "-e", path, "-j", of.section,
             *[f"{i.addr:x}" for i in d.instructions]],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        for got, want in zip(lines, out, strict=True):
            want = want.split(" (discriminator")[0]
            assert (str(got) if got else "??:0") == want, f"{of.name}"
            checked += 1
    assert checked > 100


def _containing(of, addr: int) -> int:
    """Index of objdump's instruction that holds byte ``addr`` (objdump's boundaries)."""
    starts = [i.addr for i in of.insns]
    k = max(j for j, s in enumerate(starts) if s <= addr)
    assert addr < of.insns[k].addr + len(of.insns[k].raw)
    return k


@pytest.mark.parametrize("path", KOS, ids=lambda p: Path(p).name)
def test_planted_samples_count_for_the_instruction_around_them(path: str) -> None:
    """Samples on the first, middle and last byte of every function (shown at a load
    address), plus one just before and one just past it: exact per-instruction counts
    against objdump's instruction boundaries."""
    for img, sym, of in _functions(path):
        section = of.section
        d = disassemble_symbol(img, sym, section_bases={section: LOAD})
        start = LOAD + sym.value
        offsets = [0, sym.size // 2, sym.size - 1, sym.size // 2]  # the middle twice
        ips = np.array([start + o for o in offsets] + [start - 1, start + sym.size], np.uint64)
        periods = np.array([10, 20, 30, 40, 1000, 1000], np.uint64)
        ann = annotate(d, ips, periods)
        want_hits = [0] * len(d.instructions)
        want_period = [0] * len(d.instructions)
        for o, p in zip(offsets, periods[:4].tolist(), strict=True):
            k = _containing(of, sym.value + o)
            want_hits[k] += 1
            want_period[k] += p
        assert ann.counts.hits.tolist() == want_hits, of.name
        assert ann.counts.period.tolist() == want_period, of.name
        assert ann.samples == 4
        assert ann.hottest == int(np.argmax(want_period))
        assert abs(float(ann.percent.sum()) - 100.0) < 1e-9


def test_hot_navigation_and_json_shape() -> None:
    path = str(MODULES / "demo_crc.ko")
    img = open_elf(path)
    sym = max(functions(img), key=lambda f: f.size)
    d = disassemble_symbol(img, sym, section_bases={".text": LOAD})
    n = len(d.instructions)
    ips = np.array([d.instructions[k].addr for k in (1, 1, 1, n - 2, 3)], np.uint64)
    ann = annotate(d, ips, percent_type="local-hits")
    assert ann.hot().tolist() == [1, 3, n - 2]
    h = ann.hot()  # the instructions with samples, hottest first (ties in address order)
    assert ann.hottest == 1 and h[np.argsort(-ann.percent[h], kind="stable")].tolist() == [
        1, 3, n - 2]
    assert ann.next_hot(1) == 3 and ann.next_hot(n - 2) == 1 and ann.next_hot(n - 2, False) is None
    assert ann.prev_hot(3) == 1 and ann.prev_hot(1) == n - 2 and ann.prev_hot(0, False) is None
    doc = annotation_dict(ann, "[demo_crc]")
    assert list(doc) == ["dso", "sym", "section", "start", "size", "samples", "percent_type",
                         "is_code", "note", "warnings", "instructions"]
    assert doc["start"] == f"{LOAD + sym.value:#x}" and doc["samples"] == 5
    row = doc["instructions"][1]
    assert list(row) == ["addr", "offset", "bytes", "asm", "target", "samples", "percent",
                         "source"]
    assert row["samples"] == 3 and row["percent"] == 60.0
    assert row["source"] is None  # source= was not given
    assert doc["instructions"][0]["bytes"] == d.instructions[0].raw.hex(" ")


def test_no_samples_still_annotates() -> None:
    img = open_elf(str(MODULES / "demo_nic.ko"))
    sym = functions(img, "demo_nic_irq_entry")[0]
    d = disassemble_symbol(img, sym)
    ann = annotate(d, np.zeros(0, np.uint64), source=source_lines(img, d))
    assert ann.samples == 0 and ann.hottest is None and ann.next_hot(0) is None
    assert len(d.instructions) > 5 and not ann.percent.any()
    doc = annotation_dict(ann, "[demo_nic]")
    assert doc["section"] == ".noinstr.text"
    assert all(r["source"] and "demo_nic.c:" in r["source"] for r in doc["instructions"])


@pytest.mark.parametrize("section", [".data", ".rodata", ".bss"])
def test_data_sections_say_they_are_not_code(section: str) -> None:
    img = open_elf(str(MODULES / "demo_nic.ko"))
    sec = img.section(section)
    table = img.section_symbols(sec.index)
    assert len(table)
    size = int(table.sizes[0]) or 8
    d = disassemble_function(img, section=section, offset=int(table.starts[0]), size=size,
                             name=table.names[0])
    assert not d.is_code and d.instructions == []
    assert d.note is not None and "not code" in d.note and section in d.note
    ann = annotate(d, np.array([1, 2, 3], np.uint64))
    assert ann.samples == 0
    assert annotation_dict(ann, "[demo_nic]")["is_code"] is False


def test_compressed_module_reads_the_same() -> None:
    plain = open_elf(str(MODULES / "demo_nic.ko"))
    for suffix in (".xz", ".gz", ".zst"):
        packed = open_elf(str(MODULES / f"demo_nic.ko{suffix}"))
        assert packed.data == plain.data
        sym = functions(packed, "demo_nic_rx_poll")[0]
        a = disassemble_symbol(packed, sym)
        b = disassemble_symbol(plain, functions(plain, "demo_nic_rx_poll")[0])
        assert [i.asm for i in a.instructions] == [i.asm for i in b.instructions]


def test_relocation_table_is_sorted_and_vectorised() -> None:
    img = open_elf(str(MODULES / "demo_nic.ko"))
    table = section_relocations(img, ".text")
    out = run_objdump(str(MODULES / "demo_nic.ko"), "-r", "-j", ".text")
    rows = [ln.split() for ln in out.splitlines() if ln[:1] in "0123456789abcdef" and " R_" in ln]
    assert len(table) == len(rows)
    want = sorted(int(r[0], 16) for r in rows)
    assert table.offsets.tolist() == want
    by_offset = {int(r[0], 16): r[1] for r in rows}
    # spans of every 5-byte window of the section at once; each window's rows are the
    # relocations objdump lists in it, found one window at a time
    starts = np.arange(0, want[-1] + 16, dtype=np.uint64)
    lo, hi = table.spans(starts, starts + np.uint64(5))
    for s, a, b in zip(starts.tolist(), lo.tolist(), hi.tolist(), strict=True):
        assert table.offsets[a:b].tolist() == [o for o in want if s <= o < s + 5], s
        assert [table.relocation(i).type_name for i in range(a, b)] == \
            [by_offset[o] for o in want if s <= o < s + 5]
    assert (hi - lo)[:3].tolist() == [1, 1, 0]  # the __fentry__ call's field is at offset 1


def test_count_samples_edge_cases() -> None:
    starts = np.array([0x100, 0x104, 0x105], np.uint64)
    c = count_samples(starts, 0x10A, np.array([0xFF, 0x100, 0x103, 0x104, 0x109, 0x10A]))
    assert c.hits.tolist() == [2, 1, 1] and c.total_hits == 4
    big = np.array([2**53 + 1, 2**53 + 1], np.uint64)  # float64 sums would lose the +2
    c = count_samples(starts, 0x10A, np.array([0x100, 0x101]), big)
    assert int(c.period[0]) == c.total_period == 2**54 + 2
    with pytest.raises(ValueError):
        count_samples(starts, 0x10A, np.array([1, 2]), np.array([1]))
