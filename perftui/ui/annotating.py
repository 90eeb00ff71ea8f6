"""Opening the annotate screen from the main browser: on the model's one resolver and the
samples' leaves it already named; later when the names are not there yet (opened when they
come, if the screen it was asked on is still shown); the resolver made first, in a worker,
when the names came from the cache."""

from __future__ import annotations

from functools import partial
from typing import TYPE_CHECKING, Any

import numpy as np

from ..textsafe import safe

if TYPE_CHECKING:
    from textual.app import App
    from textual.screen import Screen

    from ..analysis.annotator import Annotator
    from .annotate import Target
    from .model import Model


class AnnotateOpener:
    """The main browser's annotate screens, on one :class:`Annotator`."""

    def __init__(self, app: App, model: Model) -> None:
        self.app = app
        self.model = model
        self._annotator: Annotator | None = None
        #: ``a`` pressed before the names were there: (what, on which screen)
        self._later: tuple[Target, Screen[Any]] | None = None
        #: the symbol tables being read in a worker for an annotate screen to open
        self.preparing = False

    @property
    def annotator(self) -> Annotator:
        """The recording's annotator, on the model's one resolver and the samples' leaves
        it already named (use once every sample is named)."""
        if self._annotator is None:
            from ..analysis.annotatefunction import SampleLeaves
            from ..analysis.annotator import Annotator

            m = self.model
            assert m.resolver is not None and m.names is not None
            leaves = SampleLeaves(m.names.rows, np.asarray(m.names.leaf, dtype=np.int32))
            self._annotator = Annotator(m.rec, m.symbol_options, resolver=m.resolver,
                                        leaves=leaves)
        return self._annotator

    def open(self, target: Target) -> None:
        """Annotate a function (a :data:`~perftui.ui.annotate.Target`).  The screen counts
        the samples the filter and the time range keep; Esc comes back."""
        m, app = self.model, self.app
        self.preparing = False
        if not m.done or m.names is None:
            self._later = (target, app.screen)
            what = "every sample has its symbol" if m.done else "indexing ends " \
                "and every sample has its symbol"
            app.notify(f"annotate: opens once {what}", timeout=3)
            return
        if isinstance(target, int) and not (0 <= target < len(m.names.locs)
                                            and m.names.locs.name[target] is not None):
            app.notify("no symbol to annotate here (an address no symbol covers)", timeout=3)
            return
        if m.resolver is None:  # the names came from the cache: made once, now
            app.notify("annotate: reading the symbol tables…", timeout=3)
            self.preparing = True
            app.run_worker(partial(self._resolver_then_open, target), name="resolver",
                           group="resolver", thread=True, exclusive=True)
            return
        from .annotate import AnnotateScreen

        app.clear_notifications()  # ("reading the symbol tables…" must not cover it)
        app.push_screen(AnnotateScreen(self.annotator, target, keep=self._keep,
                                       scope=m.scope_text()))

    def names_ready(self, error: str | None) -> None:
        """Every sample is named (or ``error``): open what ``a`` asked for meanwhile, if
        its screen is still the one shown."""
        later, self._later = self._later, None
        if later is not None and not error and later[1] is self.app.screen:
            self.open(later[0])

    def _resolver_then_open(self, target: Target) -> None:
        try:
            self.model.ensure_resolver()
        except Exception as e:  # a symbol source that breaks must not stop the app
            self.app.call_from_thread(self._failed, safe(f"annotate: {e}", 300))
            return
        self.app.call_from_thread(self.open, target)

    def _failed(self, message: str) -> None:
        self.preparing = False
        self.app.notify(message, severity="error", markup=False)

    def _keep(self, rows: np.ndarray) -> np.ndarray | None:
        """The filter and the range as a mask over sample rows (None: all kept)."""
        m = self.model
        flt = m.flt.within(m.time_range)
        return None if flt.empty else flt.mask(m.rec, rows, m.context)
