"""``P``: what is on screen saved to a text file, as perf's TUI ``P`` saves its browser to
``perf.hist.N`` (the first N from 0 whose file does not exist, in the current directory, 8192
tries) and says so.

The text is the screen as a terminal shows it, without styles: the same rendering Textual's
screenshots are made of, every line with its trailing blanks cut.
"""

from __future__ import annotations

import io
import os
from pathlib import Path

from rich.console import Console
from textual.app import App
from textual.binding import Binding

from ..textsafe import safe

#: the file names: ``perftui.screen.0``, ``perftui.screen.1``, ... (perf: ``perf.hist.N``)
PREFIX = "perftui.screen."
TRIES = 8192  # perf's "arbitrary lazy upper limit"

SAVE_BINDING = Binding(
    "P", "save_screen", "Save", show=False, id="app.save",
    tooltip=f"save what is on screen to a text file ({PREFIX}N in the current directory, "
            "as perf's P writes perf.hist.N)")


def screen_text(app: App[int]) -> str:
    """The screen shown (with the screens under a dialog) as plain text, one line a row."""
    width, height = app.size
    console = Console(width=width, height=height, file=io.StringIO(), record=True,
                      force_terminal=True, color_system=None, legacy_windows=False,
                      safe_box=False)
    console.print(app.screen._compositor.render_update(
        full=True, screen_stack=app._background_screens))
    lines = console.export_text(styles=False).split("\n")[:height]
    return "\n".join(line.rstrip() for line in lines) + "\n"


def write_new_file(text: str, directory: Path) -> Path:
    """``text`` in the first ``perftui.screen.N`` of ``directory`` not there yet (made
    exclusively: an existing file, or a link, is never written through)."""
    for n in range(TRIES):
        path = directory / f"{PREFIX}{n}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
        except FileExistsError:
            continue
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        return path
    raise FileExistsError(f"too many {PREFIX}N files, nothing written")


class ScreenSavingApp(App[int]):
    """An app whose ``P`` saves the screen (its binding: :data:`SAVE_BINDING`)."""

    def action_save_screen(self) -> None:
        # after the next refresh: the toasts the key dismissed are gone from the screen
        self.call_after_refresh(self._save_screen)

    def _save_screen(self) -> None:
        try:
            path = write_new_file(screen_text(self), Path.cwd())
        except OSError as e:
            self.notify(f"screen not saved: {safe(str(e), 200)}", severity="error",
                        markup=False)
            return
        self.notify(f"{path.name} written (in {safe(str(path.parent), 200)})", timeout=3,
                    markup=False)
