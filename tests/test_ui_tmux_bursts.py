"""Type-ahead in a real terminal (issue 29): keys sent by tmux in one ``send-keys``, as they
arrive over a slow ssh link, lead to the screen the same keys typed slowly lead to.

The oracle is the slow run: the same keys on a fresh browser of the same recording, each
sent once the screen has not changed for a while (what the issue saw work: "with 50 ms
between keys all of these work").  The burst sends every key in one ``send-keys``.  Both
runs end on a screen that has stopped changing; the screens' text must be equal.

No burst has Escape right before a printable key: a terminal sends Alt+q as ESC q, and
Textual's parser reads ESC and a printable key in one read as that Alt key (``alt+q``), or
drops the ESC (ESC ``/`` is ``/``).  ESC before another escape sequence (an arrow) is two
keys.  (Seen here: Escape q in one send-keys went back one level, not two.)
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from test_ui_tmux import PERFTUI, Term

pytestmark = [pytest.mark.needs("tmux"), pytest.mark.slow]  # two terminals per case

STILL = 1.0  # seconds without a change of the screen: settled
TOAST = 3.5  # a toast the keys caused (timeout 3 s) is gone after this


@pytest.fixture
def term(tmp_path: Path) -> Iterator[Callable[[int], list[Term]]]:
    """``term(n)``: ``--demo`` in ``n`` new terminals, started together, once each one's
    recording is indexed and named and its screen has settled."""
    made: list[Term] = []
    env = {"XDG_CACHE_HOME": str(tmp_path / "cache"), "TEXTUAL_ANIMATIONS": "none"}

    def start(n: int) -> list[Term]:
        terms = [Term(f"{PERFTUI} --demo", env, tmp_path) for _ in range(n)]
        made.extend(terms)
        for t in terms:
            t.wait(lambda s: "[demo_kvm]" in s and not any(
                   w in s for w in ("indexing", "checking", "naming")),
                   "the demo indexed and named")
        settled_all(*terms)
        return terms

    yield start
    for t in made:
        t.close()


def settled(t: Term, still: float = STILL, timeout: float = 60.0) -> str:
    """The screen once it has not changed for ``still`` seconds (or the app has exited)."""
    return settled_all(t, still=still, timeout=timeout)[0]


def settled_all(*terms: Term, still: float = STILL, timeout: float = 60.0) -> list[str]:
    """Each terminal's screen once it has not changed for ``still`` seconds (or its app
    has exited: "exited"), the terminals watched together."""
    deadline = time.monotonic() + timeout
    last = [t.screen() for t in terms]
    since = [time.monotonic()] * len(terms)
    done = [False] * len(terms)
    while not all(done):
        if time.monotonic() > deadline:
            pytest.fail("a screen never settled; they were:\n" + "\n".join(last))
        time.sleep(0.1)
        for i, t in enumerate(terms):
            if done[i]:
                continue
            if t.pane("#{pane_dead}") == "1":
                last[i], done[i] = "exited", True
                continue
            now = t.screen()
            if now != last[i]:
                last[i], since[i] = now, time.monotonic()
            elif time.monotonic() - since[i] >= still:
                done[i] = True
    return last


# (what is typed slowly first, the keys of the burst): the issue's own, and every screen
# change and dialog (the pilot's tests/test_ui_typeahead.py has each apart)
CASES: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "m Enter: the section's drill-down": ((), ("m", "Enter")),
    "the filter prompt, cancelled, then typed and applied": (
        (), ("/", "cpu=1", "Escape", "Down", "/", "comm=iperf3", "Enter", "Down")),
    "the go-to prompt, help and info": (
        (), ("g", "0x3a4", "Enter", "?", "q", "i", "Escape", "Down")),
    "a section, its samples, a record and back": (
        (), ("m", "Down", "Enter", "Down", "Enter", "Enter", "Escape", "Up", "q", "Down")),
    "the profile, callers and callees, the flame graph, zoom, back": (
        (), ("p", "Down", "Enter", "f", "Down", "Enter", "Escape", "Right")),
    "annotate from the symbols": (("m", "Enter"), ("a", "n", "n", "Escape", "Down")),
}


@pytest.mark.parametrize("case", list(CASES))
def test_a_burst_through_tmux_does_what_slow_keys_do(term: Callable[[int], list[Term]],
                                                     case: str) -> None:
    """The slow run and the burst on two browsers side by side: the burst is sent at once
    and settles while the slow keys are typed one by one on the other."""
    before, keys = CASES[case]
    slow_t, fast_t = term(2)
    for key in before:
        slow_t.keys(key)
        fast_t.keys(key)
        settled_all(slow_t, fast_t)
    fast_t.keys(*keys)
    for key in keys:
        slow_t.keys(key)
        settled(slow_t)
    slow, fast = settled_all(slow_t, fast_t, still=TOAST)
    assert fast == slow, f"slow:\n{shown(slow_t, slow)}\nburst:\n{shown(fast_t, fast)}"


def shown(t: Term, screen: str) -> str:
    """A screen for a failure's message: an app that exited, with what it left."""
    if screen != "exited":
        return screen
    return f"exited ({t.wait_exit()}), the pane then:\n{t.screen(joined=True)}"


def test_q_q_in_the_flame_graph_quits(term: Callable[[int], list[Term]]) -> None:
    """``q q`` sent at once in the flame graph: back to the records, then out (issue 29:
    only one q was applied)."""
    (t,) = term(1)
    t.keys("f")
    t.wait_for("flame graph")
    settled(t)
    t.keys("q", "q")
    assert t.wait_exit() == 0


def test_keys_typed_while_it_starts_do_what_slow_keys_do(
        term: Callable[[int], list[Term]], tmp_path: Path) -> None:
    """Keys typed before the app has the terminal reach it through a terminal still in
    cooked mode, whose ICRNL makes Enter a line feed (Textual's ctrl+j): taken as Enter,
    ``p s … Enter`` typed at launch sorts the profile as typed slowly (the prompt stayed
    open before)."""
    keys = ("p", "s", "C-a", "C-k", *"sym", "Enter")
    env = {"XDG_CACHE_HOME": str(tmp_path / "early-cache"), "TEXTUAL_ANIMATIONS": "none"}
    fast_t = Term(f"{PERFTUI} --demo", env, tmp_path)
    try:
        fast_t.keys(*keys)  # at once, as the command starts
        (slow_t,) = term(1)
        for key in keys:
            slow_t.keys(key)
            settled(slow_t)
        fast_t.wait(lambda s: "sort " in s, "the profile")
        slow, fast = settled_all(slow_t, fast_t, still=TOAST)
        assert "sort sym" in slow
        assert fast == slow, f"slow:\n{shown(slow_t, slow)}\nburst:\n{shown(fast_t, fast)}"
    finally:
        fast_t.close()
