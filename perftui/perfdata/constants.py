"""Numbers of the perf.data format: record types, sample bits, features (docs/format.md)."""

from __future__ import annotations

from enum import IntEnum, IntFlag

MAGIC_LE = 0x32454C4946524550  # b"PERFILE2" read as a little-endian u64
MAGIC_BE = 0x50455246494C4532  # b"PERFILE2" written by a big-endian host
MAGIC_V1 = b"PERFFILE"
FILE_HEADER_SIZE = 104
OLD_FILE_HEADER_SIZE = 72
PIPE_HEADER_SIZE = 16


class RecordType(IntEnum):
    """Record types: kernel (1..22) and perf-tool user types (64..86)."""

    MMAP = 1
    LOST = 2
    COMM = 3
    EXIT = 4
    THROTTLE = 5
    UNTHROTTLE = 6
    FORK = 7
    READ = 8
    SAMPLE = 9
    MMAP2 = 10
    AUX = 11
    ITRACE_START = 12
    LOST_SAMPLES = 13
    SWITCH = 14
    SWITCH_CPU_WIDE = 15
    NAMESPACES = 16
    KSYMBOL = 17
    BPF_EVENT = 18
    CGROUP = 19
    TEXT_POKE = 20
    AUX_OUTPUT_HW_ID = 21
    CALLCHAIN_DEFERRED = 22
    HEADER_ATTR = 64
    HEADER_EVENT_TYPE = 65
    HEADER_TRACING_DATA = 66
    HEADER_BUILD_ID = 67
    FINISHED_ROUND = 68
    ID_INDEX = 69
    AUXTRACE_INFO = 70
    AUXTRACE = 71
    AUXTRACE_ERROR = 72
    THREAD_MAP = 73
    CPU_MAP = 74
    STAT_CONFIG = 75
    STAT = 76
    STAT_ROUND = 77
    EVENT_UPDATE = 78
    TIME_CONV = 79
    HEADER_FEATURE = 80
    COMPRESSED = 81
    FINISHED_INIT = 82
    COMPRESSED2 = 83
    BPF_METADATA = 84
    SCHEDSTAT_CPU = 85
    SCHEDSTAT_DOMAIN = 86


#: Type 83 is upstream's COMPRESSED2 *or* the RFC's KMOD_SEC_MAP (docs/format.md, "Type 83").
#: The index (a u16 column) stores an RFC record under this private code so the two
#: never mix; raw types from 0xFF00 up are all stored as 0xFF00, so codes past it are free.
KMOD_SEC_MAP = 0xFF53
#: A type-83 record that is neither COMPRESSED2 nor an RFC KMOD_SEC_MAP.
UNKNOWN_83 = 0xFF83
RAW_TYPE_CLAMP = 0xFF00
USER_TYPE_START = 64

_NAMES: dict[int, str] = {t.value: t.name for t in RecordType}
_NAMES[KMOD_SEC_MAP] = "KMOD_SEC_MAP"
_NAMES[UNKNOWN_83] = "UNKNOWN(83)"
_NAMES[RAW_TYPE_CLAMP] = "UNKNOWN(>=65280)"
_BY_NAME: dict[str, int] = {v: k for k, v in _NAMES.items()}


def type_name(code: int) -> str:
    """perf's name of a record type (the index code 183 is KMOD_SEC_MAP)."""
    return _NAMES.get(code, f"UNKNOWN({code})")


#: perf's own spellings of the user types (``perf report -D`` prints ``ATTR``, ...)
_ALIASES = {"ATTR": "HEADER_ATTR", "EVENT_TYPE": "HEADER_EVENT_TYPE",
            "TRACING_DATA": "HEADER_TRACING_DATA", "BUILD_ID": "HEADER_BUILD_ID",
            "FEATURE": "HEADER_FEATURE"}


def type_code(name: str) -> int:
    """Inverse of :func:`type_name`; accepts ``PERF_RECORD_`` prefixes, perf's short names
    of the user types (``ATTR``, ``FEATURE``, ...) and any case."""
    key = name.upper().removeprefix("PERF_RECORD_")
    key = _ALIASES.get(key, key)
    if key in _BY_NAME:
        return _BY_NAME[key]
    if key.startswith("UNKNOWN(") and key.endswith(")"):
        return int(key[8:-1])
    if key.isdigit():
        return int(key)
    raise KeyError(name)


class Sample(IntFlag):
    """``perf_event_attr.sample_type`` bits."""

    IP = 1 << 0
    TID = 1 << 1
    TIME = 1 << 2
    ADDR = 1 << 3
    READ = 1 << 4
    CALLCHAIN = 1 << 5
    ID = 1 << 6
    CPU = 1 << 7
    PERIOD = 1 << 8
    STREAM_ID = 1 << 9
    RAW = 1 << 10
    BRANCH_STACK = 1 << 11
    REGS_USER = 1 << 12
    STACK_USER = 1 << 13
    WEIGHT = 1 << 14
    DATA_SRC = 1 << 15
    IDENTIFIER = 1 << 16
    TRANSACTION = 1 << 17
    REGS_INTR = 1 << 18
    PHYS_ADDR = 1 << 19
    AUX = 1 << 20
    CGROUP = 1 << 21
    DATA_PAGE_SIZE = 1 << 22
    CODE_PAGE_SIZE = 1 << 23
    WEIGHT_STRUCT = 1 << 24


SAMPLE_BIT_NAMES: list[tuple[int, str]] = [(int(b), b.name or "") for b in Sample]


def sample_type_names(sample_type: int) -> list[str]:
    """Names of the bits set in a sample_type, unknown bits as ``BIT<n>``."""
    names = [name for bit, name in SAMPLE_BIT_NAMES if sample_type & bit]
    known = 0
    for bit, _ in SAMPLE_BIT_NAMES:
        known |= bit
    rest = sample_type & ~known
    names += [f"BIT{n}" for n in range(64) if rest >> n & 1]
    return names


class ReadFormat(IntFlag):
    TOTAL_TIME_ENABLED = 1 << 0
    TOTAL_TIME_RUNNING = 1 << 1
    ID = 1 << 2
    GROUP = 1 << 3
    LOST = 1 << 4


#: ``perf_event_attr`` flag bits at offset 40, in bit order (docs/format.md, "Attrs").
ATTR_FLAG_BITS: list[tuple[int, str, int]] = [
    (0, "disabled", 1), (1, "inherit", 1), (2, "pinned", 1), (3, "exclusive", 1),
    (4, "exclude_user", 1), (5, "exclude_kernel", 1), (6, "exclude_hv", 1),
    (7, "exclude_idle", 1), (8, "mmap", 1), (9, "comm", 1), (10, "freq", 1),
    (11, "inherit_stat", 1), (12, "enable_on_exec", 1), (13, "task", 1),
    (14, "watermark", 1), (15, "precise_ip", 2), (17, "mmap_data", 1),
    (18, "sample_id_all", 1), (19, "exclude_host", 1), (20, "exclude_guest", 1),
    (21, "exclude_callchain_kernel", 1), (22, "exclude_callchain_user", 1),
    (23, "mmap2", 1), (24, "comm_exec", 1), (25, "use_clockid", 1),
    (26, "context_switch", 1), (27, "write_backward", 1), (28, "namespaces", 1),
    (29, "ksymbol", 1), (30, "bpf_event", 1), (31, "aux_output", 1), (32, "cgroup", 1),
    (33, "text_poke", 1), (34, "build_id", 1), (35, "inherit_thread", 1),
    (36, "remove_on_exec", 1), (37, "sigtrap", 1), (38, "defer_callchain", 1),
    (39, "defer_output", 1),
]
FLAG_SAMPLE_ID_ALL = 1 << 18
FLAG_FREQ = 1 << 10

BRANCH_CALL_STACK = 1 << 11  # PERF_SAMPLE_BRANCH_CALL_STACK: the LBR as a call stack
BRANCH_HW_INDEX = 1 << 17
BRANCH_COUNTERS = 1 << 19


class Misc:
    CPUMODE_MASK = 7  # 0: unknown
    KERNEL = 1
    USER = 2
    HYPERVISOR = 3
    GUEST_KERNEL = 4
    GUEST_USER = 5
    MMAP_DATA = 1 << 13
    COMM_EXEC = 1 << 13
    SWITCH_OUT = 1 << 13
    SWITCH_OUT_PREEMPT = 1 << 14  # (kernels since 4.17)
    MMAP_BUILD_ID = 1 << 14
    BUILD_ID_SIZE = 1 << 15


CONTEXT_MARKERS = {
    2**64 - 32: "PERF_CONTEXT_HV",
    2**64 - 128: "PERF_CONTEXT_KERNEL",
    2**64 - 512: "PERF_CONTEXT_USER",
    2**64 - 640: "PERF_CONTEXT_USER_DEFERRED",
    2**64 - 2048: "PERF_CONTEXT_GUEST",
    2**64 - 2176: "PERF_CONTEXT_GUEST_KERNEL",
    2**64 - 2560: "PERF_CONTEXT_GUEST_USER",
}
#: Callchain entries from here up are context markers, not addresses.
PERF_CONTEXT_MAX = 2**64 - 4095
CONTEXT_KERNEL = 2**64 - 128
CONTEXT_USER = 2**64 - 512


class Feature(IntEnum):
    RESERVED = 0
    TRACING_DATA = 1
    BUILD_ID = 2
    HOSTNAME = 3
    OSRELEASE = 4
    VERSION = 5
    ARCH = 6
    NRCPUS = 7
    CPUDESC = 8
    CPUID = 9
    TOTAL_MEM = 10
    CMDLINE = 11
    EVENT_DESC = 12
    CPU_TOPOLOGY = 13
    NUMA_TOPOLOGY = 14
    BRANCH_STACK = 15
    PMU_MAPPINGS = 16
    GROUP_DESC = 17
    AUXTRACE = 18
    STAT = 19
    CACHE = 20
    SAMPLE_TIME = 21
    MEM_TOPOLOGY = 22
    CLOCKID = 23
    DIR_FORMAT = 24
    BPF_PROG_INFO = 25
    BPF_BTF = 26
    COMPRESSED = 27
    CPU_PMU_CAPS = 28
    CLOCK_DATA = 29
    HYBRID_TOPOLOGY = 30
    PMU_CAPS = 31
    CPU_DOMAIN_INFO = 32


def feature_name(n: int) -> str:
    try:
        return Feature(n).name
    except ValueError:
        return f"FEATURE_{n}"


#: ``perf_event_attr.type`` values.
ATTR_TYPE_NAMES = {0: "hardware", 1: "software", 2: "tracepoint", 3: "hw-cache",
                   4: "raw", 5: "breakpoint"}

HW_EVENT_NAMES = {0: "cycles", 1: "instructions", 2: "cache-references", 3: "cache-misses",
                  4: "branches", 5: "branch-misses", 6: "bus-cycles",
                  7: "stalled-cycles-frontend", 8: "stalled-cycles-backend", 9: "ref-cycles"}
SW_EVENT_NAMES = {0: "cpu-clock", 1: "task-clock", 2: "page-faults", 3: "context-switches",
                  4: "cpu-migrations", 5: "minor-faults", 6: "major-faults",
                  7: "alignment-faults", 8: "emulation-faults", 9: "dummy", 10: "bpf-output",
                  11: "cgroup-switches"}
