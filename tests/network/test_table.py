"""Size parsing, nccl-tests busbw factors and the comm table."""

from __future__ import annotations

import pytest

from lionsim.errors import LionsimError
from lionsim.network import COMM_COLUMNS, CollectiveCall, bandwidths, bus_factor, comm_table, load_network, parse_sizes, price


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("1KB:8KB", [1000, 2000, 4000, 8000]),
        ("1KiB:4KiB", [1024, 2048, 4096]),
        ("1kB:10KB:x4", [1000, 4000]),  # as nccl-tests: every step x4, the last <= END
        ("1K:8K", [1024, 2048, 4096, 8192]),  # nccl-tests' K is 1024
        ("4096,1MB,1.5MB", [4096, 1_000_000, 1_500_000]),
        ("1GB", [10**9]),
        ("8,1KB:2KB,8", [8, 1000, 2000]),  # duplicates dropped
        ("1KB,1.5KiB,1000,1023", [1000, 1023, 1536]),  # ascending, whatever the order typed
        ("1MiB:4MiB:3", [2**20, 3 * 2**20]),
        ("1MiB:9MiB:3", [2**20, 3 * 2**20, 9 * 2**20]),
    ],
)
def test_parse_sizes(text, expected):
    assert parse_sizes(text) == expected


def test_a_range_doubles_every_step_as_nccl_tests():
    """nccl-tests' -b 1K -e 1G -f 2: 2^10 .. 2^30, each step a doubling; a decimal range stops at
    its last doubling <= END rather than end on a step that is not one."""
    assert parse_sizes("1K:1G") == parse_sizes("1KiB:1GiB") == [2**k for k in range(10, 31)]
    sizes = parse_sizes("1KB:1GB")
    assert sizes == [1000 * 2**k for k in range(20)] and sizes[-1] == 524_288_000


@pytest.mark.parametrize("text", ["1XB", "0", "1.5B", "2KB:1KB", "1KB:2KB:x1", "1:2:3:4", "", "KB", "1KB:2KB:xx",
                                  "1Kb", "1kb:10kb:x4", "8Mb", "1b"])
def test_bad_sizes(text):
    with pytest.raises(LionsimError):
        parse_sizes(text)


def test_a_range_ending_below_its_start_names_it_and_the_accepted_form():
    """`comm --sizes 1GB:1KB` said "end 1000 B is below start 1000000000 B": not the range typed,
    nor what a range must be."""
    with pytest.raises(LionsimError) as refused:
        parse_sizes("4096,1GB:1KB")
    line = str(refused.value)
    assert line.startswith("bad --sizes 4096,1GB:1KB: 1GB:1KB: END 1KB is below START 1GB") and "\n" not in line
    assert "accepted: START:END or START:END:xFACTOR, START <= END" in line
    assert parse_sizes("1KB:1GB:x2")[0] == 1000  # the accepted form's own example parses


@pytest.mark.parametrize(("text", "bad"), [("1e30", "1e30"), ("1PB", "1PB"), ("2**60", "2**60"),
                                           ("1.5TiB", "1.5TiB"), ("1TiB:1PiB", "1PiB"), ("1KB,1e13", "1e13")])
def test_a_size_above_1_tib_is_refused_naming_it_and_the_range_in_every_spelling(text, bad):
    with pytest.raises(LionsimError) as refused:
        parse_sizes(text)
    line = str(refused.value)
    assert line.startswith(f"bad --sizes {text}") and bad in line and "accepted: 1 B to 1 TiB (1,099,511,627,776 B)" in line and "\n" not in line


@pytest.mark.parametrize(("text", "why"), [("0", "0 is below 1 B"), ("0.4", "0.4 is below 1 B"),
                                           ("1.5B", "1.5B is not a whole number of bytes")])
def test_a_size_too_small_or_fractional_says_which(text, why):
    """`comm --sizes 0` said "must be a whole number of bytes", which 0 is: the bound is 1 B."""
    with pytest.raises(LionsimError) as refused:
        parse_sizes(text)
    assert str(refused.value).startswith(f"bad --sizes {text}: {why}; accepted: 1 B to 1 TiB")


def test_1_tib_is_the_largest_size():
    assert parse_sizes("1TiB,1T,1TB,512GiB:1TiB") == [2**39, 10**12, 2**40]


@pytest.mark.parametrize(("text", "line"), [
    ("1KiB:1MiB:x1", "bad --sizes 1KiB:1MiB:x1: step x1 is not a factor above 1; accepted: START:END or START:END:xFACTOR"),
    ("1Kb,1.5KiB,1000,1023", "bad --sizes 1Kb,1.5KiB,1000,1023: 1Kb: b is bits; write B for bytes (KB); accepted: 1 B to"),
])
def test_a_bad_size_is_refused_in_one_line_naming_the_option(text, line):
    """`--sizes 1KiB:1MiB:x1` said "use a factor > 1, e.g. x2" without the option; `1Kb` (a kilobit) was read
    as 1000 bytes."""
    with pytest.raises(LionsimError) as refused:
        parse_sizes(text)
    assert str(refused.value).startswith(line)


def test_repeated_sizes_are_one_row_and_counted():
    sizes = parse_sizes("1KB,1.5KiB,1000,1023,1K:2K")
    assert sizes == [1000, 1023, 1024, 1536, 2048] and sizes.dropped == 1


def test_bus_factors_are_nccl_tests():
    assert bus_factor("all_reduce", 8) == pytest.approx(1.75)
    for op in ("all_gather", "reduce_scatter", "all_to_all"):
        assert bus_factor(op, 8) == pytest.approx(0.875)
        assert bus_factor(op, 2) == pytest.approx(0.5)
    assert bus_factor("broadcast", 8) == 1.0 and bus_factor("reduce", 3) == 1.0
    assert bus_factor("all_reduce", 1) == 0.0
    with pytest.raises(LionsimError, match="ps_push"):
        bus_factor("ps_push", 4)


def test_bandwidths():
    # 1e9 bytes in 0.5 s = 2 GB/s; all-reduce on 4: busbw = 2 x 1.5 = 3 GB/s
    assert bandwidths("all_reduce", 1e9, 4, 0.5) == pytest.approx((2.0, 3.0))


def test_comm_table_rows_match_price():
    net = load_network("10gbe")
    frame = comm_table(["all_reduce", "all-gather"], [1000, 10**6], [2, 8], net)
    assert tuple(frame.columns) == COMM_COLUMNS
    assert len(frame) == 2 * 2 * 2
    assert set(frame["source"]) == {"model"} and set(frame["network"]) == {"10gbe"}
    row = frame[(frame.collective == "all_reduce") & (frame.workers == 8) & (frame.bytes == 10**6)].iloc[0]
    cost = price(CollectiveCall("all_reduce", 10**6), 8, net)
    assert row.time_s == cost.time_s and row.algorithm == cost.algorithm
    assert row.algbw_GBps == pytest.approx(1e6 / cost.time_s / 1e9)
    assert row.busbw_GBps == pytest.approx(row.algbw_GBps * 1.75)


def test_ring_busbw_approaches_the_link_bandwidth_for_large_messages():
    frame = comm_table(["all_reduce"], [10**10], [8], load_network("10gbe"), "ring")
    assert frame.busbw_GBps.iloc[0] == pytest.approx(1.17, rel=1e-3)


def test_comm_table_rejects_bad_input():
    net = load_network("10gbe")
    with pytest.raises(LionsimError, match="unknown collective 'allreduce'"):
        comm_table(["allreduce"], [1000], [2], net)
    with pytest.raises(LionsimError, match="integers >= 2"):
        comm_table(["all_reduce"], [1000], [1], net)
    with pytest.raises(LionsimError, match="does not implement broadcast"):
        comm_table(["broadcast"], [1000], [2], net, "tree")
