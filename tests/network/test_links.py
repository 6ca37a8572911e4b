"""Links, networks, presets and profile files (valid and every kind of bad one)."""

from __future__ import annotations

import json
import math

import pytest

from lionsim.errors import LionsimError
from lionsim.network import NETWORKS, Link, Network, load_network
from tests.helpers import REPO


def test_link_beta_is_inverse_effective_bandwidth():
    link = Link(alpha_s=1e-5, bandwidth_Bps=2e9, efficiency=0.5)
    assert link.beta == pytest.approx(1e-9)
    assert Link.from_units(alpha_us=25, bandwidth_GBps=1.17, reduce_GBps=4).gamma_s_per_byte == pytest.approx(0.25e-9)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"alpha_s": -1e-6, "bandwidth_Bps": 1e9},
        {"alpha_s": 0.0, "bandwidth_Bps": 0.0},
        {"alpha_s": 0.0, "bandwidth_Bps": math.nan},
        {"alpha_s": 0.0, "bandwidth_Bps": math.inf},
        {"alpha_s": 0.0, "bandwidth_Bps": 1e9, "efficiency": 1.5},
        {"alpha_s": 0.0, "bandwidth_Bps": 1e9, "efficiency": 0.0},
        {"alpha_s": 0.0, "bandwidth_Bps": 1e9, "gamma_s_per_byte": -1.0},
    ],
)
def test_bad_links_are_rejected(kwargs):
    with pytest.raises(LionsimError):
        Link(**kwargs)


def test_network_rules():
    inter = Link(alpha_s=0.0, bandwidth_Bps=1e9)
    with pytest.raises(LionsimError, match="needs an intra link"):
        Network(name="x", inter=inter, workers_per_node=8)
    with pytest.raises(LionsimError, match="oversubscription"):
        Network(name="x", inter=inter, oversubscription=0.5)
    with pytest.raises(LionsimError, match="ps_servers"):
        Network(name="x", inter=inter, ps_servers=0)


REQUIRED = ("1gbe", "10gbe", "25gbe", "100gbe", "ib-hdr", "ib-ndr", "nvlink4")


def test_required_presets_exist_with_their_documented_values():
    assert set(REQUIRED) <= set(NETWORKS.names())
    expected = {  # alpha us, bandwidth GB/s, efficiency (presets.py table)
        "1gbe": (50, 0.117, 1.0),
        "10gbe": (25, 1.17, 1.0),
        "25gbe": (25, 2.9, 1.0),
        "100gbe": (20, 11.7, 0.43),
        "ib-hdr": (2, 24, 1.0),
        "ib-ndr": (2, 48, 1.0),
        "nvlink4": (1, 380, 1.0),
    }
    for name, (alpha_us, gbps, eff) in expected.items():
        net = load_network(name)
        assert net.inter.alpha_s == pytest.approx(alpha_us * 1e-6)
        assert net.inter.bandwidth_Bps == pytest.approx(gbps * 1e9)
        assert net.inter.efficiency == eff
        assert net.workers_per_node == 1


def test_preset_goodput_is_below_line_rate_and_in_reference_ranges():
    line_rate = {"1gbe": 0.125, "10gbe": 1.25, "25gbe": 3.125, "100gbe": 12.5, "ib-hdr": 25, "ib-ndr": 50, "nvlink4": 450}
    for name, raw in line_rate.items():
        link = load_network(name).inter
        assert link.bandwidth_Bps * link.efficiency < raw * 1e9
    nccl_tcp = load_network("100gbe").inter  # NCCL over TCP reached 4-6 GB/s
    assert 4e9 <= nccl_tcp.bandwidth_Bps * nccl_tcp.efficiency <= 6e9
    dgx = load_network("dgx-h100")
    assert dgx.workers_per_node == 8 and dgx.inter.bandwidth_Bps == pytest.approx(8 * 48e9)


SPEC_EXAMPLE = """\
workers_per_node = 8        # optional; 1 (flat) if absent
[inter]
alpha_us = 25.0
bandwidth_GBps = 1.17
efficiency = 1.0
[intra]
alpha_us = 1.0
bandwidth_GBps = 360.0
"""


def test_spec_example_profile(tmp_path):
    path = tmp_path / "cluster.toml"
    path.write_text(SPEC_EXAMPLE)
    net = load_network(str(path))
    assert net.name == "cluster"
    assert net.workers_per_node == 8
    assert net.inter.alpha_s == pytest.approx(25e-6) and net.inter.bandwidth_Bps == pytest.approx(1.17e9)
    assert net.intra is not None and net.intra.bandwidth_Bps == pytest.approx(360e9)
    assert net.oversubscription == 1.0 and net.ps_servers == 1


def test_json_profile_with_every_key(tmp_path):
    data = {
        "name": "lab",
        "description": "two racks",
        "workers_per_node": 4,
        "oversubscription": 2,
        "ps_servers": 2,
        "inter": {"alpha_us": 30, "bandwidth_GBps": 2.9, "efficiency": 0.8, "reduce_GBps": 5},
        "intra": {"alpha_us": 2, "bandwidth_GBps": 24},
    }
    path = tmp_path / "lab.json"
    path.write_text(json.dumps(data))
    net = load_network(path)
    assert (net.name, net.workers_per_node, net.oversubscription, net.ps_servers) == ("lab", 4, 2.0, 2)
    assert net.inter.efficiency == 0.8 and net.inter.gamma_s_per_byte == pytest.approx(0.2e-9)


def test_to_dict_round_trips_through_a_profile_file(tmp_path):
    for name in NETWORKS.names():
        original = load_network(name)
        path = tmp_path / f"{name}.json"
        path.write_text(json.dumps(original.to_dict()))
        again = load_network(path)
        assert _close(again.to_dict(), original.to_dict())


def _close(a, b) -> bool:
    if isinstance(a, dict):
        assert a.keys() == b.keys()
        return all(_close(a[k], b[k]) for k in a)
    if isinstance(a, float):
        assert a == pytest.approx(b, rel=1e-12)
        return True
    assert a == b
    return True


BAD_TOML = [
    ("bandwith_GBps = 1.0\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "unknown key 'bandwith_GBps'"),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = 1\nlatency = 3\n", "unknown key 'inter.latency'"),
    ("workers_per_node = 1\n", "missing key 'inter'"),
    ("[inter]\nbandwidth_GBps = 1\n", "missing key 'inter.alpha_us'"),
    ("[inter]\nalpha_us = 1\n", "missing key 'inter.bandwidth_GBps'"),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = 0\n", "'inter.bandwidth_GBps' = 0 is out of range; accepted: a number from "),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = -2.5\n", "'inter.bandwidth_GBps' = -2.5"),
    ("[inter]\nalpha_us = nan\nbandwidth_GBps = 1\n", "'inter.alpha_us' = nan"),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = inf\n", "'inter.bandwidth_GBps' = inf"),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = '10'\n", "'inter.bandwidth_GBps' = '10' is not a number"),
    ("[inter]\nalpha_us = true\nbandwidth_GBps = 1\n", "'inter.alpha_us' = True is not a number"),
    ("[inter]\nalpha_us = 1\nbandwidth_GBps = 1\nefficiency = 1.2\n", "'inter.efficiency' = 1.2"),
    ("workers_per_node = 0\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "'workers_per_node' = 0 is out of range; accepted: a whole number from 1 "),
    ("workers_per_node = 2.5\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "'workers_per_node' = 2.5"),
    ("workers_per_node = 8\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "needs an \\[intra\\] link"),
    ("oversubscription = 0.5\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "'oversubscription' = 0.5"),
    ("inter = 3\n", "'inter' must be a table"),
    ("[inter\nalpha_us = 1\n", "not valid TOML: Expected ']' at the end of a table declaration \\(at line 1, column 7\\)"),
    ("device = 3\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n", "'device' = 3 must be a non-empty string"),
]


@pytest.mark.parametrize(("text", "message"), BAD_TOML)
def test_bad_toml_profiles_name_the_key_and_the_file(tmp_path, text, message):
    path = tmp_path / "bad.toml"
    path.write_text(text)
    with pytest.raises(LionsimError, match=message) as info:
        load_network(str(path))
    assert str(path) in str(info.value)
    assert "\n" not in str(info.value)


@pytest.mark.parametrize("command", [["comm"], ["estimate", "-m", "gpt2-124m"]])
def test_an_unknown_profile_key_is_refused_naming_network_and_the_keys(tmp_path, capsys, command):
    """`comm --network x.toml` with `workers = 8` said "x.toml: unknown key 'workers'" without naming
    --network or the nearest key; one loader serves comm, estimate and bench."""
    from tests.helpers.cli import one_line_exit_2

    path = tmp_path / "x.toml"
    path.write_text("workers = 8\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n")
    err = one_line_exit_2([*command, "--network", str(path)], capsys)
    assert err.startswith(f"error: bad --network {path}: unknown key 'workers'; accepted: name, description, "
                          "workers_per_node, "), err
    assert err.strip().endswith("; did you mean 'workers_per_node'?"), err


IN_RANGE = "is out of range; accepted: a number from 0.000001 to 1,000,000 (GB/s: 1 kB/s"


@pytest.mark.parametrize(("key", "value", "typed"), [
    ("bandwidth_GBps", "1e-308", "1e-308"), ("bandwidth_GBps", "1e300", "1e+300"),
    ("bandwidth_GBps", "9.9e-7", "9.9e-07"), ("bandwidth_GBps", "1000001", "1000001"),
    ("reduce_GBps", "1e-9", "1e-09"), ("reduce_GBps", "1e7", "10000000.0"),
])
def test_a_link_rate_past_its_range_names_the_file_key_and_range(tmp_path, capsys, key, value, typed):
    """A profile's bandwidth_GBps or reduce_GBps outside 1e-6 to 1e6 GB/s (ranges.BANDWIDTH_GBPS):
    1e-308 priced inf steps with exit 0, 1e300 said "bandwidth_Bps = inf", a field no file holds."""
    from tests.helpers.cli import one_line_exit_2

    path = tmp_path / "odd.toml"
    extra = f"bandwidth_GBps = 1\nreduce_GBps = {value}" if key == "reduce_GBps" else f"bandwidth_GBps = {value}"
    path.write_text(f"[inter]\nalpha_us = 25\n{extra}\n")
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "-s", "dlion-mavo", "-s", "adamw", "--network", str(path)],
                          capsys, f"error: bad --network {path}: 'inter.{key}' = {typed} {IN_RANGE}")
    assert "inf" not in err and "_Bps" not in err, err


LINK = "[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n"
TRAITS = LINK + '[traits]\nname = "t"\n'
SLOW = TRAITS + "[traits.slow]\nprobability = 0.1\nextra_us = 1\nmax_bytes = 1\n"
OP = TRAITS + "[traits.ops.all_reduce]\n"
FINITE_0, COUNT = "a finite number at least 0", "a whole number from 1 to 100,000,000 (the most workers lionsim takes)"
ABOVE_0, SHARE = "a finite number above 0", "a number from 0 to 1"


RANGES = [
    ("[inter]\nalpha_us = -5\nbandwidth_GBps = 1\n", "inter.alpha_us", "-5", FINITE_0),
    (LINK + "efficiency = 0\n", "inter.efficiency", "0", "a number above 0 and at most 1 (a multiplier on "
     "bandwidth_GBps)"),
    (LINK + "efficiency = 1.5\n", "inter.efficiency", "1.5", "a number above 0 and at most 1 (a multiplier on "
     "bandwidth_GBps)"),
    ("workers_per_node = 2\n" + LINK + "[intra]\nalpha_us = -1\nbandwidth_GBps = 1\n", "intra.alpha_us", "-1",
     FINITE_0),
    ("workers_per_node = 0\n" + LINK, "workers_per_node", "0", COUNT),
    ("workers_per_node = 100000001\n" + LINK, "workers_per_node", "100000001", COUNT),
    ("ps_servers = -2\n" + LINK, "ps_servers", "-2", COUNT),
    ("oversubscription = 0.5\n" + LINK, "oversubscription", "0.5", "a finite number at least 1 (it divides the "
     "inter-node bandwidth)"),
    (LINK + "[nccl]\nmin_nchannels = 0\n", "nccl.min_nchannels", "0", "a whole number from 1 to 64 "
     "(NCCL_MIN_NCHANNELS up to NCCL's MAXCHANNELS; leave it out for NCCL's default)"),
    (LINK + '[traits]\nname = "t"\nhost_GBps = 0\n', "traits.host_GBps", "0", ABOVE_0),
    (SLOW.replace("probability = 0.1", "probability = 1.5"), "traits.slow.probability", "1.5", SHARE),
    (SLOW.replace("extra_us = 1", "extra_us = -1"), "traits.slow.extra_us", "-1", FINITE_0),
    (SLOW.replace("max_bytes = 1", "max_bytes = -1"), "traits.slow.max_bytes", "-1", FINITE_0),
    (SLOW + "jitter = -0.1\n", "traits.slow.jitter", "-0.1", FINITE_0),
    (SLOW + "extra_jitter = -0.1\n", "traits.slow.extra_jitter", "-0.1", FINITE_0),
    (SLOW + "calm_probability = 2\n", "traits.slow.calm_probability", "2", SHARE),
    (TRAITS + "[traits.staging]\nGBps = 0\n", "traits.staging.GBps", "0", ABOVE_0),
    (TRAITS + "[traits.staging]\nGBps = 1\ncopy_us = -1\n", "traits.staging.copy_us", "-1", FINITE_0),
    (TRAITS + "[traits.reduce_GBps]\nint8 = 0\n", "traits.reduce_GBps.int8", "0", ABOVE_0),
    (OP + "floor_us = -1\n", "traits.ops.all_reduce.floor_us", "-1", FINITE_0),
    (OP + "duplex = [{share = 0}]\n", "traits.ops.all_reduce.duplex[0].share", "0", ABOVE_0),
    (OP + "duplex = [{max_bytes = 0, share = 1}, {share = 1}]\n", "traits.ops.all_reduce.duplex[0].max_bytes", "0",
     "a finite number at least 1"),
    (OP + "duplex = [{share = 1, floor_us = -3}]\n", "traits.ops.all_reduce.duplex[0].floor_us", "-3", FINITE_0),
    ("[inter]\nalpha_us = nan\nbandwidth_GBps = 1\n", "inter.alpha_us", "nan", FINITE_0),
]
"""Every numeric key of a profile file, a value out of its range, and the range in words."""


@pytest.mark.parametrize(("text", "key", "typed", "accepted"), RANGES)
def test_every_profile_range_is_refused_in_the_shared_words(tmp_path, capsys, text, key, typed, accepted):
    """Each numeric key of a profile file out of its range: one line naming the file, the key, the
    value and the range in the words every option's refusal uses (docs/commands.md: "accepted: a
    number from ... to ..."); it read "must be a finite number >= 0", "must be an integer >= 1"."""
    from tests.helpers.cli import one_line_exit_2

    path = tmp_path / "odd.toml"
    path.write_text(text)
    err = one_line_exit_2(["comm", "--network", str(path)], capsys)
    assert err.strip() == f"error: bad --network {path}: '{key}' = {typed} is out of range; accepted: {accepted}", err


@pytest.mark.parametrize("suffix", [".toml", ".json"])
@pytest.mark.parametrize(("text", "key", "typed", "accepted"), RANGES)
def test_an_integer_past_floats_range_is_out_of_range_at_every_key(tmp_path, capsys, suffix, text, key, typed,
                                                                   accepted):
    """TOML and JSON read 10**400 as an int, which math.isfinite could not take: every command
    crashed with OverflowError (exit 1). Each key refuses it in its range's words, its length told
    rather than its 401 digits echoed."""
    import tomllib

    from tests.helpers.cli import one_line_exit_2

    assert text.count(f"= {typed}") == 1, text
    text = text.replace(f"= {typed}", f"= {10**400}")
    path = tmp_path / f"odd{suffix}"
    path.write_text(text if suffix == ".toml" else json.dumps(tomllib.loads(text)))
    err = one_line_exit_2(["comm", "--network", str(path)], capsys)
    assert err.strip() == (f"error: bad --network {path}: '{key}' = an integer of 401 digits is out of range; "
                           f"accepted: {accepted}"), err


@pytest.mark.parametrize("suffix", [".toml", ".json"])
def test_a_number_past_pythons_digit_limit_is_out_of_range(tmp_path, capsys, suffix):
    """Past 4,300 digits the TOML and JSON readers raise a bare ValueError, not a decode error."""
    from tests.helpers.cli import one_line_exit_2

    path = tmp_path / f"odd{suffix}"
    big = "1" + "0" * 5000  # text: Python will not write such an int itself
    path.write_text(f"[inter]\nalpha_us = {big}\nbandwidth_GBps = 1\n" if suffix == ".toml"
                    else f'{{"inter": {{"alpha_us": {big}, "bandwidth_GBps": 1}}}}')
    err = one_line_exit_2(["estimate", "-m", "gpt2-124m", "--network", str(path)], capsys)
    assert err.startswith(f"error: bad --network {path}: a number of more than 4,300 digits is out of range; "
                          "accepted: "), err


@pytest.mark.parametrize(("text", "key", "typed"), [
    ("workers_per_node = 2.5\n" + LINK, "workers_per_node", "2.5"), ("ps_servers = 1.5\n" + LINK, "ps_servers", "1.5"),
])
def test_a_count_with_a_fraction_is_not_a_whole_number(tmp_path, capsys, text, key, typed):
    from tests.helpers.cli import one_line_exit_2

    path = tmp_path / "odd.toml"
    path.write_text(text)
    err = one_line_exit_2(["comm", "--network", str(path)], capsys)
    assert err.strip() == f"error: bad --network {path}: '{key}' = {typed} is not a whole number; accepted: {COUNT}"


def test_a_whole_count_written_as_a_float_is_read_as_the_count(tmp_path):
    path = tmp_path / "float.json"  # JSON writers may give 8.0
    path.write_text(json.dumps({"workers_per_node": 2.0, "ps_servers": 3.0, "inter": {"alpha_us": 1, "bandwidth_GBps": 1},
                                "intra": {"alpha_us": 1, "bandwidth_GBps": 10}}))
    net = load_network(str(path))
    assert (net.workers_per_node, net.ps_servers) == (2, 3) and isinstance(net.workers_per_node, int)


@pytest.mark.parametrize("gbps", [1e-6, 1e6])
def test_a_link_rate_at_either_end_of_its_range_prices_finite_steps(tmp_path, gbps):
    """The ends are accepted, and a ring all-reduce's bandwidth term at 8 workers is 2 (N - 1) / N of
    a bucket's bytes over the rate (closed form): at 1 kB/s the comm is over a day's seconds."""
    from lionsim.estimate import EstimateConfig, estimate

    path = tmp_path / "end.toml"
    path.write_text(f'traits = "ideal"\n[inter]\nalpha_us = 0\nbandwidth_GBps = {gbps!r}\nreduce_GBps = {gbps!r}\n')
    assert load_network(str(path)).inter.bandwidth_Bps == pytest.approx(gbps * 1e9)
    (row,) = estimate(EstimateConfig(model="gpt2-124m", workers=8, network=str(path),
                                     strategies=["adamw@fp32-allreduce"], overlap="none")).to_dict("records")
    assert all(math.isfinite(row[c]) for c in ("comm_s", "step_s", "speedup")), row
    assert row["comm_s"] >= 1.75 * 4 * row["params"] / (gbps * 1e9)


def test_link_from_units_refuses_a_rate_past_its_range():
    for rate in (1e300, 1e-308, math.inf):
        with pytest.raises(LionsimError) as refused:
            Link.from_units(alpha_us=1.0, bandwidth_GBps=rate)
        assert str(refused.value).startswith(f"bandwidth_GBps = {rate!r} {IN_RANGE}")
    assert Link.from_units(alpha_us=1.0, bandwidth_GBps=1e6).bandwidth_Bps == 1e15


def test_bad_json_profiles(tmp_path):
    path = tmp_path / "bad.json"
    path.write_text('{"inter": {"alpha_us": 1, "bandwidth_GBps": NaN}}')  # Python's json accepts NaN
    with pytest.raises(LionsimError, match=r"bad.json: 'inter.bandwidth_GBps' = nan"):
        load_network(str(path))
    path.write_text('{"inter": ')
    with pytest.raises(LionsimError, match=r"bad.json: not valid JSON: Expecting value \(at line 1, column 11\); accepted: "):
        load_network(str(path))
    path.write_text("[1, 2]")
    with pytest.raises(LionsimError, match="top level"):
        load_network(str(path))


def test_a_typo_of_a_profile_file_beside_it_is_suggested(tmp_path, monkeypatch):
    """`--network mycluster.tom` named the presets and no file, though mycluster.toml lay beside it."""
    import difflib

    (tmp_path / "mycluster.toml").write_text('[inter]\nalpha_us = 25.0\nbandwidth_GBps = 2.9\n')
    (tmp_path / "notes.txt").write_text("not a profile")
    for typed in ("mycluster.tom", "mycluster.tomll", "mycluster2.toml"):  # a bad suffix, then a missing file
        with pytest.raises(LionsimError, match=rf"did you mean '{tmp_path}/mycluster.toml'\?$"):
            load_network(str(tmp_path / typed))
    monkeypatch.chdir(tmp_path)  # a bare file name: the suggestion as the user would type it
    with pytest.raises(LionsimError, match=r"^unknown network 'mycluster\.tom'.*did you mean 'mycluster\.toml'\?$"):
        load_network("mycluster.tom")
    # no close name (the registry's rule, difflib at 0.6), and only profiles are offered
    assert not difflib.get_close_matches("zzz.toml", ["mycluster.toml"], cutoff=0.6)
    for typed in ("zzz.toml", "notes.tx"):
        with pytest.raises(LionsimError) as refused:
            load_network(typed)
        assert "did you mean" not in str(refused.value)


def test_only_a_profile_is_suggested_for_a_missing_one(tmp_path):
    """A --config file (or a run.json) beside a missing profile, with as near a name as any, was
    offered as the network: only a file that reads as a profile (an [inter] table) is offered."""
    (tmp_path / "cluster.toml").write_text('network = "clustr.toml"\n')  # the config that named it
    (tmp_path / "clusterr.json").write_text('{"command": "bench", "config": {}}')
    (tmp_path / "broken.toml").write_text("[inter\n")
    for typed in ("clustr.toml", "broken2.toml"):
        with pytest.raises(LionsimError) as refused:
            load_network(str(tmp_path / typed))
        assert "did you mean" not in str(refused.value)
    (tmp_path / "clusters.toml").write_text('[inter]\nalpha_us = 25.0\nbandwidth_GBps = 2.9\n')
    with pytest.raises(LionsimError, match=rf"did you mean '{tmp_path}/clusters.toml'\?$"):
        load_network(str(tmp_path / "clustr.toml"))


def test_unknown_names_and_missing_files(tmp_path):
    with pytest.raises(LionsimError, match=r"unknown network '10gbee'; choose a preset \(100mbe, 1gbe, 10gbe.*did you mean '10gbe'\?"):
        load_network("10gbee")
    assert load_network("10GbE").name == "10gbe"  # presets in any case
    # named as the GPU-node presets are, over a flat preset's link: the option that makes such nodes
    with pytest.raises(LionsimError, match=r"unknown network 'h100x8-25gbe'.*; did you mean --network 25gbe "
                                           r"--gpus-per-node 8 \(estimate, comm; "):
        load_network("h100x8-25gbe")
    with pytest.raises(LionsimError, match=r"did you mean 'h100x8-10gbe'\?$"):  # a preset's own name, mistyped
        load_network("h100x8-10gbee")
    with pytest.raises(LionsimError, match="network profile not found"):
        load_network(str(tmp_path / "none.toml"))


def test_a_multi_worker_node_without_intra_says_what_to_add(tmp_path, capsys):
    path = tmp_path / "p.toml"
    path.write_text("workers_per_node = 4\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n")
    with pytest.raises(LionsimError, match=r"needs an \[intra\] link table .*optional only in a flat profile"):
        load_network(str(path))
    flat = tmp_path / "flat.toml"
    flat.write_text("[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n")
    assert load_network(str(flat)).intra is None  # optional when flat
    docs = " ".join((REPO / "docs" / "backends.md").read_text().split())
    assert "`[intra]`, the link between workers of one node, is optional only in a flat profile" in docs


def test_a_profile_states_its_device_and_the_gpu_presets_theirs(tmp_path):
    """`device` names the GPU every worker is (estimate's --device default), in its listed spelling;
    the presets of GPU nodes state theirs, the links and flat networks none."""
    from lionsim.compute import DEVICES

    path = tmp_path / "p.toml"
    path.write_text('device = "A100"\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n')
    net = load_network(str(path))
    assert net.device == "a100" and DEVICES.get(net.device).name == "a100-40gb"
    path.write_text('device = "a1000"\n[inter]\nalpha_us = 1\nbandwidth_GBps = 1\n')
    assert load_network(str(path)).device == "a1000"  # its name is checked where it is read: estimate
    path.with_suffix(".json").write_text(json.dumps(net.to_dict()))
    assert load_network(str(path.with_suffix(".json"))).device == "a100"
    stated = {name: NETWORKS.get(name).device for name in NETWORKS.names() if NETWORKS.get(name).device}
    assert stated == {"dgx-h100": "h100", "dgx-a100": "a100-40gb", "a100x8-4hdr": "a100-40gb",
                      "h100x8-10gbe": "h100", "h100x8-100gbe": "h100"}


def test_every_example_cluster_whose_description_names_a_lionsim_gpu_states_it():
    """A profile in examples/clusters whose description names a device lionsim has (V100, A100,
    B200 ...) states it, the same part; one naming none (a T4, two datacenters) states none."""
    import re

    from lionsim.compute import DEVICES

    families = {name.split("-")[0] for name in DEVICES.names()}  # a100-40gb -> a100
    for path in sorted((REPO / "examples" / "clusters").glob("*.toml")):
        net = load_network(str(path))
        named = {f for f in families if re.search(rf"\b{f}\b", net.description, re.IGNORECASE)}
        assert len(named) <= 1, path.name
        if named:
            assert DEVICES.get(net.device).name.split("-")[0] == named.pop(), path.name
        else:
            assert net.device == "", path.name


def _placed(workers: int, per_node: int) -> int | None:
    """Brute force: the nodes `workers` occupy placed on nodes of `per_node`, every node full but a
    lone one; None where no such placement exists."""
    for nodes in range(1, workers + 1):
        if nodes == 1 and workers <= per_node or nodes * per_node == workers:
            return nodes
    return None


def test_every_reader_of_the_whole_nodes_rule_says_what_a_brute_force_placement_does():
    """Network.nodes, the simulator's node layout, estimate's --gpus-per-node check, its --sweep
    rounding and its crossover counts all read lionsim.whole_nodes, whose rule is checked here
    against placing the workers node by node."""
    from lionsim.backends.nodes import node_layout
    from lionsim.estimate.plain import check_gpus_per_node, nearest_count
    from lionsim.estimate.sweep import losing_neighbour, worker_counts
    from lionsim.whole_nodes import fills_nodes, node_count

    inter = Link(alpha_s=0.0, bandwidth_Bps=1e9)
    for per_node in (1, 2, 3, 4, 8):
        net = Network(name="n", workers_per_node=per_node, inter=inter, intra=inter if per_node > 1 else None)
        valid = [w for w in range(1, 41) if _placed(w, per_node)]
        assert worker_counts(0, 40, per_node) == valid
        for workers in range(1, 41):
            nodes = _placed(workers, per_node)
            assert fills_nodes(workers, per_node) == (nodes is not None)
            if nodes is None:
                for refuse in (lambda: net.nodes(workers), lambda: node_layout(workers, per_node),
                               lambda: check_gpus_per_node(workers, per_node)):
                    with pytest.raises(LionsimError, match="do(es)? not fill whole nodes"):
                        refuse()
                continue
            assert node_count(workers, per_node) == net.nodes(workers) == node_layout(workers, per_node)[1] == nodes
            check_gpus_per_node(workers, per_node)
        for w in valid[1:-1]:  # the crossover search's losing side: the valid count just below / above
            assert losing_neighbour(w, True, per_node) == max(v for v in valid if v < w), (w, per_node)
            assert losing_neighbour(w, False, per_node) == min(v for v in valid if v > w), (w, per_node)
        for target in (0.4, 1.2, 2.6, 5.3, 9.7, 12.2, 17.9, 30.1):  # no ties: one nearest count
            assert nearest_count(target, per_node) == min(valid, key=lambda w: abs(w - target)), (target, per_node)


def test_a_profile_name_with_quotes_is_suggested_whole(tmp_path, monkeypatch):
    """nearby_profile once sliced did_you_mean's message back apart, which quotes with !r: a name
    with an apostrophe and a double quote came back with its escape (bob\\'s) in the path."""
    import ast

    from lionsim.registry import closest, did_you_mean

    name = 'bob\'s "big" cluster.toml'
    (tmp_path / name).write_text('[inter]\nalpha_us = 25.0\nbandwidth_GBps = 2.9\n')
    assert closest("BOB'S \"BIG\" CLUSTER.TOM", [name, "other.toml"]) == name  # the rule: ignoring case
    assert closest("zzz", [name]) is None and did_you_mean("zzz", [name]) == ""
    for typed, folder in ((str(tmp_path / name[:-1]), f"{tmp_path}/"), (name[:-1], "")):
        if not folder:
            monkeypatch.chdir(tmp_path)
        with pytest.raises(LionsimError) as refused:
            load_network(typed)
        said = str(refused.value).rsplit("did you mean ", 1)[1].removesuffix("?")
        assert ast.literal_eval(said) == folder + name


def test_a_whole_nodes_refusal_names_where_the_count_came_from():
    """Network.nodes said "bad --workers N" wherever it was called: a published sweep's count
    (lionsim.network.fabric_fit) is no --workers, nor anything the user typed: lionsim's own record
    is wrong, which its line says. Each caller names its own; --workers by default."""
    import dataclasses

    from lionsim.network.fabric_fit import _sweep_pricer
    from lionsim.published.sweeps import SWEEPS

    net = NETWORKS.get("dgx-h100")
    with pytest.raises(LionsimError, match=r"^bad --workers 12: 12 workers do not fill whole nodes of dgx-h100"):
        net.nodes(12)
    sweep = dataclasses.replace(next(iter(SWEEPS)), network="dgx-h100", workers=12)
    with pytest.raises(LionsimError) as refused:
        _sweep_pricer(sweep)
    assert str(refused.value) == (f"internal error: published sweep {sweep.key}'s record (lionsim.published.sweeps) "
                                  "has 12 workers, which do not fill whole nodes of its network dgx-h100 (8 a node)")
