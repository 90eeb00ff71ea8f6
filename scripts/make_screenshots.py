#!/usr/bin/env python3
"""Regenerate ``screenshots/*.svg`` and ``screenshots/*.png`` from the bundled demo.

The app runs headless (``App.run_test``) at 120x40 on the demo recording, generated into a
temporary directory as ``perf.data`` (the name the header shows); each screen is saved with
``save_screenshot``.  ``diff`` is the diff browser on the demo before and after its driver
patch (``perf.data.old`` and ``perf.data``, the names ``perftui diff`` takes by default).
PNGs are made with ``rsvg-convert`` when it is installed.

    python scripts/make_screenshots.py [--out DIR] [--only NAME ...]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

os.environ.setdefault("TEXTUAL_ANIMATIONS", "none")  # before textual is imported

from perftui.demo import MODULES_DIR, demo_kallsyms
from perftui.demo.generate import PATCHED_SEED, generate
from perftui.perfdata import open_recording
from perftui.symbols.naming.resolver import SymbolOptions
from perftui.ui.app import PerftuiApp
from perftui.ui.widgets.panes import SectionsPane

ROOT = Path(__file__).resolve().parents[1]
SIZE = (120, 40)
# name -> keys; "type:TEXT" types TEXT key by key
SHOTS: dict[str, list[str]] = {
    "main": [],
    "sections": ["m"],
    "section": ["m", "down", "enter"],
    "samples": ["m", "down", "enter", "enter"],
    "timeline": ["T", *["right"] * 24, *["shift+right"] * 30],
    "filter": ["slash", "type:type=SAMPLE cpu=1 section=.noinstr.text"],
    "help": ["question_mark"],
    "info": ["i"],
    "annotate": ["m", "down", "enter", "a"],
    "diff": [],  # the diff browser (see shoot_diff)
    "profile": ["p"],
    "calltrees": ["p", "down", "down", "enter"],
    "flame": ["f", "down", "right", "down", "down", "down"],
}


#: what perftui --demo reads: the demo modules and the demo kernel's kallsyms
DEMO_SYMBOLS = SymbolOptions(kallsyms=str(demo_kallsyms()), modules_dirs=[str(MODULES_DIR)])


async def shoot(recording: Path, name: str, keys: list[str], out: Path) -> Path:
    rec = open_recording(recording.name)
    app = PerftuiApp(rec, [str(MODULES_DIR)], symbols=DEMO_SYMBOLS)
    try:
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + 60
            while not (app.model.done and app.query_one(SectionsPane).entry_of_row):
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name}: indexing the demo did not finish")
                await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            await pilot.pause()
            for key in keys:
                if key.startswith("type:"):
                    await pilot.press(*key[5:])
                else:
                    await pilot.press(key)
                await pilot.pause()
                await app.workers.wait_for_complete()  # annotate, the profile views
                await pilot.pause()
                await pilot.pause()
            calm = 0  # the row selected in a pane, drawn in the timeline (twice in a row)
            while calm < 2:
                if time.monotonic() > deadline + 60:
                    raise SystemExit(f"{name}: the selected row was not drawn")
                await app.workers.wait_for_complete()
                await pilot.pause(0.05)
                calm = 0 if app.selection_pending() else calm + 1
            app.clear_notifications()  # a passing note: not part of the screen shown
            await pilot.pause(0.1)
            svg = out / f"{name}.svg"
            app.save_screenshot(filename=svg.name, path=str(out))
    finally:
        rec.close()
    keep_spaces(svg)
    return svg


async def shoot_diff(name: str, keys: list[str], out: Path) -> Path:
    """The diff browser on perf.data.old (the demo) and perf.data (its patched run)."""
    from perftui.ui.diffapp import DiffApp
    from perftui.ui.diffmodel import DiffModel

    old, new = open_recording("perf.data.old"), open_recording("perf.data")
    app = DiffApp(DiffModel.of(old, new, [str(MODULES_DIR)], DEMO_SYMBOLS))
    try:
        async with app.run_test(size=SIZE) as pilot:
            deadline = time.monotonic() + 60
            while not (app.model.ready and app.diff is not None and not app.comparing):
                if time.monotonic() > deadline:
                    raise SystemExit(f"{name}: the diff of the demo did not show")
                await pilot.pause(0.05)
            await app.workers.wait_for_complete()
            await pilot.pause()
            for key in keys:
                await pilot.press(key)
                await pilot.pause()
            await pilot.pause(0.1)
            svg = out / f"{name}.svg"
            app.save_screenshot(filename=svg.name, path=str(out))
    finally:
        old.close()
        new.close()
    return svg


def keep_spaces(svg: Path) -> None:
    """librsvg (and some other viewers) collapse the leading spaces of each <text> run
    unless told to keep them; browsers keep them either way."""
    text = svg.read_text()
    text = text.replace('<svg class="rich-terminal"', '<svg xml:space="preserve" '
                        'class="rich-terminal"', 1)
    svg.write_text(text)


def to_png(svg: Path, rsvg: str) -> Path:
    png = svg.with_suffix(".png")
    subprocess.run([rsvg, "-o", str(png), str(svg)], check=True)
    return png


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, default=ROOT / "screenshots")
    ap.add_argument("--only", nargs="+", choices=list(SHOTS), metavar="NAME")
    args = ap.parse_args()
    out: Path = args.out.resolve()
    out.mkdir(parents=True, exist_ok=True)
    rsvg = shutil.which("rsvg-convert")
    if rsvg is None:
        print("rsvg-convert not found (librsvg2-bin): writing SVG only, no PNG",
              file=sys.stderr)
    here = os.getcwd()
    with tempfile.TemporaryDirectory(prefix="perftui-shots-") as tmp:
        recording = generate(Path(tmp) / "perf.data")
        os.chdir(tmp)  # the header and the info screen show "perf.data"
        try:
            for name in args.only or SHOTS:
                if name == "diff":
                    with tempfile.TemporaryDirectory(prefix="perftui-diff-") as d:
                        os.chdir(d)
                        generate(Path(d) / "perf.data.old")
                        generate(Path(d) / "perf.data", PATCHED_SEED, patched=True)
                        svg = asyncio.run(shoot_diff(name, SHOTS[name], out))
                        keep_spaces(svg)
                        os.chdir(tmp)
                else:
                    svg = asyncio.run(shoot(recording, name, SHOTS[name], out))
                made = [svg]
                if rsvg is not None:
                    made.append(to_png(svg, rsvg))
                print("  ".join(str(p.relative_to(out.parent)) for p in made))
        finally:
            os.chdir(here)
    return 0


if __name__ == "__main__":
    sys.exit(main())
