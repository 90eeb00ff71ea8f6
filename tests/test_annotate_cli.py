"""``perftui annotate`` end to end.

* A fresh ``perf record`` of tests/programs/hotprog: per-instruction sample counts of its
  hot functions and of libhotlib.so's ``lib_spin`` equal ``perf annotate --stdio -n``
  (same addresses, objdump's), perf's percentages (``local-period``, its default, and
  ``--percent-type local-hits``) within 0.01, and the text's instruction lines carry
  perf's columns.
* Recordings written here with the project's writer, placing the demo ``.ko`` fixtures'
  sections at load addresses (``.text`` as the module MMAP, as an RFC perf writes it, or
  as a KMOD_SEC_MAP record too) with samples planted on the first, middle and last byte of
  every function of ``.text``, ``.text.unlikely`` and ``.noinstr.text``: the JSON's
  addresses and per-instruction counts equal what an independent ``objdump -d
  --adjust-vma=LOAD -j SECTION`` gives, and calls patched by relocations are named as
  ``objdump -dr`` names them.
* Exit codes: 0, 1 (unreadable recording, kernel without code bytes), 2 (usage, unknown
  function).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import Built, require
from testapi import functions

from builders import plant_module_samples
from objdump_oracle import parse, run_objdump
from perftui.cli import main as perftui_main
from perftui.perfdata import EventAttr, Feature, Sample
from perftui.perfdata.constants import Misc
from perftui.perfdata.writer import Writer
from perftui.symbols.code.elfcode import open_elf

MODULES = Path(__file__).parents[1] / "perftui" / "demo" / "modules"
SECTIONS = (".text", ".text.unlikely", ".noinstr.text")


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    capsys.readouterr()
    try:
        code = perftui_main(["annotate", *args])
    except SystemExit as e:  # argparse's usage errors
        code = int(e.code or 0)
    out, err = capsys.readouterr()
    return code, out, err


# ------------------------------------------------------------------ perf annotate (user code)

_PERF_LINE = re.compile(r"^\s*([0-9.]+)\s+:\s+([0-9a-f]+):\s+(\S.*)$")
_PERF_TOTAL = re.compile(r"\((\d+) samples, percent: ([a-z ]+)\)")


def perf_annotate(data: Path, sym: str, dso: str, *args: str
                  ) -> tuple[dict[int, float], int, str]:
    """perf annotate --stdio's per-instruction column by address, its sample total, and
    the whole text."""
    p = subprocess.run(
        [require("perf"), "annotate", "-i", str(data), "--stdio", "-s", sym, "-d", dso, *args],
        capture_output=True, text=True, timeout=300, cwd=data.parent,
        env={**os.environ, "LC_ALL": "C"})
    assert p.returncode == 0, p.stderr[-500:]
    total = _PERF_TOTAL.search(p.stdout)
    assert total, p.stdout[:500]
    col = {int(m.group(2), 16): float(m.group(1)) for ln in p.stdout.splitlines()
           if (m := _PERF_LINE.match(ln))}
    return col, int(total.group(1)), p.stdout


@pytest.fixture(scope="module")
def hotprog_data(built: Built, recorded) -> Path:
    return recorded("hotprog", built.hotprog, "3")


@pytest.mark.perf
@pytest.mark.slow
@pytest.mark.parametrize("sym,dso", [("hot_alpha", "hotprog"), ("hot_beta", "hotprog"),
                                     ("spin", "hotprog"), ("plt_loop", "hotprog"),
                                     ("lib_spin", "libhotlib.so"),
                                     ("lib_tiny", "libhotlib.so")])
def test_counts_and_percentages_equal_perf_annotate(
        capsys: pytest.CaptureFixture[str], hotprog_data: Path, sym: str, dso: str) -> None:
    data = hotprog_data
    code, out, err = run(capsys, str(data), sym, "--dso", dso, "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["sym"] == sym and doc["dso"] == dso and doc["is_code"] is True
    rows = doc["instructions"]
    addrs = [int(r["addr"], 16) for r in rows]

    counts, total, _ = perf_annotate(data, sym, dso, "-n")
    assert total == doc["samples"]
    assert total >= (20 if sym in ("hot_alpha", "hot_beta", "spin", "lib_spin") else 1)
    assert sorted(counts) == addrs  # the same instructions, at objdump's addresses
    assert [int(counts[a]) for a in addrs] == [r["samples"] for r in rows]

    pct, _, _ = perf_annotate(data, sym, dso)
    for a, r in zip(addrs, rows, strict=True):
        assert abs(pct[a] - r["percent"]) <= 0.01, f"{sym} at {a:#x}"
    code, out, _ = run(capsys, str(data), sym, "--dso", dso, "--json",
                       "--percent-type", "local-hits")
    hits = json.loads(out)
    assert hits["percent_type"] == "local-hits"
    want, _, _ = perf_annotate(data, sym, dso, "--percent-type", "local-hits")
    for a, r in zip(addrs, hits["instructions"], strict=True):
        assert abs(want[a] - r["percent"]) <= 0.01, f"{sym} at {a:#x}"


@pytest.mark.perf
@pytest.mark.slow
def test_text_has_perfs_shape(capsys: pytest.CaptureFixture[str], hotprog_data: Path) -> None:
    """The title line, the dashes under it and each instruction's percent and address
    columns as perf prints them (the instruction text is capstone's, not objdump's)."""
    _, _, theirs = perf_annotate(hotprog_data, "hot_alpha", "hotprog")
    code, mine, err = run(capsys, str(hotprog_data), "hot_alpha", "--dso", "hotprog")
    assert code == 0, err
    assert mine.splitlines()[:2] == theirs.splitlines()[:2]
    want = [ln.split(":   ")[:2] for ln in theirs.splitlines() if _PERF_LINE.match(ln)]
    got = [ln.split(":   ")[:2] for ln in mine.splitlines() if _PERF_LINE.match(ln)]
    assert got == want
    # source lines: perf's "   : LINE  text" rows for the lines the function's code has
    src = [ln for ln in mine.splitlines() if ln.startswith("         : ")]
    assert any("SPIN_LOOP(3 * units * UNIT);" in ln for ln in src)
    code, bare, _ = run(capsys, str(hotprog_data), "hot_alpha", "--no-source", "-n")
    assert not [ln for ln in bare.splitlines() if ln.startswith("         : ")]
    assert bare.startswith(" Samples |\t")


@pytest.mark.perf
def test_function_without_samples_annotates(capsys: pytest.CaptureFixture[str],
                                            built: Built, hotprog_data: Path) -> None:
    """``main`` has no samples of its own: it annotates, every count 0, at objdump's
    addresses."""
    code, out, err = run(capsys, str(hotprog_data), "main", "--json", "--dso", "hotprog")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["samples"] == 0 and all(r["samples"] == 0 for r in doc["instructions"])
    funcs = {f.name: f for f in parse(run_objdump(str(built.hotprog), "-d"))}
    assert [int(r["addr"], 16) for r in doc["instructions"]] == \
        [i.addr for i in funcs["main"].insns]


@pytest.mark.perf
@pytest.mark.parametrize("sym", ["main", "plt_loop", "hot_gamma"])
def test_branch_targets_are_named_as_objdump_names_them(
        capsys: pytest.CaptureFixture[str], built: Built, hotprog_data: Path,
        sym: str) -> None:
    """Every direct call and jump: the same target address and name as ``objdump -d``
    (``call 1040 <lib_tiny@plt>``: the PLT stubs too, named as perf names them; objdump's
    ``@GLIBC_2.2.5``-style version suffixes aside)."""
    code, out, err = run(capsys, str(hotprog_data), sym, "--dso", "hotprog", "--json")
    assert code == 0, err
    rows = json.loads(out)["instructions"]
    theirs = {f.name: f for f in parse(run_objdump(str(built.hotprog), "-d"))}[sym].insns
    assert [int(r["addr"], 16) for r in rows] == [i.addr for i in theirs]
    named = 0
    for r, i in zip(rows, theirs, strict=True):
        if i.target is not None:
            addr, name = i.target
            assert r["asm"].split(None, 1)[1].startswith(f"{addr:x} <"), (r, i)
            assert r["target"] == re.sub(r"@@?GLIBC[^+]*", "", name), (r, i)
            named += 1
    assert named >= (3 if sym == "main" else 1)


@pytest.mark.perf
def test_unknown_function_and_several_matches(capsys: pytest.CaptureFixture[str],
                                              hotprog_data: Path) -> None:
    code, out, err = run(capsys, str(hotprog_data), "no_such_function")
    assert code == 2 and out == "" and "no function 'no_such_function'" in err
    code, _, err = run(capsys, str(hotprog_data), "hot_alpha", "--dso", "libhotlib.so")
    assert code == 2 and "in libhotlib.so" in err


def _perf_sections(text: str) -> dict[str, dict[int, int]]:
    """perf annotate -n's per-event annotations: event -> address -> samples."""
    out: dict[str, dict[int, int]] = {}
    cur: dict[int, int] = {}
    for ln in text.splitlines():
        m = re.search(r"Disassembly of \S+ for (\S+) \(", ln)
        if m:
            cur = out.setdefault(m.group(1), {})
        elif (m := _PERF_LINE.match(ln)):
            cur[int(m.group(2), 16)] = int(float(m.group(1)))
    return out


@pytest.mark.perf
@pytest.mark.slow
def test_each_event_apart(capsys: pytest.CaptureFixture[str], built: Built,
                          recorded) -> None:
    """Two events: perf annotates the function once per event; --event picks one, the
    counts equal perf's for that event (and without --event the other one is named)."""
    data = recorded("two_events", built.hotprog, "2", events="cpu-clock,task-clock")
    _, _, text = perf_annotate(data, "hot_alpha", "hotprog", "-n")
    theirs = _perf_sections(text)
    assert set(theirs) == {"cpu-clock", "task-clock"}
    for event, want in theirs.items():
        code, out, err = run(capsys, str(data), "-s", "hot_alpha", "--event", event, "--json")
        assert code == 0, err
        doc = json.loads(out)
        assert doc["event"] == event
        assert {int(r["addr"], 16): r["samples"] for r in doc["instructions"]} == want
    code, _, err = run(capsys, str(data), "hot_alpha", "--json")
    assert code == 0 and "also" in err and "--event" in err


# ------------------------------------------------------------------- modules (planted samples)

def _objdump_insns(ko: Path, section: str, load: int) -> dict[str, list[tuple[int, bytes]]]:
    """objdump's instructions of every function of a section placed at ``load``."""
    text = run_objdump(str(ko), "-d", f"--adjust-vma={load:#x}", "-j", section)
    return {f.name: [(i.addr, i.raw) for i in f.insns] for f in parse(text)}


_UNPACK = {".xz": "xz", ".gz": "gzip", ".zst": "zstd"}


def _modules_dir(tmp_path: Path, packed: str) -> Path:
    """The demo modules as they are, or only their ``.ko{packed}`` copies in a directory of
    their own, each checked to unpack (with xz, gzip or zstd, not perftui) to the plain
    ``.ko`` that objdump reads."""
    if not packed:
        return MODULES
    d = tmp_path / "packed"
    d.mkdir()
    for ko in MODULES.glob("*.ko"):
        src = MODULES / f"{ko.name}{packed}"
        unpacked = subprocess.run([require(_UNPACK[packed]), "-dc", str(src)],
                                  capture_output=True, check=True).stdout
        assert unpacked == ko.read_bytes(), src
        (d / src.name).write_bytes(src.read_bytes())
    return d


@pytest.mark.slow
@pytest.mark.parametrize("text_in_kmod,packed", [(False, ""), (True, ""), (False, ".xz"),
                                                 (False, ".gz"), (False, ".zst")],
                         ids=["text-mmap", "text-kmod", "ko.xz", "ko.gz", "ko.zst"])
def test_module_functions_count_planted_samples(capsys: pytest.CaptureFixture[str],
                                                tmp_path: Path, text_in_kmod: bool,
                                                packed: str) -> None:
    """... and from compressed modules alone (``.ko.xz``, ``.ko.gz``, ``.ko.zst`` in the
    --modules-dir): the same addresses, bytes and counts."""
    data = tmp_path / "planted.data"
    planted = plant_module_samples(data, text_in_kmod)
    modules = _modules_dir(tmp_path, packed)
    checked = set()
    for p in planted:
        by_section = {s: _objdump_insns(MODULES / f"{p.module}.ko", s, p.loads[s])
                      for s in SECTIONS if s in p.loads}
        names = [fn[1] for fn in p.functions]
        for sec, name, off, size in p.functions:
            if names.count(name) > 1:
                continue  # a name twice in one module: --dso cannot tell them apart
            code, out, err = run(capsys, str(data), name, "--dso", p.module, "--json",
                                 "--modules-dir", str(modules))
            assert code == 0, err
            doc = json.loads(out)
            start = p.loads[sec] + off
            assert doc["section"] == sec and int(doc["start"], 16) == start, name
            theirs = [(a, raw) for a, raw in by_section[sec][name] if a < start + size]
            rows = doc["instructions"]
            assert [(int(r["addr"], 16), bytes.fromhex(r["bytes"])) for r in rows] == theirs
            want = [0] * len(theirs)
            for o in (0, size // 2, size - 1):  # the instruction holding each planted byte
                k = max(j for j, (a, _) in enumerate(theirs) if a <= start + o)
                assert start + o < theirs[k][0] + len(theirs[k][1])
                want[k] += 1
            assert [r["samples"] for r in rows] == want, name
            assert doc["samples"] == 3
            checked.add(sec)
    assert checked == set(SECTIONS)


def test_module_calls_are_named_by_relocations(capsys: pytest.CaptureFixture[str],
                                               tmp_path: Path) -> None:
    """Every ``call``/``jmp`` whose rel32 a relocation fills reads as ``objdump -dr``'s
    relocation symbol (``R_X86_64_PLT32 __fentry__-0x4`` -> target ``__fentry__``)."""
    data = tmp_path / "planted.data"
    planted = plant_module_samples(data, False)
    named = 0
    for p in planted:
        ko = MODULES / f"{p.module}.ko"
        funcs = {f.name: f for f in parse(run_objdump(str(ko), "-dr"))}
        for sec, name, _, _ in p.functions[:6]:
            code, out, err = run(capsys, str(data), name, "--dso", p.module, "--json",
                                 "--modules-dir", str(MODULES))
            assert code == 0, err
            rows = json.loads(out)["instructions"]
            for r, o in zip(rows, funcs[name].insns, strict=False):
                plt = [x for x in o.relocs if x[1] in ("R_X86_64_PLT32", "R_X86_64_PC32")
                       and x[2].endswith("-0x4")]
                if o.mnemonic in ("call", "jmp") and plt:
                    assert r["target"] == plt[0][2][:-len("-0x4")], (name, r)
                    named += 1
            assert sec
    assert named > 10


def test_data_symbol_says_it_is_not_code(capsys: pytest.CaptureFixture[str],
                                         tmp_path: Path) -> None:
    data = tmp_path / "planted.data"
    plant_module_samples(data, False)
    img = open_elf(str(MODULES / "demo_nic.ko"))
    bss = img.section_symbols(img.section(".bss").index)
    name = bss.names[0]
    code, out, err = run(capsys, str(data), name, "--dso", "demo_nic", "--json",
                         "--modules-dir", str(MODULES))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["is_code"] is False and doc["section"] == ".bss" and not doc["instructions"]
    assert "not code" in doc["note"]
    code, out, _ = run(capsys, str(data), name, "--dso", "demo_nic",
                       "--modules-dir", str(MODULES))
    assert code == 0 and "not code" in out


def _nm(ko: Path) -> dict[str, int]:
    """nm's value of every defined symbol of a module (an offset into its section)."""
    out = subprocess.run([require("nm"), "--defined-only", str(ko)], capture_output=True,
                         text=True, check=True).stdout
    return {p[2]: int(p[0], 16) for p in map(str.split, out.splitlines()) if len(p) == 3}


@pytest.mark.slow
def test_a_name_in_several_modules(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """``cleanup_module`` is in every demo module (nm), an alias of each module's exit
    function: without samples the first is annotated and the two others are named; --dso
    picks one, at its .exit.text load address (the demo generator's plan) plus nm's
    value."""
    from perftui.demo.generate import write_demo

    plan = write_demo(tmp_path / "demo.data")
    mods = ["demo-kvm", "demo_nic", "demo_crc"]
    assert all("cleanup_module" in _nm(MODULES / f"{m}.ko") for m in mods)
    code, out, err = run(capsys, str(plan.path), "cleanup_module", "--json",
                         "--modules-dir", str(MODULES))
    assert code == 0, err
    doc = json.loads(out)
    assert len(doc["others"]) == 2 and err.count("is also in") == 2
    shown = {doc["dso"], *(o["dso"] for o in doc["others"])}
    assert shown == {"[demo_kvm]", "[demo_nic]", "[demo_crc]"}
    for m in mods:
        code, out, err = run(capsys, str(plan.path), "cleanup_module", "--dso", m, "--json",
                             "--modules-dir", str(MODULES))
        assert code == 0 and "is also in" not in err, err
        doc = json.loads(out)
        load, _ = plan.placed[m, ".exit.text"]
        assert doc["section"] == ".exit.text"
        assert int(doc["start"], 16) == load + _nm(MODULES / f"{m}.ko")["cleanup_module"]


def test_the_hottest_of_several_is_annotated(capsys: pytest.CaptureFixture[str],
                                            tmp_path: Path) -> None:
    """Samples in two modules' exit functions (2 and 1): ``cleanup_module`` annotates the
    one with 2 and names the other."""
    data = tmp_path / "exit.data"
    with open(data, "wb") as f:
        w = Writer(f, [_ATTR], {Feature.OSRELEASE: "6.1.0-test"})
        t = 1000
        for stem, base, n in (("demo_nic", 0xFFFFFFFFC0B00000, 1),
                              ("demo_crc", 0xFFFFFFFFC0C41000, 2)):
            ko = MODULES / f"{stem}.ko"
            sec = open_elf(str(ko)).section(".exit.text")
            path = f"/lib/modules/6.1.0-test/extra/{stem}.ko"
            w.write(w.b.kmod_sec_map(".exit.text", path, base, sec.size, sec.offset))
            for _ in range(n):
                t += 1
                w.write(w.b.sample({"ip": base + _nm(ko)["cleanup_module"], "pid": -1,
                                    "tid": 0, "time": t, "period": 1}, misc=Misc.KERNEL))
        w.close()
    code, out, err = run(capsys, str(data), "cleanup_module", "--json",
                         "--modules-dir", str(MODULES))
    assert code == 0, err
    doc = json.loads(out)
    assert doc["dso"] == "[demo_crc]" and doc["samples"] == 2
    assert [(o["dso"], o["samples"]) for o in doc["others"]] == [("[demo_nic]", 1)]


# ---------------------------------------------------------------------------------- demo, codes

@pytest.mark.slow
def test_demo_noinstr_function(capsys: pytest.CaptureFixture[str]) -> None:
    """The demo's hottest function, in demo-kvm's .noinstr.text: its instructions at the
    section's load address, the hottest one among them."""
    code, out, err = run(capsys, "--demo", "__demo_svm_vcpu_run", "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["section"] == ".noinstr.text" and doc["dso"] == "[demo_kvm]"
    assert doc["samples"] == sum(r["samples"] for r in doc["instructions"]) > 1000


def test_kernel_without_vmlinux_says_there_are_no_bytes(
        capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """Kernel symbols from kallsyms only: exit 1 and one line saying why."""
    ks = tmp_path / "kallsyms"
    ks.write_text("ffffffff81000000 T _text\nffffffff82b7b9a0 T native_safe_halt\n"
                  "ffffffff82b7b9c0 T after_halt\n")
    code, out, err = run(capsys, "--demo", "native_safe_halt", "--kallsyms", str(ks))
    assert code == 1 and out == ""
    assert "kallsyms" in err and "--vmlinux" in err
    code, out, err = run(capsys, "--demo", "native_safe_halt", "--kallsyms", str(ks), "--json")
    assert code == 1 and json.loads(out)["instructions"] == []


def test_usage_and_unreadable_input(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert run(capsys)[0] == 2
    code, _, _err = run(capsys, "a", "b", "c")
    assert code == 2
    bad = tmp_path / "bad.data"
    bad.write_bytes(b"not a recording at all")
    assert run(capsys, str(bad), "main")[0] == 1  # (the line goes to the real stderr)
    assert run(capsys, "-i", str(bad), "x.data", "main")[0] == 2


def _elf_functions(path: Path, name: str) -> tuple[int, int]:
    img = open_elf(str(path))
    f = functions(img, name)[0]
    return f.value, f.size


def test_kernel_function_from_a_vmlinux(capsys: pytest.CaptureFixture[str], built: Built,
                                        tmp_path: Path) -> None:
    """Kernel samples with --vmlinux: the function read from that file at its (absolute)
    addresses.  The stand-in vmlinux is hotprog_exec (an ET_EXEC built here); the oracle
    is objdump -d of it."""
    vmlinux = built.hotprog_exec
    start, size = _elf_functions(vmlinux, "hot_alpha")
    img = open_elf(str(vmlinux))
    text = img.section(".text")
    data = tmp_path / "kernel.data"
    offsets = (0, size // 2, size - 1)
    with open(data, "wb") as f:
        w = Writer(f, [_ATTR], {Feature.OSRELEASE: "6.1.0-test"})
        w.write(w.b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": text.addr, "len": text.size,
                                    "pgoff": text.addr, "filename": "[kernel.kallsyms]_text"},
                           misc=Misc.KERNEL))
        for k, o in enumerate(offsets):
            w.write(w.b.sample({"ip": start + o, "pid": -1, "tid": 0, "time": 1000 + k,
                                "period": 1}, misc=Misc.KERNEL))
        w.close()
    code, out, err = run(capsys, str(data), "hot_alpha", "--vmlinux", str(vmlinux), "--json")
    assert code == 0, err
    doc = json.loads(out)
    assert doc["dso"] == "[kernel.kallsyms]" and int(doc["start"], 16) == start
    insns = {f.name: f for f in parse(run_objdump(str(vmlinux), "-d"))}["hot_alpha"].insns
    assert [int(r["addr"], 16) for r in doc["instructions"]] == [i.addr for i in insns]
    want = [0] * len(insns)
    for o in offsets:
        want[max(j for j, i in enumerate(insns) if i.addr <= start + o)] += 1
    assert [r["samples"] for r in doc["instructions"]] == want


_ATTR = EventAttr(type=1, size=128, config=0, sample_period=1000,
                  sample_type=int(Sample.IP | Sample.TID | Sample.TIME | Sample.PERIOD),
                  flags=1 << 8 | 1 << 9 | 1 << 18 | 1 << 23, ids=[7], name="cpu-clock")


def test_hostile_library_is_one_line(capsys: pytest.CaptureFixture[str], built: Built,
                                     tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A library whose .text header points past the end of the file: the symbols still
    name the sample (perf reads only the symbol table), the annotation fails with one
    line naming the file, exit 1, no traceback.  The build-id cache is an empty one: a
    good copy of libhotlib.so under the same build id in ~/.debug (a perf record run
    without a private cache puts it there) would be read instead, as perf reads it."""
    import struct

    monkeypatch.setenv("PERF_BUILDID_DIR", str(tmp_path / "empty-debug"))

    src = built.libhotlib
    img = open_elf(str(src))
    start, _ = _elf_functions(src, "lib_spin")
    raw = bytearray(src.read_bytes())
    shoff = struct.unpack_from("<Q", raw, 0x28)[0]
    struct.pack_into("<Q", raw, shoff + 64 * img.section(".text").index + 24,
                     len(raw) + 0x1000)  # sh_offset of .text
    evil = tmp_path / "libevil.so"
    evil.write_bytes(raw)
    data = tmp_path / "evil.data"
    base = 0x7F0000000000
    with open(data, "wb") as f:
        w = Writer(f, [_ATTR], {})
        w.write(w.b.kernel("MMAP2", {"pid": 5, "tid": 5, "addr": base, "len": 0x4000,
                                     "pgoff": 0, "prot": 5, "flags": 2,
                                     "filename": str(evil)}, misc=Misc.USER))
        w.write(w.b.sample({"ip": base + start + 2, "pid": 5, "tid": 5, "time": 2000,
                            "period": 1}, misc=Misc.USER))
        w.close()
    code, out, err = run(capsys, str(data), "lib_spin")
    assert code == 1 and out == ""
    lines = [ln for ln in err.splitlines() if "lib_spin" in ln]
    assert len(lines) == 1 and str(evil) in lines[0] and "past the end" in lines[0]
    assert "Traceback" not in err
    code, out, _ = run(capsys, str(data), "lib_spin", "--json")
    doc = json.loads(out)
    assert code == 1 and doc["samples"] == 1 and doc["instructions"] == []
    assert "past the end" in doc["note"]
