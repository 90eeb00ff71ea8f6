"""Strings from a recording never reach the terminal as markup or control sequences."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from perftui.perfdata import EventAttr, Feature, Sample
from perftui.perfdata.constants import Misc
from perftui.perfdata.writer import Writer
from perftui.textsafe import safe

EVIL_COMM = b"[bold red]x\x1b[31mred\x1b]0;pwned\x07\xff\xfe"
EVIL_PATH = "/lib/modules/[link=http://evil]x\x1b[2J\u202e.ko"
EVIL_SECTION = ".text\x1b[5m[blink]"
EVIL_HOST = "host\x1b]52;c;ZXZpbA==\x07[reverse]"


def hostile(path: Path) -> Path:
    attr = EventAttr(type=1, size=128, sample_type=int(Sample.IP | Sample.TID | Sample.TIME
                     | Sample.PERIOD), flags=1 << 18, ids=[1], name="cpu\x1b[1m-clock")
    feats = {Feature.HOSTNAME: EVIL_HOST, Feature.OSRELEASE: "6.1\x00\x1b[H",
             Feature.CMDLINE: ["perf", "record", "--", "sh", "-c", "echo \x1b[31mhi\n"],
             Feature.EVENT_DESC: True}
    with open(path, "wb") as f:
        w = Writer(f, [attr], feats)
        b = w.b
        w.write(b.kernel("MMAP", {"pid": -1, "tid": 0, "addr": 0xFFFFFFFFC0000000,
                                  "len": 0x1000, "pgoff": 0, "filename": EVIL_PATH},
                         misc=Misc.KERNEL))
        w.write(b.kmod_sec_map(EVIL_SECTION, EVIL_PATH, 0xFFFFFFFFC0001000, 0x100, 0))
        w.write(b.kernel("COMM", {"pid": 5, "tid": 5, "comm": EVIL_COMM}))
        for i in range(3):
            w.write(b.sample({"ip": 0xFFFFFFFFC0001000 + i, "pid": 5, "tid": 5, "time": 10 + i,
                              "period": 1}, misc=Misc.KERNEL))
        w.close()
    return path


def run(*args: str) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([sys.executable, "-m", "perftui", *args], capture_output=True,
                          timeout=60)


def assert_clean(out: bytes) -> None:
    for bad in (b"\x1b", b"\x07", b"\x9b", "\u202e".encode()):
        assert bad not in out, bad


@pytest.mark.parametrize("cmd", [["info"], ["dump"], ["sections", "--symbols"]])
def test_text_outputs_escape_everything(tmp_path: Path, cmd: list[str]) -> None:
    p = hostile(tmp_path / "evil.data")
    r = run(*cmd, str(p))
    assert r.returncode == 0, r.stderr
    assert_clean(r.stdout)
    assert_clean(r.stderr)
    text = r.stdout.decode()
    if cmd[0] == "dump":
        assert "[bold red]x\\x1b[31mred\\x1b]0;pwned\\x07" in text  # shown literally
    if cmd[0] == "info":
        assert "host\\x1b]52;c;ZXZpbA==\\x07[reverse]" in text
    if cmd[0] == "sections":
        assert "[link=http://evil]x\\x1b[2J\\u202e.ko" in text


@pytest.mark.parametrize("cmd", ["info", "dump", "sections"])
def test_json_outputs_are_valid_and_escaped(tmp_path: Path, cmd: str) -> None:
    p = hostile(tmp_path / "evil.data")
    r = run(cmd, "--json", str(p))
    assert r.returncode == 0
    assert_clean(r.stdout)
    for line in r.stdout.decode().splitlines():
        json.loads(line)


def test_error_messages_escape_the_file_name(tmp_path: Path) -> None:
    p = tmp_path / "bad\x1b[31m[bold].data"
    p.write_bytes(b"garbage that is not a recording" * 4)
    r = run("info", str(p))
    assert r.returncode == 1
    assert_clean(r.stderr)
    assert b"\\x1b[31m[bold]" in r.stderr


def test_safe() -> None:
    assert safe("a\x1bb\tc\nd\x7f\x85\u2028") == "a\\x1bb\\x09c\\x0ad\\x7f\\x85\\u2028"
    assert safe("x" * 50, 10) == "x" * 9 + "…"
    assert safe("bad \udcff byte") == "bad \\udcff byte"


@pytest.mark.parametrize("cmd", [["report", "-s", "comm,dso"], ["diff", "-s", "comm,dso"]])
def test_a_tab_separated_table_escapes_its_cells_not_its_tabs(tmp_path: Path,
                                                              cmd: list[str]) -> None:
    """``-t $'\\t'`` on a recording of hostile names: every cell is made safe, each row
    keeps its tabs (the whole line made safe wrote them as ``\\x09``)."""
    p = hostile(tmp_path / "evil.data")
    files = [str(p), str(p)] if cmd[0] == "diff" else [str(p)]
    r = run(*cmd, "-t", "\t", *files)
    assert r.returncode == 0, r.stderr
    assert_clean(r.stdout)
    text = r.stdout.decode()
    rows = [ln for ln in text.splitlines() if ln and not ln.startswith("#")]
    tabs = 3 if cmd[0] == "diff" else 2  # (Baseline, Delta, comm, dso; Overhead, comm, dso)
    assert rows and all(ln.count("\t") == tabs for ln in rows), rows
    assert "\\x09" not in text
    assert any("\\x1b[31mred" in ln for ln in rows), rows
