"""perftui.symbols.modules.modnames and .modlocate with the real fixtures in temporary layouts."""

from __future__ import annotations

import os
import shutil
import struct
from pathlib import Path

import pytest

from perftui.symbols.modules import modlocate as klocate
from perftui.symbols.modules.modlocate import find_module_file, same_build_id
from perftui.symbols.modules.modnames import is_module_path, module_name

ROOT = Path(__file__).resolve().parents[1]
MODDIR = ROOT / "perftui" / "demo" / "modules"
NIC_ID = "bcb613c982c20b4721ddff3fbacff84b73dbb69e"
KVM_ID = "c7605c5bc05968f6d26054038b40a933dda99b8f"
CRC_ID = "c1a5198a33665b9b1d6bc257b2a159fde40d18cc"
RELEASE = "6.1.0-57-amd64"


def put(src: str, dest: Path) -> Path:
    """Copy fixture ``src`` (file name under perftui/demo/modules) to ``dest``."""
    dest.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(MODDIR / src, dest)
    return dest


# --------------------------------------------------------------------------- names


@pytest.mark.parametrize(
    ("given", "want"),
    [
        ("/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko", "kvm_amd"),
        ("/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko.xz", "kvm_amd"),
        ("kvm-amd.ko.gz", "kvm_amd"),
        ("kvm_amd.ko.zst", "kvm_amd"),
        ("[kvm_amd]", "kvm_amd"),
        ("[kvm-amd]", "kvm_amd"),
        ("[kvm-amd].noinstr.text", "kvm_amd"),
        ("kvm_amd", "kvm_amd"),
        ("demo-kvm", "demo_kvm"),
        ("snd-hda-codec_realtek.ko", "snd_hda_codec_realtek"),
        ("/weird/dir.ko/nvme.ko", "nvme"),
    ],
)
def test_module_name(given: str, want: str) -> None:
    assert module_name(given) == want


@pytest.mark.parametrize(
    "yes",
    [
        "/lib/modules/6.1.0/kernel/arch/x86/kvm/kvm-amd.ko",
        "kvm-amd.ko.xz",
        "x.ko.gz",
        "/a/b/x.ko.zst",
        "[kvm_amd]",
        "[kvm-amd]",
        "[bpf_preload]",
        "[nf_tables]",
    ],
)
def test_is_module_path_yes(yes: str) -> None:
    assert is_module_path(yes)


@pytest.mark.parametrize(
    "no",
    [
        "[kernel.kallsyms]",
        "[kernel.kallsyms]_text",
        "[guest.kernel.kallsyms]",
        "[guest.kernel.kallsyms.1234]",
        "[vdso]",
        "[vsyscall]",
        "[vectors]",
        "[heap]",
        "[stack]",
        "[uprobes]",
        "[bpf_prog]",
        "[bpf_prog_6deef7357e7b4530_sd_fw_egress]",
        "[bpf_trampoline_6442]",
        "//anon",
        "/dev/zero",
        "/usr/lib/libc.so.6",
        ".ko",
        "/a/b/.ko",
        "[]",
        "[anon:dalvik]",
        "[kvm_amd",
        "",
    ],
)
def test_is_module_path_no(no: str) -> None:
    assert not is_module_path(no)


def test_same_build_id() -> None:
    assert same_build_id(NIC_ID, NIC_ID.upper())
    assert same_build_id(NIC_ID, NIC_ID + "000000")  # perf's zero padding
    assert not same_build_id(NIC_ID, NIC_ID + "01")
    assert not same_build_id(NIC_ID, KVM_ID)


# --------------------------------------------------------------------------- search


def test_hyphen_file_found_by_underscore_name(tmp_path: Path) -> None:
    f = put("demo-kvm.ko", tmp_path / "mods" / "arch" / "x86" / "demo-kvm.ko")
    for name in ("demo_kvm", "[demo_kvm]", "[demo-kvm]", "demo-kvm", "/elsewhere/demo-kvm.ko"):
        loc = find_module_file(name, None, [str(tmp_path / "mods")], None)
        assert loc.path == str(f), name
        assert loc.build_id_match is None and loc.message is None
        assert loc.looked_in == [str(tmp_path / "mods")]
    # The other way round: an underscore file for a hyphen name in the record.
    g = put("demo_nic.ko", tmp_path / "other" / "demo_nic.ko")
    assert find_module_file("[demo-nic]", None, [str(tmp_path / "other")], None).path == str(g)


def test_compressed_only_and_preference(tmp_path: Path) -> None:
    zst = put("demo_crc.ko.zst", tmp_path / "a" / "demo_crc.ko.zst")
    loc = find_module_file("demo_crc", None, [str(tmp_path / "a")], None, build_id=CRC_ID)
    assert loc.path == str(zst) and loc.build_id_match is True
    assert loc.module is not None and loc.module.compression == "zstd"
    plain = put("demo_crc.ko", tmp_path / "a" / "demo_crc.ko")
    put("demo_crc.ko.xz", tmp_path / "a" / "demo_crc.ko.xz")
    assert find_module_file("demo_crc", None, [str(tmp_path / "a")], None).path == str(plain)
    # Shallower directories first.
    deep = tmp_path / "b" / "z" / "demo_crc.ko"
    put("demo_crc.ko", deep)
    shallow = put("demo_crc.ko.gz", tmp_path / "b" / "demo_crc.ko.gz")
    assert find_module_file("demo_crc", None, [str(tmp_path / "b")], None).path == str(shallow)


def test_record_path_first(tmp_path: Path) -> None:
    rec = put("demo_nic.ko", tmp_path / "rec" / "demo_nic.ko")
    put("demo_nic.ko", tmp_path / "mods" / "demo_nic.ko")
    loc = find_module_file("demo_nic", str(rec), [str(tmp_path / "mods")], None, build_id=NIC_ID)
    assert loc.path == str(rec) and loc.build_id_match is True
    assert loc.looked_in == [str(rec)]
    # The record names a .ko that is now only there compressed.
    rec.unlink()
    xz = put("demo_nic.ko.xz", tmp_path / "rec" / "demo_nic.ko.xz")
    assert find_module_file("demo_nic", str(rec), [], None).path == str(xz)
    # A record path that does not exist falls through to the module directories.
    loc = find_module_file("demo_nic", "/nonexistent/demo_nic.ko", [str(tmp_path / "mods")], None)
    assert loc.path == str(tmp_path / "mods" / "demo_nic.ko")
    assert loc.looked_in == ["/nonexistent/demo_nic.ko", str(tmp_path / "mods")]
    # "[name]" in the record is no place to look.
    loc = find_module_file("demo_nic", "[demo_nic]", [str(tmp_path / "mods")], None)
    assert loc.looked_in == [str(tmp_path / "mods")]


def test_lib_modules_tree(tmp_path: Path) -> None:
    root = tmp_path / "lib" / "modules"
    tree = root / RELEASE
    f = put("demo-kvm.ko.xz", tree / "kernel" / "arch" / "x86" / "kvm" / "demo-kvm.ko.xz")
    loc = find_module_file(
        "[demo_kvm]", None, [], RELEASE, build_id=KVM_ID, lib_modules_root=str(root)
    )
    assert loc.path == str(f) and loc.build_id_match is True
    assert loc.looked_in == [str(tree)]
    # modules.dep is read first: it points at updates/ although kernel/ sorts first.
    upd = put("demo-kvm.ko", tree / "updates" / "demo-kvm.ko")
    (tree / "modules.dep").write_text(
        "kernel/drivers/other.ko.xz:\nupdates/demo-kvm.ko: kernel/x/dep.ko\n"
    )
    loc = find_module_file("demo_kvm", None, [], RELEASE, lib_modules_root=str(root))
    assert loc.path == str(upd)
    # Unsafe or missing releases are not searched.
    for rel in ("../modules", "..", "", None):
        loc = find_module_file("demo_kvm", None, [], rel, lib_modules_root=str(root))
        assert loc.path is None and loc.looked_in == []


def test_default_lib_modules_root_is_used() -> None:
    loc = find_module_file("no_such_module_xyz", None, [], "no-such-release-xyz", debug_dir="/nx")
    assert loc.looked_in == ["/lib/modules/no-such-release-xyz"]


def _cache_dir_entry(debug: Path, build_id: str, fixture: str) -> Path:
    """perf's layout: .build-id/xx/yyyy -> ../../<path>/<build id>/ holding "elf"."""
    held = debug / "lib" / "modules" / RELEASE / fixture / build_id
    put(fixture, held / "elf")
    link = debug / ".build-id" / build_id[:2] / build_id[2:]
    link.parent.mkdir(parents=True)
    link.symlink_to(os.path.relpath(held, link.parent))
    return held / "elf"


def test_build_id_cache_symlink_to_dir(tmp_path: Path) -> None:
    debug = tmp_path / "debug"
    elf = _cache_dir_entry(debug, NIC_ID, "demo_nic.ko")
    loc = find_module_file(
        "demo_nic", "/gone/demo_nic.ko", [str(tmp_path / "empty")], None, NIC_ID, str(debug)
    )
    assert loc.path == str(debug / ".build-id" / NIC_ID[:2] / NIC_ID[2:] / "elf")
    assert os.path.samefile(loc.path, elf)
    assert loc.build_id_match is True and loc.message is None
    assert loc.looked_in[-1] == str(debug / ".build-id" / NIC_ID[:2] / NIC_ID[2:])
    # Upper-case ids and perf's zero padding find the same entry.
    padded = find_module_file("demo_nic", None, [], None, NIC_ID.upper(), str(debug))
    assert padded.build_id_match is True


def test_build_id_cache_plain_file_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    debug = tmp_path / "dbg"
    f = put("demo_crc.ko", debug / ".build-id" / CRC_ID[:2] / CRC_ID[2:])
    monkeypatch.setenv("PERF_BUILDID_DIR", str(debug))
    loc = find_module_file("demo_crc", None, [], None, build_id=CRC_ID)
    assert loc.path == str(f) and loc.build_id_match is True


def test_build_id_never_escapes_cache(tmp_path: Path) -> None:
    loc = find_module_file("demo_crc", None, [], None, "../../etc/passwd", str(tmp_path))
    assert loc.path is None and loc.looked_in == []


def test_mismatch_then_match_later(tmp_path: Path) -> None:
    # A wrong file under the right name first, the right one in the cache.
    put("demo_crc.ko", tmp_path / "mods" / "demo_nic.ko")
    debug = tmp_path / "debug"
    _cache_dir_entry(debug, NIC_ID, "demo_nic.ko")
    loc = find_module_file("demo_nic", None, [str(tmp_path / "mods")], None, NIC_ID, str(debug))
    assert loc.build_id_match is True and loc.path is not None and "debug" in loc.path


def test_mismatch_only(tmp_path: Path) -> None:
    first = put("demo_crc.ko", tmp_path / "a" / "demo_nic.ko")
    put("demo-kvm.ko", tmp_path / "b" / "demo_nic.ko")
    loc = find_module_file(
        "demo_nic",
        None,
        [str(tmp_path / "a"), str(tmp_path / "b")],
        None,
        NIC_ID,
        str(tmp_path / "nocache"),
    )
    assert loc.path == str(first) and loc.build_id_match is False
    assert loc.message is not None
    assert "build id mismatch" in loc.message and CRC_ID in loc.message and NIC_ID in loc.message
    assert len(loc.looked_in) == 3  # a, b and the cache entry


def test_file_without_build_id(tmp_path: Path) -> None:
    data = bytearray((MODDIR / "demo_nic.ko").read_bytes())
    note = data.index(b"GNU\0") - 12  # the NT_GNU_BUILD_ID note header
    struct.pack_into("<I", data, note + 8, 0x4242)
    p = tmp_path / "mods" / "demo_nic.ko"
    p.parent.mkdir()
    p.write_bytes(bytes(data))
    loc = find_module_file("demo_nic", None, [str(p.parent)], None, NIC_ID, str(tmp_path / "n"))
    assert loc.path == str(p) and loc.build_id_match is None
    assert loc.module is not None and loc.module.build_id is None
    assert loc.message and "no build id" in loc.message
    # A real match elsewhere wins over the unknown one.
    good = put("demo_nic.ko.gz", tmp_path / "more" / "demo_nic.ko.gz")
    loc = find_module_file("demo_nic", None, [str(p.parent), str(tmp_path / "more")], None, NIC_ID)
    assert loc.path == str(good) and loc.build_id_match is True


def test_not_found_message(tmp_path: Path) -> None:
    a, b = tmp_path / "a", tmp_path / "b"
    a.mkdir()
    root = tmp_path / "lm"
    loc = find_module_file(
        "kvm_amd",
        "/lib/modules/x/kvm-amd.ko",
        [str(a), str(b)],
        RELEASE,
        build_id=NIC_ID,
        debug_dir=str(tmp_path / "dbg"),
        lib_modules_root=str(root),
    )
    places = [
        "/lib/modules/x/kvm-amd.ko",
        str(a),
        str(b),
        str(root / RELEASE),
        str(tmp_path / "dbg" / ".build-id" / NIC_ID[:2] / NIC_ID[2:]),
    ]
    assert loc.path is None and loc.build_id_match is None and loc.looked_in == places
    assert loc.message == f"module file not found (looked in: {', '.join(places)})"


def test_unreadable_candidates_are_reported(tmp_path: Path) -> None:
    bad = tmp_path / "m" / "demo_nic.ko"
    bad.parent.mkdir()
    bad.write_text("not elf")
    loc = find_module_file("demo_nic", None, [str(bad.parent)], None, NIC_ID, str(tmp_path / "d"))
    assert loc.path is None
    assert loc.message is not None and "unreadable" in loc.message and "not an ELF" in loc.message
    # Without a build id the first file is returned unchecked (the caller loads it).
    assert find_module_file("demo_nic", None, [str(bad.parent)], None).path == str(bad)


def test_non_files_skipped_and_loops_end(tmp_path: Path) -> None:
    mods = tmp_path / "mods"
    (mods / "demo_nic.ko").mkdir(parents=True)  # a directory with the right name
    os.mkfifo(mods / "demo_nic.ko.xz")
    (mods / "loop").symlink_to(mods)  # not followed
    (mods / "deeper").mkdir()
    target = put("demo_nic.ko.zst", mods / "deeper" / "demo_nic.ko.zst")
    loc = find_module_file("demo_nic", None, [str(mods)], None)
    assert loc.path == str(target)


def test_walk_limits(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    deep = tmp_path / "d"
    p = deep
    for i in range(6):
        p = p / f"l{i}"
    put("demo_crc.ko", p / "demo_crc.ko")
    assert find_module_file("demo_crc", None, [str(deep)], None).path is not None
    monkeypatch.setattr(klocate, "WALK_DEPTH", 3)
    assert find_module_file("demo_crc", None, [str(deep)], None).path is None
    monkeypatch.setattr(klocate, "WALK_DEPTH", 16)
    wide = tmp_path / "w"
    for i in range(30):
        (wide / f"x{i:02d}").mkdir(parents=True)
    put("demo_crc.ko", wide / "x29" / "sub" / "demo_crc.ko")
    monkeypatch.setattr(klocate, "WALK_LIMIT", 10)
    loc = find_module_file("demo_crc", None, [str(wide)], None)
    assert (
        loc.path is None and loc.message is not None and "stopped after 10 entries" in loc.message
    )


def test_modules_dir_may_be_a_file(tmp_path: Path) -> None:
    f = put("demo-kvm.ko", tmp_path / "demo-kvm.ko")
    assert find_module_file("demo_kvm", None, [str(f)], None).path == str(f)
    assert find_module_file("demo_nic", None, [str(f)], None).path is None
