"""The ``sample_type`` fields: one table for the SAMPLE record and the ``sample_id`` trailer.

:data:`FIELDS` lists every field a SAMPLE can hold, in the order the kernel writes them
(docs/format.md, "SAMPLE").  From it, per attr and byte order, come both directions:
:class:`SampleLayout` (decode; runs of fixed-size fields compile to one ``struct`` each, and
the byte offsets the index reads with numpy) and :func:`encode_sample` (the writer's
packer).  The ``sample_id`` trailer of the other kernel records is the same fixed fields in
another order (:data:`TRAILER_ORDER`): :class:`TrailerLayout` decodes and encodes it.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from .constants import BRANCH_COUNTERS, BRANCH_HW_INDEX, ReadFormat, Sample

if TYPE_CHECKING:
    from .attr import EventAttr


class SampleTruncated(ValueError):
    """A sample's fields run past its ``header.size``."""


class Cursor:
    """Bounds-checked reads of one record's fields (raises :class:`SampleTruncated`)."""

    def __init__(self, buf: bytes | memoryview, pos: int, end: int, order: str) -> None:
        self.buf, self.pos, self.end, self.order = buf, pos, end, order

    def need(self, n: int, what: str) -> None:
        if n < 0 or self.pos + n > self.end:
            raise SampleTruncated(f"{what} past the end of the sample")

    def u64(self, what: str = "field") -> int:
        self.need(8, what)
        (v,) = struct.unpack_from(self.order + "Q", self.buf, self.pos)
        self.pos += 8
        return int(v)

    def u32(self, what: str = "field") -> int:
        self.need(4, what)
        (v,) = struct.unpack_from(self.order + "I", self.buf, self.pos)
        self.pos += 4
        return int(v)

    def u64s(self, n: int, what: str) -> list[int]:
        self.need(8 * n, what)
        v = list(struct.unpack_from(f"{self.order}{n}Q", self.buf, self.pos))
        self.pos += 8 * n
        return v

    def bytes(self, n: int, what: str) -> bytes:
        self.need(n, what)
        v = bytes(self.buf[self.pos:self.pos + n])
        self.pos += n
        return v


def _q(order: str, *vals: int) -> bytes:
    return struct.pack(f"{order}{len(vals)}Q", *vals)


# -- the variable-size fields: decode (cursor -> fields) and encode (fields -> bytes) --------
class Var:
    """A variable-size field.  ``decode`` returns the fields it yields (usually one)."""

    name: str

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:  # pragma: no cover
        raise NotImplementedError

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:  # pragma: no cover
        raise NotImplementedError


class ReadBlock(Var):
    """The read_format block: one value, or a group of members (docs/format.md)."""

    name = "read"

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        rf = lay.attr.read_format
        what = "READ block"
        out: dict[str, Any] = {}
        if rf & ReadFormat.GROUP:
            nr = c.u64(what)
            if nr * 8 > c.end - c.pos:
                raise SampleTruncated(f"READ group of {nr} members past the end of the sample")
            self._times(rf, c, out)
            members = []
            for _ in range(nr):
                m = {"value": c.u64(what)}
                self._member(rf, c, m)
                members.append(m)
            out["values"] = members
        else:
            out["value"] = c.u64(what)
            self._times(rf, c, out)
            self._member(rf, c, out)
        return {"read": out}

    @staticmethod
    def _times(rf: int, c: Cursor, out: dict[str, Any]) -> None:
        if rf & ReadFormat.TOTAL_TIME_ENABLED:
            out["time_enabled"] = c.u64("READ block")
        if rf & ReadFormat.TOTAL_TIME_RUNNING:
            out["time_running"] = c.u64("READ block")

    @staticmethod
    def _member(rf: int, c: Cursor, out: dict[str, Any]) -> None:
        if rf & ReadFormat.ID:
            out["id"] = c.u64("READ block")
        if rf & ReadFormat.LOST:
            out["lost"] = c.u64("READ block")

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        rf, o = lay.attr.read_format, lay.order
        r = s.get("read", {"value": 0})
        times = [r.get(k, 0) for f, k in ((ReadFormat.TOTAL_TIME_ENABLED, "time_enabled"),
                                          (ReadFormat.TOTAL_TIME_RUNNING, "time_running"))
                 if rf & f]

        def member(m: dict[str, Any]) -> list[int]:
            return [m.get(k, 0) for f, k in ((ReadFormat.ID, "id"), (ReadFormat.LOST, "lost"))
                    if rf & f]

        if rf & ReadFormat.GROUP:
            members = r.get("values", [])
            vals = [len(members), *times]
            for m in members:
                vals += [m.get("value", 0), *member(m)]
            return _q(o, *vals)
        return _q(o, r.get("value", 0), *times, *member(r))


class Callchain(Var):
    """u64 nr, then nr u64 ips (with context markers)."""

    name = "callchain"

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        nr = c.u64()
        return {"callchain": c.u64s(nr, f"callchain of {nr} entries")}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        cc = s.get("callchain", [])
        return _q(lay.order, len(cc), *cc)


class SizedBytes(Var):
    """A size (u32 for RAW, whose padding is part of the data; u64 for AUX), then the bytes."""

    def __init__(self, name: str, what: str, fmt: str) -> None:
        self.name, self.what, self.fmt = name, what, fmt

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        n = c.u32(f"{self.what} size") if self.fmt == "I" else c.u64()
        return {self.name: c.bytes(n, f"{self.what} data of {n} bytes")}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        data = s.get(self.name, b"")
        return struct.pack(lay.order + self.fmt, len(data)) + bytes(data)


class BranchStack(Var):
    """u64 nr, [u64 hw_idx], nr x {from, to, flags}, [nr u64 counters]."""

    name = "branch_stack"

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        bst = lay.attr.branch_sample_type
        nr = c.u64()
        br: dict[str, Any] = {}
        if bst & BRANCH_HW_INDEX:
            br["hw_idx"] = c.u64()
        flat = c.u64s(3 * nr, f"branch stack of {nr} entries")
        br["entries"] = [{"from": flat[i], "to": flat[i + 1], "flags": flat[i + 2]}
                         for i in range(0, len(flat), 3)]
        if bst & BRANCH_COUNTERS:
            br["counters"] = c.u64s(nr, "branch counters")
        return {"branch_stack": br}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        bst = lay.attr.branch_sample_type
        br = s.get("branch_stack", {"entries": []})
        ents = br.get("entries", [])
        vals = [len(ents)]
        if bst & BRANCH_HW_INDEX:
            vals.append(br.get("hw_idx", 0))
        for e in ents:
            vals += [e["from"], e["to"], e["flags"]]
        if bst & BRANCH_COUNTERS:
            vals += br.get("counters", [0] * len(ents))
        return _q(lay.order, *vals)


class Regs(Var):
    """u64 abi, then (abi != 0) one u64 per bit of the attr's register mask."""

    def __init__(self, name: str, mask: str) -> None:
        self.name, self.mask = name, mask

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        abi = c.u64()
        n = int(getattr(lay.attr, self.mask)).bit_count()
        regs = c.u64s(n, "user regs" if self.name == "regs_user" else "intr regs") if abi else []
        return {self.name: {"abi": abi, "regs": regs}}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        r = s.get(self.name, {"abi": 0, "regs": []})
        return _q(lay.order, r["abi"], *(r["regs"] if r["abi"] else []))


class StackUser(Var):
    """u64 size, then (size != 0) size bytes and u64 dyn_size."""

    name = "stack_user"

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        size = c.u64()
        stack: dict[str, Any] = {"size": size}
        if size:
            stack["data"] = c.bytes(size, f"user stack of {size} bytes")
            stack["dyn_size"] = c.u64()
        return {"stack_user": stack}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        su = s.get("stack_user", {"size": 0})
        if not su["size"]:
            return _q(lay.order, 0)
        return (_q(lay.order, su["size"]) + bytes(su["data"])
                + _q(lay.order, su.get("dyn_size", 0)))


class Weight(Var):
    """One u64: WEIGHT, or WEIGHT_STRUCT's {u32 var1_dw, u16 var2_w, u16 var3_w} read as a
    u64 (the kernel orders the members so the u64 view is the same in either byte order)."""

    name = "weight"

    def decode(self, lay: SampleLayout, c: Cursor) -> dict[str, Any]:
        w = c.u64()
        if not lay.attr.sample_type & Sample.WEIGHT_STRUCT:
            return {"weight": w}
        return {"weight": w & 0xFFFFFFFF,
                "weight_struct": {"var1_dw": w & 0xFFFFFFFF, "var2_w": w >> 32 & 0xFFFF,
                                  "var3_w": w >> 48 & 0xFFFF}}

    def encode(self, lay: SampleLayout, s: dict[str, Any]) -> bytes:
        ws = s.get("weight_struct") if lay.attr.sample_type & Sample.WEIGHT_STRUCT else None
        w = (ws["var1_dw"] | ws["var2_w"] << 32 | ws["var3_w"] << 48) if ws else s.get("weight", 0)
        return _q(lay.order, w)


# -- the table --------------------------------------------------------------------------------
@dataclass(frozen=True)
class Field:
    """One sample_type field: a fixed-size ``fmt`` with its ``names``, or a :class:`Var`."""

    bit: int
    names: tuple[str, ...] = ()
    fmt: str = ""
    var: Var | None = None


#: Every SAMPLE field in the order the kernel writes them (perf_output_sample()).
FIELDS: tuple[Field, ...] = (
    Field(Sample.IDENTIFIER, ("id",), "Q"),
    Field(Sample.IP, ("ip",), "Q"),
    Field(Sample.TID, ("pid", "tid"), "ii"),
    Field(Sample.TIME, ("time",), "Q"),
    Field(Sample.ADDR, ("addr",), "Q"),
    Field(Sample.ID, ("id",), "Q"),
    Field(Sample.STREAM_ID, ("stream_id",), "Q"),
    Field(Sample.CPU, ("cpu", "_res"), "II"),
    Field(Sample.PERIOD, ("period",), "Q"),
    Field(Sample.READ, var=ReadBlock()),
    Field(Sample.CALLCHAIN, var=Callchain()),
    Field(Sample.RAW, var=SizedBytes("raw", "RAW", "I")),
    Field(Sample.BRANCH_STACK, var=BranchStack()),
    Field(Sample.REGS_USER, var=Regs("regs_user", "sample_regs_user")),
    Field(Sample.STACK_USER, var=StackUser()),
    Field(Sample.WEIGHT | Sample.WEIGHT_STRUCT, var=Weight()),
    Field(Sample.DATA_SRC, ("data_src",), "Q"),
    Field(Sample.TRANSACTION, ("transaction",), "Q"),
    Field(Sample.REGS_INTR, var=Regs("regs_intr", "sample_regs_intr")),
    Field(Sample.PHYS_ADDR, ("phys_addr",), "Q"),
    Field(Sample.CGROUP, ("cgroup",), "Q"),
    Field(Sample.DATA_PAGE_SIZE, ("data_page_size",), "Q"),
    Field(Sample.CODE_PAGE_SIZE, ("code_page_size",), "Q"),
    Field(Sample.AUX, var=SizedBytes("aux", "AUX", "Q")),
)
_BY_BIT = {f.bit: f for f in FIELDS}
#: The sample_id trailer of non-sample kernel records: the same fields, in this order.
TRAILER_ORDER: tuple[Field, ...] = tuple(_BY_BIT[b] for b in (
    Sample.TID, Sample.TIME, Sample.ID, Sample.STREAM_ID, Sample.CPU, Sample.IDENTIFIER))


@dataclass(frozen=True)
class FixedRun:
    """Consecutive fixed-size fields, unpacked and packed by one ``struct``."""

    st: struct.Struct
    names: tuple[str, ...]
    offsets: dict[str, int]  # byte offset of each field from the run's start (first wins)

    def unpack(self, buf: bytes | memoryview, pos: int, out: dict[str, Any]) -> None:
        for name, v in zip(self.names, self.st.unpack_from(buf, pos), strict=True):
            out[name] = v
        out.pop("_res", None)

    def pack(self, values: dict[str, Any]) -> bytes:
        return self.st.pack(*(0 if n == "_res" else values.get(n, 0) for n in self.names))


def compile_fields(fields: tuple[Field, ...], sample_type: int, order: str
                   ) -> list[FixedRun | Var]:
    """The fields of ``sample_type`` in order, consecutive fixed ones merged into runs."""
    steps: list[FixedRun | Var] = []
    fmt = ""
    names: list[str] = []

    def close() -> None:
        nonlocal fmt, names
        if fmt:
            offsets: dict[str, int] = {}
            pos = 0
            for name, ch in zip(names, fmt, strict=True):
                offsets.setdefault(name, pos)
                pos += struct.calcsize("<" + ch)
            steps.append(FixedRun(struct.Struct(order + fmt), tuple(names), offsets))
        fmt, names = "", []

    for f in fields:
        if not sample_type & f.bit:
            continue
        if f.var is not None:
            close()
            steps.append(f.var)
        else:
            fmt += f.fmt
            names += f.names
    close()
    return steps


class TrailerLayout:
    """The sample_id trailer of one attr: size, field offsets, decode and encode."""

    def __init__(self, sample_type: int, sample_id_all: bool, order: str = "<") -> None:
        steps = compile_fields(TRAILER_ORDER, sample_type, order) if sample_id_all else []
        self.run: FixedRun | None = steps[0] if steps else None  # type: ignore[assignment]
        self.size = self.run.st.size if self.run else 0
        self.offsets: dict[str, int] = dict(self.run.offsets) if self.run else {}

    def decode(self, raw: bytes | memoryview) -> dict[str, int]:
        """The trailer at the end of record ``raw`` ({} without one or when too short)."""
        out: dict[str, int] = {}
        if self.run is not None and len(raw) >= 8 + self.size:
            self.run.unpack(raw, len(raw) - self.size, out)
        return out

    def encode(self, sid: dict[str, int] | None) -> bytes:
        """Trailer bytes from its fields (missing ones, or all with ``None``, are 0)."""
        return self.run.pack(sid or {}) if self.run is not None else b""


class SampleLayout:
    """How to decode and encode the samples of one attr; built once, used for every sample.

    ``offsets`` are the byte offsets (from the record start) of the fixed fields before the
    first variable one, which the index gathers with numpy; ``fixed_size`` their total size.
    """

    def __init__(self, attr: EventAttr, order: str) -> None:
        self.attr = attr
        self.order = order
        self.sample_type = st = attr.sample_type
        rf = attr.read_format
        # the shape of the READ block, for the numpy gatherers that step over it
        self.read_group = bool(rf & ReadFormat.GROUP)
        self.read_enabled = bool(rf & ReadFormat.TOTAL_TIME_ENABLED)
        self.read_running = bool(rf & ReadFormat.TOTAL_TIME_RUNNING)
        self.read_id = bool(rf & ReadFormat.ID)
        self.read_lost = bool(rf & ReadFormat.LOST)
        self.steps = compile_fields(FIELDS, st, order)
        head = self.steps[0] if self.steps and isinstance(self.steps[0], FixedRun) else None
        self.fixed_size = head.st.size if head else 0
        self.offsets = {k: 8 + v for k, v in head.offsets.items()} if head else {}

    def decode(self, buf: bytes | memoryview, size: int | None = None) -> dict[str, Any]:
        """Decode the sample at the start of ``buf`` (header included) into a dict; ``_end``
        is where its fields end."""
        c = Cursor(buf, 8, len(buf) if size is None else size, self.order)
        out: dict[str, Any] = {}
        for step in self.steps:
            if isinstance(step, FixedRun):
                c.need(step.st.size, "fixed sample fields" if c.pos == 8 else "field")
                step.unpack(buf, c.pos, out)
                c.pos += step.st.size
            else:
                out.update(step.decode(self, c))
        out["_end"] = c.pos
        return out

    def encode(self, s: dict[str, Any]) -> bytes:
        """The body (after the 8-byte header) of a sample with fields ``s``."""
        return b"".join(step.pack(s) if isinstance(step, FixedRun) else step.encode(self, s)
                        for step in self.steps)


def encode_sample(attr: EventAttr, order: str, s: dict[str, Any]) -> bytes:
    """Encode the body (after the 8-byte header) of a sample; the writer's half of decode."""
    return SampleLayout(attr, order).encode(s)


__all__ = ["FIELDS", "TRAILER_ORDER", "SampleLayout", "SampleTruncated", "TrailerLayout",
           "encode_sample"]
