"""Make the demo recording: a realistic ``perf record -a -g`` of a box running the demo modules.

Four CPUs over six seconds: a VM (``qemu-system-x86`` vCPU threads in ``demo-kvm``, whose
hottest section is ``.noinstr.text``, not ``.text``), a network benchmark (``iperf3`` and
``ksoftirqd`` in ``demo_nic``), a checksum job (``dd`` in ``demo_crc``), a shell and
kernel samples outside any module.  Start-up records are written as an RFC-patched perf
writes them (docs/format.md, "Type 83"): each module's ``.text`` as its shrunk MMAP, every other
SHF_ALLOC section but ``.init*`` as a KMOD_SEC_MAP record.  Deterministic for a seed.
"""

from __future__ import annotations

import random
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..perfdata import EventAttr, Feature, Sample
from ..perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from ..perfdata.writer import Writer
from ..symbols.modules.kofile import ModuleFile, load_module

MODULES_DIR = Path(__file__).parent / "modules"
OS_RELEASE = "6.1.0-57-amd64"
MODULE_PATH = f"/lib/modules/{OS_RELEASE}/updates/perftui-demo/{{}}.ko"
KERNEL_TEXT = 0xFFFFFFFF81000000
NCPU = 4
SECONDS = 6
FREQ = 1000  # samples per second per busy CPU

# module file -> load base; sections follow each other, page aligned, as the loader does
MODULE_BASES = {"demo-kvm": 0xFFFFFFFFC0A3C000, "demo_nic": 0xFFFFFFFFC0B00000,
                "demo_crc": 0xFFFFFFFFC0C41000}
#: the kernel MMAP's length: perf writes the kernel text's ([kernel.kallsyms]_text up to
#: _etext); every function of VMLINUX_FUNCS lies inside it
KERNEL_LEN = 0x1E01000
VMLINUX_FUNCS = [("native_safe_halt", 0x1B7B9A0, 0x20), ("copy_user_generic_string",
                 0x1B7BC20, 0x40), ("clear_page_erms", 0x1B6AA90, 0x30),
                 ("__softirqentry_text_start", 0x1E00000, 0x80), ("do_syscall_64", 0x1B6E140,
                 0x90), ("_raw_spin_unlock_irqrestore", 0x1B80F10, 0x30)]
#: the demo kernel's /proc/kallsyms (``perftui --demo`` reads it as ``--kallsyms``): the
#: functions the samples land in, the callers in their callchains, and what lies between
#: (kallsyms has no sizes: a symbol ends where the next starts, as perf reads it)
DEMO_KALLSYMS = sorted([(0, "T", "_text"), (0, "T", "_stext"),
                        *((off, "T", name) for name, off, _size in VMLINUX_FUNCS),
                        (0x1B6AAC0, "T", "clear_page_rep"), (0x1B6E1D0, "T", "do_int80_syscall_32"),
                        (0x1B7B9C0, "T", "default_idle"), (0x1B7BA40, "T", "default_idle_call"),
                        (0x1B7BC60, "T", "copy_user_enhanced_fast_string"),
                        (0x1B80F40, "T", "_raw_spin_lock"), (0x1E00080, "T", "_etext")])


def kallsyms_text() -> str:
    """:data:`DEMO_KALLSYMS` in /proc/kallsyms's format."""
    return "".join(f"{KERNEL_TEXT + off:016x} {kind} {name}\n"
                   for off, kind, name in DEMO_KALLSYMS)


USER_IMAGE = {"bash": "bash", "qemu": "qemu", "vcpu0": "qemu", "vcpu1": "qemu",
              "iperf3": "iperf3", "dd": "dd"}


@dataclass
class Proc:
    pid: int
    tid: int
    comm: str
    parent: int


@dataclass
class Placed:
    module: str
    path: str
    mf: ModuleFile
    sections: dict[str, int]  # section -> load address


def place_modules() -> list[Placed]:
    out = []
    for name, base in MODULE_BASES.items():
        mf = load_module(str(MODULES_DIR / f"{name}.ko"))
        addr = base
        secs: dict[str, int] = {}
        # the loader drops .modinfo and __versions (no SHF_ALLOC once loaded, no sysfs file)
        dropped = (".text", ".modinfo", "__versions")
        placement = [".text", *sorted(n for n, s in mf.sections.items()
                                  if s.alloc and s.size and n not in dropped)]
        for n in placement:
            if n not in mf.sections:
                continue
            secs[n] = addr
            addr += (mf.sections[n].size + 0xFFF) & ~0xFFF
        out.append(Placed(name, MODULE_PATH.format(name), mf, secs))
    return out


@dataclass
class DemoPlan:
    """What the generator put into the recording, counted as it wrote it: the oracle of the
    tests that read the demo back.

    ``records`` counts every record by type name (KMOD_SEC_MAP for the RFC records);
    ``kernel_samples`` the samples with misc KERNEL; ``in_sections`` the kernel samples by
    (module file name, section) and ``in_symbols`` by (module file name, section, symbol);
    ``outside_modules`` the kernel samples in vmlinux (idle and kernel functions);
    ``placed`` where each mapped module section lies: (module file name, section) ->
    (load address, size); ``by_tid`` the samples of each thread; ``callers`` the samples
    whose callchain names a module function as the caller, by (module file name, or ""
    for vmlinux; the sampled symbol; that caller).
    """

    path: Path
    records: Counter[str] = field(default_factory=Counter)
    kernel_samples: int = 0
    outside_modules: int = 0
    in_sections: Counter[tuple[str, str]] = field(default_factory=Counter)
    in_symbols: Counter[tuple[str, str, str]] = field(default_factory=Counter)
    placed: dict[tuple[str, str], tuple[int, int]] = field(default_factory=dict)
    by_tid: Counter[int] = field(default_factory=Counter)
    callers: Counter[tuple[str, str, str]] = field(default_factory=Counter)

    @property
    def total(self) -> int:
        return sum(self.records.values())

    @property
    def samples(self) -> int:
        return self.records["SAMPLE"]


@dataclass(frozen=True)
class Spot:
    """A place samples land: a symbol (``module`` "" for vmlinux) and its address range."""

    module: str
    section: str
    symbol: str
    ip: int
    size: int


def _sym_ips(p: Placed, section: str, names: list[str]) -> list[Spot]:
    """Each named symbol of ``section`` as placed in memory."""
    table = p.mf.symbols(section)
    out = []
    for i, n in enumerate(table.names):
        if n in names:
            out.append(Spot(p.module, section, n, p.sections[section] + int(table.starts[i]),
                            max(1, int(table.sizes[i]))))
    return out


#: The "after" recording of ``perftui diff --demo``: the same box after a driver patch that
#: moved demo_nic's checksum time into its ``.text.unlikely`` error path, and a KVM change
#: that moved time from ``.noinstr.text`` to ``.text``.
PATCHED_SEED = 6117


def generate(path: str | Path, seed: int = 6116, patched: bool = False) -> Path:
    """Write the demo recording to ``path`` (deterministic for ``seed``); ``patched``: the
    "after" recording of the diff demo."""
    return write_demo(path, seed, patched).path


def write_demo(path: str | Path, seed: int = 6116, patched: bool = False) -> DemoPlan:
    """Write the demo recording to ``path``; returns what it holds (deterministic)."""
    rng = random.Random(seed)
    mods = {p.module: p for p in place_modules()}
    kvm, nic, crc = mods["demo-kvm"], mods["demo_nic"], mods["demo_crc"]
    # hot spots: (weight, [(ip, size)])
    kvm_hot = [
        (45 if patched else 55, _sym_ips(kvm, ".noinstr.text", ["__demo_svm_vcpu_run"])),
        (12, _sym_ips(kvm, ".noinstr.text", ["demo_svm_vcpu_enter_exit",
                                             "demo_kvm_guest_state_load",
                                             "demo_kvm_guest_state_save"])),
        (24 if patched else 14, _sym_ips(kvm, ".text", [
            "demo_kvm_handle_exit", "demo_svm_handle_npf", "demo_kvm_emulate_cpuid",
            "demo_kvm_arch_vcpu_ioctl_run"])),
        (3, _sym_ips(kvm, ".text.unlikely", ["demo_kvm_report_emulation_failure"])),
    ]
    nic_hot = [
        (40, _sym_ips(nic, ".text", ["demo_nic_rx_poll", "demo_nic_rx_one"])),
        (8 if patched else 25, _sym_ips(nic, ".text", [
            "demo_nic_csum_partial", "demo_nic_csum_fold", "demo_nic_csum_ipv4_hdr"])),
        (15, _sym_ips(nic, ".text", ["demo_nic_tx_xmit", "demo_nic_refill_rx"])),
        (10, _sym_ips(nic, ".noinstr.text", ["demo_nic_irq_entry"])),
        (19 if patched else 2, _sym_ips(nic, ".text.unlikely", ["demo_nic_handle_error"])),
    ]
    crc_hot = [(70, _sym_ips(crc, ".text", ["demo_crc32_le_slice4"])),
               (20, _sym_ips(crc, ".text", ["demo_crc_update", "demo_crc_fold_64"]))]
    vmlinux = [Spot("", ".text", n, KERNEL_TEXT + off, size) for n, off, size in VMLINUX_FUNCS]

    procs = {
        "bash": Proc(2101, 2101, "bash", 1),
        "qemu": Proc(3150, 3150, "qemu-system-x86", 2101),
        "vcpu0": Proc(3150, 3161, "CPU 0/KVM", 3150),
        "vcpu1": Proc(3150, 3162, "CPU 1/KVM", 3150),
        "iperf3": Proc(3300, 3300, "iperf3", 2101),
        "ksoftirqd": Proc(16, 16, "ksoftirqd/1", 2),
        "dd": Proc(3400, 3400, "dd", 2101),
        "swapper": Proc(0, 0, "swapper/2", 0),
    }
    # what each CPU runs: list of (thread key, weight, kind)
    schedule = {
        0: [("vcpu0", 80, "kvm"), ("bash", 5, "user"), ("swapper", 15, "idle")],
        1: [("iperf3", 45, "nic"), ("ksoftirqd", 35, "nic"), ("vcpu1", 20, "kvm")],
        2: [("vcpu1", 60, "kvm"), ("dd", 25, "crc"), ("swapper", 15, "idle")],
        3: [("dd", 50, "crc"), ("iperf3", 20, "nic"), ("bash", 10, "user"),
            ("swapper", 20, "idle")],
    }
    attr = EventAttr(type=1, size=128, config=0, sample_period=FREQ,
                     sample_type=int(Sample.IP | Sample.TID | Sample.TIME | Sample.CPU
                                     | Sample.PERIOD | Sample.CALLCHAIN),
                     flags=(1 | 2 | 1 << 8 | 1 << 9 | 1 << 10 | 1 << 13 | 1 << 18 | 1 << 20
                            | 1 << 23 | 1 << 24 | 1 << 29 | 1 << 30),
                     ids=[301 + c for c in range(NCPU)], name="cpu-clock")
    t0 = 5_012_345_678_901
    t_end = t0 + SECONDS * 1_000_000_000
    build_ids = [{"filename": p.path, "build_id": p.mf.build_id or "", "pid": -1,
                  "misc": Misc.KERNEL | 0x8000} for p in mods.values() if p.mf.build_id]
    features: dict[int, Any] = {
        Feature.HOSTNAME: "demo-host", Feature.OSRELEASE: OS_RELEASE,
        Feature.VERSION: "6.1.187", Feature.ARCH: "x86_64",
        Feature.NRCPUS: {"nr_cpus_avail": NCPU, "nr_cpus_online": NCPU},
        Feature.CPUDESC: "AMD EPYC 7713 64-Core Processor",
        Feature.CPUID: "AuthenticAMD,25,1,1", Feature.TOTAL_MEM: 32_779_224,
        Feature.CMDLINE: ["/usr/bin/perf", "record", "-a", "-g", "-e", "cpu-clock", "-F",
                          str(FREQ), "--", "sleep", str(SECONDS)],
        Feature.EVENT_DESC: True,
        Feature.SAMPLE_TIME: {"first": t0, "last": t_end},
        Feature.BUILD_ID: build_ids,
    }
    plan = DemoPlan(Path(path))
    with open(path, "wb") as f:
        w = Writer(f, [attr], features)
        b = w.b

        def put(kind: str, raw: bytes) -> None:
            plan.records[kind] += 1
            w.write(raw)

        put("MMAP", b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": KERNEL_TEXT, "len": KERNEL_LEN,
                                  "pgoff": KERNEL_TEXT, "filename": "[kernel.kallsyms]_text"},
                         misc=Misc.KERNEL))
        for p in sorted(mods.values(), key=lambda p: p.sections[".text"]):
            text = p.mf.sections[".text"]
            plan.placed[p.module, ".text"] = (p.sections[".text"], text.size)
            put("MMAP", b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": p.sections[".text"],
                                      "len": text.size, "pgoff": 0, "filename": p.path},
                             misc=Misc.KERNEL))
            for sec, addr in sorted(p.sections.items(), key=lambda kv: kv[1]):
                if sec == ".text" or sec.startswith(".init"):
                    continue
                s = p.mf.sections[sec]
                plan.placed[p.module, sec] = (addr, s.size)
                put("KMOD_SEC_MAP", b.kmod_sec_map(sec, p.path, addr, s.size, s.offset))
        for key in ("bash", "qemu", "vcpu0", "vcpu1", "iperf3", "ksoftirqd", "dd"):
            pr = procs[key]
            put("COMM", b.kernel("COMM", {"pid": pr.pid, "tid": pr.tid, "comm": pr.comm}))
        put("FINISHED_INIT", b.user("FINISHED_INIT"))

        user_base = {"bash": 0x55D0C3A00000, "qemu": 0x5581E2400000, "iperf3": 0x55F1B1200000,
                     "dd": 0x5603AF600000}
        for key, image, base, size in (("bash", "/usr/bin/bash", user_base["bash"], 0xE5000),
                                       ("qemu", "/usr/bin/qemu-system-x86_64",
                                        user_base["qemu"], 0x5A3000),
                                       ("iperf3", "/usr/bin/iperf3", user_base["iperf3"],
                                        0x19000)):
            pr = procs[key]
            put("MMAP2", b.kernel("MMAP2", {
                "pid": pr.pid, "tid": pr.tid, "addr": base, "len": size, "pgoff": 0x1000,
                "maj": 254, "min": 1, "ino": 1700000 + pr.pid, "ino_generation": 0,
                "prot": 5, "flags": 2, "filename": image}, misc=Misc.USER))
        events: list[tuple[int, int, str, bytes]] = []
        sid = {"cpu": 3}
        # process lifetime events: dd starts late and exits early
        t_dd0, t_dd1 = t0 + 1_500_000_000, t0 + 4_800_000_000
        dd = procs["dd"]
        events.append((t_dd0 - 1000, 3, "FORK", b.kernel("FORK", {"pid": dd.pid, "ppid": 2101,
                                                       "tid": dd.tid, "ptid": 2101,
                                                       "time": t_dd0 - 1000},
                                              sample_id={**sid, "pid": 2101, "tid": 2101,
                                                         "time": t_dd0 - 1000})))
        events.append((t_dd0, 3, "COMM", b.kernel("COMM", {"pid": dd.pid, "tid": dd.tid,
                                                            "comm": "dd"},
                                       misc=Misc.COMM_EXEC,
                                       sample_id={**sid, "pid": dd.pid, "tid": dd.tid,
                                                  "time": t_dd0})))
        events.append((t_dd0 + 5000, 3, "MMAP2", b.kernel("MMAP2", {
            "pid": dd.pid, "tid": dd.tid, "addr": user_base["dd"], "len": 0x12000,
            "pgoff": 0x2000, "maj": 254, "min": 1, "ino": 1835027, "ino_generation": 0,
            "prot": 5, "flags": 2, "filename": "/usr/bin/dd"}, misc=Misc.USER,
            sample_id={**sid, "pid": dd.pid, "tid": dd.tid, "time": t_dd0 + 5000})))
        events.append((t_dd1, 3, "EXIT", b.kernel("EXIT", {"pid": dd.pid, "ppid": 2101,
                                                            "tid": dd.tid, "ptid": 2101,
                                                            "time": t_dd1},
                                       sample_id={**sid, "pid": dd.pid, "tid": dd.tid,
                                                  "time": t_dd1})))
        hot = {"kvm": kvm_hot, "nic": nic_hot, "crc": crc_hot}
        callers = {"kvm": _sym_ips(kvm, ".text", ["demo_kvm_arch_vcpu_ioctl_run"]),
                   "nic": _sym_ips(nic, ".noinstr.text", ["demo_nic_irq_entry"]),
                   "crc": _sym_ips(crc, ".text", ["demo_crc_update"])}
        period = 1_000_000_000 // FREQ
        for cpu, jobs in schedule.items():
            t = t0 + rng.randrange(period)
            while t < t_end:
                key, _w, kind = rng.choices(jobs, weights=[j[1] for j in jobs])[0]
                if kind == "idle" and rng.random() < 0.9:  # tickless idle: few samples
                    t += period
                    continue
                pr = procs[key]
                if key == "vcpu1" and not t0 + 2_000_000_000 < t < t0 + 4_500_000_000:
                    key, kind, pr = "swapper", "idle", procs["swapper"]  # the guest idles
                if key == "dd" and not t_dd0 + 10_000 < t < t_dd1:
                    key, kind, pr = "swapper", "idle", procs["swapper"]
                # phase: network burst in the middle seconds
                if kind == "nic" and not (t0 + 1_000_000_000 < t < t0 + 5_000_000_000) \
                        and rng.random() < 0.7:
                    key, kind, pr = "swapper", "idle", procs["swapper"]
                ub = user_base.get(USER_IMAGE.get(key, ""), 0)
                uip = ub + 0x1000 + rng.randrange(0x8000)
                if kind == "user":
                    ip, misc = uip, Misc.USER
                    chain = [CONTEXT_USER, ip, ub + 0x2F00]
                elif kind == "idle":
                    spot = vmlinux[0]
                    ip, misc = spot.ip + rng.randrange(spot.size), Misc.KERNEL
                    chain = [CONTEXT_KERNEL, ip, KERNEL_TEXT + 0x1B7BA00]
                else:
                    group = rng.choices(hot[kind], weights=[g[0] for g in hot[kind]])[0][1]
                    if rng.random() < 0.08:
                        spot = rng.choice(vmlinux[1:])
                    else:
                        spot = rng.choice(group)
                    ip, misc = spot.ip + rng.randrange(spot.size), Misc.KERNEL
                    chain = [CONTEXT_KERNEL, ip, callers[kind][0].ip + 0x1B,
                             KERNEL_TEXT + 0x1B6E1A0]
                    if ub:
                        chain += [CONTEXT_USER, uip]
                plan.by_tid[pr.tid] += 1
                if kind in callers:
                    plan.callers[spot.module, spot.symbol, callers[kind][0].symbol] += 1
                if misc == Misc.KERNEL:
                    plan.kernel_samples += 1
                    if spot.module:
                        plan.in_sections[spot.module, spot.section] += 1
                        plan.in_symbols[spot.module, spot.section, spot.symbol] += 1
                    else:
                        plan.outside_modules += 1
                events.append((t, cpu, "SAMPLE", b.sample({
                    "ip": ip, "pid": pr.pid, "tid": pr.tid, "time": t, "cpu": cpu,
                    "period": period, "callchain": chain}, misc=misc)))
                t += period + rng.randrange(-20_000, 20_000)
        # perf drains the ring buffers CPU by CPU in rounds: file order is not time order
        events.sort(key=lambda e: (e[0] // 100_000_000, e[1], e[0]))
        rnd = None
        for t, _cpu, kind, raw in events:
            r = t // 100_000_000
            if rnd is not None and r != rnd:
                put("FINISHED_ROUND", b.user("FINISHED_ROUND"))
            rnd = r
            put(kind, raw)
        put("FINISHED_ROUND", b.user("FINISHED_ROUND"))
        w.close()
    return plan
