"""How the profile views write a frame (a location or a thread) and a share: the words
and colours the hotspot table, the call trees and the flame graph have in common."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

from rich.text import Text
from textual.binding import Binding

from ...present.report import frame_name as folded_name
from ...present.report import time_text
from ...symbols.naming.locations import Locations
from ...textsafe import safe

if TYPE_CHECKING:
    from ..profiledata import ProfileData, Scope

#: background colours of flame-graph frames by kind, a few shades each (neighbours differ)
KIND_COLOURS: dict[str, tuple[str, ...]] = {
    "all": ("#4a4a4a",),
    "thread": ("#5c5c5c", "#666666"),
    "kernel": ("#b5482a", "#c65a33", "#a63f24"),  # vmlinux and other [k] code
    "user": ("#3f7f2a", "#4c8f35", "#377324"),  # [.] code
    "module .text": ("#2f5f9a", "#3a6dab", "#29548a"),
    "module .noinstr.text": ("#8a3f8a", "#9c4b9c", "#7b357b"),
    "module .text.unlikely": ("#5e4a9a", "#6b57ab", "#52408a"),
    "module": ("#2a7a7a", "#338a8a", "#246c6c"),  # any other section, or not known
}
LEGEND = (("kernel", "kernel"), ("module .text", ".text"), ("module .noinstr.text", ".noinstr"),
          ("module", "other section"), ("user", "user"), ("thread", "thread"))


def frame_kind(locs: Locations, loc: int) -> str:
    """The colour family of a location: ``kernel``, ``user``, or ``module <section>``."""
    d = locs.dsos[locs.dso[loc]]
    if d.module is not None:
        sec = locs.section[loc] if not d.assumed_text else None
        kind = f"module {sec}" if sec else "module"
        return kind if kind in KIND_COLOURS else "module"
    return "kernel" if d.kernel else "user"


def level_mark(locs: Locations, loc: int) -> str:
    """perf report's ``[k]`` (kernel or module) or ``[.]`` (user space)."""
    return "[k]" if locs.dsos[locs.dso[loc]].kernel else "[.]"


def where_text(locs: Locations, loc: int) -> str:
    """The dso as perf report names it, a module with its section: ``[demo_kvm].text``."""
    d = locs.dsos[locs.dso[loc]]
    out = d.short_name
    sec = locs.section[loc]
    if d.module is not None and sec and not d.assumed_text:
        out += sec
    return out


def frame_name(locs: Locations, comm_names: Sequence[str], frame: int,
               folded: bool = False) -> str:
    """A tree frame's name: a symbol (or address; ``folded``: the dso in brackets, as
    flame graphs name an unknown symbol), or a thread's name (``frame < 0``)."""
    if frame < 0:
        c = -1 - frame
        return comm_names[c] if 0 <= c < len(comm_names) else "?"
    return folded_name(locs, frame) if folded else locs.label(frame)


def frame_text(locs: Locations, comm_names: Sequence[str], frame: int,
               with_where: bool = True) -> Text:
    """``[k] name  (dso)`` of a location, or the thread's name in bold."""
    t = Text()  # every part a span of its own: a base style would colour what follows
    if frame < 0:
        t.append(safe(frame_name(locs, comm_names, frame), 200), style="bold")
        return t
    t.append(f"{level_mark(locs, frame)} ", style="dim")
    t.append(safe(locs.label(frame), 400))
    if locs.srcline is not None:  # (a table split by source line: its line)
        t.append("  ")
        t.append(safe(locs.srcline[frame], 200), style="cyan")
    if with_where:
        t.append(f"  {safe(where_text(locs, frame), 80)}", style="dim")
    return t


def pct_style(p: float) -> str:
    """perf's colours for a share: red from 5%, green from 0.5%."""
    return "bold red" if p >= 5.0 else "green" if p >= 0.5 else ""


def pct_text(part: int, total: int) -> Text:
    """``12.34%`` (7 cells), coloured as perf colours it."""
    p = 100.0 * part / total if total else 0.0
    out = Text()
    out.append(f"{p:6.2f}%", style=pct_style(p))  # a span: text appended after is not red
    return out


def plural(n: int, word: str) -> str:
    return word if n == 1 else word + "s"


def weight_text(count: int, period: int, total: int, timed: bool) -> str:
    """What a frame or a tree weighs, as every profile view's status says it: its samples
    and its share of ``total``; for a timed event (offcpu-time, periods in ns) its time
    first, then the share and the samples (``1.502 s  69.90%  5 samples``)."""
    pct = 100.0 * period / total if total else 0.0
    n = f"{count:,} {plural(count, 'sample')}"
    return f"{time_text(period)}  {pct:.2f}%  {n}" if timed else f"{n}  {pct:.2f}%"


class EventChoice:
    """The event a profile view counts (``1``-``9`` pick one, as perf shows each apart);
    mixed into the profile and flame panes, which have ``data``, ``attr``,
    ``refresh_data`` and ``notify``."""

    attr: int | None
    data: ProfileData
    if TYPE_CHECKING:  # what the host widget or screen provides
        def refresh_data(self) -> None: ...
        def notify(self, message: str, **kw: Any) -> None: ...

    def chosen_attr(self) -> int | None:
        """The chosen event, or the first one (None: the recording has none)."""
        attrs = self.data.attrs()
        return self.attr if self.attr in attrs else (attrs[0] if attrs else None)

    def action_event(self, n: int) -> None:
        attrs = self.data.attrs()
        if len(attrs) < 2:
            return
        if n > len(attrs):
            self.notify(f"the recording has {len(attrs)} events",
                        timeout=2)
            return
        self.attr = attrs[n - 1]
        self.refresh_data()


def shares_binding(prefix: str) -> Binding:
    """``%``: shares of every sample (perf's default, ``--percentage absolute``) or of the
    samples a filter of threads, dsos or symbols keeps (``relative``)."""
    return Binding("percent_sign", "toggle_shares", "Shares", show=False, key_display="%",
                   id=f"{prefix}.shares",
                   tooltip="shares of every sample (absolute, perf's default) / of those "
                           "comm= dso= sym= pid= tid= section= keep (relative)")


class ShareChoice:
    """What a profile view's shares are of (``%``: perf's ``--percentage``); mixed into the
    profile and flame panes, which have ``data``, ``scope``, ``refresh_data`` and
    ``notify``."""

    data: ProfileData
    if TYPE_CHECKING:  # what the host pane provides
        def scope(self) -> Scope: ...
        def refresh_data(self) -> None: ...
        def notify(self, message: str, **kw: Any) -> None: ...

    def action_toggle_shares(self) -> None:
        data = self.data
        data.relative_shares = not data.relative_shares
        self.refresh_data()
        self.notify(
            "% of kept: shares of the samples the filter keeps (relative)"
            if data.relative_shares
            else "% of all: shares of every sample (absolute, perf's default)", timeout=2)

    def shares_words(self) -> str:
        """The title's words for what the shares are of ("" when every sample is shown:
        absolute and relative are the same)."""
        data = self.data
        if not data.ready or not data.entries_filtered(self.scope()):
            return ""
        return "  % of kept" if data.relative_shares else "  % of all"
