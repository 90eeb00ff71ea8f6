"""Recordings built with perftui's writer, for what the corpus lacks (test helpers)."""

from __future__ import annotations

import io
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from testapi import functions

from perftui.perfdata import EventAttr, Feature, Sample
from perftui.perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from perftui.perfdata.writer import Writer
from perftui.symbols.code.elfcode import open_elf

ALL_SAMPLE = (
    Sample.IDENTIFIER | Sample.IP | Sample.TID | Sample.TIME | Sample.ADDR | Sample.ID
    | Sample.STREAM_ID | Sample.CPU | Sample.PERIOD | Sample.READ | Sample.CALLCHAIN
    | Sample.RAW | Sample.BRANCH_STACK | Sample.REGS_USER | Sample.STACK_USER
    | Sample.WEIGHT_STRUCT | Sample.DATA_SRC | Sample.TRANSACTION | Sample.REGS_INTR
    | Sample.PHYS_ADDR | Sample.CGROUP | Sample.DATA_PAGE_SIZE | Sample.CODE_PAGE_SIZE
    | Sample.AUX
)
# disabled, inherit, mmap, comm, freq, sample_id_all, mmap2, precise_ip=2 (exercises the
# two-bit field under byte swapping)
FLAGS = 1 | 2 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 18 | 1 << 23 | 2 << 15


def full_attr(ids: list[int], size: int = 136) -> EventAttr:
    return EventAttr(
        type=4, size=size, config=0x1234, sample_period=4000, sample_type=int(ALL_SAMPLE),
        read_format=0b11111, flags=FLAGS, branch_sample_type=1 << 17,
        sample_regs_user=0b1011, sample_stack_user=64, clockid=1, sample_regs_intr=0b11,
        aux_watermark=4096, sample_max_stack=127, aux_sample_size=16, sig_data=7,
        config3=9 if size >= 136 else 0, ids=ids, name="raw-ev")


def full_sample(i: int) -> dict[str, Any]:
    return {
        "id": 11, "ip": 0xFFFFFFFF81000000 + i, "pid": 100 + i, "tid": 200 + i,
        "time": 1_000_000 + 1000 * i, "addr": 0xDEAD, "stream_id": 11, "cpu": i % 4,
        "period": 4000,
        "read": {"time_enabled": 5, "time_running": 4,
                 "values": [{"value": 1, "id": 11, "lost": 0},
                            {"value": 2, "id": 12, "lost": 3}]},
        "callchain": [CONTEXT_KERNEL, 0xFFFFFFFF81000000 + i, 0xFFFFFFFF81000100,
                      CONTEXT_USER, 0x401000],
        "raw": bytes(range(12)),
        "branch_stack": {"hw_idx": 3, "entries": [
            {"from": 0x401000, "to": 0x401100, "flags": 0x1},
            {"from": 0x401200, "to": 0x401300, "flags": 0x2}]},
        "regs_user": {"abi": 2, "regs": [1, 2, 3]},
        "stack_user": {"size": 16, "data": b"S" * 16, "dyn_size": 8},
        "weight_struct": {"var1_dw": 77, "var2_w": 5, "var3_w": 6},
        "data_src": 0x68100142, "transaction": 0x1_0000_0002,
        "regs_intr": {"abi": 2, "regs": [9, 8]},
        "phys_addr": 0x1000, "cgroup": 42, "data_page_size": 4096, "code_page_size": 4096,
        "aux": b"AUXDATA!",
    }


FEATURES: dict[int, Any] = {
    Feature.HOSTNAME: "bigbox", Feature.OSRELEASE: "6.1.0-test", Feature.VERSION: "6.1.0",
    Feature.ARCH: "s390x", Feature.NRCPUS: {"nr_cpus_avail": 4, "nr_cpus_online": 4},
    Feature.CMDLINE: ["/usr/bin/perf", "record", "-a"], Feature.TOTAL_MEM: 1024,
    Feature.SAMPLE_TIME: {"first": 1_000_000, "last": 2_000_000},
}


def kitchen_sink(path: Path, order: str = "<", mode: str = "file",
                 compress: str | None = None, attr_size: int = 136) -> list[bytes]:
    """A recording with every kernel record type and a sample using every field.

    Returns the records written, in order (decoded they must give the same fields).
    """
    attrs = [full_attr([11, 12], attr_size)]
    feats = dict(FEATURES)
    feats[Feature.EVENT_DESC] = True  # encoded from the attrs
    with open(path, "wb") as f:
        w = Writer(f, attrs, feats, mode=mode, order=order, compress=compress)
        b = w.b
        sid = {"pid": 7, "tid": 8, "time": 999, "id": 11, "stream_id": 11, "cpu": 1}
        recs = [
            b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": 0xFFFFFFFF81000000, "len": 0x100000,
                              "pgoff": 0xFFFFFFFF81000000, "filename": "[kernel.kallsyms]_text"},
                     misc=Misc.KERNEL),
            b.kmod_sec_map(".noinstr.text", "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko",
                           0xFFFFFFFFC0A3C000, 0x1C0, 0x5F40),
            b.user("FINISHED_INIT"),
        ]
        for r in recs:
            w.write(r)
        w.start_compression()
        live = [
            b.kernel("COMM", {"pid": 7, "tid": 8, "comm": "worker"}, misc=Misc.COMM_EXEC,
                     sample_id=sid),
            b.kernel("MMAP2", {"pid": 7, "tid": 8, "addr": 0x400000, "len": 0x1000, "pgoff": 0,
                               "maj": 8, "min": 1, "ino": 1234, "ino_generation": 1,
                               "prot": 5, "flags": 2, "filename": "/usr/bin/worker"},
                     misc=Misc.USER, sample_id=sid),
            b.kernel("MMAP2", {"pid": 7, "tid": 8, "addr": 0x500000, "len": 0x1000, "pgoff": 0,
                               "build_id": "ab" * 20, "prot": 5, "flags": 2,
                               "filename": "/usr/lib/libx.so"}, misc=Misc.USER, sample_id=sid),
            b.kernel("FORK", {"pid": 9, "ppid": 7, "tid": 9, "ptid": 8, "time": 999},
                     sample_id=sid),
            b.kernel("EXIT", {"pid": 9, "ppid": 7, "tid": 9, "ptid": 8, "time": 1999},
                     sample_id=sid),
            b.kernel("LOST", {"id": 11, "lost": 5}, sample_id=sid),
            b.kernel("THROTTLE", {"time": 5, "id": 11, "stream_id": 11}, sample_id=sid),
            b.kernel("UNTHROTTLE", {"time": 6, "id": 11, "stream_id": 11}, sample_id=sid),
            b.kernel("AUX", {"aux_offset": 0, "aux_size": 4096, "flags": 1}, sample_id=sid),
            b.kernel("ITRACE_START", {"pid": 7, "tid": 8}, sample_id=sid),
            b.kernel("LOST_SAMPLES", {"lost": 3}, sample_id=sid),
            b.kernel("SWITCH", {}, misc=Misc.SWITCH_OUT, sample_id=sid),
            b.kernel("SWITCH_CPU_WIDE", {"next_prev_pid": 3, "next_prev_tid": 4}, sample_id=sid),
            b.kernel("NAMESPACES", {"pid": 7, "tid": 8, "namespaces": [
                {"dev": 1, "ino": 2}, {"dev": 3, "ino": 4}]}, sample_id=sid),
            b.kernel("KSYMBOL", {"addr": 0xFFFFFFFFA0000000, "len": 64, "ksym_type": 1,
                                 "flags": 0, "name": "bpf_prog_x"}, sample_id=sid),
            b.kernel("BPF_EVENT", {"event_type": 1, "flags": 0, "id": 5, "tag": b"12345678"},
                     sample_id=sid),
            b.kernel("CGROUP", {"id": 42, "path": "/sys/fs/cgroup/x"}, sample_id=sid),
            b.kernel("TEXT_POKE", {"addr": 0xFFFFFFFF81000010, "old_len": 2, "new_len": 2,
                                   "old_bytes": b"\x90\x90", "new_bytes": b"\xeb\x00"},
                     sample_id=sid),
            b.kernel("AUX_OUTPUT_HW_ID", {"hw_id": 3}, sample_id=sid),
            b.kernel("CALLCHAIN_DEFERRED", {"cookie": 77, "ips": [1, 2, 3]}, sample_id=sid),
            b.sample(full_sample(0), misc=Misc.KERNEL),
            b.sample(full_sample(1), misc=Misc.USER),
            b.user("FINISHED_ROUND"),
        ]
        for r in live:
            w.write(r)
        w.close()
    return recs + live


def to_bytes(path: Path) -> io.BytesIO:
    return io.BytesIO(path.read_bytes())


# -- hostile strings: what the browser must show literally, never interpret ---------------
EVIL_COMM = b"[bold red]x\x1b[31m"  # Rich markup and an SGR escape in a comm
BAD_COMM = b"bad\xff\xfename"  # invalid UTF-8
EVIL_KO = "/lib/modules/6.1.0-test/[link=http://x]evil/evil.ko"  # a markup link in a path
EVIL_SECTION = ".text\x1b]0;title\x07"  # an OSC sequence that would set the window title
EVIL_LIB = b"/tmp/[link=http://x]\xff\xfelib\x1b]0;title\x07.so"
EVIL_BASE = 0xFFFFFFFFC0B00000


def hostile(path: Path, samples: int = 20) -> Path:
    """A recording whose comms, file names, section name and host name attack a terminal."""
    attr = EventAttr(type=1, size=128, sample_type=int(
        Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD | Sample.CALLCHAIN),
        flags=1 << 18, ids=[7], name="cpu-clock")
    feats = {Feature.OSRELEASE: "6.1.0-test", Feature.HOSTNAME: "host[b]\x1b[2J"}
    with open(path, "wb") as f:
        w = Writer(f, [attr], feats)
        b = w.b
        for tid, comm in ((10, EVIL_COMM), (11, BAD_COMM)):
            sid = {"pid": tid, "tid": tid, "time": 900, "cpu": 0}
            w.write(b.kernel("COMM", {"pid": tid, "tid": tid, "comm": comm}, sample_id=sid))
        w.write(b.kmod_sec_map(EVIL_SECTION, EVIL_KO, EVIL_BASE, 0x1000, 0x40))
        w.write(b.kernel("MMAP2", {"pid": 10, "tid": 10, "addr": 0x400000, "len": 0x1000,
                                   "pgoff": 0, "prot": 5, "flags": 2, "filename": EVIL_LIB},
                         misc=Misc.USER, sample_id={"pid": 10, "tid": 10, "time": 950, "cpu": 0}))
        w.write(b.user("FINISHED_INIT"))
        for k in range(samples):
            tid = 10 + k % 2
            ip = EVIL_BASE + 0x10 * k
            w.write(b.sample({"ip": ip, "pid": tid, "tid": tid, "time": 1000 + k, "cpu": k % 2,
                              "period": 1, "callchain": [CONTEXT_KERNEL, ip]}, misc=Misc.KERNEL))
        w.close()
    return path


# -- module samples planted on known bytes (annotate tests) ---------------------------------
MODULES = Path(__file__).parents[1] / "perftui" / "demo" / "modules"
PLANT_SECTIONS = (".text", ".text.unlikely", ".noinstr.text")


@dataclass
class Planted:
    module: str  # file stem (demo-kvm)
    path: str  # the recorded path
    loads: dict[str, int]  # section -> load address
    functions: list[tuple[str, str, int, int]]  # (section, name, section offset, size)


PLANT_BASES = {"demo-kvm": 0xFFFFFFFFC0A3C000, "demo_nic": 0xFFFFFFFFC0B00000,
               "demo_crc": 0xFFFFFFFFC0C41000}


def plant_module_samples(path: Path, text_in_kmod: bool) -> list[Planted]:
    """A recording of samples on the first, middle and last byte (periods 1, 2 and 4) of
    every sized function of ``.text``, ``.text.unlikely`` and ``.noinstr.text`` of each
    demo module, its sections placed page by page from :data:`PLANT_BASES`: ``.text`` as
    the module's MMAP (as an RFC perf writes it; also as a KMOD_SEC_MAP record with
    ``text_in_kmod``), the other allocated sections but ``.init*`` as KMOD_SEC_MAP."""
    attr = EventAttr(type=1, size=128, config=0, sample_period=1000,
                     sample_type=int(Sample.IP | Sample.TID | Sample.TIME | Sample.PERIOD),
                     flags=1 << 8 | 1 << 9 | 1 << 18 | 1 << 23, ids=[7], name="cpu-clock")
    planted = []
    with open(path, "wb") as f:
        w = Writer(f, [attr], {Feature.OSRELEASE: "6.1.0-test"})
        b = w.b
        t = 1_000_000
        samples = []
        for stem, base in PLANT_BASES.items():
            img = open_elf(str(MODULES / f"{stem}.ko"))
            rec_path = f"/lib/modules/6.1.0-test/extra/{stem}.ko"
            loads, addr = {}, base
            for s in img.sections:
                if s.flags & 2 and s.size and not s.name.startswith(".init") and \
                        s.name not in (".modinfo", "__versions"):
                    loads[s.name] = addr
                    addr += (s.size + 0xFFF) & ~0xFFF
            w.write(b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": loads[".text"],
                                      "len": img.section(".text").size, "pgoff": 0,
                                      "filename": rec_path}, misc=Misc.KERNEL))
            for name, at in loads.items():
                if name != ".text" or text_in_kmod:
                    sec = img.section(name)
                    w.write(b.kmod_sec_map(name, rec_path, at, sec.size, sec.offset))
            funcs = [(img.sections[fn.section].name, fn.name, fn.value, fn.size)
                     for fn in functions(img) if fn.size and
                     img.sections[fn.section].name in PLANT_SECTIONS]
            for sec, _, off, size in funcs:
                for k, o in enumerate((0, size // 2, size - 1)):
                    samples.append((loads[sec] + off + o, 1 << k))
            planted.append(Planted(stem, rec_path, loads, funcs))
        for ip, period in samples:
            t += 1000
            w.write(b.sample({"ip": ip, "pid": -1, "tid": 0, "time": t, "period": period},
                             misc=Misc.KERNEL))
        w.close()
    return planted


def module_recording(path: Path, plan: dict[tuple[str, str, str], int],
                     hostname: str = "demo-host", event: str = "cpu-clock",
                     config: int = 0) -> dict[tuple[str, str, str], int]:
    """A kernel recording of the demo modules (perftui/demo/modules) placed as the demo
    places them: each module's ``.text`` as its MMAP, its other sections as KMOD_SEC_MAP
    records, and ``plan[(module file name, section, symbol)]`` samples planted at that
    symbol, one sample a millisecond in the plan's sorted order.  Periods vary from sample
    to sample (shares are of the period, not of the count).  Returns the period planted
    per (module, section, symbol): the test's oracle.
    """
    from perftui.demo.generate import place_modules

    mods = {p.module: p for p in place_modules()}
    attr = EventAttr(type=1, size=128, config=config, sample_period=1000,
                     sample_type=int(Sample.IP | Sample.TID | Sample.TIME | Sample.CPU
                                     | Sample.PERIOD),
                     flags=1 | 2 | 1 << 8 | 1 << 9 | 1 << 18 | 1 << 23, ids=[7],
                     name=event)
    feats = {Feature.HOSTNAME: hostname, Feature.OSRELEASE: "6.1.0-57-amd64",
             Feature.ARCH: "x86_64", Feature.EVENT_DESC: True,
             Feature.NRCPUS: {"nr_cpus_avail": 1, "nr_cpus_online": 1}}
    periods: dict[tuple[str, str, str], int] = {}
    with open(path, "wb") as f:
        w = Writer(f, [attr], feats)
        b = w.b
        for p in sorted(mods.values(), key=lambda p: p.sections[".text"]):
            w.write(b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": p.sections[".text"],
                                      "len": p.mf.sections[".text"].size, "pgoff": 0,
                                      "filename": p.path}, misc=Misc.KERNEL))
            for sec, addr in sorted(p.sections.items(), key=lambda kv: kv[1]):
                if sec != ".text" and not sec.startswith(".init"):
                    s = p.mf.sections[sec]
                    w.write(b.kmod_sec_map(sec, p.path, addr, s.size, s.offset))
        w.write(b.kernel("COMM", {"pid": 500, "tid": 500, "comm": "worker"}))
        t = 1_000_000_000
        k = 0
        for (module, section, symbol), n in sorted(plan.items()):
            p = mods[module]
            table = p.mf.symbols(section)
            i = list(table.names).index(symbol)
            ip = p.sections[section] + int(table.starts[i])
            size = max(1, int(table.sizes[i]))
            for j in range(n):
                period = 1000 + 250 * (k % 5)
                k += 1
                t += 1_000_000
                periods[module, section, symbol] = periods.get((module, section, symbol),
                                                               0) + period
                w.write(b.sample({"ip": ip + (j % size), "pid": 500, "tid": 500, "time": t,
                                  "cpu": 0, "period": period}, misc=Misc.KERNEL))
        w.close()
    return periods
