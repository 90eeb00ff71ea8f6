"""``perftui diff``'s command line: perf diff's file defaults, usage errors, each side's
time range and CPUs (on writer-built recordings: one sample a millisecond, all on CPU 0)."""

from __future__ import annotations

import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from builders import module_recording
from perftui.cli import main as perftui_main
from perftui.demo import MODULES_DIR
from perftui.present.diffrun import diff_files

PLAN_OLD = {("demo_nic", ".text", "demo_nic_rx_poll"): 300,
            ("demo_crc", ".text", "demo_crc32_le_slice4"): 200}
PLAN_NEW = {("demo_nic", ".text", "demo_nic_rx_poll"): 100,
            ("demo_nic", ".text.unlikely", "demo_nic_handle_error"): 300}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> Path:
    d = tmp_path_factory.mktemp("diffcli")
    module_recording(d / "perf.data.old", PLAN_OLD)
    module_recording(d / "perf.data", PLAN_NEW)
    return d


def run(args: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = perftui_main(["diff", *args])
    return code, out.getvalue(), err.getvalue()


def test_files_as_perf_takes_them() -> None:
    assert diff_files([]) == ("perf.data.old", "perf.data")
    assert diff_files(["x"]) == ("perf.data.old", "x")
    assert diff_files(["a", "b"]) == ("a", "b")
    with pytest.raises(ValueError):
        diff_files(["a", "b", "c"])


def test_default_files(files: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(files)
    code, out, _ = run(["--json", "--modules-dir", str(MODULES_DIR)])
    assert code == 0
    doc = json.loads(out)
    assert (doc["old"]["file"], doc["new"]["file"]) == ("perf.data.old", "perf.data")
    assert (doc["old"]["total_samples"], doc["new"]["total_samples"]) == (500, 400)
    shutil.copy(files / "perf.data.old", files / "other.data")
    code, out, _ = run(["other.data", "--json"])  # one file: it is NEW, against perf.data.old
    assert code == 0 and json.loads(out)["new"]["file"] == "other.data"


@pytest.mark.parametrize("args", [["a", "b", "c"], ["-c", "wdiff"], ["-s", "nope"],
                                  ["-c", "ratio", "--sort", ""]])
def test_usage_errors(files: Path, args: list[str]) -> None:
    code, out, err = run(args)
    assert code == 2 and out == "" and err.startswith("perftui: diff: ")


def test_bad_time_and_missing_file(files: Path) -> None:
    old, new = str(files / "perf.data.old"), str(files / "perf.data")
    code, _out, err = run([old, new, "--time", "1,2:3,4:5,6"])
    assert code == 2 and "time" in err
    code, _out, err = run([old, new, "--time", "2s,1s"])
    assert code == 2 and "time" in err
    code, out, _err = run([old, str(files / "missing.data")])  # said by cli._fail
    assert code == 1 and out == ""


def test_time_ranges_per_side(files: Path) -> None:
    old, new = str(files / "perf.data.old"), str(files / "perf.data")
    code, out, _ = run([old, new, "--json", "--time", "0s,0.2s"])
    assert code == 0
    doc = json.loads(out)
    # one sample a millisecond from the first: [0 s, 0.2 s] holds 201 of them on each side
    assert (doc["old"]["total_samples"], doc["new"]["total_samples"]) == (201, 201)
    code, out, _ = run([old, new, "--json", "--time", "0s,0.2s:0.05s,0.1s"])
    assert code == 0
    doc = json.loads(out)
    assert (doc["old"]["total_samples"], doc["new"]["total_samples"]) == (201, 51)
    # perf's absolute timestamps: sample k at 1 s + (k + 1) ms, so 1.0,1.2 holds k < 200
    code, out, _ = run([old, new, "--json", "--time", "1.0,1.2"])
    assert code == 0
    doc = json.loads(out)
    assert (doc["old"]["total_samples"], doc["new"]["total_samples"]) == (200, 200)
    code, out, _ = run([old, new, "--json", "--cpu", "1"])
    assert code == 0
    doc = json.loads(out)
    assert doc["rows"] == [] and doc["old"]["total_period"] == 0
