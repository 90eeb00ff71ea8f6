"""The core never imports textual or rich (DESIGN.md §3)."""

from __future__ import annotations

import subprocess
import sys

import pytest


@pytest.mark.parametrize("module", ["perftui.perfdata", "perftui.analysis.summary",
                                    "perftui.analysis.text", "perftui.kmod.report",
                                    "perftui.analysis.sections", "perftui.demo.generate",
                                    "perftui.cli", "perftui.textsafe"])
def test_core_is_headless(module: str) -> None:
    code = (f"import sys, {module}; "
            "bad = [m for m in sys.modules if m.split('.')[0] in ('textual', 'rich')]; "
            "print(bad); sys.exit(1 if bad else 0)")
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
