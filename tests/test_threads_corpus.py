"""The thread and map model on the recording corpus, against perf 6.1 wherever it reads one.

Every sample, in perf's order: the same (tid, time), the same comm, and the same dso for the
sample ip (perf given an empty ``--kallsyms`` so that it keeps each recording's own kernel
maps instead of this machine's).  The corpus spans perf 3.2 to 6.16 on x86-64, i686 and
ARM: old kernel maps named ``[kernel.kallsyms]_stext``, ``[module]`` MMAPs, modules named
through the build-id table, ``.ko.gz``/``.ko.xz``, pipe mode, zstd, no ``sample_id_all``.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from pathlib import Path

import pytest
from test_differential import CALLCHAIN_FILES, README_COUNTS, ids
from threadplan import model_view
from threadplan import perf_view as perf_view_uncached

pytestmark = pytest.mark.perf

Corpus = Callable[[str], Path]
#: perf's view of a recording, once for both engines (the tests only read it)
perf_view = functools.cache(perf_view_uncached)


@pytest.fixture(scope="module")
def empty_kallsyms(tmp_path_factory: pytest.TempPathFactory) -> Path:
    p = tmp_path_factory.mktemp("kallsyms") / "empty"
    p.write_bytes(b"")
    return p


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("rel", [pytest.param(r, id=ids(r)) for r in README_COUNTS])
def test_comms_and_dsos_match_perf(rel: str, corpus: Corpus, empty_kallsyms: Path) -> None:
    path = corpus(rel)
    perf = perf_view(path, kallsyms=empty_kallsyms)
    ours = model_view(path)
    assert len(ours) == README_COUNTS[rel][1]
    assert [(s.tid, s.time) for s in ours] == [(s.tid, s.time) for s in perf]
    assert [s.comm for s in ours] == [s.comm for s in perf]
    assert [s.dso for s in ours] == [s.dso for s in perf]


#: --call-graph dwarf recordings: their callchain is empty and perf unwinds the user stack
#: copy with the binaries' DWARF data (at least the sample ip comes out as a frame); that is
#: the symbol resolver's business, not the map model's
DWARF_UNWOUND = {"perfparser/contentsize.data", "perfparser/fork_static_gcc__perf.data.zstd"}


@pytest.mark.usefixtures("engine")
@pytest.mark.parametrize("rel", [pytest.param(r, id=ids(r)) for r in CALLCHAIN_FILES
                                 if r not in DWARF_UNWOUND])
def test_callchain_dsos_match_perf(rel: str, corpus: Corpus, empty_kallsyms: Path) -> None:
    path = corpus(rel)
    perf = perf_view(path, callchain=True, kallsyms=empty_kallsyms)
    ours = model_view(path)
    assert [(s.tid, s.time) for s in ours] == [(s.tid, s.time) for s in perf]
    assert sum(len(s.frames) for s in ours) > len(ours)
    assert [s.frames for s in ours] == [s.frames for s in perf]
