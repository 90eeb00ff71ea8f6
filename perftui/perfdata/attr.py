"""``perf_event_attr``: parse any size >= 64, either byte order (docs/format.md, "Attrs")."""

from __future__ import annotations

from dataclasses import dataclass, field

from .constants import (
    ATTR_FLAG_BITS,
    ATTR_TYPE_NAMES,
    FLAG_FREQ,
    FLAG_SAMPLE_ID_ALL,
    HW_EVENT_NAMES,
    SW_EVENT_NAMES,
    Sample,
)
from .sample import TrailerLayout
from .schemas import layouts

ATTR_KNOWN_SIZE = 136
ATTR_MIN_SIZE = 64
_FIELDS = ("type", "config", "sample_period", "sample_type", "read_format", "flags",
           "wakeup_events", "bp_type", "config1", "config2", "branch_sample_type",
           "sample_regs_user", "sample_stack_user", "clockid", "sample_regs_intr",
           "aux_watermark", "sample_max_stack", "aux_sample_size", "aux_action", "sig_data",
           "config3")


def reverse_bits64(v: int) -> int:
    return int(f"{v:064b}"[::-1], 2)


def flags_from_big_endian(v: int) -> int:
    """Turn a big-endian bitfield word (read as a BE u64) into little-endian bit allocation.

    BE compilers allocate bitfields from the most significant bit: reversing the 64
    bits puts every one-bit field in place; the two-bit ``precise_ip`` then has its
    two bits swapped (docs/format.md, "Byte order").
    """
    r = reverse_bits64(v)
    b15, b16 = r >> 15 & 1, r >> 16 & 1
    return (r & ~(3 << 15)) | (b16 << 15) | (b15 << 16)


def flags_to_big_endian(v: int) -> int:
    """Inverse of :func:`flags_from_big_endian`."""
    b15, b16 = v >> 15 & 1, v >> 16 & 1
    v = (v & ~(3 << 15)) | (b16 << 15) | (b15 << 16)
    return reverse_bits64(v)


@dataclass
class EventAttr:
    """One event of a recording: its attr, ids and (when the recording says) name."""

    type: int = 1
    size: int = 128
    config: int = 0
    sample_period: int = 0
    sample_type: int = 0
    read_format: int = 0
    flags: int = 0
    wakeup_events: int = 0
    bp_type: int = 0
    config1: int = 0
    config2: int = 0
    branch_sample_type: int = 0
    sample_regs_user: int = 0
    sample_stack_user: int = 0
    clockid: int = 0
    sample_regs_intr: int = 0
    aux_watermark: int = 0
    sample_max_stack: int = 0
    aux_sample_size: int = 0
    aux_action: int = 0
    sig_data: int = 0
    config3: int = 0
    ids: list[int] = field(default_factory=list)
    name: str | None = None

    # -- derived layout facts -------------------------------------------------
    @property
    def sample_id_all(self) -> bool:
        return bool(self.flags & FLAG_SAMPLE_ID_ALL)

    @property
    def freq(self) -> bool:
        return bool(self.flags & FLAG_FREQ)

    def trailer(self, order: str = "<") -> TrailerLayout:
        """The sample_id trailer of this attr's non-sample kernel records."""
        return TrailerLayout(self.sample_type, self.sample_id_all, order)

    @property
    def id_hdr_size(self) -> int:
        """Bytes of the sample_id trailer on non-sample kernel records (0 without it)."""
        return self.trailer().size

    def trailer_offsets(self) -> dict[str, int]:
        """Byte offset of each trailer field from the trailer's start (empty without one)."""
        return self.trailer().offsets

    @property
    def id_pos(self) -> int:
        """u64 index (after the header) of the id in a SAMPLE, or -1."""
        st = self.sample_type
        if st & Sample.IDENTIFIER:
            return 0
        if not st & Sample.ID:
            return -1
        return sum(1 for b in (Sample.IP, Sample.TID, Sample.TIME, Sample.ADDR) if st & b)

    @property
    def is_pos(self) -> int:
        """u64 index from the end of a non-sample record of the trailer's id, or -1."""
        st = self.sample_type
        if st & Sample.IDENTIFIER:
            return 1
        if not st & Sample.ID:
            return -1
        return 1 + sum(1 for b in (Sample.CPU, Sample.STREAM_ID) if st & b)

    def flag(self, name: str) -> int:
        for bit, fname, width in ATTR_FLAG_BITS:
            if fname == name:
                return self.flags >> bit & ((1 << width) - 1)
        raise KeyError(name)

    def modifiers(self) -> str:
        """perf's event modifiers (``ppH``, ``u``, ...): evsel__add_modifiers() of perf."""
        ek, eu, eh = (self.flag(n) for n in ("exclude_kernel", "exclude_user", "exclude_hv"))
        out = ""
        guest_default = False
        if ek or eu or eh:
            out += ("" if ek else "k") + ("" if eu else "u") + ("" if eh else "h")
            guest_default = True
        precise = self.flag("precise_ip")
        if precise:
            out += "p" * precise
            guest_default = True
        if self.flag("exclude_host") or bool(self.flag("exclude_guest")) == guest_default:
            out += ("" if self.flag("exclude_host") else "H")
            out += ("" if self.flag("exclude_guest") else "G")
        return out

    def default_name(self) -> str:
        """A perf-like event name from type/config when the recording names none."""
        if self.type == 1:
            base = SW_EVENT_NAMES.get(self.config, f"software:{self.config:#x}")
        elif self.type == 0:
            base = HW_EVENT_NAMES.get(self.config & 0xFF, f"hardware:{self.config:#x}")
        elif self.type == 4:
            base = f"r{self.config:x}"
        else:
            kind = ATTR_TYPE_NAMES.get(self.type, f"pmu{self.type}")
            base = f"{kind}:{self.config:#x}"
        mods = self.modifiers()
        return f"{base}:{mods}" if mods else base

    @property
    def display_name(self) -> str:
        return self.name or self.default_name()

    def as_dict(self) -> dict[str, int]:
        d = {k: getattr(self, k) for k in _FIELDS}
        d["size"] = self.size
        return d


def parse_attr(buf: bytes | memoryview, order: str) -> EventAttr:
    """Decode one attr (its own ``size`` bytes, or more: the tail is ignored)."""
    raw = bytes(buf[:ATTR_KNOWN_SIZE])
    if len(raw) < ATTR_MIN_SIZE:
        raise ValueError(f"attr of {len(raw)} bytes, need at least {ATTR_MIN_SIZE}")
    c = layouts(order).attr.parse(raw.ljust(ATTR_KNOWN_SIZE, b"\0"))
    size = c.size or ATTR_MIN_SIZE
    if size < ATTR_KNOWN_SIZE:
        # zero whatever lies past the writer's struct (it belongs to the next field/entry)
        c = layouts(order).attr.parse(raw[:size].ljust(ATTR_KNOWN_SIZE, b"\0"))
    flags = flags_from_big_endian(c.flags) if order == ">" else c.flags
    kw = {k: c[k] for k in _FIELDS}
    kw["flags"] = flags
    return EventAttr(size=size, **kw)


def build_attr(attr: EventAttr, order: str) -> bytes:
    """Encode ``attr`` in ``attr.size`` bytes (zero bytes past 136 when larger)."""
    d = attr.as_dict()
    if order == ">":
        d["flags"] = flags_to_big_endian(d["flags"])
    raw: bytes = layouts(order).attr.build(d)
    if attr.size <= ATTR_KNOWN_SIZE:
        return raw[: attr.size]
    return raw + b"\0" * (attr.size - ATTR_KNOWN_SIZE)
