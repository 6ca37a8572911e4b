"""Whole-number options (--workers, --steps, --tokens-per-worker, a strategy's integer flag ...) take
scientific notation as --params always did (1e3, 2.5e3), read exactly as decimals, and refuse a value
that is not whole or not finite in one line; --tokens' refusals state one range and where its top
comes from."""

from __future__ import annotations

from decimal import Decimal

import pytest

from lionsim.cli.options import whole_number
from lionsim.whole import MAX_STEPS, MAX_WORKERS
from tests.helpers.cli import one_line_exit_2, run_cli

E = ["estimate", "-m", "gpt2-124m", "-s", "adamw"]


@pytest.mark.parametrize("text", ["1e3", "2.5e3", "1000", "1E3", "10e2", "1000.0", "1e30", " 8 "])
def test_a_whole_number_is_read_exactly_in_any_notation(text):
    assert whole_number(text) == int(Decimal(text.strip()))  # the decimal reading, not float's


@pytest.mark.parametrize("option", ["--workers", "--tokens-per-worker", "--steps", "--seed", "--local-steps"])
@pytest.mark.parametrize("text", ["1.5", "2.55e1", "inf", "nan", "1e-3", "ten", "1e999999999"])
def test_a_value_not_whole_is_one_line(option, text, capsys):
    err = one_line_exit_2([*E, option, text], capsys, f"error: bad {option} {text}: ")
    why = "100 digits or more" if "999" in text else "not a whole number"
    assert f": {why}; accepted: a whole number " in err, err  # its range where lionsim.ranges has it


@pytest.mark.parametrize("option", ["--params", "--tokens-per-worker", "--replica-gpus", "--tensors", "--gpus-per-node"])
def test_an_estimate_count_not_whole_is_refused_with_the_range_one_out_of_range_gets(option, capsys):
    """`--params 1X` said only "accepted: a whole number (1000, 1e3 or 2.5e3)", where `--params 0`
    states the range: both now state the range (--params' words say the forms, 3e9 and 350M, too)."""
    below = one_line_exit_2([*E, option, "0"], capsys, f"error: bad {option} 0; accepted: a whole number ")
    words = below.split("; accepted: ", 1)[1]
    counts = option in ("--params", "--tokens-per-worker")  # counts take K, M, B, T: the reason names X
    why = "X is no suffix it takes (K, M, B, T)" if counts else "not a whole number"
    one_line_exit_2([*E, option, "1X"], capsys, f"error: bad {option} 1X: {why}; accepted: {words}")
    if option == "--params":
        assert words == ("a whole number from 1 to 1,000,000,000,000,000 (1,000x today's largest models; written "
                         "in full, like 3e9, or with K, M, B or T: 350M, 1.5B)\n")


@pytest.mark.parametrize("text, count", [
    ("350M", 350 * 10**6), ("1.5B", 15 * 10**8), ("124k", 124 * 10**3), ("1.5b", 15 * 10**8), ("2T", 2 * 10**12),
    ("1.234567891B", 1_234_567_891), ("0.5K", 500), ("3.5e8", 350 * 10**6), ("350 M", 350 * 10**6),
])
def test_params_take_a_thousand_million_billion_or_trillion_suffix(text, count, capsys):
    """`--params 350M` was refused ("not a whole number") while 3.5e8 was taken: K, M, B and T (any
    case) are 1e3, 1e6, 1e9 and 1e12, read exactly (1.234567891B, ten digits, is not rounded). The
    reference: the count written in full, which prices the same table."""
    rest = ["--tokens-per-worker", "1024", "-n", "8", "-s", "adamw", "--format", "csv"]
    code, out, err = run_cli(["estimate", "--params", text, *rest], capsys)
    assert code == 0, err
    assert (code, out, err) == run_cli(["estimate", "--params", str(count), *rest], capsys)
    assert f",{count}," in out.splitlines()[1]


@pytest.mark.parametrize("text", ["1.5G", "350MB", "M", "1.2345678901B", "3X", "nanB", "1e200M"])
def test_params_refuse_other_suffixes_and_counts_not_whole_naming_the_forms(text, capsys):
    """G is not taken (`comm --sizes` reads G as 2^30 bytes), nor a unit of bytes; a suffixed count
    that is not whole (1.2345678901B) is refused as 1.5 is, not rounded."""
    err = one_line_exit_2(["estimate", "--params", text, "--tokens-per-worker", "1024"], capsys,
                          f"error: bad --params {text}: ")
    assert err.strip().endswith("written in full, like 3e9, or with K, M, B or T: 350M, 1.5B)"), err
    # the reason names the suffix where the rest is a number (1.5G, 3X): "not a whole number" misled
    suffix = text[-1] if text in ("1.5G", "3X") else None
    why = (f"{suffix} is no suffix it takes (K, M, B, T)" if suffix else
           "100 digits or more" if text == "1e200M" else "not a whole number")
    assert f"bad --params {text}: {why};" in err


def test_estimate_takes_workers_and_tokens_per_worker_in_scientific_notation(capsys):
    """`--tokens-per-worker 1e3` and `--workers 1e2` were refused ("takes a whole number; got '1e3'")."""
    code, out, err = run_cli([*E, "--workers", "1.6e1", "--tokens-per-worker", "1e3", "--format", "csv"], capsys)
    assert code == 0, err
    header, row = out.splitlines()[:2]
    got = dict(zip(header.split(","), row.split(",")))
    assert (got["workers"], got["tokens_per_worker"]) == ("16", "1000")


@pytest.mark.parametrize("tokens, shown", [("0", "0"), ("3e11", "3e11"), ("1e30", "1e30")])
def test_tokens_refusals_state_one_range_and_where_its_top_comes_from(tokens, shown, capsys):
    """--tokens 0 said ">= 1", --tokens 3e11 "from 1 to 8.19e+10" and --tokens 1e30 echoed
    1000000000000000019884624838656: one range, the value as typed, the top as steps x tokens a step."""
    top = MAX_STEPS * 1024 * 8  # gpt2-124m's 1,024-token sample on each of 8 workers
    one_line_exit_2([*E, "--tokens", tokens], capsys,
                    f"error: bad --tokens {shown}; accepted: a whole number from 1 to {top:,} (lionsim's most steps "
                    f"in a run, {MAX_STEPS:,}, of 8,192 tokens: 1,024 a worker x 8 workers)")


@pytest.mark.parametrize("args", [[*E, "--workers", "1e19"], [*E, "--sweep", "workers=64,1e19"],
                                  ["strategies", "-n", "1e19"],
                                  ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "1e19", "--steps", "1"],
                                  ["sweep", "-w", "mlp", "--model-size", "tiny", "-n", "1e19", "--steps", "1"]])
def test_workers_past_the_most_lionsim_takes_are_one_line(args, capsys, tmp_path):
    """--workers 1e19 raised ValueError "no integer container holds sums up to ..." (estimate, strategies)
    or was priced at petabytes of memory (bench): every command takes 1 to MAX_WORKERS workers."""
    if args[0] == "sweep":
        args = [*args, "--out", str(tmp_path / "s")]
    err = one_line_exit_2(args, capsys, "1e19")
    assert f"{MAX_WORKERS:,}" in err or f"<= 1e{len(str(MAX_WORKERS)) - 1}" in err, err


@pytest.mark.parametrize("args", [["estimate", "-m", "gpt2-124m", "-s", "diloco", "--local-steps", "1e30"],
                                  ["bench", "-w", "mlp", "--model-size", "tiny", "-s", "diloco", "--local-steps", "1e30",
                                   "--steps", "1"]])
def test_local_steps_past_the_most_steps_a_run_takes_are_one_line(args, capsys):
    """--local-steps 1e30 was priced (a sync every 10^30 steps: "8.71e-22 B" sent a step): H is at
    most the steps any run takes, MAX_STEPS, and the refusal says why."""
    err = one_line_exit_2(args, capsys, "1e30")
    assert f"from 1 to {MAX_STEPS:,}" in err and "never syncs" in err, err
    code, out, _ = run_cli(["estimate", "-m", "gpt2-124m", "-s", "diloco", "--local-steps", f"{MAX_STEPS:.0e}",
                            "--format", "csv"], capsys)
    assert code == 0 and f",{MAX_STEPS}," in out, out


def test_the_most_workers_fit_every_payload_container():
    """MAX_WORKERS' justification: a sum over that many workers of the widest level (127) has a container."""
    import torch

    from lionsim.transports.payloads import container_dtype

    assert container_dtype(MAX_WORKERS * 127) == torch.int64 and MAX_WORKERS * 127 * 10**7 < torch.iinfo(torch.int64).max


@pytest.mark.parametrize("args, shown", [
    (["bench", "-w", "mlp", "--steps", "1e50"], "bad --steps 1e50"),
    (["bench", "-w", "mlp", "--threads", "1e30"], "bad --threads 1e30"),
    (["bench", "-w", "mlp", "--workers", "2.5e8"], "bad --workers 2.5e8"),
    ([*E, "--tokens-per-worker", "12345678901234"], "bad --tokens-per-worker 12345678901234"),
    ([*E, "--steps", "1.2e16"], "bad --steps 1.2e16"),
    (["estimate", "-m", "gpt2-124m", "-s", "streaming-diloco", "--streaming-fragments", "1e30"],
     "bad --streaming-fragments 1e30"),
    (["bench", "-w", "mlp", "--ranks", "1e1"], "--ranks 1e1 needs --backend gloo or nccl"),
])
def test_every_refusal_of_a_whole_number_echoes_it_as_typed(args, shown, capsys):
    """bench echoed --steps 1e50 as its fifty-one digits, estimate an int past 10 digits as 1.23457e13."""
    one_line_exit_2(args, capsys, f"error: {shown}")


@pytest.mark.parametrize("text, read", [("1e3", 1000), ("2.5e3", 2500), ("all", "all"), ("ALL", "all")])
def test_eval_samples_takes_whole_numbers_as_every_whole_number_option_does(text, read):
    from lionsim.forms import parse_eval_samples

    assert parse_eval_samples(text) == read


def test_eval_samples_past_what_a_workload_holds_out_echoes_it_as_typed(capsys):
    """--eval-samples 1e9 was refused as "a positive integer or all"; now as past what mlp holds out."""
    one_line_exit_2(["bench", "-w", "mlp", "--model-size", "tiny", "--eval-samples", "1e9"], capsys,
                    "error: bad --eval-samples 1e9: mlp's generated data holds out")


@pytest.mark.parametrize("workers, sweep, fewest, whose", [
    ("128", "workers=8,128", 8, ", the smallest count of --sweep workers=8,128"),
    ("8", "workers=64,128", 8, ", --workers: its table is priced beside the sweep's, which starts at 64 workers; "
                               "give --workers 64 to start there"),
])
def test_tokens_are_checked_at_the_fewest_workers_priced_and_the_refusal_says_whose(workers, sweep, fewest, whose,
                                                                                  capsys):
    """--tokens was checked at --workers alone: with --sweep workers=8,128 --workers 128 a run of 12M steps at
    8 workers passed the check; with --sweep workers=64,128 the refusal said "x 8 workers" and not why."""
    top = MAX_STEPS * 1024 * fewest
    one_line_exit_2([*E, "--workers", workers, "--sweep", sweep, "--tokens", "1e11"], capsys,
                    f"error: bad --tokens 1e11; accepted: a whole number from 1 to {top:,} (lionsim's most steps in a "
                    f"run, {MAX_STEPS:,}, of {1024 * fewest:,} tokens: 1,024 a worker x {fewest} workers{whose})")


def test_tokens_that_fit_at_the_sweeps_smallest_count_pass_the_plain_checks():
    """--tokens 1e11 is 1.5M steps at 64 workers: taken with --workers 64 --sweep workers=64,128."""
    from types import SimpleNamespace

    from lionsim.estimate.plain import check_plain

    fields = dict(params=None, tensors=None, tokens_per_worker=None, gpus_per_node=None, replica_gpus=1, mfu=None,
                  bucket_mb=None, seed=None, steps=None, device=None, network="10gbe", traits=None, model="gpt2-124m",
                  overlap="auto", algorithm="auto", compute_spread=[], momentum_sync=None, kernels="table",
                  optimizer="fused")
    check_plain(SimpleNamespace(**fields, workers=64, tokens=10**11), "workers=64,128")
    with pytest.raises(Exception, match="x 8 workers, the smallest count of --sweep workers=8,128"):
        check_plain(SimpleNamespace(**fields, workers=64, tokens=10**11), "workers=8,128")


def test_bench_and_estimate_refuse_a_worker_count_in_the_same_words(capsys):
    """estimate said "a whole number >= 1 and <= 1e8", bench "1 to 100,000,000 (the most workers
    lionsim takes)" for the same --workers 1e19."""
    lines = {one_line_exit_2(args, capsys, "1e19") for args in (
        [*E, "--workers", "1e19"], ["bench", "-w", "mlp", "--model-size", "tiny", "-n", "1e19", "--steps", "1"])}
    assert len(lines) == 1 and f"from 1 to {MAX_WORKERS:,} (the most workers lionsim takes)" in lines.pop()


def test_tokens_take_the_suffixes_params_take(capsys):
    """`--tokens 26B` was refused while `--params 1.5B` was taken: a whole run of 26e9 tokens, the
    same table as the count written in full (26B over 1,024 tokens x 8 workers: 3,173,829 steps)."""
    rest = ["-m", "gpt2-124m", "-n", "8", "-s", "adamw", "--format", "csv"]
    code, out, err = run_cli(["estimate", "--tokens", "26B", *rest], capsys)
    assert code == 0, err
    assert (code, out, err) == run_cli(["estimate", "--tokens", "26000000000", *rest], capsys)
    assert ",3173829," in out.splitlines()[1]
    one_line_exit_2(["estimate", "--tokens", "26X", *rest], capsys, "error: bad --tokens 26X: X is no suffix it takes")


def test_tokens_per_worker_take_the_suffixes_as_powers_of_ten(capsys):
    """`--tokens-per-worker 8k` was refused while `--params 350M` was taken; K is 1e3 here as there
    (8K is 8,000, not 8,192: the help says so), the same table as the count in full."""
    rest = ["-m", "gpt2-345m", "-n", "16", "--format", "csv"]
    code, out, err = run_cli(["estimate", "--tokens-per-worker", "8k", *rest], capsys)
    assert code == 0, err
    assert (code, out, err) == run_cli(["estimate", "--tokens-per-worker", "8000", *rest], capsys)
