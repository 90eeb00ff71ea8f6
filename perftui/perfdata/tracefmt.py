"""Tracepoint formats from a recording's own tracing data (the kernel's ``format`` files that
perf copies into the TRACING_DATA feature), and the fields of many tracepoint samples' RAW
data read by those formats, with numpy: no offset is assumed, as kernels moved them (2.6's
``common_lock_depth`` shifted every field by 4; ``prev_state`` was a ``long``, some a
``unsigned int``)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from construct import ConstructError

from .schemas import TRACING_DATA, cstring

_FIELD = re.compile(r"^\s*field:(?P<decl>[^;]*);\s*offset:(?P<off>\d+);\s*size:(?P<size>\d+);"
                    r"(?:\s*signed:(?P<signed>\d+);)?")
_FLAG = re.compile(r"\{\s*(0x[0-9a-fA-F]+|\d+)\s*,\s*\"([^\"]*)\"\s*\}")
_MAX_FIELDS = 256  # a format with more is cut there (a kernel's largest has ~40)


@dataclass(frozen=True)
class TraceField:
    """One field of a tracepoint's record: its C declaration's name, where and how big."""

    name: str
    offset: int
    size: int
    signed: bool
    array: bool  # a fixed array (``char prev_comm[16]``) or a ``__data_loc`` string


@dataclass
class TraceFormat:
    """One tracepoint's format file, as parsed: its id, ``system:name``, fields and print
    format; ``problems`` holds what could not be read (lines are skipped, never guessed)."""

    id: int
    name: str
    fields: dict[str, TraceField] = field(default_factory=dict)
    print_fmt: str = ""
    problems: list[str] = field(default_factory=list)

    def flags(self, fld: str) -> list[tuple[int, str]]:
        """The ``__print_flags`` table the print format gives ``REC->fld`` (``(bit,
        letter)`` in order; sched_switch's ``prev_state`` letters S, D, T, ...), or []."""
        at = self.print_fmt.find(f"__print_flags(REC->{fld}")
        if at < 0:
            return []
        end = self.print_fmt.find(")", self.print_fmt.find('"|"', at))
        table = self.print_fmt[at:end if end > at else len(self.print_fmt)]
        return [(int(v, 0), s) for v, s in _FLAG.findall(table)]


def parse_format(text: str, system: str) -> TraceFormat | None:
    """A format file's text; None when it names no event or no ID."""
    name = ident = None
    fmt = TraceFormat(-1, "")
    for line in text.splitlines():
        if line.startswith("name: "):
            name = line[6:].strip()
        elif line.startswith("ID: "):
            try:
                ident = int(line[4:].strip())
            except ValueError:
                fmt.problems.append(f"ID {line[4:].strip()[:40]!r} is not a number")
        elif line.startswith("print fmt: "):
            fmt.print_fmt = line[11:]
        elif line.lstrip().startswith("field:"):
            if len(fmt.fields) >= _MAX_FIELDS:
                fmt.problems.append(f"more than {_MAX_FIELDS} fields: the rest skipped")
                break
            f = _parse_field(line)
            if f is None:
                fmt.problems.append(f"field line {line.strip()[:60]!r} unreadable")
            else:
                fmt.fields[f.name] = f
    if name is None or ident is None:
        return None
    fmt.id, fmt.name = ident, f"{system}:{name}"
    return fmt


def _parse_field(line: str) -> TraceField | None:
    m = _FIELD.match(line)
    if m is None:
        return None
    decl = m["decl"].strip()
    array = "[" in decl or decl.startswith("__data_loc")
    words = re.sub(r"\[.*?\]", "", decl).split()
    if not words or not re.fullmatch(r"[A-Za-z_]\w*", words[-1]):
        return None
    size = int(m["size"])
    signed = m["signed"] == "1" if m["signed"] is not None else \
        not any(w in ("unsigned", "u8", "u16", "u32", "u64", "size_t") for w in words[:-1])
    return TraceField(words[-1], int(m["off"]), size, signed, array)


def parse_formats(buf: bytes) -> dict[int, TraceFormat]:
    """Every tracepoint format in a tracing-data blob (trace-event-read.c's layout), by id;
    raises ValueError when the blob itself is malformed."""
    try:
        blob = TRACING_DATA.parse(buf)
    except ConstructError as e:
        raise ValueError(" ".join(str(e).split())) from None
    out: dict[int, TraceFormat] = {}
    for system in blob.systems:
        sysname = cstring(system.name)
        for text in system.formats:
            fmt = parse_format(text.decode("utf-8", "backslashreplace"), sysname)
            if fmt is not None:
                out[fmt.id] = fmt
    return out


def flag_letters(value: int, table: list[tuple[int, str]]) -> str:
    """A ``__print_flags`` value as the kernel's print format shows it: the letters of its
    set bits (``|`` between), ``R`` when none is set, ``+`` after when a bit above the
    table's is set (sched_switch's preempted ``R+``)."""
    letters = "|".join(s for b, s in table if value & b) or "R"
    top = max((b for b, _ in table), default=0)
    return letters + "+" if top and value & ~((top << 1) - 1) else letters
