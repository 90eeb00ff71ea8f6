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
    # every one of these recordings has each feature below: perf prints its line, we agree
    for key, ours in (("hostname", d["hostname"]), ("os release", d["os_release"]),
                      ("perf version", d["perf_version"]), ("arch", d["arch"]),
                      ("cpudesc", d["cpudesc"]), ("cpuid", d["cpuid"]),
                      ("nrcpus online", str(d["nr_cpus_online"])),
                      ("nrcpus avail", str(d["nr_cpus_avail"])),
                      ("total memory", f"{d['total_mem_kb']} kB"),
                      ("cmdline", " ".join(d["cmdline"]))):
        assert key in h and ours == h[key], key
    # perf lists every feature bit 1..31 (perf 6.1's HEADER_LAST_FEATURE is 32) that is clear
    missing = {feature_name(b) for b in range(1, 32) if b not in rec.feature_bits}
    assert set(h["missing features"].split()) == missing
    # SAMPLE_TIME: perf prints it whenever the feature is there, zeros included
    st = rec.feature(Feature.SAMPLE_TIME)
    assert ("time of first sample" in h) == (Feature.SAMPLE_TIME in rec.feature_bits)
    if st is not None:
        assert f"{st['first'] / 1e9:.6f}"[:-1] == h["time of first sample"][:-1]
        assert f"{st['last'] / 1e9:.6f}"[:-1] == h["time of last sample"][:-1]
    names = re.findall(r"# event : name = ([^,]+),", subprocess.run(
        ["perf", "report", "-f", "--header-only", "-i", str(path)], capture_output=True,
        text=True, timeout=60).stdout)
    assert [a.display_name for a in rec.attrs] == names
    ours_pmu = ", ".join(f"{m['name']} = {m['type']}" for m in rec.feature(Feature.PMU_MAPPINGS))
    assert ours_pmu == h["pmu mappings"]
