"""What estimate's breakdown table shows and says under it: the `across` column wherever a node has
several GPUs, notes that speak of the columns the table has, and the hint to price NCCL only where
the ideal library was a default."""

from __future__ import annotations

import io
from pathlib import Path

import pandas as pd
import pytest

from tests.helpers.cli import run_cli

DC_PAIR = Path(__file__).parents[2] / "examples" / "clusters" / "dc-pair.toml"
CASE = ["estimate", "--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "-s",
        "adamw@bf16-allreduce", "-s", "dlion-mavo@int8-allreduce"]


def header(out: str) -> list[str]:
    """The breakdown table's column names (its header line, a folded `speed up` read as one)."""
    line = next(line for line in out.splitlines() if line.split()[:2] == ["run", "compute"])
    return line.split()


@pytest.mark.parametrize("network, extra", [("h100x8-10gbe", []), ("h100x8-10gbe", ["--algorithm", "ring"]),
                                            ("a100x8-4hdr", ["--algorithm", "ring"])])
def test_across_is_shown_wherever_a_node_has_several_gpus(capsys, tmp_path, network, extra):
    """A ring's one hop out of the node carries what a GPU sends, so across equals sent there: the
    column stays (the docs: "shown where a node has several GPUs")."""
    code, out, _ = run_cli([*CASE, "--network", network, *extra, "--out", tmp_path], capsys)
    frame = pd.read_csv(tmp_path / "estimate.csv")
    assert code == 0 and (frame["gpus_per_node"] == 8).all()
    assert "across" in header(out)
    assert "across: bytes per node per step to other nodes" in " ".join(out.split())


def test_across_is_left_out_where_a_node_is_one_gpu(capsys):
    code, out, _ = run_cli([*CASE, "--network", "10gbe"], capsys)
    assert code == 0 and "across" not in header(out) and "across:" not in out


def test_a_hier_run_says_why_its_sent_exceeds_a_flat_runs_while_across_is_less(capsys, tmp_path):
    """estimate's table has no bits column (bench's has): the hier: note speaks of sent and across,
    and what it says holds of the rows."""
    argv = ["estimate", "--model", "gpt2-345m", "--workers", "16", "--network", "h100x8-10gbe",
            "-s", "adamw@fp8-allreduce", "-s", "adamw@hier:fp8-allreduce", "--out", tmp_path]
    code, out, _ = run_cli(argv, capsys)
    text = " ".join(out.split())
    assert code == 0 and "bits" not in text
    assert ("hier:fp8-allreduce: sent adds what every phase moves, the node's reduce-scatter and all-gather inside "
            "the node (7/8 of each node buffer) and fp8-allreduce on a worker's 1/8 share across nodes, so it can be "
            "more than a flat run's while across (what a node's inter link carries) is less.") in text
    flat, hier = pd.read_csv(tmp_path / "estimate.csv").itertuples(index=False)
    assert hier.wire_bytes > flat.wire_bytes and hier.inter_bytes < flat.inter_bytes


@pytest.mark.parametrize("network, extra, hinted", [
    ("10gbe", [], True),  # the preset's default library: the hint says how to price NCCL
    ("10gbe", ["--traits", "ideal"], False),  # chosen on the command line
    (str(DC_PAIR), [], False),  # chosen by the profile (traits = "ideal")
])
def test_the_ideal_library_hint_is_for_a_defaulted_library_only(capsys, network, extra, hinted):
    code, out, _ = run_cli(["estimate", "--model", "gpt2-124m", "--tokens-per-worker", "1024", "--workers", "2",
                            "--network", network, *extra, "-s", "adamw"], capsys)
    assert code == 0 and "library: ideal" in " ".join(out.split())
    assert ("--traits nccl prices it" in " ".join(out.split())) == hinted
    assert " ".join(out.split()).count("alpha-beta") == 1  # "comm on NETWORK (alpha-beta)": the hint said it again


def test_the_overlap_sentence_lists_only_the_runs_outside_the_mode_most_took(capsys):
    """llama-7b on 64 workers: two runs per bucket, three after backward. The caption listed all five
    labels; it names the common mode, then the others with their runs (each run's mode from the csv)."""
    args = ["estimate", "--model", "llama-7b", "--workers", "64"]
    code, csv, _ = run_cli([*args, "--format", "csv"], capsys)
    frame = pd.read_csv(io.StringIO(csv))
    labels = frame["strategy"] + "@" + frame["transport"]
    bucketed, after = list(labels[frame["overlap"] == "buckets"]), list(labels[frame["overlap"] == "after"])
    assert code == 0 and len(after) > len(bucketed) > 0 and len(after) + len(bucketed) == len(frame)
    code, out, _ = run_cli(args, capsys)
    caption = " ".join(out[out.index("ms per step"):].split()).split("Encode + decode are")[0]  # the codec line apart
    assert code == 0 and (f"overlap: after (once after backward), but buckets (each bucket during backward) for "
                          f"{', '.join(bucketed)}.") in caption
    assert not [label for label in after if label in caption]
    from lionsim.cli.estimate_notes import overlap_text

    assert overlap_text({"after": ["a", "b"]}) == "after (once after backward) for every run"
    assert overlap_text({"buckets": ["a"], "after": ["b", "c"], "tensors": ["d"]}) == (
        "after (once after backward), but buckets (each bucket during backward) for a; tensors (each tensor "
        "during backward) for d")


def test_one_node_says_so_in_bench_s_words_and_defines_no_across(capsys):
    """8 workers on nodes of 8: nothing crosses nodes, yet the caption defined `across` and showed a
    column of 0B. It says the one-node line bench's table says (lionsim.whole_nodes.one_node_line)."""
    from lionsim.whole_nodes import one_node_line

    code, out, _ = run_cli(["estimate", "--model", "gpt2-124m", "--workers", "8", "--network", "h100x8-100gbe"],
                           capsys)
    said = " ".join(out.split())
    assert code == 0 and one_node_line(8, 8, "h100x8-100gbe") in said, said
    assert said.count("All 8 workers sit on one node of h100x8-100gbe (8 a node): only its intra-node link is "
                      "priced") == 1
    assert "across" not in header(out) and "across:" not in said


def test_the_caption_defines_each_term_once_and_before_the_notes_that_use_it(capsys):
    """`exposed: what backward does not hide` was said twice; `across 11.8GB` (the hierarchical note)
    came before `across` was defined; the memory line, which decides whether the run can happen at all,
    came last."""
    code, out, _ = run_cli(["estimate", "--model", "llama-7b", "--workers", "64", "--network", "h100x8-100gbe"],
                           capsys)
    caption = out[out.index("\n\n", out.index("───")):].strip()
    said = " ".join(caption.split())
    assert code == 0 and said.count("what backward does not hide") == 1, said
    assert said.index("across: bytes per node per step") < said.index("hier:int8-allreduce"), said
    assert caption.startswith("Does not fit on one h100 (80 GiB): adamw@bf16-allreduce"), caption
    assert "sent: bytes per worker per step, as the priced algorithms move them (estimate.csv: algorithm)." in said
