"""Profiles for other tools: folded stacks (flamegraph.pl and friends) and speedscope.

speedscope's file format is its published JSON schema
(https://www.speedscope.app/file-format-schema.json): shared frames plus profiles; ours
are "sampled" profiles whose samples are the distinct stacks, weighted by their counts.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any

from .. import __version__
from ..analysis.stackcounts import StackCounts

SPEEDSCOPE_SCHEMA = "https://www.speedscope.app/file-format-schema.json"


#: A stack as the exports take it: (comm id, locations outermost first, sample count)
#: (:meth:`~perftui.analysis.stackcounts.StackCounts.paths`).
Path = tuple[int, Sequence[int], int]


def folded_stacks(stacks: Iterable[Path], name_of_loc: Callable[[int], str],
                  name_of_comm: Callable[[int], str]) -> list[tuple[str, int]]:
    """``comm;outermost;...;leaf`` and its sample count, one per distinct line, sorted.

    Frame names have ``;`` replaced (it separates frames) and no line breaks."""
    acc: dict[str, int] = {}
    for comm, frames, count in stacks:
        line = ";".join([_clean(name_of_comm(comm)), *(_clean(name_of_loc(f)) for f in frames)])
        acc[line] = acc.get(line, 0) + count
    return sorted(acc.items())


def _clean(name: str) -> str:
    return name.replace(";", ":").replace("\n", " ").replace("\r", " ")


def speedscope(stacks: Iterable[Path], name_of_loc: Callable[[int], str],
               name_of_comm: Callable[[int], str], dso_of_loc: Callable[[int], str],
               title: str, unit: str = "none",
               threads: Iterable[tuple[str, Iterable[Path]]] = ()) -> dict[str, Any]:
    """A speedscope file (sampled profiles, weights in samples, or in ``unit``: a timed
    event's "nanoseconds"): first a sample per distinct path (the thread name, then the
    frames outermost first), its flame graph; then with ``threads`` (a name and its paths
    in time order, each thread's) a profile per thread, samples in time order, which
    speedscope's "Time Order" view draws as that thread's flame chart."""
    frames: list[dict[str, Any]] = []
    index: dict[int, int] = {}
    by_name: dict[tuple[str, str | None], int] = {}  # (locations named alike: one frame)

    def frame_index(f: int) -> int:
        i = index.get(f)
        if i is None:
            key = (name_of_comm(-1 - f), None) if f < 0 else (name_of_loc(f), dso_of_loc(f))
            i = by_name.get(key)
            if i is None:
                i = by_name[key] = len(frames)
                frames.append({"name": key[0]} if key[1] is None else
                              {"name": key[0], "file": key[1]})
            index[f] = i
        return i

    def profile(name: str, samples: list[list[int]], weights: list[int]) -> dict[str, Any]:
        return {"type": "sampled", "name": name, "unit": unit, "startValue": 0,
                "endValue": int(sum(weights)), "samples": samples, "weights": weights}

    paths: dict[tuple[int, ...], int] = {}  # (stacks named alike: one sample)
    for comm, locs, count in stacks:
        key = (frame_index(-1 - comm), *(frame_index(f) for f in locs))
        paths[key] = paths.get(key, 0) + count
    profiles = [profile(title, [list(p) for p in paths], list(paths.values()))]
    for name, runs in threads:
        samples: list[list[int]] = []
        weights: list[int] = []
        for comm, locs, w in runs:
            sample = [frame_index(-1 - comm), *(frame_index(f) for f in locs)]
            if samples and samples[-1] == sample:  # (stacks alike but for their ids)
                weights[-1] += w
            else:
                samples.append(sample)
                weights.append(w)
        profiles.append(profile(name, samples, weights))
    return {
        "$schema": SPEEDSCOPE_SCHEMA,
        "shared": {"frames": frames},
        "profiles": profiles,
        "name": title,
        "activeProfileIndex": 0,
        "exporter": f"perftui {__version__}",
    }


def named_stacks(counts: StackCounts, name_of_loc: Callable[[int], str],
                 name_of_comm: Callable[[int], str]) -> Iterator[tuple[list[str], int]]:
    """Each distinct stack as the folded stacks name it (thread name, then the frames
    outermost first) with its period: what the differential flame graph compares
    (:func:`~perftui.analysis.diffflame.diff_flame`)."""
    for i in range(len(counts)):
        names = [name_of_comm(int(counts.comm[i]))]
        names.extend(name_of_loc(f) for f in counts.frames(i))
        yield names, int(counts.period[i])
