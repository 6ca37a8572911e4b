"""Published measurements of compressed training side by side: the cases come from at least
three sources with their configurations, the hold-out is kept apart, the docs table is the one
the cases give now, every case beyond 15% names what lionsim lacks for it, and a case whose two
steps ran on different libraries reads its ratio across its two commands."""

from __future__ import annotations

import math
import re
import tomllib
from pathlib import Path

import pandas as pd
import pytest

from lionsim.published import cases as published, compressed as pc
from lionsim.compute.counted import count_on_meta

DOC = Path(__file__).resolve().parents[2] / "docs" / "clusters.md"
MECHANISMS = tuple(f"`{gap}`" for gap in pc.GAPS)
"""What lionsim lacks, as each miss names it (pc.GAPS)."""


def _source(case: published.Case) -> str:
    return re.split(r"[,:]", case.source, maxsplit=1)[0]


def test_eight_points_from_three_sources_and_a_separate_hold_out():
    assert len(pc.COMPRESSED_CASES) >= 8 and len({_source(c) for c in pc.COMPRESSED_CASES}) >= 3
    assert len(pc.HOLDOUT_CASES) >= 4
    keys = [c.key for c in (*pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES, *published.CASES)]
    assert len(keys) == len(set(keys))
    for case in (*pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES):
        assert case.published > 0 and case.config and case.quantity and case.command[0] == "estimate"
        assert case.read in ("step_ratio", "comm_ratio", "bandwidth_needed")
    for finding in pc.FINDINGS:
        assert finding.source and finding.config and finding.published and len(finding.why) > 40


def test_every_miss_names_a_mechanism():
    for case in (*pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES, *pc.SECOND_HOLDOUT_CASES):
        if case.miss:
            assert any(m in case.miss for m in MECHANISMS), case.key


def test_the_deepspeed_cases_run_as_the_released_scripts_launch_them():
    """Pre-training (every bing_bert script sets NCCL_TREE_THRESHOLD=0): the dense step's all-reduce is
    pinned to a ring, never 1-bit Adam's MPI command; SQuAD (its script: 4 GPUs a node, no NCCL
    variable): 4 GPUs a node in every command, no pin; the paper's own profile rows: no pin."""
    deepspeed = [c for c in (*pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES) if c.key.startswith(("onebit", "holdout-onebit"))]
    assert len(deepspeed) == 6
    for case in deepspeed:
        commands = [case.command] + ([case.versus] if case.versus else [])
        pinned = [" --algorithm ring " in " ".join(c) + " " for c in commands]
        laid = [" --gpus-per-node 4 " in " ".join(c) + " " for c in commands]
        if "-squad-" in case.key:
            assert laid == [True] * len(commands) and not any(pinned), case.key
            assert "4 per node" in case.config and "NGPU_PER_NODE=4, NUM_NODES=4" in case.config
        else:
            assert pinned[0] and not any(pinned[1:]) and not any(laid), case.key
            assert "NCCL_TREE_THRESHOLD=0" in case.config
    assert not any("--algorithm" in c.command or "--algorithm" in c.versus for c in pc.SECOND_HOLDOUT_CASES)


@pytest.mark.slow  # one estimate through the command line (about 5 s of CPU)
def test_the_step_ratio_is_read_from_the_second_row_over_the_first():
    case = next(c for c in pc.COMPRESSED_CASES if c.key == "grace-powersgd-resnet50-10g")
    frame = published._run(case.command)
    assert list(frame["strategy"]) == ["sgdm", "powersgd"]
    assert published.lionsim_figure(case) == pytest.approx(frame["step_s"][1] / frame["step_s"][0], rel=1e-12)


def test_the_vgg16_file_is_torchvision_s_vgg16():
    from lionsim.plugin_load import load_function, parse_spec

    spec = parse_spec(str(Path(__file__).resolve().parents[2] / "examples" / "models" / "vgg16.py:vgg16"), "--model")
    vgg16 = load_function(spec, "--model")
    count = count_on_meta(lambda: vgg16(batch=1), "vgg16.py:vgg16")
    assert count.params == 138_357_544  # torchvision's vgg16
    # 15.47 GMACs a 224x224 image (torchvision's table), FlopCounterMode counts 2 FLOPs a MAC
    assert count.forward_flops / count.samples / 2 / 1e9 == pytest.approx(15.47, rel=0.01)


@pytest.fixture(scope="session")
def results():
    return published.results(pc.COMPRESSED_CASES)


@pytest.mark.slow  # every compressed case's estimate (about 30 s of CPU)
def test_the_docs_table_is_the_compressed_cases_run_now(results):
    text = DOC.read_text()
    block = text.split("<!-- published-compressed:begin -->\n", 1)[1].split("\n<!-- published-compressed:end -->", 1)[0]
    assert block == pc.markdown(results)


@pytest.mark.slow  # every compressed case's estimate (about 30 s of CPU)
def test_each_case_beyond_15_percent_says_which_mechanism_it_points_to(results):
    for case, row in zip(pc.COMPRESSED_CASES, results.itertuples(index=False)):
        if abs(row.error) > pc.GOAL_MEDIAN:
            assert any(m in case.miss for m in MECHANISMS), f"{case.key} misses by {row.error:+.1%} and names no mechanism"


@pytest.mark.slow  # one estimate through the command line (about 5 s of CPU)
def test_the_bandwidth_needed_reading_is_the_first_row_of_estimate_need():
    from lionsim.estimate import EstimateConfig, resolve
    from lionsim.estimate.need import Need, need_rows

    args = dict(params=10**8, tokens_per_worker=65536, workers=8, network="10gbe", strategies=["sgdm@fp32-allreduce"])
    case = published.Case(key="need", source="a test", config="a test", quantity="GB/s", published=1.0,
                          command=("estimate", "--params", "1e8", "--tokens-per-worker", "65536", "--workers", "8",
                                   "--network", "10gbe", "-s", "sgdm@fp32-allreduce", "--need", "utilisation=0.5",
                                   "--format", "csv"),
                          read="bandwidth_needed")
    (record,) = need_rows(resolve(EstimateConfig(**args)), Need(0.5))
    assert published.lionsim_figure(case) == pytest.approx(record["bandwidth_needed_GBps"], rel=1e-9)


def test_a_ratio_across_two_commands_is_the_second_ones_step_over_the_firsts():
    common = ("estimate", "--params", "1e8", "--tokens-per-worker", "512", "--workers", "8", "--network", "10gbe",
              "--format", "csv")
    case = published.Case(key="versus", source="s", config="c", quantity="step ratio", published=1.0,
                           command=(*common, "-s", "adamw@bf16-allreduce"),
                           versus=(*common, "--traits", "mpi", "-s", "adamw@fp32-allreduce"), read="step_ratio")
    first, second = published._run(case.command), published._run(case.versus)
    assert published.lionsim_figure(case) == pytest.approx(second["step_s"][0] / first["step_s"][0], rel=1e-12)
    assert case.shell.count("lionsim estimate") == 2


def test_each_gap_a_miss_may_name_says_what_lionsim_lacks():
    assert all(len(text) > 40 for text in pc.GAPS.values())
    named = {gap for case in (*pc.COMPRESSED_CASES, *pc.HOLDOUT_CASES, *pc.SECOND_HOLDOUT_CASES) for gap in pc.GAPS if f"`{gap}`" in case.miss}
    assert named <= set(pc.GAPS)


def test_a_model_path_resolves_under_the_checkout_the_printed_command_unchanged():
    case = next(c for c in pc.COMPRESSED_CASES if c.key == "bagua-bytegrad-vgg16-100g")
    model = case.command[case.command.index("--model") + 1]
    assert model == "examples/models/vgg16.py:vgg16"  # printed as typed from the repository's root
    resolved = published.in_checkout(case.command)[case.command.index("--model") + 1]
    assert Path(resolved.rsplit(":", 1)[0]) == published.CHECKOUT / "examples" / "models" / "vgg16.py"
    assert Path(resolved.rsplit(":", 1)[0]).is_file()


@pytest.mark.slow  # one estimate of VGG-16 (about 3 s)
def test_a_case_with_a_model_file_runs_from_any_directory(tmp_path, monkeypatch, capsys):
    monkeypatch.chdir(tmp_path)
    assert pc.main(["--case", "bagua-bytegrad-vgg16-100g"]) == 0
    assert "examples/models/vgg16.py:vgg16" in capsys.readouterr().out


@pytest.mark.parametrize("rows, profile, per_node", [
    (pc.PROFILE, "examples/clusters/v100x4-40gbe.toml", 4),
    (pc.PROFILE_IB, "examples/clusters/v100x8-ib-qdr.toml", 8),
])
def test_profiles_intra_link_is_the_tables_one_node_row(rows, profile, per_node):
    """The 1-bit Adam clusters' intra-node links come from the paper's one-node rows: a ring over the
    node's GPUs moves 2 (n-1)/n of BERT-Large's 672 MB of fp16 through each GPU's link, so at the
    profile's rate the one-node all-reduce takes the row's time (closed form, not lionsim's model);
    and lionsim's one-node estimate prices it so."""
    root = Path(__file__).resolve().parents[2]
    spec = tomllib.loads((root / profile).read_text())
    assert spec["workers_per_node"] == per_node
    n, nbytes = per_node, 3.36e8 * 2
    ring_s = 2 * (n - 1) / n * nbytes / (spec["intra"]["bandwidth_GBps"] * 1e9)
    assert ring_s == pytest.approx(rows[1][1] / 1e3, rel=0.01)
    frame = published._run(("estimate", "--workers", str(n), "--tokens-per-worker", "2048", "--network",
                            profile, "--params", "3.36e8", "--device", "v100", "--overlap", "none",
                            "-s", "adamw@bf16-allreduce", "--format", "csv"))
    assert frame.iloc[0].comm_s == pytest.approx(rows[1][1] / 1e3, rel=0.02)


def test_ringed_pins_every_command_of_a_case_once():
    case = pc.SECOND_HOLDOUT_CASES[0]
    ring = pc.ringed(case)
    for before, after in ((case.command, ring.command), (case.versus, ring.versus)):
        assert after == (*before, "--algorithm", "ring")


@pytest.mark.slow  # 16 estimates (about 4 s)
def test_the_second_hold_out_prints_itself_priced_both_ways(capsys):
    """The line under --holdout2 is the summary of the same cases, each command pinned to a ring."""
    assert pc.main(["--holdout2"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    ring = published.summary(published.results(tuple(pc.ringed(c) for c in pc.SECOND_HOLDOUT_CASES)))
    assert f"median |error| {ring['median']:.1%}, worst {ring['worst']:.1%}" in out


def test_cases_priced_alike_where_their_sources_differ_are_said_to_be_one_prediction():
    from lionsim.published.cases import Case, alike_line

    def case(key, published, quantity="step ratio, x / y"):
        return Case(key=key, source="s", config="c", quantity=quantity, published=published, command=("estimate",),
                    read="step_ratio")

    cases = (case("a-10g", 1.227), case("a-25g", 1.272), case("b", 0.5), case("c-same", 0.5), case("d", 2.0))
    frame = pd.DataFrame({"lionsim": [1.106, 1.106, 0.7, 0.7, math.nan]})
    said = alike_line(frame, cases)
    # a and its twin differ in the source and not here; b and c agree in both (nothing to say); d is unpriced
    groups = said.split(": ", 1)[1].split(". lionsim's model", 1)[0]
    assert groups == "a-10g, a-25g (1.106; published 1.227, 1.272)", said
    assert alike_line(pd.DataFrame({"lionsim": [1.0, 1.1]}), cases[:2]) == ""
