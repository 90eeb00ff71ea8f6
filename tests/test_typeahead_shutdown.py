"""Type-ahead at shutdown: keys still held (or queued) when the app closes are dropped.

Textual's shutdown clears the screen stacks before it closes the app's message queue, so a
key given out then (the type-ahead's next held key, or one read just before) reached an app
with no screen: ``ScreenStackError: No screens on stack`` from ``App.on_event``.  The diff
browser's random walk (tests/test_diff_monkey.py) failed so in 2 of 5 runs at load ~12."""

from __future__ import annotations

import asyncio

from test_ui_typeahead import key_event
from textual.app import ComposeResult
from textual.widgets import Static
from uihelpers import sync

from perftui.ui.typeahead import TypeAheadApp


class Counting(TypeAheadApp):
    """A type-ahead app that counts the keys it is given and holds each a little."""

    BINDINGS = [("down", "count", "count")]

    def __init__(self) -> None:
        super().__init__()
        self.counted = 0

    def compose(self) -> ComposeResult:
        yield Static("keys")

    def action_count(self) -> None:
        self.counted += 1

    def typeahead_hold(self) -> bool:
        return self.counted % 2 == 1  # every other key waits a poll before the next


@sync
async def test_keys_held_at_shutdown_are_dropped() -> None:
    for _ in range(20):  # the race is in the event loop's order: tried many times
        app = Counting()
        async with app.run_test(size=(40, 10)):
            for _ in range(30):
                app._driver.send_message(key_event(app, "down"))  # type: ignore[arg-type,union-attr]
            await asyncio.sleep(0)
        # run_test re-raises what the app raised while shutting down
        assert app.counted < 30  # keys were still held: the case this is about
