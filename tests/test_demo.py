"""The demo recording read back: every count equals what the generator planned.

``write_demo`` counts what it writes as it writes it (``DemoPlan``): records by type, kernel
samples, samples per module section and per symbol, samples outside the modules.  The
decoder, the index, the section map and the symbol tables must find exactly those.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import numpy as np
import pytest

from perftui.analysis.sectionreport import section_report
from perftui.analysis.summary import record_counts
from perftui.demo import MODULES_DIR
from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import Recording, RecordType, open_recording
from perftui.perfdata.constants import Misc


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("demo") / "demo.data")


@pytest.fixture(scope="module")
def rec(plan: DemoPlan) -> Recording:
    r = open_recording(plan.path)
    r.build_index()
    return r


def module_name(file_name: str) -> str:
    """The kernel's module name of a .ko file name ("demo-kvm" -> "demo_kvm")."""
    return file_name.replace("-", "_")


def test_record_counts(plan: DemoPlan, rec: Recording) -> None:
    assert rec.errors == [] and rec.indexed
    assert len(rec) == plan.total
    assert record_counts(rec) == dict(plan.records)
    c = rec.columns
    kernel = (c["type"] == RecordType.SAMPLE) & (c["cpumode"] == Misc.KERNEL)
    assert int(np.count_nonzero(kernel)) == plan.kernel_samples


def test_section_counts(plan: DemoPlan, rec: Recording) -> None:
    rep = section_report(rec, [str(MODULES_DIR)])
    got = {(e.module, e.section): int(rep.counts.per_entry[k])
           for k, e in enumerate(rep.smap.entries) if rep.counts.per_entry[k]}
    assert got == {(module_name(m), s): n for (m, s), n in plan.in_sections.items()}
    assert rep.counts.kernel_samples == plan.kernel_samples
    assert rep.counts.unattributed_kernel_samples == plan.outside_modules


def test_symbol_counts(plan: DemoPlan, rec: Recording) -> None:
    rep = section_report(rec, [str(MODULES_DIR)])
    for k, e in enumerate(rep.smap.entries):
        want = {sym: n for (m, s, sym), n in plan.in_symbols.items()
                if (module_name(m), s) == (e.module, e.section)}
        assert dict(rep.symbol_counts(k)) == want, e.label


def test_same_seed_same_bytes(plan: DemoPlan, tmp_path: Path) -> None:
    again = write_demo(tmp_path / "again.data")
    assert again.path.read_bytes() == plan.path.read_bytes()
    assert replace(again, path=plan.path) == plan


def test_a_demo_written_by_another_process_first_is_kept(tmp_path: Path) -> None:
    """Two ``perftui --demo`` started together both write the demo: the first complete
    file stays (the second's is dropped), so a browser that opened it keeps its file and
    its index cache entry (a replaced file is a changed recording to the cache)."""
    from perftui.demo import _write_atomically

    target = tmp_path / "demo.data"

    def ours_while_theirs_lands(tmp: str) -> None:
        target.write_bytes(b"theirs")  # the other process's rename, during our write
        Path(tmp).write_bytes(b"ours")

    theirs = None

    def check(tmp: str) -> None:
        nonlocal theirs
        ours_while_theirs_lands(tmp)
        theirs = target.stat().st_ino

    assert _write_atomically(target, check) == target
    assert target.read_bytes() == b"theirs" and target.stat().st_ino == theirs
    assert [p.name for p in tmp_path.iterdir()] == ["demo.data"]  # our copy is gone
    assert _write_atomically(tmp_path / "new.data",
                             lambda tmp: Path(tmp).write_bytes(b"first")).read_bytes() == b"first"
