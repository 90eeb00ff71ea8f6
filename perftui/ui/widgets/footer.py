"""The key footer: Textual's, recomposed only when the keys it shows change.

Textual's ``Footer`` recomposes on every bindings signal of its screen (a focus change,
``refresh_bindings``, a screen resumed), and each recompose mounts a ``FooterKey`` per key
and styles it again (~40 ms of CPU at 26 keys): the main screen's start-up sent 12 such
signals, 0.53 s of the UI thread's CPU before the profile was on screen, most of them for
the same keys.  This one recomposes when the shown keys differ from the last composed.
"""

from __future__ import annotations

from textual.binding import Binding
from textual.screen import Screen
from textual.widgets import Footer as TextualFooter


def shown_keys(screen: Screen) -> tuple[tuple[Binding, bool, str], ...]:
    """What a footer on ``screen`` shows: each shown binding with its enabled state and
    tooltip, in the screen's order (what ``Footer.compose`` reads)."""
    return tuple((binding, enabled, tooltip)
                 for (_node, binding, enabled, tooltip) in screen.active_bindings.values()
                 if binding.show)


class Footer(TextualFooter):
    """Textual's footer, recomposed only when its screen's shown keys change."""

    def __init__(self) -> None:
        super().__init__()
        self._composed: tuple[tuple[Binding, bool, str], ...] | None = None

    def bindings_changed(self, screen: Screen) -> None:
        """Textual's handler, skipped when the keys are those last composed."""
        if screen.app.app_focus and self.is_attached and screen is self.screen:
            shown = shown_keys(screen)
            if shown == self._composed:
                return
            self._composed = shown
        super().bindings_changed(screen)
