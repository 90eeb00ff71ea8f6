"""Every corpus recording with call stacks (``PERF_SAMPLE_CALLCHAIN`` or ``STACK_USER``) that
perf 6.1 reads: its ``perf script`` frames (sym, symoff, dso) against perftui's, frame for frame.

Both sides are given an empty kallsyms: for a recording without the kernel's build id (pipe
mode, and perf61/perf-zstd.data, whose build ids were never written) perf 6.1 names the kernel
frames with the running kernel's /proc/kallsyms, whatever kernel made the recording, and
perftui does not (the recording's release differs).  perf is wrong there: it names the kernel
frames of perfparser's perf 4.9 recording with this machine's 6.18 symbols
(``srso_alias_return_thunk``, a 2023 mitigation).  docs/performance.md has the shares with
and without.  The user frames need no such care: they are all equal.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import pytest
from perfprograms import perf_script_samples
from test_unwind_perf import NO_INLINE, frame_rate

from conftest import RECORDINGS, corpus_path
from perftui.perfdata import PerfDataError, Sample, open_recording
from perftui.symbols.options import SymbolOptions

#: the corpus recordings with call stacks that perf 6.1 reads
WITH_STACKS = (
    "perf61/perf-normal-g.data", "perf61/perf-pipe.data", "perf61/perf-zstd.data",
    "perfparser/contentsize.data", "perfparser/fork_static_gcc__perf.data.zstd",
    "quipper/perf.data.callgraph-3.8",
)
#: with call stacks, but perf 6.1 cannot read them (the corpus README): nothing to compare
PERF_CANNOT_READ = ("perfparser/cpp-inlining__cpp-inlining.perf.data",)


def has_stacks(path: Path) -> bool:
    rec = open_recording(path)
    rec.build_index()  # (a pipe's attrs are records)
    want = Sample.CALLCHAIN | Sample.STACK_USER
    return any(a.sample_type & want for a in rec.attrs)


def test_every_recording_with_stacks_is_compared(corpus: Callable[[str], Path]) -> None:
    found = set()
    for rel in RECORDINGS:
        if not corpus_path(rel).is_file():
            corpus(rel)  # (skips, or fails with CI=true)
        try:
            if has_stacks(corpus_path(rel)):
                found.add(rel)
        except PerfDataError:
            continue  # (the v1 file, corrupt ones: test_malformed's)
    assert found == set(WITH_STACKS) | set(PERF_CANNOT_READ)


@pytest.mark.perf
@pytest.mark.parametrize("rel", WITH_STACKS)
def test_frames_equal_perf_script(rel: str, corpus: Callable[[str], Path],
                                  tmp_path: Path) -> None:
    data = tmp_path / Path(rel).name  # (perf wants its input owned by the user: a copy)
    data.write_bytes(corpus(rel).read_bytes())
    empty = tmp_path / "kallsyms"
    empty.write_bytes(b"")
    theirs = perf_script_samples(data, callchain=True,
                                 extra=(*NO_INLINE, "--kallsyms", str(empty)))
    total, same, diffs = frame_rate(data, theirs, SymbolOptions(kallsyms=str(empty)))
    print(f"{rel}: {same}/{total} frames equal perf script's")
    assert total >= len(theirs) > 0
    assert same == total and not diffs, diffs[:10]
