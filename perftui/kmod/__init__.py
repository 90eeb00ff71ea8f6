"""Headless kernel-module file layer: module names, ELF sections/symbols, file lookup.

Never imports the UI; everything here works on plain paths, bytes and numpy arrays.
"""

from perftui.kmod.elf import (
    NO_SYMBOL,
    ModuleFile,
    ModuleFileError,
    SectionInfo,
    SymbolTable,
    iter_module_sections,
    load_module,
)
from perftui.kmod.locate import Located, default_debug_dir, find_module_file, same_build_id
from perftui.kmod.names import MODULE_SUFFIXES, is_module_path, module_name, strip_module_suffix

__all__ = [
    "MODULE_SUFFIXES",
    "NO_SYMBOL",
    "Located",
    "ModuleFile",
    "ModuleFileError",
    "SectionInfo",
    "SymbolTable",
    "default_debug_dir",
    "find_module_file",
    "is_module_path",
    "iter_module_sections",
    "load_module",
    "module_name",
    "same_build_id",
    "strip_module_suffix",
]
