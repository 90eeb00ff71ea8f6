"""Write docs/modules.md: every module of perftui/ with the first sentence of its docstring,
by package (``python scripts/module_index.py``; tests/test_docs.py checks every module is
listed, so run this after adding, moving or removing one)."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PKG = ROOT / "perftui"
OUT = ROOT / "docs" / "modules.md"

HEAD = """# Every module

One line per module of `perftui/`: the first sentence of its docstring, by package, in the
layer order of docs/architecture.md. Written by `scripts/module_index.py`; the tests check
that every module is here.
"""


def first_sentence(path: Path) -> str:
    """The first sentence of a module's docstring, on one line."""
    doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8"))) or ""
    text = " ".join(doc.split("\n\n")[0].split())
    m = re.match(r"(.+?[.:;])(\s|$)", text)
    return (m.group(1) if m else text).rstrip(":;") or "(no docstring)"


def packages() -> dict[str, list[Path]]:
    """Modules by their package's path under perftui/ ('' for the top)."""
    out: dict[str, list[Path]] = {}
    for p in sorted(PKG.rglob("*.py")):
        rel = p.relative_to(PKG)
        out.setdefault(str(rel.parent) if rel.parent != Path(".") else "", []).append(p)
    return out


ORDER = ["perfdata", "symbols", "analysis", "present", "ui", "cli", "demo", ""]


def rank(pkg: str) -> tuple[int, str]:
    top = pkg.split("/")[0]
    return (ORDER.index(top) if top in ORDER else len(ORDER), pkg)


def render() -> str:
    lines = [HEAD]
    for pkg in sorted(packages(), key=rank):
        lines.append(f"\n## `perftui/{pkg + '/' if pkg else ''}`\n")
        for p in packages()[pkg]:
            lines.append(f"- `{p.name}`: {first_sentence(p)}")
    return "\n".join(lines) + "\n"


if __name__ == "__main__":
    OUT.write_text(render(), encoding="utf-8")
    print(f"wrote {OUT.relative_to(ROOT)}")
