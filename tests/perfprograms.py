"""Test programs (``tests/programs/``) built and recorded with perf, once per session.

The fixtures ``built`` and ``recorded`` are provided by tests/conftest.py (one instance
per session); test modules import only the helpers (``perf_script_samples``, ...).

- ``built``: a :class:`Built` with the compiled programs in a session temp dir (``hotprog``
  PIE, its ``libhotlib.so``, the same program as ET_EXEC (``hotprog_exec``), with a
  shifted text segment (``hotprog_based``), with IBT PLTs (``hotprog_ibt``), stripped
  (``hotprog_stripped``, ``libhotlib_stripped``); ``hotcxx``; ``hotrust_v0`` and
  ``hotrust_legacy`` when rustc is there; ``jitprog``; ``fakeframes``, x86-64 only: chains
  through a frame record planted by hand).  Missing compilers skip (fail
  under ``CI=true``).
- ``recorded(name, program, *args, callgraph=True, system_wide=False)``: a
  ``perf record -e cpu-clock -F 4000 [-g]`` of a program made once per run, shared by the
  xdist workers (:func:`shared`); returns the perf.data path.
- :func:`shared`: any recording (or other costly file) made once per run.
- :func:`perf_script_samples` parses ``perf script -F tid,time,ip,sym,symoff,dso``.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import pickle
import re
import shutil
import subprocess
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TypeVar

import pytest

from conftest import skip_or_fail

PROGRAMS = Path(__file__).parent / "programs"
CFLAGS = ["-O1", "-g", "-fno-omit-frame-pointer"]
B = TypeVar("B")  # what a build gives


def require(tool: str) -> str:
    """The tool's path; skip without it (fail when CI=true: the oracle must be there)."""
    path = shutil.which(tool)
    if path is None:
        skip_or_fail(f"{tool} is not on the PATH")
    return path


def _run(cmd: list[str], **kw: object) -> subprocess.CompletedProcess[str]:
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, **kw)  # type: ignore[call-overload]
    if p.returncode != 0:
        raise RuntimeError(f"{' '.join(cmd)} failed ({p.returncode}): {p.stderr[-2000:]}")
    return p


@dataclass
class Built:
    dir: Path
    hotprog: Path
    libhotlib: Path
    hotprog_exec: Path
    hotprog_based: Path
    hotprog_ibt: Path
    hotprog_stripped: Path
    libhotlib_stripped: Path
    hotcxx: Path
    jitprog: Path
    fakeframes: Path
    hotrust_v0: Path | None = None
    hotrust_legacy: Path | None = None


def _build(d: Path) -> Built:
    gcc, gxx = require("gcc"), require("g++")
    lib = d / "libhotlib.so"
    _run([gcc, *CFLAGS, "-fPIC", "-shared", "-o", str(lib), str(PROGRAMS / "hotlib.c")])
    link = ["-L", str(d), "-lhotlib", f"-Wl,-rpath,{d}"]
    src = str(PROGRAMS / "hotprog.c")
    out = {
        "hotprog": ["-fPIE", "-pie"],
        "hotprog_exec": ["-fno-pie", "-no-pie"],
        "hotprog_based": ["-fPIE", "-pie", "-Wl,-Ttext-segment=0x200000"],
        "hotprog_ibt": ["-fPIE", "-pie", "-fcf-protection=full", "-Wl,-z,ibtplt"],
    }
    for name, flags in out.items():
        _run([gcc, *CFLAGS, *flags, "-o", str(d / name), src, *link])
    shutil.copy(d / "hotprog", d / "hotprog_stripped")
    shutil.copy(lib, d / "libhotlib_stripped.so")
    _run([require("strip"), str(d / "hotprog_stripped"), str(d / "libhotlib_stripped.so")])
    _run([gxx, *CFLAGS, "-fPIE", "-pie", "-o", str(d / "hotcxx"), str(PROGRAMS / "hotcxx.cpp")])
    _run([gcc, "-O1", "-g", "-fno-omit-frame-pointer", "-o", str(d / "jitprog"),
          str(PROGRAMS / "jitprog.c")])
    _run([gcc, *CFLAGS, "-o", str(d / "fakeframes"), str(PROGRAMS / "fakeframes.c")])
    b = Built(d, d / "hotprog", lib, d / "hotprog_exec", d / "hotprog_based", d / "hotprog_ibt",
              d / "hotprog_stripped", d / "libhotlib_stripped.so", d / "hotcxx",
              d / "jitprog", d / "fakeframes")
    rustc = shutil.which("rustc")
    if rustc:
        rflags = ["-C", "opt-level=1", "-C", "force-frame-pointers=yes", "-g"]
        rs = str(PROGRAMS / "hotrust.rs")
        _run([rustc, *rflags, "-C", "symbol-mangling-version=v0", "-o", str(d / "hotrust_v0"),
              rs])
        # legacy mangling needs -Z unstable-options since rustc made v0 the default
        env = dict(os.environ, RUSTC_BOOTSTRAP="1")
        _run([rustc, *rflags, "-Z", "unstable-options", "-C", "symbol-mangling-version=legacy",
              "-o", str(d / "hotrust_legacy"), rs], env=env)
        b.hotrust_v0, b.hotrust_legacy = d / "hotrust_v0", d / "hotrust_legacy"
    return b


def build_programs(directory: Path) -> Built:
    """Compile tests/programs into ``directory`` (the ``built`` fixture of conftest)."""
    return _build(directory)


def build_programs_once(directory: Path) -> Built:
    """:func:`build_programs` into ``directory``, once per run (:func:`build_once`)."""
    return build_once(directory, _build)


def build_once(directory: Path, build: Callable[[Path], B]) -> B:
    """``build(directory)``, shared by the test processes of one run (pytest-xdist's
    workers): the first one to come builds, under a lock, the others wait and take what it
    built.  So the compilers run once, before any test records, and never while another
    worker records system-wide (rustc's own library caught in a ``perf record -a`` of the
    next test would make rows that test did not plan)."""
    directory.mkdir(parents=True, exist_ok=True)
    done = directory / "built.pickle"
    with open(directory / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if done.is_file():
            b: B = pickle.loads(done.read_bytes())
            return b
        b = build(directory)
        done.write_bytes(pickle.dumps(b))
        return b


def shared(base: Path, key: str, make: Callable[[Path, dict[str, str]], Path]) -> Path:
    """What ``make(directory, env)`` makes (a recording; its path), made once per run
    under ``base`` (the ``shared_dir`` fixture: one directory for every xdist worker),
    whichever test process asks first: the others wait on a lock and take it.

    ``env`` is the environment with a ``HOME`` of the recipe's own, so the build-id cache a
    ``perf record`` fills ($HOME/.debug: perf 6.1 reads no other) holds only what this
    recording put there.  Every process that takes the recording copies those entries
    into its own home's cache (tests/conftest.py gives each process one), keeping any it
    has (perf adds an entry only when its build id is not cached yet): so each process's
    cache holds what its recordings added, in the order it asked for them, as when each
    made its own, and a recording made in another worker never changes it meanwhile."""
    digest = hashlib.sha256(key.encode()).hexdigest()[:20]
    d = base / digest
    base.mkdir(parents=True, exist_ok=True)
    with open(base / f"{digest}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = d / "made"
        if done.is_file():
            data = d / done.read_text()
        else:
            if d.exists():
                shutil.rmtree(d)  # an attempt that failed
            home = d / "home"
            home.mkdir(parents=True)
            data = make(d, {**os.environ, "HOME": str(home)})
            done.write_text(str(data.relative_to(d)))
    merge_buildid_cache(d / "home" / ".debug", Path(os.environ["HOME"]) / ".debug")
    return data


def merge_buildid_cache(src: Path, dst: Path) -> None:
    """Add the entries of build-id cache ``src`` that ``dst`` lacks (files hard-linked,
    perf's relative symbolic links as they are)."""
    if not src.is_dir():
        return
    for root, dirs, files in os.walk(src):
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(parents=True, exist_ok=True)
        for name in [*dirs, *files]:
            s, t = Path(root) / name, dst / rel / name
            if s.is_symlink():
                if not os.path.lexists(t):
                    os.symlink(os.readlink(s), t)
            elif name in files and not os.path.lexists(t):
                try:
                    os.link(s, t)
                except OSError:
                    shutil.copy2(s, t)


def recorder(base: Path) -> Callable[..., Path]:
    """``record(name, program, *args, callgraph=True, system_wide=False,
    events="cpu-clock", buildid_cache=True) -> perf.data``, each recipe recorded once per
    run (:func:`shared`: the ``recorded`` fixture); ``buildid_cache=False`` is
    ``perf record -N``."""
    cache: dict[str, Path] = {}

    def record(name: str, program: Path, *args: str, callgraph: bool | str = True,
               system_wide: bool = False, events: str = "cpu-clock",
               buildid_cache: bool = True) -> Path:
        key = "\0".join([name, str(program), *args, str(callgraph), str(system_wide), events,
                         str(buildid_cache)])
        if key not in cache:
            cache[key] = shared(base, "recorded\0" + key, lambda d, env: _record(
                d, env, name, program, args, callgraph, system_wide, events, buildid_cache))
        return cache[key]

    return record


def recorded_c(base: Path, source: str, *args: str) -> Path:
    """tests/programs/SOURCE.c built here (``CFLAGS``) and recorded ``perf record -e
    cpu-clock -F 4000 -g -- PROGRAM ARGS``, once per run (:func:`shared`)."""
    def make(d: Path, env: dict[str, str]) -> Path:
        prog = d / source
        _run([require("cc"), *CFLAGS, "-o", str(prog), str(PROGRAMS / f"{source}.c")])
        return _record(d, env, source, prog, args, True, False, "cpu-clock", True)
    return shared(base, "\0".join(["recorded c", source, *args]), make)


def _record(out_dir: Path, env: dict[str, str], name: str, program: Path, args: tuple[str, ...],
            callgraph: bool | str, system_wide: bool, events: str, buildid_cache: bool
            ) -> Path:
    perf = require("perf")
    data = out_dir / f"{name}.data"
    # without -N, as a user records: perf fills the build-id cache, where perf report finds
    # the vDSO (perftui reads the running kernel's as well)
    cmd = [perf, "record", "-q", "-e", events, "-F", "4000", "-o", str(data)]
    if not buildid_cache:
        cmd.append("-N")
    if isinstance(callgraph, str):  # "dwarf", "dwarf,16384", "lbr"...
        cmd += ["--call-graph", callgraph]
    elif callgraph:
        cmd.append("-g")
    if system_wide:
        cmd.append("-a")
    cmd += ["--", str(program), *args]
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=120, cwd=out_dir, env=env)
    if p.returncode != 0 or not data.exists():
        pytest.fail(f"perf record {name} failed ({p.returncode}): {p.stderr[-500:]}")
    return data


_SAMPLE_LINE = re.compile(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s+([0-9a-f]+)\s+(.*)$")
_FRAME_LINE = re.compile(r"^\s+([0-9a-f]+)\s+(.*)$")


def _sym_dso(rest: str) -> tuple[str | None, int | None, str]:
    """Split perf's ``sym+0xoff (dso)`` (or ``[unknown] (dso)``)."""
    head, dso = rest, ""
    if rest.endswith(")"):  # the dso is the last balanced "(...)": names may hold "(deleted)"
        depth = 0
        for i in range(len(rest) - 1, -1, -1):
            depth += {")": 1, "(": -1}.get(rest[i], 0)
            if depth == 0:
                head, dso = rest[:i].rstrip(" "), rest[i + 1:-1]
                break
    if head == "[unknown]":
        return None, None, dso
    name, plus, off = head.rpartition("+0x")
    if not plus:
        return head, None, dso
    return name, int(off, 16), dso


@dataclass
class ScriptSample:
    tid: int
    time_ns: int
    ip: int
    sym: str | None
    symoff: int | None
    dso: str
    frames: list[tuple[int, str | None, int | None, str]]


def perf_script_samples(data: Path, callchain: bool = False,
                        extra: tuple[str, ...] = ()) -> list[ScriptSample]:
    """perf script's samples (tid, time, ip, sym, symoff, dso; callchain frames)."""
    perf = require("perf")
    cmd = [perf, "script", "-i", str(data), "--ns", "-F", "tid,time,ip,sym,symoff,dso",
           *extra]
    if not callchain:
        cmd.append("-G")
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=300, cwd=data.parent)
    if p.returncode != 0:
        pytest.fail(f"perf script failed: {p.stderr[-500:]}")
    out: list[ScriptSample] = []
    for line in p.stdout.splitlines():
        if not line.strip():
            continue
        if callchain and line.startswith("\t"):
            m = _FRAME_LINE.match(line)
            if m and out:
                sym, off, dso = _sym_dso(m.group(2))
                out[-1].frames.append((int(m.group(1), 16), sym, off, dso))
            continue
        if callchain:
            m = re.match(r"^\s*(-?\d+)\s+(\d+)\.(\d+):\s*$", line)
            if m:
                out.append(ScriptSample(int(m.group(1)), int(m.group(2)) * 10**9
                                        + int(m.group(3)), 0, None, None, "", []))
            continue
        m = _SAMPLE_LINE.match(line)
        if m is None:
            continue
        sym, off, dso = _sym_dso(m.group(5))
        out.append(ScriptSample(int(m.group(1)), int(m.group(2)) * 10**9 + int(m.group(3)),
                                int(m.group(4), 16), sym, off, dso, []))
    return out
