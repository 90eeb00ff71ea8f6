"""The real app in a real terminal: tmux runs it, send-keys types, capture-pane reads the screen.

Each test uses a private tmux server (``-L``) and kills its session and server at the end.
"""

from __future__ import annotations

import contextlib
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

from perftui.demo import MODULES_DIR as MODULES
from perftui.demo.generate import DemoPlan, write_demo

TMUX = shutil.which("tmux")
pytestmark = [pytest.mark.needs("tmux"), pytest.mark.slow]  # a real terminal each
PERFTUI = f"{shlex.quote(sys.executable)} -m perftui"
# The tmux server passes its environment on to the app.  Something in the test process
# (curses, via putenv) may have set COLUMNS/LINES behind os.environ's back: the app would
# take those over the pane's size.  os.environ itself does not have them.
CLEAN_ENV = {k: v for k, v in os.environ.items() if k not in ("COLUMNS", "LINES", "TMUX")}


class Term:
    """One tmux session (100x30 unless told) on a private server."""

    def __init__(self, command: str, env: dict[str, str], tmp: Path,
                 size: tuple[int, int] = (100, 30)) -> None:
        self.sock = f"perftui-test-{uuid.uuid4().hex[:8]}"
        self.name = "perftui"
        conf = tmp / "tmux.conf"
        # keep the pane after the app exits, to read its exit status
        conf.write_text("set -g remain-on-exit on\nset -g history-limit 100\n")
        args = ["new-session", "-d", "-s", self.name, "-x", str(size[0]), "-y", str(size[1])]
        for k, v in env.items():
            args += ["-e", f"{k}={v}"]
        # the shell writes the exit status down: tmux 3.3 leaves #{pane_dead_status} empty
        # after a program that used the alternate screen exits
        self.status_file = tmp / f"status-{self.sock}"
        self.tmux("-f", str(conf), *args, f"{command}; echo $? > {self.status_file}")

    def tmux(self, *args: str) -> str:
        assert TMUX is not None
        return subprocess.run([TMUX, "-L", self.sock, *args], check=True, text=True,
                              capture_output=True, timeout=60, env=CLEAN_ENV).stdout

    def keys(self, *keys: str) -> None:
        self.tmux("send-keys", "-t", self.name, *keys)

    def screen(self, escapes: bool = False, joined: bool = False) -> str:
        """The pane's text (``joined``: wrapped lines joined, as the program wrote them)."""
        return self.tmux("capture-pane", "-p", *(["-e"] if escapes else []),
                         *(["-J", "-S", "-100"] if joined else []), "-t", self.name)

    def pane(self, fmt: str) -> str:
        return self.tmux("display-message", "-p", "-t", self.name, fmt).strip()

    def wait(self, ok: Callable[[str], object], what: str, timeout: float = 90.0) -> str:
        """The screen once ``ok(screen)`` holds; fails with the last screen after timeout."""
        deadline = time.monotonic() + timeout
        while True:
            text = self.screen()
            if ok(text):
                return text
            if self.pane("#{pane_dead}") == "1" or time.monotonic() > deadline:
                pytest.fail(f"waiting for {what}; the screen was:\n{text}")
            time.sleep(0.1)

    def wait_for(self, *needles: str, timeout: float = 90.0) -> str:
        return self.wait(lambda s: all(n in s for n in needles), " and ".join(needles), timeout)

    def wait_exit(self, timeout: float = 30.0) -> int:
        deadline = time.monotonic() + timeout
        while self.pane("#{pane_dead}") != "1":
            if time.monotonic() > deadline:
                pytest.fail(f"the app did not exit; the screen was:\n{self.screen()}")
            time.sleep(0.1)
        for _ in range(100):
            text = self.status_file.read_text() if self.status_file.exists() else ""
            if text.strip():
                return int(text)
            time.sleep(0.05)
        pytest.fail(f"no exit status; the screen was:\n{self.screen(joined=True)}")

    def close(self) -> None:
        for args in (("kill-session", "-t", self.name), ("kill-server",)):
            with contextlib.suppress(subprocess.CalledProcessError, subprocess.TimeoutExpired):
                self.tmux(*args)


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    """What ``--demo`` shows: the generator's plan for the same (default) seed."""
    return write_demo(tmp_path_factory.mktemp("plan") / "demo.data")


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Callable[[str], Term]]:
    made: list[Term] = []
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TEXTUAL_ANIMATIONS": "none"}

    def start(command: str) -> Term:
        t = Term(command, env, tmp_path)
        made.append(t)
        return t

    yield start
    for t in made:
        t.close()


def line_with(screen: str, needle: str) -> str:
    return next((ln for ln in screen.splitlines() if needle in ln), "")


def test_demo_drill_down_end_to_end(term: Callable[[str], Term], plan: DemoPlan) -> None:
    records, samples = f"{plan.total:,} records", f"{plan.samples:,} samples"
    top = f'{plan.in_symbols["demo-kvm", ".noinstr.text", "__demo_svm_vcpu_run"]:,}'
    t = term(f"{PERFTUI} --demo")
    # indexed: counts in the header, the section pane filled from KMOD_SEC_MAP
    main = t.wait_for(records, samples, "module sections · KMOD_SEC_MAP", "[demo_kvm]")
    assert "indexing" not in main
    assert "timeline" in main and "KMOD_SEC_MAP .bss" in main
    # m: the section pane has the focus, the footer offers its key
    t.keys("m")
    t.wait_for("Drill in")
    before = t.screen(escapes=True)
    # down: the cursor leaves the module line for its busiest section (only colours change)
    # (wait for that line: the header may change meanwhile, "naming samples… N%")
    t.keys("Down")
    t.wait(lambda _s: line_with(t.screen(escapes=True), ".noinstr.text")
           != line_with(before, ".noinstr.text"), "the cursor to move")
    # enter: the section's symbols, by CPU, by process
    t.keys("Enter")
    # (the symbols pane says "naming the samples…" until the names pass is over)
    sec = t.wait_for("[demo_kvm].noinstr.text", "symbols", "by CPU", "by process",
                     "__demo_svm_vcpu_run", top, "qemu-system-x86")
    assert "naming the samples" not in sec
    # enter: the samples of the top symbol
    t.keys("Enter")
    sam = t.wait_for("__demo_svm_vcpu_run", "in [demo_kvm].noinstr.text", f"{top} samples",
                     "__demo_svm_vcpu_run+0x")
    first = re.search(r"^\W*(\d+\.\d{6})\s+(\d+)\s+\d+/\d+\s+CPU \d/KVM\s+"
                      r"__demo_svm_vcpu_run\+0x[0-9a-f]+\s+(0x[0-9a-f]+)", sam, re.M)
    assert first, sam
    when, ip = first.group(1), first.group(3)
    # enter: back in the record list, on that sample
    t.keys("Enter")
    back = t.wait_for("detail: SAMPLE", f"ip: {ip}", records)
    # the line names the symbol first (the ip follows, past the edge at 100 columns); until the
    # names pass ends it shows the section form, so wait for the names to land
    back = t.wait(lambda s: "[k] __demo" in line_with(s, f" {when} "), "the named sample line")
    assert "SAMPLE" in line_with(back, f" {when} "), back
    assert "CPU 0/KVM" in back
    # q is back one level: the samples list, the section, the main screen; then it quits
    t.keys("q")
    t.wait_for("in [demo_kvm].noinstr.text", f"{top} samples")
    t.keys("q")
    t.wait_for("[demo_kvm].noinstr.text", "by CPU", "by process")
    t.keys("q")
    t.wait_for(records, "timeline")
    t.keys("q")
    assert t.wait_exit() == 0


def test_annotate_end_to_end(term: Callable[[str], Term], plan: DemoPlan) -> None:
    """m, Down, Enter, a: the hottest .noinstr.text function annotated at its load address (the
    generator's plan), n and Enter move, Esc goes back to the symbols, q quits."""
    top = plan.in_symbols["demo-kvm", ".noinstr.text", "__demo_svm_vcpu_run"]
    load, _ = plan.placed["demo-kvm", ".noinstr.text"]
    t = term(f"{PERFTUI} --demo")
    t.wait_for(f"{plan.samples:,} samples", "[demo_kvm]")
    t.keys("m")
    t.wait_for("Drill in")
    before = t.screen(escapes=True)
    t.keys("Down")  # from the module's line to its busiest section
    t.wait(lambda _s: t.screen(escapes=True) != before, "the cursor to move")
    t.keys("Enter")
    t.wait_for("[demo_kvm].noinstr.text", "symbols", "Annotate")
    t.keys("a")
    ann = t.wait_for("__demo_svm_vcpu_run", f"{top:,} samples", "instruction", "Next hot")
    nm = subprocess.run(["nm", "--defined-only", str(MODULES / "demo-kvm.ko")],
                        capture_output=True, text=True, check=True).stdout
    off = next(int(ln.split()[0], 16) for ln in nm.splitlines()
               if ln.endswith(" __demo_svm_vcpu_run"))
    assert f"{load + off:#x}" in ann  # at the section's load address + nm's offset
    assert "demo_kvm_vmrun.c:" in ann  # source lines
    t.keys("s")
    t.wait(lambda s: "demo_kvm_vmrun.c:" not in s, "the source lines to go")
    t.keys("Escape")
    t.wait_for("symbols", "by CPU", "by process")
    t.keys("q", "q")
    assert t.wait_exit() == 0


def test_escape_and_q_go_back_one_level(term: Callable[[str], Term], plan: DemoPlan) -> None:
    records = f"{plan.total:,} records"
    t = term(f"{PERFTUI} --demo")
    t.wait_for(records, "[demo_kvm]")
    t.keys("i")
    t.wait_for("recording information", "perf version")
    t.keys("q")  # back, not out
    t.wait_for(records, "timeline")
    t.keys("?")
    t.wait_for("keys", "record list (here)", "everywhere")
    t.keys("Escape")
    t.wait_for(records, "timeline")
    t.keys("q")
    assert t.wait_exit() == 0


@pytest.mark.perf
def test_pipe_from_perf_record(term: Callable[[str], Term], tmp_path: Path) -> None:
    """Records from the pipe, keys from the terminal."""
    work = "dd if=/dev/zero of=/dev/null bs=1k count=300000"
    t = term(f"perf record -q -o - -e cpu-clock -F 999 -- {work} 2>/dev/null "
             f"| {PERFTUI} -")

    def indexed(screen: str) -> bool:
        m = re.search(r"([\d,]+) records\s+([\d,]+) samples", screen)
        busy = "indexing" in screen or "reading the pipe" in screen  # the live pipe's word
        return bool(m) and not busy and int(m.group(1).replace(",", "")) > 0

    head = t.wait(indexed, "the pipe to be indexed").splitlines()[0]
    m = re.search(r"([\d,]+) records\s+([\d,]+) samples", head)
    assert m and int(m.group(2).replace(",", "")) > 0, head
    assert " - " in head or "perftui  -" in head  # the recording is the pipe
    t.keys("i")
    t.wait_for("recording information", "pipe")
    t.keys("q")
    t.wait_for("records", "timeline")
    t.keys("q")
    assert t.wait_exit() == 0


def test_a_crash_exits_non_zero_with_one_line(term: Callable[[str], Term], plan: DemoPlan,
                                              tmp_path: Path) -> None:
    """Issue 9 §1: an unhandled exception: status 3, one line naming the traceback file."""
    crash = ("import sys; import perftui.ui.widgets.records as r; "
             "r.RecordList.action_jump = lambda self, where: 1 / 0; "
             "from perftui.cli import main; sys.exit(main(['--demo']))")
    t = term(f"{shlex.quote(sys.executable)} -c {shlex.quote(crash)}")
    t.wait_for(f"{plan.total:,} records", "[demo_kvm]")
    t.keys("End")
    status = t.wait_exit(timeout=20)
    assert status == 3, t.screen(joined=True)
    lines = [ln for ln in t.screen(joined=True).splitlines() if ln.strip()]
    said = [ln for ln in lines if ln.startswith("perftui: internal error")]
    assert len(said) == 1, lines
    m = re.search(r"the full traceback is in (\S+)", said[0])
    assert m and "ZeroDivisionError" in said[0]
    assert not any("Traceback" in ln for ln in lines)
    text = Path(m.group(1)).read_text()
    assert "ZeroDivisionError: division by zero" in text and "in <lambda>" in text


def test_ctrl_c_quits(term: Callable[[str], Term], plan: DemoPlan) -> None:
    t = term(f"{PERFTUI} --demo")
    t.wait_for(f"{plan.total:,} records", "[demo_kvm]")
    t.keys("C-c")
    assert t.wait_exit() == 0


@pytest.mark.perf
def test_stop_indexing_never_blocks_perf_record(term: Callable[[str], Term],
                                                tmp_path: Path) -> None:
    """Issue 9 §6: x while perf record still writes: perf record finishes, perftui lives."""
    done = tmp_path / "perf-done"
    t = term(f"sh -c '(perf record -q -o - -a -e cpu-clock -F 4000 -- sleep 4 2>/dev/null; "
             f"echo $? > {done}) | {PERFTUI} -'")
    t.wait_for("reading the pipe", "(x stops)", timeout=20)
    t.keys("x")
    t.wait_for("stopped reading the pipe", timeout=20)
    deadline = time.monotonic() + 30
    while not done.exists() and time.monotonic() < deadline:
        time.sleep(0.2)
    assert done.exists(), f"perf record did not finish; the screen was:\n{t.screen()}"
    assert done.read_text().strip() == "0"
    t.wait_for("read to its end", timeout=20)
    t.keys("q")
    assert t.wait_exit() == 0
