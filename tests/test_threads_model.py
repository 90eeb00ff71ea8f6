"""The thread, comm and map model on hand-built recordings whose answers are planned.

Each scenario builds a recording with :class:`threadplan.Plan` and states, sample by sample,
the comm and dso perf 6.1's rules give (worked out from tools/perf/util/{machine,thread,map,
ordered-events,session}.c, cited per scenario).  ``test_model_matches_plan`` checks perftui
against the plan; ``test_perf_matches_plan`` checks that the real perf 6.1 prints the same
thing for the same file (``--kallsyms`` an empty file, so perf uses the recording's kernel
maps rather than this machine's /proc/kcore).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import fields
from pathlib import Path

import numpy as np
import pytest
from threadplan import Expect, Plan, model_view, perf_view

from perftui.perfdata import Feature, RecordType, open_recording
from perftui.perfdata.constants import CONTEXT_KERNEL, CONTEXT_USER, Misc
from perftui.symbols.tasks import maps
from perftui.symbols.tasks.callchain import MARKER, chain_cpumodes, sample_callchains
from perftui.symbols.tasks.dsonames import MapKind, kmod_name
from perftui.symbols.tasks.maps import KERNEL_MAPS, U64_MAX, MapsBuilder, MapTable
from perftui.symbols.tasks.order import queue_times
from perftui.symbols.tasks.orderplain import _delivery_rounds, _replay_rounds
from perftui.symbols.tasks.taskrecords import TaskRecordReader
from perftui.symbols.tasks.threads import ThreadModel, trailer_times

KERNEL_TEXT = 0xFFFFFFFF81000000
CONTEXT_HV = 2**64 - 32
CONTEXT_GUEST = 2**64 - 2048


def fork_exec_threads() -> Plan:
    """FORK inherits the parent's name and copies its maps; COMM exec renames and, in perf
    6.1, keeps the maps (the exec'd image's MMAP only replaces what it overlaps); a thread
    shares its process's maps; EXIT removes nothing; tid 0 is swapper; a tid seen only in
    samples is ``:tid``; a child of a parent that never had a name keeps ``:tid``."""
    p = Plan()
    p.comm(100, 100, "bash", 10)
    p.mmap(100, 0x400000, 0x10000, "/bin/bash", 11)
    p.mmap(100, 0x7F0000000000, 0x200000, "/lib/libc.so.6", 12)
    p.sample(100, 0x400100, 20, Expect("bash", "/bin/bash"))
    p.fork(101, 100, 30)
    p.sample(101, 0x400100, 31, Expect("bash", "/bin/bash"))
    p.comm(101, 101, "cat", 40, exec_=True)
    p.mmap(101, 0x400000, 0x8000, "/bin/cat", 41)
    p.sample(101, 0x400100, 50, Expect("cat", "/bin/cat"))
    p.sample(101, 0x408100, 51, Expect("cat", "/bin/bash"))  # exec kept the old map's tail
    p.sample(101, 0x7F0000000100, 52, Expect("cat", "/lib/libc.so.6"))
    p.sample(100, 0x400100, 53, Expect("bash", "/bin/bash"))  # the parent's maps untouched
    p.fork(100, 100, 60, tid=102, ptid=100)  # a second thread of process 100
    p.sample(100, 0x7F0000000100, 61, Expect("bash", "/lib/libc.so.6"), tid=102)
    p.mmap(100, 0x7F1000000000, 0x1000, "/lib/libz.so", 62, tid=102)
    p.sample(100, 0x7F1000000010, 63, Expect("bash", "/lib/libz.so"))  # shared maps
    p.exit(101, 70)
    p.sample(101, 0x400100, 71, Expect("cat", "/bin/cat"))
    p.sample(0, KERNEL_TEXT, 72, Expect("swapper", "[unknown]"), cpumode=Misc.KERNEL)
    p.sample(103, 0x1000, 73, Expect(":103", "[unknown]"))
    p.fork(104, 0, 74)  # kthreadd-like: a child of the idle task
    p.sample(104, 0x1000, 75, Expect("swapper", "[unknown]"))
    p.fork(105, 103, 76)  # parent 103 never had a name set
    p.sample(105, 0x1000, 77, Expect(":105", "[unknown]"))
    p.round()
    return p


def map_split() -> Plan:
    """A map replacing the middle of another leaves both ends (maps__fixup_overlappings)."""
    p = Plan()
    p.comm(200, 200, "app", 1)
    p.mmap(200, 0x10000, 0x30000, "/lib/a.so", 2, pgoff=0x1000)
    p.mmap(200, 0x20000, 0x10000, "/lib/b.so", 3)
    p.sample(200, 0x18000, 10, Expect("app", "/lib/a.so"))
    p.sample(200, 0x28000, 11, Expect("app", "/lib/b.so"))
    p.sample(200, 0x38000, 12, Expect("app", "/lib/a.so"))
    p.sample(200, 0x40000, 13, Expect("app", "[unknown]"))
    p.round()
    return p


def unknown_pid() -> Plan:
    """A thread first seen with pid -1 gets maps of its own; the first record giving it a pid
    makes it join that process's maps and drops its own (machine__update_thread_pid:
    "Discarding thread maps")."""
    p = Plan()
    p.mmap(-1, 0x400000, 0x1000, "/bin/orphan", 1, tid=900)
    p.comm(901, 901, "leader", 3)
    p.mmap(901, 0x500000, 0x1000, "/bin/leader", 4)
    p.sample(901, 0x400010, 5, Expect(":900", "[unknown]"), tid=900)
    p.sample(901, 0x500010, 6, Expect(":900", "/bin/leader"), tid=900)
    p.round()
    return p


def time_order() -> Plan:
    """Records apply in time order, not file order (ordered_events): a COMM later in the
    file but earlier in time names the samples after it in time; at equal times the file
    order decides (queue_event inserts after every record of the same time)."""
    p = Plan()
    p.comm(300, 300, "late", 500)
    p.sample(300, 0x1000, 100, Expect("early", "[unknown]"))
    p.comm(300, 300, "early", 50)
    p.sample(300, 0x1000, 600, Expect("late", "[unknown]"))
    p.sample(301, 0x1000, 700, Expect(":301", "[unknown]"))  # same time, sample first
    p.comm(301, 301, "tie", 700)
    p.comm(302, 302, "tie2", 800)  # same time, COMM first
    p.sample(302, 0x1000, 800, Expect("tie2", "[unknown]"))
    p.round()
    return p


def unordered_round() -> Plan:
    """FINISHED_ROUND flushes what is older than the previous round's newest record; a record
    older than what was already delivered ("unordered event") applies late: the sample at 20
    keeps "a" although a COMM at 15 follows; perf does not re-sort the past."""
    p = Plan()
    p.comm(400, 400, "a", 10)
    p.sample(400, 0x1000, 20, Expect("a", "[unknown]"))
    p.round()  # flushes nothing (first round); next_flush = 20
    p.sample(400, 0x1000, 30, Expect("b", "[unknown]"))
    p.round()  # flushes up to 20: COMM a, sample 20; next_flush = 30
    p.comm(400, 400, "b", 15)  # older than the delivered sample at 20
    p.sample(400, 0x1000, 40, Expect("b", "[unknown]"))
    p.round()  # flushes up to 30: COMM b (15), sample 30
    return p


def zero_time() -> Plan:
    """A record whose trailer time is 0 (perf synthesizes them so) is not queued: it applies
    when read, before queued samples that precede it in the file."""
    p = Plan()
    p.sample(500, 0x1000, 100, Expect("named", "[unknown]"))
    p.comm(500, 500, "named", 0)
    p.round()
    return p


def no_sample_id_all() -> Plan:
    """Without sample_id_all (first attr) a file-mode recording is processed in file order
    (session.c: "falling back to unordered processing")."""
    p = Plan(sample_id_all=False)
    p.sample(600, 0x1000, 100, Expect(":600", "[unknown]"))
    p.comm(600, 600, "later", 0)
    p.sample(600, 0x1000, 50, Expect("later", "[unknown]"))
    p.round()
    return p


def no_sample_id_all_pipe() -> Plan:
    """The same records in pipe mode: perf skips that check there, so the timed samples are
    queued and the untimed COMM applies when read, before both."""
    p = Plan(sample_id_all=False)
    p.sample(600, 0x1000, 100, None)
    p.comm(600, 600, "later", 0)
    p.sample(600, 0x1000, 50, None)
    p.expect = [(600, 50, Expect("later", "[unknown]")), (600, 100, Expect("later", "[unknown]"))]
    p.round()
    return p


MOD = 0xFFFFFFFFC0000000


def kernel_maps() -> Plan:
    """Kernel maps (machine__process_kernel_mmap_event, _ksymbol): the kernel MMAP, modules
    named ``[name]`` (``-`` to ``_``, .gz/.xz stripped; .zst is not a compression perf 6.1
    knows), old perf's ``[name]`` MMAPs, KSYMBOL maps named by the record unless a kernel map
    already covers the address, KSYMBOL unregister.  Guest and hypervisor samples find no map
    (perf 6.1 without --guest; ``perf script`` does not even print the guest ones: they are
    filtered, HIST_FILTER__GUEST); a user-mode sample never looks in the kernel maps."""
    p = Plan()
    p.comm(700, 700, "kw", 1)
    p.mmap(-1, KERNEL_TEXT, 0x1000000, "[kernel.kallsyms]_text", 2, pgoff=KERNEL_TEXT,
           tid=0, kernel=True, v1=True)
    p.mmap(-1, MOD, 0x1000, "/lib/modules/6.1.0/kernel/foo-bar.ko", 3, tid=0, kernel=True,
           v1=True)
    p.mmap(-1, MOD + 0x1000, 0x1000, "/lib/modules/6.1.0/baz-q.ko.xz", 3, tid=0, kernel=True,
           v1=True)
    p.mmap(-1, MOD + 0x2000, 0x1000, "/lib/modules/6.1.0/qux.ko.zst", 3, tid=0, kernel=True,
           v1=True)
    p.mmap(-1, MOD + 0x3000, 0x1000, "[old-mod]", 3, tid=0, kernel=True, v1=True)
    p.mmap(-1, MOD + 0x4000, 0x1000, "/lib/modules/6.1.0/gz-mod.ko.gz", 3, tid=0, kernel=True,
           v1=True)
    p.ksymbol(MOD + 0x10000, 0x100, "bpf_prog_0123456789abcdef_filter", 4)
    p.ksymbol(KERNEL_TEXT + 0x100000, 0x100, "bpf_trampoline_6442", 4)  # inside the kernel
    p.ksymbol(MOD + 0x20000, 0x100, "bpf_prog_fedcba9876543210_gone", 5)
    k = Misc.KERNEL
    p.sample(700, KERNEL_TEXT + 0x10, 10, Expect("kw", "[kernel.kallsyms]"), cpumode=k)
    p.sample(700, MOD + 0x10, 11, Expect("kw", "[foo_bar]"), cpumode=k)
    p.sample(700, MOD + 0x1010, 12, Expect("kw", "[baz_q]"), cpumode=k)
    p.sample(700, MOD + 0x2010, 13, Expect("kw", "qux.ko.zst"), cpumode=k)
    p.sample(700, MOD + 0x3010, 14, Expect("kw", "[old-mod]"), cpumode=k)
    p.sample(700, MOD + 0x4010, 14, Expect("kw", "[gz_mod]"), cpumode=k)
    p.sample(700, MOD + 0x10010, 15, Expect("kw", "bpf_prog_0123456789abcdef_filter"),
             cpumode=k)
    p.sample(700, KERNEL_TEXT + 0x100010, 16, Expect("kw", "[kernel.kallsyms]"), cpumode=k)
    p.sample(700, MOD + 0x20010, 17, Expect("kw", "bpf_prog_fedcba9876543210_gone"),
             cpumode=k)
    p.ksymbol(MOD + 0x20000, 0x100, "bpf_prog_fedcba9876543210_gone", 18, unregister=True)
    p.sample(700, MOD + 0x20010, 19, Expect("kw", "[unknown]"), cpumode=k)
    p.sample(700, KERNEL_TEXT + 0x10, 20, Expect("kw", "[unknown]", perf_prints=False),
             cpumode=Misc.GUEST_KERNEL)
    p.sample(700, KERNEL_TEXT + 0x10, 21, Expect("kw", "[unknown]"), cpumode=Misc.HYPERVISOR)
    p.sample(700, KERNEL_TEXT + 0x10, 22, Expect("kw", "[unknown]"), cpumode=Misc.USER)
    p.sample(700, 0x1000, 23, Expect("kw", "[unknown]", perf_prints=False),
             cpumode=Misc.GUEST_USER)
    p.round()
    return p


def user_names() -> Plan:
    """map__new's names: an anonymous executable map is ``/tmp/perf-<pid>.map`` (the JIT map
    perf reads), also a MAP_HUGETLB file and an old MMAP record (executable unless
    MMAP_DATA); a non-executable anonymous map keeps its name; ``[vdso]``; a file path as
    recorded, " (deleted)" included."""
    p = Plan()
    p.comm(800, 800, "jit", 1)
    p.mmap(800, 0x100000, 0x1000, "//anon", 2, prot=7, flags=0x22)
    p.mmap(800, 0x200000, 0x1000, "//anon", 2, prot=3, flags=0x22)
    p.mmap(800, 0x300000, 0x1000, "[vdso]", 2, pgoff=0x1234)
    p.mmap(800, 0x400000, 0x1000, "/memfd:jit (deleted)", 2)
    p.mmap(800, 0x500000, 0x1000, "/huge/file", 2, flags=0x40002)
    p.mmap(800, 0x600000, 0x1000, "//anon", 2, v1=True)
    p.mmap(800, 0x700000, 0x1000, "[heap]", 2, prot=3, data=True)
    p.mmap(800, 0x800000, 0x1000, "/dev/zero (deleted)", 2, prot=7)
    p.mmap(800, 0xFFFFFFFFFF600000, 0x1000, "[vsyscall]", 2)  # the top of the address space
    for k, (addr, dso) in enumerate([
            (0x100010, "/tmp/perf-800.map"), (0x200010, "//anon"), (0x300010, "[vdso]"),
            (0x400010, "/memfd:jit (deleted)"), (0x500010, "/tmp/perf-800.map"),
            (0x600010, "/tmp/perf-800.map"), (0x700010, "[heap]"),
            (0x800010, "/tmp/perf-800.map"), (0xFFFFFFFFFF600010, "[vsyscall]")]):
        p.sample(800, addr, 10 + k, Expect("jit", dso))
    p.round()
    return p


def callchains() -> Plan:
    """Callchain entries: user mode until a marker, PERF_CONTEXT_KERNEL/USER switch, HV finds
    nothing, and an unknown (guest) marker makes perf 6.1 drop the whole chain."""
    p = Plan(callchain=True)
    p.comm(900, 900, "cc", 1)
    p.mmap(-1, KERNEL_TEXT, 0x1000000, "[kernel.kallsyms]_text", 2, pgoff=KERNEL_TEXT,
           tid=0, kernel=True, v1=True)
    p.mmap(900, 0x400000, 0x1000, "/bin/cc", 3)
    kern = KERNEL_TEXT + 0x40
    p.sample(900, kern, 10, Expect("cc", "[kernel.kallsyms]", [
        "[kernel.kallsyms]", "[kernel.kallsyms]", "/bin/cc", "[unknown]"]), cpumode=Misc.KERNEL,
        callchain=[CONTEXT_KERNEL, kern, kern + 8, CONTEXT_USER, 0x400010, 0x999999])
    p.sample(900, 0x400020, 11, Expect("cc", "/bin/cc", ["/bin/cc", "[unknown]"]),
             callchain=[0x400020, kern])  # no marker: user mode throughout
    p.sample(900, 0x400020, 12, Expect("cc", "/bin/cc", ["[unknown]", "/bin/cc"]),
             callchain=[CONTEXT_HV, 0x400020, CONTEXT_USER, 0x400020])
    p.sample(900, 0x400020, 13, Expect("cc", "/bin/cc", []),
             callchain=[CONTEXT_KERNEL, kern, CONTEXT_GUEST, 0x400020])
    p.round()
    return p


def build_ids() -> Plan:
    """The build-id table names a module perf saw hits in by its path (the module MMAP finds
    that dso by its short name); other modules stay ``[name]``."""
    p = Plan()
    p.build_ids = [
        {"filename": "/lib/modules/6.1.0/kernel/net/hit-mod.ko", "build_id": "ab" * 20,
         "pid": -1, "misc": Misc.KERNEL | 0x8000},
        {"filename": "[kernel.kallsyms]", "build_id": "cd" * 20, "pid": -1,
         "misc": Misc.KERNEL | 0x8000},
        {"filename": "/bin/app", "build_id": "ef" * 20, "pid": -1, "misc": Misc.USER | 0x8000},
    ]
    p.comm(1000, 1000, "app", 1)
    p.mmap(-1, KERNEL_TEXT, 0x1000000, "[kernel.kallsyms]_text", 2, pgoff=KERNEL_TEXT,
           tid=0, kernel=True, v1=True)
    p.mmap(-1, MOD, 0x1000, "/lib/modules/6.1.0/kernel/net/hit-mod.ko", 3, tid=0,
           kernel=True, v1=True)
    p.mmap(-1, MOD + 0x1000, 0x1000, "/lib/modules/6.1.0/kernel/net/cold.ko", 3, tid=0,
           kernel=True, v1=True)
    p.mmap(1000, 0x400000, 0x1000, "/bin/app", 4)
    p.mmap(1000, 0x500000, 0x1000, "/lib/libb.so", 4, build_id="12" * 20)
    k = Misc.KERNEL
    p.sample(1000, MOD + 0x10, 10, Expect("app", "/lib/modules/6.1.0/kernel/net/hit-mod.ko"),
             cpumode=k)
    p.sample(1000, MOD + 0x1010, 11, Expect("app", "[cold]"), cpumode=k)
    p.sample(1000, 0x400010, 12, Expect("app", "/bin/app"))
    p.sample(1000, 0x500010, 13, Expect("app", "/lib/libb.so"))
    p.round()
    return p


def build_ids_at_end() -> Plan:
    """Pipe mode as perf record writes it: HEADER_BUILD_ID records after the data, once the
    rounds have delivered the module MMAP.  That MMAP made the ``[name]`` dso; the late
    record finds that dso by its path and changes nothing, so perf prints ``[hit_mod]``.
    (Without the second round the MMAP would still be queued when the build ids, which perf
    applies when read, arrive: then the path wins, as in the ``build_ids`` pipe case.)"""
    p = build_ids()
    p.round()
    p.build_ids_at = "end"
    p.expect = [(t, tm, Expect(e.comm, "[hit_mod]" if "hit-mod" in e.dso else e.dso))
                for t, tm, e in p.expect]
    return p


def pid_reuse() -> Plan:
    """A pid used again: FORK of a tid perf still holds (EXIT removed nothing) replaces the
    thread, the new one with a copy of its new parent's maps (machine__process_fork_event
    removes the old child first); a thread of the first process that outlives its leader's
    replacement keeps the first process's maps (they are its own: thread__put)."""
    p = Plan()
    p.comm(100, 100, "bash", 1)
    p.mmap(100, 0x400000, 0x10000, "/bin/bash", 2)
    p.comm(400, 400, "make", 3)
    p.mmap(400, 0x400000, 0x10000, "/usr/bin/make", 4)
    p.fork(300, 100, 10)  # from bash
    p.fork(300, 300, 11, tid=301, ptid=300)  # a second thread of 300
    p.sample(300, 0x400100, 12, Expect("bash", "/bin/bash"))
    p.exit(300, 20)
    p.fork(300, 400, 30)  # tid 300 again, now from make
    p.sample(300, 0x400100, 31, Expect("make", "/usr/bin/make"))
    p.sample(300, 0x400100, 32, Expect("bash", "/bin/bash"), tid=301)  # the first one's
    p.mmap(400, 0x500000, 0x1000, "/lib/libmake.so", 33)
    p.sample(300, 0x500010, 34, Expect("make", "[unknown]"))  # copied before: not seen
    p.round()
    return p


SCENARIOS: dict[str, Callable[[], Plan]] = {
    "pid_reuse": pid_reuse,
    "fork_exec_threads": fork_exec_threads, "map_split": map_split, "time_order": time_order,
    "unknown_pid": unknown_pid,
    "unordered_round": unordered_round, "zero_time": zero_time,
    "no_sample_id_all": no_sample_id_all, "kernel_maps": kernel_maps,
    "user_names": user_names, "callchains": callchains, "build_ids": build_ids,
}
CASES = [pytest.param(n, m, id=f"{n}-{m}") for n in SCENARIOS for m in ("file", "pipe")
         if n != "no_sample_id_all" or m == "file"]
for late in (no_sample_id_all_pipe, build_ids_at_end):
    CASES.append(pytest.param(late.__name__, "pipe", id=f"{late.__name__}-pipe"))
    SCENARIOS[late.__name__] = late


def planned(name: str, mode: str, tmp_path: Path) -> tuple[Plan, Path]:
    plan = SCENARIOS[name]()
    return plan, plan.write(tmp_path / f"{name}-{mode}.data", mode=mode)


@pytest.mark.parametrize(("name", "mode"), CASES)
def test_model_matches_plan(name: str, mode: str, tmp_path: Path) -> None:
    plan, path = planned(name, mode, tmp_path)
    got = model_view(path)
    assert [(s.tid, s.time) for s in got] == [(t, tm) for t, tm, _ in plan.expect]
    assert [(s.comm, s.dso) for s in got] == [(e.comm, e.dso) for _t, _tm, e in plan.expect]
    if plan.callchain:
        assert [s.frames for s in got] == [e.frames for _t, _tm, e in plan.expect]


@pytest.mark.perf
@pytest.mark.parametrize(("name", "mode"), CASES)
def test_perf_matches_plan(name: str, mode: str, tmp_path: Path) -> None:
    plan, path = planned(name, mode, tmp_path)
    empty = tmp_path / "empty.kallsyms"
    empty.write_bytes(b"")
    got = perf_view(path, callchain=plan.callchain, kallsyms=empty)
    shown = [x for x in plan.expect if x[2].perf_prints]
    assert [(s.tid, s.time) for s in got] == [(t, tm) for t, tm, _ in shown]
    assert [s.comm for s in got] == [e.comm for _t, _tm, e in shown]
    if plan.callchain:
        assert [s.frames for s in got] == [e.frames for _t, _tm, e in shown]
    else:
        assert [s.dso for s in got] == [e.dso for _t, _tm, e in shown]


# -- details the plans do not show through perf script -----------------------------------------
def model(name: str, tmp_path: Path) -> tuple[ThreadModel, Plan]:
    plan, path = planned(name, "file", tmp_path)
    rec = open_recording(path)
    rec.build_index()
    return ThreadModel.build(rec), plan


def test_a_replaced_process_lets_its_live_maps_go(tmp_path: Path) -> None:
    """pid_reuse's first process 300 is replaced by the second FORK of tid 300, but its
    thread 301 still uses its maps: they stay live; once 301 is replaced too, nothing can
    reach them, and the replay lets its live map lists go (their rows stay in the table:
    the plan's answers above hold)."""
    from perftui.symbols.tasks.replay import Replay

    r = Replay(x86_64=True)
    first = r.findnew(300, 300, 1, 1).obj
    r.findnew(300, 301, 2, 2)
    r.b.insert(first, 0x400000, 0x410000, 0, r.b.dso("/bin/bash", MapKind.USER, "/bin/bash"),
               MapKind.USER, 5, 2, 7, 3)
    assert r.b.live(first) != []
    r.fork(300, 1, 300, 1, False, 4, 4)  # tid 300 again
    assert r.threads[300].obj != first and r.b.live(first) != []  # 301 still uses it
    r.fork(301, 1, 301, 1, False, 5, 5)  # and tid 301
    assert r.b.live(first) == []
    assert len(r.b.table()) == 1  # (its row is kept)


def test_split_pieces_keep_file_offsets(tmp_path: Path) -> None:
    """The part after the new map starts ``new.end - old.start`` further into the file
    (maps__fixup_overlappings: ``after->pgoff += map->end - pos->start``)."""
    m, _ = model("map_split", tmp_path)
    t = m.maps
    live = np.nonzero((t.died == np.iinfo(np.int64).max) & (t.obj > 0))[0]
    pieces = sorted((int(t.start[i]), int(t.end[i]), int(t.pgoff[i]), t.dsos[t.dso[i]].name)
                    for i in live)
    assert pieces == [(0x10000, 0x20000, 0x1000, "/lib/a.so"),
                      (0x20000, 0x30000, 0x0, "/lib/b.so"),
                      (0x30000, 0x40000, 0x1000 + 0x20000, "/lib/a.so")]


def test_kinds_build_ids_and_vdso_offset(tmp_path: Path) -> None:
    m, _ = model("build_ids", tmp_path)
    by_name = {d.name: d for d in m.maps.dsos}
    assert by_name["/lib/libb.so"].build_id == "12" * 20  # MMAP2 with MMAP_BUILD_ID
    assert by_name["/bin/app"].build_id == "ef" * 20  # from the build-id table
    assert by_name["[kernel.kallsyms]"].build_id == "cd" * 20
    hit = by_name["/lib/modules/6.1.0/kernel/net/hit-mod.ko"]
    assert (hit.kind, hit.build_id) == (MapKind.MODULE, "ab" * 20)
    assert by_name["[cold]"].path == "/lib/modules/6.1.0/kernel/net/cold.ko"
    m2, _ = model("user_names", tmp_path)
    t = m2.maps
    vdso = [i for i in range(len(t)) if t.dsos[t.dso[i]].name == "[vdso]"]
    assert [int(t.pgoff[i]) for i in vdso] == [0]  # perf zeroes a vdso map's pgoff
    kinds = {t.dsos[t.dso[i]].name: MapKind(int(t.kind[i])) for i in range(len(t))}
    assert kinds["/tmp/perf-800.map"] == MapKind.JIT
    assert kinds["//anon"] == MapKind.ANON
    assert kinds["[heap]"] == MapKind.ANON


def test_comm_at_follows_time(tmp_path: Path) -> None:
    m, _ = model("fork_exec_threads", tmp_path)
    assert m.comm_at(101, 35) == "bash"
    assert m.comm_at(101, 45) == "cat"
    assert m.comm_at(101, 5) == "bash"  # before anything: the thread's first name
    assert m.comm_at(0, 1) == "swapper"
    assert m.comm_at(4242, 1) == ":4242"


def test_comms_of_non_sample_rows(tmp_path: Path) -> None:
    """A COMM row's own comm is the new name (the row is processed when asked)."""
    m, _ = model("fork_exec_threads", tmp_path)
    c = m.rec.columns
    rows = np.nonzero(c["type"] == RecordType.COMM)[0]
    ids, names = m.sample_comms(rows)
    assert [names[i] for i in ids] == ["bash", "cat"]


def map_at(m: ThreadModel, tids: np.ndarray, times: np.ndarray, ips: np.ndarray,
           cpumodes: np.ndarray) -> np.ndarray:
    """Like :meth:`ThreadModel.map_at_rows` without rows: the maps after the last record perf
    processes at or before each time.  The step is found by perf's ordering times (the
    FORK/EXIT trailer times read again, as ``ThreadModel.build`` reads them); a thread's
    maps object at a step is the model's private ``_objects`` (its public face,
    ``thread_objects``, asks by rows)."""
    rec = m.rec
    fe = rec.rows_of_type(RecordType.FORK, RecordType.EXIT)
    qt = queue_times(rec, trailer_times(rec, TaskRecordReader(rec), fe))
    seq_time = np.maximum.accumulate(qt[m.order]) if len(qt) else qt[:0]
    tids = np.asarray(tids, dtype=np.int64)
    seq = np.searchsorted(seq_time, np.asarray(times, dtype=np.uint64), side="right") - 1
    cpumodes = np.asarray(cpumodes)
    obj = np.full(len(tids), -1, dtype=np.int64)
    user = cpumodes == Misc.USER
    if user.any():
        obj[user] = m._objects(tids[user], seq[user] + 1)
    obj[cpumodes == Misc.KERNEL] = KERNEL_MAPS
    return m.maps.lookup(obj, seq, np.asarray(ips, dtype=np.uint64))


def test_map_at_by_time_matches_rows(tmp_path: Path) -> None:
    m, _ = model("fork_exec_threads", tmp_path)
    c = m.rec.columns
    rows = np.nonzero(c["type"] == RecordType.SAMPLE)[0]
    by_row = m.map_of(rows)
    by_time = map_at(m, c["tid"][rows], c["time"][rows], m.rec.sample_values(rows),
                     c["cpumode"][rows])
    assert list(by_time) == list(by_row)


@pytest.mark.parametrize(("path", "name", "kmod"), [
    ("/lib/modules/6.1/kernel/drivers/net/e1000e.ko", "[e1000e]", True),
    ("/lib/modules/6.1/nf-nat.ko.xz", "[nf_nat]", True),
    ("/lib/modules/6.1/nf-nat.ko.gz", "[nf_nat]", True),
    ("/lib/modules/6.1/nf-nat.ko.zst", "nf_nat.ko.zst", False),
    ("[scsi-mod]", "[scsi-mod]", True),
    ("[vdso]", "[vdso]", False),
    ("[kernel.kallsyms]_text", "[kernel.kallsyms]_text", False),
    ("/usr/lib/debug/vmlinux-6.1", "vmlinux_6.1", False),
    ("foo.gz", "foo.gz", False),
])
def test_kmod_names(path: str, name: str, kmod: bool) -> None:
    """dso.c __kmod_path__parse (the .gz/.xz/.zst cases are also checked against perf in
    the kernel_maps scenario)."""
    assert kmod_name(path) == (name, kmod)


def test_chain_cpumodes() -> None:
    flat = np.array([0x10, CONTEXT_KERNEL, 0x20, CONTEXT_USER, 0x30,  # chain 0
                     0x40, CONTEXT_HV, 0x50,  # chain 1
                     CONTEXT_KERNEL, 0x60, CONTEXT_GUEST, 0x70], dtype=np.uint64)  # chain 2
    modes, ok = chain_cpumodes(flat, np.array([0, 5, 8]))
    u, k, h = Misc.USER, Misc.KERNEL, Misc.HYPERVISOR
    assert list(modes[:8]) == [u, MARKER, k, MARKER, u, u, MARKER, h]
    assert list(ok) == [True, True, False]  # perf 6.1 drops a chain with a guest marker
    assert [int(x) for x in modes[8:]][::2] == [MARKER, MARKER]


def test_sample_callchains_with_read_groups(tmp_path: Path) -> None:
    """The numpy gather agrees with the record decoder on samples carrying a group READ
    block before the callchain, in both byte orders."""
    from builders import kitchen_sink

    for order in "<>":
        path = tmp_path / f"ks{order == '>'}.data"
        kitchen_sink(path, order=order)
        rec = open_recording(path)
        rec.build_index()
        rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
        flat, starts, counts = sample_callchains(rec, rows)
        want = [rec.decode(int(i))["callchain"] for i in rows]
        assert [list(flat[s:s + n]) for s, n in zip(starts, counts, strict=True)] == want


def brute_lookup(t: MapTable, obj: int, seq: int, addr: int) -> int:
    """Reference: among the object's maps live at ``seq`` and covering ``addr``, the one with
    the greatest (start, id); a plain loop."""
    best = -1
    for i in range(len(t)):
        if (int(t.obj[i]) == obj and int(t.born[i]) <= seq < int(t.died[i])
                and int(t.start[i]) <= addr < int(t.end[i])
                and (best < 0 or (int(t.start[i]), i) > (int(t.start[best]), best))):
            best = i
    return best


@pytest.mark.slow
@pytest.mark.parametrize("mapped", [False, True])  # True: the columns in scratch files
@pytest.mark.parametrize("n_obj", [3, 40, 70000])  # 70000 objects: fewer packed address bits
def test_lookup_matches_a_plain_loop(n_obj: int, mapped: bool,
                                     monkeypatch: pytest.MonkeyPatch) -> None:
    """The vectorised lookup (packed keys, ranked keys past the packed bits, the backward
    scan over dead and uncovering maps, overlaps) against a direct loop on random tables."""
    if mapped:
        monkeypatch.setattr(maps, "_MAPPED_ROWS", 1)
    rng = np.random.default_rng(n_obj)
    b = MapsBuilder()
    objs = [KERNEL_MAPS] + [b.new_object(k) for k in range(1, 6)]
    for _ in range(n_obj - 6):
        b.new_object(0)
    spots = [0x1000, 0x7F0000000000, 0xFFFFFFFFFF600000, 0xFFFF800000000000, 2**44 - 0x800]
    seq = 0
    for _ in range(400):
        seq += int(rng.integers(1, 4))
        o = int(rng.choice(objs))
        start = int(rng.choice(spots)) + int(rng.integers(0, 64)) * 0x100
        end = min(start + int(rng.integers(1, 40)) * 0x100, U64_MAX)
        if o == KERNEL_MAPS or rng.random() < 0.1:
            b.insert(o, start, end, 0, 0, 0, 0, 0, -1, seq)  # overlaps allowed
        else:
            b.insert_fixup(o, start, end, 0, 0, 0, 0, 0, -1, seq)
        if rng.random() < 0.05 and o != KERNEL_MAPS:
            dst = int(rng.choice(objs[1:]))
            if dst != o:
                b.clone(dst, o, seq)
        if rng.random() < 0.05 and b.live(o):
            b.remove(o, int(rng.choice(b.live(o))), seq)
    t = b.table()
    q_obj = rng.choice([*objs, -1], 3000)
    q_seq = rng.integers(0, seq + 2, 3000)
    q_addr = np.array([int(rng.choice(spots)) + int(rng.integers(0, 120)) * 0x80
                       for _ in range(3000)], dtype=np.uint64)
    got = t.lookup(q_obj, q_seq, q_addr)
    want = [brute_lookup(t, int(o), int(s), int(a)) if o >= 0 else -1
            for o, s, a in zip(q_obj, q_seq, q_addr, strict=True)]
    assert list(got) == want
    assert (got >= 0).sum() > 300


def ending_at(table: MapTable, ids: np.ndarray, end: int) -> MapTable:
    """The maps of ``table`` with ``ids`` ending at ``end`` (as perf moves the kernel map once
    it has loaded kallsyms): a new table of the same columns, its lookup sorted afresh."""
    cols = {f.name: getattr(table, f.name) for f in fields(table) if not f.name.startswith("_")}
    cols["end"] = table.end.copy()
    cols["end"][ids] = np.uint64(end)
    return MapTable(**cols)


def test_a_stretched_kernel_map_covers_what_it_did_not(tmp_path: Path) -> None:
    """A kernel map stretched as perf stretches it after loading kallsyms covers the
    addresses past the recorded end."""
    m, _ = model("kernel_maps", tmp_path)
    rows = np.nonzero(m.rec.columns["type"] == RecordType.SAMPLE)[0]
    past = np.array([KERNEL_TEXT + 0x2000000], dtype=np.uint64)
    row = rows[:1]
    assert list(m.map_at_rows(row, past, [Misc.KERNEL])) == [-1]
    kernel = np.flatnonzero(m.maps.kind == MapKind.KERNEL)  # every kernel map version
    m.maps = ending_at(m.maps, kernel, KERNEL_TEXT + 0x4000000)
    assert list(m.dso_names(m.map_at_rows(row, past, [Misc.KERNEL]))) == ["[kernel.kallsyms]"]


def test_round_replay_agrees_with_the_shortcut() -> None:
    """The numpy shortcut and the round-by-round replay of ordered_events give the same
    delivery rounds whenever no record is older than what was delivered before it."""
    rng = np.random.default_rng(7)
    checked = 0
    for _ in range(300):
        n = int(rng.integers(1, 200))
        is_round = rng.random(n) < 0.1
        ts = np.sort(rng.integers(1, 1000, n)).astype(np.uint64)
        jitter = rng.integers(0, 40, n).astype(np.uint64)
        ts = ts + jitter  # locally out of order, as per-CPU buffers are
        queued = ~is_round & (rng.random(n) < 0.9)
        fast = _delivery_rounds(ts, queued, is_round)
        slow = _replay_rounds(ts, queued, is_round)
        if fast is None:
            continue
        checked += 1
        assert list(fast[queued]) == list(slow[queued])
    assert checked > 100


def test_arch_feature_gates_entry_trampolines(tmp_path: Path) -> None:
    """perf maps ``__entry_SYSCALL_64_trampoline`` MMAPs only on x86_64 recordings."""
    p = Plan()
    p.mmap(-1, 0xFFFFFE0000006000, 0x1000, "__entry_SYSCALL_64_trampoline", 2,
           pgoff=KERNEL_TEXT, tid=0, kernel=True, v1=True)
    p.mmap(-1, KERNEL_TEXT, 0x1000000, "[kernel.kallsyms]_text", 2, pgoff=KERNEL_TEXT,
           tid=0, kernel=True, v1=True)
    p.sample(1, 0xFFFFFE0000006010, 3, Expect(":1", "[kernel.kallsyms]"), cpumode=Misc.KERNEL)
    path = p.write(tmp_path / "tramp.data")
    got = model_view(path)
    assert [(s.comm, s.dso) for s in got] == [(":1", "[kernel.kallsyms]")]
    rec = open_recording(path)
    rec.build_index()
    rec.features[Feature.ARCH] = "aarch64"
    m = ThreadModel.build(rec)
    assert list(m.dso_names(m.map_of(np.nonzero(rec.columns["type"] ==
                                                RecordType.SAMPLE)[0]))) == ["[unknown]"]
