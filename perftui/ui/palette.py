"""The command palette (ctrl+p): an app's actions by name."""

from __future__ import annotations

from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING, Protocol, cast

from textual.command import Hit, Hits, Provider

from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from .app import PerftuiApp


class HasPaletteCommands(Protocol):
    def palette_commands(self) -> list[tuple[str, str, Callable[[], object]]]: ...


class PaletteCommands(Provider):
    """The app's ``palette_commands()``: (name, help, action), matched by name."""

    def _commands(self) -> list[tuple[str, str, Callable[[], object]]]:
        return cast(HasPaletteCommands, self.app).palette_commands()

    async def search(self, query: str) -> Hits:
        matcher = self.matcher(query)
        for name, help_text, action in self._commands():
            score = matcher.match(name)
            if score > 0:
                yield Hit(score, matcher.highlight(name), action, help=help_text)

    async def discover(self) -> Hits:
        for name, help_text, action in self._commands():
            yield Hit(1.0, name, action, help=help_text)


def browser_commands(app: PerftuiApp) -> list[tuple[str, str, Callable[[], object]]]:
    """The browser's palette commands: (name, help, action)."""
    timeline = app.query_one(Timeline)
    return [
        ("Filter records", "filter by type, cpu, pid, tid, comm, time, section",
         app.action_filter),
        ("Go to offset or time", "jump to a record by file offset or time",
         app.action_goto),
        ("Toggle file/time order", "show records in file order or time order",
         app.action_toggle_order),
        ("Toggle time base", "relative to the first sample or absolute",
         app.action_toggle_time_base),
        ("Module sections", "focus the module-section pane", app.action_focus_sections),
        ("Profile", "perf report's hotspot table, callers and callees",
         app.action_profile),
        ("Flame graph", "the flame graph of what is shown", app.action_flame),
        ("Timeline by kind/CPU", "one timeline row per record kind or per CPU",
         timeline.action_toggle_rows),
        ("Reset timeline", "zoom out and clear the time range",
         timeline.action_reset),
        ("Recording information", "header and features", app.action_info),
        ("Help", "every key", app.action_help),
        ("Quit", "leave perftui", partial(app.exit, 0)),
    ]
