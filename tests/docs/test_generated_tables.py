"""The generated tables of README.md and docs/*.md equal what `python -m lionsim.docgen` prints, and the cached run
they render from still describes this code (lionsim.docgen).

Fast by design: the bench tables render from the cached real run (reports/readme/), which is checked
against the code by rerunning its first 3 steps now (every modelled column must equal the cache's,
on the cache's platform: elsewhere a gradient entry may round to 0 differently) instead of training
100 steps of 11 strategies; the estimate tables run their commands in this process (pure modelling).
All in the CI tier: the blocks one test each, so its processes share them."""

from __future__ import annotations

import re

import pytest
import lionsim.docgen.bench as bench_blocks
import lionsim.docgen.cached
import lionsim.docgen.comm  # noqa: F401  (registers its blocks)
import lionsim.docgen.estimate  # noqa: F401
import lionsim.docgen.methods  # noqa: F401
import lionsim.docgen.kernels  # noqa: F401
from lionsim.docgen.__main__ import main as docs_main
from lionsim.docgen.blocks import BLOCKS, START, page_blocks, pages, where_blocks, with_blocks
from lionsim.docgen.cached import load_cached


def test_every_block_has_its_markers_in_one_page():
    assert set(where_blocks(pages())) == set(BLOCKS.names())


@pytest.mark.parametrize("name", sorted(BLOCKS.names()))
def test_the_block_matches_what_the_generator_prints(name):
    """One test per block, so the CI tier spreads them over its processes (all of them: about 40 s
    of modelling on one core)."""
    page = where_blocks(pages())[name]
    assert page_blocks(page.read_text(encoding="utf-8"))[name] == BLOCKS.get(name).render(), \
        f"{page.name}: block {name} differs: run `python -m lionsim.docgen --write`"


ESTIMATES = {**lionsim.docgen.estimate.COMMANDS, **lionsim.docgen.estimate.NEED}
"""Each estimate block's `lionsim estimate` arguments."""


def _as_read(text: str) -> str:
    """Page text as a reader reads a command in it: code marks, line continuations and breaks gone."""
    return " ".join(text.replace("\\\n", " ").replace("`", " ").split())


@pytest.mark.parametrize("name", sorted(ESTIMATES))
def test_the_page_states_the_whole_command_of_each_estimate_block(name):
    """The page's text between the block and the one (or the heading) above it states the block's
    whole command, in prose or a ```bash block, or as "the same with `--OPTION VALUE`" of the
    block above's: README's --need table said "but with `--network a100x8-4hdr`", and its
    `--device h100` (not the preset's A100) was left for the reader to carry over."""
    page = where_blocks(pages())[name]
    before = page.read_text(encoding="utf-8").split(START.format(name=name))[0]
    said = _as_read(before[max(before.rfind("\n#"), before.rfind("-->")):])
    if " ".join(["lionsim", "estimate", *ESTIMATES[name]]) in said:
        return
    changed = re.search(r"the same with (--[\w-]+) (\S+)", said)
    above = re.findall(r"<!-- end generated: ([\w.-]+) -->", before)
    assert changed and above and above[-1] in ESTIMATES, f"{page.name}: block {name} does not state its command"
    args = list(ESTIMATES[above[-1]])
    args[args.index(changed[1]) + 1] = changed[2]
    assert args == ESTIMATES[name], f"{page.name}: block {name} is not the block above's with {changed[0]}"


def test_the_bench_tables_state_cpu_date_and_what_depends_on_the_cpu():
    body = " ".join(BLOCKS.get("default-bench").render().split())  # the prose is wrapped at 100 columns
    facts = load_cached(bench_blocks.CACHE).facts
    assert facts["cpu"] in body and facts["date"] in body and "another CPU rounds differently" in body
    assert "modelled for an H100" in body


def _same_platform(cache: str) -> None:
    """Skip a rerun's comparison on a platform other than the cache's (cached.other_platform: its
    data-dependent columns may round differently there)."""
    if other := lionsim.docgen.cached.other_platform(cache):
        pytest.skip(f"the cache {cache} was trained on another platform ({other})")


def test_the_cached_run_still_describes_this_code():
    _same_platform(bench_blocks.CACHE)
    assert bench_blocks.first_steps_differ(3) == []


def test_the_cached_gpt_run_still_describes_this_code():
    """methods-2025-b-gpt's cache: its configuration is what the page's command plans now, and its
    first 2 steps' modelled columns (sparseloco's first sync, streaming-diloco's first send) are
    what this code models."""
    import lionsim.docgen.gpt_bench as gpt

    _same_platform(gpt.CACHE)
    assert gpt.first_steps_differ(2) == []


@pytest.mark.slow
def test_check_names_a_stale_block_and_its_page(tmp_path, monkeypatch, capsys):
    """The block sits in a docs page of a copy of the checkout's pages; --write mends it there."""
    copies = []
    for page in pages():
        copy = tmp_path / page.parent.name / page.name if page.parent.name == "docs" else tmp_path / page.name
        copy.parent.mkdir(exist_ok=True)
        text = page.read_text(encoding="utf-8")
        copy.write_text(with_blocks(text, {"estimate-lioncub": "\n    stale\n\n"}), encoding="utf-8")
        copies.append(copy)
    holder = where_blocks(copies)["estimate-lioncub"]
    monkeypatch.setattr("lionsim.docgen.__main__.pages", lambda: copies)
    assert docs_main(["--check", "--only", "estimate-lioncub"]) == 1
    shown = f"docs/{holder.name}" if holder.parent.name == "docs" else holder.name
    assert f"{shown} block estimate-lioncub differs" in capsys.readouterr().err
    assert docs_main(["--write", "--only", "estimate-lioncub"]) == 0
    assert docs_main(["--check", "--only", "estimate-lioncub"]) == 0


@pytest.mark.slow
def test_a_cache_that_no_longer_matches_the_code_is_named(tmp_path, monkeypatch):
    """The staleness check can fail: a cache whose modelled bytes differ from what the code now
    books (as after a change to a wire format) names that run."""
    import shutil

    import pandas as pd

    copy = tmp_path / "default-bench"
    shutil.copytree(lionsim.docgen.cached.cache_dir(bench_blocks.CACHE), copy)
    steps = pd.read_csv(copy / "steps.csv")
    steps.loc[(steps.strategy == "lioncub-l1") & (steps.step == 2), "wire_bytes"] += 1
    steps.to_csv(copy / "steps.csv", index=False)
    monkeypatch.setattr(lionsim.docgen.cached, "cache_dir", lambda name: copy)
    assert bench_blocks.first_steps_differ(2, only=["adamw", "lioncub-l1"]) == ["lioncub-l1@int8-allreduce"]


@pytest.mark.slow
def test_the_low_precision_comm_block_prices_what_the_bench_books():
    """low-precision-comm prices the transports' calls for the vit's gradients without training:
    each figure it prints is what a one-step default bench books in its comm column."""
    from lionsim.docgen.figures import VIT_PARAMS, low_precision_comm, ms
    from lionsim.docgen.run import bench_summary

    body = " ".join(low_precision_comm().split())
    for workers in (8, 32):
        got = bench_summary(["-n", str(workers), "--steps", "1", "-s", "adamw", "-s", "adamw@bf16-allreduce",
                             "-s", "adamw@fp8-allreduce"])
        assert (got["params"] == VIT_PARAMS).all()
        figures = ", ".join(ms(got.loc[f"adamw@{t}-allreduce", "comm_s"]) for t in ("fp32", "bf16"))
        assert f"{figures} and {ms(got.loc['adamw@fp8-allreduce', 'comm_s'])} at {workers} workers" in body


def test_the_gpt_table_summarises_under_the_runs_own_rule(tmp_path, monkeypatch):
    """methods-2025-b-gpt reads its baseline and target loss from the cached run.json, as `lionsim
    plot` and `lionsim report` do, and names that baseline in its words."""
    import json
    import shutil

    import lionsim.docgen.gpt_bench as gpt

    copy = tmp_path / gpt.CACHE
    shutil.copytree(lionsim.docgen.cached.cache_dir(gpt.CACHE), copy)
    meta = json.loads((copy / "run.json").read_text())
    meta["config"].update(baseline="streaming-diloco", target_loss=1.83)
    (copy / "run.json").write_text(json.dumps(meta))
    monkeypatch.setattr(lionsim.docgen.cached, "cache_dir", lambda name: copy)
    body = " ".join(gpt.gpt_table().split())
    assert "to target (1.83)" in body and "Target loss 1.83 (--target-loss)" in body
    assert "streaming-diloco's target on gpt" in body  # adamw (1.770) reaches 1.83, sparseloco (1.823) too


def test_reached_words_any_number_of_runs():
    import pandas as pd

    from lionsim.docgen.gpt_bench import reached

    def summary(reached_by: list[bool], strategies: list[str]) -> pd.DataFrame:
        runs = [f"{s}@t{i}" for i, s in enumerate(strategies)]
        return pd.DataFrame({"run": runs, "strategy": strategies, "baseline": runs[0], "steps": 50,
                             "target_reached": reached_by, "time_to_target_speedup": [1.0, 2.0, 3.0, 4.0][:len(runs)]})

    assert reached(summary([True, True, True, True], ["lion", "a", "b", "c"]), "vit") == \
        "All 3 reach lion's target on vit, sooner in modelled time by: a 2.00x, b 3.00x, c 4.00x."
    assert reached(summary([True, False, False], ["lion", "a", "a"]), "vit") == \
        "Neither reaches lion's target in 50 steps on vit on this run."
    assert reached(summary([True, False, True, False], ["lion", "a", "a", "b"]), "vit") == \
        "a@t2 reaches lion's target on vit, sooner in modelled time by: a@t2 3.00x."
