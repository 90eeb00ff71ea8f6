"""The MMAP fallback of the section map against perf 6.1's per-DSO sample counts."""

from __future__ import annotations

import re
import subprocess

import pytest

from perftui.analysis.sectionreport import section_report, streamed_section_report
from perftui.perfdata import open_recording
from perftui.present.sections import sections_json

# recordings with module MMAPs (paths or [name] forms)
WITH_MODULES = [
    "quipper/perf.data.callgraph-3.8",
    "quipper/perf.data.hybrid_topology",
    "quipper/perf.data.remmap-3.2",
    "quipper/perf.data.armv7-3.4",
    "quipper/perf.data.i686-3.4",
    "quipper/perf.data.raw-3.4",
    "quipper/perf.data.throttle-3.8",
    "perfparser/fork_static_gcc__perf.data.zstd",
]
LINE = re.compile(r"^\s+[\d.]+%\s+(?:[\d.]+%\s+)?(\d+)\s+(\S.*?)\s*$")


def perf_dso_samples(path: str) -> dict[str, int]:
    out = subprocess.run(["perf", "report", "-f", "--stdio", "--sort", "dso", "-g", "none",
                          "--show-nr-samples", "-i", path], capture_output=True, text=True,
                         timeout=120).stdout
    got: dict[str, int] = {}
    for line in out.splitlines():  # one table per event: add them up
        m = LINE.match(line)
        if m:
            got[m.group(2)] = got.get(m.group(2), 0) + int(m.group(1))
    return got


@pytest.mark.perf
@pytest.mark.parametrize("how", ["index", "walk"])
@pytest.mark.parametrize("rel", WITH_MODULES, ids=lambda r: r.split("/")[-1])
def test_module_counts_equal_perf_dso_counts(rel: str, how: str, corpus) -> None:
    """Counted over the index, and while walking without one (``perftui sections``)."""
    path = corpus(rel)
    rec = open_recording(path)
    if how == "index":
        rec.build_index()
        rep = section_report(rec, [])
    else:
        rep = streamed_section_report(rec, [])
    d = sections_json(rep)
    assert d["source"] == "MMAP"
    ours = {f"[{m['name']}]": m["samples"] for m in d["modules"] if m["samples"]}
    theirs = perf_dso_samples(str(path))
    perf_modules = {k: v for k, v in theirs.items()
                    if k.startswith("[") and k not in ("[kernel.kallsyms]", "[vdso]",
                                                       "[unknown]", "[vsyscall]")
                    and v}
    assert ours == perf_modules
    assert d["unattributed_kernel_samples"] == theirs.get("[kernel.kallsyms]", 0)
