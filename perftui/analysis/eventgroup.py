"""Event groups as perf report shows them by default: one table for a group's events, a
column of each member's overhead per row (``perf record -e '{cycles,instructions}'``)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from typing import Any

from ..perfdata import Recording
from ..perfdata.constants import Feature
from .profile import Profile, ProfileRow, order_rows


@dataclass(frozen=True)
class EventGroup:
    """Events ``leader .. leader + size - 1`` (attr indexes) shown as one table."""

    name: str  # perf's evsel__group_desc: "anon group { cycles, instructions }"
    leader: int
    size: int

    @property
    def members(self) -> range:
        return range(self.leader, self.leader + self.size)


def event_groups(rec: Recording, force: bool = False) -> list[EventGroup]:
    """The recording's groups of more than one event (its GROUP_DESC feature; ``force``:
    every event in one group, as perf's ``--group`` on a recording without one)."""
    names = [a.display_name for a in rec.attrs]
    if force and len(names) > 1:  # (perf's forced leader: the names alone, no braces)
        return [EventGroup(", ".join(names), 0, len(names))]
    out = []
    for g in rec.feature(Feature.GROUP_DESC) or []:
        leader, size = int(g.get("leader_idx", -1)), int(g.get("nr_members", 0))
        if size < 2 or leader < 0 or leader + size > len(names):
            continue
        label = g.get("name")
        label = "anon group" if not label or label == "{anon_group}" else str(label)
        out.append(EventGroup(_desc(label, names[leader:leader + size]), leader, size))
    return out


def _desc(label: str, names: Sequence[str]) -> str:
    return f"{label} {{ {', '.join(names)} }}"


@dataclass
class GroupTable:
    """A group's rows: each a key of any member, with every member's periods."""

    name: str
    profile: Profile  # the rows' keys and locations (the periods are the leader's)
    members: list[Profile | None]  # per member, None: no samples
    self_period: list[list[int]]  # [row][member]
    children_period: list[list[int]]
    samples: list[list[int]]  # [row][member]: the row's own samples

    @property
    def total_samples(self) -> int:
        return sum(p.total_samples for p in self.members if p is not None)

    @property
    def total_period(self) -> int:
        return sum(p.total_period for p in self.members if p is not None)

    def shares(self, row: int, children: bool) -> list[float]:
        """Each member's overhead of row ``row`` (children's or self), in percent of the
        member's own total period."""
        got = self.children_period if children else self.self_period
        return [100.0 * got[row][m] / p.total_period if p is not None and p.total_period
                else 0.0 for m, p in enumerate(self.members)]


def group_table(name: str, members: list[Profile | None],
                comm_names: Sequence[str] | None = None) -> GroupTable:
    """One table of a group's profiles (their codes shared), in perf's order: with
    children the leader's children period; the leader's self period, then each member's
    (hpp__sort_overhead on a group); then the sort keys."""
    present = [p for p in members if p is not None]
    first = present[0]
    at: dict[tuple[int, ...], int] = {}
    rows: list[ProfileRow] = []
    selfs: list[list[int]] = []
    childs: list[list[int]] = []
    counts: list[list[int]] = []
    for m, p in enumerate(members):
        for r in p.rows if p is not None else ():
            j = at.get(r.key)
            if j is None:
                j = at[r.key] = len(rows)
                rows.append(replace(r, self_period=0, children_period=0, samples=0))
                selfs.append([0] * len(members))
                childs.append([0] * len(members))
                counts.append([0] * len(members))
            selfs[j][m] += r.self_period
            childs[j][m] += r.children_period
            counts[j][m] += r.samples
    index = {id(r): j for j, r in enumerate(rows)}  # (before the sorts: rows' own order)
    merged = Profile(first.keys, first.children, 0, 0, list(rows), first.codes)
    order_rows(merged, comm_names)  # the periods are all 0 here: by the keys alone

    def by_periods(r: ProfileRow) -> tuple[Any, ...]:
        # perf's __hpp__sort_acc weighs only the leader's children (its members' are not
        # compared), then __hpp__sort the self periods, the leader's then each member's
        j = index[id(r)]
        ch = [-childs[j][0]] if first.children else []
        return (*ch, *(-x for x in selfs[j]))

    merged.rows.sort(key=by_periods)  # stable: rows of equal periods keep the keys' order
    order = [index[id(r)] for r in merged.rows]
    for r, j in zip(merged.rows, order, strict=True):
        r.self_period, r.children_period = selfs[j][0], childs[j][0]
    return GroupTable(name, merged, members, [selfs[j] for j in order],
                      [childs[j] for j in order], [counts[j] for j in order])
