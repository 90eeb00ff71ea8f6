"""One-pass commands without an index: ``info``'s totals (Recording.scan) and ``sections``'
counts while walking (stream_sections) are those of the index.

The index side is held to perf 6.1 by test_differential (record counts, samples per event)
and test_sections_perf (per-module counts; its "walk" cases check the streaming counts
against perf directly).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from conftest import corpus_files, path_of
from perftui.analysis.filters import Filter
from perftui.analysis.sectionreport import section_report, streamed_section_report
from perftui.analysis.summary import info_dict
from perftui.demo import MODULES_DIR, demo_path
from perftui.perfdata import open_recording
from perftui.present.sections import sections_json


@pytest.mark.parametrize("rel", corpus_files())
def test_scan_totals_equal_the_index(rel: str) -> None:
    path = path_of(rel)
    indexed = open_recording(path, spill=False)
    indexed.build_index()
    scanned = open_recording(path, spill=False)
    stats = scanned.scan()
    assert len(scanned.columns) == 0  # nothing kept per record
    assert stats.as_json() == indexed.stats.as_json()
    assert info_dict(scanned) == info_dict(indexed)


@pytest.mark.parametrize("rel", corpus_files())
def test_streamed_sections_equal_the_index(rel: str) -> None:
    path = path_of(rel)
    rec = open_recording(path)
    rec.build_index()
    want = sections_json(section_report(rec, []), symbols=True)
    got = sections_json(streamed_section_report(open_recording(path), []), symbols=True)
    assert got == want


@pytest.mark.parametrize("flt", [
    Filter(), Filter(cpus=frozenset({1})), Filter(pids=frozenset({0, 1})), Filter(attr=0),
    Filter(time=(0, 2**63 - 1)), Filter(cpus=frozenset({0}), time=(0, 0))])
def test_streamed_sections_with_filters(flt: Filter, tmp_path: Path) -> None:
    """The demo's planted module samples, per filter, with per-symbol counts."""
    dirs = [str(MODULES_DIR)]
    rec = open_recording(demo_path())
    rec.build_index()
    first = rec.stats.span()[0]
    if flt.time == ((0, 0),):  # the first half second
        flt = Filter(cpus=flt.cpus, time=(first, first + 500_000_000))
    want = sections_json(section_report(rec, dirs, flt), symbols=True)
    got = sections_json(streamed_section_report(open_recording(demo_path()), dirs, flt),
                        symbols=True)
    assert got == want
    assert want["kernel_samples"] > 0 or flt.cpus == frozenset({1})
