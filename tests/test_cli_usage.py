"""Issue 26 §5 and issue 29: bad usage is said before any file is read, and with the
usage of the subcommand it was typed for.

In-process (``perftui.cli.main``): what is checked is which code runs and what is printed,
which a subprocess would not prove better.  Oracles: argparse's own usage text of each
subcommand's parser, and a recording whose walk, if it were started, fails the test.
"""

from __future__ import annotations

import argparse
from pathlib import Path

import pytest

from perftui import cli
from perftui.cli.parser import subcommand_parser
from perftui.demo.generate import write_demo
from perftui.perfdata import Recording


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("usage") / "demo.data"
    write_demo(path)
    return path


@pytest.fixture
def no_walk(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every way a command walks a recording's records, made to fail the test (the list
    says which was tried)."""
    tried: list[str] = []

    def forbidden(name: str):  # type: ignore[no-untyped-def]
        def walk(self: Recording, *_a: object, **_k: object) -> object:
            tried.append(name)
            raise AssertionError(f"{name} ran before the options were checked")
        return walk

    for name in ("build_index", "scan", "records", "indexed_records", "open_cached"):
        monkeypatch.setattr(Recording, name, forbidden(name))
    return tried


# a value no recording could make good, for every option checked before the file is opened
BAD_VALUES = [
    (["report", "-s", "bogus"], "report: unknown sort key 'bogus'"),
    (["report", "-s", "comm,,nope"], "report: unknown sort key"),
    (["report", "--time", "2s,1s"], "report: bad time range '2s,1s': END is before START"),
    (["report", "--time", "1,x"], "report: bad time"),
    (["report", "--cpu", "x"], "report: bad cpu list"),
    (["report", "--pid", "3-1"], "report: bad range"),
    (["report", "--tid", ""], "report: empty tid list"),
    (["report", "--comm", ","], "report: --comm needs at least one name"),
    (["report", "--dso", ""], "report: --dso needs at least one name"),
    (["sections", "--time", "+1,2"], "sections: bad time"),
    (["sections", "--cpu", "0-"], "sections: bad cpu list"),
    (["sections", "--pid", ","], "sections: empty pid list"),
    (["dump", "--type", "NOPE"], "dump: unknown record type"),
    (["dump", "--limit", "-1"], "dump: --limit must be 0 or more"),
    (["diff", "-s", "nope", "a.data", "b.data"], "diff: unknown sort key"),
    (["report", "-g", "bogus"], "report: -g: cannot read 'bogus'"),
    (["report", "-g", "fractal,0.5,x"], "report: -g: cannot read 'x'"),
    (["report", "--call-graph=branch"], "report: -g branch:"),
    (["diff", "-c", "nope", "a.data", "b.data"], "diff:"),
]


@pytest.mark.parametrize(("args", "said"), BAD_VALUES, ids=lambda a: " ".join(a)
                         if isinstance(a, list) else "")
def test_a_bad_value_is_said_before_the_file_is_opened(
        tmp_path: Path, args: list[str], said: str, capsys: pytest.CaptureFixture[str],
        monkeypatch: pytest.MonkeyPatch) -> None:
    """The recording named does not exist: had the command looked at it first, it would
    have said "No such file" and exited 1."""
    monkeypatch.chdir(tmp_path)
    missing = [] if args[0] == "diff" else [str(tmp_path / "missing.data")]
    assert cli.main([*args, *missing]) == 2
    out, err = capsys.readouterr()
    assert out == ""
    assert err.startswith(f"perftui: {said}"), err
    assert len(err.splitlines()) == 1 and "No such file" not in err


@pytest.mark.parametrize("args", [
    ["report", "-s", "bogus"], ["report", "--cpu", "x"], ["report", "--time", "5s,1s"],
    ["sections", "--time", "1,x"]], ids=" ".join)
def test_a_typo_costs_no_walk(demo: Path, no_walk: list[str], args: list[str],
                              capsys: pytest.CaptureFixture[str]) -> None:
    """Today's recording is there: the command still answers before any walk."""
    assert cli.main([*args, str(demo), "--no-cache"]) == 2
    assert no_walk == []
    assert "perftui: " + args[0] in capsys.readouterr().err


@pytest.mark.parametrize("cmd", ["report", "sections", "annotate"])
def test_an_unknown_event_is_said_from_the_header_before_the_walk(
        demo: Path, no_walk: list[str], cmd: str, capsys: pytest.CaptureFixture[str]) -> None:
    extra = ["schedule"] if cmd == "annotate" else []
    assert cli.main([cmd, str(demo), *extra, "--event", "nope", "--no-cache"]) == 2
    assert no_walk == []
    err = capsys.readouterr().err
    assert err == (f"perftui: {cmd}: no event 'nope' in this recording "
                   "(events: cpu-clock)\n")


def test_offcpu_time_without_sched_switch_says_how_to_record_it(
        demo: Path, no_walk: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    """The demo has no sched:sched_switch event and no --switch-events: asking for
    offcpu-time says what makes it, before the walk."""
    assert cli.main(["report", str(demo), "--event", "offcpu-time", "--no-cache"]) == 2
    assert no_walk == []
    err = capsys.readouterr().err
    assert err.startswith("perftui: report: no event 'offcpu-time' in this recording "
                          "(events: cpu-clock); offcpu-time is made from sched:sched_switch")
    assert "-e sched:sched_switch -g" in err and "--switch-events" in err
    assert err.count("\n") == 1


def _usage(cmd: str) -> str:
    _main, sub = cli.build_parser()
    return subcommand_parser(sub, cmd).format_usage()


@pytest.mark.parametrize("cmd", cli.SUBCOMMANDS)
def test_an_unknown_option_prints_the_subcommands_usage(
        cmd: str, capsys: pytest.CaptureFixture[str], tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    """``perftui report --bogus``: argparse's usage of ``perftui report``, then the error
    under the subcommand's name (issue 29; before, the top level's usage)."""
    monkeypatch.chdir(tmp_path)
    required = ["-o", "out.data"] if cmd == "inject" else []
    with pytest.raises(SystemExit) as stop:
        cli.main([cmd, *required, "--bogus"])
    assert stop.value.code == 2
    out, err = capsys.readouterr()
    usage = _usage(cmd)
    assert usage.startswith(f"usage: perftui {cmd} ")
    assert out == ""
    assert err == f"{usage}perftui {cmd}: error: unrecognized arguments: --bogus\n"


def test_a_missing_required_option_prints_the_subcommands_usage(
        capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        cli.main(["inject", "x.data"])
    assert capsys.readouterr().err == (f"{_usage('inject')}perftui inject: error: the "
                                       "following arguments are required: -o/--output\n")


def test_the_browser_keeps_the_top_level_usage(capsys: pytest.CaptureFixture[str]) -> None:
    main_p, _sub = cli.build_parser()
    with pytest.raises(SystemExit) as stop:
        cli.main(["--bogus"])
    assert stop.value.code == 2
    assert capsys.readouterr().err == (f"{main_p.format_usage()}perftui: error: "
                                       "unrecognized arguments: --bogus\n")


def test_each_subcommand_has_its_own_module() -> None:
    """A subcommand's options and its run are in a module of its own (issue 26 §5):
    each parser's default ``func`` is that module's ``run``."""
    _main, sub = cli.build_parser()
    for action in sub._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, parser in action.choices.items():
                func = parser.get_default("func")
                assert func.__module__ == f"perftui.cli.{name}" and func.__name__ == "run"
