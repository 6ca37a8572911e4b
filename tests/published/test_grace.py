"""GRACE's compressor costs as a check of lionsim's codec: the release's cost is the throughput run's
step minus the upper-bound run's (the median of each where several runs exist), lionsim's the same
difference as it prices it (lionsim.published.grace_fit), and the docs block is what the generator
prints (tests/docs)."""

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


def test_the_table_puts_lionsim_s_priced_cost_beside_each_release_cost():
    ours = {m.run: float(i) for i, m in enumerate(grace.METHODS) if m.run}
    frame = grace.table(ours)
    assert list(frame["grace"]) == [m.grace for m in grace.METHODS]
    for m, row in zip(grace.METHODS, frame.itertuples(index=False)):
        assert row.release_s == m.cost_s()
        assert math.isnan(row.lionsim_s) if m.run is None else row.lionsim_s == ours[m.run]
    text = grace.markdown(frame)
    assert text.count("\n| ") == len(grace.METHODS) and "rkrw9e5x0" in text


@pytest.mark.slow  # an estimate of each of six strategies on ResNet-50 (about 5 s of CPU)
def test_lionsim_s_cost_is_the_step_of_the_cases_command_less_the_same_step_without_its_encode():
    from lionsim.published import compressed
    from lionsim.published.cases import _run

    costs = grace.increases()
    assert set(costs) == {m.run for m in grace.METHODS if m.run}
    from lionsim.published.grace_fit import config, modes

    for run, cost in costs.items():
        row = _run(grace.command(run)).iloc[0]  # the CLI, as a user types it
        assert modes(config(run)).throughput_s == pytest.approx(row.step_s, rel=1e-12)  # the same estimate
        assert 0 <= cost <= row.encode_s + 1e-12
    # the top-k cases' command prices the same run as the table
    case = next(c for c in compressed.COMPRESSED_CASES if c.key == "grace-topk-resnet50-10g")
    assert "dgc@grace-allgather" in case.command


def _ours() -> dict[str, float]:
    """lionsim's costs without running anything: 0.001 s, 0.002 s, ... by run."""
    return {run: (i + 1) / 1000 for i, run in enumerate(dict.fromkeys(m.run for m in grace.METHODS if m.run))}


def test_the_terminal_table_keeps_to_the_terminal_s_width_a_row_a_method(monkeypatch, capsys):
    monkeypatch.setattr(grace, "increases", _ours)
    monkeypatch.setenv("COLUMNS", "72")
    assert grace.main([]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert max(map(len, lines)) <= 72 and lines[0].split()[:3] == ["method", "lionsim", "run"]
    first = next(i for i, line in enumerate(lines) if line.startswith("---")) + 1
    keys = [m.key for m in grace.METHODS]
    assert len(set(keys)) == len(keys) and [line.split()[0] for line in lines[first:first + len(keys)]] == keys
    dgc = lines[first + keys.index("dgc-0.01")].split()
    assert dgc[1:] == ["dgc@grace-allgather", "0.290", f"{_ours()['dgc@grace-allgather']:.3f}"]
    assert lines[first + len(keys) + 1].startswith("What it shows:")


def test_markdown_prints_the_docs_block_and_a_method_s_record_its_runs(monkeypatch, capsys):
    monkeypatch.setattr(grace, "increases", _ours)
    assert grace.main(["--markdown"]) == 0
    assert capsys.readouterr().out == grace.markdown(grace.table(_ours()))
    assert grace.main(["--case", "qsgd"]) == 0
    out = " ".join(capsys.readouterr().out.splitlines())  # the fields wrapped at spaces
    qsgd = _method("qsgd (no memory)")
    assert all(run in out for run, _ in (*qsgd.throughput, *qsgd.upper_bound))
    assert f"compressor cost a step: {qsgd.cost_s():.3f} s" in out and "lionsim: compressor cost a step: 0.003 s" in out
    assert f"command: lionsim {' '.join(grace.command('qsgd@allgather-levels'))}" in out
    assert "--qsgd-levels 127" in out and "--topk-ratio" not in out
    assert grace.main(["--case", "randomk-0.01"]) == 0 and "lionsim run: none" in capsys.readouterr().out
