"""Decode one record's body into a dict of fields, on demand (docs/format.md, "Records").

Kernel records and perf's own records are read with the construct declarations of
``schemas.py``, samples with the field table of ``sample.py``.
"""

from __future__ import annotations

import struct
from typing import Any

from construct import ConstructError, StreamError

from .attr import EventAttr, parse_attr
from .constants import (
    KMOD_SEC_MAP,
    USER_TYPE_START,
    Misc,
    RecordType,
    type_name,
)
from .sample import SampleLayout, SampleTruncated
from .schemas import cstring, layouts
from .type83 import kmod_layout


def decode_kmod_sec_map(raw: bytes, order: str) -> dict[str, Any]:
    """The RFC's KMOD_SEC_MAP; accepts the gap-byte layout and the picture."""
    lay = kmod_layout(raw, order)
    if lay is None:
        raise ValueError("KMOD_SEC_MAP strings do not fit the record")
    snl, fstart, _fnl = lay
    rfc = fstart == 44 + snl + 1
    R = layouts(order).records
    c = (R.KMOD_SEC_MAP if rfc else R.KMOD_SEC_MAP_PICTURE).parse(raw[8:])
    return {"pid": c.pid, "start": c.start, "len": c.len, "pgoff": c.pgoff,
            "sec_name_len": c.sec_name_len, "filename_len": c.filename_len,
            "section": cstring(c.section), "filename": cstring(c.filename),
            "layout": "rfc" if rfc else "picture"}


_STRINGS = {"filename", "comm", "name", "path", "msg"}


def plain_reason(e: Exception) -> str:
    """Why a body did not decode, in one plain sentence (never a library's own text)."""
    if isinstance(e, SampleTruncated):
        return str(e)
    if isinstance(e, ConstructError):
        path = str(getattr(e, "path", "") or "")
        field = path.rsplit("->", 1)[-1].strip() if "->" in path else ""
        if isinstance(e, StreamError) or "stream read less" in str(e):
            if field in _STRINGS and "expected 1," in str(e):  # read byte by byte to a NUL
                return f"{field} is not NUL-terminated within the record"
            return f"{field or 'a field'} runs past the end of the record"
        return f"{field or 'a field'} has a value that cannot be decoded"
    return "a field runs past the end of the record"


class RecordDecoder:
    """Decodes records of one recording: needs its byte order and attrs."""

    def __init__(self, order: str, attrs: list[EventAttr]) -> None:
        self.order = order
        self.L = layouts(order)
        self.set_attrs(attrs)

    def set_attrs(self, attrs: list[EventAttr]) -> None:
        self.attrs = attrs
        self.sample_layouts = [SampleLayout(a, self.order) for a in attrs]
        self.trailers = [a.trailer(self.order) for a in attrs]

    def decode(self, raw: bytes, attr_idx: int, type_code: int | None = None) -> dict[str, Any]:
        """Fields of record ``raw`` (header included).  Raises ValueError when malformed."""
        h = self.L.record_header.parse(raw)
        t, misc, size = h.type, h.misc, h.size
        code = t if type_code is None else type_code
        out: dict[str, Any] = {"type": type_name(code), "misc": misc, "size": size}
        try:
            body = self._body(code, raw, misc, attr_idx)
            for k in [k for k in body if k in out]:  # never let a body field hide the header
                body[f"body_{k}"] = body.pop(k)
            out.update(body)
        except (ConstructError, struct.error, SampleTruncated, IndexError) as e:
            raise ValueError(f"{type_name(code)} record: {plain_reason(e)}") from None
        return out

    def _body(self, t: int, raw: bytes, misc: int, attr_idx: int) -> dict[str, Any]:
        R = self.L.records
        attr = self.attrs[attr_idx] if 0 <= attr_idx < len(self.attrs) else None
        if t == RecordType.SAMPLE:
            if attr is None:
                return {"cpumode": misc & Misc.CPUMODE_MASK}
            s = self.sample_layouts[attr_idx].decode(raw)
            s.pop("_end", None)
            s["cpumode"] = misc & Misc.CPUMODE_MASK
            s["event"] = attr.display_name
            return s
        if t == KMOD_SEC_MAP:
            return decode_kmod_sec_map(raw, self.order)
        if t < USER_TYPE_START:
            body_end = len(raw) - (attr.id_hdr_size if attr else 0)
            body = raw[8:max(8, body_end)]
            name = type_name(t)
            schema = getattr(R, name, None)
            out: dict[str, Any] = {}
            if schema is not None:
                out = {k: v for k, v in schema.parse(body).items() if not k.startswith("_")}
            else:
                out["body"] = body.hex()
            if t == RecordType.MMAP2:
                u = out.pop("u")
                if misc & Misc.MMAP_BUILD_ID:
                    b = R.mmap2_build_id.parse(u)
                    out["build_id"] = b.build_id[: min(b.build_id_size, 20)].hex()
                else:
                    out.update({k: v for k, v in R.mmap2_inode.parse(u).items()
                                if not k.startswith("_")})
            if t == RecordType.NAMESPACES:
                out["namespaces"] = [{"dev": n.dev, "ino": n.ino} for n in out["namespaces"]]
            if t == RecordType.CALLCHAIN_DEFERRED:
                out["ips"] = list(out["ips"])
            if t == RecordType.TEXT_POKE:
                out["old_bytes"] = out["old_bytes"].hex()
                out["new_bytes"] = out["new_bytes"].hex()
            if t == RecordType.BPF_EVENT:
                out["tag"] = out["tag"].hex()
            if t == RecordType.READ:
                out["values"] = out["values"].hex()
            for k in ("filename", "comm", "name", "path"):
                if k in out and isinstance(out[k], bytes):
                    out[k] = cstring(out[k])
            if attr is not None:
                out["sample_id"] = self.trailers[attr_idx].decode(raw)
            return out
        return self._user(t, raw, misc)

    def _user(self, t: int, raw: bytes, misc: int) -> dict[str, Any]:
        R = self.L.records
        body = raw[8:]
        if t == RecordType.HEADER_ATTR:
            if len(body) < 8:  # the schema peeks at the attr's size: it must be there
                raise ValueError("HEADER_ATTR record: attr runs past the end of the record")
            c = R.HEADER_ATTR.parse(body)
            d: dict[str, Any] = parse_attr(c.attr, self.order).as_dict()
            d["ids"] = list(c.ids)
            return {"attr": d}
        if t == RecordType.HEADER_BUILD_ID:
            return dict(self.L.build_id_record.parse(raw))
        if t == RecordType.HEADER_FEATURE:
            c = R.HEADER_FEATURE.parse(body)
            return {"feat_id": c.feat_id, "payload_size": len(c.data)}
        if t == RecordType.COMPRESSED:
            return {"compressed_size": len(body)}
        if t == RecordType.COMPRESSED2:
            c = R.COMPRESSED2.parse(body)
            return {"data_size": c.data_size, "compressed_size": len(c.data)}
        if t == RecordType.THREAD_MAP:
            c = R.THREAD_MAP.parse(body)
            return {"threads": [{"pid": e.pid, "comm": cstring(e.comm)} for e in c.entries]}
        if t == RecordType.ID_INDEX:
            c = R.ID_INDEX.parse(body)
            return {"entries": [{k: e[k] for k in ("id", "idx", "cpu", "tid")}
                                for e in c.entries]}
        if t == RecordType.CPU_MAP:
            return self._cpu_map(body)
        if t == RecordType.EVENT_UPDATE:
            c = R.EVENT_UPDATE.parse(body)
            d = {"update_type": c.update_type, "id": c.id}
            if c.update_type in (0, 2):
                d["unit" if c.update_type == 0 else "name"] = cstring(c.data)
            elif c.update_type == 1 and len(c.data) >= 8:
                d["scale"] = self.L.f64.parse(c.data[:8])
            else:
                d["data"] = bytes(c.data).hex()
            return d
        if t == RecordType.TIME_CONV:
            c = R.TIME_CONV.parse(body)
            d = {"time_shift": c.time_shift, "time_mult": c.time_mult, "time_zero": c.time_zero}
            if len(c.ext) >= 18:
                e = R.time_conv_ext.parse(c.ext)
                d.update({k: e[k] for k in ("time_cycles", "time_mask", "cap_user_time_zero",
                                            "cap_user_time_short")})
            return d
        if t == RecordType.HEADER_TRACING_DATA:
            return {"tracing_data_size": R.HEADER_TRACING_DATA.parse(body).size}
        if t == RecordType.AUXTRACE_ERROR:
            c = R.AUXTRACE_ERROR.parse(body)
            d = {k: c[k] for k in ("error_type", "code", "cpu", "pid", "tid", "fmt", "ip",
                                   "time")}
            d["msg"] = cstring(c.msg)
            return d
        if t == RecordType.HEADER_EVENT_TYPE:
            c = R.HEADER_EVENT_TYPE.parse(body)
            return {"event_id": c.event_id, "name": cstring(c.name)}
        if t == RecordType.BPF_METADATA:
            c = R.BPF_METADATA.parse(body)
            return {"prog_name": cstring(c.prog_name), "nr_entries": c.nr_entries}
        schema = getattr(R, type_name(t), None)
        if schema is not None:
            c = schema.parse(body)
            return {k: (list(v) if isinstance(v, list) else v) for k, v in c.items()
                    if not k.startswith("_")}
        return {"body_size": len(body)}

    def _cpu_map(self, body: bytes) -> dict[str, Any]:
        c = self.L.records.CPU_MAP.parse(body)
        d = c.data
        if c.map_type == 0:
            return {"map_type": "cpus", "cpus": list(d.cpus)}
        if c.map_type == 1:
            bits = 8 * d.long_size
            return {"map_type": "mask",
                    "cpus": [w * bits + b for w, v in enumerate(d.mask) for b in range(bits)
                             if v >> b & 1]}
        if c.map_type == 2:
            return {"map_type": "range", "any_cpu": d.any_cpu,
                    "cpus": list(range(d.start_cpu, d.end_cpu + 1))}
        return {"map_type": c.map_type}
