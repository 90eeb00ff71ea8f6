"""A ``/sys/module/*/sections`` tree for the demo modules (for inject tests and benchmarks)."""

from __future__ import annotations

from pathlib import Path

from ..symbols.modules.kofile import load_module
from ..symbols.modules.modnames import module_name
from . import MODULES_DIR

DEMO_MODULES = ("demo_nic", "demo-kvm", "demo_crc")
#: The module loader drops these (no SHF_ALLOC once loaded, no sysfs file).
NOT_IN_SYSFS = (".modinfo", "__versions")


def write_sysfs_tree(root: str | Path, base: int = 0xFFFFFFFFC0A00000,
                     zero: bool = False) -> dict[tuple[str, str], int]:
    """Write ``root/module/<mod>/sections/<sec>`` files, page-aligned one after the other.

    Returns (module, section) -> address.  ``zero`` writes 0 everywhere, as a non-root
    reader sees them.
    """
    root = Path(root)
    want: dict[tuple[str, str], int] = {}
    for ko in DEMO_MODULES:
        mod = module_name(ko)
        d = root / "module" / mod / "sections"
        d.mkdir(parents=True, exist_ok=True)
        mf = load_module(str(MODULES_DIR / f"{ko}.ko"))
        for name, s in sorted(mf.sections.items()):
            if not s.alloc or name in NOT_IN_SYSFS:
                continue
            addr = 0 if zero else base
            (d / name).write_text(f"0x{addr:016x}\n")
            want[(mod, name)] = addr
            base += (s.size + 0xFFF) & ~0xFFF
    return want
