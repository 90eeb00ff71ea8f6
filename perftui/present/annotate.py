"""An annotated function as JSON-able data (``perftui annotate --json``).

:func:`annotation_dict(ann, dso) <annotation_dict>` gives::

    {"dso", "sym", "section", "start", "size", "samples", "percent_type", "is_code",
     "note", "warnings",
     "instructions": [{"addr", "offset", "bytes", "asm", "target", "samples", "percent",
                       "source"}]}

Addresses (``start``, ``addr``) are hex strings (``"0xffffffffc0a01000"``: a u64 does not
survive a JSON number in every reader); ``size``, ``offset``, ``samples`` are integers;
``percent`` is a float rounded to 4 decimals; ``bytes`` is objdump's ``"e8 00 00 00 00"``;
``target`` is ``"symbol+0xoff"`` (or a hex address when nothing names it) for a direct
jump or call, else null; ``source`` is ``"file:line"`` or null.  Strings from the file
(symbol and file names) are kept as they are: JSON escapes control characters, and a
terminal view must pass them through :func:`perftui.textsafe.safe`.
"""

from __future__ import annotations

from typing import Any

from perftui.analysis.annotate import Annotation
from perftui.analysis.annotatefunction import FunctionAnnotation

__all__ = ["annotation_dict", "function_dict"]


def _hex(v: int) -> str:
    return f"{v:#x}"


def annotation_dict(ann: Annotation, dso: str) -> dict[str, Any]:
    """The JSON shape of issue 13 for one annotated function."""
    d = ann.disasm
    rows = []
    for k, insn in enumerate(d.instructions):
        if insn.target_name is not None:
            target: str | None = insn.target_name
        elif insn.target is not None:
            target = _hex(insn.target)
        else:
            target = None
        src = ann.source[k] if ann.source is not None else None
        rows.append(
            {
                "addr": _hex(insn.addr),
                "offset": insn.offset,
                "bytes": insn.hex,
                "asm": insn.asm,
                "target": target,
                "samples": int(ann.counts.hits[k]),
                "percent": round(float(ann.percent[k]), 4),
                "source": str(src) if src is not None else None,
            }
        )
    return {
        "dso": dso,
        "sym": d.name,
        "section": d.section,
        "start": _hex(d.start),
        "size": d.size,
        "samples": ann.samples,
        "percent_type": ann.percent_type,
        "is_code": d.is_code,
        "note": d.note,
        "warnings": list(d.warnings),
        "instructions": rows,
    }


def function_dict(fa: FunctionAnnotation, dso: str, event: str,
                  others: list[dict[str, Any]] | None = None) -> dict[str, Any]:
    """:func:`annotation_dict` of an annotated function of a recording, with the event,
    the dso's path and the other functions of that name; for a function whose code
    cannot be read, the same keys with no instructions, ``is_code`` null and ``note``
    saying why."""
    if fa.annotation is not None:
        d = annotation_dict(fa.annotation, dso)
        d["warnings"] = list(dict.fromkeys([*fa.warnings, *d["warnings"]]))
    else:
        ref = fa.code.ref
        d = {"dso": dso, "sym": ref.name, "section": ref.section, "start": _hex(ref.start),
             "size": fa.code.size, "samples": fa.samples, "percent_type": None, "is_code": None,
             "note": fa.problem, "warnings": list(fa.warnings), "instructions": []}
    d["dso_path"] = fa.code.dso
    d["event"] = event
    d["others"] = others or []
    return d
