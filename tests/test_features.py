"""Feature payloads: one construct declaration reads and writes each of them.

On every feature of every corpus recording, decoding what the encoder wrote from the decoded
value gives that value back; on perf 6.1's own recordings the encoder gives back perf's bytes
exactly (perftui's writer imitates perf 6.1: header strings padded to 64, BUILD_ID entries
with the size flag).  Other writers round strings to 8 (the quipper ``weight_struct`` file),
pad HEADER_FEATURE records (perf 6.12) or leave the build-id size byte 0 (perf 3.x-4.x), so
their bytes differ while their values agree.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from conftest import RECORDINGS
from perftui.perfdata import NotPerfData, RecordType, open_recording
from perftui.perfdata.constants import Feature, feature_name
from perftui.perfdata.features import encode_feature, parse_feature
from perftui.perfdata.header import read_file_header

Corpus = Callable[[str], Path]
#: decoded values that summarise their payload: they cannot be written back
SUMMARIES = {Feature.TRACING_DATA, Feature.BPF_PROG_INFO, Feature.BPF_BTF}
#: pipe-mode recordings older than HEADER_FEATURE records (perf 4.16)
NO_FEATURES = {"perfparser/contentsize.data", "perfparser/probe.data.stream",
               "quipper/perf.data.piped.corrupted.zero_size_sample-3.2",
               "quipper/perf.data.piped.lost_samples-4.4"}


def raw_features(path: Path) -> tuple[str, dict[int, bytes]]:
    """(byte order, raw feature payloads by bit) of a file- or pipe-mode recording."""
    rec = open_recording(str(path))
    try:
        if rec.mode != "pipe":
            assert rec.buf is not None
            return rec.order, read_file_header(rec.buf, rec.path, rec.order).features
        rec.build_index()
        out = {}
        for i in np.nonzero(rec.columns["type"] == RecordType.HEADER_FEATURE)[0]:
            raw = rec.record_bytes(int(i))
            if len(raw) > 16:  # not the end-of-features marker
                out[int.from_bytes(raw[8:16], "big" if rec.order == ">" else "little")] = \
                    raw[16:]
        return rec.order, out
    finally:
        rec.close()


@pytest.mark.parametrize("rel", [r for r in RECORDINGS if not r.startswith("hotspot/")])
def test_every_corpus_feature_round_trips(rel: str, corpus: Corpus) -> None:
    try:
        order, payloads = raw_features(corpus(rel))
    except NotPerfData:
        pytest.fail(f"{rel} is a v2 recording")
    ctx: dict[int, Any] = {}
    written = 0
    for bit, payload in sorted(payloads.items()):
        value = parse_feature(bit, payload, order, ctx)
        ctx[bit] = value
        if isinstance(value, bytes) or bit in SUMMARIES:
            continue  # unknown to perftui, or a summary
        out = encode_feature(order, bit, value)
        assert parse_feature(bit, out, order, ctx) == value, feature_name(bit)
        if rel.startswith("perf61/"):
            assert out == payload, feature_name(bit)
        written += 1
    if rel in NO_FEATURES:
        assert payloads == {}
    else:  # every other recording has at least hostname, osrelease and version
        assert written >= 3


def test_perf61_file_features_are_all_written_back(corpus: Corpus) -> None:
    """perf 6.1's file-mode recording: 20 features, every decodable one rebuilt byte-exact."""
    order, payloads = raw_features(corpus("perf61/perf-normal-g.data"))
    rebuilt = [b for b, p in payloads.items() if b not in SUMMARIES
               and encode_feature(order, b, parse_feature(b, p, order, {
                   Feature.NRCPUS: parse_feature(Feature.NRCPUS, payloads[Feature.NRCPUS],
                                                 order, {})})) == p]
    assert Feature.BUILD_ID in rebuilt and Feature.EVENT_DESC in rebuilt
    assert Feature.CPU_TOPOLOGY in rebuilt and Feature.CACHE in rebuilt
    assert len(rebuilt) == len([b for b in payloads if b not in SUMMARIES])
