"""PERF_RECORD_SAMPLE decoding with struct unpackers precompiled per attr (FORMAT.md §9)."""

from __future__ import annotations

import struct
from typing import Any

from .attr import EventAttr
from .constants import BRANCH_COUNTERS, BRANCH_HW_INDEX, ReadFormat, Sample

# Fixed-size fields before the first variable-length one, in record order.
_FIXED = (
    (Sample.IDENTIFIER, "Q", ("id",)),
    (Sample.IP, "Q", ("ip",)),
    (Sample.TID, "ii", ("pid", "tid")),
    (Sample.TIME, "Q", ("time",)),
    (Sample.ADDR, "Q", ("addr",)),
    (Sample.ID, "Q", ("id",)),
    (Sample.STREAM_ID, "Q", ("stream_id",)),
    (Sample.CPU, "II", ("cpu", "_res")),
    (Sample.PERIOD, "Q", ("period",)),
)
# Trailing u64 fields after the variable ones, in record order (AUX comes last, apart).
_TAIL_U64 = (
    (Sample.DATA_SRC, "data_src"),
    (Sample.TRANSACTION, "transaction"),
)


class SampleTruncated(ValueError):
    """A sample's fields run past its ``header.size``."""


class SampleLayout:
    """How to decode the samples of one attr; built once, used for every sample."""

    def __init__(self, attr: EventAttr, order: str) -> None:
        self.attr = attr
        self.order = order
        st = attr.sample_type
        self.sample_type = st
        fmt = order
        names: list[str] = []
        # byte offset (from the record start) of fields the index reads directly
        self.offsets: dict[str, int] = {}
        pos = 8
        for bit, f, fnames in _FIXED:
            if st & bit:
                for name, ch in zip(fnames, f, strict=True):
                    if name not in self.offsets:
                        self.offsets[name] = pos
                    pos += struct.calcsize("<" + ch)
                fmt += f
                names.extend(fnames)
        self.fixed = struct.Struct(fmt)
        self.fixed_names = names
        self.fixed_size = self.fixed.size
        self.u64 = struct.Struct(order + "Q")
        self.u32 = struct.Struct(order + "I")
        rf = attr.read_format
        self.read_group = bool(rf & ReadFormat.GROUP)
        self.read_enabled = bool(rf & ReadFormat.TOTAL_TIME_ENABLED)
        self.read_running = bool(rf & ReadFormat.TOTAL_TIME_RUNNING)
        self.read_id = bool(rf & ReadFormat.ID)
        self.read_lost = bool(rf & ReadFormat.LOST)
        self.n_regs_user = bin(attr.sample_regs_user).count("1")
        self.n_regs_intr = bin(attr.sample_regs_intr).count("1")
        self.hw_index = bool(attr.branch_sample_type & BRANCH_HW_INDEX)
        self.branch_counters = bool(attr.branch_sample_type & BRANCH_COUNTERS)

    def _read_block(self, buf: bytes | memoryview, pos: int, end: int) -> tuple[dict, int]:
        q = self.u64.unpack_from
        out: dict[str, Any] = {}

        def take() -> int:
            nonlocal pos
            if pos + 8 > end:
                raise SampleTruncated("READ block past the end of the sample")
            v = q(buf, pos)[0]
            pos += 8
            return v

        if self.read_group:
            nr = take()
            if nr * 8 > end - pos:
                raise SampleTruncated(f"READ group of {nr} members past the end of the sample")
            if self.read_enabled:
                out["time_enabled"] = take()
            if self.read_running:
                out["time_running"] = take()
            members = []
            for _ in range(nr):
                m = {"value": take()}
                if self.read_id:
                    m["id"] = take()
                if self.read_lost:
                    m["lost"] = take()
                members.append(m)
            out["values"] = members
        else:
            out["value"] = take()
            if self.read_enabled:
                out["time_enabled"] = take()
            if self.read_running:
                out["time_running"] = take()
            if self.read_id:
                out["id"] = take()
            if self.read_lost:
                out["lost"] = take()
        return out, pos

    def decode(self, buf: bytes | memoryview, size: int | None = None) -> dict[str, Any]:
        """Decode the sample at the start of ``buf`` (header included) into a dict."""
        end = len(buf) if size is None else size
        st = self.sample_type
        if 8 + self.fixed_size > end:
            raise SampleTruncated("fixed sample fields past the end of the sample")
        vals = self.fixed.unpack_from(buf, 8)
        out: dict[str, Any] = dict(zip(self.fixed_names, vals, strict=True))
        out.pop("_res", None)
        pos = 8 + self.fixed_size
        q = self.u64.unpack_from
        order = self.order

        def need(n: int, what: str) -> None:
            if n < 0 or pos + n > end:
                raise SampleTruncated(f"{what} past the end of the sample")

        def u64() -> int:
            nonlocal pos
            need(8, "field")
            v = q(buf, pos)[0]
            pos += 8
            return v

        def u64s(n: int, what: str) -> list[int]:
            nonlocal pos
            need(8 * n, what)
            v = list(struct.unpack_from(f"{order}{n}Q", buf, pos))
            pos += 8 * n
            return v

        if st & Sample.READ:
            out["read"], pos = self._read_block(buf, pos, end)
        if st & Sample.CALLCHAIN:
            nr = u64()
            out["callchain"] = u64s(nr, f"callchain of {nr} entries")
        if st & Sample.RAW:
            need(4, "RAW size")
            rsize = self.u32.unpack_from(buf, pos)[0]
            pos += 4
            need(rsize, f"RAW data of {rsize} bytes")
            out["raw"] = bytes(buf[pos:pos + rsize])
            pos += rsize
        if st & Sample.BRANCH_STACK:
            nr = u64()
            br: dict[str, Any] = {}
            if self.hw_index:
                br["hw_idx"] = u64()
            flat = u64s(3 * nr, f"branch stack of {nr} entries")
            br["entries"] = [
                {"from": flat[i], "to": flat[i + 1], "flags": flat[i + 2]}
                for i in range(0, len(flat), 3)
            ]
            if self.branch_counters:
                br["counters"] = u64s(nr, "branch counters")
            out["branch_stack"] = br
        if st & Sample.REGS_USER:
            abi = u64()
            out["regs_user"] = {"abi": abi, "regs": u64s(self.n_regs_user, "user regs")
                                if abi else []}
        if st & Sample.STACK_USER:
            ssize = u64()
            stack: dict[str, Any] = {"size": ssize}
            if ssize:
                need(ssize, f"user stack of {ssize} bytes")
                stack["data"] = bytes(buf[pos:pos + ssize])
                pos += ssize
                stack["dyn_size"] = u64()
            out["stack_user"] = stack
        if st & Sample.WEIGHT_STRUCT:
            w = u64()
            out["weight"] = w & 0xFFFFFFFF
            out["weight_struct"] = {"var1_dw": w & 0xFFFFFFFF, "var2_w": w >> 32 & 0xFFFF,
                                    "var3_w": w >> 48 & 0xFFFF}
        elif st & Sample.WEIGHT:
            out["weight"] = u64()
        for bit, name in _TAIL_U64:
            if st & bit:
                out[name] = u64()
        if st & Sample.REGS_INTR:
            abi = u64()
            out["regs_intr"] = {"abi": abi, "regs": u64s(self.n_regs_intr, "intr regs")
                                if abi else []}
        if st & Sample.PHYS_ADDR:
            out["phys_addr"] = u64()
        if st & Sample.CGROUP:
            out["cgroup"] = u64()
        if st & Sample.DATA_PAGE_SIZE:
            out["data_page_size"] = u64()
        if st & Sample.CODE_PAGE_SIZE:
            out["code_page_size"] = u64()
        if st & Sample.AUX:
            asize = u64()
            need(asize, f"AUX data of {asize} bytes")
            out["aux"] = bytes(buf[pos:pos + asize])
            pos += asize
        out["_end"] = pos
        return out


def encode_sample(attr: EventAttr, order: str, s: dict[str, Any]) -> bytes:
    """Encode the body (after the 8-byte header) of a sample; the writer's half of decode."""
    st = attr.sample_type
    p = struct.pack
    parts: list[bytes] = []
    q = order + "Q"
    for bit, f, fnames in _FIXED:
        if st & bit:
            vals = [s.get(n, 0) if n != "_res" else 0 for n in fnames]
            parts.append(p(order + f, *vals))
    if st & Sample.READ:
        r = s.get("read", {"value": 0})
        rf = attr.read_format
        if rf & ReadFormat.GROUP:
            members = r.get("values", [])
            parts.append(p(q, len(members)))
            if rf & ReadFormat.TOTAL_TIME_ENABLED:
                parts.append(p(q, r.get("time_enabled", 0)))
            if rf & ReadFormat.TOTAL_TIME_RUNNING:
                parts.append(p(q, r.get("time_running", 0)))
            for m in members:
                parts.append(p(q, m.get("value", 0)))
                if rf & ReadFormat.ID:
                    parts.append(p(q, m.get("id", 0)))
                if rf & ReadFormat.LOST:
                    parts.append(p(q, m.get("lost", 0)))
        else:
            parts.append(p(q, r.get("value", 0)))
            for flag, key in ((ReadFormat.TOTAL_TIME_ENABLED, "time_enabled"),
                              (ReadFormat.TOTAL_TIME_RUNNING, "time_running"),
                              (ReadFormat.ID, "id"), (ReadFormat.LOST, "lost")):
                if rf & flag:
                    parts.append(p(q, r.get(key, 0)))
    if st & Sample.CALLCHAIN:
        cc = s.get("callchain", [])
        parts.append(p(f"{order}Q{len(cc)}Q", len(cc), *cc))
    if st & Sample.RAW:
        raw = s.get("raw", b"")
        parts.append(p(order + "I", len(raw)) + raw)
    if st & Sample.BRANCH_STACK:
        br = s.get("branch_stack", {"entries": []})
        ents = br.get("entries", [])
        parts.append(p(q, len(ents)))
        if attr.branch_sample_type & BRANCH_HW_INDEX:
            parts.append(p(q, br.get("hw_idx", 0)))
        for e in ents:
            parts.append(p(order + "3Q", e["from"], e["to"], e["flags"]))
        if attr.branch_sample_type & BRANCH_COUNTERS:
            cnt = br.get("counters", [0] * len(ents))
            parts.append(p(f"{order}{len(cnt)}Q", *cnt))
    if st & Sample.REGS_USER:
        ru = s.get("regs_user", {"abi": 0, "regs": []})
        parts.append(p(q, ru["abi"]))
        if ru["abi"]:
            parts.append(p(f"{order}{len(ru['regs'])}Q", *ru["regs"]))
    if st & Sample.STACK_USER:
        su = s.get("stack_user", {"size": 0})
        parts.append(p(q, su["size"]))
        if su["size"]:
            parts.append(su["data"])
            parts.append(p(q, su.get("dyn_size", 0)))
    if st & Sample.WEIGHT_STRUCT:
        ws = s.get("weight_struct")
        w = (ws["var1_dw"] | ws["var2_w"] << 32 | ws["var3_w"] << 48) if ws else s.get("weight", 0)
        parts.append(p(q, w))
    elif st & Sample.WEIGHT:
        parts.append(p(q, s.get("weight", 0)))
    for bit, name in _TAIL_U64:
        if st & bit:
            parts.append(p(q, s.get(name, 0)))
    if st & Sample.REGS_INTR:
        ri = s.get("regs_intr", {"abi": 0, "regs": []})
        parts.append(p(q, ri["abi"]))
        if ri["abi"]:
            parts.append(p(f"{order}{len(ri['regs'])}Q", *ri["regs"]))
    for bit, name in ((Sample.PHYS_ADDR, "phys_addr"), (Sample.CGROUP, "cgroup"),
                      (Sample.DATA_PAGE_SIZE, "data_page_size"),
                      (Sample.CODE_PAGE_SIZE, "code_page_size")):
        if st & bit:
            parts.append(p(q, s.get(name, 0)))
    if st & Sample.AUX:
        aux = s.get("aux", b"")
        parts.append(p(q, len(aux)) + aux)
    return b"".join(parts)
