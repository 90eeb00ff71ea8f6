"""The main screen's bottom panes (the record's detail and the module sections) sized by
what they hold while one of them has the focus: on a small terminal (80x24: 4 lines of
detail, 3 sections) the pane being read grows up to its content, the record list keeping
:data:`RECORDS_KEEP` rows; with the focus back on the records, the stylesheet's sizes.
"""

from __future__ import annotations

from textual import events
from textual.app import App

from .widgets.panes import Detail, SectionsPane

RECORDS_KEEP = 4  # rows of the record list that stay shown (plus its heading and border)


class PaneSizingApp(App[int]):
    """An app whose main screen's ``#bottom`` follows the focused bottom pane's content."""

    def on_descendant_focus(self, _event: events.DescendantFocus) -> None:
        self.call_after_refresh(self.fit_bottom)

    def on_resize(self, _event: events.Resize) -> None:
        self.call_after_refresh(self.fit_bottom)

    def fit_bottom(self) -> None:
        """Size ``#bottom`` for the focused pane (its detail lines, its section rows), or
        give it back to the stylesheet."""
        if not self._screen_stack:
            return
        main = self.screen_stack[0]
        found = main.query("#bottom")
        if not found:
            return
        bottom = found.first()
        detail, sections = main.query_one(Detail), main.query_one(SectionsPane)
        focused = self.focused
        if self.screen is not main or main.maximized is not None or \
                focused not in (detail, sections) or not bottom.display:
            bottom.styles.height = None
            return
        # what the pane shows: its lines, or its heading and rows, inside the border
        need = (len(detail.lines) if focused is detail else sections.row_count + 1) + 2
        above = sum(w.outer_size.height for w in main.children
                    if w.display and w.id not in ("records", "bottom"))
        room = main.size.height - above - (RECORDS_KEEP + 3)
        bottom.styles.height = None
        base = bottom.styles.height
        have = int(base.resolve(main.size, self.size)) if base is not None else 0
        if need > have and room > have:
            bottom.styles.height = min(need, room)
