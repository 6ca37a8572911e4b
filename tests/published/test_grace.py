"""GRACE's compressor costs as a check of lionsim's codec: the release's cost is the throughput run's
step minus the upper-bound run's (the median of each where several runs exist), lionsim's the
codec its estimate prices, and the docs block is what the generator prints (tests/docs)."""

from __future__ import annotations

import math
import statistics

import pytest

from lionsim.published import grace


def _method(name: str) -> grace.Method:
    return next(m for m in grace.METHODS if m.grace == name)


def test_the_release_s_cost_is_the_difference_of_the_two_steps():
    topk = _method("topk 0.01 (memory)")
    assert topk.cost_s() == pytest.approx(512 / 1457.3552 - 512 / 2427.4440, rel=1e-12)
    assert 0.13 < topk.cost_s() < 0.15


def test_several_runs_give_the_median_step_of_each_mode():
    qsgd = _method("qsgd (no memory)")
    by_hand = (statistics.median([512 / 1539.0008, 512 / 1047.6128, 512 / 1041.9632])
               - statistics.median([512 / 1042.8120, 512 / 1042.9176, 512 / 1530.6304]))
    assert qsgd.cost_s() == pytest.approx(by_hand, rel=1e-12)


def test_the_table_puts_lionsim_s_codec_beside_each_release_cost():
    ours = {m.run: float(i) for i, m in enumerate(grace.METHODS) if m.run}
    frame = grace.table(ours)
    assert list(frame["grace"]) == [m.grace for m in grace.METHODS]
    for m, row in zip(grace.METHODS, frame.itertuples(index=False)):
        assert row.release_s == m.cost_s()
        assert math.isnan(row.lionsim_s) if m.run is None else row.lionsim_s == ours[m.run]
    text = grace.markdown(frame)
    assert text.count("\n| ") == len(grace.METHODS) and "rkrw9e5x0" in text


@pytest.mark.slow  # one estimate of seven strategies on ResNet-50 (about 5 s of CPU)
def test_lionsim_s_codec_is_encode_plus_decode_of_the_cases_configuration():
    from lionsim.published import compressed
    from lionsim.published.cases import _run

    costs = grace.codec_costs()
    case = next(c for c in compressed.COMPRESSED_CASES if c.key == "grace-topk-resnet50-10g")
    frame = _run(case.command)  # its own command: sgdm, then dgc
    assert costs["dgc@sparse-allgather"] == pytest.approx(float(frame["encode_s"][1] + frame["decode_s"][1]))
    assert set(costs) >= {m.run for m in grace.METHODS if m.run}
