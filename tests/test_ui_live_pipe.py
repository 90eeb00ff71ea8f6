"""The live pipe (issue 28): ``perf record -o - … | perftui -`` with a real perf 6.1.

perf's stream is copied, as it comes, to a file and into the browser's pipe.  While perf is
still recording, the profile table (``p``) must show rows, and follow the stream; once the
stream ends the table must equal ``perf report``'s on the saved stream, row for row (the
oracle of test_ui_profile_perf).  With ``x`` pressed while perf still records, the views keep
what was read: the table equals perf report's on the stream's bytes up to the last record
indexed, and the pipe is still read to its end (perf is not blocked).

Self counts (``c``): perf 6.1 gives a pipe-mode stream no Children column even with
``--children`` (it settles the callchain mode before the stream's attrs are read), and
``perf inject`` of the stream into a file fails here ("failed to process type: 2950");
perftui shows Children as for the same recording in a file.
"""

from __future__ import annotations

import contextlib
import os
import subprocess
import threading
import time
from pathlib import Path
from typing import BinaryIO

import pytest
from perfprograms import Built, require
from test_ui_profile import idle, keys, prompt, table, tree_lines
from test_ui_profile_perf import perf_table, same, shown
from uihelpers import sync, workers_done

from perftui.demo import MODULES_DIR
from perftui.perfdata import Recording
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.profile import ProfilePane

pytestmark = [pytest.mark.perf, pytest.mark.slow]


class Stream:
    """``perf record -o -`` of ``cmd``, its bytes copied to ``saved`` and into a pipe."""

    def __init__(self, saved: Path, *cmd: str) -> None:
        self.perf = subprocess.Popen(
            # -m 16: 64 KiB buffers, written out as they half fill (perf's default 512 KiB
            # holds a one-program recording's samples until it exits: nothing to show live)
            [require("perf"), "record", "-q", "-m", "16", "-e", "cpu-clock", "-F", "4000",
             "-g", "-o", "-", "--", *cmd], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
            cwd=saved.parent)
        r, self._w = os.pipe()
        self.reader: BinaryIO = os.fdopen(r, "rb", buffering=0)
        self.saved = saved
        self._copy = threading.Thread(target=self._run, daemon=True)
        self._copy.start()

    def _run(self) -> None:
        assert self.perf.stdout is not None
        with open(self.saved, "wb") as out:
            while data := self.perf.stdout.read1(1 << 16):
                out.write(data)
                out.flush()
                os.write(self._w, data)
        os.close(self._w)

    def recording(self) -> bool:
        return self.perf.poll() is None

    def wait(self) -> None:
        self.perf.wait(timeout=120)
        self._copy.join(timeout=60)


def profile_rows(app: PerftuiApp) -> int:
    v = table(app).view
    return 0 if v is None else len(v.rows)


def profile_samples(app: PerftuiApp) -> int:
    v = table(app).view
    return 0 if v is None else int(v.gp.total_samples)


async def until_streamed(pilot, stream: Stream) -> list[int]:  # type: ignore[no-untyped-def]
    """The samples the table counts, seen while perf records (about every 0.1 s)."""
    seen = []
    while stream.recording():
        await pilot.pause(0.1)
        seen.append(profile_samples(pilot.app))
    return seen


async def until_named(pilot) -> None:  # type: ignore[no-untyped-def]
    """Until the exact pass over everything read is done and shown."""
    app = pilot.app
    deadline = time.monotonic() + 120
    while not (app.model.done and app.model.names is not None
               and not any(w.name == "index" and w.is_running for w in app.workers)):
        assert time.monotonic() < deadline, "the names never came"
        await pilot.pause(0.05)
    await workers_done(app)
    await idle(pilot)


@sync
async def test_rows_while_recording_then_perfs_table(built: Built, tmp_path: Path) -> None:
    stream = Stream(tmp_path / "saved.data", str(built.hotprog), "80")
    rec = Recording(None, stream=stream.reader, spill=True, mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)], stream=stream.reader)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            live = app.indexer.live
            assert live is not None
            await pilot.press("p")
            seen = await until_streamed(pilot, stream)
            stream.wait()
            assert any(seen), "no profile row while perf was recording"
            assert len(set(seen) - {0}) > 1, seen  # and the table followed the stream
            assert seen == sorted(seen)
            await until_named(pilot)
            assert app.indexer.live is None  # its symbol tables went with the last pass
            # each update named only what was read since the last: every sample once,
            # every row delivered once (the work done, counted)
            assert live.updates > 1 and app.model.names is not None
            assert sum(live.named_per_update) == live.named == len(app.model.names)
            assert len(live.named_per_update) == live.updates + 1  # (+ the last pass)
            assert live._names is not None
            assert sum(live._names.threads.delivered) == len(rec.columns)
            await keys(pilot, "c")  # self only: perf's table of a pipe-mode stream (below)
            (want,) = perf_table(stream.saved, "comm,dso,sym", False).values()
            same(shown(app, False), want, "comm,dso,sym")
            await prompt(pilot, "s", "sym")
            (want,) = perf_table(stream.saved, "sym", False).values()
            same(shown(app, False), want, "sym")
    finally:
        rec.close()


@sync
async def test_x_keeps_what_was_read(built: Built, tmp_path: Path) -> None:
    stream = Stream(tmp_path / "saved.data", str(built.hotprog), "80")
    rec = Recording(None, stream=stream.reader, spill=True, mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)], stream=stream.reader)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            await pilot.press("p")
            while stream.recording() and not profile_rows(app):
                await pilot.pause(0.1)
            assert stream.recording(), "perf ended before a live row: a longer program?"
            await pilot.press("x")
            await until_named(pilot)
            stream.wait()  # the pipe read to its end: perf was never blocked
            assert rec.cancelled
            # the oracle: perf report on the bytes up to the last record indexed
            c = rec.columns
            last = len(c) - 1
            end = rec.outer_offset(last) + int(c["size"][last])  # (the stream's offsets)
            whole = stream.saved.read_bytes()
            assert end < len(whole) and app.indexer.drained > 0  # stopped early, drained
            prefix = tmp_path / "prefix.data"
            prefix.write_bytes(whole[:end])
            await keys(pilot, "c")
            (want,) = perf_table(prefix, "comm,dso,sym", False).values()
            same(shown(app, False), want, "comm,dso,sym")
    finally:
        rec.close()


@sync
async def test_the_cursor_and_the_trees_keep_their_function_across_updates(
        dwarf_built, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    """A DWARF stream is named whole again at each update, in a new location table: the
    table's cursor, a row's callers/callees and its sandwich stay on their function (they
    followed the row's codes or locations, and wandered: leaf, then plt_loop.constprop.0,
    then cmp_ul), and a transform stays on (it was dropped with the old names)."""
    saved = tmp_path / "dwarf.stream"
    with open(saved, "wb") as out:
        subprocess.run([require("perf"), "record", "-q", "-e", "cpu-clock", "--call-graph",
                        "dwarf", "-o", "-", str(dwarf_built.dwchain), "40"], stdout=out,
                       stderr=subprocess.DEVNULL, timeout=120, check=True)
    data = saved.read_bytes()
    r, w = os.pipe()

    def feed() -> None:  # ~40 s of stream, in pieces (the test ends before it does)
        step = max(1 << 16, len(data) // 220)
        with contextlib.suppress(OSError):  # (the app closed: the test is over)
            for at in range(0, len(data), step):
                os.write(w, data[at:at + step])
                time.sleep(0.18)
        os.close(w)

    reader = os.fdopen(r, "rb", buffering=0)
    threading.Thread(target=feed, daemon=True).start()
    rec = Recording(None, stream=reader, spill=True, mapped=True)
    app = PerftuiApp(rec, [str(MODULES_DIR)], stream=reader)
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            # (no idle(): the indexing worker runs as long as the stream)
            await pilot.press("p")
            pane = app.query_one(ProfilePane)
            await until(pilot, lambda: table(app).view is not None)
            first = cursor_text(app)
            fn = first.split("  ")[-1]
            for _ in range(3):  # (a stale code names another row on most updates)
                await next_update(pilot, pane)
                assert cursor_text(app) == first
            await pilot.press("enter")  # the row's callers and callees
            await until(pilot, lambda: pane.level == "trees" and trees_of_now(pane))
            title = pane.tree_title
            assert title.endswith(fn), title
            await next_update(pilot, pane)
            assert pane.tree_title == title
            roots = [t for t in tree_lines(app, 1) if t[1] >= 0]
            assert roots and all(fn in t[2] for t in roots), roots
            # the row's sandwich: of its function after an update too
            await pilot.press("escape", "w")
            name = fn.removeprefix("[.] ").removeprefix("[k] ")
            await until(pilot, lambda: pane.tree_title.startswith("sandwich of")
                        and trees_of_now(pane))
            await next_update(pilot, pane)
            assert pane.tree_title.startswith(f"sandwich of {name}:"), pane.tree_title
            roots = [t for t in tree_lines(app, 1) if t[1] >= 0]
            assert roots and all(name in t[2] for t in roots), roots
            # a transform made while the stream goes on stays on through the next names
            await pilot.press("escape")
            await until(pilot, lambda: pane.level == "table")
            await until(pilot, lambda: cursor_text(app).endswith(fn))
            await pilot.press("D")  # drop the function
            crumb = f"drop {name}"
            await until(pilot, lambda: pane.data.transforms.crumbs() == crumb
                        and table(app).view is not None
                        and table(app).view.gp.selection.store is pane.data.groups()[0])
            assert first not in row_texts(app)
            await next_update(pilot, pane)
            assert pane.data.transforms.crumbs() == crumb
            assert first not in row_texts(app) and len(row_texts(app)) > 3
    finally:
        rec.close()


def row_texts(app: PerftuiApp) -> list[str]:
    """Every row's keys, as printed (comm, dso, sym: two dsos' ``_start`` apart)."""
    v = table(app).view
    assert v is not None
    return ["  ".join(v.key_of(int(r)).texts) for r in v.rows]


async def until(pilot, ok, timeout: float = 60.0) -> None:  # type: ignore[no-untyped-def]
    deadline = time.monotonic() + timeout
    while not ok():
        assert time.monotonic() < deadline, "timed out"
        await pilot.pause(0.05)


def trees_of_now(pane: ProfilePane) -> bool:
    """The trees shown are of the current names' samples."""
    gp = pane.tree_gp
    return gp is not None and gp.selection.store is pane.data.store and bool(pane.trees.lines)


async def next_update(pilot, pane: ProfilePane) -> None:  # type: ignore[no-untyped-def]
    """Until the live pipe's next names are shown, the table's and the trees' (fails if
    the stream ends first)."""
    app = pilot.app
    was = app.model.groups
    await until(pilot, lambda: app.model.groups is not was or app.model.done)
    assert app.model.groups is not was, "the stream ended before the next update"
    v = table(app)
    await until(pilot, lambda: v.view is not None
                and v.view.gp.selection.store is pane.data.groups()[0]
                and (pane.level != "trees" or trees_of_now(pane)))
    await pilot.pause(0.2)


def cursor_text(app: PerftuiApp) -> str:
    """The cursor row's keys as the table prints them."""
    t = table(app)
    v, r = t.view, t.current_row()
    assert v is not None and r is not None
    return "  ".join(v.key_of(r).texts)
