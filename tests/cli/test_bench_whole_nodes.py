"""bench refuses --workers that do not fill whole nodes of --network in the documented form (bad --OPTION
VALUE; accepted: ...), as estimate does, before it looks at --out: a bad value is named first, not the
run --out holds."""

from __future__ import annotations

import json

import pytest

from lionsim.cli.app import main

LINE = ("error: bad --workers 12: 12 workers do not fill whole nodes of h100x8-10gbe (8 a node); accepted: at most 8 "
        "(one node) or a multiple of 8")


def _refused(args, capsys) -> list[str]:
    with pytest.raises(SystemExit) as done:
        main(args)
    assert done.value.code == 2
    return capsys.readouterr().err.strip().splitlines()


@pytest.mark.parametrize("held", [False, True])
def test_workers_that_leave_a_node_half_empty_are_named_before_out(tmp_path, capsys, held):
    out = tmp_path / "out"
    if held:  # a complete run there: refused without --overwrite, but the bad value comes first
        out.mkdir()
        (out / "run.json").write_text(json.dumps({"command": "bench", "status": "complete"}))
        (out / "summary.csv").write_text("run\n")
    before = sorted(p.name for p in out.iterdir()) if held else None
    args = ["bench", "-w", "mlp", "--steps", "1", "-n", "12", "--network", "h100x8-10gbe", "--out", str(out)]
    assert _refused(args, capsys) == [LINE]
    assert (sorted(p.name for p in out.iterdir()) if held else out.exists()) == (before if held else False)


def test_estimate_refuses_them_in_the_same_words(capsys):
    assert _refused(["estimate", "--model", "gpt2-124m", "-n", "12", "--network", "h100x8-10gbe"], capsys) == [LINE]


def test_comm_and_an_estimate_sweep_refuse_them_in_the_same_words(capsys):
    # comm's count reaches Network.nodes, the sweep's its own check: the rule's one refusal, the option typed
    assert _refused(["comm", "--workers", "12", "--network", "h100x8-10gbe"], capsys) == [LINE]
    assert _refused(["estimate", "--model", "gpt2-124m", "--network", "h100x8-10gbe", "--sweep", "workers=8,12"],
                    capsys) == [LINE.replace("--workers 12", "--sweep workers=8,12")]


@pytest.mark.parametrize("workers", [8, 16])
def test_whole_nodes_or_one_node_pass_the_check(workers):
    from lionsim.config.bench import BenchConfig

    BenchConfig(workload="mlp", workers=workers, steps=1, network="h100x8-10gbe").check_plain()
