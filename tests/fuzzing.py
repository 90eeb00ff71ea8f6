"""The fuzz harness: mutate real recordings and run every consumer of the decoder on them.

Used by ``tests/test_fuzz.py`` (bounded, fixed seed, in CI) and by
``python tests/fuzzing.py --seconds N`` for longer runs.  An outcome is either a result or
a clear error with an offset (``PerfDataError``); anything else is a crash.
"""

from __future__ import annotations

import contextlib
import random
import struct
import sys
import time
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).parent
SEEDS = [
    "data/perf61/perf-normal-g.data", "data/perf61/perf-pipe.data", "data/perf61/perf-zstd.data",
    "data/linux-perf-data/sleep.compressed2.data", "data/linux-perf-data/sleep.compressed.data",
    "data/linux-perf-data/sleep.compressed.pipe.data",
    "data/quipper/perf.data.ctx_switch_namespaces-4.14", "data/quipper/perf.data.branch-4.14",
    "data/quipper/perf.data.piped.header_features-4.16",
    "data/quipper/perf.data.group_desc-4.14", "data/quipper/perf.data.lost_samples-4.4",
    "data/quipper/perf.data.singleprocess-3.4",
    "data/unwind/handmade-dwarf.data",  # DWARF samples (tests/dwarfrecords.py fuzz_seed)
]


def record_offsets(buf: bytes) -> list[int]:
    """Top-level record starts of a little-endian file- or pipe-mode recording (best effort)."""
    if len(buf) < 16:
        return []
    size = struct.unpack_from("<Q", buf, 8)[0]
    if size == 16:
        pos, end = 16, len(buf)
    else:
        pos, dsize = struct.unpack_from("<QQ", buf, 40)
        end = pos + dsize
    out = []
    while pos + 8 <= end:
        t, _m, s = struct.unpack_from("<IHH", buf, pos)
        if s < 8:
            break
        out.append(pos)
        pos += s
        if t == 66 and s >= 12:
            pos += struct.unpack_from("<I", buf, pos - s + 8)[0]
        if t == 71 and s >= 16:
            pos += struct.unpack_from("<Q", buf, pos - s + 8)[0]
    return out


INTERESTING = [0, 1, 7, 8, 0xFF, 0xFFFF, 0x7FFFFFFF, 0xFFFFFFFF, 2**60, 2**63, 2**64 - 1]
#: file-header fields worth breaking: size, attr_size, attrs and data sections, the bitmap
HEADER_FIELDS = [8, 16, 24, 32, 40, 48, 72, 80]
KINDS = ["flip", "byte", "rec_size", "rec_u64", "rec_u32", "header", "truncate", "splice",
         "zero"]


@dataclass(frozen=True)
class Mutation:
    """One edit of a recording.  ``at`` and ``src`` are taken modulo the current length;
    ``rec`` picks a record start (modulo their number), ``field`` a slot after its header.
    Hypothesis draws these (``tests/test_fuzz.py``) and can shrink them; the timed
    campaign below draws them at random."""

    kind: str
    at: int = 0
    value: int = 0
    rec: int = 0
    field: int = 0
    src: int = 0

    def __str__(self) -> str:
        return f"{self.kind}@{self.at:#x}/rec{self.rec}.{self.field}={self.value:#x}"

    def apply(self, b: bytearray, recs: list[int]) -> None:
        n = len(b)
        k = self.kind
        if k == "flip" and n:
            b[self.at % n] ^= 1 << (self.value % 8)
        elif k == "byte" and n:
            b[self.at % n] = self.value & 0xFF
        elif k == "rec_size" and recs:
            at = recs[self.rec % len(recs)] + 6
            if at + 2 <= n:
                struct.pack_into("<H", b, at, self.value & 0xFFFF)
        elif k in ("rec_u64", "rec_u32") and recs:
            width = 8 if k == "rec_u64" else 4
            at = recs[self.rec % len(recs)] + 8 + width * (self.field % 8)
            if at + width <= n:
                struct.pack_into("<Q" if width == 8 else "<I", b, at,
                                 self.value & (2 ** (8 * width) - 1))
        elif k == "header" and n >= 104:
            struct.pack_into("<Q", b, HEADER_FIELDS[self.field % len(HEADER_FIELDS)],
                             self.value & (2**64 - 1))
        elif k == "truncate" and n:
            del b[self.at % n:]
        elif k == "splice" and n:
            src = self.src % n
            b[self.at % n:self.at % n] = b[src:src + max(1, self.value % 256)]
        elif k == "zero" and n:
            at = self.at % n
            ln = max(1, self.value % 64)
            b[at:at + ln] = bytes(min(ln, n - at))


def apply_all(buf: bytes, muts: list[Mutation]) -> bytes:
    """``buf`` with ``muts`` applied in order (record starts found once, before any)."""
    b = bytearray(buf)
    recs = record_offsets(buf)
    for m in muts:
        m.apply(b, recs)
    return bytes(b)


def random_mutation(rng: random.Random, size: int) -> Mutation:
    """A mutation drawn at random (the timed campaign's counterpart of the strategy)."""
    kind = rng.choice(KINDS)
    value = rng.choice([*INTERESTING, rng.randrange(0x10000), rng.randrange(size + 1)])
    return Mutation(kind, rng.randrange(max(1, size)), value, rng.randrange(1 << 16),
                    rng.randrange(8), rng.randrange(max(1, size)))


def mutate(buf: bytes, rng: random.Random, n: int) -> tuple[bytes, list[Mutation]]:
    """``n`` random mutations aimed at sizes, counts, offsets and payloads."""
    muts = [random_mutation(rng, len(buf)) for _ in range(n)]
    return apply_all(buf, muts), muts


def _no_files() -> object:
    """Symbol options that find no file of this machine's (a case is about its bytes)."""
    from perftui.symbols.options import SymbolOptions

    empty = str(HERE / "data" / "fuzz" / "no-files")
    return SymbolOptions(symfs=empty, debug_dir=empty, perfmap_dir=empty,
                         proc_kallsyms=empty, modules_dirs=[empty])


def run_all(path: str) -> None:
    """Every consumer: open, index, decode every record, info, dump, sections, symbols."""
    from perftui.analysis.sectionreport import section_report
    from perftui.analysis.summary import info_dict
    from perftui.analysis.timeline import timeline_bins
    from perftui.perfdata import NotPerfData, PerfDataError, open_recording
    from perftui.present.sections import sections_json
    from perftui.symbols.naming.resolver import Resolver
    from perftui.symbols.naming.samplelocs import resolve_all
    from perftui.symbols.naming.samplestore import sample_rows_all

    try:
        rec = open_recording(path)
    except (NotPerfData, PerfDataError):
        return
    _NO_FILES = _no_files()
    try:
        rec.build_index()
        info_dict(rec)
        for i in range(len(rec)):
            with contextlib.suppress(ValueError):
                rec.decode(i)
        t0, t1 = int(rec.columns["time"].min(initial=0)), int(rec.columns["time"].max(
            initial=1))
        timeline_bins(rec, t0, t1 + 1, 80, "kind")
        timeline_bins(rec, t0, t1 + 1, 80, "cpu")
        rep = section_report(rec, [])
        sections_json(rep, symbols=True)
        # every sample named, with its callchain (the thread model, the compiled names pass)
        res = Resolver(rec, _NO_FILES)
        resolve_all(res, sample_rows_all(rec), callchains=True)
    finally:
        rec.close()
    try:
        for _ in open_recording(path, spill=False).records():
            pass
    except (NotPerfData, PerfDataError):
        pass


def campaign(seconds: float, seed: int, workdir: Path, max_cases: int | None = None,
             per_case_limit: float = 5.0) -> tuple[int, list[str]]:
    """Run mutated cases for ``seconds``; returns (cases tried, crash descriptions)."""
    rng = random.Random(seed)
    seeds = [(s, (HERE / s).read_bytes()) for s in SEEDS if (HERE / s).is_file()]
    crashes: list[str] = []
    n = 0
    deadline = time.monotonic() + seconds
    workdir.mkdir(parents=True, exist_ok=True)
    while time.monotonic() < deadline and (max_cases is None or n < max_cases):
        name, buf = rng.choice(seeds)
        data, muts = mutate(buf, rng, rng.randrange(1, 5))
        case = workdir / f"case-{n}.data"
        case.write_bytes(data)
        t = time.monotonic()
        try:
            run_all(str(case))
        except Exception as e:
            keep = workdir / f"crash-{n}.data"
            case.rename(keep)
            crashes.append(f"{name} {' '.join(map(str, muts))}: {type(e).__name__}: {e} "
                           f"(kept as {keep})")
        else:
            took = time.monotonic() - t
            if took > per_case_limit:
                keep = workdir / f"slow-{n}.data"
                case.rename(keep)
                crashes.append(f"{name} {' '.join(map(str, muts))}: took {took:.1f}s "
                               f"(kept as {keep})")
            else:
                case.unlink()
        n += 1
    return n, crashes


if __name__ == "__main__":
    import argparse
    import tempfile

    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=60)
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=tempfile.mkdtemp(prefix="perftui-fuzz-"))
    ap.add_argument("--mem-gb", type=float, default=4, help="address-space limit")
    a = ap.parse_args()
    import resource

    lim = int(a.mem_gb * 2**30)
    resource.setrlimit(resource.RLIMIT_AS, (lim, lim))
    sys.path.insert(0, str(HERE.parent))
    tried, found = campaign(a.seconds, a.seed, Path(a.dir))
    print(f"{tried} cases, {len(found)} crashes")
    for c in found:
        print(c)
