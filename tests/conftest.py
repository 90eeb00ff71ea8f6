"""Shared test fixtures: where the corpus recordings are, and whether the real perf is at hand.

Tests marked ``@pytest.mark.perf`` are skipped when ``perf`` is not on the PATH.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Callable
from pathlib import Path

import pytest

# UI tests: no animations (stable snapshots).  Textual reads this when it is first imported,
# which a pytest plugin may have done already: the fixture below covers that case.
os.environ["TEXTUAL_ANIMATIONS"] = "none"

DATA = Path(__file__).parent / "data"
# GPL recordings are not copied into tests/data (licences, see tests/data/NOTICE.md)
SHARED_CORPUS = Path(__file__).parents[1].parent / "shared" / "corpus"
GPL_FOLDERS = ("hotspot", "perfparser")
PERF = shutil.which("perf")


def corpus_path(rel: str) -> Path:
    """Where corpus recording ``rel`` ("quipper/perf.data.raw-3.4") lives, present or not."""
    folder = rel.split("/", 1)[0]
    return (SHARED_CORPUS if folder in GPL_FOLDERS else DATA) / rel


@pytest.fixture
def corpus() -> Callable[[str], Path]:
    """``corpus(rel)``: the recording's path; skips the test when it is absent."""

    def get(rel: str) -> Path:
        p = corpus_path(rel)
        if not p.is_file():
            pytest.skip(f"{rel} is not available (GPL recordings are read from {SHARED_CORPUS})")
        return p

    return get


def pytest_runtest_setup(item: pytest.Item) -> None:
    if item.get_closest_marker("perf") is not None and PERF is None:
        pytest.skip("perf is not on the PATH")


@pytest.fixture(autouse=True)
def _no_animations(monkeypatch: pytest.MonkeyPatch) -> None:
    constants = sys.modules.get("textual.constants")
    if constants is not None:
        monkeypatch.setattr(constants, "TEXTUAL_ANIMATIONS", "none")
