"""`estimate --replica-gpus G`: a worker that is a replica sharded over G devices computes one
device's share (against the same estimate of one device holding P / G parameters and T / G
tokens), exchanges the whole model with the other workers, and a bad G is one line."""

from __future__ import annotations

import pytest

from lionsim.cli.app import main
from lionsim.errors import LionsimError
from lionsim.estimate import EstimateConfig, estimate

P, T, G = 8 * 10**8, 64 * 1024, 16
RUNS = ["adamw@bf16-allreduce", "diloco@bf16-allreduce", "dlion-mavo@int8-allreduce"]


def _row(**kw):
    cfg = EstimateConfig(workers=4, network="10gbe", strategies=RUNS, **kw)
    return estimate(cfg).set_index("strategy")


def test_a_replica_computes_one_device_s_share_and_exchanges_the_whole_model():
    # one of its G devices runs the whole model on T / G tokens (FSDP gathers every layer), and its
    # codec and optimizer passes on the P / G parameters it holds
    replica = _row(params=P, tokens_per_worker=T, replica_gpus=G)
    tokens = _row(params=P, tokens_per_worker=T // G)
    shard = _row(params=P // G, tokens_per_worker=T)
    whole = _row(params=P, tokens_per_worker=T)
    for name in ("compute_s", "forward_s", "backward_s"):
        assert list(replica[name]) == pytest.approx(list(tokens[name]), rel=1e-9), name
    for name in ("encode_s", "decode_s", "update_s"):
        assert list(replica[name]) == pytest.approx(list(shard[name]), rel=1e-9), name
    for name in ("comm_s", "wire_bytes", "inter_bytes"):  # the network carries the replica's whole model
        assert list(replica[name]) == pytest.approx(list(whole[name]), rel=1e-9), name
    assert (replica["replica_gpus"] == G).all() and (whole["replica_gpus"] == 1).all()
    assert (replica["compute_s"] < whole["compute_s"] / (G / 2)).all()


@pytest.mark.parametrize("value", [0, -1, 1.5, 10**7])
def test_a_bad_replica_size_is_refused(value):
    with pytest.raises(LionsimError, match="bad --replica-gpus"):
        _row(params=P, tokens_per_worker=T, replica_gpus=value)


def test_on_the_command_line_it_is_one_line_and_exit_2(capsys):
    with pytest.raises(SystemExit) as exit_info:
        main(["estimate", "--params", "1e8", "--tokens-per-worker", "100", "--replica-gpus", "0"])
    err = capsys.readouterr().err.strip()
    assert exit_info.value.code == 2 and len(err.splitlines()) == 1 and "bad --replica-gpus 0" in err
