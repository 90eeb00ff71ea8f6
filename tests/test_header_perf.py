"""Header and features against ``perf report --header-only`` (perf 6.1)."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest

from perftui.analysis.summary import info_dict
from perftui.perfdata import Feature, open_recording
from perftui.perfdata.constants import feature_name

FILES = ["perf61/perf-normal-g.data", "perf61/perf-zstd.data",
         "quipper/perf.data.group_desc-4.14", "quipper/perf.data.hybrid_topology",
         "quipper/perf.data.branch_stack_spec", "perfparser/probe.data.file"]


def header_only(path: Path) -> dict[str, str]:
    out = subprocess.run(["perf", "report", "-f", "--header-only", "-i", str(path)],
                         capture_output=True, text=True, timeout=60).stdout
    d: dict[str, str] = {}
    for line in out.splitlines():
        m = re.match(r"# ([a-z][a-z ]+?)\s*: (.*)$", line)
        if m:
            d.setdefault(m.group(1), m.group(2).rstrip())
    return d


@pytest.mark.perf
@pytest.mark.parametrize("rel", FILES, ids=lambda r: r.split("/")[-1])
def test_header_fields_equal_perf(rel: str, corpus) -> None:
    path = corpus(rel)
    h = header_only(path)
    rec = open_recording(path)
    rec.build_index()
    d = info_dict(rec)
    assert str(rec.header["data"]["offset"]) == h["data offset"]
    assert str(rec.header["data"]["size"]) == h["data size"]
    for key, ours in (("hostname", d["hostname"]), ("os release", d["os_release"]),
                      ("perf version", d["perf_version"]), ("arch", d["arch"]),
                      ("cpudesc", d["cpudesc"]), ("cpuid", d["cpuid"])):
        if key in h:
            assert ours == h[key], key
    if "nrcpus online" in h:
        assert str(d["nr_cpus_online"]) == h["nrcpus online"]
        assert str(d["nr_cpus_avail"]) == h["nrcpus avail"]
    if "total memory" in h:
        assert f"{d['total_mem_kb']} kB" == h["total memory"]
    if "cmdline" in h:
        assert " ".join(d["cmdline"]) == h["cmdline"]
    if "missing features" in h:
        missing = set(h["missing features"].split())
        have = {feature_name(b) for b in rec.features}
        assert not (missing & have)
    if "time of first sample" in h and rec.feature(Feature.SAMPLE_TIME):
        st = rec.feature(Feature.SAMPLE_TIME)
        assert f"{st['first'] / 1e9:.6f}"[:-1] == h["time of first sample"][:-1]
    names = re.findall(r"# event : name = ([^,]+),", subprocess.run(
        ["perf", "report", "-f", "--header-only", "-i", str(path)], capture_output=True,
        text=True, timeout=60).stdout)
    assert [a.display_name for a in rec.attrs] == names
    if "pmu mappings" in h and rec.feature(Feature.PMU_MAPPINGS):
        ours_pmu = ", ".join(f"{m['name']} = {m['type']}"
                             for m in rec.feature(Feature.PMU_MAPPINGS))
        assert ours_pmu == h["pmu mappings"]
