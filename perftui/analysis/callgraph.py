"""The call graph under each row of the text report, as perf 6.1's ``report --stdio``
builds it (tools/perf/util/callchain.c, hist.c).

Each row gets a tree of the callchains that reached it: without ``--children`` the whole
chain of each of its own samples; with ``--children`` also, for each sample whose chain
passes through the row, the chain from the row's first frame on (perf's cumulative
entries).  Chains run outermost caller first (``caller``, perf's default with
``--children``) or leaf first (``callee``, its default without).  Frames are told apart
as perf's ``function`` key does: a symbol by its dso and start, an inlined call by its
name, an unresolved address by its dso and address (``address``: every frame by its
address).  A tree is kept uncompressed (a node per frame); perf's nodes, runs of frames
no chain ends in or branches from, are made when printing (:mod:`..present.callgraph`).
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

import numpy as np

from ..symbols.naming.locations import Locations
from ..symbols.naming.samplelocs import SampleLocs
from .chaintrees import Trie, build_trie, paths
from .keycodes import dense_rank
from .outputtree import acc_tree_order
from .profile import Profile, ProfileRow, _group
from .sampleprofile import group_samples, taker
from .sortkeys import SORT_KEYS

MODES = ("graph", "flat", "fractal", "folded", "none")
ORDERS = ("caller", "callee")
KEYS = ("function", "address")
VALUES = ("percent", "period", "count")


class CallGraphError(ValueError):
    """A ``-g`` argument perf would refuse."""


@dataclass
class CallGraphOptions:
    """perf report's ``-g print_type,threshold[,print_limit],order,sort_key,value``;
    ``order`` None: perf's default (``caller`` with children, else ``callee``)."""

    mode: str = "graph"
    threshold: float = 0.5  # percent
    print_limit: int = 0  # 0: no limit
    order: str | None = None
    key: str = "function"
    value: str = "percent"

    def order_for(self, children: bool) -> str:
        if self.order is not None:
            return self.order
        return "caller" if children else "callee"


def _prefix_of(tok: str, words: tuple[str, ...]) -> str | None:
    """The first of ``words`` that ``tok`` begins (perf's ``strncmp(value, word,
    strlen(value))``: any prefix, the empty one too)."""
    for w in words:
        if w.startswith(tok):
            return w
    return None


def parse_call_graph(text: str | None, opts: CallGraphOptions | None = None
                     ) -> CallGraphOptions:
    """perf's ``-g``/``--call-graph`` argument (``__parse_callchain_report_opt``): comma
    separated words, each a print type, an order, a sort key or a value (any prefix of
    one), else the threshold, then the print limit.  ``none`` stops there."""
    o = opts if opts is not None else CallGraphOptions()
    if text is None:
        return o
    threshold_set = False
    for tok in text.split(","):
        if not tok:
            continue  # (strtok skips empty fields)
        if "none".startswith(tok):
            o.mode = "none"
            return o
        for words, attr in ((MODES[:4], "mode"), (ORDERS, "order"), (KEYS, "key"),
                            (VALUES, "value")):
            w = _prefix_of(tok, words)
            if w is not None:
                setattr(o, attr, w)
                break
        else:
            if tok.startswith("branch"):
                raise CallGraphError("-g branch: this recording's branch stacks are not "
                                     "read (perftui has no branch call graphs)")
            num = _leading_number(tok)
            if num is None:
                raise CallGraphError(f"-g: cannot read {tok!r} (print type graph, flat, "
                                     "fractal, folded or none; order caller or callee; key "
                                     "function or address; value percent, period or "
                                     "count; a threshold; a print limit)")
            if not threshold_set:
                o.threshold = num
                threshold_set = True
            else:
                o.print_limit = int(num)
    return o


_NUMBER = re.compile(r"\s*[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?")


def _leading_number(tok: str) -> float | None:
    """strtod's reading of the start of ``tok`` (None where it reads nothing)."""
    m = _NUMBER.match(tok)
    return float(m.group(0)) if m else None


@dataclass(slots=True)
class Node:
    """One frame of a tree: ``loc`` the first location that reached it (its name),
    ``hit``/``count`` the period and samples of the chains that end here, ``cum``/``ccount``
    those of every chain through it."""

    loc: int
    hit: int = 0
    count: int = 0
    cum: int = 0
    ccount: int = 0
    children: dict[int, Node] = field(default_factory=dict)
    #: how many children it has (``children`` may keep only those a printout can reach)
    kids: int = 0


def frame_keys(locs: Locations, key: str) -> np.ndarray:
    """For each location, the id of what perf's ``match_chain`` compares: equal ids, one
    node.  ``function``: a symbol by (dso, start), an inlined call by its name (perf
    compares those by name), an unresolved address by its dso and address (whatever the
    level perftui's location has); ``address``: each location apart (perftui's locations
    are per symbol, so that is still per symbol)."""
    ids: dict[object, int] = {}
    out = np.empty(len(locs), np.int64)
    names, dso, start, inlined, dsos = locs.name, locs.dso, locs.start, locs.inlined, locs.dsos
    for i in range(len(locs)):
        n = names[i]
        if n is None:
            k: object = ("unres", dsos[dso[i]].name, start[i])
        elif key != "function":
            k = ("loc", i)
        else:
            k = ("inl", n) if i in inlined else (dso[i], start[i])
        out[i] = ids.setdefault(k, len(ids))
    return out


@dataclass
class RowGraphs:
    """The trees of a profile's rows (``roots[i]``: row ``i``'s, an empty root when no
    chain reached it), with what printing needs: the total period and each row's own
    period (``parent``: the children period with children, else the self period)."""

    roots: list[Node]
    total: int
    parent: list[int]
    options: CallGraphOptions
    children: bool
    #: per row, perf's ``callchain->max_depth`` (the longest chain appended to its tree)
    #: and the thread of its first sample
    depth: list[int] = field(default_factory=list)
    thread: list[int] = field(default_factory=list)


def row_graphs(sl: SampleLocs, pos: np.ndarray | slice, index: Mapping[str, np.ndarray],
               prof: Profile, opts: CallGraphOptions) -> RowGraphs:
    """The trees of every row of ``prof`` (made from the samples at ``pos`` of ``sl``)."""
    assert sl.stack is not None
    locs = sl.locs
    fkey = frame_keys(locs, opts.key)
    codes = prof.codes
    keys = prof.keys
    per_sample = [SORT_KEYS[k] for k in keys if not SORT_KEYS[k].per_location]
    loc_codes = [(j, codes.of(k)) for j, k in enumerate(keys) if SORT_KEYS[k].per_location]
    caller = opts.order_for(prof.children) == "caller"

    n, take = taker(pos, len(sl))

    def columns(lo: int, hi: int) -> list[np.ndarray]:
        p = take(lo, hi)
        cols = []
        for k in per_sample:
            if k.column == "comm":
                cols.append(sl.comm[p].astype(np.int64))
            else:
                assert k.column is not None
                cols.append(index[k.column][sl.rows[p]].astype(np.int64))
        assert sl.stack is not None
        cols.append(sl.stack[p].astype(np.int64))
        return cols

    ranges: list[int | None] = [k.code_range(sl.comm_names) for k in per_sample]
    ranges.append(len(sl.stack_starts) - 1)
    ranks = sl.rank  # (a row's first sample: perf's hist entry's, in processing order)
    g = group_samples(n, columns, lambda lo, hi: sl.period[take(lo, hi)], ranges,
                      None if ranks is None else lambda lo, hi: ranks[take(lo, hi)])
    n_rows = len(prof.rows)
    # a row's key: (its per-sample codes' id) * n_lk + (its location keys' id)
    ps_at = [j for j, k in enumerate(keys) if not SORT_KEYS[k].per_location]
    lk, lk_ids = _loc_key_ids([c for _j, c in loc_codes], len(locs))
    n_lk = max(len(lk_ids), 1)
    if ps_at and len(g.first):
        ps_table, g_ps, _first = _group(np.stack(g.cols[:-1], axis=1))
        ps_ids = {tuple(t): i for i, t in enumerate(ps_table.tolist())}
    else:
        g_ps, ps_ids = np.zeros(len(g.first), np.int64), {(): 0}
    g_ps = np.asarray(g_ps, np.int64).reshape(-1)
    want, got = [], []
    for i, r in enumerate(prof.rows):
        ps = ps_ids.get(tuple(r.key[j] for j in ps_at))
        lid = lk_ids.get(tuple(r.key[j] for j, _c in loc_codes))
        if ps is not None and lid is not None:
            want.append(ps * n_lk + lid)
            got.append(i)
    order = np.argsort(np.array(want, np.int64), kind="stable")
    row_keys = np.array(want, np.int64)[order]
    row_ids = np.array(got, np.int64)[order]
    g_stack = g.cols[-1].astype(np.int64) if g.cols else np.zeros(0, np.int64)
    ps_paths, r0 = paths(g_ps, g_stack, g.period, g.count, sl.stack_starts, sl.stack_locs,
                         np.asarray(lk, np.int64), n_lk, row_keys, row_ids, caller,
                         prof.children, n_rows)
    depth_a = np.zeros(n_rows, np.int64)
    np.maximum.at(depth_a, ps_paths.row, ps_paths.g_len[ps_paths.group] - ps_paths.start)
    # each row's first sample: of its groups, the one of lowest rank (without ranks a
    # group's rank is its first sample's position), then that group's first sample
    low = np.full(n_rows, np.iinfo(np.int64).max, np.int64)
    has = r0 >= 0
    np.minimum.at(low, r0[has], g.rank[has])
    np.minimum.at(low, ps_paths.row, g.rank[ps_paths.group])
    by_rank = np.argsort(g.rank, kind="stable")
    at = np.minimum(np.searchsorted(g.rank[by_rank], low), max(len(by_rank) - 1, 0))
    found = (low < np.iinfo(np.int64).max) & (len(by_rank) > 0)
    first_a = np.full(n_rows, n, np.int64)
    if len(by_rank):
        first_a[found] = g.first[by_rank[at[found]]]
    fractal = opts.mode == "fractal"
    least = int(prof.total_period * (opts.threshold / 100))
    trie = build_trie(ps_paths, sl.stack_locs, fkey, caller, n_rows, least,
                      opts.threshold / 100.0 if fractal else None)
    if fractal:  # a node's least is its parent's: ceil(children_hit * min%)
        par = trie.parent[n_rows:]
        need = np.ceil((trie.cum[par] - trie.hit[par]) * (opts.threshold / 100.0))
        wanted = np.concatenate([np.ones(n_rows, bool), trie.cum[n_rows:] >= need])
    else:
        wanted = trie.cum >= least
    roots = _nodes(trie, wanted)
    depth, first = depth_a.tolist(), first_a.tolist()
    parent = [r.children_period if prof.children else r.self_period for r in prof.rows]
    thread = _threads(sl, pos, index, first)
    return RowGraphs(roots, prof.total_period, parent, opts, prof.children, depth, thread)


def _nodes(t: Trie, wanted: np.ndarray) -> list[Node]:
    """The rows' roots, with the ``wanted`` nodes under them whose parents are there (the
    nodes a printout can reach: each is at least as heavy as its threshold asks)."""
    n = len(t.parent)
    kids = np.bincount(t.parent[t.n_rows:], minlength=n) if n > t.n_rows else \
        np.zeros(n, np.int64)
    keep = np.flatnonzero(wanted)
    keep = keep[keep >= t.n_rows]
    out: list[Node | None] = [None] * n
    roots = [Node(-1, 0, 0, int(c), int(cc), {}, int(k)) for c, cc, k in
             zip(t.cum[:t.n_rows].tolist(), t.ccount[:t.n_rows].tolist(),
                 kids[:t.n_rows].tolist(), strict=True)]
    out[:t.n_rows] = roots
    for i, par, loc, fk, hit, cnt, cum, cc, k in zip(
            keep.tolist(), t.parent[keep].tolist(), t.loc[keep].tolist(),
            t.fk[keep].tolist(), t.hit[keep].tolist(), t.count[keep].tolist(),
            t.cum[keep].tolist(), t.ccount[keep].tolist(), kids[keep].tolist(), strict=True):
        up = out[par]
        if up is not None:  # (ids are in level order: a parent is made before its children)
            node = out[i] = Node(loc, hit, cnt, cum, cc, {}, k)
            up.children[fk] = node
    return roots


def _loc_key_ids(cols: list[np.ndarray], n: int) -> tuple[list[int], dict[tuple[int, ...], int]]:
    """A dense id of each location's per-location key codes, and the ids by codes."""
    if not cols or not n:
        return [0] * n, {(): 0}
    # (ids in no particular order: only their equality is used)
    uniq, inv, _first = _group(np.stack(cols, axis=1))
    ids = {tuple(u): i for i, u in enumerate(uniq.tolist())}
    got: list[int] = inv.reshape(-1).tolist()
    return got, ids


def _threads(sl: SampleLocs, pos: np.ndarray | slice, index: Mapping[str, np.ndarray],
             first: list[int]) -> list[int]:
    """The thread (tid) of each row's first sample (``first``: its position in ``pos``;
    -1 where none)."""
    n = len(range(*pos.indices(len(sl)))) if isinstance(pos, slice) else len(pos)
    at = np.array(first, dtype=np.int64)
    ok = at < n
    out = np.full(len(at), -1, np.int64)
    if ok.any():
        p = (at[ok] + pos.indices(len(sl))[0]) if isinstance(pos, slice) else pos[at[ok]]
        out[ok] = index["tid"][sl.rows[p]]
    result: list[int] = out.tolist()
    return result


def for_rows(graphs: RowGraphs, prof: Profile, rows: list[ProfileRow]) -> RowGraphs:
    """The trees of ``prof``'s rows (``graphs`` is its) for other rows of the same keys,
    ``rows`` (an event group's table: each row's tree is its leader's, none where the
    leader has no such row)."""
    at = {r.key: i for i, r in enumerate(prof.rows)}
    pick = [at.get(r.key) for r in rows]

    def take(v: list[int], empty: int) -> list[int]:
        return [v[j] if j is not None else empty for j in pick]
    return RowGraphs([graphs.roots[j] if j is not None else Node(-1) for j in pick],
                     graphs.total, take(graphs.parent, 0), graphs.options, graphs.children,
                     take(graphs.depth, 0), take(graphs.thread, -1))


def order_callers_first(prof: Profile, graphs: RowGraphs,
                        selfs: Sequence[Sequence[int]] | None = None) -> list[int]:
    """perf's order of rows of equal children period with call graphs (``__hpp__sort_acc``):
    between rows of one thread, the caller above the callee, by their trees' depth (the
    deeper first in caller order, the shallower in callee order); between rows of two
    threads, the next field decides.  That is not a total order, so where such ties are
    the rows take the order of perf's output tree (:mod:`.outputtree`).  Rows and trees are
    reordered together.  ``selfs``: an event group's self periods per row (the leader's,
    then each member's, as ``__hpp__sort`` compares a group).  Returns the order
    (``new[i] = old[order[i]]``)."""
    n = len(prof.rows)
    if not prof.children or not n or not _depth_ties(prof, graphs):
        return list(range(n))
    rows = prof.rows
    child = [r.children_period for r in rows]
    thread, depth = graphs.thread, graphs.depth
    callee = graphs.options.order_for(True) == "callee"
    own = selfs if selfs is not None else [(r.self_period,) for r in rows]
    values = _sort_values(prof)
    after = dense_rank([(*(-x for x in o), *k)
                        for o, k in zip(own, values, strict=True)]).tolist()
    collapsed = sorted(range(n), key=_collapse_values(prof, values).__getitem__)
    order = acc_tree_order(collapsed, child, thread, depth, after, not callee)
    prof.rows = [rows[j] for j in order]
    for name in ("roots", "parent", "depth", "thread"):
        v = getattr(graphs, name)
        setattr(graphs, name, [v[j] for j in order])
    return order


def _depth_ties(prof: Profile, graphs: RowGraphs) -> bool:
    """Whether two rows of one thread tie on children period at different depths (the
    only case the output tree's order is not the rows' sorted order)."""
    seen: dict[tuple[int, int], int] = {}
    for j, r in enumerate(prof.rows):
        d = seen.setdefault((r.children_period, graphs.thread[j]), graphs.depth[j])
        if d != graphs.depth[j]:
            return True
    return False


def _sort_values(prof: Profile) -> list[tuple[object, ...]]:
    """Each row's sort keys as perf's ``se_sort`` compares them: the keys' ranks, but two
    unresolved symbols equal (``sort__sym_sort``'s ``cmp_null``)."""
    locs = prof.codes.locs
    key = np.array([r.key for r in prof.rows], dtype=np.int64).reshape(len(prof.rows), -1)
    loc = np.array([r.loc for r in prof.rows], dtype=np.int64)
    cols: list[list[object]] = []
    for i, k in enumerate(prof.keys):
        if k == "sym":
            cols.append([(0, n.encode("utf-8", "surrogateescape")) if n is not None
                         else (1, b"") for n in (locs.name[x] for x in loc.tolist())])
        else:
            cols.append(prof.codes.ranks(k, key[:, i], loc).tolist())
    return list(zip(*cols, strict=True)) if cols else [()] * len(prof.rows)


def _collapse_values(prof: Profile, values: list[tuple[object, ...]]
                     ) -> list[tuple[object, ...]]:
    """Each row's place in perf's collapsed tree: the keys' collapse comparisons (``sym``
    by dso short name, then a symbol's start and end before any unresolved address, by
    its value: ``sort__sym_cmp``; ``values``: :func:`_sort_values`'s)."""
    locs = prof.codes.locs
    if "sym" not in prof.keys:
        return values
    at = prof.keys.index("sym")
    out = []
    short: dict[int, bytes] = {}
    for r, v in zip(prof.rows, values, strict=True):
        x = r.loc
        di = locs.dso[x]
        d = short.get(di)
        if d is None:
            d = short[di] = locs.dsos[di].short_name.encode("utf-8", "surrogateescape")
        name = locs.name[x]
        sym = ((d, 0, locs.start[x], locs.end[x],
                name.encode("utf-8", "surrogateescape") if x in locs.inlined else b"")
               if name is not None else (d, 1, locs.start[x], 0, b""))
        out.append((*v[:at], sym, *v[at + 1:]))
    return out


def min_hit(graphs: RowGraphs, row: int) -> int:
    """perf's least cumulative period a branch needs to be shown in graph mode (of the
    total: ``u64 = total * (min_percent / 100)``); fractal mode's, of the row's own, is
    per node (:func:`fractal_min`)."""
    total = graphs.total if graphs.options.mode != "fractal" else graphs.parent[row]
    return int(total * (graphs.options.threshold / 100))


def fractal_min(children_hit: int, threshold: float) -> int:
    """fractal mode's least cumulative period of a node's child (``ceil(children_hit *
    min_percent)``)."""
    return math.ceil(children_hit * (threshold / 100.0))
