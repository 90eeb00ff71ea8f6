"""``perftui inject``: sysfs tree -> KMOD_SEC_MAP records -> decode, and --strip."""

from __future__ import annotations

import shutil
import struct
import subprocess
import sys
from pathlib import Path

import pytest
from inproc import run_cli

from builders import kitchen_sink
from conftest import skip_or_fail
from perftui.analysis.summary import record_counts
from perftui.demo.sysfs import write_sysfs_tree
from perftui.perfdata import open_recording
from perftui.symbols.modules.inject import InjectError, inject, strip
from perftui.symbols.modules.kofile import load_module

DATA = Path(__file__).parent / "data"
MODS = Path(__file__).parents[1] / "perftui" / "demo" / "modules"
PERF61 = DATA / "perf61" / "perf-normal-g.data"


def sysfs_tree(root: Path, zero: bool = False) -> dict[tuple[str, str], int]:
    """A /sys/module tree for the three demo modules, plus a built-in module without one."""
    want = write_sysfs_tree(root, zero=zero)
    (root / "module" / "builtin_thing").mkdir(parents=True)  # built-in: no sections/
    return want


def run(*args: str) -> subprocess.CompletedProcess[str]:
    return run_cli(*args)  # in-process: the files written and the status are what is tested


@pytest.mark.parametrize("src_kind", ["perf61", "pipe-be", "file-be-z"])
def test_inject_round_trip(tmp_path: Path, src_kind: str) -> None:
    if src_kind == "perf61":
        src = PERF61
    else:
        src = tmp_path / "src.data"
        kitchen_sink(src, ">", "pipe" if "pipe" in src_kind else "file",
                     "COMPRESSED" if src_kind.endswith("-z") else None)
    want = sysfs_tree(tmp_path / "sys")
    out = tmp_path / "out.data"
    before = src.read_bytes()
    rec = open_recording(src)
    rec.build_index()
    res = inject(rec, str(out), str(tmp_path / "sys"), [str(MODS)])
    assert src.read_bytes() == before  # never modifies FILE
    assert sorted(res.modules) == ["demo_crc", "demo_kvm", "demo_nic"]
    got = [r for r in open_recording(out, spill=False).records()]
    kmods = [r for r in got if r["type"] == "KMOD_SEC_MAP" and str(MODS) in r["filename"]]
    no_init = {k: v for k, v in want.items() if not k[1].startswith(".init")}
    assert len(kmods) == len(no_init) == res.records
    for k in kmods:
        mod = Path(k["filename"]).name.split(".")[0].replace("-", "_")
        assert no_init[(mod, k["section"])] == k["start"]
        mf = load_module(k["filename"])
        assert (k["len"], k["pgoff"]) == (mf.sections[k["section"]].size,
                                          mf.sections[k["section"]].offset)
        assert k["pid"] == -1 and k["misc"] == 1 and k["layout"] == "rfc"
    # before FINISHED_INIT, and everything else unchanged
    new = [r is not None and r["type"] == "KMOD_SEC_MAP" and str(MODS) in r["filename"]
           for r in got]
    types = [r["type"] for r in got]
    first_init = types.index("FINISHED_INIT")
    assert max(i for i, n in enumerate(new) if n) < first_init
    orig = [r["type"] for r in open_recording(src, spill=False).records()]
    assert [t for t, n in zip(types, new, strict=True) if not n] == orig
    o = open_recording(out)
    assert o.errors == [] and o.features == open_recording(src).features
    # strip removes every KMOD_SEC_MAP: the original bytes when it had none
    back, src_stripped = tmp_path / "back.data", tmp_path / "src-stripped.data"
    r2 = open_recording(out)
    r2.build_index()
    had = strip(_indexed(src), str(src_stripped)).records
    assert strip(r2, str(back)).records == len(kmods) + had
    assert back.read_bytes() == (before if not had else src_stripped.read_bytes())
    assert (src_kind == "perf61") == (had == 0)


def test_include_init(tmp_path: Path) -> None:
    want = sysfs_tree(tmp_path / "sys")
    rec = open_recording(PERF61)
    rec.build_index()
    res = inject(rec, str(tmp_path / "o.data"), str(tmp_path / "sys"), [str(MODS)],
                 include_init=True)
    assert res.records == len(want)


def test_zero_addresses_are_an_error(tmp_path: Path) -> None:
    sysfs_tree(tmp_path / "sys", zero=True)
    r = run("inject", str(PERF61), "-o", str(tmp_path / "o.data"), "--sysfs",
            str(tmp_path / "sys"), "--modules-dir", str(MODS))
    assert r.returncode == 1 and "0" in r.stderr and "root" in r.stderr
    assert not (tmp_path / "o.data").exists()


def test_refuses_to_overwrite(tmp_path: Path) -> None:
    sysfs_tree(tmp_path / "sys")
    src = tmp_path / "in.data"
    shutil.copy(PERF61, src)
    r = run("inject", str(src), "-o", str(src), "--sysfs", str(tmp_path / "sys"),
            "--modules-dir", str(MODS))
    assert r.returncode == 1 and "refusing" in r.stderr
    assert src.read_bytes() == PERF61.read_bytes()
    other = tmp_path / "exists.data"
    other.write_bytes(b"keep")
    r = run("inject", str(src), "-o", str(other), "--sysfs", str(tmp_path / "sys"),
            "--modules-dir", str(MODS))
    assert r.returncode == 1 and "--force" in r.stderr and other.read_bytes() == b"keep"
    r = run("inject", str(src), "-o", str(other), "--force", "--sysfs",
            str(tmp_path / "sys"), "--modules-dir", str(MODS))
    assert r.returncode == 0, r.stderr
    assert "perf <= 6.15" in r.stderr and "COMPRESSED2" in r.stderr


def test_missing_module_files_are_warned(tmp_path: Path) -> None:
    sysfs_tree(tmp_path / "sys")
    rec = open_recording(PERF61)
    rec.build_index()
    with pytest.raises(InjectError, match="not found"):
        inject(rec, str(tmp_path / "o.data"), str(tmp_path / "sys"), [str(tmp_path)])
    only = tmp_path / "only"
    only.mkdir()
    shutil.copy(MODS / "demo_crc.ko.zst", only)
    res = inject(rec, str(tmp_path / "o.data"), str(tmp_path / "sys"), [str(only)])
    assert res.modules == ["demo_crc"]
    assert len(res.warnings) == 2 and all("not found" in w for w in res.warnings)


@pytest.mark.perf
def test_perf61_reads_the_stripped_copy_like_the_original(tmp_path: Path) -> None:
    sysfs_tree(tmp_path / "sys")
    inj, back = tmp_path / "inj.data", tmp_path / "back.data"
    r = run("inject", str(PERF61), "-o", str(inj), "--sysfs", str(tmp_path / "sys"),
            "--modules-dir", str(MODS))
    assert r.returncode == 0, r.stderr
    r = run("inject", str(inj), "-o", str(back), "--strip")
    assert r.returncode == 0, r.stderr

    def stats(p: Path) -> subprocess.CompletedProcess[str]:
        return subprocess.run(["perf", "report", "-f", "--stats", "-i", str(p)],
                              capture_output=True, text=True, timeout=120)

    a, b, c = stats(PERF61), stats(back), stats(inj)
    assert a.stdout == b.stdout and "TOTAL events:        289" in a.stdout
    # perf 6.1 stops at the first type-83 record of the injected file (docs/format.md)
    assert "failed to process type: 83" in c.stderr
    kmods = record_counts(_indexed(inj))["KMOD_SEC_MAP"]
    assert kmods > 0


def _indexed(p: Path):
    rec = open_recording(p, spill=False)
    rec.build_index()
    return rec


def test_pipe_mode_insertion_point_without_finished_init(tmp_path: Path) -> None:
    """Old pipe recordings have no FINISHED_INIT: records go before the first SAMPLE."""
    src = DATA / "quipper" / "perf.data.piped.lost_samples-4.4"
    sysfs_tree(tmp_path / "sys")
    rec = open_recording(src)
    rec.build_index()
    out = tmp_path / "o.data"
    inject(rec, str(out), str(tmp_path / "sys"), [str(MODS)])
    types = [r["type"] for r in open_recording(out, spill=False).records()]
    assert types.index("SAMPLE") > max(i for i, t in enumerate(types) if t == "KMOD_SEC_MAP")
    raw = out.read_bytes()
    assert raw[:8] == src.read_bytes()[:8] and struct.unpack_from("<Q", raw, 8)[0] == 16


def test_killed_inject_leaves_no_broken_output(tmp_path: Path) -> None:
    """SIGKILL while OUT is being written: OUT does not exist, FILE is untouched."""
    import os
    import signal
    import time

    sys.path.insert(0, str(Path(__file__).parents[1] / "bench"))
    from bigfile import repeat_data

    big = tmp_path / "big.data"
    repeat_data(str(PERF61), str(big), 150_000_000)
    before = big.stat().st_size
    sysfs_tree(tmp_path / "sys")
    outdir = tmp_path / "out"
    outdir.mkdir()
    out = outdir / "o.data"
    p = subprocess.Popen([sys.executable, "-m", "perftui", "inject", str(big), "-o", str(out),
                          "--sysfs", str(tmp_path / "sys"), "--modules-dir", str(MODS)],
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 60
    seen_tmp = False
    while time.monotonic() < deadline and p.poll() is None:
        if any(n.endswith(".tmp") for n in os.listdir(outdir)):
            seen_tmp = True
            p.send_signal(signal.SIGKILL)
            break
        time.sleep(0.001)
    p.wait()
    if not seen_tmp:
        skip_or_fail("inject finished before it could be interrupted (nothing was tested)")
    assert not out.exists()
    assert big.stat().st_size == before
