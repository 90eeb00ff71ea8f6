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
#: Every recording of the corpus (its README lists them): folder/file.
RECORDINGS: tuple[str, ...] = (
    "hotspot/perf.data.true.v1",
    *(f"linux-perf-data/sleep.{n}" for n in ("compressed.data", "compressed.pipe.data",
                                             "compressed2.data", "data")),
    *(f"perf61/perf-{n}.data" for n in ("normal-g", "pipe", "zstd")),
    *(f"perfparser/{n}" for n in ("contentsize.data", "cpp-inlining__cpp-inlining.perf.data",
                                  "fork_static_gcc__perf.data.zstd", "probe.data.file",
                                  "probe.data.stream")),
    *(f"quipper/perf.data.{n}" for n in (
        "armv7-3.4", "branch-4.14", "branch_stack_spec", "callgraph-3.8",
        "ctx_switch_namespaces-4.14", "group_desc-4.14", "hybrid_topology", "i686-3.4",
        "intel_pt-4.14", "lost_samples-4.4", "piped.corrupted.zero_size_sample-3.2",
        "piped.header_features-4.16", "piped.header_features_aligned-6.12",
        "piped.header_feautres_group_desc-6.8", "piped.intel_pt-4.14",
        "piped.lost_samples-4.4", "piped.no_attr_ids-4.14", "raw-3.4", "remmap-3.2",
        "singleprocess-3.4", "throttle-3.8", "weight_struct")),
)


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
