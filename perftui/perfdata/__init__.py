"""Headless perf.data decoder: never imports textual or rich."""

from .attr import EventAttr
from .constants import KMOD_SEC_MAP, Feature, RecordType, Sample, type_code, type_name
from .errors import NotPerfData, PerfDataError
from .recording import Recording, open_recording

__all__ = [
    "KMOD_SEC_MAP",
    "EventAttr",
    "Feature",
    "NotPerfData",
    "PerfDataError",
    "RecordType",
    "Recording",
    "Sample",
    "open_recording",
    "type_code",
    "type_name",
]
