"""Hand-built recordings for the thread and map model, with the answer planned in advance.

A :class:`Plan` lists records (in file order) and, for every sample, the comm and dso the
test expects: the answer is the plan's, worked out from perf 6.1's rules, never perftui's.
:func:`perf_view` runs the real perf on the written file so a test can also check that perf
agrees with the plan.
"""

from __future__ import annotations

import re
import shutil
import struct
import subprocess
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from conftest import skip_or_fail
from perftui.perfdata import EventAttr, Feature, RecordType, Sample
from perftui.perfdata.constants import Misc
from perftui.perfdata.features import encode_feature
from perftui.perfdata.writer import Writer

PERF = shutil.which("perf")
SAMPLE_TYPE = int(Sample.IP | Sample.TID | Sample.TIME | Sample.CPU | Sample.PERIOD)
# mmap, comm, sample_id_all, mmap2, comm_exec
FLAGS = 1 << 8 | 1 << 9 | 1 << 18 | 1 << 23 | 1 << 24
FORK_EXEC = 1 << 13


def need_perf() -> None:
    """Skip without perf, except in CI where a missing oracle is a failure."""
    if PERF is None:
        skip_or_fail("perf is not on the PATH")


@dataclass
class Expect:
    comm: str
    dso: str
    frames: list[str] | None = None  # dso of each callchain frame perf prints
    perf_prints: bool = True  # perf script hides guest samples (filtered without --guest)


@dataclass
class Plan:
    """Records in file order; ``expect`` in the order perf delivers the samples."""

    sample_id_all: bool = True
    callchain: bool = False
    records: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    expect: list[tuple[int, int, Expect]] = field(default_factory=list)  # (tid, time, ...)
    build_ids: list[dict[str, Any]] = field(default_factory=list)
    #: pipe mode: HEADER_BUILD_ID records at the "start" or the "end" of the stream (perf
    #: record writes them at the end); file mode always uses the BUILD_ID feature
    build_ids_at: str = "start"

    def _sid(self, pid: int, tid: int, t: int) -> dict[str, int]:
        return {"pid": pid, "tid": tid, "time": t, "cpu": 0}

    def comm(self, pid: int, tid: int, name: str, t: int, exec_: bool = False) -> None:
        self.records.append(("COMM", {"f": {"pid": pid, "tid": tid, "comm": name},
                                      "misc": Misc.COMM_EXEC if exec_ else 0,
                                      "sid": self._sid(pid, tid, t)}))

    def fork(self, pid: int, ppid: int, t: int, tid: int | None = None,
             ptid: int | None = None, synthesized: bool = False) -> None:
        tid = pid if tid is None else tid
        ptid = ppid if ptid is None else ptid
        self.records.append(("FORK", {"f": {"pid": pid, "ppid": ppid, "tid": tid,
                                            "ptid": ptid, "time": t},
                                      "misc": FORK_EXEC if synthesized else 0,
                                      "sid": self._sid(ppid, ptid, t)}))

    def exit(self, pid: int, t: int, tid: int | None = None) -> None:
        tid = pid if tid is None else tid
        self.records.append(("EXIT", {"f": {"pid": pid, "ppid": pid, "tid": tid, "ptid": tid,
                                            "time": t}, "misc": 0,
                                      "sid": self._sid(pid, tid, t)}))

    def mmap(self, pid: int, start: int, length: int, filename: str, t: int, pgoff: int = 0,
             tid: int | None = None, prot: int = 5, flags: int = 2, build_id: str | None = None,
             kernel: bool = False, v1: bool = False, data: bool = False) -> None:
        tid = pid if tid is None else tid
        f: dict[str, Any] = {"pid": pid, "tid": tid, "addr": start, "len": length,
                             "pgoff": pgoff, "filename": filename}
        misc = Misc.KERNEL if kernel else Misc.USER
        if data:
            misc |= Misc.MMAP_DATA
        if not v1:
            f.update({"prot": prot, "flags": flags})
            if build_id is not None:
                f["build_id"] = build_id
        self.records.append(("MMAP" if v1 else "MMAP2",
                             {"f": f, "misc": misc, "sid": self._sid(pid, tid, t)}))

    def ksymbol(self, addr: int, length: int, name: str, t: int, unregister: bool = False,
                ksym_type: int = 1) -> None:
        self.records.append(("KSYMBOL", {"f": {"addr": addr, "len": length,
                                               "ksym_type": ksym_type,
                                               "flags": 1 if unregister else 0, "name": name},
                                         "misc": 0, "sid": self._sid(-1, -1, t)}))

    def sample(self, pid: int, ip: int, t: int, expect: Expect | None = None,
               tid: int | None = None, cpumode: int = Misc.USER,
               callchain: list[int] | None = None) -> None:
        tid = pid if tid is None else tid
        s = {"ip": ip, "pid": pid, "tid": tid, "time": t, "cpu": 0, "period": 1}
        if self.callchain:
            s["callchain"] = callchain or []
        self.records.append(("SAMPLE", {"s": s, "misc": cpumode}))
        if expect is not None:
            self.expect.append((tid, t, expect))

    def round(self) -> None:
        self.records.append(("FINISHED_ROUND", {}))

    def attr(self) -> EventAttr:
        st = SAMPLE_TYPE | (int(Sample.CALLCHAIN) if self.callchain else 0)
        flags = FLAGS if self.sample_id_all else FLAGS & ~(1 << 18)
        return EventAttr(type=1, size=128, sample_type=st, flags=flags, ids=[7],
                         name="cpu-clock")

    def write(self, path: Path, mode: str = "file") -> Path:
        feats: dict[int, Any] = {Feature.ARCH: "x86_64"}
        if self.build_ids and mode == "file":
            feats[Feature.BUILD_ID] = self.build_ids
        with open(path, "wb") as f:
            w = Writer(f, [self.attr()], feats, mode=mode)
            b = w.b
            header_ids = self._header_build_ids(w) if mode == "pipe" else []
            if self.build_ids_at == "start":
                for r in header_ids:
                    w.write(r)
            for kind, a in self.records:
                if kind == "SAMPLE":
                    w.write(b.sample(a["s"], misc=a["misc"]))
                elif kind == "FINISHED_ROUND":
                    w.write(b.user("FINISHED_ROUND"))
                else:
                    w.write(b.kernel(kind, a["f"], misc=a["misc"], sample_id=a["sid"]))
            if self.build_ids_at == "end":
                for r in header_ids:
                    w.write(r)
            w.close()
        return path

    def _header_build_ids(self, w: Writer) -> list[bytes]:
        """HEADER_BUILD_ID records: the BUILD_ID feature's entry layout with type 67."""
        out = []
        for e in self.build_ids:
            raw = bytearray(encode_feature(w.order, Feature.BUILD_ID, [e]))
            struct.pack_into(w.order + "I", raw, 0, RecordType.HEADER_BUILD_ID)
            out.append(bytes(raw))
        return out


_HEAD = re.compile(r"^(?P<comm>.*?)\s+(?P<tid>-?\d+)\s+(?P<time>\d+\.\d{9}):\s*"
                   r"(?:(?P<ip>[0-9a-f]+)\s+\((?P<dso>.*)\))?\s*$")
_FRAME = re.compile(r"^\s+(?P<ip>[0-9a-f]+)\s+(?P<rest>.*\))$")


def frame_dso(rest: str) -> str:
    """The dso of a frame line's ``[sym ](dso)`` part: the parenthesised group ending the
    line, parentheses inside it balanced (perf adds the symbol in pipe mode; C++ symbols and
    "(deleted)" paths carry parentheses of their own)."""
    depth = 0
    for k in range(len(rest) - 1, -1, -1):
        depth += {")": 1, "(": -1}.get(rest[k], 0)
        if depth == 0:
            return rest[k + 1:-1]
    raise AssertionError(f"unbalanced frame: {rest!r}")


@dataclass
class PerfSample:
    comm: str
    tid: int
    time: int
    dso: str | None
    frames: list[str]


def is_pipe(path: Path) -> bool:
    if path.is_dir():
        return False
    with open(path, "rb") as f:
        return struct.unpack("<Q", f.read(16)[8:16])[0] == 16


def perf_view(path: Path, callchain: bool = False, kallsyms: Path | None = None,
              extra: tuple[str, ...] = ()) -> list[PerfSample]:
    """Samples as ``perf script -F comm,tid,time,ip,dso --ns`` prints them, in its order.

    Without ``callchain`` perf is given ``-G`` (one line per sample, the sample ip's dso);
    with it, the frames' dsos.  ``kallsyms`` points perf at a kallsyms file (an empty one keeps
    it from reading this machine's /proc/kallsyms and /proc/kcore for a recording's kernel);
    a pipe-mode file is fed through a real pipe.
    """
    need_perf()
    pipe = is_pipe(path)
    args = ["perf", "script", "-f", "-i", "-" if pipe else str(path), "--ns", "--itrace=",
            "-F", "comm,tid,time,ip,dso", *extra]
    if not callchain:
        args.append("-G")
    if kallsyms is not None:
        args += ["--kallsyms", str(kallsyms)]
    p = subprocess.run(args, input=path.read_bytes() if pipe else None, capture_output=True,
                       timeout=600)
    out: list[PerfSample] = []
    for line in p.stdout.decode("utf-8", "backslashreplace").splitlines():
        if not line.strip():
            continue
        if callchain and (m := _FRAME.match(line)) and out:
            out[-1].frames.append(frame_dso(m["rest"]))
            continue
        m = _HEAD.match(line)
        if m is None:
            raise AssertionError(f"unexpected perf script line: {line!r}")
        sec, ns = m["time"].split(".")
        out.append(PerfSample(m["comm"].strip(), int(m["tid"]), int(sec) * 10**9 + int(ns),
                              m["dso"], []))
    return out


@dataclass
class ModelSample:
    comm: str
    tid: int
    time: int
    dso: str
    frames: list[str]


def model_view(path: Path, max_stack: int = 127) -> list[ModelSample]:
    """The same view from perftui's :class:`ThreadModel`, samples in perf's order."""
    from perftui.perfdata import RecordType, open_recording
    from perftui.symbols.tasks.threads import ThreadModel

    rec = open_recording(path)
    rec.build_index()
    m = ThreadModel.build(rec)
    c = rec.columns
    rows = m.order[c["type"][m.order] == RecordType.SAMPLE]
    ids, names = m.sample_comms(rows)
    dsos = m.dso_names(m.map_of(rows))
    cc = m.callchain_maps(rows)
    frame_names = m.dso_names(cc.maps)
    keep = cc.frames()
    out = []
    for k, row in enumerate(rows.tolist()):
        s, n = int(cc.starts[k]), int(cc.counts[k])
        frames = [str(d) for d, f in zip(frame_names[s:s + n], keep[s:s + n], strict=True) if f]
        out.append(ModelSample(names[int(ids[k])], int(c["tid"][row]), int(c["time"][row]),
                               str(dsos[k]), frames[:max_stack]))
    return out
