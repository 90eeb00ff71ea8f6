"""docs/modules.md lists every module of perftui/, and only those (the oracle: the files
on disk; scripts/module_index.py writes the list)."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent


def listed() -> set[str]:
    out: set[str] = set()
    pkg = ""
    for line in (ROOT / "docs" / "modules.md").read_text(encoding="utf-8").splitlines():
        if m := re.match(r"## `perftui/(.*)`$", line):
            pkg = m.group(1)
        elif m := re.match(r"- `([\w]+\.py)`: ", line):
            out.add(f"perftui/{pkg}{m.group(1)}")
    return out


def test_every_module_is_listed_and_no_other() -> None:
    on_disk = {str(p.relative_to(ROOT)) for p in (ROOT / "perftui").rglob("*.py")}
    docs = listed()
    fix = "run scripts/module_index.py"
    assert not on_disk - docs, f"not in docs/modules.md ({fix}): {sorted(on_disk - docs)}"
    assert not docs - on_disk, f"in docs/modules.md, not on disk ({fix}): {sorted(docs - on_disk)}"


def test_architecture_stays_short() -> None:
    lines = (ROOT / "docs" / "architecture.md").read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, (f"docs/architecture.md: {len(lines)} lines (the design only; "
                               "figures go in docs/performance.md, modules in docs/modules.md)")
