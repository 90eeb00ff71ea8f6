"""Coverage-guided fuzzing with atheris (optional: ``pip install atheris``).

    python tests/atheris_fuzz.py -max_total_time=300 -rss_limit_mb=4096 CORPUS_DIR

Each input is written to a file and given to every consumer (``fuzzing.run_all``); the
corpus directory starts from the small seed recordings.  A crash leaves ``crash-*`` files
that become regression tests in ``tests/data/fuzz/``.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

import atheris

HERE = Path(__file__).parent
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(HERE.parent))

with atheris.instrument_imports():
    import perftui.analysis.sectionreport
    import perftui.analysis.summary
    import perftui.perfdata  # noqa: F401
    from fuzzing import SEEDS, run_all

CASE = os.path.join(tempfile.mkdtemp(prefix="perftui-atheris-"), "case.data")


def one(data: bytes) -> None:
    with open(CASE, "wb") as f:
        f.write(data)
    run_all(CASE)


if __name__ == "__main__":
    args = sys.argv[1:]
    corpus = next((a for a in args if not a.startswith("-")), None)
    if corpus:
        os.makedirs(corpus, exist_ok=True)
        for s in SEEDS:
            shutil.copy(HERE / s, Path(corpus) / Path(s).name)
    atheris.Setup([sys.argv[0], *args], one)
    atheris.Fuzz()
