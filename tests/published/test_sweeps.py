"""Published nccl-tests sweeps across nodes against lionsim (lionsim.published.sweeps): the data
is what it says, the fabrics' figures are the fit's, the docs table is the sweeps run now, and
every point within its goal or its sweep says why."""

from __future__ import annotations

from pathlib import Path

import pytest

from lionsim.published import cases as published, sweeps as ps
from lionsim.network.fabric_fit import FITTED
from lionsim.network.fabrics import FABRICS

DOC = Path(__file__).resolve().parents[2] / "docs" / "clusters.md"


@pytest.fixture(scope="session")
def results():
    return ps.results()


def test_the_sweeps_span_three_fabrics_with_full_ranges_and_hold_some_out():
    full = [s for s in ps.SWEEPS if min(s.times_us()) <= 64 and max(s.times_us()) >= 256 * ps.MiB]
    assert len(full) >= 4 and len({s.fabric for s in full}) >= 3
    for name in FITTED:
        roles = {s.role for s in ps.SWEEPS if s.fabric == name}
        assert roles == {"fit", "held-out"}, name  # each fitted fabric is checked on a sweep it did not see
    for sweep in ps.SWEEPS:
        sizes = [r[0] for r in sweep.rows]
        assert sweep.source and sweep.config and sweep.fabric in FABRICS and sweep.role in ("fit", "held-out")
        assert sizes == sorted(set(sizes)) and all(t > 0 for r in sweep.rows for t in r[1:])
        assert set(sweep.sizes()) <= set(sizes)


def test_a_rows_published_time_is_the_lower_of_its_two_columns():
    sweep = next(s for s in ps.SWEEPS if s.key == "ib-ndr-h100-2x8")
    assert sweep.times_us()[8] == 24.70  # out-of-place 68.52 us: the first call's stall


def test_the_fabrics_figures_are_the_fit_on_the_fit_sweeps(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # what --fit fits, from any directory (the profiles are paths from the root)
    for name, fitted in ps.fitted_fabrics().items():
        fabric = FABRICS.get(name)
        assert (fabric.hop_us, fabric.share, fabric.cap_GBps, fabric.channel_GBps, fabric.protocol_share, fabric.protocols) == (
            fitted.hop_us, fitted.share, fitted.cap_GBps, fitted.channel_GBps, fitted.protocol_share, fitted.protocols), name
        assert fabric.fitted_on == fitted.fitted_on


def test_a_hosts_stated_rate_is_the_fit_on_its_own_fit_sweeps(tmp_path, monkeypatch):
    """p3dn states its host's rate (nccl.bounce_GBps): it is the one figure refitted on the sweeps of
    that network marked fit, and the fabric's own cap is fitted without them (above)."""
    from lionsim.network.profile import load_network

    root = Path(__file__).resolve().parents[2]
    monkeypatch.chdir(tmp_path)
    fitted = ps.fitted_hosts()
    assert set(fitted) == {"examples/clusters/p3dn.toml"}
    for network, rate in fitted.items():
        assert load_network(str(root / network)).sockets.bounce_GBps == rate
        fit_on = [s for s in ps.SWEEPS if s.network == network and s.role == "fit"]
        assert fit_on and all(FABRICS.get(s.fabric).through_host for s in fit_on)


def test_the_docs_table_is_the_sweeps_run_now(results):
    text = DOC.read_text()
    block = text.split("<!-- sweeps:begin -->\n", 1)[1].split("\n<!-- sweeps:end -->", 1)[0]
    assert block == ps.markdown_table(results)


def test_each_point_is_within_its_goal_or_its_sweep_says_why(results):
    misses = {s.key: s.miss for s in ps.SWEEPS}
    for row in results.itertuples(index=False):
        if abs(row.error) > ps.goal(row.bytes):
            assert len(misses[row.sweep]) > 40, f"{row.sweep} at {row.bytes} B misses by {row.error:+.1%} with no reason"
    assert ps.summary(results, "fit")["small_median"] <= 0.10
    assert ps.summary(results, "held-out")["small_median"] <= ps.GOAL_SMALL


@pytest.mark.slow  # builds the CLI (several seconds)
def test_a_sweeps_figures_are_what_its_command_prints():
    sweep = next(s for s in ps.SWEEPS if s.key == "sockets-g4dn-8xl-2x1")
    frame = published._run(sweep.command)
    printed = {int(b): float(t) * 1e6 for b, t in zip(frame["bytes"], frame["time_s"])}
    assert printed == pytest.approx(ps.lionsim_times_us(sweep), rel=1e-12)


def test_a_sweep_s_record_runs_from_any_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)  # the sweeps' profiles are examples/... paths from the repository's root
    assert ps.main(["--case", "efa-p6-b200-2x8"]) == 0
    assert "network examples/clusters/p6-b200.toml" in " ".join(capsys.readouterr().out.split())
