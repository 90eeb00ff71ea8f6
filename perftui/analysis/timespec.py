"""Time ranges as ``perf --time`` takes them, plus relative seconds (docs: README "Times").

perf's syntax (tools/perf/util/time-utils.c, perf 6.1):

- ``START,END``: absolute timestamps in seconds as ``perf script`` prints them
  (``757.812345``, at most 9 decimals); either side may be empty (open).  Several
  ranges are separated by spaces: ``1.0,2.0 3.0,4.0`` (in order, not overlapping).
- ``10%/2``: the second 10% slice of [first sample, last sample]; ``10%/1,10%/3``
  several; ``0%-10%`` and ``0%-10%,30%-40%`` ranges; ``50%`` is ``50%/1``.

perftui adds relative seconds, counted from the first sample (the time the browser shows
in its relative time base): a side with an ``s`` suffix, ``1.5s,2.0s`` or ``1.5s,``.
perf refuses the suffix ("Invalid time string"), so a relative range can never be read as
an absolute one by either tool.
"""

from __future__ import annotations

import itertools
import math
import re

OPEN_END = 2**64 - 1
NSEC = 1_000_000_000
TIME_HELP = ("START,END: perf timestamps (757.81,758.2), seconds from the first sample with "
             "an s suffix (1.5s,2s), or perf's percentages (10%/2, 0%-10%); either side "
             "may be empty")

Ranges = tuple[tuple[int, int], ...]


class TimeSpecError(ValueError):
    """A time range that cannot be parsed."""


_ABS = re.compile(r"(\d+)(?:\.(\d{0,9}))?")
_REL = re.compile(r"(\d+(?:\.\d*)?|\.\d+)s")


def _side(text: str, origin: int, whole: str) -> int | None:
    """One side of ``START,END`` in ns (None: open)."""
    text = text.strip()
    if not text:
        return None
    m = _ABS.fullmatch(text)
    if m:
        frac = (m.group(2) or "").ljust(9, "0")
        return int(m.group(1)) * NSEC + int(frac or 0)
    m = _REL.fullmatch(text)
    if m:
        return origin + round(float(m.group(1)) * NSEC)
    raise TimeSpecError(f"bad time {text!r} in {whole!r}: expected seconds such as "
                        f"757.812345 (perf's timestamps) or 1.5s (from the first sample)")


def _pair(text: str, origin: int, whole: str) -> tuple[int, int]:
    if "," not in text:
        raise TimeSpecError(f"bad time range {whole!r}: expected START,END")
    a, b = text.split(",", 1)
    lo, hi = _side(a, origin, whole), _side(b, origin, whole)
    if lo is not None and hi is not None and hi < lo:
        raise TimeSpecError(f"bad time range {whole!r}: END is before START")
    return (0 if lo is None else lo), (OPEN_END if hi is None else hi)


def _percent(text: str, whole: str) -> float:
    if not text.endswith("%"):
        raise TimeSpecError(f"bad percentage {text!r} in {whole!r}")
    try:
        v = float(text[:-1])
    except ValueError:
        raise TimeSpecError(f"bad percentage {text!r} in {whole!r}") from None
    if math.isnan(v):
        raise TimeSpecError(f"bad percentage {text!r} in {whole!r}")
    return v / 100.0


def _percent_range(lo_p: float, hi_p: float, first: int, last: int,
                   whole: str) -> tuple[int, int]:
    """perf's set_percent_time: [first + lo*total, first + hi*total], the end one ns
    short unless it is the last sample's time."""
    if not (0.0 <= lo_p <= 1.0 and 0.0 <= hi_p <= 1.0):
        raise TimeSpecError(f"bad time range {whole!r}: percentages go from 0% to 100%")
    total = last - first
    lo = first + round(lo_p * total)
    hi = first + round(hi_p * total)
    if hi > lo and hi != last:
        hi -= 1
    return lo, hi


def parse_time_spec(text: str, first: int, last: int, origin: int | None = None) -> Ranges:
    """The ranges of ``text`` as absolute [start, end] ns pairs, inclusive.

    ``first``/``last`` are the first and last sample times (perf's percentages are of that
    span); ``origin`` is where relative seconds count from (default ``first``).
    """
    whole = text
    text = text.strip()
    origin = first if origin is None else origin
    if not text:
        raise TimeSpecError("empty time range")
    if "%" in text:
        if last <= first:
            raise TimeSpecError("percentages need the first and last sample times: this "
                                "recording has no timed samples")
        out = []
        if "/" in text:
            for part in text.split(","):
                pct, _, nth = part.partition("/")
                p = _percent(pct.strip(), whole)
                try:
                    i = int(nth)
                except ValueError:
                    raise TimeSpecError(f"bad slice {part!r} in {whole!r}") from None
                if p <= 0:
                    raise TimeSpecError(f"bad slice {part!r} in {whole!r}")
                out.append(_percent_range(p * (i - 1), p * i, first, last, whole))
        elif "-" in text:
            for part in text.split(","):
                a, sep, b = part.partition("-")
                if not sep:
                    raise TimeSpecError(f"bad range {part!r} in {whole!r}: expected A%-B%")
                out.append(_percent_range(_percent(a.strip(), whole),
                                          _percent(b.strip(), whole), first, last, whole))
        else:
            p = _percent(text, whole)
            if p <= 0:
                raise TimeSpecError(f"bad percentage {text!r}")
            out.append(_percent_range(0.0, p, first, last, whole))
        return tuple(out)
    pairs = tuple(_pair(p, origin, whole) for p in text.split())
    for (_lo1, hi1), (lo2, _hi2) in itertools.pairwise(pairs):
        if hi1 >= lo2:
            raise TimeSpecError(f"bad time ranges {whole!r}: they must be in order and "
                                "must not overlap")
    return pairs


def format_seconds(t: int, origin: int | None) -> str:
    """``t`` ns as seconds with 6 decimals: absolute as perf script prints it
    (``757.812345``, ``origin`` None) or relative to ``origin``; "" for no time."""
    if not t:
        return ""
    if origin is None:
        return f"{t // NSEC}.{(t % NSEC) // 1000:06d}"
    rel = (t - origin) / 1e9
    return f"{0.0 if abs(rel) < 5e-7 else rel:.6f}"  # never "-0.000000"
