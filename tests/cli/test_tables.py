"""The command's tables and listings: they fit 80 columns without cutting a number or a header,
fold long run labels only where a reader expects it, and come as CSV or JSON on request."""

import io
import json
import re

import pandas as pd
import pytest
from rich.console import Console

from tests.helpers.cli import invoke_at, run_cli


def test_strategies_listing_shows_the_new_ones_with_their_bits(capsys, monkeypatch):
    from lionsim.cli.app import console, main

    monkeypatch.setattr(console, "width", 400)  # one line a row

    with pytest.raises(SystemExit) as exit_info:
        main(["strategies", "--workers", "7"])
    assert exit_info.value.code == 0
    out = capsys.readouterr().out
    for name in ("lioncub-linf", "lioncub-l0", "lioncub-ternary", "signsgd", "qsgd", "onebit-adam",
                 "packed-allreduce", "allgather-levels", "compressed-allreduce"):
        assert name in out
    assert "4.57/4.57" in out  # lioncub-ternary at N = 7: 4-bit fields, 7 a word


@pytest.mark.parametrize("command", ["networks", "strategies", "workloads"])
def test_listings_fit_80_columns_with_whole_headers(capsys, command):
    code, out, _ = run_cli([command], capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "…" not in out


@pytest.mark.parametrize("command, key", [("networks", "bandwidth_GBps"), ("strategies", "bits_per_param_up"),
                                          ("workloads", "summary")])
def test_listings_as_csv_and_json(capsys, command, key):
    import io

    code, out, _ = run_cli([command, "--format", "csv"], capsys)
    assert code == 0 and key in pd.read_csv(io.StringIO(out)).columns
    code, out, _ = run_cli([command, "--format", "json"], capsys)
    assert code == 0 and key in json.loads(out)[0]


def test_comm_table_fits_80_columns_without_cutting_a_number(capsys):
    """Its numbers and words whole: 80 columns cut `recursive_doubling` to `recursive_doubl` / `ing`;
    the table is drawn the 2 columns wider the word needs (lionsim.reports.widths.shaped)."""
    code, out, _ = run_cli(["comm", "--network", "1gbe", "--sizes", "1KB:4GB:x16", "--workers", "1024"], capsys)
    assert code == 0 and "…" not in out and "recursive_doubling" in out.split()
    assert max(map(len, out.splitlines())) <= 82  # the 2 columns more the word needs
    assert any(re.fullmatch(r"\d{1,3}(,\d{3}){2}", token) for token in out.split())  # millions of us, whole


def test_comm_wraps_a_hierarchical_algorithm_at_its_phases_and_never_cuts_a_number(monkeypatch):
    """A multi-node network priced by the ideal library names an algorithm per phase
    (hier:ring+recursive_doubling+bruck): at 80 columns it goes on a line per phase, and every
    number the 200-column table prints is there whole (it was cut to "89,7…")."""
    args = ("--network", "h100x8-10gbe", "--traits", "ideal", "--workers", "16,64", "--collective", "all_reduce",
            "--sizes", "1KB,1GB")
    wide, narrow = (invoke_at(width, ["comm", *args], monkeypatch).output for width in (200, 80))
    numbers = [t for t in wide.split() if re.fullmatch(r"[\d.,]+", t) and any(c.isdigit() for c in t)]
    assert "hier:ring+recursive_doubling+bruck" in wide and "859,341" in numbers
    assert max(map(len, narrow.splitlines())) <= 80 and "…" not in narrow
    assert sorted(t for t in narrow.split() if t in numbers) == sorted(numbers)  # each whole, as often
    rows = [line.split() for line in narrow.splitlines()]
    assert ["hier:ring+"] in [r[1:2] for r in rows] and ["recursive_doubling+"] in rows and ["bruck"] in rows


def test_comm_title_names_the_library_and_fabric_as_estimate_does(monkeypatch):
    def comm_at(*args):
        return invoke_at(120, ["comm", *args, "--workers", "16", "--sizes", "1GB"], monkeypatch).output

    assert "modelled collectives on h100x8-10gbe (ideal)" in comm_at("--network", "h100x8-10gbe", "--traits", "ideal")
    assert "modelled collectives on h100x8-100gbe (nccl over sockets)" in comm_at("--network", "h100x8-100gbe")


def test_estimate_tables_fit_80_columns_and_fold_runs_at_boundaries(capsys):
    code, out, _ = run_cli(["estimate", "--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16",
                       "--network", "10gbe", "-s", "adamw,lion,dgc,dlion-mavo@a2a-1bit", "--sweep",
                       "bandwidth=0.1:100:4"], capsys)
    lines = out.splitlines()
    assert code == 0 and max(map(len, lines)) <= 80 and "…" not in out
    assert any(line.split()[:1] == ["@sparse-allgather"] for line in lines)  # whole, on its own line
    assert "local: encode + decode + update" in " ".join(out.split())  # the fold is in the footnote


ESTIMATES = {
    "five runs": ["--model", "llama-7b", "--tokens-per-worker", "4096", "--workers", "16", "--network", "10gbe",
                  "-s", "adamw@bf16-allreduce", "-s", "dlion-mavo", "-s", "onebit-adam", "-s", "powersgd",
                  "-s", "diloco"],
    "the README's": ["--model", "gpt2-345m", "--tokens-per-worker", "8192", "--workers", "16", "--network",
                     "h100x8-10gbe", "--device", "h100", "-s", "lion@fp32-allreduce", "-s", "dlion-mavo@a2a-1bit"],
}


@pytest.mark.parametrize("args", ESTIMATES.values(), ids=ESTIMATES.keys())
def test_estimate_fits_80_columns_in_a_pipe_and_keeps_every_number_whole(capsys, args):
    """Before, the run column widened to its longest name (`@compressed-allreduce`) and the table
    took 82 columns in a pipe (81 for the README's command): now the table drops its blank edges,
    then breaks a name after a '-' where it must, and each run's numbers (read back from --format csv)
    are on its line whole."""
    from lionsim.cli.estimate_view import _ms
    from lionsim.numbers import bytes_text as _bytes

    code, out, _ = run_cli(["estimate", *args], capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "…" not in out
    code, csv, _ = run_cli(["estimate", *args, "--format", "csv"], capsys)
    for row in pd.read_csv(io.StringIO(csv)).itertuples():
        line = next(line for line in out.splitlines() if line.split()[:1] in ([row.strategy], [f"{row.strategy}*"]))
        words = line.split()
        assert all(_ms(s) in words for s in (row.compute_s, row.comm_s, row.comm_exposed_s, row.step_s)), line
        assert f"{row.speedup:.2f}x" in words and (_bytes(row.wire_bytes) in line or
                                                   _bytes(row.wire_bytes).replace(" ", "") in words), line
    # the blank edges dropped first, `@compressed-allreduce` is whole (it broke after its '-': a name
    # a reader greps for was two lines)
    assert "onebit-adam" not in out or "\n@compressed-allreduce\n" in "\n".join(l.strip() for l in out.splitlines())


def rendered(renderable, width: int = 80) -> list[str]:
    console = Console(width=width, record=True, file=open("/dev/null", "w"))
    console.print(renderable)
    return console.export_text().splitlines()


def test_networks_traits_prints_sizes_in_words_and_a_whole_footer():
    from lionsim.cli.network_cmds import _traits_table

    lines = rendered(_traits_table())
    body = " ".join(" ".join(lines).split())
    assert "MiB" not in body and "<= 23 KiB: 1" in body and "larger: 0.76" in body  # gloo's all_reduce: 23552 B
    assert body.endswith("or write your own as a profile's [traits] table.")


def test_the_matrix_keeps_each_option_whole_on_80_columns():
    from lionsim.cli.matrix import matrix_table

    lines = rendered(matrix_table())
    assert max(len(line) for line in lines) <= 80
    assert any('DistributedLion(vote="mavo")' in line for line in lines)
    assert all(line.count("(") == line.count(")") for line in lines if "DistributedLion" in line)


def test_the_regress_table_fits_80_columns():
    from types import SimpleNamespace

    from lionsim.cli.regress_view import check_table
    from lionsim.regress.rows import Row

    rows = [Row("mlp-n4-iid", run, metric, "pass", 0.7644, 0.7644, 0.001226)
            for run, metric in (("dlion-mavo@int8-allreduce", "gap_to_lion"), ("lioncub-l1@int8-allreduce", "loss@50"))]
    rows.append(Row("mlp-n8-iid", "dlion-mavo@a2a-1bit", "best_loss", "FAIL", 0.6118, 0.7, 0.001, excess=88.0))
    result = SimpleNamespace(baseline="reports/baselines/regress.json", mode="float", rows=rows)
    lines = rendered(check_table(result, everything=True))
    assert max(len(line) for line in lines) <= 80
    assert [line.split()[0] for line in lines if "iid" in line or "@" in line] == \
        ["mlp-n4-iid", "dlion-mavo@int8-allreduce", "lioncub-l1@int8-allreduce", "mlp-n8-iid", "dlion-mavo@a2a-1bit"]


@pytest.mark.parametrize("width", [80, 100])
def test_not_drawn_lines_wrap_at_words_under_the_plot_name(width):
    """The reason a sweep plot is skipped, in an 80- or 100-column terminal: each line fits, no
    word is split, and the continuation lines hang under the plot's name."""
    from rich.console import Console

    from lionsim.cli.output import print_not_drawn
    from lionsim.reports.plots.sweep_axes import skipped_plots

    summary = pd.DataFrame({"workload": ["a_plug_in_workload_with_a_long_name.py:make"] * 2,
                            "network": ["a-cluster-profile-with-a-long-name"] * 2, "workers": [4, 8]})
    console = Console(width=width, record=True, file=io.StringIO())
    for name, why in skipped_plots(summary):
        print_not_drawn(console, name, why)
        lines = [line.rstrip() for line in console.export_text(clear=True).splitlines()]
        words = f"{name} ({why})".split()
        assert len(lines) > 1 and all(len(line) <= width for line in lines)
        assert lines[0].startswith("not drawn: ") and all(line.startswith(" " * 11) for line in lines[1:])
        assert " ".join(line[11:] for line in lines).split() == words  # every word whole, in order


def test_networks_and_devices_share_the_listings_style_and_networks_fits_a_screen(capsys):
    """devices was boxed and networks folded its description to about 20 columns (about 80
    lines at 80 columns): both now use the listings' style (strategies': a rule under the header,
    no box, no edge) and networks' description gets twice the room."""
    from rich import box

    from lionsim.cli.lists import list_table
    from lionsim.cli.network_cmds import _networks_table

    outs = {}
    for command in ("networks", "devices", "workloads"):
        code, out, _ = run_cli([command], capsys)
        assert code == 0 and max(map(len, out.splitlines())) <= 80
        assert not set("│┃┏┡└") & set(out), command
        outs[command] = out.splitlines()
    assert len(outs["networks"]) < 55
    description = next(c for c in _networks_table().columns if c.header == "description")
    header = next(line for line in outs["networks"] if line.startswith("name"))
    room = max(map(len, outs["networks"])) - header.index("description")  # lines end at their text
    assert room >= 30 and description.ratio == 1
    assert list_table("x").box is box.SIMPLE_HEAD and list_table("x").show_edge is False
    # a dtype and its figure stay on one line ("fp32" / "15.7" wrapped apart): each pair is one word
    from lionsim.compute import DEVICES

    words = {word.rstrip(",") for line in outs["devices"] for word in line.split()}
    for _, device in DEVICES.items():
        shown = [w for w in words if w.endswith(f"={device.dtype_tflops[-1][1]:g}")]
        assert shown, (device.name, device.dtype_tflops[-1])


@pytest.mark.parametrize("traits", [[], ["--traits"]])
def test_network_listings_as_csv_print_each_value_as_set_without_float_noise(capsys, traits):
    """`networks --traits --format csv` printed 3200.0000000000005 and 720.0000000000001 (seconds divided
    by 1e-6): every number is its library value in the column's unit, to 12 significant digits."""
    from lionsim.network.libraries import TRAITS
    from lionsim.network.presets import NETWORKS

    code, out, _ = run_cli(["networks", *traits, "--format", "csv"], capsys)
    frame = pd.read_csv(io.StringIO(out))
    numbers = [v for c in frame.select_dtypes("number") for v in frame[c].dropna()]
    assert code == 0 and numbers and all(v == float(f"{v:.12g}") for v in numbers)  # no digit past the 12th
    if traits:  # each floor and slow mode against the library's own value, in us
        expected = [(t.floor_s * 1e6, lib.slow.extra_s * 1e6) for _, lib in TRAITS.items() for _, t in lib.ops]
        priced = frame.dropna(subset=["floor_us"])
        assert list(priced["floor_us"]) == pytest.approx([f for f, _ in expected], rel=1e-12)
        assert list(priced["slow_extra_us"]) == pytest.approx([s for _, s in expected], rel=1e-12)
        assert "720.0000000000001" not in out and "3200.0000000000005" not in out and "12.600000000000001" not in out
    else:
        assert list(frame["alpha_us"]) == pytest.approx([n.inter.alpha_s * 1e6 for _, n in NETWORKS.items()], rel=1e-12)


def test_networks_traits_names_a_size_bands_own_floor_apart_from_the_ops_and_says_which_applies():
    """gloo's all_reduce read "floor 580" in its column and "larger: 0.76 (floor 0)" in its bands:
    the column is the op's floor, which a band's own replaces for its sizes (OpTraits.floor). The
    band's is now "own floor" and the caption says the band's replaces the op's."""
    from lionsim.cli.network_cmds import _traits_table
    from lionsim.network.libraries import TRAITS

    body = " ".join(" ".join(rendered(_traits_table())).split())
    ops = dict(TRAITS.get("gloo").ops)
    reduce = ops["all_reduce"]
    assert reduce.floor(1) * 1e6 == pytest.approx(580) and reduce.floor(2**30) == 0  # what the model charges
    assert "(own floor 880)" in body and "larger: 0.76 (own floor 0)" in body and "(floor 0)" not in body
    assert "a band's own floor (us), which replaces the op's there" in body


def test_estimate_at_its_largest_inputs_fits_80_columns_and_says_the_runs_length_in_years(capsys):
    """Before, --params 1e15 at 1e9 tokens a worker printed a 110-column step table and runs of
    "42130159623775:50:56" (at 1e7 steps): now its milliseconds take a power of ten and the run its years."""
    from lionsim.cli.estimate_view import _ms
    from lionsim.numbers import YEAR_S, run_duration

    args = ["estimate", "--params", "1e15", "--tokens-per-worker", "1000000000", "--workers", "64", "--network",
            "dgx-h100", "--steps", "1000", "-s", "adamw,dlion-mavo@a2a-1bit", "--overlap", "after"]  # 1e7 steps: 10 s to walk
    code, out, _ = run_cli(args, capsys)
    assert code == 0 and max(map(len, out.splitlines())) <= 80 and "…" not in out
    code, csv, _ = run_cli([*args, "--format", "csv"], capsys)
    for row in pd.read_csv(io.StringIO(csv)).itertuples():
        years = run_duration(row.run_s)
        assert years.endswith(" y") and abs(float(years.split()[0]) * YEAR_S / row.run_s - 1) < 0.05
        lines = [line.split() for line in out.splitlines() if line.split()[:1] in ([row.strategy], [f"{row.strategy}*"])]
        assert all(_ms(s) in lines[0] for s in (row.compute_s, row.comm_s, row.step_s)), lines
        assert years.split() == lines[1][1:3], lines


def test_networks_rows_say_one_thing_in_one_bracket(capsys, monkeypatch):
    """Before, h100x8-100gbe read "(NCCL over TCP, its default 2 channels: 1.96 GB/s a node) (NCCL over
    sockets)" beside eff 0.43 (11.7 x 0.43 = 5.03 GB/s, unexplained), and nvlink4/nvlink3, one node
    with no fabric across nodes, "NCCL: ib"."""
    from lionsim.cli.app import console
    from lionsim.network.presets import NETWORKS

    monkeypatch.setattr(console, "width", 400)  # one line a row
    code, out, _ = run_cli(["networks"], capsys)
    rows = {line.split()[0]: line.rstrip() for line in out.splitlines() if line.split()[:1] and line.split()[0] in NETWORKS}
    assert code == 0 and not [name for name, line in rows.items() if ") (" in line]
    cap = NETWORKS.get("h100x8-100gbe").nccl_fabric().cap_GBps
    assert f"(NCCL over sockets: {cap:.3g} GB/s a node, its channels' cap, of the link's 5.03)" in rows["h100x8-100gbe"]
    assert "GB/s x eff" in " ".join(out.split())  # the caption says what eff is
    for name in ("nvlink4", "nvlink3"):
        assert rows[name].endswith("(ideal library; NCCL: none, one node)"), rows[name]
    assert rows["ib-ndr"].endswith("(ideal library; NCCL: ib)") and rows["dgx-h100"].endswith("(NCCL over ib)")


def test_a_table_whose_numbers_are_wider_than_a_narrow_terminal_prints_them_whole(monkeypatch):
    """On a 60-column terminal the eight number columns of estimate's step table need more than 60
    alone: rich cropped every line at 60 ("1.0…", "spe…"); the table is drawn wider, its numbers
    whole (each read back from the frame it prints)."""
    from lionsim.cli.app import _Console
    from lionsim.cli.estimate_view import _ms, breakdown_table
    from lionsim.estimate import estimate
    from lionsim.estimate.config import EstimateConfig

    monkeypatch.setenv("TTY_COMPATIBLE", "1")  # stdout as rich sees a terminal, COLUMNS wide
    monkeypatch.setenv("COLUMNS", "60")
    frame = estimate(EstimateConfig(model="gpt2-124m"))
    shown = _Console(width=60, record=True, file=io.StringIO())
    shown.print(breakdown_table(frame))
    text = shown.export_text()
    assert "…" not in text and max(map(len, text.splitlines())) > 60
    lines = [line.split() for line in text.splitlines()]
    for row in frame.itertuples(index=False):  # a run's first line ends: step, sent, speedup
        assert [_ms(row.step_s), f"{row.speedup:.2f}x"] in ([w[-3], w[-1]] for w in lines if len(w) > 4), row


def test_a_table_in_a_pipe_has_no_trailing_blanks_and_stays_aligned(capsys):
    """`lionsim estimate ... | cat -A` showed `mfu 0.4   $`: rich pads every line to the table's
    width. Off a terminal each line ends at its last character; the columns stay where they were
    (the header's `step` and a row's step time end in the same column)."""
    code, out, _ = run_cli(["estimate", "--model", "gpt2-345m", "-s", "adamw,dlion-mavo"], capsys)
    assert code == 0
    lines = out.splitlines()
    assert lines and not [line for line in lines if line != line.rstrip()]
    header = next(line for line in lines if line.lstrip().startswith("run "))
    row = next(line for line in lines if line.lstrip().startswith("adamw"))
    end = header.index(" step ") + len(" step")
    assert row[end - 1] != " " and row[end] == " "  # the step time right-aligned under its header


def test_the_estimate_table_says_its_step_times_are_modelled_and_from_what(capsys):
    """estimate's title and caption never said "modelled". The caption says it, with the device and
    mfu its compute is priced at and the model that priced comm (estimate.csv's device, mfu,
    network, library)."""
    code, out, _ = run_cli(["estimate", "--model", "gpt2-345m", "-s", "adamw", "--mfu", "0.3", "--traits", "nccl"],
                           capsys)
    said = " ".join(out.split())
    assert code == 0
    assert ("step times modelled: compute on h100 (FLOPs at peak x mfu 0.3), local (kernel table), comm on 10gbe "
            "(nccl traits).") in said, said


def test_every_step_table_prints_bytes_in_one_form(capsys):
    """estimate's table printed "1.24 GB" where bench's printed "2.84GB" (and estimate's own, with
    its across column, "1.24GB"): every step table now prints the compact form (numbers.step_bytes)."""
    from lionsim.numbers import step_bytes

    assert step_bytes(1.24e9) == "1.24GB" and step_bytes(125) == "125B"
    code, out, _ = run_cli(["estimate", "--model", "gpt2-345m", "-s", "adamw,dlion-mavo"], capsys)
    rows = [line for line in out.splitlines() if re.match(r"\s*(adamw\*|dlion-mavo)\s+\d", line)]
    assert code == 0 and len(rows) == 2
    assert all(re.search(r"\d(GB|MB) ", row) and not re.search(r"\d (kB|MB|GB)\b", row) for row in rows), rows


def test_the_strategies_listing_says_why_packed_fields_take_the_bits_they_do():
    """lioncub-l1 on packed-allreduce books 10.7 bits against int8-allreduce's 8: its levels to
    floor(127/N) summed over N workers need p = ceil(log2(2NL + 1)) bits, floor(31/p) fields a word;
    the footnote works it out for the listing's worker count."""
    import math

    from lionsim.cli.lists import bits_footnote, strategies_frame

    for workers in (8, 3):
        frame = strategies_frame(workers, None)
        level = 127 // workers  # Lion Cub's s = floor(127/N)
        p = max(4, math.ceil(math.log2(2 * workers * level + 1)))
        row = frame[(frame["strategy"] == "lioncub-l1") & (frame["transport"] == "packed-allreduce")].iloc[0]
        assert row["bits_per_param_up"] == pytest.approx(32 / (31 // p))
        text = bits_footnote(frame, workers)
        assert f"these are for {workers} workers" in text
        assert (f"lioncub-l1, lioncub-linf, lioncub-l0, diloco-int8): levels to {level} summed over {workers} workers "
                f"need {p}-bit fields") in text
        assert f"{31 // p} to an int32 word: 32/{31 // p} = {32 / (31 // p):.3g} bits" in text


def test_the_strategies_listing_says_why_fp8_books_more_than_8_bits_on_a_small_model():
    """fp8-allreduce: 8-bit codes, a float32 scale per 256 and the vector padded to N chunks of whole
    blocks: 9.06 bits on mlp's 11,018 parameters at 8 workers (8.21 on vit's), as bench books them."""
    import math

    from lionsim.cli.lists import bits_footnote, strategies_frame

    frame = strategies_frame(8, "mlp")
    row = frame[(frame["strategy"] == "adamw") & (frame["transport"] == "fp8-allreduce")].iloc[0]
    params = 11018  # the mlp's parameters (summary.csv's params of an mlp bench)
    padded = math.ceil(params / (8 * 256)) * 8 * 256
    assert row["bits_per_param_up"] == pytest.approx(8 * (1 + 4 / 256) * padded / params)
    assert (f"{params:,} values padded to 8 chunks of whole blocks ({padded:,}): "
            f"{row['bits_per_param_up']:.3g} bits") in bits_footnote(frame, 8)
