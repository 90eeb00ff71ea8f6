"""Type 83: upstream COMPRESSED2 or the RFC's KMOD_SEC_MAP (docs/format.md, "Type 83")."""

from __future__ import annotations

import struct
from pathlib import Path

import pytest

from perftui.analysis.summary import record_counts
from perftui.perfdata import open_recording
from perftui.perfdata.constants import KMOD_SEC_MAP, RecordType
from perftui.perfdata.type83 import classify_83
from perftui.perfdata.writer import kmod_sec_map_record

DATA = Path(__file__).parent / "data"


def test_real_compressed2_recording_is_compressed2() -> None:
    rec = open_recording(DATA / "linux-perf-data" / "sleep.compressed2.data", spill=False)
    rec.build_index()
    c = record_counts(rec)
    assert rec.errors == []
    assert c["COMPRESSED2"] == 1 and "KMOD_SEC_MAP" not in c
    assert c["SAMPLE"] == 7


def test_record_built_by_the_rfc_rules() -> None:
    """A record built by hand by the RFC's rules (docs/format.md, "Type 83"): 136 bytes,
    .noinstr.text, a 53-character path."""
    path = "/lib/modules/6.1.0-18-amd64/kernel/arch/x86/kvm/kvm-amd.ko"[:53]
    path = path.ljust(53, "x")
    raw = kmod_sec_map_record("<", ".noinstr.text", path, 0xFFFFFFFFC0A3C000, 0x1C0, 0x5F40, 16)
    assert len(raw) == 136
    assert raw[:16] == bytes.fromhex("53000000010088 00ffffffff00000000".replace(" ", ""))
    assert raw[16:44] == bytes.fromhex(
        "00c0a3c0ffffffff c001000000000000 405f000000000000 0e003600".replace(" ", ""))
    assert raw[44:58] == b".noinstr.text\0" and raw[58] == 0 and raw[59:60] == b"/"
    assert classify_83(raw, "<") == KMOD_SEC_MAP


@pytest.mark.parametrize("order", "<>")
@pytest.mark.parametrize("name_len,path_len", [(1, 1), (5, 1), (6, 1), (13, 53), (20, 200)])
def test_rfc_records_of_every_length_class(order: str, name_len: int, path_len: int) -> None:
    """Also when name+path+2 is a multiple of 8: the path's NUL lands in the trailer."""
    name = "." + "s" * (name_len - 1)
    path = "/" + "p" * (path_len - 1)
    for hdr in (0, 16, 24):
        raw = kmod_sec_map_record(order, name, path, 0xFFFFFFFFC0000000, 64, 0x40, hdr)
        assert classify_83(raw, order) == KMOD_SEC_MAP


def test_picture_layout_is_accepted(tmp_path: Path) -> None:
    raw = kmod_sec_map_record("<", ".text.unlikely", "/m/x.ko", 0xFFFFFFFFC0001000, 0x81, 0x40,
                              16, layout="picture")
    assert classify_83(raw, "<") == KMOD_SEC_MAP
    from perftui.perfdata.records import decode_kmod_sec_map
    d = decode_kmod_sec_map(raw, "<")
    assert d["section"] == ".text.unlikely" and d["filename"] == "/m/x.ko"
    assert d["layout"] == "picture"


def test_leftover_bytes_in_gap_and_padding() -> None:
    """The RFC reuses one buffer: the gap byte and padding may hold old bytes (docs/format.md)."""
    raw = bytearray(kmod_sec_map_record("<", ".data", "/m/x.ko", 0xFFFFFFFFC0001000, 8, 0, 16))
    raw[44 + 6] = ord("Z")  # the gap byte
    raw[-4:] = b"junk"
    d = [x for x in [classify_83(bytes(raw), "<")]]
    assert d == [KMOD_SEC_MAP]
    from perftui.perfdata.records import decode_kmod_sec_map
    assert decode_kmod_sec_map(bytes(raw), "<")["filename"] == "/m/x.ko"


def test_compressed2_with_unset_data_size_falls_back() -> None:
    """The 2026 writer bug: later COMPRESSED2 records of one push lack data_size."""
    payload = b"\x28\xb5\x2f\xfd" + b"\x01" * 20
    size = 16 + 24
    raw = struct.pack("<IHHQ", 83, 0, size, 0) + payload
    assert classify_83(raw, "<") == RecordType.COMPRESSED2


def test_rfc_record_in_a_real_perf61_recording(tmp_path: Path) -> None:
    """An RFC record inserted after FINISHED_INIT of a real perf 6.1 file."""
    src = (DATA / "perf61" / "perf-normal-g.data").read_bytes()
    data_off, data_size = struct.unpack_from("<QQ", src, 40)
    at = 0x278
    assert struct.unpack_from("<I", src, at - 8)[0] == RecordType.FINISHED_INIT
    raw = kmod_sec_map_record("<", ".noinstr.text", "/lib/modules/6.1.0/kvm-amd.ko",
                              0xFFFFFFFFC0A3C000, 0x1C0, 0x5F40, 16)
    out = bytearray(src[:at] + raw + src[at:])
    struct.pack_into("<Q", out, 48, data_size + len(raw))
    # shift every feature section offset by the inserted size
    table = data_off + data_size + len(raw)
    nbits = sum(bin(b).count("1") for b in src[72:104])
    for k in range(nbits):
        o, _s = struct.unpack_from("<QQ", out, table + 16 * k)
        if o:
            struct.pack_into("<Q", out, table + 16 * k, o + len(raw))
    p = tmp_path / "with83.data"
    p.write_bytes(bytes(out))
    r = open_recording(p, spill=False)
    r.build_index()
    c = record_counts(r)
    assert r.errors == [] and c["KMOD_SEC_MAP"] == 1 and c["SAMPLE"] == 267
    assert r.features[5] == "6.1.187"
    (k,) = [x for x in open_recording(p, spill=False).records()
            if x["type"] == "KMOD_SEC_MAP"]
    assert k["offset"] == at and k["filename"] == "/lib/modules/6.1.0/kvm-amd.ko"
