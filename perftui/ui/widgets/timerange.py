"""The timeline's typed range (``R``): one range in the syntax of ``perftui report --time``
(perf's ``--time``, and seconds from the first sample with an ``s`` suffix)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from ...analysis.filters import FilterError, parse_time_range
from ...analysis.timespec import TIME_HELP
from ...textsafe import safe
from ..model import Model

if TYPE_CHECKING:
    from ..screens import PromptScreen


def range_prompt(model: Model, selection: tuple[int, int] | None) -> PromptScreen:
    """The prompt, with the range selected (if any)."""
    from ..screens import PromptScreen

    return PromptScreen("time range", TIME_HELP, range_text(model, selection))


def range_text(model: Model, selection: tuple[int, int] | None) -> str:
    """``selection`` as the prompt starts with it, in the shown time base."""
    if selection is None:
        return ""
    lo, hi = selection
    if model.absolute_time:
        return f"{lo / 1e9:.9f},{hi / 1e9:.9f}"
    first = model.first_time
    return f"{(lo - first) / 1e9:.9f}s,{(hi - first) / 1e9:.9f}s"


def typed_range(model: Model, text: str) -> tuple[int, int] | str:
    """The range ``text`` says, in ns, inclusive; its open sides end at the first and last
    record with a time.  A str: what is wrong with it."""
    first, last = model.span()
    try:
        ranges = parse_time_range(text, first, last, origin=model.first_time)
    except FilterError as e:
        return safe(str(e), 300)
    if len(ranges) > 1:
        return "the timeline selects one range (several: / time=...)"
    lo, hi = ranges[0]
    lo = max(lo, min(first, model.any_span[0]))
    hi = min(hi, max(last, model.any_span[1]))
    if hi < lo:
        return f"no record in {safe(text, 60)}"
    return lo, hi
