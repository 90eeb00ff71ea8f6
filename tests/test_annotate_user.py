"""Annotate core on a C program and a shared library compiled here: instructions against
``objdump -d``, source lines against ``addr2line``, and per-instruction sample counts and
percentages against ``perf annotate --stdio`` on a fresh ``perf record`` of the program."""

from __future__ import annotations

import os
import re
import subprocess
from pathlib import Path

import numpy as np
import pytest
from elftools.elf.elffile import ELFFile
from perfprograms import shared
from testapi import functions

from objdump_oracle import compare_function, nm_sizes, nm_values, parse, run_objdump, tool
from perftui.analysis.annotate import annotate, source_lines
from perftui.perfdata import RecordType, open_recording
from perftui.symbols.code.disasm import disassemble_symbol
from perftui.symbols.code.elfcode import open_elf

LIB_C = r"""
double lib_mix(const double *v, int n) {
  double s = 0;
  for (int i = 0; i < n; i++) { s += v[i] * 1.0001; if (s > 1e9) s -= 1e9; }
  return s;
}
"""

PROG_C = r"""
#include <stdio.h>
#include <stdlib.h>
double lib_mix(const double *v, int n);
static unsigned table[256];
static inline unsigned mix(unsigned h, unsigned char c) { h ^= c; h *= 16777619u; return h; }
__attribute__((noinline)) unsigned hot_hash(const unsigned char *p, int n) {
  unsigned h = 2166136261u;
  for (int i = 0; i < n; i++) { h = mix(h, p[i]); h ^= table[(h >> 3) & 255]; }
  return h;
}
__attribute__((noinline)) long hot_sum(const int *a, int n) {
  long s = 0;
  for (int i = 0; i < n; i++) {
    if (a[i] & 1)
      s += a[i] * 3;
    else
      s -= a[i] / 7;
  }
  return s;
}
int main(int argc, char **argv) {
  int n = 4096, rounds = argc > 1 ? atoi(argv[1]) : 3000;
  unsigned char *buf = malloc(n);
  int *ia = malloc(n * sizeof(int));
  double *dv = malloc(n * sizeof(double));
  for (int i = 0; i < 256; i++) table[i] = i * 2654435761u;
  for (int i = 0; i < n; i++) { buf[i] = i * 7; ia[i] = i * 13 - 500; dv[i] = i * 0.5; }
  unsigned h = 0; long s = 0; double d = 0;
  for (int r = 0; r < rounds; r++) {
    h += hot_hash(buf, n); s += hot_sum(ia, n); d += lib_mix(dv, n);
  }
  printf("%u %ld %f\n", h, s, d);
  return 0;
}
"""

CFLAGS = ["-O1", "-g", "-fno-omit-frame-pointer"]


@pytest.fixture(scope="module")
def built(shared_dir: Path) -> Path:
    """``prog`` (PIE) and ``libmix.so`` built with gcc in a directory of their own, once per
    run (:func:`perfprograms.shared`: every xdist worker takes the same build)."""
    gcc = tool("gcc")

    def make(d: Path, env: dict[str, str]) -> Path:
        (d / "lib.c").write_text(LIB_C)
        (d / "prog.c").write_text(PROG_C)
        subprocess.run([gcc, *CFLAGS, "-fPIC", "-shared", "-o", "libmix.so", "lib.c"], cwd=d,
                       check=True)
        subprocess.run([gcc, *CFLAGS, "-fPIE", "-pie", "-o", "prog", "prog.c", "-L.", "-lmix",
                        "-Wl,-rpath,$ORIGIN"], cwd=d, check=True)
        return d / "prog"

    return shared(shared_dir, "test_annotate_user.built", make).parent


def _symbols(path: str):
    img = open_elf(path)
    sized = {f.value: f for f in functions(img) if f.size}
    for of in parse(run_objdump(path, "-d", "-j", ".text")):
        if of.addr in sized:
            yield img, sized[of.addr], of


@pytest.mark.parametrize("name", ["prog", "libmix.so"])
def test_instructions_equal_objdump(built: Path, name: str) -> None:
    path = str(built / name)
    values = nm_values(path)
    funcs = list(_symbols(path))
    assert {"hot_hash", "hot_sum", "main"} <= {s.name for _, s, _ in funcs} or name != "prog"
    n = sum(compare_function(disassemble_symbol(img, sym), of, values) for img, sym, of in funcs)
    assert n > 20


def test_rip_relative_data_is_named_as_objdump_names_it(built: Path) -> None:
    """``lea 0x2ede(%rip),%rsi  # 4060 <table>``: the same address and name.

    objdump names GOT slots after the dynamic relocation that fills them
    (``<__libc_start_main@GLIBC_2.34>``): a synthetic name that perftui's symbol layer
    does not make; there only the address is compared.  objdump also names an address
    after the nearest symbol before it even past that symbol's size (``2010
    <_IO_stdin_used+0x10>`` for a string after a 4-byte object); perftui, like perf's
    symbol lookup, names only addresses inside a symbol (sizes from ``nm -S``).
    """
    path = str(built / "prog")
    sizes = nm_sizes(path)
    checked = named = 0
    for img, sym, of in _symbols(path):
        d = disassemble_symbol(img, sym)
        for got, want in zip(d.instructions, of.insns, strict=False):
            if "(%rip)" in want.operands and want.comment:
                mine = got.asm.partition("  # ")[2]
                assert mine.split()[0] == want.comment.split()[0], (got.asm, want.comment)
                m = re.match(r"\S+ <([^+>]+)(?:\+0x([0-9a-f]+))?>$", want.comment)
                if m and "@" not in m.group(1):
                    _, size = sizes.get(m.group(1), (0, 0))
                    if int(m.group(2) or "0", 16) < size or size == 0:
                        assert mine == want.comment
                        named += 1
                    else:
                        assert mine == want.comment.split()[0]  # outside the symbol
                checked += 1
    assert checked >= 3 and named >= 1


def test_bias_moves_every_address(built: Path) -> None:
    """A PIE shown where it was loaded: every address and direct target moves by the bias."""
    img = open_elf(str(built / "prog"))
    sym = functions(img, "hot_sum")[0]
    a = disassemble_symbol(img, sym)
    b = disassemble_symbol(img, sym, bias=0x555555554000)
    assert [i.addr + 0x555555554000 for i in a.instructions] == [i.addr for i in b.instructions]
    assert [i.target_name for i in a.instructions] == [i.target_name for i in b.instructions]
    assert source_lines(img, a) == source_lines(img, b)


@pytest.mark.parametrize("name", ["prog", "libmix.so"])
def test_source_lines_equal_addr2line(built: Path, name: str) -> None:
    path = str(built / name)
    checked = 0
    for img, sym, _ in _symbols(path):
        d = disassemble_symbol(img, sym)
        lines = source_lines(img, d)
        assert lines is not None
        out = subprocess.run(
            [tool("addr2line"), "-e", path, *[f"{i.addr:x}" for i in d.instructions]],
            capture_output=True, text=True, check=True,
        ).stdout.splitlines()
        for got, want in zip(lines, out, strict=True):
            want = want.split(" (discriminator")[0]
            if want.startswith("??"):  # "??:0" or "??:?": addr2line knows no line
                assert got is None, f"{sym.name}"
            else:
                assert str(got) == want, f"{sym.name}"
            checked += 1
    assert checked > 20


def test_stripped_file_has_no_source_lines(built: Path, tmp_path: Path) -> None:
    stripped = tmp_path / "prog.stripped"
    subprocess.run([tool("objcopy"), "--strip-debug", str(built / "prog"), str(stripped)],
                   check=True)
    img = open_elf(str(stripped))
    d = disassemble_symbol(img, functions(img, "hot_sum")[0])
    assert source_lines(img, d) is None


# ------------------------------------------------------------------------------- perf annotate

_PERF_LINE = re.compile(r"^\s*([0-9.]+)\s+:\s+([0-9a-f]+):\s")
_PERF_TOTAL = re.compile(r"\((\d+) samples, percent: ([a-z ]+)\)")


@pytest.fixture(scope="module")
def recorded(built: Path, shared_dir: Path) -> Path:
    """``perf record`` of ``prog``, once per run (:func:`perfprograms.shared`)."""
    perf = tool("perf")

    def make(d: Path, env: dict[str, str]) -> Path:
        data = d / "perf.data"
        subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-F", "4000", "-o", str(data),
                        "./prog", "20000"], cwd=built, check=True, capture_output=True, env=env)
        return data

    return shared(shared_dir, "test_annotate_user.recorded", make)


def _perf_annotate(data: Path, sym: str, dso: str, *args: str) -> tuple[dict[int, float], int]:
    """perf's per-instruction column (percent or, with -n, samples) and its sample total."""
    out = subprocess.run(
        [tool("perf"), "annotate", "-i", str(data), "--stdio", "-s", sym, "-d", dso, *args],
        capture_output=True, text=True, check=True, env={**os.environ, "LC_ALL": "C"},
    ).stdout
    total = _PERF_TOTAL.search(out)
    assert total, out[:500]
    col = {int(m.group(2), 16): float(m.group(1)) for ln in out.splitlines()
           if (m := _PERF_LINE.match(ln))}
    return col, int(total.group(1))


def _samples_of(data: Path, path: str) -> tuple[np.ndarray, np.ndarray]:
    """The user samples that fall in ``path``'s executable mappings, as objdump addresses
    (test-local: MMAP2 start/pgoff, then the ELF's PT_LOAD), with their periods."""
    rec = open_recording(data)
    rec.build_index()
    t = rec.columns["type"]
    maps = []
    for i in np.flatnonzero(t == RecordType.MMAP2):
        f = rec.decode(int(i))
        if f["filename"] == path and f["prot"] & 4:
            maps.append((f["addr"], f["addr"] + f["len"], f["pgoff"]))
    with open(path, "rb") as fh:
        loads = [(s["p_offset"], s["p_filesz"], s["p_vaddr"]) for s in ELFFile(fh).iter_segments()
                 if s["p_type"] == "PT_LOAD"]
    ips, periods = [], []
    for i in np.flatnonzero(t == RecordType.SAMPLE):
        f = rec.decode(int(i))
        for lo, hi, pgoff in maps:
            if lo <= f["ip"] < hi:
                off = f["ip"] - lo + pgoff
                for p_off, p_size, p_vaddr in loads:
                    if p_off <= off < p_off + p_size:
                        ips.append(off - p_off + p_vaddr)
                        periods.append(f["period"])
                break
    rec.close()
    return np.array(ips, np.uint64), np.array(periods, np.uint64)


@pytest.mark.perf
@pytest.mark.slow
@pytest.mark.parametrize("dso,sym", [("prog", "hot_hash"), ("prog", "hot_sum"),
                                     ("libmix.so", "lib_mix")])
def test_counts_and_percentages_equal_perf_annotate(
    built: Path, recorded: Path, dso: str, sym: str
) -> None:
    path = str(built / dso)
    img = open_elf(path)
    d = disassemble_symbol(img, functions(img, sym)[0])
    ips, periods = _samples_of(recorded, path)
    by_period = annotate(d, ips, periods)  # perf's default: local-period
    by_hits = annotate(d, ips, periods, percent_type="local-hits")

    counts, total = _perf_annotate(recorded, sym, dso, "-n")
    assert total == by_period.samples > 50
    assert set(counts) == {i.addr for i in d.instructions}
    assert [counts[i.addr] for i in d.instructions] == by_period.counts.hits.tolist()

    pct, _ = _perf_annotate(recorded, sym, dso)
    for k, insn in enumerate(d.instructions):
        assert abs(pct[insn.addr] - by_period.percent[k]) <= 0.01, f"{sym} at {insn.addr:#x}"
    hits_pct, _ = _perf_annotate(recorded, sym, dso, "--percent-type", "local-hits")
    for k, insn in enumerate(d.instructions):
        assert abs(hits_pct[insn.addr] - by_hits.percent[k]) <= 0.01, f"{sym} at {insn.addr:#x}"
    top = max(pct.values())
    assert by_period.hottest is not None
    assert abs(by_period.percent[by_period.hottest] - top) <= 0.01
