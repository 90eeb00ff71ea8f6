"""Type-ahead through the pilot (issue 29): keys sent in one burst, as they arrive over a
slow ssh link, do what the same keys do typed slowly.

The oracle is the slow run: the same keys on a fresh browser of the same recording, each
sent after everything the previous one started has ended (its screens mounted, its workers
done).  The burst sends every key at once, with no pause, then waits for the same end.
Every screen change and dialog is crossed: the section drill-down and its samples, a jump
to a record and back, the filter and go-to prompts, the profile and its callers/callees,
the call trees, the flame graph (zoom, search, back), annotate, help and info.
"""

from __future__ import annotations

import asyncio
import difflib
import time
import unicodedata
from pathlib import Path

import pytest
from testapi import keys_pending
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot
from textual.widgets import Input
from uihelpers import screen_text, settle, sync, wait_indexed, wait_views, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import write_demo
from perftui.perfdata import open_recording
from perftui.ui.app import PerftuiApp

pytestmark = pytest.mark.slow  # two browsers per case


@pytest.fixture(scope="module")
def demo(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_demo(tmp_path_factory.mktemp("typeahead") / "demo.data").path


def key_event(app: PerftuiApp, key: str) -> events.Key:
    """A key as Textual's driver makes it (Pilot.press's conversion)."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    original = REPLACED_KEYS.get(key, key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
    except KeyError:
        char = key if len(key) == 1 else None
    ev = events.Key(key, char)
    ev.set_sender(app)
    return ev


def send(app: PerftuiApp, *keys: str) -> None:
    """Keys into the app's driver one after the other, nothing awaited in between."""
    for key in keys:
        app._driver.send_message(key_event(app, key))  # type: ignore[union-attr]


async def quiet(pilot: Pilot, app: PerftuiApp) -> None:
    """Until nothing the keys started is going on: no worker, no key held, no selected line
    on its way to the timeline, frames drawn."""
    deadline = time.monotonic() + 60
    while app.is_running:
        await pilot.pause(0.05)
        await workers_done(app)
        await settle(pilot)
        if not busy(app):
            await pilot.pause(0.05)
            if not busy(app):
                return
        assert time.monotonic() < deadline, "the keys never settled"


def busy(app: PerftuiApp) -> bool:
    return keys_pending(app) or bool(app.workers) or (app.is_running and app.selection_pending())


def state(app: PerftuiApp) -> tuple[object, ...]:
    """What the keys led to: the screen, the focused widget and its cursor, the view under
    the timeline, the filter, the range, a prompt's text, and the screen's text."""
    if not app.is_running or not app.screen_stack:
        return ("exited", app.return_value)
    f = app.focused
    cursor = getattr(f, "cursor_coordinate", None) or getattr(f, "cursor", None)
    typed = f.value if isinstance(f, Input) else None
    return (type(app.screen).__name__, len(app.screen_stack), type(f).__name__,
            getattr(f, "id", None), str(cursor), typed, app.body, app.model.flt.text,
            app.model.time_range, screen_text(app))


async def run(demo: Path, before: tuple[str, ...], keys: tuple[str, ...], burst: bool
              ) -> tuple[object, ...]:
    """``before`` typed slowly on a fresh browser, then ``keys`` (slowly, or in one burst)."""
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            for key in before:
                send(app, key)
                await quiet(pilot, app)
            if burst:
                send(app, *keys)
                await quiet(pilot, app)
            else:
                for key in keys:
                    send(app, key)
                    await quiet(pilot, app)
            return state(app)
    finally:
        rec.close()


# (what is typed slowly first, the keys of the burst): every screen change and dialog
CASES = {
    "drill into a section": ((), ("m", "enter")),
    "section, its samples, a record": ((), ("m", "down", "enter", "down", "enter", "enter")),
    "a record and back to its samples": (("m", "enter", "enter"),
                                         ("down", "enter", "escape", "down")),
    "section screens back": (("m", "enter"), ("enter", "q", "down", "q", "down")),
    "filter prompt": ((), ("slash", *"comm=qemu", "enter", "down")),
    "filter prompt cancelled": ((), ("slash", *"cpu=1", "escape", "down")),
    "go-to prompt": ((), ("g", *"0x3a4", "enter", "down")),
    "flame graph back twice": (("f",), ("q", "q")),
    "flame graph, zoom, back": ((), ("f", "down", "enter", "escape", "right")),
    "flame graph search": (("f",), ("slash", *"demo", "enter", "n")),
    "profile, callers and callees": ((), ("p", "down", "enter", "down")),
    "profile, call trees, back": ((), ("p", "t", "down", "escape", "down")),
    "profile sorted by a prompt": ((), ("p", "s", "ctrl+a", "ctrl+k", *"sym", "enter",
                                        "down")),
    "profile then flame then records": ((), ("p", "f", "q", "q", "down")),
    "annotate from the symbols": (("m", "enter"), ("a", "n", "n", "escape", "down")),
    "help and back": ((), ("question_mark", "q", "down")),
    "info and back": ((), ("i", "escape", "down")),
    "quit from the records": ((), ("down", "q")),
}


@pytest.mark.parametrize("case", list(CASES))
@sync
async def test_a_burst_does_what_slow_keys_do(demo: Path, case: str) -> None:
    before, keys = CASES[case]
    slow = await run(demo, before, keys, burst=False)
    fast = await run(demo, before, keys, burst=True)
    assert fast[:-1] == slow[:-1]
    diff = difflib.unified_diff(str(slow[-1]).splitlines(), str(fast[-1]).splitlines(),
                                "slow", "burst", lineterm="")
    assert fast[-1] == slow[-1], "the screens differ:\n" + "\n".join(diff)


@sync
async def test_a_line_feed_is_enter(demo: Path) -> None:
    """A line feed (``ctrl+j``: Enter through a terminal still in cooked mode, keys typed
    while the app starts) submits a prompt as Enter does."""
    keys = ("p", "s", "ctrl+a", "ctrl+k", *"sym")
    enter = await run(demo, (), (*keys, "enter"), burst=False)
    assert enter[0] == "Screen" and "sort sym" in str(enter[-1])
    assert await run(demo, (), (*keys, "ctrl+j"), burst=True) == enter


@sync
async def test_every_key_of_a_burst_is_given_out(demo: Path) -> None:
    """A long burst (the record list's Down 40 times) moves the cursor 40 rows: no key lost
    or doubled, and the app holds none afterwards."""
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            records = app.query_one("#records")
            start = records.cursor  # type: ignore[attr-defined]
            send(app, *["down"] * 40)
            await quiet(pilot, app)
            assert records.cursor == start + 40  # type: ignore[attr-defined]
            assert not keys_pending(app)
    finally:
        rec.close()
    await asyncio.sleep(0)


@sync
async def test_the_next_key_dismisses_a_toast_and_annotate_clears_its_own(demo: Path) -> None:
    """Issue 29: a toast never covers a result.  The toast of ``a`` off a sample is gone on
    the next key; "annotate: reading the symbol tables…" is gone once the listing opens."""
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30), notifications=True) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            send(app, "home", "a")  # the first record is an MMAP: a says what a is for
            await quiet(pilot, app)
            assert "annotates a sample" in str([n.message for n in app._notifications])
            send(app, "down")
            await quiet(pilot, app)
            assert not len(app._notifications)
            app.notify("annotate: reading the symbol tables…", timeout=30)
            app.open_annotate((None, "__demo_svm_vcpu_run"))
            await quiet(pilot, app)
            assert type(app.screen).__name__ == "AnnotateScreen"
            assert not len(app._notifications)
    finally:
        rec.close()


@sync
async def test_timeline_home_and_end_are_the_ends_arrows_reach(demo: Path) -> None:
    """Issue 29: Home and End on the timeline put the cursor where Left and Right held down
    end (the first and the last column), not ~72 presses."""
    rec = open_recording(demo)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    try:
        async with app.run_test(size=(100, 30)) as pilot:
            await wait_indexed(pilot)
            await wait_views(pilot)
            timeline = app.query_one("#timeline")
            # (a press moves at most one column: the pane's width in presses reaches an end)
            presses = timeline.size.width + 2
            send(app, "T", *["right"] * presses)
            await quiet(pilot, app)
            last = timeline.cursor  # type: ignore[attr-defined]
            send(app, *["left"] * presses)
            await quiet(pilot, app)
            first = timeline.cursor  # type: ignore[attr-defined]
            assert first < last
            send(app, "end")
            await quiet(pilot, app)
            assert timeline.cursor == last  # type: ignore[attr-defined]
            send(app, "home")
            await quiet(pilot, app)
            assert timeline.cursor == first  # type: ignore[attr-defined]
    finally:
        rec.close()
