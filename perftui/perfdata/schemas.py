"""construct declarations of the perf.data layouts, built once per byte order.

These declare the file header, attrs, feature payloads and the record bodies
(FORMAT.md §2, §3, §7, §10, §11, §13.4).  They parse the rare structures and
build every structure for the writer; the hot path (record walk, samples) uses
precompiled ``struct`` unpackers instead (see ``sample.py`` and ``walk.py``).
"""

from __future__ import annotations

from functools import lru_cache
from types import SimpleNamespace

from construct import (
    Array,
    Bytes,
    Float64b,
    Float64l,
    GreedyBytes,
    GreedyRange,
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
    NullTerminated,
    Padding,
    PrefixedArray,
    Struct,
    this,
)


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
        "adds_features" / Bytes(32),
    )
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

    # perf_header_string: u32 len then len bytes (NUL-padded).
    header_string = Struct("len" / u32, "data" / Bytes(this.len))
    string_list = PrefixedArray(u32, header_string)

    feature = SimpleNamespace(
        nrcpus=Struct("nr_cpus_avail" / u32, "nr_cpus_online" / u32),
        total_mem=Struct("kb" / u64),
        sample_time=Struct("first" / u64, "last" / u64),
        clockid=Struct("resolution_ns" / u64),
        dir_format=Struct("version" / u64),
        compressed=Struct("version" / u32, "type" / u32, "level" / u32, "ratio" / u32,
                          "mmap_len" / u32),
        clock_data=Struct("version" / u32, "clockid" / u32, "wall_clock_ns" / u64,
                          "clockid_ns" / u64),
        pmu_mappings=PrefixedArray(u32, Struct("type" / u32, "name" / header_string)),
        group_desc=PrefixedArray(u32, Struct("name" / header_string, "leader_idx" / u32,
                                             "nr_members" / u32)),
        numa_topology=PrefixedArray(u32, Struct("node" / u32, "mem_total" / u64,
                                                "mem_free" / u64, "cpus" / header_string)),
        cache=Struct("version" / u32, "entries" / PrefixedArray(u32, Struct(
            "level" / u32, "line_size" / u32, "sets" / u32, "ways" / u32,
            "type" / header_string, "size" / header_string, "map" / header_string))),
        mem_topology=Struct("version" / u64, "block_size" / u64, "nodes" / PrefixedArray(
            u64, Struct("node" / u64, "size" / u64, "nbits" / u64,
                        "words" / Array((this.nbits + 63) // 64, u64)))),
        hybrid_topology=PrefixedArray(u32, Struct("pmu_name" / header_string,
                                                  "cpus" / header_string)),
        cpu_pmu_caps=PrefixedArray(u32, Struct("name" / header_string,
                                               "value" / header_string)),
        auxtrace=PrefixedArray(u64, Struct("offset" / u64, "size" / u64)),
        bpf_btf=PrefixedArray(u32, Struct("id" / u32, "data_size" / u32,
                                          "data" / Bytes(this.data_size))),
        bpf_prog_info=PrefixedArray(u32, Struct(
            "info_len" / u32, "data_len" / u32, "arrays" / u64,
            "info" / Bytes(this.info_len), "data" / Bytes(this.data_len))),
    )

    sid_tid = Struct("pid" / s32, "tid" / s32)
    rec = SimpleNamespace(
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
        HEADER_TRACING_DATA=Struct("size" / u32, Padding(4)),
        HEADER_BUILD_ID=Struct("pid" / s32, "build_id" / Bytes(20), "build_id_size" / u8,
                               Padding(3), "filename" / cstr),
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
        CPU_MAP=Struct("map_type" / u16, "data" / GreedyBytes),
        STAT_CONFIG=Struct("entries" / PrefixedArray(u64, Struct("tag" / u64, "val" / u64))),
        STAT=Struct("id" / u64, "cpu" / u32, "thread" / u32, "val" / u64, "ena" / u64,
                    "run" / u64),
        STAT_ROUND=Struct("stat_type" / u64, "time" / u64),
        EVENT_UPDATE=Struct("update_type" / u64, "id" / u64, "data" / GreedyBytes),
        TIME_CONV=Struct("time_shift" / u64, "time_mult" / u64, "time_zero" / u64,
                         "ext" / GreedyBytes),
        time_conv_ext=Struct("time_cycles" / u64, "time_mask" / u64,
                             "cap_user_time_zero" / u8, "cap_user_time_short" / u8),
        HEADER_FEATURE=Struct("feat_id" / u64, "data" / GreedyBytes),
        COMPRESSED=Struct("data" / GreedyBytes),
        COMPRESSED2=Struct("data_size" / u64, "data" / GreedyBytes),
        # The RFC's KMOD_SEC_MAP (FORMAT.md §13.4); strings handled in records.py.
        KMOD_SEC_MAP=Struct("pid" / s32, Padding(4), "start" / u64, "len" / u64,
                            "pgoff" / u64, "sec_name_len" / u16, "filename_len" / u16,
                            "data" / GreedyBytes),
        BPF_METADATA=Struct("prog_name" / Bytes(16), "nr_entries" / u64,
                            "entries" / GreedyBytes),
    )
    return SimpleNamespace(
        order=order, u16=u16, u32=u32, u64=u64, s16=s16, s32=s32, f64=f64,
        section=section, file_header=file_header, pipe_header=pipe_header,
        record_header=record_header, attr=attr, header_string=header_string,
        string_list=string_list, feature=feature, rec=rec,
    )
