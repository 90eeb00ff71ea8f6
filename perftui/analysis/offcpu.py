"""Off-CPU time from ``sched:sched_switch`` samples (issue 30), as hotspot computes it: each
switch-out's stack is charged with the time until its thread runs again, which is the
thread's next switch-in (a ``--switch-events`` SWITCH record, or a sched_switch whose
``next_pid`` is the thread, system-wide), or failing that its next sample or record.

The fields come from the recording's own sched_switch format (:mod:`..perfdata.tracefmt`);
``prev_state`` is shown as its print format shows it and kept as a state code
(:data:`STATES`): ``R``/``R+`` a preempted thread (runnable), the others asleep or stopped.

A recording with ``--switch-events`` but no sched_switch has SWITCH records, which carry no
stack: each switch-out's time then goes to the stack of its thread's last sample before it,
as samply (the Firefox Profiler's importer) does, and the notes say so
(:func:`_from_switch_records`). Its state is ``R`` where the record says the thread was
preempted (kernels since 4.17), else ``S/D``: asleep, blocked or stopped, not told apart.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field, replace

import numpy as np

from ..perfdata import Recording, RecordType
from ..perfdata.constants import Misc
from ..perfdata.fieldgather import record_misc
from ..perfdata.rawfields import raw_spans
from ..perfdata.tracefmt import TraceFormat, flag_letters
from ..symbols.naming.samplelocs import SampleLocs

#: perf's name for its BPF off-CPU event (``perf record --off-cpu``), which this one stands
#: for; its period is in nanoseconds
OFFCPU_EVENT = "offcpu-time"

SWITCH_EVENT = "sched:sched_switch"
#: state codes: the first letter of prev_state as printed (``R+``: preempted with the
#: kernel's "preempt" bit); ``?`` a letter none of these
STATES = ("R", "R+", "S", "D", "I", "T", "t", "X", "Z", "P", "K", "W", "x", "N", "?", "S/D")
#: a SWITCH record's switch-out not marked preempted: S, D, T... not told apart
NOT_PREEMPTED = STATES.index("S/D")
#: the letters the kernel has given prev_state's bits since 2.6, where a format has no table
_LINUX_TABLE = [(1, "S"), (2, "D"), (4, "T"), (8, "t"), (16, "X"), (32, "Z"), (64, "P"),
                (128, "I")]
#: how a switch-out's time ended (:attr:`OffCpu.ended`)
BY_SWITCH_IN, BY_NEXT_PID, BY_NEXT_EVENT = 0, 1, 2


@dataclass
class OffCpu:
    """The switch-outs charged: their sched_switch sample ``rows`` (index rows, in file
    order), each one's off-CPU time in ns, its state code and how its time ended.

    From SWITCH records (:func:`offcpu_borrowed`) the rows are the samples whose stacks
    the switch-outs borrow, each with the sum of the switch-outs after it (its thread's,
    before its next sample), and the state and end of the longest of them."""

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
    """The event whose samples make ``offcpu-time``: the sched_switch event, or without one
    the event recorded with ``--switch-events`` (its samples lend their stacks to the
    SWITCH records; :func:`switch_records_attr`). None: neither, or the recording has a
    real event of that name."""
    if any(a.display_name == OFFCPU_EVENT for a in rec.attrs):
        return None
    attrs = switch_attrs(rec)
    return min(attrs) if attrs else switch_records_attr(rec)


def offcpu_borrowed(rec: Recording) -> bool:
    """Whether ``offcpu-time`` is made from SWITCH records, its stacks the samples'."""
    return offcpu_attr(rec) is not None and not switch_attrs(rec)


def switch_records_attr(rec: Recording) -> int | None:
    """The first event recorded with ``context_switch`` (perf's ``--switch-events``: the
    kernel writes SWITCH records for it), not a tracepoint: None without one."""
    return next((k for k, a in enumerate(rec.attrs)
                 if a.type != 2 and a.flag("context_switch")), None)


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
    in the notes, not charged); without sched_switch, the SWITCH records' switch-outs
    charged to the samples before them (:func:`_from_switch_records`)."""
    c = rec.columns
    notes: list[str] = []
    attrs = switch_attrs(rec)
    if not attrs:
        src = switch_records_attr(rec)
        if src is not None:
            return _from_switch_records(rec, src)
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
    to = ok & np.isin(nxt, np.unique(out_tid))
    k, ns, how = _ends(rec, out_tid, out_time, nxt[to], c["time"][sw[to]].astype(np.int64),
                       notes)
    keep = np.argsort(out_rows[k], kind="stable")
    return OffCpu(out_rows[k][keep], ns[keep], out_state[k][keep], how[keep], notes)


def _switch_records(rec: Recording) -> tuple[np.ndarray, np.ndarray]:
    """The SWITCH and SWITCH_CPU_WIDE rows and each one's header ``misc``."""
    recs = rec.rows_of_type(RecordType.SWITCH, RecordType.SWITCH_CPU_WIDE)
    return recs, record_misc(rec, recs)


def _ends(rec: Recording, out_tid: np.ndarray, out_time: np.ndarray, to_tid: np.ndarray,
          to_time: np.ndarray, notes: list[str],
          known: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None
          ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """When each switch-out (its thread and time) ends: the first later switch-in, switch
    to it (``to_tid`` at ``to_time``: sched_switch's next_pid) or record of its thread.
    Returns which switch-outs end (positions), their ns off the CPU and how each ended;
    the ones that never end are counted in ``notes``. ``known``: the switch records, their
    misc and the writer tids, when the caller has them."""
    c = rec.columns
    n = len(c)
    tids = np.unique(out_tid)
    if known is None:
        known = (*_switch_records(rec), _writer_tids(rec))
    recs, misc, tid = known
    out_mask = misc & Misc.SWITCH_OUT != 0
    switch_out = recs[out_mask]
    mine = np.isin(tid, tids) & (c["time"][:n] > 0)
    mine[switch_out] = False
    cand = np.flatnonzero(mine)
    is_in = np.zeros(n, bool)
    is_in[recs[~out_mask]] = True  # (np.setdiff1d here: 1.3 s of 1.5 at 0.8 M switches)
    cand_tid = np.concatenate([tid[cand].astype(np.int64), to_tid])
    cand_time = np.concatenate([c["time"][cand].astype(np.int64), to_time])
    cand_how = np.concatenate([np.where(is_in[cand], BY_SWITCH_IN, BY_NEXT_EVENT),
                               np.full(len(to_tid), BY_NEXT_PID)]).astype(np.uint8)
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
    return k, ns, how


def _from_switch_records(rec: Recording, src: int) -> OffCpu:
    """Off-CPU time from ``--switch-events``' SWITCH records: each switch-out (its thread's
    time until it runs again, as :func:`_ends` finds it) charged to the stack of its
    thread's last sample of event ``src`` at or before it, the records having none."""
    c = rec.columns
    notes: list[str] = []
    recs, misc = _switch_records(rec)
    writers = _writer_tids(rec)  # (decodes every FORK: once, for _ends too)
    is_out = misc & Misc.SWITCH_OUT != 0
    outs = recs[is_out]
    out_tid = writers[outs]
    live = out_tid > 0  # (no sample_id: -1; the idle task: 0)
    outs, out_tid = outs[live], out_tid[live]
    preempt = misc[is_out][live] & Misc.SWITCH_OUT_PREEMPT != 0
    out_time = c["time"][outs].astype(np.int64)
    k, ns, how = _ends(rec, out_tid, out_time, out_tid[:0], out_time[:0], notes,
                       (recs, misc, writers))
    # the thread's last sample of src at or before each charged switch-out
    samples = rec.rows_of_type(RecordType.SAMPLE)
    samples = samples[c["attr"][samples] == src]
    s_tid = np.asarray(c["tid"][samples], np.int64)
    s_time = c["time"][samples].astype(np.int64)
    q_tid, q_time = out_tid[k], out_time[k]
    tid_all = np.concatenate([s_tid, q_tid])
    time_all = np.concatenate([s_time, q_time])
    kind = np.concatenate([np.zeros(len(s_tid), np.int8), np.ones(len(q_tid), np.int8)])
    order = np.lexsort((kind, time_all, tid_all))  # a sample at the same time: before
    at = np.where(kind[order] == 0, np.arange(len(order)), -1)
    before = np.maximum.accumulate(at) if len(at) else at
    qs = np.flatnonzero(kind[order] == 1)
    j = before[qs]
    found = j >= 0
    found[found] = tid_all[order[j[found]]] == tid_all[order[qs[found]]]
    q = order[qs] - len(s_tid)  # position among the charged switch-outs
    lent = np.full(len(q_tid), -1, np.int64)
    lent[q[found]] = samples[order[j[found]]]
    name = rec.attrs[src].display_name
    none = int(np.count_nonzero(lent < 0))
    notes.append(f"offcpu-time from --switch-events: SWITCH records carry no stack, so each "
                 f"switch-out's time goes to the stack of its thread's last {name} sample "
                 "before it (record -e sched:sched_switch -g for the switch-out's own)")
    if none:
        notes.append(f"{none} switch-outs of threads with no {name} sample before them: "
                     "not charged")
    state = np.where(preempt[k], STATES.index("R"), NOT_PREEMPTED).astype(np.uint8)
    if len(preempt) and not preempt.any():
        notes.append(f"none of the {len(preempt)} switch-outs is marked preempted (kernels "
                     "before 4.17 never mark them): all shown S/D")
    have = lent >= 0
    rows, inv = np.unique(lent[have], return_inverse=True)
    ns_h, state_h, how_h = ns[have], state[have], how[have]
    sums = np.zeros(len(rows), np.uint64)
    np.add.at(sums, inv, ns_h)  # (exact in integers, as bincount's float64 is not)
    longest = np.lexsort((-ns_h.astype(np.int64), inv))
    head = np.ones(len(longest), bool)
    head[1:] = inv[longest][1:] != inv[longest][:-1]
    first = longest[head]
    return OffCpu(rows.astype(np.int64), sums, state_h[first], how_h[first], notes)


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
