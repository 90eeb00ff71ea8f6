"""Module files of a recording: found and loaded once per module, with why one is missing."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ...perfdata import Feature, Recording, RecordType
from .kofile import ModuleFile, ModuleFileError, load_module
from .modlocate import Located, find_module_file
from .modnames import is_module_path, module_name


def recording_build_ids(rec: Recording, records: list[dict[str, Any]] | None = None
                        ) -> dict[str, str]:
    """Module name -> build id, from the BUILD_ID feature and HEADER_BUILD_ID records (of
    the index, or ``records`` decoded while walking)."""
    out: dict[str, str] = {}
    entries = list(rec.feature(Feature.BUILD_ID) or [])
    if records is not None:
        entries.extend(records)
    else:
        for i in rec.rows_of_type(RecordType.HEADER_BUILD_ID):
            try:
                entries.append(rec.decode(int(i)))
            except ValueError:
                continue
    for e in entries:
        name = e.get("filename", "")
        if is_module_path(name) and e.get("build_id"):
            out[module_name(name)] = e["build_id"]
    return out


@dataclass
class ModuleFiles:
    """Finds and loads module ELF files once per module; remembers why one is missing."""

    modules_dirs: list[str]
    os_release: str | None
    build_ids: dict[str, str]
    debug_dir: str | None = None
    #: perf's ``--symfs``: the recording's module paths are looked for under it
    symfs: str | None = None
    files: dict[str, ModuleFile | None] = field(default_factory=dict)
    notes: dict[str, str] = field(default_factory=dict)
    paths: dict[str, str | None] = field(default_factory=dict)
    #: the path the recording gave for each module looked up (the first one asked for)
    record_paths: dict[str, str | None] = field(default_factory=dict)

    @classmethod
    def of(cls, rec: Recording, modules_dirs: list[str] | None = None,
           build_id_records: list[dict[str, Any]] | None = None,
           symfs: str | None = None) -> ModuleFiles:
        """The module files of an indexed recording (build ids and os release from it; the
        HEADER_BUILD_ID records from ``build_id_records`` when given)."""
        return cls(list(modules_dirs or []), rec.feature(Feature.OSRELEASE),
                   recording_build_ids(rec, build_id_records), symfs=symfs)

    def locate(self, module: str, record_path: str | None) -> Located:
        """Where the file of ``module`` is (nothing loaded but what checking its build id
        takes)."""
        return find_module_file(module, record_path, self.modules_dirs, self.os_release,
                                build_id=self.build_ids.get(module), debug_dir=self.debug_dir,
                                symfs=self.symfs)

    def get(self, module: str, record_path: str | None) -> ModuleFile | None:
        if module in self.files:
            return self.files[module]
        loc = self.locate(module, record_path)
        mf: ModuleFile | None = None
        self.paths[module] = loc.path
        self.record_paths[module] = record_path
        if loc.path is None:
            self.notes[module] = loc.message or "module file not found"
        else:
            try:
                mf = load_module(loc.path)
            except ModuleFileError as e:
                self.notes[module] = str(e)
            if loc.message:
                self.notes[module] = loc.message
        self.files[module] = mf
        return mf
