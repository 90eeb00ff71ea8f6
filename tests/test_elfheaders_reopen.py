"""ELF headers read once per file: a file opened again unchanged gives the same headers, a
file changed in place gives its new ones (readelf is the oracle for both)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from pathlib import Path

from conftest import skip_or_fail
from perftui.symbols.files.elfheaders import open_elf_headers


def readelf_sections(path: Path) -> list[tuple[str, int, int]]:
    """(name, offset, size) of each section, from ``readelf -SW``."""
    if shutil.which("readelf") is None:
        skip_or_fail("readelf is not on the PATH")
    out = subprocess.run(["readelf", "-SW", str(path)], capture_output=True, text=True,
                         check=True).stdout
    rows = []
    for line in out.splitlines():
        line = line.strip()
        if not line.startswith("[") or line.startswith("[Nr]"):
            continue
        fields = line[line.index("]") + 1:].split()
        if fields[0] == "NULL":
            fields.insert(0, "")
        rows.append((fields[0], int(fields[3], 16), int(fields[4], 16)))
    return rows


def ours(path: Path) -> list[tuple[str, int, int]]:
    with open_elf_headers(str(path)) as img:
        return [(s.name, s.offset, s.size) for s in img.sections]


def test_reopened_and_rewritten_files(tmp_path: Path) -> None:
    a, b = Path("/bin/true"), Path("/bin/ls")
    if not (a.is_file() and b.is_file()):
        skip_or_fail("no /bin/true or /bin/ls")
    p = tmp_path / "lib.so"
    shutil.copyfile(a, p)
    want_a = readelf_sections(p)
    assert ours(p) == want_a and ours(p) == want_a  # read, then known
    link = tmp_path / "other-name.so"
    os.link(p, link)  # the same file under another name
    with open_elf_headers(str(link)) as img:
        assert img.path == str(link)
        assert [(s.name, s.offset, s.size) for s in img.sections] == want_a
    time.sleep(0.01)
    shutil.copyfile(b, p)  # rewritten in place: new content, same inode
    want_b = readelf_sections(p)
    assert want_b != want_a
    assert ours(p) == want_b
