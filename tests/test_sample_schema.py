"""The fast SAMPLE decoder and packer agree with a construct declaration on the whole corpus.

``sample_struct`` below declares PERF_RECORD_SAMPLE with construct straight from the
comment of ``enum perf_event_type`` in the kernel's ``include/uapi/linux/perf_event.h``
(field order, the read_format block, the branch stack with hw_idx and counters, the
WEIGHT_STRUCT union in either byte order).  It shares nothing with ``perftui.perfdata.sample``
(whose one field table generates the struct unpacker and ``encode_sample``).  Every SAMPLE of
every corpus recording is decoded both ways and re-encoded: the three must agree byte for byte.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from construct import (
    Array,
    Bytes,
    Construct,
    Int16ub,
    Int16ul,
    Int32sb,
    Int32sl,
    Int32ub,
    Int32ul,
    Int64ub,
    Int64ul,
    Padding,
    Struct,
    this,
)

from builders import full_attr, full_sample
from conftest import RECORDINGS
from perftui.perfdata import EventAttr, NotPerfData, RecordType, Sample, open_recording
from perftui.perfdata.sample import SampleLayout, encode_sample

Corpus = Callable[[str], Path]
HW_INDEX = 1 << 17  # PERF_SAMPLE_BRANCH_HW_INDEX
COUNTERS = 1 << 19  # PERF_SAMPLE_BRANCH_COUNTERS
RF_ENABLED, RF_RUNNING, RF_ID, RF_GROUP, RF_LOST = 1, 2, 4, 8, 16


def sample_struct(attr: EventAttr, order: str) -> Construct:
    """PERF_RECORD_SAMPLE for one attr, as perf_event.h's comment declares it."""
    big = order == ">"
    u64 = Int64ub if big else Int64ul
    u32 = Int32ub if big else Int32ul
    s32 = Int32sb if big else Int32sl
    u16 = Int16ub if big else Int16ul
    st, rf, bst = attr.sample_type, attr.read_format, attr.branch_sample_type
    fields: list[Any] = ["type" / u32, "misc" / u16, "size" / u16]

    def opt(bit: int, *subcons: Any) -> None:
        if st & bit:
            fields.extend(subcons)

    def when(flag: bool, name: str, sub: Any) -> list[Any]:
        return [name / sub] if flag else []

    opt(Sample.IDENTIFIER, "identifier" / u64)
    opt(Sample.IP, "ip" / u64)
    opt(Sample.TID, "pid" / s32, "tid" / s32)
    opt(Sample.TIME, "time" / u64)
    opt(Sample.ADDR, "addr" / u64)
    opt(Sample.ID, "id" / u64)
    opt(Sample.STREAM_ID, "stream_id" / u64)
    opt(Sample.CPU, "cpu" / u32, Padding(4))
    opt(Sample.PERIOD, "period" / u64)
    times = [*when(bool(rf & RF_ENABLED), "time_enabled", u64),
             *when(bool(rf & RF_RUNNING), "time_running", u64)]
    if rf & RF_GROUP:
        member = Struct("value" / u64, *when(bool(rf & RF_ID), "id", u64),
                        *when(bool(rf & RF_LOST), "lost", u64))
        read = Struct("nr" / u64, *times, "values" / Array(this.nr, member))
    else:
        read = Struct("value" / u64, *times, *when(bool(rf & RF_ID), "id", u64),
                      *when(bool(rf & RF_LOST), "lost", u64))
    opt(Sample.READ, "read" / read)
    opt(Sample.CALLCHAIN, "callchain" / Struct("nr" / u64, "ips" / Array(this.nr, u64)))
    opt(Sample.RAW, "raw" / Struct("size" / u32, "data" / Bytes(this.size)))
    opt(Sample.BRANCH_STACK, "branch_stack" / Struct(
        "nr" / u64, *when(bool(bst & HW_INDEX), "hw_idx", u64),
        "entries" / Array(this.nr, Struct("from" / u64, "to" / u64, "flags" / u64)),
        *when(bool(bst & COUNTERS), "counters", Array(this.nr, u64))))
    nregs_user, nregs_intr = attr.sample_regs_user.bit_count(), attr.sample_regs_intr.bit_count()
    opt(Sample.REGS_USER, "regs_user" / Struct(
        "abi" / u64, "regs" / Array(lambda c: nregs_user if c.abi else 0, u64)))
    opt(Sample.STACK_USER, "stack_user" / Struct(
        "size" / u64, "data" / Bytes(this.size),
        "dyn_size" / Array(lambda c: 1 if c.size else 0, u64)))
    # union perf_sample_weight: the kernel swaps the member order on big-endian hosts
    ws = (Struct("var3_w" / u16, "var2_w" / u16, "var1_dw" / u32) if big
          else Struct("var1_dw" / u32, "var2_w" / u16, "var3_w" / u16))
    if st & Sample.WEIGHT_STRUCT:
        fields.append("weight_struct" / ws)
    else:
        opt(Sample.WEIGHT, "weight" / u64)
    opt(Sample.DATA_SRC, "data_src" / u64)
    opt(Sample.TRANSACTION, "transaction" / u64)
    opt(Sample.REGS_INTR, "regs_intr" / Struct(
        "abi" / u64, "regs" / Array(lambda c: nregs_intr if c.abi else 0, u64)))
    opt(Sample.PHYS_ADDR, "phys_addr" / u64)
    opt(Sample.CGROUP, "cgroup" / u64)
    opt(Sample.DATA_PAGE_SIZE, "data_page_size" / u64)
    opt(Sample.CODE_PAGE_SIZE, "code_page_size" / u64)
    opt(Sample.AUX, "aux" / Struct("size" / u64, "data" / Bytes(this.size)))
    return Struct(*fields)


def expected(c: Any, st: int) -> dict[str, Any]:
    """perftui's field dict built from the construct parse (the shape the decoder promises)."""
    out: dict[str, Any] = {}
    for k in ("ip", "pid", "tid", "time", "addr", "stream_id", "cpu", "period", "data_src",
              "transaction", "phys_addr", "cgroup", "data_page_size", "code_page_size"):
        if k in c:
            out[k] = c[k]
    if "identifier" in c:
        out["id"] = c.identifier
    if "id" in c:
        out["id"] = c.id  # both present: the ID field comes later and names the same id
    if "read" in c:
        r = {k: v for k, v in c.read.items() if not k.startswith("_") and k != "nr"}
        if "values" in r:
            r["values"] = [{k: v for k, v in m.items() if not k.startswith("_")}
                           for m in r["values"]]
        out["read"] = r
    if "callchain" in c:
        out["callchain"] = list(c.callchain.ips)
    if "raw" in c:
        out["raw"] = c.raw.data
    if "branch_stack" in c:
        b = c.branch_stack
        br: dict[str, Any] = {"entries": [{"from": e["from"], "to": e.to, "flags": e.flags}
                                          for e in b.entries]}
        if "hw_idx" in b:
            br["hw_idx"] = b.hw_idx
        if "counters" in b:
            br["counters"] = list(b.counters)
        out["branch_stack"] = br
    for k in ("regs_user", "regs_intr"):
        if k in c:
            out[k] = {"abi": c[k].abi, "regs": list(c[k].regs)}
    if "stack_user" in c:
        s = c.stack_user
        out["stack_user"] = ({"size": 0} if not s.size else
                             {"size": s.size, "data": s.data, "dyn_size": s.dyn_size[0]})
    if "weight_struct" in c:
        w = c.weight_struct
        out["weight_struct"] = {"var1_dw": w.var1_dw, "var2_w": w.var2_w, "var3_w": w.var3_w}
        out["weight"] = w.var1_dw
    elif "weight" in c:
        out["weight"] = c.weight
    if "aux" in c:
        out["aux"] = c.aux.data
    return out


def check_sample(raw: bytes, attr: EventAttr, order: str, schema: Construct,
                 lay: SampleLayout) -> None:
    c = schema.parse(raw)
    consumed = len(schema.build(c))
    assert consumed == c.size == len(raw)  # the declaration covers the sample exactly
    fast = lay.decode(raw)
    assert fast.pop("_end") == len(raw)
    assert fast == expected(c, attr.sample_type)
    assert encode_sample(attr, order, fast) == raw[8:]  # the packer gives the bytes back


@pytest.mark.slow
@pytest.mark.parametrize("rel", RECORDINGS)
def test_fast_sample_path_agrees_with_construct(rel: str, corpus: Corpus) -> None:
    try:
        rec = open_recording(str(corpus(rel)))
    except NotPerfData:
        assert rel == "hotspot/perf.data.true.v1"  # the one recording that is not v2
        return
    try:
        rec.build_index()
        c = rec.columns
        rows = np.nonzero(c["type"] == RecordType.SAMPLE)[0]
        schemas: dict[int, tuple[Construct, SampleLayout]] = {}
        checked = 0
        for i in rows:
            a = int(c["attr"][i])
            assert a >= 0  # every corpus sample names a known attr
            if a not in schemas:
                schemas[a] = (sample_struct(rec.attrs[a], rec.order),
                              SampleLayout(rec.attrs[a], rec.order))
            check_sample(rec.record_bytes(int(i)), rec.attrs[a], rec.order, *schemas[a])
            checked += 1
        # the corrupt pipe file stops before its first sample; every other one has some
        assert checked > 0 or "zero_size_sample" in rel
    finally:
        rec.close()


@pytest.mark.parametrize("order", ["<", ">"])
@pytest.mark.parametrize("attr_size", [128, 136])
def test_every_field_both_byte_orders(order: str, attr_size: int) -> None:
    """The writer's all-fields sample (no corpus file has every bit, none is big-endian)."""
    attr = full_attr([11, 12], attr_size)
    lay = SampleLayout(attr, order)
    schema = sample_struct(attr, order)
    for i in range(3):
        body = encode_sample(attr, order, full_sample(i))
        head = (RecordType.SAMPLE).to_bytes(4, "big" if order == ">" else "little")
        head += (1).to_bytes(2, "big" if order == ">" else "little")
        head += (8 + len(body)).to_bytes(2, "big" if order == ">" else "little")
        check_sample(head + body, attr, order, schema, lay)
