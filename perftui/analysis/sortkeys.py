"""Sort keys as descriptors: one entry per key, as perf keeps each in a ``struct
sort_entry`` (tools/perf/util/sort.c: its compare, header, width and text).

A key says where its integer *code* comes from — a column of the sample (``comm``,
``pid``/``tid``, ``cpu``: :attr:`SortKey.column`) or the sample's location (``dso``,
``sym``, ``module``, ``section``: :meth:`SortKey.location_value`, interned per location
by :class:`~.keycodes.KeyCodes`) — and, from a code and a row's location, its JSON value,
the value that compares across recordings (``perf diff``), perf's text, and the order perf
prints rows in when their overheads tie.  Every view reads this table: the text report and
its JSON, the diff, the browser's tables.  A new key is one entry in :data:`SORT_KEYS`
(plus its tests).
"""

from __future__ import annotations

from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:  # (the command line reads the table before numpy is imported)
    from ..symbols.naming.locations import Locations
    from .keycodes import KeyCodes

NO_VALUE = "-"  # a location with no module section


class SortKeyError(ValueError):
    """An unknown sort key."""


@dataclass
class Names:
    """What the words of a key need besides its code: the locations, the thread names of
    the comm codes, and each thread's last name (perf's ``Pid:Command``)."""

    locs: Locations
    comm_name: Callable[[int], str]  # comm id -> name
    thread_comm: Callable[[int], str]  # tid -> the thread's last name


@dataclass
class LocationBatch:
    """Locations ``lo:hi`` of a table, as the location keys read them (each dso's short
    name and module worked out once)."""

    dso: list[int]
    name: list[str | None]
    start: list[int]
    end: list[int]
    section: list[str | None]
    short: dict[int, str]  # dso index -> its short name
    module: dict[int, str]  # dso index -> its module name, else its short name
    inlined: set[int] = field(default_factory=set)  # the batch's inlined calls (0-based)
    #: each location's srcline and srcfile (a table split by them: analysis/srclinelocs)
    srcline: list[str] | None = None
    srcfile: list[str] | None = None


def _bytes(s: str) -> bytes:
    """strcmp order: the UTF-8 bytes."""
    return s.encode("utf-8", "surrogateescape")


@dataclass(frozen=True)
class SortKey:
    """One sort key.  ``header``: the browser's and the JSON's heading; ``text_header``:
    perf report --stdio's (``header`` when empty); ``fixed_width``: a width perf gives the
    column whatever its cells; ``browser_width``: the widest the browser's column gets;
    ``padded_last``: perf pads the cells to the column's width even in the last column;
    ``label``/``wide_label``: the diff browser's narrow and wide headings."""

    name: str
    header: str
    text_header: str = ""
    aliases: tuple[str, ...] = ()
    fixed_width: int | None = None
    browser_width: int = 24
    padded_last: bool = False
    label: str = ""
    wide_label: str = ""
    #: the sample column a per-sample key's code is ("comm", "tid", "cpu"); None: the
    #: code is of the sample's location (:meth:`location_value`)
    column: str | None = None
    #: how rows are ranked by this key: by the code's value itself ("value"), by what each
    #: code names ("code"), or by what each row's location names ("loc")
    rank_by: str = "code"
    #: a key only the synthesized ``offcpu-time`` event has (its column is made with it)
    offcpu_only: bool = False

    @property
    def stdio_header(self) -> str:
        return self.text_header or self.header

    @property
    def per_location(self) -> bool:
        return self.column is None

    def code_range(self, names: Sequence[str]) -> int | None:
        """How many codes a per-sample key can take (``[0, n)``), None when unknown
        (``names``: the comm names)."""
        return None

    def location_value(self, b: LocationBatch, i: int) -> Hashable:
        """What this key compares of location ``i`` of a batch (equal values: one code)."""
        raise NotImplementedError(self.name)

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        """The JSON value of a row's key."""
        raise NotImplementedError(self.name)

    def ident(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        """What identifies the row across recordings (``perf diff`` pairs rows by it)."""
        return self.value(codes, names, code, loc)

    def ident_json(self, ident: Any, locs: Locations, loc: int) -> Any:
        """The JSON value of a compared row's key (``ident``: its :meth:`ident`)."""
        return ident

    def text(self, names: Names, value: Any, loc: int) -> str:
        """The key as perf prints it (``value``: its :meth:`value` or :meth:`ident`)."""
        return str(value)

    def order(self, value: Any, locs: Locations, loc: int) -> Any:
        """What perf compares when overheads tie, as a Python sort key (``value``: the
        key's value or ident; ``loc``: the row's location)."""
        return _bytes(value) if isinstance(value, str) else value

    def json_extra(self, names: Names, loc: int) -> dict[str, Any]:
        """More JSON fields a row with this key carries."""
        return {}


@dataclass(frozen=True)
class CommKey(SortKey):
    """``comm``: the thread's name at the sample (perf's ``sort_comm``)."""

    column: str | None = "comm"

    def code_range(self, names: Sequence[str]) -> int | None:
        return len(names)

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        return names.comm_name(code)


@dataclass(frozen=True)
class NumberKey(SortKey):
    """A number of the sample, compared by value (``pid``/``tid``: the thread; ``cpu``)."""

    column: str | None = "tid"
    rank_by: str = "value"

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        return code


@dataclass(frozen=True)
class ThreadKey(NumberKey):
    """``pid``: perf's thread (its tid), printed ``tid:comm`` with the thread's last name
    (``sort_thread``: ``%7d:%-*.*s``)."""

    def text(self, names: Names, value: Any, loc: int) -> str:
        return f"{value:>7}:{names.thread_comm(value)}"


@dataclass(frozen=True)
class CpuKey(NumberKey):
    """``cpu``: perf's ``%*.*d`` in a column 3 wide (``007``, ``-001``)."""

    def text(self, names: Names, value: Any, loc: int) -> str:
        return ("-" if value < 0 else "") + str(abs(value)).zfill(3)


@dataclass(frozen=True)
class StateKey(NumberKey):
    """``state``: how an off-CPU thread left the CPU, prev_state's first letter as the
    kernel prints it (``S`` asleep, ``D`` uninterruptible, ``R``/``R+`` preempted, ...);
    its codes index :data:`~.offcpu.STATES`."""

    column: str | None = "state"
    offcpu_only: bool = True

    def code_range(self, names: Sequence[str]) -> int | None:
        from .offcpu import STATES

        return len(STATES)

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        from .offcpu import STATES

        return STATES[code] if 0 <= code < len(STATES) else "?"


@dataclass(frozen=True)
class LocationNameKey(SortKey):
    """A name of the sample's location: its dso's short name, its module, its section."""

    of: str = "dso"  # "dso", "module" or "section"

    def location_value(self, b: LocationBatch, i: int) -> Hashable:
        if self.of == "dso":
            return b.short[b.dso[i]]
        if self.of == "module":
            return b.module[b.dso[i]]
        return b.section[i] or NO_VALUE

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        return codes.names[self.name][code]

    def order(self, value: Any, locs: Locations, loc: int) -> Any:
        """By strcmp, but for ``dso`` a sample with no map (``[unknown]``) after every
        dso (sort.c's ``_sort__dso_cmp``: ``cmp_null`` puts the missing dso last)."""
        from ..symbols.naming.locations import UNKNOWN_DSO

        if self.of == "dso" and value == UNKNOWN_DSO:
            return (1, b"")
        return (0, _bytes(value))


@dataclass(frozen=True)
class SourceKey(SortKey):
    """``srcline`` (``d.c:7``) and ``srcfile`` (``d.c``): perf's text of the row's
    address (``sort__srcline_cmp``, ``sort__srcfile_cmp``: a ``strcmp`` of it), read
    from a location table split by source line (:mod:`.srclinelocs`; empty elsewhere)."""

    of: str = "srcline"

    def location_value(self, b: LocationBatch, i: int) -> Hashable:
        texts = b.srcline if self.of == "srcline" else b.srcfile
        return texts[i] if texts is not None else ""

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        return codes.names[self.name][code]


@dataclass(frozen=True)
class SymbolKey(SortKey):
    """``sym``: perf compares resolved symbols by dso short name and ``[start, end)``, an
    inlined call (which keeps the range of the symbol it is inlined into) by its name
    too, an unresolved address by itself (``sort__sym_cmp``); printed ``[k] name``,
    ``[.] name (inlined)`` or ``[.] 0x...``; ordered by name (strcmp), unresolved
    addresses after every name, by value."""

    rank_by: str = "loc"

    def location_value(self, b: LocationBatch, i: int) -> Hashable:
        if b.name[i] is not None:
            if i in b.inlined:
                return (b.short[b.dso[i]], b.start[i], b.end[i], b.name[i])
            return (b.short[b.dso[i]], b.start[i], b.end[i])
        return ("", b.start[i], -1)

    def value(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        return names.locs.label(loc)

    def ident(self, codes: KeyCodes, names: Names, code: int, loc: int) -> Any:
        """A symbol by its name (two builds of a program compare); every unresolved
        address alike (perf's ``sort__sym_sort`` treats two missing symbols as equal)."""
        return names.locs.name[loc]

    def ident_json(self, ident: Any, locs: Locations, loc: int) -> Any:
        return locs.label(loc)

    def text(self, names: Names, value: Any, loc: int) -> str:
        locs = names.locs
        level = "k" if locs.dsos[locs.dso[loc]].kernel else "."
        return f"[{level}] {locs.label(loc)}"

    def order(self, value: Any, locs: Locations, loc: int) -> Any:
        n = locs.name[loc]
        return (0, _bytes(n), 0) if n is not None else (1, b"", locs.start[loc])

    def json_extra(self, names: Names, loc: int) -> dict[str, Any]:
        locs = names.locs
        return {"kernel": locs.dsos[locs.dso[loc]].kernel}


#: Every sort key, with perf's names (``module`` and ``section`` are perftui's own), in
#: the order help texts list them.
SORT_KEYS: dict[str, SortKey] = {k.name: k for k in (
    CommKey("comm", "Command", padded_last=True, browser_width=16, label="comm",
            wide_label="command"),
    ThreadKey("pid", "Pid:Command", "    Pid:Command", padded_last=True,
              label="pid", wide_label="pid:command", column="tid"),
    NumberKey("tid", "Tid", browser_width=7, label="tid", wide_label="tid",
              column="tid"),
    LocationNameKey("dso", "Shared Object", aliases=("shared_object",), padded_last=True,
                    label="dso", wide_label="shared object", of="dso"),
    SymbolKey("sym", "Symbol", aliases=("symbol",), browser_width=48, label="symbol",
              wide_label="symbol"),
    CpuKey("cpu", "CPU", fixed_width=3, browser_width=3, label="cpu", wide_label="cpu",
           column="cpu"),
    LocationNameKey("module", "Module", browser_width=20, label="module",
                    wide_label="module", of="module"),
    LocationNameKey("section", "Section", browser_width=20, label="section",
                    wide_label="section", of="section"),
    StateKey("state", "State", browser_width=5, label="state", wide_label="state"),
    SourceKey("srcline", "Source:Line", browser_width=32,
              label="srcline", wide_label="source:line", of="srcline"),
    SourceKey("srcfile", "Source File", browser_width=24,
              label="srcfile", wide_label="source file", of="srcfile"),
)}
#: the keys every event has (the browser's; ``state`` is the off-CPU event's alone)
EVENT_KEYS = tuple(k for k, d in SORT_KEYS.items() if not d.offcpu_only)
DEFAULT_SORT = ("comm", "dso", "sym")
DEFAULT_DIFF_SORT = ("dso", "sym")
#: a dso column's least width when a row names no symbol (perf's
#: hists__set_unres_dso_col_len: an address's 16 digits)
UNRESOLVED_DSO_WIDTH = 16
_ALIASES = {a: k.name for k in SORT_KEYS.values() for a in k.aliases}


def sort_key(name: str) -> SortKey:
    """The descriptor of a key (KeyError when there is none)."""
    return SORT_KEYS[name]


#: the keys the browser's tables take
BROWSER_KEYS = EVENT_KEYS


def parse_sort(text: str, offcpu: bool = False) -> tuple[str, ...]:
    """``"comm,dso,sym"`` -> the keys (perf's aliases accepted: ``symbol``,
    ``shared_object``; ``state`` only with ``offcpu``); raises SortKeyError."""
    keys: list[str] = []
    for k in text.split(","):
        k = k.strip().lower()
        if not k:
            continue
        k = _ALIASES.get(k, k)
        if k not in SORT_KEYS or (SORT_KEYS[k].offcpu_only and not offcpu):
            if k in SORT_KEYS:
                raise SortKeyError(f"sort key {k!r} is only for --event offcpu-time")
            raise SortKeyError(f"unknown sort key {k!r} (keys: {', '.join(EVENT_KEYS)})")
        if k not in keys:
            keys.append(k)
    if not keys:
        raise SortKeyError("no sort key given")
    return tuple(keys)
