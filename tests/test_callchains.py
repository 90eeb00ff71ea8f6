"""Callchains gathered with numpy equal the per-sample decoder's (itself checked against
``perf script`` in test_differential) on every sample of the corpus recordings with -g."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pytest

from builders import full_attr, full_sample
from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.callchains import callchain_offset
from perftui.perfdata.constants import ReadFormat
from perftui.perfdata.writer import Writer

WITH_CALLCHAINS = [
    "perf61/perf-normal-g.data",
    "perf61/perf-pipe.data",
    "perf61/perf-zstd.data",
    "quipper/perf.data.callgraph-3.8",
    "perfparser/contentsize.data",
    "perfparser/cpp-inlining__cpp-inlining.perf.data",
]


def decoded_chains(rec, rows: np.ndarray) -> list[list[int]]:
    return [rec.decode(int(i)).get("callchain", []) for i in rows]


@pytest.mark.parametrize("rel", WITH_CALLCHAINS)
def test_gathered_equal_decoded(rel: str, corpus: Callable[[str], Path]) -> None:
    rec = open_recording(corpus(rel))
    rec.build_index()
    rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
    want = decoded_chains(rec, rows)
    assert sum(map(len, want)) > 0, "the recording has callchains"
    got = rec.callchains(rows)
    assert len(got) == len(rows)
    assert [got.of(k).tolist() for k in range(len(rows))] == want
    # any subset, in any order
    pick = rows[::-3]
    sub = rec.callchains(pick)
    assert [sub.of(k).tolist() for k in range(len(pick))] == decoded_chains(rec, pick)


@pytest.mark.parametrize("order", ["<", ">"])
def test_group_read_falls_back(order: str, tmp_path: Path) -> None:
    """A READ group before the callchain has a variable size: decoded one by one."""
    attr = full_attr([11, 12])
    attr.read_format |= ReadFormat.GROUP
    p = tmp_path / "g.data"
    chains = [[0xFFFFFFFFFFFFFE00, 0x1000 + i, 0x2000] for i in range(5)]
    with open(p, "wb") as f:
        w = Writer(f, [attr], {}, order=order)
        for i, ch in enumerate(chains):
            s = full_sample(i)
            s["callchain"] = ch
            s["read"] = {"time_enabled": 1, "time_running": 1,
                         "values": [{"value": i, "id": 11, "lost": 0}] * (i % 3)}
            w.write(w.b.sample(s))
        w.close()
    rec = open_recording(p)
    rec.build_index()
    assert callchain_offset(rec.decoder.sample_layouts[0]) is None  # the slow path
    rows = np.nonzero(rec.columns["type"] == RecordType.SAMPLE)[0]
    got = rec.callchains(rows)
    assert [got.of(k).tolist() for k in range(len(rows))] == chains
