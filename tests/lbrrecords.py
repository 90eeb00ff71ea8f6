"""Hand-made ``--call-graph lbr`` recordings (the project's writer): one process that maps one
ELF file, and samples with the callchain and LBR call stack a test chooses.

The attr is what perf 6.1's ``perf record --call-graph lbr`` asks for (tools/perf/util/
evsel.c ``evsel__config_callchain``): ``PERF_SAMPLE_CALLCHAIN`` and ``PERF_SAMPLE_BRANCH_STACK``
with ``branch_sample_type`` USER | CALL_STACK | NO_FLAGS | NO_CYCLES | HW_INDEX; the bits are
spelled out here from ``perf_event.h``, not taken from perftui.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from perftui.perfdata import EventAttr, Feature, Sample
from perftui.perfdata.constants import Misc
from perftui.perfdata.writer import Writer

#: PERF_SAMPLE_BRANCH_USER (1 << 0), CALL_STACK (1 << 11), NO_FLAGS (1 << 14),
#: NO_CYCLES (1 << 15), HW_INDEX (1 << 17)
LBR_BRANCH_TYPE = 1 << 0 | 1 << 11 | 1 << 14 | 1 << 15 | 1 << 17
BASE = 0x7F0000000000
PID = 4343


@dataclass
class LbrSample:
    ip: int
    callchain: list[int]
    #: (from, to) of each LBR entry, newest first; None: the field is cut off the record
    branches: list[tuple[int, int]] | None = field(default_factory=list)
    misc: int = Misc.USER
    hw_idx: int = 5  # the ring position of the newest entry (PERF_SAMPLE_BRANCH_HW_INDEX)
    tid: int = PID


def lbr_recording(path: Path, elf_path: str, samples: list[LbrSample], *,
                  branch_type: int = LBR_BRANCH_TYPE, order: str = "<",
                  file_size: int = 0x10000, max_branches: int | None = None) -> Path:
    """A recording of process :data:`PID` with ``elf_path`` mapped whole at :data:`BASE`
    (pgoff 0, r-x) and ``samples``; ``max_branches``: the LBR's depth in the header
    (``CPU_PMU_CAPS``' ``branches``, what perf's ``--stitch-lbr`` needs)."""
    st = (Sample.IP | Sample.TID | Sample.TIME | Sample.CALLCHAIN | Sample.PERIOD
          | Sample.BRANCH_STACK)
    attr = EventAttr(type=1, size=128, sample_period=1000, sample_type=int(st),
                     flags=1 << 8 | 1 << 9 | 1 << 18 | 1 << 23, branch_sample_type=branch_type,
                     ids=[7], name="cpu-clock")
    with open(path, "wb") as f:
        features: dict[Feature, Any] = {Feature.ARCH: "x86_64",
                                        Feature.OSRELEASE: "6.1.0-test"}
        if max_branches is not None:
            features[Feature.CPU_PMU_CAPS] = {"branches": str(max_branches)}
        w = Writer(f, [attr], features, order=order)
        b = w.b
        sid = {"pid": PID, "tid": PID, "time": 10, "cpu": 0}
        w.write(b.kernel("COMM", {"pid": PID, "tid": PID, "comm": "lbrmade"},
                         misc=Misc.COMM_EXEC, sample_id=sid))
        mm: dict[str, Any] = {"pid": PID, "tid": PID, "addr": BASE, "len": file_size,
                              "pgoff": 0, "prot": 5, "flags": 2, "filename": elf_path,
                              "maj": 0, "min": 0, "ino": 1, "ino_generation": 0}
        w.write(b.kernel("MMAP2", mm, misc=Misc.USER, sample_id=sid))
        w.write(b.user("FINISHED_INIT"))
        for k, s in enumerate(samples):
            fields: dict[str, Any] = {"ip": s.ip, "pid": PID, "tid": s.tid, "time": 100 + k,
                                      "period": 1000, "callchain": s.callchain}
            pairs = [(s.ip, s.ip)] * 2 if s.branches is None else s.branches
            fields["branch_stack"] = {"hw_idx": s.hw_idx, "entries": [
                {"from": fr, "to": to, "flags": 0} for fr, to in pairs]}
            raw = b.sample(fields, misc=s.misc)
            if s.branches is None:  # the record ends inside its branch stack's last entry
                raw = _cut(raw, 8, order)
            w.write(raw)
        w.close()
    return path


def _cut(raw: bytes, drop: int, order: str) -> bytes:
    """``raw`` with its last ``drop`` bytes gone and its header's size saying so."""
    size = len(raw) - drop
    return raw[:6] + size.to_bytes(2, "little" if order == "<" else "big") + raw[8:size]
