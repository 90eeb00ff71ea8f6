"""perftui's DWARF reading against binutils' own ``addr2line -i -f`` (the oracle perf 6.1
uses for inline chains and source lines): every byte of the test programs' code (C and
C++, DWARF 5 and 4, with and without frame pointers), and addresses of libc and ld.so
through their separate debug files."""

from __future__ import annotations

import random
import re
import subprocess
from pathlib import Path

import pytest
from perfprograms import PROGRAMS, require

from conftest import skip_or_fail
from perftui.symbols.code.elfcode import SHF_EXECINSTR, open_elf
from perftui.symbols.dwarf.addr2line import Addr2Line

LIBC = "/usr/lib/x86_64-linux-gnu/libc.so.6"
LDSO = "/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2"

BUILDS = {
    "c_nofp": ("gcc", "inlined.c", ["-O2", "-fomit-frame-pointer", "-g"]),
    "c_fp": ("gcc", "inlined.c", ["-O2", "-fno-omit-frame-pointer", "-g"]),
    "c_dwarf4": ("gcc", "inlined.c", ["-O2", "-gdwarf-4"]),
    "c_sections": ("gcc", "inlined.c", ["-O2", "-g", "-ffunction-sections",
                                         "-Wl,--gc-sections"]),
    "cxx": ("g++", "inlined.cpp", ["-O2", "-fomit-frame-pointer", "-g"]),
    "cxx_dwarf4": ("g++", "inlined.cpp", ["-O2", "-gdwarf-4"]),
}


@pytest.fixture(scope="module")
def programs(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("inlined")
    out = {}
    for name, (cc, src, flags) in BUILDS.items():
        exe = d / name
        p = subprocess.run([require(cc), *flags, "-o", str(exe), str(PROGRAMS / src)],
                           capture_output=True, text=True, timeout=300)
        assert p.returncode == 0, p.stderr[-2000:]
        out[name] = exe
    return out


def addr2line(exe: str, addrs: list[int]) -> dict[int, str]:
    """binutils' answer per address: its lines, discriminators left out (perf drops them
    too: it reads the number before the space)."""
    p = subprocess.run([require("addr2line"), "-e", exe, "-i", "-f", "-a"],
                       input="".join(f"{a:x}\n" for a in addrs), capture_output=True,
                       text=True, timeout=600)
    assert p.returncode == 0, p.stderr[-500:]
    out: dict[int, list[str]] = {}
    cur = -1
    for ln in p.stdout.splitlines():
        if re.fullmatch(r"0x[0-9a-f]{16}", ln):
            cur = int(ln, 16)
            out[cur] = []
        else:
            out[cur].append(re.sub(r" \(discriminator \d+\)$", "", ln))
    return {a: "\n".join(v) for a, v in out.items()}


def ours(a2l: Addr2Line, addr: int) -> str:
    r = a2l.records(addr)
    return "??\n??:0" if r is None else "\n".join(x.text() for x in r)


def code_addresses(exe: str) -> list[int]:
    img = open_elf(exe)
    return [a for s in img.sections if s.flags & SHF_EXECINSTR and s.size
            for a in range(s.addr, s.addr + s.size)]


@pytest.mark.parametrize("name", list(BUILDS))
def test_every_code_byte(programs: dict[str, Path], name: str) -> None:
    exe = str(programs[name])
    addrs = code_addresses(exe)
    assert len(addrs) > 300
    want = addr2line(exe, addrs)
    a2l = Addr2Line(open_elf(exe))
    bad = [(hex(a), ours(a2l, a), want[a]) for a in addrs if ours(a2l, a) != want[a]]
    assert not bad, bad[:10]
    assert not a2l.notes
    # the chain the inline tests rely on is there: mix in braid_step in leaf
    if name.startswith("c_"):
        chains = {tuple(r.function for r in a2l.records(a) or ()) for a in addrs}
        assert ("mix", "braid_step", "leaf") in chains
        assert ("mix", "spin_a") in chains and ("mix", "spin_b") in chains


def _debug_file(path: str) -> str:
    from perftui.symbols.files.elfheaders import open_elf_headers

    with open_elf_headers(path) as h:
        bid = h.build_id
    f = Path(f"/usr/lib/debug/.build-id/{bid[:2]}/{bid[2:]}.debug") if bid else None
    if f is None or not f.is_file():
        skip_or_fail(f"no debug file for {path} (install libc6-dbg)")
    return str(f)


@pytest.mark.parametrize("lib", [LIBC, LDSO])
def test_system_libraries(lib: str) -> None:
    """Random addresses of a library's code, the library given to both (addr2line finds
    its debug file by build id; perftui is given it), and the debug file alone, as perf
    runs addr2line on the build-id cache's copy."""
    debug = _debug_file(lib)
    rng = random.Random(27)
    spans = [(s.addr, s.addr + s.size) for s in open_elf(lib).sections
             if s.flags & SHF_EXECINSTR and s.size]
    addrs = sorted({rng.choice([rng.randrange(a, b) for a, b in spans]) for _ in range(700)})
    for exe, dbg in ((lib, debug), (debug, None)):
        want = addr2line(exe, addrs)
        a2l = Addr2Line(open_elf(exe), open_elf(dbg) if dbg else None)
        bad = [(hex(a), ours(a2l, a), want[a]) for a in addrs if ours(a2l, a) != want[a]]
        assert not bad, bad[:10]
