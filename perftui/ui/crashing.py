"""An app that reports a crash in one line: the traceback goes to a file
(:mod:`perftui.crash`), the terminal gets the line, and the command line exits 3."""

from __future__ import annotations

from textual.app import App

from ..crash import crash_line, write_traceback


class CrashReportingApp(App[int]):
    """Textual's app with its long exit traceback replaced by :attr:`crash_report`."""

    #: the one line after a crash (None: no crash)
    crash_report: str | None = None

    def _handle_exception(self, error: Exception) -> None:
        if self.crash_report is None:
            self.crash_report = crash_line(error, write_traceback(error))
        super()._handle_exception(error)

    def _print_error_renderables(self) -> None:
        if self.crash_report is None:
            super()._print_error_renderables()
            return
        self._exit_renderables.clear()  # Textual's own (long) traceback: in the file
