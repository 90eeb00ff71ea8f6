"""The package metadata says what the code needs: every imported distribution declared, dev
tools pinned, one version, the typing marker."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

import perftui

ROOT = Path(__file__).parents[1]
PROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]


def dist_name(requirement: str) -> str:
    return re.split(r"[<>=!~;\[ ]", requirement, maxsplit=1)[0].lower().replace("_", "-")


def imported_top_levels() -> set[str]:
    names: set[str] = set()
    for path in (ROOT / "perftui").rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Import):
                names.update(a.name.split(".")[0] for a in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names.add(node.module.split(".")[0])
    return names - set(sys.stdlib_module_names) - {"perftui", "__future__"}


def test_every_imported_package_is_declared() -> None:
    declared = {dist_name(r) for r in PROJECT["dependencies"]}
    owners = md.packages_distributions()
    third_party = imported_top_levels()
    assert {"textual", "rich", "construct", "elftools", "zstandard", "numpy"} <= third_party
    for module in sorted(third_party):
        dists = {d.lower() for d in owners.get(module, [])}
        assert dists & declared, f"{module} (from {dists or 'no installed package'}) is " \
                                 "imported but not declared"


def test_dev_tools_are_pinned() -> None:
    dev = PROJECT["optional-dependencies"]["dev"]
    assert dev and all("==" in r for r in dev), dev


def test_one_version() -> None:
    assert "version" in PROJECT["dynamic"] and "version" not in PROJECT
    assert md.version("perftui") == perftui.__version__


def test_typed_and_licensed() -> None:
    assert (ROOT / "perftui" / "py.typed").is_file()
    assert PROJECT["license"] == "GPL-2.0-only"
    assert "GNU GENERAL PUBLIC LICENSE" in (ROOT / "LICENSE").read_text()[:200]
