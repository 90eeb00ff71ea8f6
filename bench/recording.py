"""The benchmark recording: a real ``perf record -g -a`` run, with the demo modules' section
map injected, samples planted in their sections, and its data repeated to the target size.

Also writes the stripped twin (no KMOD_SEC_MAP: perf 6.1 stops at type 83) and a pipe-mode
copy of the same records.  Nothing here is committed: it all lives under ``base``.
"""

from __future__ import annotations

import random
import struct
import subprocess
from pathlib import Path

from bigfile import repeat_data

from perftui.demo import MODULES_DIR
from perftui.demo.sysfs import write_sysfs_tree
from perftui.perfdata import RecordType, open_recording
from perftui.perfdata.constants import CONTEXT_KERNEL, Misc
from perftui.symbols.modules.inject import inject, strip
from perftui.symbols.modules.kofile import load_module
from perftui.symbols.modules.modnames import module_name

WORKLOAD = ("i=0; while [ $i -lt 300000 ]; do i=$((i+1)); done; "
            "find /usr/lib /usr/share -type f 2>/dev/null | head -4000 | xargs cat 2>/dev/null "
            "| gzip -1 > /dev/null; head -c 40000000 /dev/urandom | md5sum > /dev/null")


def record(out: Path) -> None:
    subprocess.run(["perf", "record", "-q", "-e", "cpu-clock", "-F", "4000", "-g", "-a",
                    "-o", str(out), "--", "sh", "-c", WORKLOAD], check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def hot_addresses(sysfs: dict[tuple[str, str], int]) -> list[int]:
    """One address inside each function of the demo modules' sections."""
    out = []
    for ko in ("demo_nic", "demo-kvm", "demo_crc"):
        mf = load_module(str(MODULES_DIR / f"{ko}.ko"))
        for (mod, sec), addr in sysfs.items():
            if mod != module_name(ko) or sec.startswith(".init"):
                continue
            t = mf.symbols(sec)
            for k in range(len(t)):
                out.append(addr + int(t.starts[k]) + int(t.sizes[k]) // 2)
    return out


def plant(src: Path, dst: Path, addrs: list[int], every: int = 3, seed: int = 1) -> int:
    """Copy ``src`` moving every ``every``-th kernel sample's ip (and the first callchain
    entry) into the demo modules.  Returns the number of samples moved."""
    rng = random.Random(seed)
    rec = open_recording(src, spill=False)
    rec.build_index()
    raw = bytearray(src.read_bytes())
    c = rec.columns
    rows = [i for i in range(len(rec)) if c["type"][i] == RecordType.SAMPLE
            and c["cpumode"][i] == Misc.KERNEL and c["src"][i] == 0]
    ip_off = rec.decoder.sample_layouts[0].offsets["ip"]
    marker = struct.pack("<Q", CONTEXT_KERNEL)
    moved = 0
    for i in rows[::every]:
        pos, size = int(c["pos"][i]), int(c["size"][i])
        new = rng.choice(addrs)
        struct.pack_into("<Q", raw, pos + ip_off, new)
        body = bytes(raw[pos:pos + size])
        k = body.find(marker, ip_off + 8)
        if k >= 0 and k + 16 <= size:
            struct.pack_into("<Q", raw, pos + k + 8, new)
        moved += 1
    dst.write_bytes(bytes(raw))
    return moved


def make(base: Path, target: int) -> dict[str, Path]:
    """Build (or reuse) the benchmark files under ``base``."""
    base.mkdir(parents=True, exist_ok=True)
    files = {"big": base / "big.data", "stripped": base / "big-stripped.data",
             "pipe": base / "big-pipe.data", "small": base / "small.data"}
    if all(p.exists() for p in files.values()):
        return files
    small = files["small"]
    if not small.exists():
        record(small)
    sysfs = write_sysfs_tree(base / "sys")
    injected = base / "small-kmod.data"
    rec = open_recording(small)
    rec.build_index()
    inject(rec, str(injected), str(base / "sys"), [str(MODULES_DIR)], force=True)
    planted = base / "small-planted.data"
    plant(injected, planted, hot_addresses(sysfs))
    repeat_data(str(planted), str(files["big"]), target)
    big = open_recording(files["big"], spill=False)
    big.build_index()
    strip(big, str(files["stripped"]), force=True)
    to_pipe(files["big"], files["pipe"])
    return files


def to_pipe(src: Path, dst: Path) -> None:
    """The same records as a pipe-mode stream (attrs as HEADER_ATTR; no features)."""
    rec = open_recording(src, spill=False)
    d_off, d_size = rec.header["data"]["offset"], rec.header["data"]["size"]
    with open(dst, "wb") as f:
        f.write(bytes(rec.buf[:8]) + struct.pack("<Q", 16))
        from perftui.perfdata.writer import RecordBuilder

        b = RecordBuilder("<", rec.attrs)
        for a in rec.attrs:
            f.write(b.header_attr(a))
        pos = d_off
        while pos < d_off + d_size:
            n = min(8 << 20, d_off + d_size - pos)
            f.write(rec.buf[pos:pos + n])
            pos += n


def make_big(base: Path, records: int) -> dict[str, Path]:
    """The large pair: the planted recording's data repeated to about ``records`` records,
    and its stripped twin made the same way from the stripped small file (the same records
    but the KMOD_SEC_MAP ones, which sit before FINISHED_INIT and are not repeated).

    Needs :func:`make` first (the small planted recording).  The size in bytes follows from
    the small file's bytes per record.
    """
    planted = base / "small-planted.data"
    tag = f"{records / 1e6:g}M"
    files = {"big": base / f"big-{tag}.data", "stripped": base / f"big-{tag}-stripped.data"}
    if all(p.exists() for p in files.values()):
        return files
    small = open_recording(planted, spill=False)
    n_small = small.scan().records
    data_bytes = small.header["data"]["size"]
    target = int(records / n_small * data_bytes) + planted.stat().st_size
    repeat_data(str(planted), str(files["big"]), target)
    small.build_index()
    twin = base / "small-planted-stripped.data"
    strip(small, str(twin), force=True)
    repeat_data(str(twin), str(files["stripped"]), target)
    return files
