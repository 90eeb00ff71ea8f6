"""Shared test fixtures: where the corpus recordings are, and whether the oracles are at hand.

The oracles are perf 6.1 (tests marked ``@pytest.mark.perf``), tools marked
``@pytest.mark.needs("tmux")`` and the corpus (the ``corpus`` fixture).  Without one, a test
is skipped; with ``CI=true`` in the environment it fails instead (:func:`skip_or_fail`): a CI
run that silently skipped its oracles would prove nothing.
"""

from __future__ import annotations

import atexit
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any, NoReturn

import pytest

# The CLI and the browser keep complete indexes in a cache: the tests' go to a directory of
# their own (subprocesses inherit it), removed at the end, never to ~/.cache/perftui.
_CACHE_DIR = tempfile.mkdtemp(prefix="perftui-test-cache-")
os.environ["PERFTUI_CACHE_DIR"] = _CACHE_DIR
atexit.register(shutil.rmtree, _CACHE_DIR, True)

# perf's build-id cache is $HOME/.debug (perf 6.1 ignores $PERF_BUILDID_DIR: it only sets it
# for its scripts); perftui reads $PERF_BUILDID_DIR, else ~/.debug.  Each test process gets a
# home of its own, so perf and perftui read the same cache, and a ``perf record`` in another
# xdist worker (which copies every binary it sampled into the cache, a stripped twin of a test
# program under the same build id included) cannot change it between a test's perf run and
# its perftui run.  rustup finds its toolchains through its own variables, kept.
_HOME = os.path.expanduser("~")
for _var, _sub in (("RUSTUP_HOME", ".rustup"), ("CARGO_HOME", ".cargo")):
    if _var not in os.environ and os.path.isdir(os.path.join(_HOME, _sub)):
        os.environ[_var] = os.path.join(_HOME, _sub)
_PERF_HOME = tempfile.mkdtemp(prefix="perftui-test-home-")
os.environ["HOME"] = _PERF_HOME
os.environ.pop("PERF_BUILDID_DIR", None)
atexit.register(shutil.rmtree, _PERF_HOME, True)

# UI tests: no animations (stable snapshots).  Textual reads this when it is first imported,
# which a pytest plugin may have done already: the fixture below covers that case.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

CI = os.environ.get("CI") == "true"
DATA = Path(__file__).parent / "data"
# GPL recordings are not copied into tests/data (licences, see tests/data/NOTICE.md): they
# are read from $PERFTUI_CORPUS, else ../shared/corpus beside the clone, else /work/shared.
_CORPUS_PLACES = [Path(p) for p in (os.environ.get("PERFTUI_CORPUS"),) if p] or [
    Path(__file__).parents[1].parent / "shared" / "corpus", Path("/work/shared/corpus")]
SHARED_CORPUS = next((p for p in _CORPUS_PLACES if p.is_dir()), _CORPUS_PLACES[0])
GPL_FOLDERS = ("hotspot", "perfparser")
PERF = shutil.which("perf")
PERF_VERSION = "6.1"  # the perf whose outputs the differential tests expect
#: Every recording of the corpus (its README lists them): folder/file.
RECORDINGS: tuple[str, ...] = (
    "hotspot/perf.data.true.v1",
    *(f"linux-perf-data/sleep.{n}" for n in ("compressed.data", "compressed.pipe.data",
                                             "compressed2.data", "data")),
    *(f"perf61/perf-{n}.data" for n in ("normal-g", "pipe", "zstd")),
    *(f"perfparser/{n}" for n in ("contentsize.data", "cpp-inlining__cpp-inlining.perf.data",
                                  "fork_static_gcc__perf.data.zstd", "probe.data.file",
                                  "probe.data.stream")),
    *(f"quipper/perf.data.{n}" for n in (
        "armv7-3.4", "branch-4.14", "branch_stack_spec", "callgraph-3.8",
        "ctx_switch_namespaces-4.14", "group_desc-4.14", "hybrid_topology", "i686-3.4",
        "intel_pt-4.14", "lost_samples-4.4", "piped.corrupted.zero_size_sample-3.2",
        "piped.header_features-4.16", "piped.header_features_aligned-6.12",
        "piped.header_feautres_group_desc-6.8", "piped.intel_pt-4.14",
        "piped.lost_samples-4.4", "piped.no_attr_ids-4.14", "raw-3.4", "remmap-3.2",
        "singleprocess-3.4", "throttle-3.8", "weight_struct")),
)


def skip_or_fail(reason: str) -> NoReturn:
    """Skip the test for a missing oracle; with CI=true, fail it."""
    if CI:
        pytest.fail(f"CI=true: {reason}", pytrace=False)
    pytest.skip(reason)


def corpus_path(rel: str) -> Path:
    """Where corpus recording ``rel`` ("quipper/perf.data.raw-3.4") lives, present or not."""
    folder = rel.split("/", 1)[0]
    return (SHARED_CORPUS if folder in GPL_FOLDERS else DATA) / rel


def corpus_files() -> list[str]:
    """The corpus recordings (:data:`RECORDINGS`, not the v1 file) and the fuzz regressions
    of tests/data/fuzz, as folder/file."""
    fuzz = sorted(f"fuzz/{p.name}" for p in (DATA / "fuzz").glob("*.data"))
    return [r for r in RECORDINGS if not r.startswith("hotspot/")] + fuzz


def path_of(rel: str) -> Path:
    """Where a recording of :func:`corpus_files` is (skipped when it is gone; failed with
    CI=true)."""
    p = corpus_path(rel)
    if not p.is_file():
        skip_or_fail(f"{rel} is not available (GPL recordings are read from {SHARED_CORPUS})")
    return p


@pytest.fixture
def corpus() -> Callable[[str], Path]:
    """``corpus(rel)``: the recording's path; skips the test when it is absent (fails it
    with CI=true)."""

    def get(rel: str) -> Path:
        p = corpus_path(rel)
        if not p.is_file():
            where = " or ".join(str(c) for c in _CORPUS_PLACES)
            skip_or_fail(f"{rel} is not available (GPL recordings are read from {where}; "
                         "PERFTUI_CORPUS names another place)")
        return p

    return get


@cache
def perf_version() -> str | None:
    """``perf --version``'s number ("6.1.187"), None without perf."""
    if PERF is None:
        return None
    out = subprocess.run([PERF, "--version"], capture_output=True, text=True,
                         timeout=30).stdout
    m = re.search(r"perf version (\S+)", out)
    return m.group(1) if m else out.strip() or "unknown"


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line("markers", "needs(tool): needs the named program on the PATH")
    config.addinivalue_line("markers", "terminal: runs in a real terminal (tmux); set by "
                            "conftest from needs('tmux')")
    if not hasattr(config, "workerinput"):  # once a run, before any worker starts
        from warmup import ensure_compiled

        ensure_compiled()


_SNAPSHOT_MODULES = {"test_ui_snapshots.py", "test_diff_snapshots.py"}
_SLOW_SCREENS = ("[profile-srcline", "[range-")


@pytest.hookimpl(tryfirst=True)  # (before -m deselects by the marks)
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """A test in a real terminal (``needs("tmux")``) is marked ``terminal``: ``make test``
    runs those in a process of their own beside the others (they mostly wait for screens to
    settle, ~200 s of it).  The modules that hold slow tests first, each kept together (a
    module split apart would set its module fixtures up again), the others after, in their
    order: xdist hands
    tests out in this order, so the longest ones no longer start last and leave one worker
    busy alone at the end."""
    for i in items:
        if any("tmux" in m.args for m in i.iter_markers("needs")):
            i.add_marker(pytest.mark.terminal)
        # ``make check`` pins the look at 80x24 (the size the app is made for over ssh);
        # the full run pins every other size too, and the slowest screens (4.5-5 s each)
        if i.path.name in _SNAPSHOT_MODULES and (
                "80x24" not in i.name or any(w in i.name for w in _SLOW_SCREENS)):
            i.add_marker(pytest.mark.slow)
    slow_modules = {getattr(i, "module", None) for i in items
                    if i.get_closest_marker("slow") is not None}
    # a stable sort: each module keeps its order
    items.sort(key=lambda i: getattr(i, "module", None) not in slow_modules)


# With CI=true a run that skipped anything proves less than it says: it fails (a missing
# oracle already fails its test through skip_or_fail; this catches any other way to skip).
_SKIPPED: list[str] = []


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    if CI and report.skipped and not hasattr(report, "wasxfail"):
        _SKIPPED.append(report.nodeid)


def pytest_terminal_summary(terminalreporter: Any) -> None:
    if _SKIPPED:
        terminalreporter.write_line(f"CI=true: {len(_SKIPPED)} skipped, which CI does not "
                                    f"allow: {', '.join(_SKIPPED[:5])}", red=True)


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    if _SKIPPED and exitstatus == pytest.ExitCode.OK:
        session.exitstatus = pytest.ExitCode.TESTS_FAILED


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("perf") is not None:
        version = perf_version()
        if version is None:
            skip_or_fail("perf is not on the PATH")
        if not (version == PERF_VERSION or version.startswith(PERF_VERSION + ".")):
            skip_or_fail(f"perf {version} is not perf {PERF_VERSION}, the oracle these "
                         "expected outputs come from")
    for mark in item.iter_markers("needs"):
        for tool in mark.args:
            if shutil.which(tool) is None:
                skip_or_fail(f"{tool} is not on the PATH")


@pytest.fixture(autouse=True)
def _no_animations(monkeypatch: pytest.MonkeyPatch) -> None:
    constants = sys.modules.get("textual.constants")
    if constants is not None:
        monkeypatch.setattr(constants, "TEXTUAL_ANIMATIONS", "none")


@pytest.fixture(params=["plain", "compiled"])
def engine(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """The test run on each engine (perftui.engine: numpy or numba), forced by
    PERFTUI_ENGINE: the perf-equality tests hold both to perf."""
    monkeypatch.setenv("PERFTUI_ENGINE", request.param)
    return str(request.param)


# The programs of tests/programs, built and recorded once per session (tests/perfprograms.py).
# Defined here, and only here, so every test module shares one instance of each.
@pytest.fixture(scope="session")
def built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Any:
    from perfprograms import build_programs, build_programs_once

    if worker_id == "master":  # one process: no one else records meanwhile
        return build_programs(tmp_path_factory.mktemp("programs"))
    # pytest-xdist: the run's workers share one build (its base directory is the run's)
    return build_programs_once(tmp_path_factory.getbasetemp().parent / "programs")


@pytest.fixture(scope="session")
def dwarf_built(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Any:
    """The DWARF unwinding programs (tests/dwarfprograms.py), built once per run."""
    from dwarfprograms import build_dwarf_programs, build_dwarf_programs_once

    if worker_id == "master":
        return build_dwarf_programs(tmp_path_factory.mktemp("dwarf-programs"))
    return build_dwarf_programs_once(tmp_path_factory.getbasetemp().parent / "dwarf-programs")


@pytest.fixture(scope="session")
def shared_dir(tmp_path_factory: pytest.TempPathFactory, worker_id: str) -> Path:
    """Where recordings made once per run are kept (:func:`perfprograms.shared`): one
    directory for every xdist worker of the run."""
    if worker_id == "master":
        return tmp_path_factory.mktemp("shared")
    return tmp_path_factory.getbasetemp().parent / "shared"


@pytest.fixture(scope="session")
def recorded(built: Any, shared_dir: Path) -> Any:
    """``recorded(name, program, *args, callgraph=True, system_wide=False,
    events="cpu-clock") -> perf.data``, each made once per run (shared by the workers;
    ``callgraph="dwarf"``: ``--call-graph dwarf``)."""
    from perfprograms import recorder

    return recorder(shared_dir)
