"""The samples of a profile line, listed in a worker and shown (the table's and the flame
graph's ``v`` and Enter on "all")."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import numpy as np
from textual.worker import get_current_worker

from ..messages import SamplesWanted


def show_rows_found(pane: Any, find: Callable[[], np.ndarray | None], title: str,
                    origin: str) -> None:
    """In a thread worker: the SAMPLE rows ``find()`` lists (None: none to show) handed to
    the app's samples screen; a failure is said by ``pane._failed`` (the browser goes on);
    nothing is shown once the worker is cancelled."""
    try:
        rows = find()
    except Exception as e:  # said, the traceback kept
        pane.app.call_from_thread(pane._failed, e)
        return
    if rows is not None and not get_current_worker().is_cancelled:
        pane.app.call_from_thread(pane.post_message, SamplesWanted(rows, title, origin))
