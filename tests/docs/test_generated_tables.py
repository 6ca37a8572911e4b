"""The generated tables of README.md and docs/*.md equal what `python -m lionsim.docgen` prints, and the cached run
they render from still describes this code (lionsim.docgen).

Fast by design: the bench tables render from the cached real run (reports/readme/), which is
checked against the code by rerunning its first 3 steps now (every modelled column, the same
on any CPU, must equal the cache's) instead of training 100 steps of 11 strategies; the
estimate tables run their commands in this process (pure modelling). All in the CI tier: the
blocks one test each, so its processes share them."""

from __future__ import annotations

import pytest
import lionsim.docgen.bench as bench_blocks
import lionsim.docgen.cached
import lionsim.docgen.comm  # noqa: F401  (registers its blocks)
import lionsim.docgen.estimate  # noqa: F401
import lionsim.docgen.methods  # noqa: F401
import lionsim.docgen.kernels  # noqa: F401
from lionsim.docgen.__main__ import main as docs_main
from lionsim.docgen.blocks import BLOCKS, page_blocks, pages, where_blocks, with_blocks
from lionsim.docgen.cached import load_cached
from lionsim.errors import LionsimError


def test_every_block_has_its_markers_in_one_page():
    assert set(where_blocks(pages())) == set(BLOCKS.names())


@pytest.mark.parametrize("name", sorted(BLOCKS.names()))
def test_the_block_matches_what_the_generator_prints(name):
    """One test per block, so the CI tier spreads them over its processes (all of them: about 40 s
    of modelling on one core)."""
    page = where_blocks(pages())[name]
    assert page_blocks(page.read_text(encoding="utf-8"))[name] == BLOCKS.get(name).render(), \
        f"{page.name}: block {name} differs: run `python -m lionsim.docgen --write`"


def test_the_bench_tables_state_cpu_date_and_what_depends_on_the_cpu():
    body = " ".join(BLOCKS.get("default-bench").render().split())  # the prose is wrapped at 100 columns
    facts = load_cached(bench_blocks.CACHE).facts
    assert facts["cpu"] in body and facts["date"] in body and "another CPU rounds differently" in body
    assert "modelled for an H100" in body


def test_the_cached_run_still_describes_this_code():
    assert bench_blocks.first_steps_differ(3) == []


def test_the_cached_gpt_run_still_describes_this_code():
    """methods-2025-b-gpt's cache: its configuration is what the page's command plans now, and its
    first 2 steps' modelled columns (sparseloco's first sync, streaming-diloco's first send) are
    what this code models."""
    import lionsim.docgen.gpt_bench as gpt

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
