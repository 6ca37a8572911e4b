"""One form a column in every CSV lionsim writes (lionsim.reports.formats.csv_frame): counts of
bytes and parameters whole numbers, times floats, whichever command wrote them."""

from __future__ import annotations

import csv
import io
import re

import pandas as pd

from tests.helpers.cli import run_cli

WHOLE = re.compile(r"\d+")


def _cells(text: str) -> list[dict[str, str]]:
    return list(csv.DictReader(io.StringIO(text)))


def test_counts_are_whole_and_times_are_floats_in_csv_text():
    """`wire_bytes` read 53907324928.0 in one estimate CSV and an integer in another; `encode_s` 0
    in one and 0.0 in another: the dtype a frame happened to have decided."""
    from lionsim.reports.formats import csv_frame, frame_text

    frame = pd.DataFrame({"strategy": ["a", "b"], "wire_bytes": [53907324928.0, float("nan")],
                          "bytes": [1024.4, 7.0], "params": [354823168.0, 1.0], "bytes_per_param": [0.5, 2.0],
                          "encode_s": [0, 1], "workers": [2, 4]})
    rows = _cells(frame_text(frame, "csv"))
    assert [r["wire_bytes"] for r in rows] == ["53907324928", ""]  # missing stays empty
    assert [r["bytes"] for r in rows] == ["1024", "7"] and rows[0]["params"] == "354823168"
    assert [r["encode_s"] for r in rows] == ["0.0", "1.0"]
    assert [r["bytes_per_param"] for r in rows] == ["0.5", "2.0"] and rows[1]["workers"] == "4"  # not counts of bytes
    assert frame["wire_bytes"].iloc[0] == 53907324928.0  # the caller's frame untouched
    assert csv_frame(frame)["wire_bytes"].iloc[0] == 53907324928
    limits = _cells(frame_text(pd.DataFrame({"max_bytes": [65536.0, float("inf")]}), "csv"))
    assert [r["max_bytes"] for r in limits] == ["65536.0", "inf"]  # no limit: written as a float, not refused


def test_a_local_step_estimates_bytes_are_whole_in_estimate_csv(capsys, tmp_path):
    """diloco's bytes per step (one exchange every H steps, averaged) were written as floats."""
    code, _, err = run_cli(["estimate", "--model", "gpt2-124m", "-s", "adamw,diloco", "--out", tmp_path / "e"], capsys)
    assert code == 0, err
    rows = _cells((tmp_path / "e" / "estimate.csv").read_text())
    for row in rows:
        for name in ("wire_bytes", "inter_bytes", "params"):
            assert WHOLE.fullmatch(row[name]), (name, row[name])
        assert all("." in row[name] or "e" in row[name] for name in row if name.endswith("_s") and row[name])


def test_json_text_writes_counts_as_the_csv_does():
    """`--format json` skipped csv_frame: JSON said 871078656.0 bytes where CSV said 871078656."""
    import json

    from lionsim.reports.formats import frame_text

    frame = pd.DataFrame({"wire_bytes": [871078656.0, float("nan")], "params": [354823168.0, 1.0],
                          "encode_s": [0, 1], "max_bytes": [65536.0, float("inf")]})
    rows = json.loads(frame_text(frame, "json"))
    assert [r["wire_bytes"] for r in rows] == [871078656, None] and isinstance(rows[0]["wire_bytes"], int)
    assert isinstance(rows[0]["params"], int) and [r["encode_s"] for r in rows] == [0.0, 1.0]
    assert isinstance(rows[0]["encode_s"], float) and [r["max_bytes"] for r in rows] == [65536.0, "inf"]
    assert '"wire_bytes": 871078656,' in frame_text(frame, "json")


def test_counts_of_steps_and_workers_are_whole_and_a_worker_crossover_too():
    """summary.csv wrote steps_to_target 18.0, crossover.csv a worker crossover 127.0 and loses_at 128.0."""
    from lionsim.reports.formats import frame_text

    frame = pd.DataFrame({"steps_to_target": [18.0, float("nan")], "steps_to_target_hi": [20.0, 3.0],
                          "local_steps": [4.0, 100.0], "workers": [8.0, 16.0], "steps_per_s": [2.5, 3.0],
                          "time_to_target_s": [18.0, 1.0]})
    rows = _cells(frame_text(frame, "csv"))
    assert [r["steps_to_target"] for r in rows] == ["18", ""]  # NaN: not reached, empty
    assert [(r["steps_to_target_hi"], r["local_steps"], r["workers"]) for r in rows] == [("20", "4", "8"),
                                                                                          ("3", "100", "16")]
    assert [(r["steps_per_s"], r["time_to_target_s"]) for r in rows] == [("2.5", "18.0"), ("3.0", "1.0")]
    crossings = {"strategy": ["a", "b"], "crossover": [127.0, float("nan")], "loses_at": [128.0, float("nan")],
                 "speedup_first": [2.0, 1.0]}
    workers = _cells(frame_text(pd.DataFrame({**crossings, "variable": ["workers"] * 2}), "csv"))
    assert [(r["crossover"], r["loses_at"]) for r in workers] == [("127", "128"), ("", "")]
    assert workers[0]["speedup_first"] == "2.0"
    bandwidth = _cells(frame_text(pd.DataFrame({**crossings, "variable": ["bandwidth"] * 2,
                                                "crossover": [2.5, 7.0]}), "csv"))
    assert [r["crossover"] for r in bandwidth] == ["2.5", "7.0"]  # GB/s: not a count


def test_an_estimate_sweeps_crossover_csv_writes_worker_counts_whole(tmp_path, capsys):
    out = tmp_path / "est"
    code, said, err = run_cli(["estimate", "--model", "gpt2-124m", "--network", "100gbe", "--sweep", "workers=64,512",
                               "-s", "adamw@bf16-allreduce,dlion-mavo@int8-allreduce", "--out", out], capsys)
    assert code == 0, said + err
    (row,) = _cells((out / "crossover.csv").read_text())
    assert (row["crossover"], row["loses_at"]) == ("127", "128")
