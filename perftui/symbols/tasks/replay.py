"""perf 6.1's machine replayed: threads by tid, their names, every process's and the
kernel's maps, the dsos, fed the task records in perf's processing order by
:meth:`.threads.ThreadModel.build`.

The rules, as read in perf 6.1 and checked against its output:

* Threads are keyed by tid.  A record naming an unknown tid creates the thread, named
  ``:<tid>`` (``thread__new``); a thread whose pid differs from its tid shares its process
  leader's maps (the leader is created when missing); tid 0 exists from the start, named
  ``swapper`` (``perf_session__register_idle_thread``).  A sample's thread is found by tid;
  a thread whose pid was unknown (-1) takes the first pid a record gives it and joins that
  process's maps.
* COMM names the thread from then on.  The exec flag (``PERF_RECORD_MISC_COMM_EXEC``) changes
  nothing else in perf 6.1: the maps are NOT dropped on exec (the new image's MMAPs replace
  what they overlap; a sample after exec at an address only the parent image mapped still
  resolves to the parent's dso in ``perf script``).
* FORK: a parent found with another pid is replaced by a fresh thread; an existing thread
  with the child's tid is replaced; the child takes the parent's current name only if the
  parent has had a name set (COMM, an inherited name, or ``swapper``), else it keeps
  ``:<tid>``; a new process gets a copy of the parent's maps unless the FORK is perf's own
  synthesized one (``PERF_RECORD_MISC_FORK_EXEC``); a new thread shares its process's maps.
* EXIT removes nothing: later records of that tid still find the same thread.
* Names and maps are those in force when perf processes the row, which is what
  ``perf script`` prints (``thread__comm_str`` of the thread at that moment).
"""

from __future__ import annotations

from array import array
from dataclasses import dataclass
from typing import Any

from ...perfdata.constants import Misc
from .dsonames import (
    ENTRY_TRAMPOLINE,
    KERNEL_DSO,
    KERNEL_MMAP_PREFIX,
    KMAP_NAME_LEN,
    MapKind,
    kmod_name,
    user_map_name,
)
from .maps import KERNEL_MAPS, U64_MAX, MapsBuilder
from .taskrecords import (
    Comm,
    Ksymbol,
    Mmap,
)

IDLE_COMM = "swapper"
_KERNEL_MODES = (Misc.KERNEL, Misc.GUEST_KERNEL)
_TIME_MAX = 2**63 - 1


@dataclass(slots=True)
class Thread:
    pid: int
    tid: int
    obj: int = -1
    comm: int = -1  # index into names
    comm_set: bool = False
    ns_pid: int = 0  # the pid the thread was created with (perf's thread->nsinfo)


class Replay:
    """perf's machine: threads by tid, maps objects, kernel maps, dsos."""

    def __init__(self, x86_64: bool) -> None:
        self.b = MapsBuilder()
        self.threads: dict[int, Thread] = {}
        self.names: list[str] = []
        self._name_ids: dict[str, int] = {}
        # flat int64 logs (a tuple an entry took ~180 bytes: ~20 MB at 10^5 comms)
        self.comm_log = array("q")  # (tid, seq+1, name, time) an entry
        self.state_log = array("q")  # (tid, seq+1, maps object) an entry
        self.vmlinux = -1
        self.x86_64 = x86_64
        self.kernel_dso = -1
        self.kernel_candidates: list[tuple[str, str]] = []  # (name, build id)
        self.kmod_dsos: dict[str, int] = {}
        self.user_bids: dict[str, str] = {}
        #: per maps object: the threads in :attr:`threads` that use it; at none it can never
        #: be reached again, and the builder lets its live map lists go (a long recording's
        #: forks, each replacing a thread of a reused tid, kept ~48 MB of them at 3 M maps)
        self._users: dict[int, int] = {}

    def _use(self, th: Thread, obj: int) -> None:
        """``th`` uses maps object ``obj`` (the one it used before, one user less)."""
        old, th.obj = th.obj, obj
        self._users[obj] = self._users.get(obj, 0) + 1
        if old >= 0:
            self._unuse(old)

    def _unuse(self, obj: int) -> None:
        left = self._users.get(obj, 0) - 1
        if left > 0:
            self._users[obj] = left
            return
        self._users.pop(obj, None)
        if obj != KERNEL_MAPS:
            self.b.release(obj)

    def name_id(self, s: str) -> int:
        k = self._name_ids.get(s)
        if k is None:
            k = self._name_ids[s] = len(self.names)
            self.names.append(s)
        return k

    # -- threads -----------------------------------------------------------------------------
    def _set_comm(self, th: Thread, name: int, seq: int, time: int) -> None:
        th.comm = name
        # a time past int64 (a damaged trailer) as the latest one int64 holds: it sorts last
        self.comm_log.extend((th.tid, seq + 1, name, min(time, _TIME_MAX)))

    def findnew(self, pid: int, tid: int, seq: int, time: int) -> Thread:
        th = self.threads.get(tid)
        if th is not None:
            self._update_pid(th, pid, seq, time)
            return th
        th = Thread(pid, tid, ns_pid=pid)
        self.threads[tid] = th
        self._set_comm(th, self.name_id(f":{tid}"), seq, time)
        if pid in (tid, -1):
            self._use(th, self.b.new_object(pid))
        else:
            self._use(th, self.findnew(pid, pid, seq, time).obj)
        self.state_log.extend((tid, seq + 1, th.obj))
        return th

    def _update_pid(self, th: Thread, pid: int, seq: int, time: int) -> None:
        """machine__update_thread_pid: a thread of unknown pid joins its process."""
        if pid in (th.pid, -1) or th.pid != -1:
            return
        th.pid = pid
        if pid == th.tid:
            return
        leader = self.findnew(pid, pid, seq, time)
        if th.obj != leader.obj:
            self._use(th, leader.obj)
            self.state_log.extend((th.tid, seq + 1, th.obj))

    def find(self, pid: int, tid: int, seq: int, time: int) -> Thread | None:
        th = self.threads.get(tid)
        if th is not None:
            self._update_pid(th, pid, seq, time)
        return th

    def remove(self, th: Thread) -> None:
        if self.threads.get(th.tid) is th:
            del self.threads[th.tid]
            if th.obj >= 0:
                self._unuse(th.obj)

    def idle(self) -> None:
        th = self.findnew(0, 0, -1, 0)
        self._set_comm(th, self.name_id(IDLE_COMM), -1, 0)
        th.comm_set = True

    def comm(self, ev: Comm, seq: int, time: int) -> None:
        th = self.findnew(ev.pid, ev.tid, seq, time)
        self._set_comm(th, self.name_id(ev.comm), seq, time)
        th.comm_set = True

    def fork(self, pid: int, ppid: int, tid: int, ptid: int, fork_exec: bool, seq: int,
             time: int) -> None:
        child = self.find(pid, tid, seq, time)
        parent = self.findnew(ppid, ptid, seq, time)
        if parent.pid != ppid:
            self.remove(parent)
            parent = self.findnew(ppid, ptid, seq, time)
        if child is not None:
            self.remove(child)
        child = self.findnew(pid, tid, seq, time)
        if parent.comm_set:
            self._set_comm(child, parent.comm, seq, time)
            child.comm_set = True
        if child.pid != parent.pid and child.obj != parent.obj and not fork_exec:
            self.b.clone(child.obj, parent.obj, seq)

    # -- maps --------------------------------------------------------------------------------
    def mmap(self, ev: Mmap, row: int, seq: int, time: int) -> None:
        end = (ev.start + ev.length) & U64_MAX
        if ev.cpumode in _KERNEL_MODES:
            self._kernel_mmap(ev, end, row, seq)
            return
        th = self.findnew(ev.pid, ev.tid, seq, time)
        name, kind = user_map_name(ev.filename, ev.prot, ev.flags, th.ns_pid)
        pgoff = 0 if kind == MapKind.VDSO else ev.pgoff
        bid = ev.build_id or self.user_bids.get(ev.filename, "")
        path = ev.filename if kind == MapKind.USER else name
        dso = self.b.dso(name, kind, path, bid if kind in (MapKind.USER, MapKind.VDSO) else "")
        self.b.insert_fixup(th.obj, ev.start, end, pgoff, dso, kind, ev.prot, ev.flags, row, seq)

    def _kernel_dso(self) -> int:
        if self.kernel_dso < 0:
            name, bid = (self.kernel_candidates[0] if self.kernel_candidates
                         else (KERNEL_DSO, ""))
            self.kernel_dso = self.b.dso(name, MapKind.KERNEL, name, bid)
        return self.kernel_dso

    def _kernel_mmap(self, ev: Mmap, end: int, row: int, seq: int) -> None:
        """machine__process_kernel_mmap_event (host machine)."""
        name = ev.filename.encode("utf-8", "surrogateescape")[:KMAP_NAME_LEN - 1].decode(
            "utf-8", "replace")
        is_kernel = name.startswith(KERNEL_MMAP_PREFIX)
        if name.startswith("/") or (not is_kernel and name.startswith("[")):
            short, _ = kmod_name(name)
            dso = self.kmod_dsos.get(short)
            if dso is None:
                dso = self.kmod_dsos[short] = self.b.dso(short, MapKind.MODULE, name,
                                                         ev.build_id)
            elif ev.build_id:
                self.b.set_build_id(dso, ev.build_id)
            self.b.insert(KERNEL_MAPS, ev.start, end, ev.pgoff, dso, MapKind.MODULE, ev.prot,
                          ev.flags, row, seq)
        elif is_kernel:
            if self.vmlinux >= 0:
                self.b.remove(KERNEL_MAPS, self.vmlinux, seq)
            if ev.start == 0 and end == 0:
                end = U64_MAX
            dso = self._kernel_dso()
            if ev.build_id:
                self.b.set_build_id(dso, ev.build_id)
            self.vmlinux = self.b.insert(KERNEL_MAPS, ev.start, end, ev.pgoff, dso,
                                         MapKind.KERNEL, ev.prot, ev.flags, row, seq)
        elif self.x86_64 and name == ENTRY_TRAMPOLINE:
            self.b.insert(KERNEL_MAPS, ev.start, end, ev.pgoff, self._kernel_dso(),
                          MapKind.KERNEL_EXTRA, ev.prot, ev.flags, row, seq)

    def ksymbol(self, ev: Ksymbol, row: int, seq: int) -> None:
        """machine__process_ksymbol: a map only where no kernel map covers the address."""
        found = self.b.find(KERNEL_MAPS, ev.addr)
        if ev.unregister:
            if found >= 0 and found != self.vmlinux:
                self.b.remove(KERNEL_MAPS, found, seq)
            return
        if found >= 0:
            return  # perf adds the symbol to the covering map's dso
        dso = self.b.dso(ev.name, MapKind.KSYMBOL, "", "")
        self.b.insert(KERNEL_MAPS, ev.addr, (ev.addr + ev.length) & U64_MAX, 0, dso,
                      MapKind.KSYMBOL, 0, 0, row, seq)

    def build_id(self, entry: dict[str, Any]) -> None:
        """__event_process_build_id: what a build-id table entry does to later maps."""
        if entry.get("pid") != -1:
            return
        cpumode = int(entry.get("cpumode", 0))
        name, bid = str(entry.get("filename", "")), str(entry.get("build_id", ""))
        if cpumode in _KERNEL_MODES:
            short, kmod = kmod_name(name)
            if kmod:
                if short not in self.kmod_dsos:
                    self.kmod_dsos[short] = self.b.dso(name, MapKind.MODULE, name, bid)
            else:
                self.kernel_candidates.append((name, bid))
        elif cpumode in (Misc.USER, Misc.GUEST_USER):
            self.user_bids.setdefault(name, bid)
