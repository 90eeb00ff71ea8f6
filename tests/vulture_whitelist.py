"""Names vulture cannot see used (``make lint`` runs vulture over perftui, tests, scripts and
bench with this file).  Textual's and construct's hooks are ignored by name in
pyproject.toml ([tool.vulture] ignore_names); everything else vulture reports is either
used in a way it cannot follow, listed here with how, or removed.
"""

from typing import Any

from perftui.perfdata.attr import EventAttr
from perftui.perfdata.constants import Feature, RecordType
from perftui.perfdata.writer import Writer
from perftui.symbols.code.disasm import Instruction
from perftui.symbols.dwarf import forms

_: Any = None  # (never run: vulture only reads the names)

# Enum members are named by value at run time (RecordType(t).name in constants._NAMES,
# Feature(n).name in feature_name and features.py): every record type and feature a file
# may hold is there, used in a file or not
RecordType.THROTTLE, RecordType.UNTHROTTLE, RecordType.AUX_OUTPUT_HW_ID  # noqa: B018
RecordType.AUXTRACE_INFO, RecordType.STAT_CONFIG, RecordType.STAT_ROUND  # noqa: B018
RecordType.SCHEDSTAT_CPU, RecordType.SCHEDSTAT_DOMAIN  # noqa: B018
Feature.RESERVED, Feature.NUMA_TOPOLOGY, Feature.MEM_TOPOLOGY, Feature.CLOCKID  # noqa: B018
Feature.DIR_FORMAT, Feature.CLOCK_DATA, Feature.HYBRID_TOPOLOGY  # noqa: B018

# perf_event_attr's fields: read and written by name (attr._FIELDS, getattr/setattr)
EventAttr.wakeup_events, EventAttr.bp_type, EventAttr.config1  # noqa: B018
EventAttr.config2, EventAttr.sample_stack_user, EventAttr.clockid  # noqa: B018
EventAttr.aux_watermark, EventAttr.sample_max_stack, EventAttr.aux_sample_size  # noqa: B018
EventAttr.aux_action, EventAttr.sig_data  # noqa: B018

# bench/browser_probe.py gives a widget its probing subclass
_.__class__  # noqa: B018

# capstone's Cs options are properties set on the library's object
_.skipdata  # noqa: B018

# the writer compresses (compress=...) only the records written after start_compression,
# as perf writes its first records plain and the ring's data compressed; only the tests
# write compressed recordings (builders.kitchen_sink, test_malformed, test_sections: the
# demo's is plain), and nothing else turns the compressor on
Writer.start_compression  # noqa: B018

# a fact the disassembler keeps beside is_call and is_jump, which annotate reads; no view
# reads it yet (disasm.py belongs to the disasm lane this session: left to it)
Instruction.is_return  # noqa: B018

# DW_FORM_* codes, declared as DWARF 5's whole table; no reader names these yet (the
# inline lane's symbols/dwarf/, this session: left to it)
forms.STRX2, forms.STRX3, forms.ADDRX2, forms.ADDRX3  # noqa: B018

# numpy's array flags are set by attribute (walk.read_only makes the stack copies read-only)
_.flags.writeable  # noqa: B018

# compiled ahead by make setup and tests/warmup.py, which call it in a child python by name
from perftui.symbols.unwind import walk  # noqa: E402

walk.compile_now  # noqa: B018

# pprof's Profile fields, set by name on a protobuf message (the package encodes them)
_.default_sample_type, _.duration_nanos, _.time_nanos  # noqa: B018
