"""pprof's profile.proto (gzipped) from the named samples: what ``go tool pprof``,
Pyroscope and Parca read.

The messages are the published schema's (:mod:`.profile_pb2`, encoded by the protobuf
package).  A pprof sample is a group of samples alike in event, thread name, pid, tid, cpu
and stack, with two values per event: its sample count and its period (nanoseconds for
cpu-clock and task-clock, else a count), so ``-sample_index`` picks perf report's Samples
or its Overhead.  Its locations are the frames ``--folded`` prints, leaf first: a location
and a function per named frame (an inlined call is a frame of its own, as in the folded
stacks), named as the folded stacks name it (an address no symbol covers: its dso in
brackets); a mapping per dso with its build id from the recording.  Labels, all strings
(pprof drops a numeric label of 0: cpu 0, pid 0): comm, pid, tid, cpu (where the samples
record them) and, for a sample in a kernel module, its section.

The samples are written in batches, each a Profile message of samples only, after one
another in the gzip stream: protobuf reads concatenated messages as one, their repeated
fields joined; the string table and the rest come last.
"""

from __future__ import annotations

import gzip
import os
from collections.abc import Callable

import numpy as np

from .. import __version__
from ..analysis.sampleprofile import group_samples, taker
from ..perfdata import Feature, Recording, RecordType
from ..perfdata.attr import EventAttr
from ..perfdata.constants import Misc
from ..perfdata.constants import Sample as SampleBits
from ..perfdata.fieldgather import record_misc
from ..symbols.modules.modfiles import recording_build_ids
from ..symbols.naming.samplelocs import SampleLocs
from ..textsafe import safe
from . import profile_pb2 as pb
from .atomicfile import atomic_file

#: pprof samples per message written: bounds the messages held at once
BATCH = 1 << 13
_SOFTWARE, _CPU_CLOCK, _TASK_CLOCK = 1, 0, 1


def period_unit(attr: EventAttr) -> str:
    """pprof's unit of an event's period: nanoseconds for cpu-clock and task-clock."""
    if attr.type == _SOFTWARE and attr.config in (_CPU_CLOCK, _TASK_CLOCK):
        return "nanoseconds"
    return "count"


class Strings:
    """pprof's string table: index 0 the empty string, each string once, made safe for a
    terminal (pprof prints them)."""

    def __init__(self) -> None:
        self.table: list[str] = [""]
        self._ids: dict[str, int] = {"": 0}

    def __call__(self, s: str) -> int:
        i = self._ids.get(s)
        if i is None:
            i = self._ids[s] = len(self.table)
            self.table.append(safe(s))
        return i


#: the kernel's dso, as its MMAP names it (``[kernel.kallsyms]_text``) without the map
KERNEL_MMAP = "[kernel.kallsyms]"


def build_ids(rec: Recording) -> dict[str, str]:
    """File name -> build id (hex), from the BUILD_ID feature and HEADER_BUILD_ID records,
    then from MMAP2 records that carry one (``perf record --buildid-mmap``, which writes no
    BUILD_ID feature; the kernel's ``[kernel.kallsyms]_text`` map names the kernel)."""
    out: dict[str, str] = {}

    def add(e: object) -> None:
        if isinstance(e, dict) and e.get("filename") and e.get("build_id"):
            name = str(e["filename"])
            if name.startswith(KERNEL_MMAP):
                name = KERNEL_MMAP
            out.setdefault(name, str(e["build_id"]))

    for e in rec.feature(Feature.BUILD_ID) or []:
        add(e)
    rows = rec.rows_of_type(RecordType.HEADER_BUILD_ID, RecordType.MMAP2)
    # only an MMAP2 with MMAP_BUILD_ID in its misc carries one: the others are not decoded
    # (every MMAP2 decoded and kept took ~10 bytes a record of a long recording: 400 MB
    # of a 50 M-record --pprof whose MMAP2s repeat)
    keep = (rec.columns["type"][rows] == RecordType.HEADER_BUILD_ID) | \
        (record_misc(rec, rows) & Misc.MMAP_BUILD_ID != 0)
    for i in rows[keep].tolist():
        try:
            add(rec.decode(int(i)))
        except ValueError:
            continue
    return out


def write_pprof(rec: Recording, sl: SampleLocs, pos: np.ndarray | slice, path: str,
                name_of_loc: Callable[[int], str]) -> None:
    """Write the samples at positions ``pos`` of ``sl`` to ``path`` as a gzipped
    profile.proto (through a temporary file and a rename); ``name_of_loc``: a frame's
    name, as the folded stacks have it."""
    with atomic_file(path, "wb") as raw, gzip.GzipFile(fileobj=raw, mode="wb",
                                                       mtime=0) as out:
        _Writer(rec, sl, name_of_loc).write(pos, out.write)


class _Writer:
    """One profile's messages, written as they are made."""

    def __init__(self, rec: Recording, sl: SampleLocs, name_of_loc: Callable[[int], str]
                 ) -> None:
        self.rec, self.sl, self.name_of_loc = rec, sl, name_of_loc
        self.s = Strings()
        self.used = np.zeros(len(sl.locs), dtype=bool)  # locations the samples name
        self.flat = np.zeros(len(sl.locs), dtype=np.int64)  # samples with it as their leaf

    def write(self, pos: np.ndarray | slice, emit: Callable[[bytes], object]) -> None:
        rec, sl = self.rec, self.sl
        c = rec.columns
        n, take = taker(pos, len(sl))
        by = sl.stack if sl.stack is not None else sl.leaf
        nstacks = len(sl.stack_starts) - 1 if sl.stack is not None else len(sl.locs)

        def columns(lo: int, hi: int) -> list[np.ndarray]:
            p = take(lo, hi)
            r = sl.rows[p]
            return [c["attr"][r].astype(np.int64), sl.comm[p], c["pid"][r], c["tid"][r],
                    c["cpu"][r], by[p]]

        g = group_samples(n, columns, lambda lo, hi: sl.period[take(lo, hi)],
                          [max(len(rec.attrs), 1), len(sl.comm_names), None, None, None,
                           nstacks])
        attr, comm, pid, tid, cpu, ids = (np.asarray(x, dtype=np.int64) for x in g.cols) \
            if len(g.first) else [np.zeros(0, np.int64)] * 6
        events = sorted(set(np.unique(attr).tolist())) or [0]
        slot = {a: i for i, a in enumerate(events)}
        attrs = [rec.attrs[a] if a < len(rec.attrs) else EventAttr() for a in events]
        prof = pb.Profile()
        for a, ea in zip(events, attrs, strict=True):
            name = rec.attrs[a].display_name if a < len(rec.attrs) else "?"
            samples = "samples" if len(events) == 1 else f"{name}_samples"
            prof.sample_type.add(type=self.s(samples), unit=self.s("count"))
            prof.sample_type.add(type=self.s(name), unit=self.s(period_unit(ea)))
        keys = {k: self.s(k) for k in ("comm", "pid", "tid", "cpu", "section")}
        has_cpu = [bool(ea.sample_type & SampleBits.CPU) for ea in attrs]
        has_tid = [bool(ea.sample_type & SampleBits.TID) for ea in attrs]
        locs = sl.locs
        section = [locs.section[i] if locs.dsos[locs.dso[i]].module is not None else None
                   for i in range(len(locs))] if len(attr) else []
        batch = pb.Profile()
        nvals = 2 * len(events)
        for i in range(len(attr)):
            frames = self._frames(int(ids[i]))
            self.used[frames] = True
            self.flat[frames[0]] += int(g.count[i])
            k = slot[int(attr[i])]
            values = [0] * nvals
            values[2 * k], values[2 * k + 1] = int(g.count[i]), int(g.period[i])
            smp = batch.sample.add(location_id=[f + 1 for f in frames], value=values)
            smp.label.add(key=keys["comm"], str=self.s(sl.comm_names[int(comm[i])]))
            if has_tid[k]:
                smp.label.add(key=keys["pid"], str=self.s(str(int(pid[i]))))
                smp.label.add(key=keys["tid"], str=self.s(str(int(tid[i]))))
            if has_cpu[k] and cpu[i] >= 0:
                smp.label.add(key=keys["cpu"], str=self.s(str(int(cpu[i]))))
            sec = section[frames[0]]
            if sec is not None:
                smp.label.add(key=keys["section"], str=self.s(sec))
            if len(batch.sample) >= BATCH:
                emit(batch.SerializeToString())
                batch.Clear()
        if len(batch.sample):
            emit(batch.SerializeToString())
        self._locations(prof)
        first = int(events[0])
        prof.period_type.type, prof.period_type.unit = prof.sample_type[1].type, \
            prof.sample_type[1].unit
        if first < len(rec.attrs) and not rec.attrs[first].freq:
            prof.period = int(rec.attrs[first].sample_period)
        prof.default_sample_type = prof.sample_type[1].type
        prof.duration_nanos, prof.time_nanos = self._times(n, take)
        prof.comment.append(self.s(f"perftui {__version__}: {os.path.basename(rec.path)}"))
        prof.string_table.extend(self.s.table)
        emit(prof.SerializeToString())

    def _frames(self, sid: int) -> list[int]:
        """The frames of stack ``sid`` (or, without callchains, of location ``sid``), leaf
        first: the folded stacks' frames."""
        sl = self.sl
        if sl.stack is None:
            return [sid]
        lo, hi = int(sl.stack_starts[sid]), int(sl.stack_starts[sid + 1])
        if hi - lo <= 1:
            return [int(sl.stack_locs[lo])]
        out: list[int] = sl.stack_locs[lo + 1:hi].tolist()
        return out

    def _locations(self, prof: pb.Profile) -> None:
        """A location and a function per frame the samples name, a mapping per dso."""
        locs = self.sl.locs
        used = np.flatnonzero(self.used).tolist()
        dso_of: dict[int, list[int]] = {}
        for i in used:
            dso_of.setdefault(locs.dso[i], []).append(i)
        bids = build_ids(self.rec)
        module_bids = recording_build_ids(self.rec)  # by module name

        def first(d: int) -> tuple[bool, int, int]:
            # pprof takes the first mapping for the main program: the user-space object
            # with the most samples' leaves
            return locs.dsos[d].kernel, -int(self.flat[dso_of[d]].sum()), d

        for d, members in sorted(dso_of.items(), key=lambda kv: first(kv[0])):
            ld = locs.dsos[d]
            starts = [locs.start[i] for i in members]
            ends = [locs.end[i] for i in members]
            bid = bids.get(ld.name) or (module_bids.get(ld.module, "") if ld.module else "")
            prof.mapping.add(id=d + 1, memory_start=min(starts),
                             memory_limit=min(max(ends), (1 << 64) - 1),
                             filename=self.s(ld.name), build_id=self.s(bid),
                             has_functions=True)
        for i in used:
            name = self.s(self.name_of_loc(i))
            # no system name: pprof then takes the name as demangled already (with a system
            # name equal to it, it cuts what looks like C++ parameters: "(deleted)")
            prof.function.add(id=i + 1, name=name)
            loc = prof.location.add(id=i + 1, mapping_id=locs.dso[i] + 1,
                                    address=locs.start[i])
            loc.line.add(function_id=i + 1)

    def _times(self, n: int, take: Callable[[int, int], np.ndarray | slice]
               ) -> tuple[int, int]:
        """(duration, wall-clock start) in nanoseconds of the samples: the span of their
        times, and its start on the wall clock when the recording has CLOCK_DATA (else 0)."""
        t = self.rec.columns["time"]
        lo, hi = None, None
        for a in range(0, n, 1 << 18):
            tt = t[self.sl.rows[take(a, min(n, a + (1 << 18)))]]
            tt = tt[tt > 0]
            if len(tt):
                lo = int(tt.min()) if lo is None else min(lo, int(tt.min()))
                hi = int(tt.max()) if hi is None else max(hi, int(tt.max()))
        if lo is None or hi is None:
            return 0, 0
        clock = self.rec.feature(Feature.CLOCK_DATA)
        wall = 0
        if isinstance(clock, dict) and clock.get("wall_clock_ns"):
            wall = int(clock["wall_clock_ns"]) + lo - int(clock.get("clockid_ns", 0))
        return hi - lo, max(wall, 0)
