"""The profile and flame graph panes, mounted (hidden) on the main screen after its first
complete frame, or when a key first asks for them: their modules and widgets are not part
of start-up.  What they are to say before they exist (a note) is kept and given to them
once they are mounted."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from textual.widgets import Footer

from .widgets.panes import SectionsPane
from .widgets.records import RecordList
from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from textual.widget import AwaitMount

    from .app import PerftuiApp
    from .widgets.flame import FlamePane
    from .widgets.profile import ProfilePane


class ViewPanes:
    """The app's profile and flame graph panes, mounted once."""

    def __init__(self, app: PerftuiApp) -> None:
        self.app = app
        self._panes: tuple[ProfilePane, FlamePane] | None = None
        self._mounting: AwaitMount | None = None
        #: what the panes say while there is no profile: (profile's, flame's, redraw)
        self._notes: tuple[str, str, bool] | None = None

    @property
    def created(self) -> tuple[ProfilePane, FlamePane] | None:
        """The panes once made (mounted or on their way)."""
        return self._panes

    @property
    def mounting(self) -> bool:
        return self._mounting is not None

    def mount(self) -> AwaitMount | None:
        """Mount the (hidden) panes on the main screen, once (None: the app is closing)."""
        app = self.app
        main = app.screen_stack[0] if app.screen_stack else None
        if self._mounting is None and main is not None and main.is_attached \
                and not app._closing:
            from .widgets.flame import FlamePane
            from .widgets.profile import ProfilePane

            data = app.profile_data
            panes = (ProfilePane(data, id="profile"), FlamePane(data, id="flame"))
            self._panes = panes
            self._mounting = main.mount(*panes, before=main.query_one(Footer))
            app.call_later(self._mounted, self._mounting)
        return self._mounting

    async def _mounted(self, mounting: AwaitMount) -> None:
        await mounting
        self._apply_notes()

    def panes(self) -> tuple[ProfilePane, FlamePane] | None:
        """The panes, once mounted with their widgets; None once the app is exiting: a
        pane whose mount began just before the exit was asked (ctrl+c at start-up) is
        mounted without its widgets (Textual's compose mounts nothing after ``exit()``)."""
        panes, app = self._panes, self.app
        if panes is None or not app.screen_stack or not app.screen_stack[0].is_attached:
            return None
        # (a pane mounted while the app exits is mounted without its widgets: seen as one
        # without children, even when its screen is still attached)
        return panes if all(p.is_mounted and p.children for p in panes) else None

    def show(self, name: str) -> None:
        """Show the records, the profile or the flame graph under the timeline (the
        app's ``body``), and focus it."""
        app = self.app
        views = {"records": ("#records", "#bottom"), "profile": ("#profile",),
                 "flame": ("#flame",)}
        if name not in views:
            name = "records"
        if name != "records" and not self.then(lambda: self.show(name)):
            return
        if name != app.body:  # (the profile, shown, says its row again)
            app.query_one(Timeline).show_selected(None)
        if app.screen.maximized is not None:
            app.screen.minimize()
        for key, ids in views.items():
            for i in ids:
                app.query_one(i).display = key == name
        old, app.body = app.body, name
        panes = self.panes()
        if panes is not None and {old, name} == {"profile", "flame"}:
            # the event counted goes with the user from one view to the other
            src, dst = (panes[0], panes[1]) if name == "flame" else (panes[1], panes[0])
            dst.attr = src.chosen_attr()
        if name == "records":
            came = "records"
            if panes is not None and old == "flame":
                came = panes[1].came_from
            if panes is not None and old == "profile" and panes[0].section is not None:
                came = "sections"
            (app.query_one(SectionsPane) if came == "sections"
             else app.query_one(RecordList)).focus()
        elif name == "profile" and panes is not None:
            pane = panes[0]
            pane.refresh_data()
            pane.focus_view()
        elif panes is not None:
            flame = panes[1]
            if old != "flame":
                flame.came_from = old
            flame.refresh_data()
            flame.graph.focus()
        app.refresh_bindings()

    def shown_attr(self, body: str) -> int | None:
        """The event the profile view ``body`` (``profile``, ``flame``) counts, if one is
        shown (None: none)."""
        panes, at = self.panes(), {"profile": 0, "flame": 1}.get(body)
        return panes[at].chosen_attr() if panes is not None and at is not None else None

    def then(self, then: Callable[[], object]) -> bool:
        """True when the panes are mounted; else mount them, call ``then()`` once they
        are, and return False (a key pressed while they are being mounted)."""
        if self.panes() is not None:
            return True
        mounting = self.mount()
        if mounting is None:
            return False
        app = self.app

        async def later() -> None:
            await mounting
            if len(app.screen_stack) == 1:  # (a screen opened meanwhile: the key is moot)
                then()

        app.call_later(later)
        return False

    def set_notes(self, profile: str, flame: str, redraw: bool = True) -> None:
        """What the profile and flame graph say instead of a profile (``redraw``: shown
        at once, else when next drawn)."""
        self._notes = (profile, flame, redraw)
        self._apply_notes()

    def _apply_notes(self) -> None:
        panes, notes = self.panes(), self._notes
        if panes is None or notes is None:
            return
        profile, flame = panes
        if notes[2]:
            profile.set_note(notes[0])
            flame.set_note(notes[1])
        else:
            profile.note, flame.note = notes[0], notes[1]
        self._notes = None
