"""Build ids from runs of ELF notes, against note bytes assembled here by hand
(``Elf_Nhdr``: namesz, descsz, type as 32-bit words; name and desc padded to 4 bytes)."""

from __future__ import annotations

import struct

from perftui.symbols.files.elfheaders import note_build_id

NT_GNU_BUILD_ID = 3
ID = bytes(range(0x10, 0x24))  # 20 bytes, as a SHA-1 build id


def note(name: bytes, typ: int, desc: bytes, endian: str = "<",
         namesz: int | None = None, descsz: int | None = None) -> bytes:
    pad = lambda b: b + b"\0" * (-len(b) % 4)  # noqa: E731
    head = struct.pack(endian + "III", len(name) if namesz is None else namesz,
                       len(desc) if descsz is None else descsz, typ)
    return head + pad(name) + pad(desc)


def test_first_gnu_build_id_after_other_notes() -> None:
    """As in /sys/kernel/notes: Xen and Linux notes first, then the GNU build id."""
    data = (note(b"Xen\0", NT_GNU_BUILD_ID, b"\1\2\3") + note(b"Linux\0", 1, b"6.1\0")
            + note(b"GNU\0", 1, b"\0" * 16) + note(b"GNU\0", NT_GNU_BUILD_ID, ID)
            + note(b"GNU\0", NT_GNU_BUILD_ID, b"\xff" * 20))
    assert note_build_id(data) == ID.hex()


def test_big_endian_notes() -> None:
    data = note(b"GNU\0", NT_GNU_BUILD_ID, ID, ">")
    assert note_build_id(data, ">") == ID.hex()
    assert note_build_id(data, "<") is None  # read little-endian: no such note


def test_what_is_no_build_id() -> None:
    assert note_build_id(b"") is None
    assert note_build_id(note(b"GNU\0", NT_GNU_BUILD_ID, b"")) is None  # empty id
    # the name must be exactly "GNU" with its NUL (perf: n_namesz == sizeof("GNU"))
    assert note_build_id(note(b"GNU\0\0\0\0\0", NT_GNU_BUILD_ID, ID, namesz=8)) is None
    assert note_build_id(note(b"GNUX", NT_GNU_BUILD_ID, ID)) is None
    # an id cut short by the end of the data, a header that claims 4 GiB
    assert note_build_id(note(b"GNU\0", NT_GNU_BUILD_ID, ID)[:-4]) is None
    assert note_build_id(note(b"GNU\0", NT_GNU_BUILD_ID, ID, descsz=2**32 - 1)) is None
    assert note_build_id(b"\xff" * 40) is None
