"""construct declarations of the perf.data layouts, built once per byte order.

These declare the file header, attrs, feature payloads and the record bodies
(docs/format.md).  The same declaration parses and builds: the decoder reads the rare
structures with them and the writer builds every structure with them.  The hot path (the
record walk, the index, samples) uses precompiled ``struct`` unpackers instead (``walk.py``,
``index.py`` and the sample field table of ``sample.py``).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace
from typing import Any

from construct import (
    Adapter,
    Array,
    Bytes,
    BytesInteger,
    Check,
    Computed,
    Const,
    Construct,
    Container,
    Float64b,
    Float64l,
    GreedyBytes,
    GreedyRange,
    If,
    IfThenElse,
    Int8ub,
    Int16sb,
    Int16sl,
    Int16ub,
    Int16ul,
    Int32sb,
    Int32sl,
    Int32ub,
    Int32ul,
    Int64ub,
    Int64ul,
    ListContainer,
    NullTerminated,
    Optional,
    Padding,
    Peek,
    Prefixed,
    PrefixedArray,
    Rebuild,
    Struct,
    Switch,
    len_,
    this,
)
from construct.core import stream_size

NAME_ALIGN = 64  # perf_header_string lengths are rounded up to this


def cstring(b: bytes | memoryview) -> str:
    """A NUL-terminated string from a recording, decoded without ever failing."""
    raw = bytes(b)
    return raw.split(b"\0", 1)[0].decode("utf-8", "backslashreplace")


def to_bytes(s: str | bytes) -> bytes:
    return s.encode() if isinstance(s, str) else bytes(s)


def plain(obj: Any) -> Any:
    """A parsed value as plain dicts and lists (construct's private ``_`` keys dropped)."""
    if isinstance(obj, Container):
        return {k: plain(v) for k, v in obj.items() if not k.startswith("_")}
    if isinstance(obj, ListContainer):
        return [plain(v) for v in obj]
    return obj


def left(ctx: Any) -> int:
    """Bytes left in the stream being parsed (for layouts that end with optional parts)."""
    io = ctx._io
    return int(stream_size(io) - io.tell())


class HeaderString(Adapter):  # type: ignore[misc]
    """perf_header_string as text: u32 len, then len bytes (strlen + 1 rounded up to 64,
    NUL-padded).  Builds from ``str`` or ``bytes``."""

    def _decode(self, obj: Any, ctx: Any, path: str) -> str:
        return cstring(obj.data)

    def _encode(self, obj: str | bytes, ctx: Any, path: str) -> dict[str, Any]:
        raw = to_bytes(obj)
        n = (len(raw) + 1 + NAME_ALIGN - 1) // NAME_ALIGN * NAME_ALIGN
        return {"len": n, "data": raw.ljust(n, b"\0")}


class BuildId(Adapter):  # type: ignore[misc]
    """A build-id entry (record 67, or type 0 in the BUILD_ID feature) as a dict: pid, misc,
    cpumode, build_id (hex), filename.  Built with the filename padded to 64 as perf does."""

    def __init__(self, subcon: Construct, rtype: int) -> None:
        super().__init__(subcon)
        self.rtype = rtype

    def _decode(self, obj: Any, ctx: Any, path: str) -> dict[str, Any]:
        misc = obj.header.misc
        # without the size flag (misc bit 15) the id is 20 bytes, trailing zeros included
        n = obj.build_id_size if misc & 0x8000 else 20
        return {"pid": obj.pid, "misc": misc, "cpumode": misc & 7,
                "build_id": obj.build_id[:n].hex(), "filename": cstring(obj.filename)}

    def _encode(self, obj: dict[str, Any], ctx: Any, path: str) -> dict[str, Any]:
        name = to_bytes(obj["filename"]) + b"\0"
        padded = name.ljust((len(name) + NAME_ALIGN - 1) // NAME_ALIGN * NAME_ALIGN, b"\0")
        bid = bytes.fromhex(obj["build_id"])
        return {"header": {"type": self.rtype, "misc": obj.get("misc", 1 | 0x8000),
                           "size": 36 + len(padded)},
                "pid": obj.get("pid", -1), "build_id": bid.ljust(20, b"\0"),
                "build_id_size": len(bid), "filename": padded}


def _tracing_data() -> Construct:
    """The tracing-data blob (TRACING_DATA feature, or after record 66 in pipe mode), as
    trace-event-read.c reads it: its numbers are in the byte order its own flag names."""
    def num(n: int) -> Construct:
        return BytesInteger(n, swapped=lambda c: not c._root.big_endian)

    sized = Prefixed(num(8), GreedyBytes)
    return Struct(
        Const(b"\x17\x08\x44tracing"), "version" / NullTerminated(GreedyBytes),
        "big_endian" / Int8ub, "long_size" / Int8ub, "page_size" / num(4),
        Const(b"header_page\0"), "header_page" / sized,
        Const(b"header_event\0"), "header_event" / sized,
        "ftrace_formats" / PrefixedArray(num(4), sized),
        "systems" / PrefixedArray(num(4), Struct(
            "name" / NullTerminated(GreedyBytes), "formats" / PrefixedArray(num(4), sized))),
    )


TRACING_DATA = _tracing_data()


@lru_cache(maxsize=2)
def layouts(order: str) -> SimpleNamespace:
    """All layouts for byte order ``"<"`` (little) or ``">"`` (big)."""
    big = order == ">"
    u16 = Int16ub if big else Int16ul
    s16 = Int16sb if big else Int16sl
    u32 = Int32ub if big else Int32ul
    s32 = Int32sb if big else Int32sl
    u64 = Int64ub if big else Int64ul
    f64 = Float64b if big else Float64l
    u8 = Int8ub
    cstr = NullTerminated(GreedyBytes)

    section = Struct("offset" / u64, "size" / u64)
    file_header = Struct(
        "magic" / Bytes(8),
        "size" / u64,
        "attr_size" / u64,
        "attrs" / section,
        "data" / section,
        "event_types" / section,
        "adds_features" / Array(4, u64),  # the feature bitmap as unsigned longs
    )
    # one entry of the attrs section: the attr (attr_size - 16 bytes), then its ids section
    file_attr = Struct("attr" / Bytes(this._params.attr_size - 16), "ids" / section)
    pipe_header = Struct("magic" / Bytes(8), "size" / u64)
    record_header = Struct("type" / u32, "misc" / u16, "size" / u16)

    # perf_event_attr, VER8 (136 bytes); shorter attrs are zero-filled first.
    attr = Struct(
        "type" / u32,
        "size" / u32,
        "config" / u64,
        "sample_period" / u64,
        "sample_type" / u64,
        "read_format" / u64,
        "flags" / u64,  # in little-endian bit allocation (see attr.py for big-endian files)
        "wakeup_events" / u32,
        "bp_type" / u32,
        "config1" / u64,
        "config2" / u64,
        "branch_sample_type" / u64,
        "sample_regs_user" / u64,
        "sample_stack_user" / u32,
        "clockid" / s32,
        "sample_regs_intr" / u64,
        "aux_watermark" / u32,
        "sample_max_stack" / u16,
        Padding(2),
        "aux_sample_size" / u32,
        "aux_action" / u32,
        "sig_data" / u64,
        "config3" / u64,
    )

    hstr = HeaderString(Struct("len" / u32, "data" / Bytes(this.len)))
    strlist = PrefixedArray(u32, hstr)

    def build_id(rtype: int) -> Construct:
        return BuildId(Struct("header" / record_header, "pid" / s32, "build_id" / Bytes(20),
                              "build_id_size" / u8, Padding(3),
                              "filename" / Bytes(this.header.size - 36)), rtype)

    def nr_cpus(ctx: Any) -> int:
        return int(ctx._params.get("nr_cpus") or 0)

    def present(name: str, when_parsing: Any) -> Any:
        """An optional part: parsed when ``when_parsing(ctx)``, built when given."""
        return lambda c: c[name] is not None if c._building else when_parsing(c)

    # Feature payloads by Feature name; parse gives the decoded value (after plain()).
    feature = SimpleNamespace(
        HOSTNAME=hstr, OSRELEASE=hstr, VERSION=hstr, ARCH=hstr, CPUDESC=hstr, CPUID=hstr,
        CMDLINE=strlist,
        NRCPUS=Struct("nr_cpus_avail" / u32, "nr_cpus_online" / u32),
        TOTAL_MEM=u64,  # kB
        EVENT_DESC=Struct(
            "nr" / Rebuild(u32, len_(this.events)), "attr_size" / u32,
            Check(this.attr_size >= 64),
            "events" / Array(this.nr, Struct(
                "attr" / Bytes(this._.attr_size), "nr_ids" / Rebuild(u32, len_(this.ids)),
                "name" / hstr, "ids" / Array(this.nr_ids, u64)))),
        BUILD_ID=GreedyRange(build_id(0)),
        # sibling lists, then (when the payload has room) per-CPU ids and the die lists
        CPU_TOPOLOGY=Struct(
            "core_siblings" / strlist, "thread_siblings" / strlist,
            "cpus" / If(present("cpus", lambda c: nr_cpus(c) and left(c) >= 8 * nr_cpus(c)),
                        Array(nr_cpus, Struct("core_id" / u32, "socket_id" / u32))),
            "die_siblings" / If(present("die_siblings", lambda c: c.cpus is not None
                                        and left(c) >= 4), strlist),
            "die_ids" / If(present("die_ids", lambda c: c.die_siblings is not None
                                   and left(c) >= 4 * nr_cpus(c)), Array(nr_cpus, u32))),
        NUMA_TOPOLOGY=PrefixedArray(u32, Struct("node" / u32, "mem_total_kb" / u64,
                                                "mem_free_kb" / u64, "cpus" / hstr)),
        BRANCH_STACK=Struct(), STAT=Struct(),  # flags: no payload
        PMU_MAPPINGS=PrefixedArray(u32, Struct("type" / u32, "name" / hstr)),
        GROUP_DESC=PrefixedArray(u32, Struct("name" / hstr, "leader_idx" / u32,
                                             "nr_members" / u32)),
        AUXTRACE=PrefixedArray(u64, Struct("offset" / u64, "size" / u64)),
        CACHE=Struct("version" / u32, "entries" / PrefixedArray(u32, Struct(
            "level" / u32, "line_size" / u32, "sets" / u32, "ways" / u32,
            "type" / hstr, "size" / hstr, "shared_cpu_list" / hstr))),
        SAMPLE_TIME=Struct("first" / u64, "last" / u64),
        MEM_TOPOLOGY=Struct("version" / u64, "block_size" / u64, "nodes" / PrefixedArray(
            u64, Struct("node" / u64, "size" / u64, "nbits" / u64,
                        "words" / Array((this.nbits + 63) // 64, u64)))),
        CLOCKID=u64,  # resolution in ns
        DIR_FORMAT=u64,  # version
        BPF_PROG_INFO=PrefixedArray(u32, Struct(
            "info_len" / u32, "data_len" / u32, "arrays" / u64,
            "info" / Bytes(this.info_len), "data" / Bytes(this.data_len))),
        BPF_BTF=PrefixedArray(u32, Struct("id" / u32, "data_size" / u32,
                                          "data" / Bytes(this.data_size))),
        COMPRESSED=Struct("version" / u32, "type" / u32, "level" / u32, "ratio" / u32,
                          "mmap_len" / u32),
        CPU_PMU_CAPS=PrefixedArray(u32, Struct("name" / hstr, "value" / hstr)),
        CLOCK_DATA=Struct("version" / u32, "clockid" / u32, "wall_clock_ns" / u64,
                          "clockid_ns" / u64),
        HYBRID_TOPOLOGY=PrefixedArray(u32, Struct("pmu_name" / hstr, "cpus" / hstr)),
        PMU_CAPS=PrefixedArray(u32, Struct(
            "caps" / PrefixedArray(u32, Struct("name" / hstr, "value" / hstr)),
            "pmu" / hstr)),
        # the cpus run to the end of the payload; "rest" holds what no whole cpu fills
        CPU_DOMAIN_INFO=Struct(
            "version" / u32, "max_sched_domains" / u32,
            "cpus" / GreedyRange(Struct("cpu" / u32, "domains" / PrefixedArray(u32, Struct(
                "domain" / u32, "name" / If(this._root.version >= 17, hstr),
                "cpumask" / hstr, "cpulist" / hstr)))),
            "rest" / GreedyBytes),
        TRACING_DATA=Struct("size" / Computed(lambda c: left(c)), Padding(this.size)),
    )

    sid_tid = Struct("pid" / s32, "tid" / s32)
    kmod_head = ("pid" / s32, Padding(4), "start" / u64, "len" / u64, "pgoff" / u64,
                 "sec_name_len" / Rebuild(u16, len_(this.section)),
                 "filename_len" / Rebuild(u16, len_(this.filename)))
    records = SimpleNamespace(
        MMAP=Struct("pid" / s32, "tid" / s32, "addr" / u64, "len" / u64, "pgoff" / u64,
                    "filename" / cstr),
        LOST=Struct("id" / u64, "lost" / u64),
        COMM=Struct("pid" / s32, "tid" / s32, "comm" / cstr),
        EXIT=Struct("pid" / s32, "ppid" / s32, "tid" / s32, "ptid" / s32, "time" / u64),
        FORK=Struct("pid" / s32, "ppid" / s32, "tid" / s32, "ptid" / s32, "time" / u64),
        THROTTLE=Struct("time" / u64, "id" / u64, "stream_id" / u64),
        UNTHROTTLE=Struct("time" / u64, "id" / u64, "stream_id" / u64),
        READ=Struct("pid" / s32, "tid" / s32, "values" / GreedyBytes),
        MMAP2=Struct("pid" / s32, "tid" / s32, "addr" / u64, "len" / u64, "pgoff" / u64,
                     "u" / Bytes(24), "prot" / u32, "flags" / u32, "filename" / cstr),
        mmap2_inode=Struct("maj" / u32, "min" / u32, "ino" / u64, "ino_generation" / u64),
        mmap2_build_id=Struct("build_id_size" / u8, Padding(3), "build_id" / Bytes(20)),
        AUX=Struct("aux_offset" / u64, "aux_size" / u64, "flags" / u64),
        ITRACE_START=sid_tid,
        LOST_SAMPLES=Struct("lost" / u64),
        SWITCH=Struct(),
        SWITCH_CPU_WIDE=Struct("next_prev_pid" / s32, "next_prev_tid" / s32),
        NAMESPACES=Struct("pid" / s32, "tid" / s32, "namespaces" / PrefixedArray(
            u64, Struct("dev" / u64, "ino" / u64))),
        KSYMBOL=Struct("addr" / u64, "len" / u32, "ksym_type" / u16, "flags" / u16,
                       "name" / cstr),
        BPF_EVENT=Struct("event_type" / u16, "flags" / u16, "id" / u32, "tag" / Bytes(8)),
        CGROUP=Struct("id" / u64, "path" / cstr),
        TEXT_POKE=Struct("addr" / u64, "old_len" / u16, "new_len" / u16,
                         "old_bytes" / Bytes(this.old_len), "new_bytes" / Bytes(this.new_len)),
        AUX_OUTPUT_HW_ID=Struct("hw_id" / u64),
        CALLCHAIN_DEFERRED=Struct("cookie" / u64, "ips" / PrefixedArray(u64, u64)),
        # perf writes char name[64]; perf 3.2 pipe files pad the name only to 8 bytes
        HEADER_EVENT_TYPE=Struct("event_id" / u64, "name" / GreedyBytes),
        HEADER_TRACING_DATA=Struct("size" / u32, Optional(Padding(4))),  # 12 bytes in old files
        FINISHED_ROUND=Struct(),
        FINISHED_INIT=Struct(),
        ID_INDEX=Struct("entries" / PrefixedArray(u64, Struct(
            "id" / u64, "idx" / u64, "cpu" / u64, "tid" / u64))),
        AUXTRACE_INFO=Struct("auxtrace_type" / u32, Padding(4), "priv" / GreedyRange(u64)),
        AUXTRACE=Struct("aux_size" / u64, "aux_offset" / u64, "reference" / u64, "idx" / u32,
                        "tid" / u32, "cpu" / u32, Padding(4)),
        AUXTRACE_ERROR=Struct("error_type" / u32, "code" / u32, "cpu" / u32, "pid" / u32,
                              "tid" / u32, "fmt" / u32, "ip" / u64, "time" / u64,
                              "msg" / Bytes(64)),
        THREAD_MAP=Struct("entries" / PrefixedArray(u64, Struct("pid" / u64,
                                                                "comm" / Bytes(16)))),
        # perf_record_cpu_map_data, packed: a cpu list, a mask of 32- or 64-bit words (these
        # after 4 pad bytes) or a range
        CPU_MAP=Struct("map_type" / u16, "data" / Switch(this.map_type, {
            0: Struct("nr" / u16, "cpus" / Array(this.nr, u16)),
            1: Struct("nr" / u16, "long_size" / u16, Check(lambda c: c.long_size in (4, 8)),
                      If(this.long_size == 8, Padding(4)),
                      "mask" / Array(this.nr, IfThenElse(this.long_size == 4, u32, u64))),
            2: Struct("any_cpu" / u8, Padding(1), "start_cpu" / u16, "end_cpu" / u16),
        }, default=GreedyBytes)),
        STAT_CONFIG=Struct("entries" / PrefixedArray(u64, Struct("tag" / u64, "val" / u64))),
        STAT=Struct("id" / u64, "cpu" / u32, "thread" / u32, "val" / u64, "ena" / u64,
                    "run" / u64),
        STAT_ROUND=Struct("stat_type" / u64, "time" / u64),
        EVENT_UPDATE=Struct("update_type" / u64, "id" / u64, "data" / GreedyBytes),
        TIME_CONV=Struct("time_shift" / u64, "time_mult" / u64, "time_zero" / u64,
                         "ext" / GreedyBytes),
        time_conv_ext=Struct("time_cycles" / u64, "time_mask" / u64,
                             "cap_user_time_zero" / u8, "cap_user_time_short" / u8),
        # the writer's attr (its size at offset 4; 0 means 64), then the event's ids
        HEADER_ATTR=Struct(
            "head" / Peek(Struct(Padding(4), "size" / u32)),
            "attr" / Bytes(lambda c: len(c.attr) if c._building else (c.head.size or 64)),
            "ids" / GreedyRange(u64)),
        HEADER_FEATURE=Struct("feat_id" / u64, "data" / GreedyBytes),
        COMPRESSED=Struct("data" / GreedyBytes),
        COMPRESSED2=Struct("data_size" / u64, "data" / GreedyBytes),
        # The RFC's KMOD_SEC_MAP (docs/format.md, "Type 83"): the section name and the file
        # name with their NULs, one gap byte between them as the RFC synthesizer wrote it;
        # "rest" is the padding and the (zeroed) trailer.  type83.kmod_layout tells it from
        # the gapless form the struct comment pictures (KMOD_SEC_MAP_PICTURE).
        KMOD_SEC_MAP=Struct(*kmod_head, "section" / Bytes(this.sec_name_len), Padding(1),
                            "filename" / Bytes(this.filename_len), "rest" / GreedyBytes),
        KMOD_SEC_MAP_PICTURE=Struct(*kmod_head, "section" / Bytes(this.sec_name_len),
                                    "filename" / Bytes(this.filename_len),
                                    "rest" / GreedyBytes),
        BPF_METADATA=Struct("prog_name" / Bytes(16), "nr_entries" / u64,
                            "entries" / GreedyBytes),
    )
    return SimpleNamespace(
        order=order, u16=u16, u32=u32, u64=u64, s16=s16, s32=s32, f64=f64,
        section=section, file_header=file_header, file_attr=file_attr,
        pipe_header=pipe_header, record_header=record_header, attr=attr, hstr=hstr,
        strlist=strlist, feature=feature, records=records, build_id_record=build_id(67),
    )
