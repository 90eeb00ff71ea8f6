"""The browser's navigation stack below the screens: a jump from a sample to its record
in the record list, and Esc back from there to the samples list it came from, on its row."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from ..analysis.filters import Filter
from .messages import ProfileReturn, ReturnPath
from .screens import SamplesScreen, SectionScreen
from .widgets.records import RecordList
from .widgets.timeline import Timeline

if TYPE_CHECKING:
    from .app import PerftuiApp


class Navigator:
    """Jumps to records and back (``return_path``: where Esc goes after a jump)."""

    def __init__(self, app: PerftuiApp) -> None:
        self.app = app
        self.return_path: ReturnPath | ProfileReturn | None = None

    def show_samples(self, rows: Any, title: str, body: str, cursor: int = 0) -> None:
        """The samples of a profile row, tree line or frame (Enter: their records)."""
        app = self.app
        if len(app.screen_stack) == 1:
            from .samplescreen import ProfileSamplesScreen

            app.push_screen(ProfileSamplesScreen(app.model, rows, title, body, cursor))

    def jump(self, row: int, came_from: ReturnPath | ProfileReturn | None = None) -> None:
        """From a sample in the drill-down back to its record in the list (Esc returns)."""
        app = self.app
        while len(app.screen_stack) > 1:
            app.pop_screen()
        if app.body != "records":
            app.show_body("records")
        self.return_path = came_from
        records = app.query_one(RecordList)
        if not records.jump_to_row(row):
            # hidden by the filter or the range: clear them, then jump
            app.model.flt = Filter()
            app.model.time_range = None
            app.model.invalidate()
            app.query_one(Timeline).action_reset()
            records.refresh_data()
            app.update_scope()
            app.recount()
            records.jump_to_row(row)
        records.focus()

    def back(self) -> bool:
        """After Enter on a sample jumped to its record: back to that samples list, on that
        row (navigation is a stack); False when there is no such jump to go back from."""
        app = self.app
        back = self.return_path
        if isinstance(back, ProfileReturn) and len(app.screen_stack) == 1:
            self.return_path = None
            app.show_body(back.body)
            self.show_samples(back.rows, back.title, back.body, back.sample_row)
            return True
        if isinstance(back, ReturnPath) and len(app.screen_stack) == 1 and \
                app.model.report is not None:
            self.return_path = None
            app.push_screen(SectionScreen(app.profile_data, back.entry, cursor=back.symbol_row))
            app.push_screen(SamplesScreen(app.profile_data, back.entry, back.symbol,
                                          cursor=back.sample_row))
            return True
        return False
