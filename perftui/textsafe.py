"""Make text from a recording safe for a terminal: no control characters reach it."""

from __future__ import annotations

import re

# C0 controls (tab included), DEL, C1 controls, and the bidi/line separators a terminal
# or viewer might act on.
_UNSAFE = re.compile("[\x00-\x08\x0a-\x1f\x7f-\x9f\u2028\u2029\u202a-\u202e\u2066-\u2069\t]")


_SURROGATE = re.compile("[\ud800-\udfff]")


def _esc(m: re.Match[str]) -> str:
    c = m.group()
    o = ord(c)
    return f"\\x{o:02x}" if o < 0x100 else f"\\u{o:04x}"


def safe(text: str, limit: int | None = None) -> str:
    """``text`` with every control character written as an escape (``\\x1b``).

    Lone surrogates (from undecodable bytes) become ``\\udcXX`` escapes too.  With
    ``limit``, the result is cut to that many characters and ends with an ellipsis.
    """
    out = _UNSAFE.sub(_esc, text)
    if _SURROGATE.search(out):
        out = "".join(f"\\u{ord(ch):04x}" if "\ud800" <= ch <= "\udfff" else ch for ch in out)
    if limit is not None and len(out) > limit:
        out = out[: max(0, limit - 1)] + "…"
    return out
