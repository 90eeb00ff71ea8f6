"""Type-ahead: keys typed in one burst (over ssh they arrive bunched) reach the screen,
dialog or pane they were typed for, in order, as if typed slowly.

Textual hands each key to the widget focused when the key is read, and a key's effects
come later: a binding's ``focus()`` is a callback queued behind the keys already read, a
pushed screen mounts and takes the focus in its own task, a key not handled by the focused
widget bubbles up to the app (where the bindings run) one message queue at a time.  So
``m Enter`` gave the Enter to the record list, ``/comm=qemu Enter`` typed the text into no
widget, and ``q q`` in the flame graph asked the flame pane twice.

:class:`TypeAheadApp` lets one key through at a time: the next waits until the previous
one has gone its whole way up (a round trip through each message queue from the widget
it was given to up to the app) and the app has settled: no change of screen or focus over
two rounds of round trips from the focused widget up to the app and of a screen refresh
(a pane shown is laid out before a key scrolls it), and nothing the app says is on its
way (:meth:`TypeAheadApp.typeahead_hold`).  A key with nothing before it
goes through at once.  Every key typed dismisses the toasts shown.  A line feed is Enter
(:data:`LINE_FEED`).
"""

from __future__ import annotations

import asyncio
import contextlib
from collections import deque

from textual import events
from textual.app import App
from textual.dom import DOMNode
from textual.message_pump import MessagePump

#: keys never held: quitting does not wait for a burst before it
UNHELD = frozenset({"ctrl+c"})
#: a line feed is Enter (as readline and vi take it): keys typed while the app starts
#: reach it through a terminal still in cooked mode, whose ICRNL turned Enter's CR into LF
#: (Textual's ``ctrl+j``: ``p s Enter`` typed at launch left the sort prompt open)
LINE_FEED = "ctrl+j"
_POLL = 0.02  # seconds between looks while the app holds keys (typeahead_hold)


class TypeAheadApp(App[int]):
    """An app whose keys are given out one at a time, each once the previous has settled."""

    def __init__(self) -> None:
        super().__init__()
        self._held: deque[events.Key] = deque()
        self._key_busy = False
        self._replay: events.Key | None = None
        self._settling: set[asyncio.Task[None]] = set()  # (a task is kept while it runs)

    def typeahead_hold(self) -> bool:
        """Whether something a key started is still on its way (a pane being mounted, a
        screen being prepared in a worker): the next key waits for it."""
        return False

    async def on_event(self, event: events.Event) -> None:
        if isinstance(event, events.Key) and not self._screen_stack:
            # shutting down: Textual closes the screens before the app's queue, and a key
            # left there (or on its way up from a closed widget) has nowhere to go
            self._held.clear()
            return
        if isinstance(event, events.Key) and event.key == LINE_FEED and not event.is_forwarded:
            event = events.Key("enter", "\r")
        if not isinstance(event, events.Key) or event.is_forwarded or event.key in UNHELD:
            await super().on_event(event)
            return
        if len(self._notifications):  # a key dismisses the toasts: none covers a result
            self.clear_notifications()
        if event is self._replay:
            self._replay = None
        elif self._key_busy:
            self._held.append(event)
            return
        self._key_busy = True
        target: DOMNode | None = self._focused() or self._current_screen()
        try:
            await super().on_event(event)
        finally:
            task = asyncio.get_running_loop().create_task(self._settle(target))
            self._settling.add(task)
            task.add_done_callback(self._settling.discard)

    def _current_screen(self) -> DOMNode | None:
        return self.screen if self._screen_stack else None

    def _focused(self) -> DOMNode | None:
        return self.focused if self._screen_stack else None

    async def _settle(self, target: DOMNode | None) -> None:
        """Wait for the key's way up from ``target`` and for the app to settle; then the
        next key held."""
        try:
            await self._way_up(target)  # the key's way up to the app
            stable = 0
            while stable < 2 and not self._closing:
                before = (self._current_screen(), self._focused())
                # what the focused widget or its panes posted on its way up, and the app's
                # callbacks
                await self._way_up(before[1] or before[0])
                if before[0] is not None:  # and the layout they changed, done
                    await self._round_trip(before[0], after_refresh=True)
                if self.typeahead_hold():
                    stable = 0
                    await asyncio.sleep(_POLL)
                    continue
                now = (self._current_screen(), self._focused())
                stable = stable + 1 if now == before else 0
        finally:
            self._next_key()

    async def _way_up(self, node: DOMNode | None) -> None:
        """A round trip through each message queue from ``node`` up to the app's, in turn
        (the way a bubbling message goes)."""
        while node is not None:
            await self._round_trip(node)
            node = node.parent

    async def _round_trip(self, pump: MessagePump, after_refresh: bool = False) -> None:
        """Until ``pump`` has handled every message queued before now (or has closed);
        ``after_refresh``: and its screen has been laid out and drawn since."""
        done = asyncio.Event()
        post = pump.call_after_refresh if after_refresh else pump.call_later
        if not post(done.set):
            return
        while not done.is_set():
            with contextlib.suppress(asyncio.TimeoutError):
                await asyncio.wait_for(done.wait(), _POLL * 5)
            if pump._closing or pump._closed or self._closing:
                return

    def _next_key(self) -> None:
        if self._held and not self._closing:
            self._replay = self._held.popleft()
            self.post_message(self._replay)
        else:
            self._held.clear()
            self._key_busy = False
