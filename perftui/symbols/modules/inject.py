"""``perftui inject``: add KMOD_SEC_MAP records from a sysfs tree, or strip them.

Section load addresses come from ``ROOT/module/<name>/sections/<section>`` (``/sys`` on
the recording host, or a copy of that tree); each section's length and file offset come
from the module's ``.ko`` (``sh_size``, ``sh_offset``), as the RFC synthesizer did
(docs/format.md, "Type 83").  Records go among the start-up records, before FINISHED_INIT.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field

import numpy as np

from ...perfdata import KMOD_SEC_MAP, Feature, Recording, RecordType
from ...perfdata.edit import Edit, rewrite
from ...perfdata.writer import kmod_sec_map_record
from .kofile import ModuleFileError, load_module
from .modlocate import find_module_file
from .modnames import module_name

PERF_NOTE = ("note: perf <= 6.15 stops reading at a type-83 record (\"failed to process type: "
             "83\") and perf >= 6.16 reads type 83 as COMPRESSED2 and fails to decompress it; "
             "give those tools a copy made with --strip")


class InjectError(Exception):
    """Inject cannot go on (one clear line)."""


@dataclass
class SysfsSection:
    module: str
    section: str
    address: int


@dataclass
class InjectResult:
    records: int = 0
    modules: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)


def read_sysfs(root: str) -> dict[str, list[SysfsSection]]:
    """Module -> its sections' load addresses, from ``root/module/*/sections``."""
    base = os.path.join(root, "module")
    if not os.path.isdir(base):
        raise InjectError(f"{base}: no such directory (give --sysfs the root of a sysfs tree)")
    out: dict[str, list[SysfsSection]] = {}
    for mod in sorted(os.listdir(base)):
        sdir = os.path.join(base, mod, "sections")
        if not os.path.isdir(sdir):
            continue  # built-in modules have no sections/ directory
        secs = []
        for name in sorted(os.listdir(sdir)):
            p = os.path.join(sdir, name)
            if not os.path.isfile(p):
                continue
            try:
                with open(p) as f:
                    text = f.read(64).strip()
                addr = int(text, 16)
            except (OSError, ValueError):
                raise InjectError(f"{p}: not a section address ({text!r})") from None
            secs.append(SysfsSection(mod, name, addr))
        if secs:
            out[mod] = secs
    return out


def _insert_at(rec: Recording) -> int:
    """File offset of the first FINISHED_INIT; else of the first SAMPLE; else the data end."""
    c = rec.columns
    top = c["src"] == 0
    for t in (RecordType.FINISHED_INIT, RecordType.SAMPLE):
        rows = np.nonzero(top & (c["type"] == t))[0]
        if len(rows):
            return int(c["pos"][rows[0]])
    if rec.mode == "file":
        return int(rec.header["data"]["offset"] + rec.header["data"]["size"])
    return len(rec.buf)  # type: ignore[arg-type]


def build_records(rec: Recording, sysfs: dict[str, list[SysfsSection]],
                  modules_dirs: list[str], include_init: bool,
                  result: InjectResult) -> bytes:
    id_hdr = rec.attrs[0].id_hdr_size if rec.attrs else 0
    osrel = rec.feature(Feature.OSRELEASE)
    out = []
    for mod, secs in sysfs.items():
        if all(s.address == 0 for s in secs):
            raise InjectError(f"module {mod}: every section address reads as 0 — the sysfs "
                              "addresses are hidden from non-root users (kptr_restrict); "
                              "copy the tree as root")
        loc = find_module_file(module_name(mod), None, modules_dirs, osrel)
        if loc.path is None:
            result.warnings.append(f"{mod}: {loc.message}; no section records for it")
            continue
        try:
            mf = load_module(loc.path)
        except ModuleFileError as e:
            result.warnings.append(f"{mod}: {e}; no section records for it")
            continue
        n = 0
        for s in sorted(secs, key=lambda s: s.address):
            info = mf.sections.get(s.section)
            if info is None or not info.alloc:
                continue
            if s.section.startswith(".init") and not include_init:
                continue
            if s.address == 0:
                result.warnings.append(f"{mod}: section {s.section} reads as address 0; "
                                       "skipped")
                continue
            out.append(kmod_sec_map_record(rec.order, s.section, os.path.abspath(loc.path),
                                           s.address, info.size, info.offset, id_hdr))
            n += 1
        if n:
            result.modules.append(mod)
            result.records += n
    return b"".join(out)


def _check_paths(src: str, out: str, force: bool) -> None:
    if src == "-" or out == "-":
        raise InjectError("inject needs a file as input and as output, not standard streams")
    if os.path.isdir(src):
        raise InjectError(f"{src}: directory-format recordings are not supported by inject")
    if os.path.exists(out):
        if os.path.samefile(src, out):
            raise InjectError(f"{out}: refusing to overwrite the input recording")
        if not force:
            raise InjectError(f"{out} exists (use --force to replace it)")
    elif os.path.realpath(src) == os.path.realpath(out):
        raise InjectError(f"{out}: refusing to overwrite the input recording")


def inject(rec: Recording, out: str, sysfs_root: str = "/sys",
           modules_dirs: list[str] | None = None, include_init: bool = False,
           force: bool = False) -> InjectResult:
    """Write ``out``: ``rec`` with KMOD_SEC_MAP records for every module under the tree."""
    _check_paths(rec.path, out, force)
    result = InjectResult()
    sysfs = read_sysfs(sysfs_root)
    if not sysfs:
        raise InjectError(f"{sysfs_root}/module: no module has a sections/ directory")
    blob = build_records(rec, sysfs, list(modules_dirs or []), include_init, result)
    if not result.records:
        raise InjectError("no section record could be made: "
                          + ("; ".join(result.warnings) or "no SHF_ALLOC section found"))
    rewrite(rec, out, [Edit(_insert_at(rec), 0, blob)])
    return result


def strip(rec: Recording, out: str, force: bool = False) -> InjectResult:
    """Write ``out``: ``rec`` without its KMOD_SEC_MAP records."""
    _check_paths(rec.path, out, force)
    c = rec.columns
    rows = np.nonzero((c["src"] == 0) & (c["type"] == KMOD_SEC_MAP))[0]
    edits = [Edit(int(c["pos"][i]), int(c["size"][i])) for i in rows]
    result = InjectResult(records=len(edits))
    rewrite(rec, out, edits)
    return result
