"""Writer -> decoder round trips: both byte orders, file and pipe, compressed or not."""

from __future__ import annotations

import io
import itertools
from pathlib import Path

import pytest

from builders import FLAGS, full_attr, full_sample, kitchen_sink
from perftui.analysis.summary import info_dict
from perftui.perfdata import Feature, Recording, open_recording
from perftui.perfdata.attr import build_attr, parse_attr

VARIANTS = list(itertools.product("<>", ("file", "pipe"), (None, "COMPRESSED", "COMPRESSED2")))


def _ids(v: tuple) -> str:
    return f"{'le' if v[0] == '<' else 'be'}-{v[1]}-{v[2] or 'plain'}"


def _plain(recs: list[dict]) -> list[dict]:
    drop = {"offset", "compressed"}
    skip_types = {"HEADER_ATTR", "HEADER_FEATURE", "COMPRESSED", "COMPRESSED2"}
    return [{k: v for k, v in r.items() if k not in drop} for r in recs
            if r["type"] not in skip_types]


@pytest.fixture(scope="module")
def decoded(tmp_path_factory: pytest.TempPathFactory) -> dict[tuple, list[dict]]:
    out = {}
    for v in VARIANTS:
        p = tmp_path_factory.mktemp("rt") / f"{_ids(v)}.data"
        kitchen_sink(p, *v)
        rec = open_recording(p, spill=False)
        out[v] = list(rec.records())
        assert rec.errors == []
    return out


@pytest.mark.parametrize("variant", VARIANTS, ids=_ids)
def test_variant_decodes_like_little_endian_file(decoded: dict, variant: tuple) -> None:
    assert _plain(decoded[variant]) == _plain(decoded[("<", "file", None)])


def test_every_sample_field_round_trips(decoded: dict) -> None:
    samples = [r for r in decoded[(">", "pipe", "COMPRESSED2")] if r["type"] == "SAMPLE"]
    assert len(samples) == 2
    for i, s in enumerate(samples):
        want = full_sample(i)
        for k, v in want.items():
            if k == "weight_struct":
                assert s["weight_struct"] == v and s["weight"] == v["var1_dw"]
            elif k == "stack_user":
                assert s[k] == v
            else:
                assert s[k] == v, k
        assert s["event"] == "raw-ev"


def test_every_kernel_type_present(decoded: dict) -> None:
    names = {r["type"] for r in decoded[("<", "file", None)]}
    kernel = {"MMAP", "LOST", "COMM", "EXIT", "THROTTLE", "UNTHROTTLE", "FORK", "SAMPLE",
              "MMAP2", "AUX", "ITRACE_START", "LOST_SAMPLES", "SWITCH", "SWITCH_CPU_WIDE",
              "NAMESPACES", "KSYMBOL", "BPF_EVENT", "CGROUP", "TEXT_POKE", "AUX_OUTPUT_HW_ID",
              "CALLCHAIN_DEFERRED", "KMOD_SEC_MAP", "FINISHED_INIT", "FINISHED_ROUND"}
    assert kernel <= names


def test_kmod_sec_map_fields(decoded: dict) -> None:
    for v in VARIANTS:
        (k,) = [r for r in decoded[v] if r["type"] == "KMOD_SEC_MAP"]
        assert k["pid"] == -1 and k["section"] == ".noinstr.text"
        assert k["filename"] == "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko"
        assert (k["start"], k["len"], k["pgoff"]) == (0xFFFFFFFFC0A3C000, 0x1C0, 0x5F40)
        assert k["layout"] == "rfc"


def test_compressed_records_counted_like_perf(tmp_path: Path) -> None:
    p = tmp_path / "z.data"
    kitchen_sink(p, "<", "file", "COMPRESSED")
    rec = open_recording(p, spill=False)
    rec.build_index()
    d = info_dict(rec)
    assert d["records"]["COMPRESSED"] >= 1
    assert d["total_records"] == sum(d["records"].values())
    assert d["records"]["SAMPLE"] == 2 and d["events"][0]["samples"] == 2


@pytest.mark.parametrize("order", "<>")
def test_header_and_features_round_trip(tmp_path: Path, order: str) -> None:
    p = tmp_path / "h.data"
    kitchen_sink(p, order, "file", None)
    rec = open_recording(p)
    assert info_dict(rec)["byte_order"] == ("little" if order == "<" else "big")
    assert rec.features[Feature.HOSTNAME] == "bigbox"
    assert rec.features[Feature.CMDLINE] == ["/usr/bin/perf", "record", "-a"]
    assert rec.features[Feature.NRCPUS] == {"nr_cpus_avail": 4, "nr_cpus_online": 4}
    a = rec.attrs[0]
    assert a.flags == FLAGS and a.flag("precise_ip") == 2 and a.flag("sample_id_all") == 1
    assert a.ids == [11, 12] and a.name == "raw-ev" and a.config3 == 9


@pytest.mark.parametrize("size", [64, 72, 80, 96, 104, 112, 120, 128, 136, 144, 168])
@pytest.mark.parametrize("order", "<>")
def test_attr_sizes(size: int, order: str) -> None:
    a = full_attr([1], size=size)
    raw = build_attr(a, order)
    assert len(raw) == size
    b = parse_attr(raw + b"\xff" * 32, order)  # bytes past the attr are not its own
    assert b.size == size and b.flags == a.flags and b.sample_type == a.sample_type
    if size < 136:
        assert b.config3 == 0
    if size < 80:
        assert b.branch_sample_type == 0 and b.sample_regs_user == 0


def test_stdin_stream_matches_file(tmp_path: Path) -> None:
    p = tmp_path / "pipe.data"
    kitchen_sink(p, ">", "pipe", "COMPRESSED")
    from_file = list(open_recording(p, spill=False).records())
    rec = Recording(None, stream=io.BytesIO(p.read_bytes()), spill=True)
    rec.build_index()
    assert len(rec) == len(from_file)
    # records read back by position from the spill equal the file's
    fields = [rec.decode(i) for i in range(len(rec))]
    assert [f["type"] for f in fields] == [r["type"] for r in from_file]
    assert fields[-2]["ip"] == from_file[-2]["ip"]


def test_big_endian_32_bit_feature_bitmap(tmp_path: Path) -> None:
    """A 32-bit big-endian writer stored the bitmap as eight BE u32 words (docs/format.md,
    "Features")."""
    import struct

    p = tmp_path / "be32.data"
    kitchen_sink(p, ">", "file", None)
    raw = bytearray(p.read_bytes())
    words64 = struct.unpack_from(">4Q", raw, 72)
    bits = sum(w << (64 * k) for k, w in enumerate(words64))
    struct.pack_into(">8I", raw, 72, *[(bits >> (32 * k)) & 0xFFFFFFFF for k in range(8)])
    p.write_bytes(bytes(raw))
    rec = open_recording(p)
    assert rec.features[Feature.HOSTNAME] == "bigbox"
    assert rec.feature_bits == sorted(rec.feature_bits)
    assert Feature.CMDLINE in rec.features
