"""The filter's name words (issue 29): ``comm=`` and ``dso=`` match a whole name as perf's
``--comms`` and ``--dsos`` do, ``key~part`` any name holding the part.

Oracle: ``perf script --comms``/``--dsos`` on a fresh recording of two copies of dash, named
``spin`` and ``spin2`` (so ``spin`` is both a whole name and a part of another), each looping.
"""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest
from perfprograms import require, shared
from test_ui_pilot import browse, type_prompt, view_rows
from uihelpers import sync

from perftui.analysis.filters import FilterError, NameMatch, parse_filter

LOOP = "i=0; while [ $i -lt 150000 ]; do i=$((i+1)); done"


def test_words_say_whole_or_part() -> None:
    f = parse_filter('comm=python comm~py dso=libc.so.6 dso~LIBC sym=main sym~mai '
                     'section~.text', 0)
    assert f.comm == (NameMatch("python"), NameMatch("py", whole=False))
    assert f.dso == (NameMatch("libc.so.6"), NameMatch("LIBC", whole=False))
    assert f.sym == (NameMatch("main", whole=False), NameMatch("mai", whole=False))
    assert f.section == (NameMatch(".text", whole=False),)
    assert NameMatch("python").matches("python") and not NameMatch("python").matches("python3")
    assert not NameMatch("python").matches("Python")  # perf's strcmp
    assert NameMatch("PY", whole=False).matches("python3")
    for bad in ("cpu~1", "comm~", "~x", "comm"):
        with pytest.raises(FilterError):
            parse_filter(bad, 0)


def _record(d: Path, env: dict[str, str]) -> Path:
    perf, dash = require("perf"), shutil.which("dash") or "/bin/dash"
    for name in ("spin", "spin2"):
        shutil.copy(dash, d / name)
    data = d / "spin.data"
    script = f"./spin -c '{LOOP}' & ./spin2 -c '{LOOP}'; wait"
    subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-F", "2000", "-o", str(data),
                    "--", "sh", "-c", script], cwd=d, env=env, check=True, capture_output=True)
    return data


def _perf_count(data: Path, *args: str) -> int:
    out = subprocess.run([require("perf"), "script", "-i", str(data), "-F", "tid", *args],
                         capture_output=True, text=True, check=True).stdout
    return len(out.split())


@pytest.mark.perf
@pytest.mark.slow
@sync
async def test_comm_and_dso_match_perfs_lists(shared_dir: Path) -> None:
    data = shared(shared_dir, "filter-names spin spin2", _record)
    spin, spin2 = _perf_count(data, "--comms", "spin"), _perf_count(data, "--comms", "spin2")
    in_spin = _perf_count(data, "--dsos", "spin")
    in_both = in_spin + _perf_count(data, "--dsos", "spin2")
    assert spin > 100 and spin2 > 100 and in_spin > 50
    async with browse(data) as (app, pilot):
        for text, want in (("comm=spin", spin), ("comm=spin2", spin2), ("comm~spin", spin + spin2),
                           ("comm~SPIN", spin + spin2), ("comm=spin comm=spin2", spin + spin2),
                           ("dso=spin", in_spin), ("dso~spin", in_both)):
            await pilot.press("slash")
            await type_prompt(pilot, f"type=SAMPLE {text}")
            assert len(view_rows(app)) == want, text
