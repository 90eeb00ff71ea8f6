"""Records in words: the one-line summary of ``dump`` and the record list, the detail
pane's field lines and hex dump, and JSON-ready values.

Every string from a recording goes through :func:`~perftui.textsafe.safe` where it is
shown as text.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from ..textsafe import safe

#: values that are their own JSON (no call to :func:`jsonable` for each: ``dump --json``
#: passes ~40 of them a record, and one call each was a quarter of its time)
_PLAIN = frozenset({int, str, float, bool, type(None)})


def jsonable(v: Any) -> Any:
    """``v`` with bytes as hex strings and keys as strings (for ``json.dumps``)."""
    plain = _PLAIN
    if isinstance(v, bytes):
        return v.hex()
    if isinstance(v, dict):
        return {k if type(k) is str else str(k): x if type(x) in plain else jsonable(x)
                for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [x if type(x) in plain else jsonable(x) for x in v]
    return v


def summary(fields: dict[str, Any]) -> str:
    """One line describing a decoded record (dump text output, the record list)."""
    t = fields["type"]
    f = fields
    if t == "SAMPLE":
        parts = []
        if "ip" in f:
            parts.append(f"ip {f['ip']:#x}")
        if "period" in f:
            parts.append(f"period {f['period']}")
        if "callchain" in f:
            parts.append(f"callchain {len(f['callchain'])}")
        if "event" in f:
            parts.append(f["event"])
        return " ".join(parts)
    if t in ("MMAP", "MMAP2"):
        return f"{f['addr']:#x}+{f['len']:#x} pgoff {f['pgoff']:#x} {f['filename']}"
    if t == "COMM":
        return f"{f['pid']}/{f['tid']} {f['comm']}"
    if t in ("FORK", "EXIT"):
        return f"{f['pid']}/{f['tid']} parent {f['ppid']}/{f['ptid']}"
    if t == "KMOD_SEC_MAP":
        return (f"{f['section']} {f['start']:#x}-{f['start'] + f['len']:#x} "
                f"pgoff {f['pgoff']:#x} {f['filename']}")
    skip = {"type", "misc", "size", "sample_id", "offset", "compressed", "file"}
    items = [f"{k} {v}" for k, v in f.items() if k not in skip and not isinstance(v, (list, dict))]
    return " ".join(items)[:200]


def hexdump(raw: bytes, limit: int = 4096) -> list[str]:
    """``0000:  xx xx ...  ascii`` lines (at most ``limit`` bytes)."""
    lines = []
    for off in range(0, min(len(raw), limit), 16):
        chunk = raw[off:off + 16]
        hexs = " ".join(f"{b:02x}" for b in chunk)
        text = "".join(chr(b) if 32 <= b < 127 else "." for b in chunk)
        lines.append(f"{off:04x}:  {hexs:<47}  {text}")
    if len(raw) > limit:
        lines.append(f"... {len(raw) - limit} more bytes")
    return lines


def field_lines(f: dict[str, Any], describe: Callable[[int], str], indent: str = "",
                fmt_time: Callable[[int], str] | None = None,
                chain: list[str] | None = None) -> list[str]:
    """The decoded fields of a record as ``name: value`` lines (callchains symbolised:
    ``chain`` names each entry when given, else ``describe(ip)``; ``time`` fields through
    ``fmt_time`` when given)."""
    out: list[str] = []
    for k, v in f.items():
        if k == "time" and fmt_time is not None and isinstance(v, int):
            out.append(f"{indent}time: {fmt_time(v)}")
        elif k == "callchain":
            out.append(f"{indent}callchain: {len(v)} entries")
            for k_ip, ip in enumerate(v):
                desc = chain[k_ip] if chain is not None and k_ip < len(chain) else describe(ip)
                out.append(f"{indent}  {ip:#018x} {desc}".rstrip())
        elif isinstance(v, dict):
            out.append(f"{indent}{k}:")
            out.extend(field_lines(v, describe, indent + "  ", fmt_time))
        elif isinstance(v, list):
            if v and isinstance(v[0], dict):
                out.append(f"{indent}{k}: {len(v)}")
                for x in v[:64]:
                    out.append(f"{indent}  " + ", ".join(f"{a}={_fmt(b)}" for a, b in x.items()))
            else:
                out.append(f"{indent}{k}: {', '.join(_fmt(x) for x in v[:64])}")
        else:
            out.append(f"{indent}{k}: {_fmt(v, k)}")
    return [safe(x) for x in out]


_HEX_KEYS = {"ip", "addr", "start", "len", "pgoff", "misc", "phys_addr", "data_src", "id"}


def _fmt(v: Any, key: str = "") -> str:
    if isinstance(v, bytes):
        return v[:64].hex() + ("..." if len(v) > 64 else "")
    if isinstance(v, int) and key in _HEX_KEYS and key != "id":
        return f"{v:#x}"
    return str(v)
