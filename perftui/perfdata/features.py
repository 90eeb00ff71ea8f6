"""Feature sections (docs/format.md, "Features"): decode each payload (unknown ones stay
bytes) and, for the writer, encode a decoded value back.  Both directions go through the
construct declarations of ``schemas.layouts(order).feature``; where the decoded value has
another shape than construct's, :data:`_SHAPES` converts it, both ways.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from .attr import build_attr, parse_attr
from .constants import Feature, Misc, feature_name
from .schemas import cstring, layouts, plain

__all__ = ["cstring", "encode_feature", "feature_summary", "parse_feature"]

Shape = Callable[[Any, str], Any]


def _event_desc_in(v: Any, order: str) -> Any:
    return [{"attr": parse_attr(e["attr"], order), "name": e["name"], "ids": e["ids"]}
            for e in v["events"]]


def _event_desc_out(v: Any, order: str) -> Any:
    size = max((e["attr"].size for e in v), default=128)
    return {"attr_size": size, "events": [
        {"attr": build_attr(e["attr"], order).ljust(size, b"\0"), "name": e["name"],
         "ids": e["ids"]} for e in v]}


def _domains_in(v: Any, order: str) -> Any:
    if len(v.pop("rest")) >= 8:
        raise ValueError("CPU_DOMAIN_INFO: a cpu entry runs past the end of the payload")
    for cpu in v["cpus"]:
        for d in cpu["domains"]:
            if d["name"] is None:  # only version 17 and later name the domains
                del d["name"]
    return v


def _domains_out(v: Any, order: str) -> Any:
    return {**v, "rest": b"", "cpus": [{**c, "domains": [{"name": None, **d}
                                                         for d in c["domains"]]}
                                       for c in v["cpus"]]}


def _summary(*keys: str) -> Shape:
    return lambda v, order: [{k: p[k] for k in keys} for p in v]


#: feature -> (decoded from construct's value, construct's value from the decoded one);
#: None where the decoded value is a summary that cannot be written back.
_SHAPES: dict[int, tuple[Shape, Shape | None]] = {
    Feature.EVENT_DESC: (_event_desc_in, _event_desc_out),
    Feature.BUILD_ID: (lambda v, o: v, lambda v, o: [
        {"misc": Misc.KERNEL | Misc.BUILD_ID_SIZE, **e} for e in v]),
    Feature.BRANCH_STACK: (lambda v, o: True, lambda v, o: {}),
    Feature.STAT: (lambda v, o: True, lambda v, o: {}),
    Feature.CPU_TOPOLOGY: (lambda v, o: {k: x for k, x in v.items() if x is not None},
                           lambda v, o: {"cpus": None, "die_siblings": None,
                                         "die_ids": None, **v}),
    Feature.CPU_PMU_CAPS: (lambda v, o: {p["name"]: p["value"] for p in v},
                           lambda v, o: [{"name": k, "value": x} for k, x in v.items()]),
    Feature.PMU_CAPS: (
        lambda v, o: [{"pmu": p["pmu"], "caps": {c["name"]: c["value"] for c in p["caps"]}}
                      for p in v],
        lambda v, o: [{"pmu": p["pmu"], "caps": [{"name": k, "value": x}
                                                 for k, x in p["caps"].items()]} for p in v]),
    Feature.CPU_DOMAIN_INFO: (_domains_in, _domains_out),
    Feature.BPF_PROG_INFO: (_summary("info_len", "data_len"), None),
    Feature.BPF_BTF: (_summary("id", "data_size"), None),
    Feature.TRACING_DATA: (lambda v, o: v, None),
}


def _schema(feat: int, order: str) -> Any:
    try:
        return getattr(layouts(order).feature, Feature(feat).name, None)
    except ValueError:
        return None


def parse_feature(feat: int, buf: bytes, order: str, ctx: dict[int, Any]) -> Any:
    """Decode feature ``feat``; raises on a malformed payload (ValueError or construct's
    errors).  ``ctx`` holds features decoded so far (NRCPUS sizes CPU_TOPOLOGY)."""
    schema = _schema(feat, order)
    if schema is None:
        return bytes(buf)
    nr_cpus = (ctx.get(Feature.NRCPUS) or {}).get("nr_cpus_avail")
    v = plain(schema.parse(buf, nr_cpus=nr_cpus))
    shape = _SHAPES.get(feat)
    return shape[0](v, order) if shape else v


def encode_feature(order: str, feat: int, value: Any) -> bytes:
    """Payload bytes of feature ``feat`` from its decoded value (bytes pass through)."""
    if isinstance(value, (bytes, bytearray)):
        return bytes(value)
    schema = _schema(feat, order)
    shape = _SHAPES.get(feat, (None, lambda v, o: v))
    if schema is None or shape[1] is None:
        raise ValueError(f"no encoder for feature {feat}; pass its payload as bytes")
    v = shape[1](value, order)
    nr_cpus = len(v.get("cpus") or []) if feat == Feature.CPU_TOPOLOGY else None
    return bytes(schema.build(v, nr_cpus=nr_cpus))


def feature_summary(feat: int, value: Any) -> str:
    """A one-line, human description of a decoded feature (for ``info``)."""
    name = feature_name(feat)
    if isinstance(value, str):
        return f"{name}: {value}"
    if isinstance(value, list):
        return f"{name}: {len(value)} entries"
    if isinstance(value, bytes):
        return f"{name}: {len(value)} raw bytes"
    return f"{name}: {value}"


def one_line(e: Exception) -> str:
    """construct's error text on one line."""
    return " ".join(str(e).split())
