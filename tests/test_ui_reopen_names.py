"""The browser keeps every sample's names with the index cache entry (as ``perftui report``
does, through the same code) and, reopened, takes the names and the profile from there:
no thread model, no resolver (patched here to raise).  A symbol file that changed makes it
resolve again.  The oracles: the demo generator's plan (which module function got how
many samples), and what the first open (which did resolve) showed."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import os
import re
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

import pytest
from test_ui_profile import idle, table_lines
from textual.widgets import DataTable
from uihelpers import wait_indexed, workers_done

from perftui.analysis.samplegroups import GroupsBuilder
from perftui.cli import main as perftui_main
from perftui.demo import MODULES_DIR
from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.indexcache import IndexCache
from perftui.symbols.modules.modnames import module_name
from perftui.symbols.naming import resolver as resolver_module
from perftui.ui.app import PerftuiApp

pytestmark = pytest.mark.slow

# perftui/demo/generate.py's processes: pid -> its main thread's comm
MAIN_THREAD = {2101: "bash", 3150: "qemu-system-x86", 3300: "iperf3", 16: "ksoftirqd/1",
               3400: "dd", 0: "swapper"}
WHERE = re.compile(r"^\[k\] (\S+)\+0x[0-9a-f]+ \(\[(\w+)\](\.[\w.]+)?\)")


@pytest.fixture
def setup(tmp_path: Path) -> tuple[DemoPlan, Path, Path]:
    """The demo recording, a private copy of its module files, an empty cache."""
    plan = write_demo(tmp_path / "demo.data")
    modules = tmp_path / "modules"
    shutil.copytree(MODULES_DIR, modules)
    return plan, modules, tmp_path / "cache"


def forbid_grouping(monkeypatch: pytest.MonkeyPatch) -> None:
    def add_named(*_a: Any, **_k: Any) -> None:
        raise AssertionError("the samples were grouped again")

    monkeypatch.setattr(GroupsBuilder, "add_named", add_named)


class Resolvers:
    """Counts the resolvers made; ``forbid``: making one raises."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, forbid: bool) -> None:
        self.made = 0
        real = resolver_module.Resolver.__init__

        def init(this: Any, *a: Any, **k: Any) -> None:
            self.made += 1
            if forbid:
                raise AssertionError("a resolver was made")
            real(this, *a, **k)

        monkeypatch.setattr(resolver_module.Resolver, "__init__", init)


def planned(plan: DemoPlan) -> Counter[tuple[str, str]]:
    out: Counter[tuple[str, str]] = Counter()
    for (mod, _sec, sym), n in plan.in_symbols.items():
        out[(module_name(mod), sym)] += n
    return out


async def _annotate(app: PerftuiApp, pilot: Any, sym: str) -> int:
    """Annotate ``sym``; the samples its instructions count."""
    from test_ui_annotate import instructions
    from uihelpers import settle

    from perftui.ui.annotate import AnnotateScreen

    app.open_annotate((None, sym))
    for _ in range(600):
        await settle(pilot)
        await workers_done(app)
        screen = app.screen
        if isinstance(screen, AnnotateScreen) and screen.loaded:
            return sum(n for _a, n, _t in instructions(screen))
        await pilot.pause(0.05)
    raise AssertionError("the annotate screen did not open")


async def _open(path: Path, cache: Path, modules: Path, annotate: str | None = None
                ) -> dict[str, Any]:
    """Open in the browser; what it shows once every sample is named (and the samples of
    ``annotate``, a symbol, annotated)."""
    rec = open_recording(path, cache=IndexCache(str(cache)), mapped=True)
    app = PerftuiApp(rec, [str(modules)])
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await wait_indexed(pilot)
            m = app.model
            assert m.groups is not None, "no names"
            lines = Counter()
            for row in m.sample_rows.tolist():
                hit = WHERE.match(m.line_summary(int(row)))
                if hit:
                    lines[(hit.group(2), hit.group(1))] += 1
            chains = {}
            t = m.rec.columns["type"]
            for row in m.sample_rows[:400].tolist():
                f = m.fields(int(row))
                if int(t[row]) == RecordType.SAMPLE and f.get("callchain"):
                    chains[row] = m.chain_names(int(row), list(f["callchain"]))
            if annotate is not None:
                before = m.resolver is not None
                total = await _annotate(app, pilot, annotate)
                return {"resolver": before, "annotated": total,
                        "after": m.resolver is not None}
            await pilot.press("m", "down", "enter")  # a section's drill-down
            await idle(pilot)
            procs = [(str(r[0]), str(r[1])) for r in
                     (app.screen.query_one("#by-proc", DataTable).get_row_at(i)
                      for i in range(app.screen.query_one("#by-proc", DataTable).row_count))]
            await pilot.press("escape")
            await idle(pilot)
            await pilot.press("p")
            await idle(pilot)
            heads, rows = table_lines(app)
            await pilot.press("s")
            await idle(pilot)
            await pilot.press("ctrl+a", "ctrl+k", *"dso,sym", "enter")
            await idle(pilot)
            _h2, by_sym = table_lines(app)
            await pilot.press("/")
            await idle(pilot)
            return {"origin": rec.index.origin, "resolver": m.resolver is not None,
                    "lines": lines, "chains": chains, "heads": heads, "rows": rows,
                    "by_sym": by_sym, "procs": procs}
    finally:
        rec.close()


def open_once(path: Path, cache: Path, modules: Path, annotate: str | None = None
              ) -> dict[str, Any]:
    return asyncio.run(_open(path, cache, modules, annotate))


def attachments(cache: Path, what: str = "names") -> list[Path]:
    return sorted(cache.glob(f"*/att-{what}-*"))


def test_reopen_takes_the_names_from_the_cache(setup: tuple[DemoPlan, Path, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    plan, modules, cache = setup
    made = Resolvers(monkeypatch, forbid=False)
    first = open_once(plan.path, cache, modules)
    # one resolver named them, and went (annotate makes one again when asked)
    assert first["origin"] == "walk" and not first["resolver"] and made.made == 1
    assert len(attachments(cache)) == 1, "the first open did not keep the names"
    assert len(attachments(cache, "groups")) == 1, "nor the groups"
    want = planned(plan)
    assert {k: v for k, v in first["lines"].items() if k in want} == dict(want)
    monkeypatch.undo()
    Resolvers(monkeypatch, forbid=True)
    forbid_grouping(monkeypatch)
    again = open_once(plan.path, cache, modules)
    assert again["origin"] == "cache" and not again["resolver"]
    assert {k: v for k, v in again["lines"].items() if k in want} == dict(want)
    assert again["lines"] == first["lines"]
    assert again["chains"] == first["chains"] and any(
        "[k] " in n for c in again["chains"].values() for n in c)
    assert again["heads"] == first["heads"] and again["rows"] == first["rows"]
    assert again["by_sym"] == first["by_sym"]
    # a section's processes, named by their main threads as the generator named them (pid 0
    # as perf names it), on the first open and on the reopen alike
    assert first["procs"] and again["procs"] == first["procs"]
    assert all(MAIN_THREAD[int(pid)] == name for pid, name in first["procs"]), first["procs"]
    # damaged groups are not used: grouped again, the same table
    (groups,) = attachments(cache, "groups")
    col = groups / "group.col"
    raw = bytearray(col.read_bytes())
    raw[len(raw) // 2] ^= 0x40
    col.write_bytes(bytes(raw))
    monkeypatch.undo()
    Resolvers(monkeypatch, forbid=True)
    third = open_once(plan.path, cache, modules)
    assert third["rows"] == first["rows"] and third["by_sym"] == first["by_sym"]
    assert len(attachments(cache, "groups")) == 1  # and kept again
    # annotate makes the resolver when first asked, and counts what the plan wrote
    (_mod, sym), n = max(want.items(), key=lambda kv: kv[1])
    monkeypatch.undo()
    made = Resolvers(monkeypatch, forbid=False)
    fourth = open_once(plan.path, cache, modules, annotate=sym)
    assert not fourth["resolver"] and made.made == 1 and fourth["after"]
    assert fourth["annotated"] == sum(v for (_m, s), v in want.items() if s == sym) == n
    # and perftui report on the same file takes them too (the same names, same code)
    monkeypatch.setenv("PERFTUI_CACHE_DIR", str(cache))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert perftui_main(["report", "--json", "--sort", "sym", "--no-children",
                             "--modules-dir", str(modules), str(plan.path)]) == 0
    got = {r["sym"]: r["samples"] for r in json.loads(out.getvalue())["rows"]}
    by_sym: Counter[str] = Counter()
    for (_mod, sym), n in want.items():
        by_sym[sym] += n
    assert {k: got.get(k) for k in by_sym} == dict(by_sym)


def test_changed_module_file_is_resolved_again(setup: tuple[DemoPlan, Path, Path],
                                               monkeypatch: pytest.MonkeyPatch) -> None:
    plan, modules, cache = setup
    first = open_once(plan.path, cache, modules)
    (old,) = attachments(cache)
    written = (old / "manifest").read_bytes()
    ko = modules / "demo-kvm.ko"
    st = ko.stat()
    os.utime(ko, ns=(st.st_atime_ns, st.st_mtime_ns + 10**9))  # the same bytes, "changed"
    leftover = old.parent / "att-groups-0123456789abcdef"  # as an older perftui's
    leftover.mkdir()
    made = Resolvers(monkeypatch, forbid=False)
    again = open_once(plan.path, cache, modules)
    assert again["origin"] == "cache" and not again["resolver"] and made.made == 1
    assert not leftover.exists() and len(attachments(cache, "groups")) == 1
    assert again["rows"] == first["rows"] and again["lines"] == first["lines"]
    (new,) = attachments(cache)  # replaced, kept for the next open
    assert (new / "manifest").read_bytes() != written
    monkeypatch.undo()
    Resolvers(monkeypatch, forbid=True)
    third = open_once(plan.path, cache, modules)
    assert not third["resolver"] and third["rows"] == first["rows"]
    assert old.name == new.name  # same options, same code: same attachment name
