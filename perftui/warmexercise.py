"""Every compiled loop of the engines run once on the demo recording, with the compiled
engine (``PERFTUI_ENGINE=compiled``): the processing order, the names pass, the profile
groups, as the browser makes them (:mod:`perftui.warmcompile` runs it in a child process,
so numba keeps the machine code for the next runs)."""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path


def main() -> int:
    from .demo import MODULES_DIR
    from .demo.generate import write_demo
    from .perfdata import open_recording
    from .ui.model import Model

    with tempfile.TemporaryDirectory(prefix="perftui-warm-") as d:
        path = write_demo(Path(d) / "demo.data").path
        rec = open_recording(path)
        rec.build_index()
        model = Model(rec, [str(MODULES_DIR)])
        model.finish()
        model.build_names()
        rec.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
