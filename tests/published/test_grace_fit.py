"""GRACE's two modes as lionsim prices them (lionsim.published.grace_fit), and the two kernel rows
solved from them. References: the step priced with nothing beside the encode (the increase is then
the encode exactly), the step's spans drawn by lionsim.steptime.lanes (another implementation of the
same schedule), a rate recovered from the increase it gives, and the release's own figures."""

from __future__ import annotations

import dataclasses

import pytest

from lionsim.estimate.config import resolve
from lionsim.published import grace, grace_fit

POWERSGD = "powersgd@lowrank-allreduce"


def test_with_the_exchange_after_backward_the_compressor_adds_its_encode_in_full():
    cfg = dataclasses.replace(grace_fit.config(POWERSGD), overlap="none")
    m = grace_fit.modes(cfg)
    assert m.encode_s > 0.05 and m.increase_s == pytest.approx(m.encode_s, rel=1e-12)


def test_both_modes_are_the_steps_lionsim_s_timeline_draws():
    from lionsim.estimate.probe import probe_resolved
    from lionsim.estimate.table import step_inputs
    from lionsim.steptime.lanes import modelled_lanes, step_end

    cfg = grace_fit.config(POWERSGD)
    r = resolve(cfg)
    run = r.runs[0]
    p = probe_resolved(r, run)
    work, pricing = step_inputs(r, run, p, r.step_flops(), r.workers, r.network)
    m = grace_fit.modes(cfg)
    drawn = [step_end(modelled_lanes(work=w, factors=[1.0], **pricing)[0])
             for w in (work, dataclasses.replace(work, encode_s=0.0))]
    assert drawn == pytest.approx([m.throughput_s, m.upper_bound_s], rel=1e-9)
    # beside the exchanges, part of the encode hides: the increase is less than it
    assert 0 < m.increase_s < m.encode_s


def test_the_solve_recovers_the_rate_that_gave_an_increase():
    cfg = grace_fit.config(POWERSGD)
    cost = grace_fit.modes(cfg, {"orthogonalize": 0.8}).increase_s
    assert grace_fit.solved_rate("orthogonalize", cfg, cost) == pytest.approx(0.8, rel=1e-5)
    with pytest.raises(ValueError, match="no orthogonalize rate"):
        grace_fit.solved_rate("orthogonalize", cfg, 100.0)


@pytest.mark.parametrize("kernel", sorted(grace.ROWS))
def test_the_shipped_rows_are_the_solved_rates_and_price_the_release_s_cost(kernel):
    from lionsim.compute.kernel_table import default_table

    method = next(m for m in grace.METHODS if m.grace == grace.ROWS[kernel])
    shipped = default_table().row(grace_fit.FRAMEWORK, kernel).GBps
    assert shipped == pytest.approx(grace.solved(kernel), rel=1e-3)
    assert grace_fit.modes(grace_fit.config(method.run)).increase_s == pytest.approx(method.cost_s(), rel=5e-3)
