"""Transforms asked for by name (``perftui report --focus-function NAME`` ...).

Each is made a :class:`~perftui.analysis.transforms.Transform` over location ids.

A function is named as ``--folded`` names its frames (the symbol, else ``[dso]``); a
subtree by such names joined with ``;``, outermost first; a resource by its dso, as
perf's dso column or its path gives it, or a kernel module's section as ``[module]section``
(``[ath9k].text``).  A collapsed resource's frame is named by the resource."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from ..analysis.transformlocs import with_frames
from ..analysis.transforms import COLLAPSE_RESOURCE, FOCUS_SUBTREE, Transform
from ..symbols.naming.locations import Locations
from .report import frame_name


@dataclass(frozen=True)
class TransformSpec:
    """One transform as given: its kind (``focus-function`` ...) and the name."""

    kind: str
    value: str

    @property
    def option(self) -> str:
        return f"--{self.kind} {self.value}"


def resolve_specs(specs: Sequence[TransformSpec], locs: Locations
                  ) -> tuple[Locations, list[Transform], list[str]]:
    """The location table (a copy with the collapsed frames' locations, when there are
    some), the transforms and notes (a name no frame has).  A collapsed frame is named by
    its resource, so a later transform can name it."""
    notes: list[str] = []
    resources = [(s, *_resource(locs, s.value)) for s in specs if s.kind == COLLAPSE_RESOURCE]
    table, into = locs, list[int]()
    if resources:
        table, into = with_frames(locs, [(max(dso, 0), s.value, section)
                                         for s, _ids, dso, section in resources])
    by_name: dict[str, set[int]] = {}
    for i in range(len(table)):
        by_name.setdefault(frame_name(table, i, as_script=True), set()).add(i)
    out: list[Transform] = []
    collapsed = iter(zip(resources, into, strict=True))
    for s in specs:
        if s.kind == COLLAPSE_RESOURCE:
            (_s, ids, dso, _section), frame = next(collapsed)
            if dso < 0:
                notes.append(f"{s.option}: no dso or module section is named so")
            out.append(Transform(s.kind, frozenset(ids), into=frame, label=s.value))
            continue
        names = s.value.split(";") if s.kind == FOCUS_SUBTREE else [s.value]
        levels = [frozenset(by_name.get(n, ())) for n in names]
        missing = [n for n, ids in zip(names, levels, strict=True) if not ids]
        if missing:
            notes.append(f"{s.option}: no frame is named {missing[0]}")
        if s.kind == FOCUS_SUBTREE:
            out.append(Transform(s.kind, path=tuple(levels), label=s.value))
        else:
            out.append(Transform(s.kind, levels[0], label=s.value))
    return table, out, notes


def _resource(locs: Locations, name: str) -> tuple[list[int], int, str | None]:
    """(locations, dso, module section) of the resource ``name``: a dso (short name, path
    or the path's last part) or ``[module]section``; dso -1 when none is so named."""
    section: str | None = None
    want = name
    if name.startswith("[") and "]" in name and not name.endswith("]"):
        want, section = name[:name.index("]") + 1], name[name.index("]") + 1:]
    dsos = [d for d, ld in enumerate(locs.dsos)
            if want in (ld.short_name, ld.name, ld.name.rsplit("/", 1)[-1])]
    if not dsos:
        return [], -1, section
    ok = set(dsos)
    ids = [i for i, d in enumerate(locs.dso)
           if d in ok and (section is None or locs.section[i] == section)]
    return ids, dsos[0], section
