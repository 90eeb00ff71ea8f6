"""The call graph under each row of the text report, printed as perf 6.1's ``report
--stdio`` prints it (tools/perf/ui/stdio/hist.c: graph and fractal trees with their
``|`` and ``--N%--`` lines, flat chains, folded lines).

A tree (:mod:`..analysis.callgraph`) keeps a node per frame; perf's nodes are runs of
frames that no chain ends in or branches from, made here.  Siblings are ordered by their
cumulative period, the larger first; siblings of equal period in the order perf's
``match_chain`` leaves them (the higher dso, then the higher address first).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from ..analysis.callgraph import Node, RowGraphs, fractal_min, min_hit
from ..symbols.naming.locations import UNKNOWN_DSO, Locations
from ..textsafe import safe

_MARGIN = " " * 12  # callchain__fprintf_left_margin's


@dataclass
class _Run:
    """One of perf's callchain nodes: its frames' locations, and its last frame's node
    (hits, children)."""

    locs: list[int]
    last: Node

    @property
    def cumul(self) -> int:
        return self.last.cum

    @property
    def children_hit(self) -> int:
        return self.last.cum - self.last.hit


def _run(node: Node) -> _Run:
    locs = [node.loc]
    while node.hit == 0 and node.kids == 1:
        node = next(iter(node.children.values()))
        locs.append(node.loc)
    return _Run(locs, node)


#: the longest frame name perf writes in a call graph: ``callchain_list__sym_name`` into
#: a 1024-byte buffer (a long C++ template's name is cut there)
NAME_BYTES = 1023


class GraphPrinter:
    """Prints the call graphs of one profile's rows."""

    def __init__(self, graphs: RowGraphs, locs: Locations, skip_first: bool,
                 folded_sep: str = ";") -> None:
        self.g = graphs
        #: between a folded chain's frames (perf: ``-t``'s separator, else ``;``)
        self.folded_sep = folded_sep
        self.o = graphs.options
        self.locs = locs
        #: perf leaves out the single chain's first frame when the sort order given
        #: begins with ``sym`` (it is the row's own symbol)
        self.skip_first = skip_first
        self._names: dict[int, str] = {}
        # perf compares dso pointers: no map's (NULL) lowest, the kernel's made first
        self._dso_rank = {i: (-1 if d.name == UNKNOWN_DSO else 0 if d.kernel else 1, i)
                          for i, d in enumerate(locs.dsos)}

    # -- names and values -----------------------------------------------------------
    def name(self, loc: int) -> str:
        """A frame as perf's ``callchain_list__sym_name`` writes it (safe for a terminal)."""
        t = self._names.get(loc)
        if t is None:
            locs = self.locs
            n = locs.name[loc]
            if n is not None:
                t = f"{n} (inlined)" if loc in locs.inlined else n
            else:
                a = locs.start[loc]
                t = f"{a:#x}" if a else "0"  # (C's %#x of 0)
            if len(t) > NAME_BYTES // 4 and len(b := t.encode()) > NAME_BYTES:
                t = b[:NAME_BYTES].decode(errors="ignore")  # (perf's char bf[1024])
            t = self._names[loc] = safe(t)
        return t

    def value(self, cum: int, ccount: int, total: int) -> str:
        """``callchain_node__fprintf_value``."""
        if self.o.value == "period":
            return str(cum)
        if self.o.value == "count":
            return str(ccount)
        pct = cum * 100.0 / total if total else 0.0
        return f"{pct:.2f}%"

    def _tie(self, node: Node) -> tuple[object, ...]:
        locs = self.locs
        loc = node.loc
        return (self._dso_rank[locs.dso[loc]], locs.start[loc],
                (locs.name[loc] or "").encode("utf-8", "surrogateescape"))

    def children(self, last: Node, row: int) -> list[_Run]:
        """A node's children as perf keeps and orders them (``sort_chain_graph_abs``/
        ``_rel``: those under the threshold dropped, the larger cumulative period first)."""
        if self.o.mode == "fractal":
            least = fractal_min(last.cum - last.hit, self.o.threshold)
        else:
            least = min_hit(self.g, row)
        kept = [c for c in last.children.values() if c.cum >= least]
        kept.sort(key=self._tie, reverse=True)
        kept.sort(key=lambda c: c.cum, reverse=True)
        return [_run(c) for c in kept]

    # -- graph and fractal -----------------------------------------------------------
    def graph(self, row: int, out: Callable[[str], object]) -> None:
        """``callchain__fprintf_graph`` of row ``row``."""
        root = self.g.roots[row]
        parent = self.g.parent[row]
        total = self.g.total
        top = self.children(root, row)
        lines: list[str] = []
        margin = 0
        below = root
        if top and not (len(top) > 1 or top[0].cumul != parent):
            run = top[0]
            printed = False
            shown = 0
            for i, loc in enumerate(run.locs):
                if i == 0 and self.skip_first:
                    continue
                if not printed:
                    lines.append(_MARGIN + "|\n")
                    lines.append(_MARGIN + "---")
                    margin += 3
                    printed = True
                else:
                    lines.append(_MARGIN + " " * margin)
                lines.append(self.name(loc) + "\n")
                shown += 1
                if shown == self.o.print_limit:
                    break
            below = run.last
            top = self.children(below, row)
        if self.o.mode == "fractal":
            total = parent
        self._level(top, below, row, total, 1, 1, margin, lines)
        if lines:
            lines.append("\n")
            out("".join(lines))

    def _level(self, runs: list[_Run], parent: Node, row: int, total: int, depth: int,
               mask: int, margin: int, lines: list[str]) -> None:
        """``__callchain__fprintf_graph``: one level of branches (``runs``, the children
        of ``parent``'s node)."""
        fractal = self.o.mode == "fractal"
        remaining = total
        new_mask = mask
        left = _MARGIN + " " * margin
        cumul_count = 0
        for k, run in enumerate(runs):
            remaining -= run.cumul
            cumul_count += run.last.ccount
            if k == len(runs) - 1 and (not fractal or not remaining):
                new_mask &= ~(1 << (depth - 1))
            lines.append(left + "".join("|          " if mask & (1 << i) else " " * 11
                                        for i in range(depth)) + "\n")
            for i, loc in enumerate(run.locs):
                lines.append(self._entry(run.last.cum, run.last.ccount, total, depth,
                                         new_mask, i, left) + self.name(loc) + "\n")
            sub = run.children_hit if fractal else total
            self._level(self.children(run.last, row), run.last, row, sub, depth + 1,
                        new_mask | (1 << depth), margin, lines)
            if k + 1 == self.o.print_limit:
                break
        if fractal and remaining and remaining != total:
            rem_count = 0
            if self.o.value == "count" and runs:
                rem_count = (parent.ccount - parent.count) - cumul_count
                if rem_count <= 0:
                    return
            new_mask &= ~(1 << (depth - 1))
            lines.append(self._entry(remaining, rem_count, total, depth, new_mask, 0, left)
                         + "[...]\n")

    def _entry(self, cum: int, ccount: int, total: int, depth: int, mask: int,
               period: int, left: str) -> str:
        """``ipchain__fprintf_graph``'s text before the frame's name."""
        parts = [left]
        for i in range(depth):
            parts.append("|" if mask & (1 << i) else " ")
            if not period and i == depth - 1:
                parts.append("--" + self.value(cum, ccount, total) + "--")
            else:
                parts.append(" " * 10)
        return "".join(parts)

    # -- flat and folded -------------------------------------------------------------
    def _flat_nodes(self, row: int) -> list[tuple[list[int], Node]]:
        """``sort_chain_flat``: every perf node a chain ends in with at least the least
        period, children before their parent, by its own period (the larger first); each
        with the frames from the root to its end."""
        least = min_hit(self.g, row)
        found: list[tuple[list[int], Node]] = []

        def walk(node: Node, path: list[int]) -> None:
            for c in sorted(node.children.values(), key=self._tie, reverse=True):
                run = _run(c)
                p = path + run.locs
                walk(run.last, p)
                if run.last.hit and run.last.hit >= least:
                    found.append((p, run.last))

        walk(self.g.roots[row], [])
        found.sort(key=lambda f: f[1].hit, reverse=True)
        limit = self.o.print_limit
        return found[:limit] if limit else found

    def flat(self, row: int, out: Callable[[str], object]) -> None:
        """``callchain__fprintf_flat``."""
        lines = []
        for path, node in self._flat_nodes(row):
            lines.append(" " * 11 + self.value(node.cum, node.ccount, self.g.total) + "\n")
            lines.extend(" " * 16 + self.name(loc) + "\n" for loc in path)
            lines.append("\n")
        out("".join(lines))

    def folded(self, row: int, out: Callable[[str], object]) -> None:
        """``callchain__fprintf_folded`` (the value of the chains ending at the node)."""
        lines = []
        for path, node in self._flat_nodes(row):
            lines.append(self.value(node.hit, node.count, self.g.total) + " "
                         + self.folded_sep.join(self.name(loc) for loc in path) + "\n")
        out("".join(lines))

    def write(self, row: int, out: Callable[[str], object]) -> None:
        """Row ``row``'s call graph in the mode asked for."""
        if not self.g.roots[row].children:  # (most rows: none over the threshold)
            return
        mode = self.o.mode
        if mode in ("graph", "fractal"):
            self.graph(row, out)
        elif mode == "flat":
            self.flat(row, out)
        elif mode == "folded":
            self.folded(row, out)
