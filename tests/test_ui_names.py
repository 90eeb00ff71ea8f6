"""Names in the browser (issue 11): the record list, the detail pane's callchain and the
``sym=``/``dso=`` filter name samples through the one resolver, and every count matches
the demo generator's plan (what it planted where), not the resolver's own tables."""

from __future__ import annotations

import re
from collections import Counter

import pytest
from test_ui_pilot import browse, detail_text, type_prompt, view_rows
from uihelpers import sync

from perftui.demo.generate import DemoPlan, write_demo
from perftui.perfdata import RecordType
from perftui.symbols.modules.modnames import module_name
from perftui.ui.widgets.records import RecordList

pytestmark = pytest.mark.slow

WHERE = re.compile(r"^\[k\] (\S+)\+0x[0-9a-f]+ \(\[(\w+)\](\.[\w.]+)?\)")


@pytest.fixture(scope="module")
def plan(tmp_path_factory: pytest.TempPathFactory) -> DemoPlan:
    return write_demo(tmp_path_factory.mktemp("names") / "demo.data")


def planned_symbols(plan: DemoPlan) -> Counter[tuple[str, str]]:
    """(module, symbol) -> samples the generator put there."""
    out: Counter[tuple[str, str]] = Counter()
    for (mod, _sec, sym), n in plan.in_symbols.items():
        out[(module_name(mod), sym)] += n
    return out


@sync
async def test_every_sample_line_names_its_symbol(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, _pilot):
        m = app.model
        # a first open: a resolver named them (perf's thread model), then went
        assert m.names is not None and m.resolver is None
        got: Counter[tuple[str, str]] = Counter()
        sections: Counter[tuple[str, str, str]] = Counter()
        for row in m.sample_rows.tolist():
            hit = WHERE.match(m.line_summary(int(row)))
            if hit:
                got[(hit.group(2), hit.group(1))] += 1
                sections[(hit.group(2), hit.group(3) or "", hit.group(1))] += 1
        want = planned_symbols(plan)
        assert {k: v for k, v in got.items() if k in want} == dict(want)
        # and the module section each line names (the demo has KMOD_SEC_MAP records)
        planned = Counter({(module_name(mod), sec, sym): n
                           for (mod, sec, sym), n in plan.in_symbols.items()})
        assert {k: v for k, v in sections.items() if k in planned} == dict(planned)


@sync
async def test_sym_and_dso_filters_match_the_plan(plan: DemoPlan) -> None:
    want = planned_symbols(plan)
    (mod, sym), n = max(want.items(), key=lambda kv: kv[1])
    async with browse(plan.path) as (app, pilot):
        for text, expect in ((f"sym={sym}", sum(v for (_m, s), v in want.items() if s == sym)),
                             (f"dso={mod}", sum(v for (mm, _s), v in want.items() if mm == mod)),
                             (f"dso={mod} sym={sym}", n)):
            await pilot.press("slash")
            await type_prompt(pilot, text)
            rows = view_rows(app)
            types = app.model.rec.columns["type"][rows]
            assert (types == RecordType.SAMPLE).all()
            assert len(rows) == expect, text


@sync
async def test_detail_names_the_callchain(plan: DemoPlan) -> None:
    async with browse(plan.path) as (app, pilot):
        m = app.model
        c = m.rec.columns
        # a sample with a callchain that enters a module
        for row in m.sample_rows.tolist():
            f = m.fields(int(row))
            if len(f.get("callchain", [])) > 3 and "[demo" in m.line_summary(int(row)):
                break
        records = app.query_one(RecordList)
        records.jump_to_row(int(row))
        for _ in range(50):
            await pilot.pause(0.05)
            if "[k] " in detail_text(app).split("callchain:", 1)[-1]:
                break
        text = detail_text(app)
        chain = text.split("callchain:", 1)[1].splitlines()[1:]
        named = [ln for ln in chain if "[k] " in ln or "[.] " in ln]
        assert named, text
        assert "PERF_CONTEXT_KERNEL" in text
        assert f"symbol: {m.where(int(row))}" in text
        assert int(c["type"][row]) == RecordType.SAMPLE
