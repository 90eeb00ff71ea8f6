"""The key help, built from the bindings themselves: one source for ``?``, the footer (the
bindings' descriptions) and the README's key table (``scripts/keys_table.py``).

Each binding's ``tooltip`` is its help line; bindings of one pane with the same tooltip
are one line (``↑/↓``).  A binding without a tooltip is not listed (it is named by
another one's line, or is Textual's own).
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from textual.binding import Binding, BindingType

KEY_NAMES = {
    "question_mark": "?", "slash": "/", "escape": "Esc", "enter": "Enter", "plus": "+",
    "minus": "-", "equals_sign": "=", "percent_sign": "%", "pageup": "PgUp",
    "pagedown": "PgDn", "home": "Home", "end": "End", "backspace": "Backspace", "up": "↑",
    "down": "↓", "left": "←",
    "right": "→", "tab": "Tab", "right_square_bracket": "]", "left_square_bracket": "[",
    "shift+tab": "shift+Tab", "shift+left": "shift+←", "shift+right": "shift+→",
    "1": "1-9",  # the profile views' events: one line for the nine bindings
}


def key_name(key: str) -> str:
    """A key as the help and the README write it (``question_mark`` -> ``?``)."""
    first = key.split(",")[0].strip()
    return KEY_NAMES.get(first, first)


def binding_lines(bindings: Sequence[BindingType]) -> list[tuple[str, str]]:
    """(keys, help) lines of one place, in binding order, same-help keys joined."""
    out: list[tuple[list[str], str]] = []
    for b in bindings:
        if not isinstance(b, Binding) or not b.tooltip:
            continue
        for keys, text in out:
            if text == b.tooltip:
                if key_name(b.key) not in keys:
                    keys.append(key_name(b.key))
                break
        else:
            out.append(([key_name(b.key)], b.tooltip))
    return [("/".join(keys), text) for keys, text in out]


#: a place: its title, the classes that say the focus is there (the focused widget or one of
#: its ancestors, the innermost first), and its (keys, help) lines
Place = tuple[str, tuple[type, ...], list[tuple[str, str]]]


def places() -> list[Place]:
    """The browser's places, from the widgets' and screens' BINDINGS."""
    from .annotate import AnnotateScreen, AnnotateTable
    from .app import PerftuiApp
    from .chartscreen import FlameChart, FlameChartScreen
    from .samplescreen import ProfileSamplesScreen, SampleLines
    from .screens import (
        BackScreen,
        NavTable,
        SamplesScreen,
        SampleTable,
        SectionScreen,
        SymbolList,
    )
    from .widgets.calltrees import CallTreeList
    from .widgets.flame import FlameGraph, FlamePane
    from .widgets.hotspots import HotspotTable
    from .widgets.panes import Detail, SectionsPane
    from .widgets.profile import ProfilePane, event_bindings
    from .widgets.records import RecordList
    from .widgets.timeline import Timeline

    return [
        ("everywhere", (), [*binding_lines(PerftuiApp.BINDINGS),
                            ("Tab/shift+Tab", "next / previous pane"),
                            ("ctrl+p", "command palette")]),
        ("record list", (RecordList,), binding_lines(RecordList.BINDINGS)),
        ("detail", (Detail,), binding_lines(Detail.BINDINGS)),
        ("timeline", (Timeline,), binding_lines(Timeline.BINDINGS)),
        ("module sections", (SectionsPane,), binding_lines(SectionsPane.BINDINGS)),
        ("section drill-down", (SectionScreen, SamplesScreen),
         binding_lines([*SymbolList.BINDINGS, *SampleTable.BINDINGS, *NavTable.BINDINGS,
                        *BackScreen.BINDINGS])),
        ("profile (p)", (HotspotTable, ProfilePane),
         binding_lines([*HotspotTable.BINDINGS, *ProfilePane.BINDINGS])),
        # (the trees are in the profile's pane: its events' keys work there too)
        ("call trees", (CallTreeList,),
         binding_lines([*CallTreeList.BINDINGS, *event_bindings()])),
        ("flame graph (f)", (FlameGraph, FlamePane),
         binding_lines([*FlameGraph.BINDINGS, *FlamePane.BINDINGS])),
        ("flame chart (C)", (FlameChart, FlameChartScreen),
         binding_lines([*FlameChart.BINDINGS, *FlameChartScreen.BINDINGS])),
        ("samples of a profile line", (SampleLines, ProfileSamplesScreen),
         binding_lines(SampleLines.BINDINGS)),
        ("annotate", (AnnotateTable, AnnotateScreen),
         binding_lines([*AnnotateScreen.BINDINGS, *AnnotateTable.BINDINGS,
                        *BackScreen.BINDINGS])),
    ]


def diff_places() -> list[Place]:
    """The diff browser's places (``perftui OLD NEW``), from its bindings."""
    from .diffapp import DiffApp, DiffTable
    from .diffflamescreen import DiffFlameScreen
    from .screens import NavTable
    from .widgets.diffflame import DiffFlameGraph
    from .widgets.timeline import Timeline

    return [
        ("everywhere", (), [*binding_lines(DiffApp.BINDINGS),
                            ("Tab/shift+Tab", "next / previous pane")]),
        ("compared table", (DiffTable,), binding_lines([*DiffTable.BINDINGS,
                                                      *NavTable.BINDINGS])),
        ("OLD and NEW timelines", (Timeline,), binding_lines(Timeline.BINDINGS)),
        ("differential flame graph (f)", (DiffFlameGraph, DiffFlameScreen),
         binding_lines([*DiffFlameGraph.BINDINGS, *DiffFlameScreen.BINDINGS])),
    ]


def help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """Every place's keys: (title, [(keys, help)]), everywhere's first (the README's order)."""
    return [(title, rows) for title, _, rows in places()]


def diff_help_sections() -> list[tuple[str, list[tuple[str, str]]]]:
    """The diff browser's keys, as :func:`help_sections`."""
    return [(title, rows) for title, _, rows in diff_places()]


def place_of(node: object, where: list[Place]) -> str | None:
    """The title of the place ``node`` (the focused widget, or the screen) is in: the first
    place naming the node's class, else its parent's, and so on up."""
    while node is not None:
        for title, classes, _ in where:
            if classes and isinstance(node, classes):
                return title
        node = getattr(node, "parent", None)
    return None


def sections_from(here: str | None, where: list[Place]
                  ) -> list[tuple[str, list[tuple[str, str]]]]:
    """The help's sections: the keys of the place ``here`` first (titled so), then
    everywhere's, then the others."""
    first = [(f"{t} (here)", rows) for t, _, rows in where if t == here]
    return first + [(t, rows) for t, _, rows in where if t != here]


def help_text(width: int = 78,
              sections: list[tuple[str, list[tuple[str, str]]]] | None = None) -> str:
    """The ``?`` screen's text (default: the browser's keys), wrapped to ``width`` with a
    hanging indent."""
    lines: list[str] = []
    sections = help_sections() if sections is None else sections
    kw = min(max(len(k) for _, rows in sections for k, _ in rows), 13)  # one key column
    indent = " " * (kw + 4)
    for title, rows in sections:
        lines.append(title)
        for keys, text in rows:
            first = f"  {keys:<{kw}}  " if len(keys) <= kw else None
            if first is None:
                lines.append(f"  {keys}")
                first = indent
            lines.extend(textwrap.wrap(text, width=max(width, kw + 24), initial_indent=first,
                                       subsequent_indent=indent))
        lines.append("")
    return "\n".join(lines).rstrip() + "\n"


def markdown_table(sections: list[tuple[str, list[tuple[str, str]]]] | None = None) -> str:
    """The README's key table (between its ``<!-- keys -->`` markers; the diff browser's
    between ``<!-- diff keys -->`` ones)."""
    rows = ["| where | key | does |", "|---|---|---|"]
    for title, entries in help_sections() if sections is None else sections:
        for i, (keys, text) in enumerate(entries):
            shown = " ".join(f"`{k}`" for k in keys.split("/")) if keys != "/" else "`/`"
            rows.append(f"| {title if i == 0 else ''} | {shown} | {text} |")
    return "\n".join(rows) + "\n"
