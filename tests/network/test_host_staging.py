"""A host-staged library (lionsim.network.traits.Staging) and the mpi library: each call pays the
copies of its send buffer to the host and of its receive buffer back, against hand counts of
the buffers per op; the copies add to what the same library without them prices; a profile's
[traits.staging] reads back what it wrote; bad values are one line."""

from __future__ import annotations

import dataclasses
import math

import pytest

from lionsim.errors import LionsimError
from lionsim.network import CollectiveCall, Link, Network, price
from lionsim.network.libraries import MPI, TRAITS
from lionsim.network.traits import IDEAL, Staging, Traits, host_buffers
from lionsim.network.traits_file import traits_from_value

N = 8
MB = 1_000_000

# op -> (send, receive) bytes of one rank in a call of n bytes among N ranks (calls.py sizes)
BUFFERS = {
    "all_reduce": (MB, MB),
    "all_gather": (MB / N, MB),  # n is the whole output: my part goes out, all of it comes back
    "reduce_scatter": (MB, MB / N),
    "all_to_all": (MB, MB),
    "broadcast": (MB, MB),
    "ps_push": (MB, 0.0),
    "ps_pull": (0.0, MB),
}


@pytest.mark.parametrize("op", sorted(BUFFERS))
def test_the_buffers_a_call_copies_by_hand(op):
    assert host_buffers(op, MB, N) == pytest.approx(BUFFERS[op])


@pytest.mark.parametrize("op", sorted(BUFFERS))
def test_staging_is_copies_plus_bytes_over_the_rate(op):
    staging = Staging(GBps=10.0, copy_s=20e-6)
    send, receive = BUFFERS[op]
    copies = (send > 0) + (receive > 0)
    assert staging.seconds(op, MB, N) == pytest.approx(copies * 20e-6 + (send + receive) / 10e9)


def _flat(traits: Traits) -> Network:
    return Network(name="flat-10g", inter=Link(alpha_s=25e-6, bandwidth_Bps=1.17e9), traits=traits)


@pytest.mark.parametrize("op,nbytes", [("all_reduce", 4 * MB), ("all_gather", 8 * 4096), ("all_to_all", 2 * MB)])
def test_a_staged_call_costs_its_copies_more_than_the_same_library_without_them(op, nbytes):
    staged = _flat(MPI)
    plain = _flat(dataclasses.replace(MPI, staging=None))
    call = CollectiveCall(op, nbytes)
    with_copies, without = price(call, N, staged), price(call, N, plain)
    assert with_copies.staging_s == pytest.approx(MPI.staging.seconds(op, nbytes, N))
    assert with_copies.time_s == pytest.approx(without.time_s + with_copies.staging_s)
    assert without.staging_s == 0.0


def test_a_scoped_call_stages_its_own_groups_buffers():
    """An inter call of a two-level network runs among the M nodes: its all-gather's send buffer
    is 1/M of the output, not 1/N."""
    net = Network(name="two-level", inter=Link(alpha_s=25e-6, bandwidth_Bps=1.17e9),
                  intra=Link(alpha_s=1e-6, bandwidth_Bps=100e9), workers_per_node=4, traits=MPI)
    cost = price(CollectiveCall("all_gather", MB, scope="inter"), 16, net)
    assert cost.staging_s == pytest.approx(MPI.staging.seconds("all_gather", MB, 4))


def test_the_mpi_library_is_host_staged_and_capped_at_one_core():
    assert TRAITS.get("mpi") is MPI
    assert MPI.staging is not None and MPI.staging.GBps == pytest.approx(15.75 * 0.8)
    assert MPI.host_GBps == pytest.approx(1.07)
    assert not MPI.ideal and IDEAL.ideal  # staging alone makes a library non-ideal
    assert dataclasses.replace(IDEAL, staging=Staging(GBps=1.0)).ideal is False


def test_a_host_cap_binds_a_fast_link():
    """On a 25 GbE link the mpi library moves one core's 1.07 GB/s, as on 10 GbE below it."""
    fast = Network(name="25g", inter=Link(alpha_s=25e-6, bandwidth_Bps=2.9e9), traits=MPI)
    slow = Network(name="10g", inter=Link(alpha_s=25e-6, bandwidth_Bps=1.17e9), traits=MPI)
    call = CollectiveCall("all_reduce", 100 * MB)
    ring = 2 * (N - 1) / N * 100 * MB
    assert price(call, N, fast).time_s == pytest.approx(price(call, N, slow).time_s, rel=0.02)
    assert price(call, N, fast).time_s > ring / 1.07e9


def test_a_profiles_staging_table_reads_back():
    table = {"name": "mine", "staging": {"GBps": 6.0, "copy_us": 15.0}}
    traits = traits_from_value(table, source="p.toml", default_name="p")
    assert traits.staging == Staging(GBps=6.0, copy_s=15e-6)
    again = traits_from_value(traits.to_dict(), source="p.toml", default_name="p")
    assert again.staging == traits.staging
    assert "staging" not in IDEAL.to_dict()


@pytest.mark.parametrize("staging,message", [
    ({"GBps": 0}, "traits.staging.GBps"),
    ({"GBps": 5, "copy_us": -1}, "traits.staging.copy_us"),
    ({"GBps": 5, "latency": 3}, "latency"),
    ({}, "traits.staging.GBps"),
])
def test_a_bad_staging_table_is_one_line(staging, message):
    with pytest.raises(LionsimError) as e:
        traits_from_value({"staging": staging}, source="p.toml", default_name="p")
    assert message in str(e.value) and "\n" not in str(e.value)


def test_staging_refuses_a_rate_that_is_no_number():
    with pytest.raises(LionsimError):
        Staging(GBps=math.nan)
