"""A rank that waits for rank 0 to put back what a stopped publish set aside says so on stderr,
once as it starts (what, up to how long) and once where it gives up: the wait may last the whole
--timeout. Timed against the clock: the wait is never shorter than asked while the folder stays."""

from __future__ import annotations

import time

from lionsim.reports.publish import aside, put_back_awaited


def test_a_wait_that_runs_out_says_when_it_starts_and_when_it_gives_up(tmp_path):
    out = tmp_path / "run"
    aside(out).mkdir()  # `.run.old` beside an absent --out: what a publish stopped between its renames leaves
    said: list[str] = []
    started = time.monotonic()
    put_back_awaited(out, 0.3, who="rank 1", say=said.append)
    assert time.monotonic() - started >= 0.3
    assert said == [f"note: rank 1 waits up to 0.3 s for rank 0 to put back {aside(out)} (set aside by a stopped "
                    f"publish) before it reads {out}",
                    f"note: rank 1: {aside(out)} still set aside after 0.3 s; {out} read as it is"]


def test_nothing_set_aside_is_no_wait_and_no_line(tmp_path, capsys):
    started = time.monotonic()
    put_back_awaited(tmp_path / "run", 30)
    assert time.monotonic() - started < 1 and capsys.readouterr().err == ""


def test_the_default_says_it_on_stderr(tmp_path, capsys):
    out = tmp_path / "run"
    aside(out).mkdir()
    put_back_awaited(out, 0.05)
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and err[0].startswith("note: this rank waits up to 0.05 s") and "read as it is" in err[1]
