"""Feature sections (FORMAT.md §11): decode each payload, keep unknown ones as bytes."""

from __future__ import annotations

import struct
from typing import Any

from .attr import parse_attr
from .constants import Feature, feature_name
from .schemas import layouts


def cstring(b: bytes | memoryview) -> str:
    """A NUL-terminated string from a recording, decoded without ever failing."""
    raw = bytes(b)
    return raw.split(b"\0", 1)[0].decode("utf-8", "backslashreplace")


def hstr(s: Any) -> str:
    """A parsed perf_header_string as text."""
    return cstring(s.data)


class _Cursor:
    """Bounds-checked little reader over a feature payload."""

    def __init__(self, buf: bytes, order: str) -> None:
        self.buf, self.pos, self.order = buf, 0, order

    def take(self, fmt: str) -> tuple:
        st = struct.Struct(self.order + fmt)
        if self.pos + st.size > len(self.buf):
            raise ValueError("payload ends early")
        v = st.unpack_from(self.buf, self.pos)
        self.pos += st.size
        return v

    def u32(self) -> int:
        return self.take("I")[0]

    def u64(self) -> int:
        return self.take("Q")[0]

    def hstring(self) -> str:
        n = self.u32()
        if n > len(self.buf) - self.pos:
            raise ValueError(f"string of {n} bytes past the end of the payload")
        s = cstring(self.buf[self.pos:self.pos + n])
        self.pos += n
        return s

    def strlist(self) -> list[str]:
        n = self.u32()
        if n * 4 > len(self.buf) - self.pos:
            raise ValueError(f"list of {n} strings past the end of the payload")
        return [self.hstring() for _ in range(n)]

    @property
    def left(self) -> int:
        return len(self.buf) - self.pos


def parse_build_ids(buf: bytes, order: str) -> list[dict[str, Any]]:
    """BUILD_ID feature: back-to-back build-id records (type 0, FORMAT.md §11.3)."""
    hdr = struct.Struct(order + "IHH")
    out = []
    pos = 0
    while pos + 8 <= len(buf):
        _t, misc, size = hdr.unpack_from(buf, pos)
        if size < 36 or pos + size > len(buf):
            break
        out.append(decode_build_id_body(buf[pos:pos + size], misc, order))
        pos += size
    return out


def decode_build_id_body(rec: bytes | memoryview, misc: int, order: str) -> dict[str, Any]:
    """A HEADER_BUILD_ID record or BUILD_ID feature entry (header included)."""
    pid = struct.unpack_from(order + "i", rec, 8)[0]
    bid = bytes(rec[12:32])
    size = rec[32] if misc & 0x8000 else 20
    if not misc & 0x8000:
        # without the size flag, trailing zero bytes are padding (perf prints 20 bytes)
        size = 20
    return {"pid": pid, "misc": misc, "cpumode": misc & 7, "build_id": bid[:size].hex(),
            "filename": cstring(rec[36:])}


def parse_event_desc(buf: bytes, order: str) -> list[dict[str, Any]]:
    c = _Cursor(buf, order)
    nr, attr_size = c.u32(), c.u32()
    if attr_size < 64 or nr * attr_size > len(buf):
        raise ValueError(f"EVENT_DESC with {nr} events of {attr_size} bytes")
    out = []
    for _ in range(nr):
        if c.left < attr_size:
            raise ValueError("EVENT_DESC attr past the end")
        attr = parse_attr(buf[c.pos:c.pos + attr_size], order)
        c.pos += attr_size
        nr_ids = c.u32()
        name = c.hstring()
        if nr_ids * 8 > c.left:
            raise ValueError(f"EVENT_DESC with {nr_ids} ids past the end")
        ids = list(c.take(f"{nr_ids}Q"))
        out.append({"attr": attr, "name": name, "ids": ids})
    return out


def parse_cpu_topology(buf: bytes, order: str, nr_cpus_avail: int | None) -> dict[str, Any]:
    c = _Cursor(buf, order)
    out: dict[str, Any] = {"core_siblings": c.strlist(), "thread_siblings": c.strlist()}
    if nr_cpus_avail and c.left >= 8 * nr_cpus_avail:
        out["cpus"] = [dict(zip(("core_id", "socket_id"), c.take("II"), strict=True))
                       for _ in range(nr_cpus_avail)]
        if c.left >= 4:
            out["die_siblings"] = c.strlist()
            if c.left >= 4 * nr_cpus_avail:
                out["die_ids"] = list(c.take(f"{nr_cpus_avail}I"))
    return out


def parse_pmu_caps(buf: bytes, order: str) -> list[dict[str, Any]]:
    c = _Cursor(buf, order)
    out = []
    for _ in range(c.u32()):
        caps = {}
        for _ in range(c.u32()):
            k = c.hstring()
            caps[k] = c.hstring()
        out.append({"pmu": c.hstring(), "caps": caps})
    return out


def parse_cpu_domain_info(buf: bytes, order: str, nr_cpus: int | None) -> dict[str, Any]:
    c = _Cursor(buf, order)
    version, max_domains = c.u32(), c.u32()
    cpus = []
    while c.left >= 8:
        cpu, nr = c.u32(), c.u32()
        doms = []
        for _ in range(nr):
            d: dict[str, Any] = {"domain": c.u32()}
            if version >= 17:
                d["name"] = c.hstring()
            d["cpumask"] = c.hstring()
            d["cpulist"] = c.hstring()
            doms.append(d)
        cpus.append({"cpu": cpu, "domains": doms})
    return {"version": version, "max_sched_domains": max_domains, "cpus": cpus}


def parse_feature(feat: int, buf: bytes, order: str, ctx: dict[int, Any]) -> Any:
    """Decode feature ``feat``; raises ValueError on a malformed payload.

    ``ctx`` holds features decoded so far (NRCPUS sizes CPU_TOPOLOGY).
    """
    L = layouts(order)
    F = L.feature
    c = _Cursor(buf, order)
    if feat in (Feature.HOSTNAME, Feature.OSRELEASE, Feature.VERSION, Feature.ARCH,
                Feature.CPUDESC, Feature.CPUID):
        return c.hstring()
    if feat == Feature.CMDLINE:
        return c.strlist()
    if feat == Feature.NRCPUS:
        p = F.nrcpus.parse(buf)
        return {"nr_cpus_avail": p.nr_cpus_avail, "nr_cpus_online": p.nr_cpus_online}
    if feat == Feature.TOTAL_MEM:
        return F.total_mem.parse(buf).kb
    if feat == Feature.EVENT_DESC:
        return parse_event_desc(buf, order)
    if feat == Feature.BUILD_ID:
        return parse_build_ids(buf, order)
    if feat == Feature.CPU_TOPOLOGY:
        nr = (ctx.get(Feature.NRCPUS) or {}).get("nr_cpus_avail")
        return parse_cpu_topology(buf, order, nr)
    if feat == Feature.NUMA_TOPOLOGY:
        return [{"node": n.node, "mem_total_kb": n.mem_total, "mem_free_kb": n.mem_free,
                 "cpus": hstr(n.cpus)} for n in F.numa_topology.parse(buf)]
    if feat in (Feature.BRANCH_STACK, Feature.STAT):
        return True
    if feat == Feature.PMU_MAPPINGS:
        return [{"type": m.type, "name": hstr(m.name)} for m in F.pmu_mappings.parse(buf)]
    if feat == Feature.GROUP_DESC:
        return [{"name": hstr(g.name), "leader_idx": g.leader_idx, "nr_members": g.nr_members}
                for g in F.group_desc.parse(buf)]
    if feat == Feature.AUXTRACE:
        return [dict(offset=e.offset, size=e.size) for e in F.auxtrace.parse(buf)]
    if feat == Feature.CACHE:
        p = F.cache.parse(buf)
        return {"version": p.version, "entries": [
            {"level": e.level, "line_size": e.line_size, "sets": e.sets, "ways": e.ways,
             "type": hstr(e.type), "size": hstr(e.size), "shared_cpu_list": hstr(e.map)}
            for e in p.entries]}
    if feat == Feature.SAMPLE_TIME:
        p = F.sample_time.parse(buf)
        return {"first": p.first, "last": p.last}
    if feat == Feature.MEM_TOPOLOGY:
        p = F.mem_topology.parse(buf)
        return {"version": p.version, "block_size": p.block_size,
                "nodes": [{"node": n.node, "size": n.size, "nbits": n.nbits,
                           "words": list(n.words)} for n in p.nodes]}
    if feat == Feature.CLOCKID:
        return F.clockid.parse(buf).resolution_ns
    if feat == Feature.DIR_FORMAT:
        return F.dir_format.parse(buf).version
    if feat == Feature.BPF_PROG_INFO:
        return [{"info_len": p.info_len, "data_len": p.data_len}
                for p in F.bpf_prog_info.parse(buf)]
    if feat == Feature.BPF_BTF:
        return [{"id": p.id, "data_size": p.data_size} for p in F.bpf_btf.parse(buf)]
    if feat == Feature.COMPRESSED:
        p = F.compressed.parse(buf)
        return {k: p[k] for k in ("version", "type", "level", "ratio", "mmap_len")}
    if feat == Feature.CPU_PMU_CAPS:
        return {hstr(p.name): hstr(p.value) for p in F.cpu_pmu_caps.parse(buf)}
    if feat == Feature.CLOCK_DATA:
        p = F.clock_data.parse(buf)
        return {k: p[k] for k in ("version", "clockid", "wall_clock_ns", "clockid_ns")}
    if feat == Feature.HYBRID_TOPOLOGY:
        return [{"pmu_name": hstr(p.pmu_name), "cpus": hstr(p.cpus)}
                for p in F.hybrid_topology.parse(buf)]
    if feat == Feature.PMU_CAPS:
        return parse_pmu_caps(buf, order)
    if feat == Feature.CPU_DOMAIN_INFO:
        return parse_cpu_domain_info(buf, order, None)
    if feat == Feature.TRACING_DATA:
        return {"size": len(buf)}
    return bytes(buf)


def feature_summary(feat: int, value: Any) -> str:
    """A one-line, human description of a decoded feature (for ``info``)."""
    name = feature_name(feat)
    if isinstance(value, str):
        return f"{name}: {value}"
    if isinstance(value, list):
        return f"{name}: {len(value)} entries"
    if isinstance(value, bytes):
        return f"{name}: {len(value)} raw bytes"
    return f"{name}: {value}"


def parse_tracing_data(buf: bytes) -> dict[int, str]:
    """Tracepoint id -> ``system:name`` from a tracing-data blob (trace-event-read.c)."""
    if buf[:10] != b"\x17\x08\x44tracing":
        raise ValueError("no tracing-data magic")
    pos = 10
    end = buf.index(b"\0", pos)  # version string
    pos = end + 1
    if pos + 6 > len(buf):
        raise ValueError("tracing data ends early")
    order = ">" if buf[pos] else "<"
    pos += 2 + 4  # endianness, long size, page size

    def take(fmt: str) -> int:
        nonlocal pos
        st = struct.Struct(order + fmt)
        if pos + st.size > len(buf):
            raise ValueError("tracing data ends early")
        (v,) = st.unpack_from(buf, pos)
        pos += st.size
        return v

    def skip_named(name: bytes) -> None:
        nonlocal pos
        if buf[pos:pos + len(name)] != name:
            raise ValueError(f"expected {name!r} in tracing data")
        pos += len(name)
        n = take("Q")
        pos += n

    skip_named(b"header_page\0")
    skip_named(b"header_event\0")
    for _ in range(take("I")):  # ftrace formats
        pos += take("Q")
    out: dict[int, str] = {}
    for _ in range(take("I")):  # event systems
        end = buf.index(b"\0", pos)
        system = buf[pos:end].decode("utf-8", "backslashreplace")
        pos = end + 1
        for _ in range(take("I")):
            n = take("Q")
            text = buf[pos:pos + n].decode("utf-8", "backslashreplace")
            pos += n
            name = id_ = None
            for line in text.splitlines():
                if line.startswith("name: "):
                    name = line[6:].strip()
                elif line.startswith("ID: "):
                    try:
                        id_ = int(line[4:].strip())
                    except ValueError:
                        id_ = None
            if name is not None and id_ is not None:
                out[id_] = f"{system}:{name}"
    return out
