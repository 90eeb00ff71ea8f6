"""The browser's own keys (the main screen's and those of every screen): each binding's
tooltip is its line in the help and the README (:mod:`perftui.ui.keys`)."""

from __future__ import annotations

from textual.binding import Binding, BindingType

from ..analysis.filters import FILTER_HELP
from .screensave import SAVE_BINDING

APP_BINDINGS: list[BindingType] = [
    Binding("question_mark", "help", "Help", id="app.help", key_display="?",
            tooltip="this help, built from the key bindings"),
    Binding("i", "info", "Info", id="app.info",
            tooltip="header, events, records, decode errors, naming notes"),
    SAVE_BINDING,
    Binding("q", "back_or_quit", "Quit", id="app.quit",
            tooltip="back one level, or quit"),
    Binding("ctrl+c", "quit", "Quit", show=False, priority=True, id="app.ctrl_c",
            tooltip="quit"),
    Binding("escape", "escape", "Back", show=False, id="app.escape",
            tooltip="un-zoom; after a jump from a sample, back to its samples list"),
    Binding("m", "focus_sections", "Sections", id="app.sections",
            tooltip="focus the module sections"),
    Binding("p", "profile", "Profile", id="app.profile",
            tooltip="the profile: perf report's table, callers and callees, call trees "
                    "(again: back)"),
    Binding("f", "flame", "Flame", id="app.flame",
            tooltip="the flame graph (again: back)"),
    Binding("C", "flame_chart", "Chart", show=False, id="app.chart",
            tooltip="the flame chart: one thread's stacks in time order (Enter zooms to a "
                    "frame's time; [ ] t: the thread)"),
    Binding("l", "focus_records", "Records", show=False, id="app.records",
            tooltip="focus the record list"),
    Binding("T", "focus_timeline", "Timeline", show=False, id="app.timeline",
            tooltip="focus the timeline"),
    Binding("slash", "filter", "Filter", id="app.filter", key_display="/",
            tooltip="filter every pane: " + FILTER_HELP.replace(' comm="CPU 0/KVM"', "")),
    Binding("g", "goto", "Go to", id="app.goto",
            tooltip="go to an offset (0x1f0, 4096: the record holding it) or a time "
                    "(2.5: seconds in the shown time base; 2.5s: from the first sample)"),
    Binding("t", "toggle_order", "Order", show=False, id="app.order",
            tooltip="file order / time order"),
    Binding("b", "toggle_time_base", "Time base", show=False, id="app.timebase",
            tooltip="times relative to the first sample (+s) / absolute as perf "
                    "prints them (s)"),
    Binding("z", "zoom_pane", "Zoom pane", show=False, id="app.zoom",
            tooltip="give the focused pane the whole screen (again: back)"),
    Binding("x", "stop_indexing", "Stop indexing", show=False, id="app.stop",
            tooltip="stop indexing (a pipe is still read to its end, so perf record "
                    "never blocks)"),
]
