"""The transform keys of the views with a current frame.

In the hotspot table, the call trees and the flame graph each key posts
:class:`TransformWanted` with the frame's locations, and the pane that shows the view
pushes the transform on every view's stack (:func:`push_wanted`) and counts again.
``u`` undoes the last one."""

from __future__ import annotations

from rich.text import Text
from textual.binding import Binding
from textual.message import Message

from ...analysis.samplegroups import SampleGroups
from ...analysis.transforms import (
    COLLAPSE_RESOURCE,
    DROP_FUNCTION,
    FOCUS_FUNCTION,
    FOCUS_SUBTREE,
    MERGE_FUNCTION,
)
from ...textsafe import safe
from ..profiledata import ProfileData
from ..transformed import TransformStack

UNDO = "undo"


def transform_bindings(prefix: str, subtree: bool) -> list[Binding]:
    """The keys (``subtree``: with focus on a subtree, for views of nodes)."""
    out = [
        Binding("o", f"transform('{FOCUS_FUNCTION}')", "Focus fn", show=False,
                id=f"{prefix}.focus_function",
                tooltip="focus on the function: only the stacks through it, each from its "
                        "outermost call (every call site merged; every view)"),
        Binding("M", f"transform('{MERGE_FUNCTION}')", "Merge", show=False,
                id=f"{prefix}.merge_function",
                tooltip="merge the function away: its self time charged to its callers"),
        Binding("D", f"transform('{DROP_FUNCTION}')", "Drop", show=False,
                id=f"{prefix}.drop_function",
                tooltip="drop the samples whose stack goes through the function"),
        Binding("L", f"transform('{COLLAPSE_RESOURCE}')", "Collapse lib", show=False,
                id=f"{prefix}.collapse_resource",
                tooltip="collapse the function's library (its dso, or a module's section) "
                        "into one frame"),
        Binding("u", f"transform('{UNDO}')", "Undo", show=False, id=f"{prefix}.undo",
                tooltip="undo the last transform (the breadcrumb in the title says them)"),
    ]
    out.append(Binding("w", "sandwich", "Sandwich", show=False, id=f"{prefix}.sandwich",
                       tooltip="the sandwich: the function's callers merged above it and its "
                               "callees below, across every call site"))
    if subtree:
        out.insert(0, Binding("O", f"transform('{FOCUS_SUBTREE}')", "Focus", show=False,
                              id=f"{prefix}.focus_subtree",
                              tooltip="focus on the subtree: only the stacks through this "
                                      "node, from it"))
    return out


class SandwichWanted(Message):
    """``w``: the sandwich of the function whose locations are ``ids`` (the profile shows
    it)."""

    def __init__(self, ids: frozenset[int], whole: bool = False,
                 attr: int | None = None) -> None:
        """``whole``: ``ids`` are every location of the function (a flame graph's frame
        is first widened by its pane); ``attr``: the event it counts (that of the view
        ``w`` was pressed in; None: the profile's own)."""
        super().__init__()
        self.ids = ids
        self.whole = whole
        self.attr = attr


class TransformWanted(Message):
    """A transform key: ``kind`` (a transform's or ``undo``); ``path``: the locations
    each level of the frame's path may be, root first (one level, the frame's, but for
    focus-subtree); empty: no frame (the key says so)."""

    def __init__(self, kind: str, path: tuple[frozenset[int], ...] = ()) -> None:
        super().__init__()
        self.kind = kind
        self.path = path


def push_wanted(stack: TransformStack, st: SampleGroups, msg: TransformWanted,
                split: bool = False) -> str:
    """Push (or undo) what ``msg`` asks on ``stack``; what to say when nothing was done
    (empty: done).  ``split``: ``st`` is the samples split by source line (its transform
    is pushed as of the base's locations, :meth:`TransformStack.to_base`)."""
    if msg.kind == UNDO:
        return "" if stack.pop() is not None else "no transform to undo"
    if not msg.path or not msg.path[-1]:
        return "no function here" if msg.kind != FOCUS_SUBTREE else \
            "focus on a subtree: on a line of a top-down tree (t) or a flame graph frame"
    ids = msg.path[-1]
    if any(i < 0 for i in ids) and msg.kind != FOCUS_SUBTREE:
        return "a thread is no function: focus on its subtree (O) instead"
    if msg.kind == FOCUS_SUBTREE:
        t = stack.of_path(st, msg.path)
    elif msg.kind == COLLAPSE_RESOURCE:
        t = stack.of_resource(st, min(ids))
    else:
        t = stack.of_function(msg.kind, st, ids)
    stack.push(stack.to_base(t) if split else t)
    return ""


def append_scope(t: Text, data: ProfileData, busy: bool) -> None:
    """End a view's title: what it counts under (filter, range), the transforms'
    breadcrumb, and ``counting…`` while its worker counts (``busy``)."""
    scope_text = data.model.scope_text()
    if scope_text:
        t.append(f"  {safe(scope_text, 80)}", style="bold yellow")
    crumbs = data.transforms.crumbs()
    if crumbs:
        t.append(f"  {safe(crumbs, 100)}", style="bold magenta")
    if busy:
        t.append("  counting…", style="yellow")
