"""Names as a user types them: any case, comma lists, the nearest valid name for a typo, the listed
spelling recorded in a run's files."""

from __future__ import annotations

import io
import json

import pandas as pd
import pytest

from lionsim.cli import options
from lionsim.config.bench import BenchConfig
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate
from lionsim.network import load_network
from lionsim.runs import parse_runs
from lionsim.strategies import STRATEGIES
from tests.helpers.cli import TINY_BENCH, one_line_exit_2, run_cli


def test_names_take_any_case_and_comma_lists():
    runs = parse_runs(["AdamW,Lion@BF16-allreduce", "DLION-MAVO@A2A-1bit"], transport=None)
    assert [r.label for r in runs] == ["adamw@fp32-allreduce", "lion@bf16-allreduce", "dlion-mavo@a2a-1bit"]
    assert [r.label for r in parse_runs(["dlion-mavo"], transport="A2A-1BIT")] == ["dlion-mavo@a2a-1bit"]
    assert load_network("10GbE").name == "10gbe"
    assert STRATEGIES.canonical("OneBit-Adam") == "onebit-adam"
    workload = BenchConfig(workload="MLP", workers=2, steps=1, strategies=["adamw"])
    workload.validate()  # -w takes the name as given; the configuration spells it as listed
    assert workload.workload == "mlp"
    assert options._choice("--tie", ("zero", "alternate", "random"))("Zero") == "zero"
    assert options._lower("Dirichlet:0.5") == "dirichlet:0.5"
    frame = estimate(EstimateConfig(model="GPT2-124M", device="H100", strategies=["AdamW"]))
    assert frame["model"].iloc[0] == "gpt2-124m" and frame["device"].iloc[0] == "h100"


@pytest.mark.parametrize("alias, preset", [("gpt2-medium", "gpt2-345m"), ("GPT2", "gpt2-124m")])
def test_hugging_face_model_names_are_the_presets(alias, preset, tmp_path, capsys):
    """`--model gpt2-medium` was refused ("did you mean 'gpt2-124m' or 'gpt2-345m'?"): Hugging Face's
    names are aliases, priced and labelled as the preset itself (its own output is the reference),
    and the list an unknown model gets shows each beside its preset."""
    rest = ["-n", "8", "--format", "csv"]
    code, out, err = run_cli(["estimate", "-m", alias, *rest], capsys)
    assert code == 0 and (code, out, err) == run_cli(["estimate", "-m", preset, *rest], capsys)
    assert set(pd.read_csv(io.StringIO(out))["model"]) == {preset}
    assert run_cli(["estimate", "-m", alias, "-n", "8", "--out", tmp_path / "est"], capsys)[0] == 0
    assert json.loads((tmp_path / "est" / "estimate.json").read_text())["options"]["model"] == preset
    err = one_line_exit_2(["estimate", "-m", "gpt5"], capsys, "gpt2 (gpt2-124m), gpt2-medium (gpt2-345m)")
    assert "choose from: gpt2-124m, gpt2-345m," in err


@pytest.mark.parametrize("args, message", [
    (["bench", "-s", "dlion-mavoo"], "did you mean 'dlion-mavo'?"),
    (["bench", "-s", "adamw@fp32-alreduce"], "did you mean 'fp32-allreduce'?"),
    (["bench", "--network", "10gbee"], "did you mean '10gbe'?"),
    (["bench", "-w", "mpl"], "did you mean 'mlp'?"),
    (["bench", "--tie", "zeroo"], "did you mean 'zero'?"),
    (["bench", "--backend", "glo"], "did you mean 'gloo'?"),
    (["bench", "--model-size", "smal"], "did you mean 'small'?"),
    (["estimate", "-m", "gpt2-125m"], "did you mean 'gpt2-124m'?"),
    (["estimate", "-m", "gpt2-124m", "--device", "h10"], "did you mean 'h100'?"),
    (["bench", "-s", "powersgd", "--opt", "powersgd.rnak=2"], "did you mean 'rank'?"),
    (["bench", "--format", "tabel"], "did you mean 'table'?"),
    (["estimate", "-m", "gpt2-124m", "--kernels", "tabel"], "did you mean 'table'?"),
    (["estimate", "-m", "gpt2-124m", "--optimizer", "fusd"], "did you mean 'fused'?"),
    (["estimate", "-m", "gpt2-124m", "--overlap", "aftr"], "did you mean 'after'?"),
    # a comma list's every item takes the single option's path (sweep's grid axes, comm's lists)
    (["sweep", "--network", "1gbe,10gbee"], "unknown network '10gbee'; choose a preset"),
    (["sweep", "--network", "1gbe,10gbee"], "did you mean '10gbe'?"),
    (["sweep", "-s", "adamw,dlion-mavoo"], "did you mean 'dlion-mavo'?"),
    (["sweep", "-s", "lion,adamw@fp32-alreduce"], "did you mean 'fp32-allreduce'?"),
    (["sweep", "-w", "mlp,mpl"], "did you mean 'mlp'?"),
    (["comm", "--collective", "all_reduce,all_gatherr"], "did you mean 'all_gather'?"),
    (["comm", "--backend", "gloo", "--dtype", "float32,bfloat61"], "did you mean 'bfloat16'?"),
    (["comm", "--backend", "glo"], "did you mean 'gloo'?"),
    # names as near as each other are all offered: picking one would choose for the user
    (["estimate", "-m", "vit"], "did you mean 'vit-s' or 'vit-b'?"),
    (["bench", "-s", "adamw,,lion"], "an empty name"),
    (["bench", "-s", "adamw,ADAMW"], "given twice"),
])
def test_a_typo_names_the_nearest_valid_name(args, message, capsys):
    one_line_exit_2(args, capsys, message)


@pytest.mark.parametrize("single, listed", [
    (["bench", "--network", "foo"], ["sweep", "--network", "1gbe,foo"]),
    (["bench", "--network", "1gbee"], ["sweep", "--network", "1gbe,1gbee"]),
    (["bench", "-w", "gtp"], ["sweep", "-w", "mlp,gtp"]),
    (["bench", "-s", "lionn"], ["sweep", "-s", "adamw,lionn"]),
])
def test_a_comma_list_refuses_a_name_with_the_single_options_line(single, listed, capsys):
    """One path: a name far from every valid one ('foo') gets no suggestion in either."""
    assert one_line_exit_2(listed, capsys) == one_line_exit_2(single, capsys)


def test_an_unknown_name_far_from_any_suggests_nothing():
    with pytest.raises(LionsimError) as info:
        STRATEGIES.get("zzzz")
    assert "did you mean" not in str(info.value) and "choose from: adamw" in str(info.value)


def test_network_and_workload_names_are_recorded_in_their_listed_spelling(tmp_path):
    from lionsim.bench import BenchConfig
    from lionsim.sweep.cells import network_stem
    from lionsim.sweep.grid import Grid, check_grows

    cfg = BenchConfig(network="10GbE", workload="MLP")
    assert cfg.network == "10gbe"  # the workload's name waits for validate: the registry imports torch
    cfg.validate()
    assert cfg.workload == "mlp"
    cfg.network = "IB-HDR"
    cfg.validate()
    assert cfg.network == "ib-hdr"
    profile = tmp_path / "My.toml"
    assert BenchConfig(network=str(profile)).network == str(profile)  # a file stays as given
    grid = Grid.parse(workload=["MLP"], workers=["4"], network=["10GbE,IB-HDR"], seed=["0"], strategies=["lion"],
                      transport=None)
    assert grid.to_dict()["network"] == ["10gbe", "ib-hdr"] and grid.workloads == ("mlp",)
    assert network_stem("10GbE") == "10gbe"
    with pytest.raises(LionsimError, match="10gbe given twice"):
        Grid.parse(workload=["mlp"], workers=["4"], network=["10gbe,10GbE"], seed=["0"], strategies=["lion"],
                   transport=None)
    check_grows({"network": ["10GbE"], "workload": ["MLP"]}, grid.to_dict(), "x")  # an older sweep.json


def test_measured_and_a_momentum_sync_take_any_case_and_record_one_spelling():
    """--compute H100 was taken and --compute MEASURED refused ("did you mean 'measured'?"), as was
    --momentum-sync Every:10 where --overlap Buckets was taken."""
    from lionsim.bench import BenchConfig
    from lionsim.forms import MomentumSync

    cfg = BenchConfig(workload="mlp", compute=" MEASURED", momentum_sync="Every:10", strategies=["dlion-mavo"])
    cfg.check_plain()
    assert (cfg.compute, cfg.momentum_sync, cfg.measures) == ("measured", "every:10", True)
    assert MomentumSync.parse("SCHEDULE:4") == MomentumSync("schedule", 4)
    with pytest.raises(LionsimError, match=r"bad --momentum-sync 'Every:0'; accepted: never, every:K"):
        MomentumSync.parse("Every:0")


@pytest.mark.slow
def test_bench_run_json_and_steps_csv_carry_the_listed_network(tmp_path, capsys):
    out = tmp_path / "r"
    code, _, err = run_cli([*TINY_BENCH, "-s", "adamw", "--network", "10GbE", "--out", str(out)], capsys)
    assert code == 0, err
    meta = json.loads((out / "run.json").read_text())
    assert meta["config"]["network"] == "10gbe"
    assert set(pd.read_csv(out / "steps.csv")["network"]) == {"10gbe"}


def test_a_misspelt_compute_device_gets_the_near_one():
    from lionsim.bench import BenchConfig
    from lionsim.errors import LionsimError

    with pytest.raises(LionsimError, match=r"did you mean 'h100'\?$"):
        BenchConfig(workload="mlp", compute="h10").validate()


def test_nearest_offers_every_name_as_near_as_the_nearest():
    """Against a brute-force statement of the rule: the names sharing the longest start with what
    was typed (at least 4 characters and 4/5 of it; one held whole first), else the longest name it
    ends with after a separator (a vendor's prefix), else difflib's best ratio."""
    import difflib
    import os

    from lionsim.registry import nearest

    names = ["gpt2-124m", "gpt2-345m", "gpt2-1.3b", "vit-s", "vit-b", "lion", "dlion-mavo", "dlion-avg", "adamw",
             "adamw@fp32-allreduce"]

    def expected(typed: str) -> list[str]:
        key = typed.lower()
        starts = {n: len(os.path.commonprefix([n.lower(), key])) for n in names}
        top = max(starts.values())
        if top >= 4 and top >= 0.8 * len(key):
            kin = [n for n in names if starts[n] == top]
            return [n for n in kin if len(n) == top] or kin
        tails = [n for n in names if len(n) >= 3 and len(key) > len(n) and key.endswith(n.lower())
                 and key[-len(n) - 1] in "-_ /:"]
        if tails:
            return [max(tails, key=len)]
        scores = {n: difflib.SequenceMatcher(None, n.lower(), key).ratio() for n in names}
        best = max(scores.values())
        return [n for n in names if scores[n] == best] if best >= 0.6 else []

    for typed in ("gpt2", "vit", "VIT-S", "gpt2-124", "resnet", "dlionn", "adamww", "lino", "gpt2-125m", "mavo",
                  "openai-gpt2-345m", "my lion", "torch/adamw", "xlion"):
        assert nearest(typed, names) == expected(typed), typed
    assert nearest("dlionn", names) == ["dlion-mavo", "dlion-avg"] and nearest("adamww", names) == ["adamw"]
    assert nearest("gpt2", names) == ["gpt2-124m", "gpt2-345m", "gpt2-1.3b"] and nearest("lino", names) == ["lion"]
    assert nearest("nvidia-h200", ["h100", "h200", "b200"]) == ["h200"]  # a new user typed the vendor's name
