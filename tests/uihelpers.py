"""Helpers for the browser's pilot, snapshot and screenshot runs (test helpers)."""

from __future__ import annotations

import asyncio
import functools
import io
import time
from collections.abc import Callable, Coroutine
from typing import Any

from rich.console import Console
from textual.app import App
from textual.pilot import Pilot
from textual.worker import WorkerCancelled

from perftui.ui.widgets.panes import SectionsPane


async def workers_done(app: App, timeout: float = 90.0) -> None:
    """Until every worker has ended.  ``workers.wait_for_complete`` raises when one it waits
    for is cancelled, which the app does on purpose (an exclusive group's newer work replaces
    the older: CI at 6bbc82e failed on a profile count cancelled so); the cancelled worker
    leaves the manager once its task is over, and the wait goes on."""
    deadline = time.monotonic() + timeout
    while True:
        try:
            await app.workers.wait_for_complete()
            return
        except WorkerCancelled:
            if time.monotonic() > deadline:
                raise
            await asyncio.sleep(0.01)


async def wait_indexed(pilot: Pilot, timeout: float = 90.0) -> None:
    """Until the indexing worker has finished and its last message filled the views."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while True:
        main = app.screen_stack[0]
        panes = main.query(SectionsPane)
        if app.model.done and panes and panes.first().entry_of_row:  # type: ignore[attr-defined]
            break
        if time.monotonic() > deadline:
            raise AssertionError("indexing did not finish")
        await pilot.pause(0.02)
    await workers_done(app)
    await pilot.pause()


async def wait_views(pilot: Pilot, timeout: float = 90.0) -> None:
    """Until the profile and flame graph panes, mounted after the first complete frame,
    are there (frames come on a timer: a slow machine needs more than a few pauses)."""
    app = pilot.app
    deadline = time.monotonic() + timeout
    while app._panes() is None:  # type: ignore[attr-defined]
        if time.monotonic() > deadline:
            raise AssertionError("the profile and flame graph panes were never mounted")
        await pilot.pause(0.02)


async def settle(pilot: Pilot) -> None:
    """Let pushed screens mount and messages go round."""
    await pilot.pause()
    await pilot.pause()


def screen_text(app: App) -> str:
    """The screen as plain text, the way a terminal would show it (no styles)."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True,
                      force_terminal=True, color_system=None, legacy_windows=False,
                      safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    return console.export_text()


def sync(fn: Callable[..., Coroutine[Any, Any, None]]) -> Callable[..., None]:
    """Run an async test in its own event loop (no pytest asyncio plugin here)."""

    @functools.wraps(fn)
    def run(*args: Any, **kwargs: Any) -> None:
        asyncio.run(fn(*args, **kwargs))

    return run
