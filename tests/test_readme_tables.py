"""README.md's generated tables equal what `python -m lionsim.docs` prints, and the cached run
they render from still describes this code (lionsim.docs).

Fast by design: the bench tables render from the cached real run (reports/readme/), which is
checked against the code by rerunning its first 3 steps now (every modelled column, the same
on any CPU, must equal the cache's) instead of training 100 steps of 11 strategies; the
estimate tables run their two commands (pure modelling, seconds)."""

from __future__ import annotations

import pytest
import lionsim.docs.bench as bench_blocks
import lionsim.docs.estimate  # noqa: F401  (registers its blocks)
from lionsim.docs.__main__ import main as docs_main
from lionsim.docs.blocks import BLOCKS, readme_blocks, readme_path, with_blocks


@pytest.mark.slow
def test_every_block_has_its_markers_and_matches_what_the_generator_prints():
    text = readme_path().read_text(encoding="utf-8")
    found = readme_blocks(text)
    assert set(found) == set(BLOCKS.names())
    stale = [name for name in BLOCKS.names() if found[name] != BLOCKS.get(name).render()]
    assert not stale, f"README.md blocks {stale} differ: run `python -m lionsim.docs --write`"


def test_the_bench_tables_state_cpu_date_and_what_depends_on_the_cpu():
    body = BLOCKS.get("default-bench").render()
    facts = bench_blocks._cached()[1]
    assert facts["cpu"] in body and facts["date"] in body and "another CPU rounds differently" in body
    assert "modelled for an H100" in body


@pytest.mark.slow
def test_the_cached_run_still_describes_this_code():
    assert bench_blocks.first_steps_differ(3) == []


@pytest.mark.slow
def test_check_names_a_stale_block(tmp_path, monkeypatch, capsys):
    readme = tmp_path / "README.md"
    text = readme_path().read_text(encoding="utf-8")
    readme.write_text(with_blocks(text, {"estimate-lioncub": "\n    stale\n\n"}), encoding="utf-8")
    monkeypatch.setattr("lionsim.docs.__main__.readme_path", lambda: readme)
    assert docs_main(["--check", "--only", "estimate-lioncub"]) == 1
    assert "README.md block estimate-lioncub differs" in capsys.readouterr().err
    assert docs_main(["--write", "--only", "estimate-lioncub"]) == 0
    assert docs_main(["--check", "--only", "estimate-lioncub"]) == 0


@pytest.mark.slow
def test_a_cache_that_no_longer_matches_the_code_is_named(tmp_path, monkeypatch):
    """The staleness check can fail: a cache whose modelled bytes differ from what the code now
    books (as after a change to a wire format) names that run."""
    import shutil

    import pandas as pd

    copy = tmp_path / "default-bench"
    shutil.copytree(bench_blocks.cache_dir(bench_blocks.CACHE), copy)
    steps = pd.read_csv(copy / "steps.csv")
    steps.loc[(steps.strategy == "lioncub-l1") & (steps.step == 2), "wire_bytes"] += 1
    steps.to_csv(copy / "steps.csv", index=False)
    monkeypatch.setattr(bench_blocks, "cache_dir", lambda name: copy)
    assert bench_blocks.first_steps_differ(2, only=["adamw", "lioncub-l1"]) == ["lioncub-l1@int8-allreduce"]
