"""A seeded random walk over every key binding: the browser must never raise.

Each step is a key of a binding (of the app, the record list, the detail, the timeline,
the section pane, the drill-down screens, the annotate screen, the profile table, the
call trees, the flame graph and the samples list), a burst of 2-6 such keys sent at once
(as over a slow ssh link: every key sent before the first is handled), a filter typed
into ``/`` (valid and invalid) or a ``g`` target (half of them with the prompt's key in
the same burst), sort keys or a name typed into the profile views' prompts, or a resize
between 60x18 and 200x60.  After every step the record list's cursor must be on a row
of the view.  The walk runs on the demo and on a truncated copy of it (indexing ends with an
error there).

Short by default and in CI (one walk of 600 steps on each recording, some 2,100 key
presses, under a minute);
``PERFTUI_MONKEY=long`` walks 20,000 steps per recording and seed, with 4 seeds
(``PERFTUI_MONKEY_STEPS`` and ``PERFTUI_MONKEY_SEEDS`` override either).
"""

from __future__ import annotations

import asyncio
import os
import random
import time
import unicodedata
from pathlib import Path

import pytest
from textual import events
from textual.keys import REPLACED_KEYS, _character_to_key, _get_unicode_name_from_key
from textual.pilot import Pilot
from uihelpers import settle, sync, wait_indexed, wait_views, workers_done

from perftui.demo import MODULES_DIR
from perftui.demo.generate import generate
from perftui.perfdata import open_recording
from perftui.ui.annotate import AnnotateScreen, AnnotateTable
from perftui.ui.app import PerftuiApp
from perftui.ui.samplescreen import SampleLines
from perftui.ui.screens import BackScreen, NavTable, PromptScreen, SampleTable, SymbolList
from perftui.ui.widgets.calltrees import CallTreeList
from perftui.ui.widgets.flame import FlameGraph, FlamePane
from perftui.ui.widgets.hotspots import HotspotTable
from perftui.ui.widgets.panes import Detail, SectionsPane
from perftui.ui.widgets.profile import ProfilePane
from perftui.ui.widgets.records import RecordList
from perftui.ui.widgets.timeline import Timeline

LONG = os.environ.get("PERFTUI_MONKEY") == "long"
STEPS = int(os.environ.get("PERFTUI_MONKEY_STEPS") or (20000 if LONG else 600))
_SEEDS = os.environ.get("PERFTUI_MONKEY_SEEDS")
if _SEEDS or LONG:
    CASES = [(name, int(seed)) for seed in (_SEEDS or "1,2,3,4").split(",")
             for name in ("demo", "truncated")]
else:  # CI: one walk on each recording, each with its own seed
    CASES = [("demo", 1), ("truncated", 2)]

FILTERS = [
    "type=SAMPLE", "type=COMM,MMAP2", "cpu=1", "cpu=0 cpu=3", "pid=0", "tid=2101",
    "comm=bash", 'comm="CPU 0/KVM"', "comm=qemu comm=iperf3", "section=.noinstr.text",
    "section=demo_nic", "time=1s,2s", "time=10%/2", "time=0%-10%,50%-60%", "time=0,",
    "type=SAMPLE cpu=2 time=3s,", "",
    # invalid ones: each must give an error message and change nothing
    "bogus", "type=NOPE", "cpu=x", "time=2s,1s", "time=+1,2", "comm=", 'comm="open',
    "[bold]x", "time=10%/0", "time=200%-300%", "cpu=5-1", "=", "type=",
]
# what the profile views' prompts get: sort keys (s) and names (/ in the table and the
# flame graph), good and bad
PROFILE_TEXTS = ["sym", "comm,dso,sym", "dso", "pid", "cpu", "module,section,sym", "tid,sym",
                 "bogus", "sym,,", "", "demo", "csum", "[k]", "zzz-no-match", "0x", "CPU 0"]
GOTOS = ["0x0", "0x1f0", "0x3a4", "4096", "2.5", "2.5s", "-1", "1e9", "0x", "end", "99999999",
         "0.0001s", "6s"]
SIZES = [(60, 18), (80, 24), (100, 30), (120, 40), (200, 60), (61, 19), (90, 27), (150, 50)]


def binding_keys() -> list[str]:
    """Every key of every binding the walk can meet (quit keys apart)."""
    keys: set[str] = set()
    for cls in (PerftuiApp, RecordList, Detail, Timeline, SectionsPane, SymbolList,
                SampleTable, NavTable, BackScreen, AnnotateScreen, AnnotateTable, ProfilePane,
                HotspotTable, CallTreeList, FlameGraph, FlamePane, SampleLines):
        for b in cls.BINDINGS:
            for k in b.key.split(","):  # type: ignore[union-attr]
                keys.add(k.strip())
    keys -= {"ctrl+c", "q", "slash", "g"}  # quitting ends the walk; prompts are below
    return sorted(keys | {"tab", "shift+tab", "enter", "escape", "up", "down"})


KEYS = binding_keys()
PROFILE: dict[str, list[float]] = {}
PROFILING = bool(os.environ.get("PERFTUI_MONKEY_PROFILE"))


def key_event(pilot: Pilot, key: str) -> events.Key:
    """The event Pilot.press sends for ``key``."""
    if len(key) == 1 and not key.isalnum():
        key = _character_to_key(key)
    original = REPLACED_KEYS.get(key, key)
    try:
        char: str | None = unicodedata.lookup(_get_unicode_name_from_key(original))
    except KeyError:
        char = key if len(key) == 1 else None
    ev = events.Key(key, char)
    ev.set_sender(pilot.app)
    return ev


async def press(pilot: Pilot, *keys: str) -> int:
    """Keys as Pilot.press sends them, without its wait for an idle CPU after each (ten
    times faster); every message the keys cause is still handled before this returns."""
    for key in keys:
        pilot.app._driver.send_message(key_event(pilot, key))  # type: ignore[union-attr]
        await asyncio.sleep(0)
        await pilot._wait_for_screen()
    return len(keys)


async def burst(pilot: Pilot, *keys: str) -> int:
    """Keys in one burst, as a slow ssh link delivers them: all sent before any is
    handled (the screens and dialogs they open must take the keys after them)."""
    for key in keys:
        pilot.app._driver.send_message(key_event(pilot, key))  # type: ignore[union-attr]
    await asyncio.sleep(0)
    await pilot._wait_for_screen()
    return len(keys)


def check(app: PerftuiApp, final: bool = False) -> None:
    """The invariants after each step (``final``: after the walk, everything settled)."""
    if app._exception is not None:
        raise app._exception
    main = app.screen_stack[0]
    rl = main.query_one(RecordList)
    count = app.model.count()
    assert rl._count == count or not app.model.done or isinstance(app.screen, PromptScreen)
    assert 0 <= rl.cursor < max(1, count)
    row = rl.current_row()
    assert row is None or 0 <= row < app.model.n
    if app._panes() is None:
        # the profile and flame graph panes are mounted after the first complete frame
        # (or at once on p, f): on a slow machine a step can come before that
        assert app.body not in ("profile", "flame") and not final
        return
    table = main.query_one(HotspotTable)
    assert 0 <= table.cursor < max(1, table.line_count())
    trees = main.query_one(CallTreeList)
    assert 0 <= trees.cursor < max(1, trees.line_count())
    flame = main.query_one(FlameGraph)
    level, _node = flame.cursor
    assert not flame.levels or 0 <= level < len(flame.levels)


async def walk(path: Path, seed: int, steps: int, wait: bool) -> dict[str, int]:
    rng = random.Random(seed)
    rec = open_recording(path)
    app = PerftuiApp(rec, [str(MODULES_DIR)])
    tally = {"steps": 0, "keys": 0, "filters": 0, "gotos": 0, "resizes": 0, "profile": 0,
             "flame": 0, "bursts": 0}
    try:
        async with app.run_test(size=(120, 40)) as pilot:
            if wait:
                await wait_indexed(pilot)
            for step in range(steps):
                r = rng.random()
                n = 0
                t_step = time.monotonic()
                if isinstance(app.screen, PromptScreen):
                    n = await press(pilot, "escape")
                elif r < 0.05 and len(app.screen_stack) == 1:
                    if rng.random() < 0.5:  # the prompt and what is typed in one burst
                        n = await burst(pilot, "slash", *rng.choice(FILTERS), "enter")
                    else:
                        n = await press(pilot, "slash")
                        await settle(pilot)
                        n += await press(pilot, *rng.choice(FILTERS), "enter")
                    tally["filters"] += 1
                elif r < 0.08 and len(app.screen_stack) == 1:
                    if rng.random() < 0.5:
                        n = await burst(pilot, "g", *rng.choice(GOTOS), "enter")
                    else:
                        n = await press(pilot, "g")
                        await settle(pilot)
                        n += await press(pilot, *rng.choice(GOTOS), "enter")
                    tally["gotos"] += 1
                elif r < 0.10:
                    await pilot.resize_terminal(*rng.choice(SIZES))
                    tally["resizes"] += 1
                elif r < 0.13 and len(app.screen_stack) == 1 and app.body != "records":
                    n = await press(pilot, rng.choice(["s", "slash"]))
                    await settle(pilot)
                    if isinstance(app.screen, PromptScreen):
                        n += await press(pilot, "ctrl+a", "ctrl+k",
                                         *rng.choice(PROFILE_TEXTS), "enter")
                    tally["filters"] += 1
                elif r < 0.25 and len(app.screen_stack) > 1:
                    key = rng.choice(["q", "escape"])
                    if key == "q":
                        # a key before may still be closing the screens (Enter on a sample
                        # pops them all): q on the main view would end the walk
                        await settle(pilot)
                    if len(app.screen_stack) > 1 or key == "escape":
                        n = await press(pilot, key)
                elif 0.25 <= r < 0.30:  # a burst of 2 to 6 keys (no quitting q among them)
                    n = await burst(pilot, *rng.choices(KEYS, k=rng.randint(2, 6)))
                    tally["bursts"] += 1
                else:
                    n = await press(pilot, rng.choice(KEYS))
                tally["keys"] += n
                tally["steps"] += 1
                if app.body in ("profile", "flame"):
                    tally[app.body] += 1
                if step % 8 == 0:
                    await pilot.pause()  # a full frame: every render path runs too
                check(app)
                if PROFILING:
                    kind = ("prompt" if r < 0.08 and len(app.screen_stack) == 1
                            else "resize" if 0.08 <= r < 0.10 else "key")
                    PROFILE.setdefault(kind, []).append(time.monotonic() - t_step)
            await workers_done(app)
            await settle(pilot)
            await wait_views(pilot)
            check(app, final=True)
    finally:
        rec.close()
    return tally


@pytest.fixture(scope="module")
def recordings(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    d = tmp_path_factory.mktemp("monkey")
    demo = generate(d / "demo.data")
    raw = demo.read_bytes()
    cut = d / "truncated.data"
    cut.write_bytes(raw[: len(raw) * 3 // 5 + 5])  # ends inside a record
    return {"demo": demo, "truncated": cut}


@pytest.fixture(autouse=True)
def _saves_in_tmp(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The walk presses ``P`` too: its perftui.screen.N files go to a temporary directory,
    not the checkout the tests run in."""
    monkeypatch.chdir(tmp_path)


@pytest.mark.slow
@pytest.mark.parametrize("name, seed", CASES)
@sync
async def test_monkey(recordings: dict[str, Path], name: str, seed: int) -> None:
    t0 = time.monotonic()
    # the truncated recording is walked from the first frame: keys land while it indexes
    tally = await walk(recordings[name], seed, STEPS, wait=name == "demo")
    took = time.monotonic() - t0
    print(f"monkey {name} seed {seed}: {tally} in {took:.1f} s")
    for kind, ts in PROFILE.items():
        print(kind, len(ts), sum(ts))
    assert tally["steps"] == STEPS and tally["keys"] >= STEPS * 0.8
    assert tally["bursts"] >= STEPS // 40  # (~5% of the steps: a burst of keys)
