"""Issue 9 §5, §7: the command line as a new user meets it, and ``--time`` as perf takes it.

Oracles: argparse's own parser objects (every option has help), perf 6.1 (``perf report -D``
for the dump lines, ``perf script --time`` for the time ranges) on fresh recordings, the
demo generator's plan.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest
from inproc import run_cli
from perfprograms import shared
from subproc import run_perftui

from conftest import skip_or_fail
from perftui import cli
from perftui.cli import info as cli_info
from perftui.demo.generate import DemoPlan, write_demo

PERF = shutil.which("perf")


def run(*args: str, cwd: Path | None = None
        ) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "XDG_CACHE_HOME": str((cwd or Path.cwd()) / ".cache")}
    return run_perftui(*args, cwd=cwd, env=env)


def need_perf() -> str:
    if PERF is None:
        skip_or_fail("perf is not on the PATH")
    return PERF


@pytest.fixture(scope="module")
def fresh(shared_dir: Path) -> Path:
    """A fresh system-wide recording with a fork/exec-heavy workload (once per run)."""
    perf = need_perf()
    # five rounds: one took 0.15 s on a fast machine (150 samples), too few for the ranges
    work = ("for i in 1 2 3 4 5; do find /usr/lib/python3* -name '*.py' 2>/dev/null "
            "| head -400 | xargs cat | gzip >/dev/null; done")

    def make(d: Path, env: dict[str, str]) -> Path:
        out = d / "perf.data"
        r = subprocess.run([perf, "record", "-q", "-e", "cpu-clock", "-F", "997", "-a", "-o",
                            str(out), "--", "sh", "-c", work], capture_output=True,
                           timeout=120, env=env)
        if r.returncode != 0 or not out.is_file():
            pytest.fail(f"perf record failed: {r.stderr[-300:]!r}")
        return out

    return shared(shared_dir, f"test_cli.fresh\0{work}", make)


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    """The demo as the generator wrote it (the default seed: what --demo opens)."""
    return write_demo(tmp_path_factory.mktemp("clidemo") / "demo.data")


@pytest.fixture(scope="module")
def demo(plan: DemoPlan) -> Path:
    return plan.path


# -- 7. help, inputs, exit status ------------------------------------------------------------
def test_help_lists_every_subcommand_with_a_description() -> None:
    r = run("--help")
    assert r.returncode == 0
    for name in cli.SUBCOMMANDS:
        line = next((ln for ln in r.stdout.splitlines() if ln.strip().startswith(name + " ")),
                    "")
        assert len(line.split()) > 3, f"{name} has no description in --help"


@pytest.mark.parametrize("name", cli.SUBCOMMANDS)
def test_every_subcommand_prints_its_help(name: str) -> None:
    """argparse formats help strings with %: a literal % (perf's 10%/2) must not break it."""
    r = run(name, "--help")
    assert r.returncode == 0, r.stderr
    assert r.stdout.startswith("usage: perftui") and not r.stderr


def test_every_option_of_every_subcommand_has_help() -> None:
    main_p, sub_p = cli.build_parser()
    parsers = [main_p]
    for action in sub_p._actions:
        if isinstance(action, argparse._SubParsersAction):
            assert set(action.choices) == set(cli.SUBCOMMANDS)
            parsers += list(action.choices.values())
    for p in parsers:
        for a in p._actions:
            assert a.help and a.help != argparse.SUPPRESS, (p.prog, a.dest)


@pytest.mark.parametrize("cmd", [["info"], ["dump", "--limit", "3"], ["sections"],
                                 ["inject", "-o", "out.data", "--strip"],
                                 ["report", "-s", "dso"]], ids=lambda c: c[0])
@pytest.mark.slow
def test_every_subcommand_takes_file_i_demo_and_defaults_to_perf_data(
        tmp_path: Path, demo: Path, cmd: list[str]) -> None:
    """(In this process: what each command prints and returns, six runs of each; the entry
    point's own exit status has its tests, test_browser_missing_file_and_usage.)"""
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / ".cache")}

    def run(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
        return run_cli(*args, cwd=cwd, env=env)

    # no perf.data here: the plain missing-file line, exit 1
    r = run(*cmd, cwd=tmp_path)
    assert r.returncode == 1 and r.stderr == "perftui: perf.data: No such file or directory\n"
    assert r.stdout == ""
    shutil.copy(demo, tmp_path / "perf.data")
    outs = []
    for extra in ([], ["perf.data"], ["-i", "perf.data"], ["--demo"]):
        (tmp_path / "out.data").unlink(missing_ok=True)
        r = run(*cmd, *extra, cwd=tmp_path)
        assert r.returncode == 0, (extra, r.stderr)
        outs.append(r.stdout.replace(str(tmp_path), "").replace("perf.data", "X"))
    assert outs[0] == outs[1] == outs[2]  # the same recording three ways
    # two different inputs: bad usage
    r = run(*cmd, "perf.data", "-i", "other.data", cwd=tmp_path)
    assert r.returncode == 2 and r.stdout == ""


@pytest.mark.parametrize("args", [
    ["info", "--demo", "other.data"], ["info", "--demo", "-i", "other.data"],
    ["sections", "--demo", "other.data"], ["dump", "--demo", "other.data"],
    ["report", "--demo", "other.data"], ["annotate", "--demo", "other.data", "schedule"],
    ["inject", "--demo", "other.data", "-o", "out.data"], ["--demo", "other.data"],
    ["diff", "--demo", "a.data", "b.data"]], ids=" ".join)
def test_demo_and_a_file_is_bad_usage(tmp_path: Path, args: list[str]) -> None:
    """--demo with a FILE (or -i FILE) names two recordings: bad usage, never one of them
    silently dropped (the file need not exist: the usage is wrong either way)."""
    r = run(*args, cwd=tmp_path)
    assert r.returncode == 2, (r.returncode, r.stdout[:200], r.stderr)
    assert r.stdout == "" and "--demo" in r.stderr and len(r.stderr.splitlines()) == 1


def test_browser_missing_file_and_usage(tmp_path: Path) -> None:
    r = run(cwd=tmp_path)
    assert r.returncode == 1 and r.stderr == "perftui: perf.data: No such file or directory\n"
    r = run("nope.data", cwd=tmp_path)
    assert r.stderr == "perftui: nope.data: No such file or directory\n"
    os.mkfifo(tmp_path / "fifo")
    r = run("info", "fifo", cwd=tmp_path)
    assert r.returncode == 1 and "not a regular file" in r.stderr


@pytest.mark.parametrize("args", [
    ["--bogus"], ["info", "--bogus"], ["dump", "--limit", "x"], ["dump", "--limit", "-1"],
    ["dump", "--type", "NOPE"], ["sections", "--cpu", "x"], ["sections", "--time", "2,1"],
    ["sections", "--time", "+1,2"], ["sections", "--event", "nope"], ["inject"],
    ["sections", "--time", "10%/0"], ["report", "--time", "1,x"], ["report", "-s", "nope"],
    ["sections", "--cpu", ","], ["report", "--cpu", ""], ["report", "--pid", ""],
    ["diff", "--demo", "--stdio", "--cpu", ""], ["sections", "--time", ""],
    ["report", "--comm", ""], ["report", "--dso", ","]],
    ids=" ".join)
@pytest.mark.slow
def test_usage_errors_exit_2_everywhere(tmp_path: Path, demo: Path, args: list[str]) -> None:
    shutil.copy(demo, tmp_path / "perf.data")
    r = run(*args, cwd=tmp_path)
    assert r.returncode == 2, r.stderr
    assert r.stdout == "" and r.stderr.strip()
    assert "Traceback" not in r.stderr


def test_internal_error_is_one_line_and_a_file(tmp_path: Path, demo: Path,
                                               monkeypatch: pytest.MonkeyPatch,
                                               capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))

    def boom(_args: argparse.Namespace) -> int:
        raise IndexError("index 21468 is out of bounds for axis 0 with size 388")

    monkeypatch.setattr(cli_info, "run", boom)  # the parser binds it when main builds it
    assert cli.main(["info", str(demo)]) == 3
    err = capsys.readouterr().err
    assert len(err.splitlines()) == 1
    m = re.fullmatch(r"perftui: internal error \(IndexError: index 21468 .*\); the full "
                     r"traceback is in (\S+)\n", err)
    assert m, err
    text = Path(m.group(1)).read_text()
    assert "Traceback (most recent call last)" in text and "in boom" in text


@pytest.mark.slow
def test_dump_type_comma_list(demo: Path, plan: DemoPlan) -> None:
    r = run("dump", str(demo), "--type", "SAMPLE,COMM", "--json")
    assert r.returncode == 0
    import json

    types = [json.loads(ln)["type"] for ln in r.stdout.splitlines()]
    assert set(types) == {"SAMPLE", "COMM"}
    assert types.count("SAMPLE") == plan.samples and types.count("COMM") == plan.records["COMM"]
    r2 = run("dump", str(demo), "--type", "SAMPLE", "--type", "COMM", "--json")
    assert r2.stdout == r.stdout


@pytest.mark.slow
def test_dump_counts_the_file_order_without_listing_it(
        demo: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    """A recording of one file is dumped in file order counted, not listed: the list
    (``merged_order``, for a directory's merged files) took 8 bytes a record for as long
    as the dump ran (~400 MB at 50 M records).  The lines are the ones a plain run gives."""
    from perftui.perfdata import Recording

    want = run("dump", str(demo), "--json").stdout

    def listed(self: Recording) -> None:
        raise AssertionError("every row listed")

    monkeypatch.setattr(Recording, "merged_order", listed)
    assert cli.main(["dump", str(demo), "--json"]) == 0
    assert capsys.readouterr().out == want


def test_sections_text_has_column_headings(demo: Path) -> None:
    r = run("sections", str(demo), "--modules-dir", str(cli.demo_modules_dir()))
    lines = r.stdout.splitlines()
    head = next(ln for ln in lines if ln.startswith("  section "))
    for word in ("section", "address range", "size", "samples", "%kernel", "source"):
        assert word in head
    first_row = next(ln for ln in lines if ".noinstr.text" in ln)
    # the numbers sit under their headings
    assert first_row.index("0xffff") == head.index("address range")


def test_stdout_not_a_terminal_prints_a_text_report(tmp_path: Path, plan: DemoPlan) -> None:
    r = run("--demo", cwd=tmp_path)
    assert r.returncode == 0, r.stderr
    assert "\x1b" not in r.stdout
    assert f"records: {plan.total}" in r.stdout and "module sections:" in r.stdout
    assert "[demo_kvm]" in r.stdout


# -- 7. dump lines as perf report -D heads them -------------------------------------------------
@pytest.mark.perf
def test_sample_lines_show_time_cpu_pid_tid_like_perf_report_D(fresh: Path) -> None:
    perf = need_perf()
    d = subprocess.run([perf, "report", "-D", "-i", str(fresh)], capture_output=True,
                       text=True, timeout=300).stdout
    want = {}
    for m in re.finditer(r"^(\d+) (\d+) (0x[0-9a-f]+) \[0x[0-9a-f]+\]: PERF_RECORD_SAMPLE"
                         r"\([^)]*\): (-?\d+)/(-?\d+):", d, re.M):
        cpu, t, off, pid, tid = m.groups()
        want[int(off, 16)] = (int(cpu), int(t), int(pid), int(tid))
    r = run("dump", str(fresh), "--type", "SAMPLE")
    got = {}
    for ln in r.stdout.splitlines():
        m = re.match(r"^(0x[0-9a-f]+)\s+SAMPLE .* cpu (\d+) time (\d+)\.(\d{9}) "
                     r"pid/tid (-?\d+)/(-?\d+): ", ln)
        assert m, ln
        off, cpu, s, ns, pid, tid = m.groups()
        got[int(off, 16)] = (int(cpu), int(s) * 10**9 + int(ns), int(pid), int(tid))
    assert len(want) > 100 and got == want


# -- 5. --time as perf takes it ------------------------------------------------------------------
def perf_sample_times(perf: str, path: Path, *args: str) -> list[str]:
    r = subprocess.run([perf, "script", "-i", str(path), "-F", "time", *args],
                       capture_output=True, text=True, timeout=300)
    assert r.returncode == 0, r.stderr
    return [ln.strip().rstrip(":") for ln in r.stdout.splitlines() if ln.strip()]


def perftui_samples(path: Path, spec: str) -> int:
    import json

    r = run("sections", str(path), "--json", "--time", spec)
    assert r.returncode == 0, r.stderr
    d = json.loads(r.stdout)
    return d["kernel_samples"] + d["user_samples"] + d["other_samples"]


@pytest.mark.perf
def test_time_ranges_select_the_samples_perf_selects(fresh: Path) -> None:
    perf = need_perf()
    times = perf_sample_times(perf, fresh)
    assert len(times) > 200
    a, b = times[len(times) // 5], times[len(times) // 2]  # as perf script prints them
    specs = [f"{a},{b}", f"{a},", f",{b}", "10%/2", "0%-10%", "0%-10%,30%-40%", "50%",
             "25%/3", f"{a},{a}"]
    for spec in specs:
        want = len(perf_sample_times(perf, fresh, "--time", spec))
        assert perftui_samples(fresh, spec) == want, spec
    # relative seconds (the s suffix) are perf's --reltime.  Not with an open end: perf
    # 6.1 adds first_sample_time to the end too (perf_time__parse_for_ranges_reltime),
    # so "0.2," ends at the first sample and selects nothing; perftui keeps it open.
    for lo, hi in (("0.1", "0.3"), ("0", "0.05"), ("0.2", "0.9")):
        want = len(perf_sample_times(perf, fresh, "--reltime", "--time", f"{lo},{hi}"))
        assert perftui_samples(fresh, f"{lo}s,{hi}s") == want, (lo, hi)
    open_end = len(perf_sample_times(perf, fresh, "--reltime", "--time", "0.2,"))
    assert open_end == 0  # the perf quirk above, still there
    after = [t for t in times if float(t) >= float(times[0]) + 0.2]
    assert perftui_samples(fresh, "0.2s,") == len(after)
    # perf refuses the suffix: a relative range is never read as an absolute one
    r = subprocess.run([perf, "script", "-i", str(fresh), "--time", "0.1s,0.3s"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode != 0 or not r.stdout.strip()
