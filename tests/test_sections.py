"""Section and symbol counts where the answer is known by construction."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
from inproc import run_cli

from conftest import skip_or_fail
from perftui.analysis.sectionreport import section_report
from perftui.perfdata import EventAttr, Feature, Sample, open_recording
from perftui.perfdata.constants import CONTEXT_KERNEL, Misc
from perftui.perfdata.writer import Writer
from perftui.present.sections import sections_json
from perftui.symbols.modules.kofile import load_module
from perftui.symbols.modules.sectionmap import build_section_map
from perftui.symbols.modules.sectiontable import NO_SYMBOL

MODS = Path(__file__).parents[1] / "perftui" / "demo" / "modules"
NIC = MODS / "demo_nic.ko"
BASE = 0xFFFFFFFFC0B00000
KPATH = "/lib/modules/6.1.0-test/extra/demo_nic.ko"
ATTR = EventAttr(type=1, size=128, sample_type=int(Sample.IP | Sample.TID | Sample.TIME
                 | Sample.CPU | Sample.PERIOD | Sample.CALLCHAIN), flags=1 << 18, ids=[7],
                 name="cpu-clock")


def layout() -> dict[str, int]:
    """demo_nic's sections placed one page apart, .text first."""
    mf = load_module(str(NIC))
    addr, out = BASE, {}
    for name in [".text", ".text.unlikely", ".noinstr.text", ".exit.text", ".rodata", ".data"]:
        out[name] = addr
        addr += (mf.sections[name].size + 0xFFF) & ~0xFFF
    return out


def plant(path: Path, ips: list[tuple[int, int]], order: str = "<", rfc_text: bool = True,
          extra_maps: list[tuple[str, int, int]] = (), build_id: str | None = None,
          compress: str | None = None, with_kmod: bool = True) -> dict[str, int]:
    """A recording with demo_nic's section map and samples at ``ips`` ((ip, misc) pairs)."""
    mf = load_module(str(NIC))
    at = layout()
    feats = {Feature.OSRELEASE: "6.1.0-test", Feature.HOSTNAME: "t"}
    if build_id:
        feats[Feature.BUILD_ID] = [{"filename": KPATH, "build_id": build_id}]
    with open(path, "wb") as f:
        w = Writer(f, [ATTR], feats, order=order, compress=compress)
        b = w.b
        if rfc_text or not with_kmod:
            size = mf.sections[".text"].size if with_kmod else 0x10000
            w.write(b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": at[".text"], "len": size,
                                      "pgoff": 0, "filename": KPATH}, misc=Misc.KERNEL))
        if with_kmod:
            for name, addr in at.items():
                if name == ".text" and rfc_text:
                    continue
                s = mf.sections[name]
                w.write(b.kmod_sec_map(name, KPATH, addr, s.size, s.offset))
        for name, start, length in extra_maps:
            w.write(b.kmod_sec_map(name, KPATH, start, length, 0))
        w.write(b.user("FINISHED_INIT"))
        w.start_compression()
        for k, (ip, misc) in enumerate(ips):
            w.write(b.sample({"ip": ip, "pid": 10 + k % 3, "tid": 10 + k % 3, "time": 1000 + k,
                              "cpu": k % 2, "period": 1, "callchain": [CONTEXT_KERNEL, ip]},
                             misc=misc))
        w.close()
    return at


def sym(name: str) -> tuple[str, int, int]:
    """(section, value, size) of a demo_nic symbol."""
    mf = load_module(str(NIC))
    for sec in mf.sections:
        if not mf.sections[sec].alloc:
            continue
        t = mf.symbols(sec)
        for i, n in enumerate(t.names):
            if n == name:
                return sec, int(t.starts[i]), int(t.sizes[i])
    raise KeyError(name)


def report(path: Path, dirs: list[str] | None = None):
    rec = open_recording(path)
    rec.build_index()
    return section_report(rec, [str(MODS)] if dirs is None else dirs)


def counts_by_name(d: dict) -> dict[str, int]:
    return {s["name"]: s["samples"] for m in d["modules"] for s in m["sections"]}


def test_planted_samples_land_in_their_sections_and_symbols(tmp_path: Path) -> None:
    sec, v, size = sym("demo_nic_rx_poll")
    at = layout()
    first, last = at[sec] + v, at[sec] + v + size - 1
    esec, ev, _es = sym("demo_nic_handle_error")
    isec, iv, _is = sym("demo_nic_irq_entry")
    mf = load_module(str(NIC))
    ips = (
        [(first, Misc.KERNEL)] * 5 + [(last, Misc.KERNEL)] * 3
        + [(at[esec] + ev, Misc.KERNEL)] * 4
        + [(at[isec] + iv + 7, Misc.KERNEL)] * 6
        # first and last byte of .rodata, and one byte past its end (between sections)
        + [(at[".rodata"], Misc.KERNEL), (at[".rodata"] + mf.sections[".rodata"].size - 1,
                                          Misc.KERNEL)]
        + [(at[".rodata"] + mf.sections[".rodata"].size, Misc.KERNEL)] * 2
        + [(0xFFFFFFFF81000000, Misc.KERNEL)] * 7  # vmlinux: in no module section
        + [(0x401000, Misc.USER)] * 9
    )
    p = tmp_path / "p.data"
    plant(p, ips)
    rep = report(p)
    d = sections_json(rep, symbols=True)
    assert d["source"] == "KMOD_SEC_MAP"
    c = counts_by_name(d)
    assert c[".text"] == 8 and c[".text.unlikely"] == 4 and c[".noinstr.text"] == 6
    assert c[".rodata"] == 2 and c[".data"] == 0 and c[".exit.text"] == 0
    assert d["unattributed_kernel_samples"] == 9 and d["user_samples"] == 9
    (m,) = d["modules"]
    assert m["name"] == "demo_nic" and m["path"] == KPATH
    text = next(s for s in m["sections"] if s["name"] == ".text")
    assert text["source"] == "MMAP"  # the RFC's shrunk module map stands for .text
    assert text["symbols"] == [{"name": "demo_nic_rx_poll", "samples": 8}]
    unl = next(s for s in m["sections"] if s["name"] == ".text.unlikely")
    assert unl["symbols"] == [{"name": "demo_nic_handle_error", "samples": 4}]
    assert m["sections"][0]["name"] == ".text"  # sorted by samples
    assert d["warnings"] == []


@pytest.mark.parametrize("order", "<>")
@pytest.mark.parametrize("compress", [None, "COMPRESSED2"])
def test_big_endian_and_compressed_give_the_same_counts(tmp_path: Path, order: str,
                                                        compress: str | None) -> None:
    sec, v, _size = sym("demo_nic_csum_fold")
    at = layout()
    ips = [(at[sec] + v + k % 20, Misc.KERNEL) for k in range(50)] + [(0x1, Misc.USER)]
    p = tmp_path / "e.data"
    plant(p, ips, order=order, compress=compress)
    d = sections_json(report(p), symbols=True)
    sec_d = next(s for m in d["modules"] for s in m["sections"] if s["name"] == sec)
    assert sec_d["samples"] == 50
    assert sec_d["symbols"] == [{"name": "demo_nic_csum_fold", "samples": 50}]
    assert d["user_samples"] == 1


def test_overlapping_maps_smallest_wins(tmp_path: Path) -> None:
    at = layout()
    # a bogus big section covering .text and .text.unlikely, and a tiny one inside .text
    big = (".big", at[".text"], 0x3000)
    tiny = (".tiny", at[".text"] + 0x10, 0x10)
    ips = [(at[".text"] + 0x10, Misc.KERNEL), (at[".text"] + 0x1F, Misc.KERNEL),
           (at[".text"] + 0x20, Misc.KERNEL), (at[".text.unlikely"], Misc.KERNEL),
           (at[".text"] + 0x2FFF, Misc.KERNEL)]
    p = tmp_path / "o.data"
    plant(p, ips, rfc_text=False, extra_maps=[big, tiny])
    c = counts_by_name(sections_json(report(p)))
    assert c[".tiny"] == 2 and c[".text"] == 1 and c[".text.unlikely"] == 1
    assert c[".big"] == 1  # .text is only 0x2c9 bytes: 0x2fff falls to the big one


@pytest.mark.parametrize("ext", [".ko.xz", ".ko.zst", ".ko.gz"])
def test_compressed_module_files(tmp_path: Path, ext: str) -> None:
    d = tmp_path / "mods"
    d.mkdir()
    shutil.copy(MODS / f"demo_nic{ext}", d / f"demo_nic{ext}")
    sec, v, _ = sym("demo_nic_tx_xmit")
    p = tmp_path / "c.data"
    plant(p, [(layout()[sec] + v + 3, Misc.KERNEL)] * 4)
    out = sections_json(report(p, [str(d)]), symbols=True)
    text = next(s for s in out["modules"][0]["sections"] if s["name"] == sec)
    assert text["symbols"] == [{"name": "demo_nic_tx_xmit", "samples": 4}]
    assert out["modules"][0]["file"].endswith(ext)


def test_missing_module_file_still_counts(tmp_path: Path) -> None:
    sec, v, _ = sym("demo_nic_tx_xmit")
    p = tmp_path / "m.data"
    plant(p, [(layout()[sec] + v, Misc.KERNEL)] * 3)
    d = sections_json(report(p, [str(tmp_path / "nowhere")]), symbols=True)
    text = next(s for s in d["modules"][0]["sections"] if s["name"] == sec)
    assert text["samples"] == 3 and text["symbols"] == [{"name": NO_SYMBOL, "samples": 3}]
    assert any("not found" in w and "looked in" in w for w in d["warnings"])
    assert d["modules"][0]["file"] is None


def test_build_id_mismatch_is_warned(tmp_path: Path) -> None:
    p = tmp_path / "b.data"
    plant(p, [(layout()[".text"], Misc.KERNEL)], build_id="00" * 20)
    d = sections_json(report(p))
    assert any("build id" in w.lower() for w in d["warnings"]), d["warnings"]


def test_mmap_fallback_without_kmod_records(tmp_path: Path) -> None:
    at = layout()
    p = tmp_path / "f.data"
    plant(p, [(at[".text"] + 5, Misc.KERNEL), (at[".text"] + 0xFFFF, Misc.KERNEL),
              (at[".text"] + 0x10000, Misc.KERNEL)], with_kmod=False)
    d = sections_json(report(p))
    assert d["source"] == "MMAP"
    (m,) = d["modules"]
    assert [(s["name"], s["samples"]) for s in m["sections"]] == [(None, 2)]
    assert d["unattributed_kernel_samples"] == 1


def test_no_module_maps_at_all() -> None:
    p = Path(__file__).parent / "data" / "perf61" / "perf-normal-g.data"
    d = sections_json(report(p))
    assert d["source"] == "none" and d["modules"] == []
    assert any("no KMOD_SEC_MAP" in w for w in d["warnings"])


def test_filters_cpu_pid_time(tmp_path: Path) -> None:
    at = layout()
    p = tmp_path / "flt.data"
    plant(p, [(at[".text"] + 1, Misc.KERNEL)] * 30)
    rec = open_recording(p)
    rec.build_index()
    from perftui.analysis.filters import Filter
    smap = build_section_map(rec)
    def n(flt: Filter) -> int:
        return int(section_report(rec, [str(MODS)], flt, smap=smap).counts.per_entry.sum())
    assert n(Filter()) == 30
    assert n(Filter(cpus=frozenset({0}))) == 15
    assert n(Filter(pids=frozenset({10, 11}))) == 20
    assert n(Filter(time=(1000, 1009))) == 10


def test_lookup_is_vectorised_over_many_ips(tmp_path: Path) -> None:
    at = layout()
    p = tmp_path / "v.data"
    plant(p, [(at[".text"], Misc.KERNEL)])
    rec = open_recording(p)
    rec.build_index()
    smap = build_section_map(rec)
    ips = np.arange(at[".text"] - 1000, at[".data"] + 0x2000, 7, dtype=np.uint64)
    owner = smap.lookup(ips)
    got = [smap.entries[k].section if k >= 0 else None for k in owner]
    # the answer by construction: the ranges plant() mapped (sizes as readelf lists them),
    # one ip at a time
    sizes = _section_sizes_by_readelf()
    want = [next((name for name, start in at.items() if start <= ip < start + sizes[name]),
                 None) for ip in ips.tolist()]
    assert got == want
    assert len(ips) > 4000 and None in want and set(want) - {None} == set(at)


def test_sections_cli_json_and_filters(tmp_path: Path) -> None:
    at = layout()
    p = tmp_path / "cli.data"
    plant(p, [(at[".text"] + 1, Misc.KERNEL)] * 10)
    r = run_cli("sections", str(p), "--json", "--symbols", "--modules-dir", str(MODS),
                "--cpu", "1", "--time", "0s,0.000000004s")
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    assert d["source"] == "KMOD_SEC_MAP"
    text = next(s for s in d["modules"][0]["sections"] if s["name"] == ".text")
    assert text["samples"] == 2  # times 1000..1004, odd ones on CPU 1
    assert isinstance(text["start"], int)
    r = run_cli("sections", str(p), "--cpu", "x")
    assert r.returncode == 2


def test_per_event_counts_and_event_filter(tmp_path: Path) -> None:
    """Two events: each section says how many samples of each, and --event keeps one."""
    at = layout()
    a1 = EventAttr(type=1, size=128, config=0, sample_type=int(
        Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD),
        flags=1 << 18, ids=[7], name="cpu-clock")
    a2 = EventAttr(type=1, size=128, config=1, sample_type=a1.sample_type, flags=1 << 18,
                   ids=[8], name="task-clock")
    p = tmp_path / "two.data"
    mf = load_module(str(NIC))
    with open(p, "wb") as f:
        w = Writer(f, [a1, a2], {Feature.HOSTNAME: "t", Feature.EVENT_DESC: True})
        b = w.b
        s = mf.sections[".noinstr.text"]
        w.write(b.kmod_sec_map(".noinstr.text", KPATH, at[".noinstr.text"], s.size, s.offset))
        for k in range(10):
            w.write(b.sample({"id": 7 if k < 7 else 8, "ip": at[".noinstr.text"] + k,
                              "pid": 1, "tid": 1, "time": 10 + k, "cpu": 0, "period": 1},
                             misc=Misc.KERNEL, attr_idx=0 if k < 7 else 1))
        w.close()
    d = sections_json(report(p))
    sec = next(s for m in d["modules"] for s in m["sections"] if s["name"] == ".noinstr.text")
    assert sec["samples"] == 10 and sec["events"] == {"cpu-clock": 7, "task-clock": 3}
    r = run_cli("sections", str(p), "--json", "--event", "task-clock", "--modules-dir",
                str(MODS))
    assert r.returncode == 0, r.stderr
    sec = next(s for m in json.loads(r.stdout)["modules"] for s in m["sections"]
               if s["name"] == ".noinstr.text")
    assert sec["samples"] == 3
    r = run_cli("sections", str(p), "--event", "x")
    assert r.returncode == 2 and "cpu-clock, task-clock" in r.stderr


def _section_sizes_by_readelf() -> dict[str, int]:
    """demo_nic's section sizes, as ``readelf -SW`` lists them."""
    if shutil.which("readelf") is None:
        skip_or_fail("readelf (binutils) is not on the PATH")
    out = {}
    for ln in subprocess.run(["readelf", "-SW", str(NIC)], capture_output=True, text=True,
                             check=True).stdout.splitlines():
        if "]" not in ln or "[Nr]" in ln:
            continue
        f = ln.split("]", 1)[1].split()
        if len(f) >= 5 and f[0].startswith("."):
            out[f[0]] = int(f[4], 16)  # Name Type Address Off Size
    return out


def _text_functions_by_readelf() -> list[tuple[str, int, int]]:
    """(name, value, size) of demo_nic's sized FUNC symbols in .text, as readelf lists them."""
    if shutil.which("readelf") is None:
        skip_or_fail("readelf (binutils) is not on the PATH")
    secs = subprocess.run(["readelf", "-SW", str(NIC)], capture_output=True, text=True,
                          check=True).stdout
    ndx = next(int(ln.split("]")[0].split("[")[1]) for ln in secs.splitlines()
               if "]" in ln and ln.split("]")[1].split()[:1] == [".text"])
    out = []
    for ln in subprocess.run(["readelf", "-sW", str(NIC)], capture_output=True, text=True,
                             check=True).stdout.splitlines():
        f = ln.split()
        if len(f) == 8 and f[3] == "FUNC" and f[6] == str(ndx) and int(f[2]):
            out.append((f[7], int(f[1], 16), int(f[2])))
    return out


def test_mmap_fallback_names_symbols_from_assumed_text(tmp_path: Path) -> None:
    """Without KMOD_SEC_MAP, a module's symbols are named from .text at the MMAP start (perf's
    rule), and every view says the .text is assumed."""
    funcs = _text_functions_by_readelf()
    assert len(funcs) >= 3
    at = layout()
    ips = [(at[".text"] + value + size // 2, Misc.KERNEL) for _n, value, size in funcs
           for _ in range(2)]
    p = tmp_path / "f.data"
    plant(p, ips, with_kmod=False)
    rep = report(p)
    d = sections_json(rep, symbols=True)
    (m,) = d["modules"]
    (s,) = m["sections"]
    assert s["name"] is None and s["source"] == "MMAP"
    assert s["symbols_note"] == "assumed .text: no section map in this recording"
    assert sorted((x["name"], x["samples"]) for x in s["symbols"]) == \
        sorted((n, 2) for n, _v, _s in funcs)
    out = run_cli("sections", str(p), "--symbols", "--modules-dir", str(MODS))
    assert out.returncode == 0, out.stderr
    assert "(assumed .text: no section map in this recording)" in out.stdout
    # without the module file there is nothing to assume: no note, no names
    d = sections_json(report(p, dirs=[]), symbols=True)
    (s,) = d["modules"][0]["sections"]
    assert "symbols_note" not in s
    assert s["symbols"] == [{"name": NO_SYMBOL, "samples": len(ips)}]
