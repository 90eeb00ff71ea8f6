"""Programs for DWARF unwinding (``tests/programs/dw*``), built ``-O2 -fomit-frame-pointer
-g`` once per session: the ``dwarf_built`` fixture of tests/conftest.py gives a
:class:`DwarfBuilt`.  Record them with ``recorded(name, prog, *args, callgraph="dwarf")``.

- ``dwchain`` (PIE, with ``libdwlib.so``): a chain five deep with an always-inlined helper,
  a call into the library that calls back, a PLT loop, qsort, recursion deeper than an 8 KiB
  stack copy, a second thread, a SIGPROF handler;
- ``dwcxx``: C++ templates, a virtual call, std::sort with a lambda, exceptions;
- ``dwstatic_hdr``: dwchain linked ``-static`` with ``--eh-frame-hdr`` (gcc's default static
  link has none, and perf 6.1 unwinds none of such a file); ``dwstatic_nohdr``: that file with
  its ``.eh_frame_hdr`` removed (objcopy; same build id, same addresses).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from perfprograms import PROGRAMS, _run, build_once, require

DWARF_CFLAGS = ["-O2", "-fomit-frame-pointer", "-g"]


@dataclass
class DwarfBuilt:
    dir: Path
    dwchain: Path
    dwcxx: Path
    dwstatic_hdr: Path
    dwstatic_nohdr: Path


def _build(d: Path) -> DwarfBuilt:
    gcc, gxx, objcopy = require("gcc"), require("g++"), require("objcopy")
    lib = d / "libdwlib.so"
    _run([gcc, *DWARF_CFLAGS, "-fPIC", "-shared", "-o", str(lib), str(PROGRAMS / "dwlib.c")])
    chain = str(PROGRAMS / "dwchain.c")
    _run([gcc, *DWARF_CFLAGS, "-fPIE", "-pie", "-o", str(d / "dwchain"), chain,
          "-L", str(d), "-ldwlib", f"-Wl,-rpath,{d}", "-lpthread"])
    _run([gxx, *DWARF_CFLAGS, "-o", str(d / "dwcxx"), str(PROGRAMS / "dwcxx.cpp")])
    static = [chain, str(PROGRAMS / "dwlib.c"), "-lpthread"]
    _run([gcc, *DWARF_CFLAGS, "-static", "-Wl,--eh-frame-hdr", "-o", str(d / "dwstatic_hdr"),
          *static])
    _run([objcopy, "--remove-section", ".eh_frame_hdr", str(d / "dwstatic_hdr"),
          str(d / "dwstatic_nohdr")])
    return DwarfBuilt(d, d / "dwchain", d / "dwcxx", d / "dwstatic_hdr", d / "dwstatic_nohdr")


def build_dwarf_programs(directory: Path) -> DwarfBuilt:
    return _build(directory)


def build_dwarf_programs_once(directory: Path) -> DwarfBuilt:
    """:func:`build_dwarf_programs`, once for all the workers of a run
    (:func:`perfprograms.build_once`)."""
    return build_once(directory, _build)
