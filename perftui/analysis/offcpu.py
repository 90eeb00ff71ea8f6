"""Off-CPU time from ``sched:sched_switch`` samples (issue 30), as hotspot computes it: each
switch-out's stack is charged with the time until its thread runs again, which is the
thread's next switch-in (a ``--switch-events`` SWITCH record, or a sched_switch whose
``next_pid`` is the thread, system-wide), or failing that its next sample or record.

The fields come from the recording's own sched_switch format (:mod:`..perfdata.tracefmt`);
``prev_state`` is shown as its print format shows it and kept as a state code
(:data:`STATES`): ``R``/``R+`` a preempted thread (runnable), the others asleep or stopped.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.constants import Misc
from ..perfdata.index import NO_SOURCE
from ..perfdata.rawfields import raw_spans
from ..perfdata.tracefmt import TraceFormat, flag_letters
from ..symbols.naming.samplelocs import SampleLocs

#: perf's name for its BPF off-CPU event (``perf record --off-cpu``), which this one stands
#: for; its period is in nanoseconds
OFFCPU_EVENT = "offcpu-time"

SWITCH_EVENT = "sched:sched_switch"
#: state codes: the first letter of prev_state as printed (``R+``: preempted with the
#: kernel's "preempt" bit); ``?`` a letter none of these
STATES = ("R", "R+", "S", "D", "I", "T", "t", "X", "Z", "P", "K", "W", "x", "N", "?")
#: the letters the kernel has given prev_state's bits since 2.6, where a format has no table
_LINUX_TABLE = [(1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "P"),
                (128, "I")]
#: how a switch-out's time ended (:attr:`OffCpu.ended`)
BY_SWITCH_IN, BY_NEXT_PID, BY_NEXT_EVENT = 0, 1, 2


@dataclass
class OffCpu:
    """The switch-outs charged: their sched_switch sample ``rows`` (index rows, in file
    order), each one's off-CPU time in ns, its state code and how its time ended."""

    rows: np.ndarray  # int64
    ns: np.ndarray  # uint64
    state: np.ndarray  # uint8, into STATES
    ended: np.ndarray  # uint8: BY_SWITCH_IN, BY_NEXT_PID, BY_NEXT_EVENT
    notes: list[str] = field(default_factory=list)


def switch_attrs(rec: Recording) -> dict[int, TraceFormat]:
    """The recording's sched_switch events (attr index -> its format)."""
    out = {}
    for k, a in enumerate(rec.attrs):
        fmt = rec.trace_formats.get(a.config) if a.type == 2 else None
        if fmt is not None and fmt.name == SWITCH_EVENT:
            out[k] = fmt
    return out


def offcpu_attr(rec: Recording) -> int | None:
    """The sched_switch event whose samples make ``offcpu-time`` (None: none, or the
    recording has a real event of that name)."""
    attrs = switch_attrs(rec)
    if not attrs or any(a.display_name == OFFCPU_EVENT for a in rec.attrs):
        return None
    return min(attrs)


class StateColumn:
    """The state code of charged sample rows, indexed as an index column is (by rows)."""

    def __init__(self, oc: OffCpu) -> None:
        self.rows, self.state = oc.rows, oc.state

    def __getitem__(self, rows: np.ndarray) -> np.ndarray:
        at = np.minimum(np.searchsorted(self.rows, rows), max(len(self.rows) - 1, 0))
        return self.state[at] if len(self.rows) else np.zeros(len(rows), np.uint8)


def charged(sl: SampleLocs, rows: np.ndarray, oc: OffCpu) -> tuple[SampleLocs, np.ndarray]:
    """The names with each charged sample's period its off-CPU nanoseconds, and those of
    ``rows`` (ascending index rows) that were charged."""
    period = np.array(sl.period, np.uint64)
    have = np.isin(oc.rows, sl.rows)
    period[np.searchsorted(sl.rows, oc.rows[have])] = oc.ns[have]
    keep = rows[np.isin(rows, oc.rows[have])]
    return replace(sl, period=period, token=os.urandom(8).hex()), keep


def weights(oc: OffCpu, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per sample of ``rows`` (ascending index rows, as a store of groups has them):
    whether it was charged, and its off-CPU nanoseconds (0 when not)."""
    at = np.searchsorted(rows, oc.rows)
    ok = at < len(rows)
    ok[ok] = rows[at[ok]] == oc.rows[ok]
    hit = np.zeros(len(rows), bool)
    hit[at[ok]] = True
    ns = np.zeros(len(rows), np.int64)
    ns[at[ok]] = oc.ns[ok].astype(np.int64)
    return hit, ns


def state_code(letters: str) -> int:
    """A printed prev_state (``S``, ``R+``, ``D|K``) as its code in :data:`STATES`."""
    if letters in ("R", "R+"):
        return STATES.index(letters)
    return STATES.index(letters[0]) if letters[:1] in STATES else STATES.index("?")


def off_cpu(rec: Recording) -> OffCpu:
    """Every sched_switch sample of an indexed recording charged with its thread's time
    off the CPU (samples whose time never ends, or whose fields cannot be read: counted
    in the notes, not charged)."""
    c = rec.columns
    n = len(c)
    notes: list[str] = []
    attrs = switch_attrs(rec)
    samples = rec.rows_of_type(RecordType.SAMPLE)
    sw = samples[np.isin(c["attr"][samples], list(attrs))] if attrs else samples[:0]
    prev, state, nxt, ok = _switch_fields(rec, sw, attrs, notes)
    bad = int(np.count_nonzero(~ok))
    if bad:
        notes.append(f"{bad} sched_switch samples without prev_pid, prev_state or next_pid "
                     "in their RAW data (too short): not charged")
    live = ok & (prev > 0)  # (pid 0: a CPU's idle task)
    out_rows, out_tid, out_state = sw[live], prev[live], state[live]
    out_time = c["time"][out_rows].astype(np.int64)
    tids = np.unique(out_tid)
    # what ends a thread's time off the CPU: a switch-in, a sched_switch to it, its events
    recs = rec.rows_of_type(RecordType.SWITCH, RecordType.SWITCH_CPU_WIDE)
    out_mask = _misc(rec, recs) & Misc.SWITCH_OUT != 0
    switch_out = recs[out_mask]
    tid = _writer_tids(rec)
    mine = np.isin(tid, tids) & (c["time"][:n] > 0)
    mine[switch_out] = False
    cand = np.flatnonzero(mine)
    is_in = np.zeros(n, bool)
    is_in[recs[~out_mask]] = True  # (np.setdiff1d here: 1.3 s of 1.5 at 0.8 M switches)
    to = ok & np.isin(nxt, tids)
    cand_tid = np.concatenate([tid[cand].astype(np.int64), nxt[to]])
    cand_time = np.concatenate([c["time"][cand].astype(np.int64),
                                c["time"][sw[to]].astype(np.int64)])
    cand_how = np.concatenate([np.where(is_in[cand], BY_SWITCH_IN, BY_NEXT_EVENT),
                               np.full(int(to.sum()), BY_NEXT_PID)]).astype(np.uint8)
    # one sort by (thread, time), candidates before a switch-out at the same time: each
    # switch-out's end is the first candidate after it of the same thread
    tid_all = np.concatenate([cand_tid, out_tid])
    time_all = np.concatenate([cand_time, out_time])
    kind = np.concatenate([np.zeros(len(cand_tid), np.int8), np.ones(len(out_tid), np.int8)])
    order = np.lexsort((kind, time_all, tid_all))
    big = len(order)
    at = np.where(kind[order] == 0, np.arange(big), big)
    after = np.append(np.minimum.accumulate(at[::-1])[::-1][1:], big)
    outs = np.flatnonzero(kind[order] == 1)
    j = after[outs]
    ends = j < big
    ends[ends] = tid_all[order[j[ends]]] == tid_all[order[outs[ends]]]
    which = order[outs] - len(cand_tid)  # position among the switch-outs
    lost = int(np.count_nonzero(~ends))
    if lost:
        notes.append(f"{lost} switch-outs with no later event of their thread (the "
                     "recording ended first): not charged")
    k = which[ends]
    ns = (time_all[order[j[ends]]] - out_time[k]).astype(np.uint64)
    how = cand_how[order[j[ends]]]
    keep = np.argsort(out_rows[k], kind="stable")
    return OffCpu(out_rows[k][keep], ns[keep], out_state[k][keep], how[keep], notes)


def _switch_fields(rec: Recording, rows: np.ndarray, attrs: dict[int, TraceFormat],
                   notes: list[str]) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """prev_pid, the state code, next_pid of sched_switch ``rows`` and whether all three
    could be read (each attr by its own format)."""
    m = len(rows)
    prev, nxt = np.zeros(m, np.int64), np.zeros(m, np.int64)
    state, ok = np.zeros(m, np.uint8), np.zeros(m, bool)
    spans = raw_spans(rec, rows)
    attr = rec.columns["attr"][rows]
    for a, fmt in attrs.items():
        sel = np.flatnonzero(attr == a)
        need = [fmt.fields.get(f) for f in ("prev_pid", "prev_state", "next_pid")]
        if any(f is None for f in need):
            notes.append(f"{fmt.name}'s format has no prev_pid, prev_state or next_pid: "
                         "its samples are not charged")
            continue
        sub = spans.take(sel)
        (p, p_ok), (s, s_ok), (x, x_ok) = (sub.field(rec, f) for f in need if f is not None)
        table = fmt.flags("prev_state")
        if not table:
            notes.append(f"{fmt.name}'s print format has no prev_state letters: the "
                         "kernel's usual ones assumed")
            table = _LINUX_TABLE
        values, inverse = np.unique(s, return_inverse=True)
        codes = np.array([state_code(flag_letters(int(v), table)) for v in values], np.uint8)
        prev[sel], nxt[sel], ok[sel] = p, x, p_ok & s_ok & x_ok
        state[sel] = codes[inverse] if len(s) else 0
    return prev, state, nxt, ok


def _writer_tids(rec: Recording) -> np.ndarray:
    """The thread that was running when each record was written: the index's tid, but a
    FORK's from its sample_id (the parent's; the index has the child's), -1 without one."""
    tid = np.array(rec.columns["tid"][:len(rec.columns)], np.int64)
    for r in rec.rows_of_type(RecordType.FORK).tolist():
        try:
            tid[r] = rec.decode(r).get("sample_id", {}).get("tid", -1)
        except ValueError:
            tid[r] = -1
    return tid


def _misc(rec: Recording, rows: np.ndarray) -> np.ndarray:
    """The header ``misc`` of records ``rows``."""
    c = rec.columns
    out = np.zeros(len(rows), np.int64)
    src = c["src"][rows]
    for s in np.unique(src).tolist():
        if s == NO_SOURCE:
            continue
        sel = np.flatnonzero(src == s)
        u8 = np.frombuffer(rec.sources[s].buf, dtype=np.uint8)
        at = c["pos"][rows[sel]].astype(np.int64) + 4
        out[sel] = u8[at[:, None] + np.arange(2)].view(np.dtype(rec.order + "u2")).ravel()
    return out
