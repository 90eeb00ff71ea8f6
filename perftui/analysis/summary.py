"""Headless summaries of a recording: the data behind ``perftui info`` (and the ``i`` screen)."""

from __future__ import annotations

from typing import Any

import numpy as np

from ..perfdata import Feature, Recording, RecordType, type_name
from ..perfdata.constants import feature_name, sample_type_names


def record_counts(rec: Recording) -> dict[str, int]:
    """Record type name -> count, with ``perf report --stats``'s convention.

    A COMPRESSED record counts, and so does every record inside it.  From the totals the
    walk keeps (:meth:`Recording.scan` or :meth:`Recording.build_index`).
    """
    return {type_name(c): n for c, n in sorted(rec.stats.type_dict().items())}


def samples_per_attr(rec: Recording) -> np.ndarray:
    """SAMPLE count per attr index; the last slot counts samples of unknown ids."""
    return rec.stats.samples_per_attr(len(rec.attrs))


def time_span(rec: Recording) -> tuple[int, int]:
    """(first, last) sample time in ns; all timed records when there is no sample."""
    return rec.stats.span()


def info_dict(rec: Recording) -> dict[str, Any]:
    """Everything ``perftui info --json`` prints (one stable object)."""
    f = rec.feature
    nrcpus = f(Feature.NRCPUS) or {}
    per_attr = samples_per_attr(rec)
    events = []
    for k, a in enumerate(rec.attrs):
        events.append({
            "name": a.display_name, "type": a.type, "config": a.config,
            "sample_type": sample_type_names(a.sample_type),
            "sample_period" if not a.freq else "sample_freq": a.sample_period,
            "ids": len(a.ids), "samples": int(per_attr[k]),
        })
    first, last = time_span(rec)
    st = f(Feature.SAMPLE_TIME)
    out: dict[str, Any] = {
        "path": rec.path,
        "mode": rec.mode,
        "byte_order": "big" if rec.order == ">" else "little",
        "file_size": rec.file_size,
        "perf_version": f(Feature.VERSION),
        "hostname": f(Feature.HOSTNAME),
        "os_release": f(Feature.OSRELEASE),
        "arch": f(Feature.ARCH),
        "cpudesc": f(Feature.CPUDESC),
        "cpuid": f(Feature.CPUID),
        "total_mem_kb": f(Feature.TOTAL_MEM),
        "cmdline": f(Feature.CMDLINE) or [],
        "nr_cpus_online": nrcpus.get("nr_cpus_online"),
        "nr_cpus_avail": nrcpus.get("nr_cpus_avail"),
        "events": events,
        "records": record_counts(rec),
        "total_records": rec.stats.records,
        "first_time": first,
        "last_time": last,
        "duration_ns": last - first,
        "header_sample_time": st,
        "features": [feature_name(b) for b in sorted(rec.features)],
        "compression": f(Feature.COMPRESSED),
        "samples_with_unknown_id": int(per_attr[len(rec.attrs)]),
        "errors": [e.as_dict() for e in rec.errors],
        "warnings": list(rec.warnings),
    }
    if rec.mode == "file" or rec.mode == "directory":
        out["data_offset"] = rec.header["data"]["offset"]
        out["data_size"] = rec.header["data"]["size"]
    if rec.mode == "directory":
        out["data_files"] = list(rec.extra_files)
    return out



def sample_bounds(rec: Recording) -> tuple[int, int]:
    """(first, last) sample time as perf takes them for ``--time`` percentages: the
    SAMPLE_TIME feature when the recording has it, else the samples' own span."""
    st = rec.feature(Feature.SAMPLE_TIME)
    if isinstance(st, dict) and st.get("first") and st.get("last", 0) >= st["first"]:
        return int(st["first"]), int(st["last"])
    return time_span(rec)


def lost_samples(rec: Recording) -> int:
    """The samples the kernel says it lost: the sum of the LOST_SAMPLES records' counts
    (perf's ``total_lost_samples``; the u64 after the record's header)."""
    lost = rec.record_u64s(rec.rows_of_type(RecordType.LOST_SAMPLES), 8)
    return int(lost.sum(dtype=np.uint64))


def lost_per_attr(rec: Recording) -> np.ndarray:
    """The samples each event lost (its LOST_SAMPLES records' counts summed; a record of an
    unknown id counts for none), as perf's u32 ``nr_lost_samples``."""
    rows = rec.rows_of_type(RecordType.LOST_SAMPLES)
    out = np.zeros(len(rec.attrs), np.uint64)
    if len(rows):
        lost = rec.record_u64s(rows, 8).astype(np.uint64)
        attr = np.asarray(rec.columns["attr"][rows], np.int64)
        ok = (attr >= 0) & (attr < len(out))
        np.add.at(out, attr[ok], lost[ok])
    return out & np.uint64(0xFFFFFFFF)
