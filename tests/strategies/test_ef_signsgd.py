"""EF-signSGD's sign(0) = 0: a coordinate without gradient is left where it is."""

import torch

from tests.helpers.spared import INITIAL, train


def test_ef_signsgd_leaves_a_coordinate_without_gradient_put():
    """sign(0) = 0: rows no batch uses send nothing and keep no error (with sign(0) = -1 they swung)."""
    got = train("ef-signsgd", "allgather-1bit", 3, 8, lr=0.1, weight_decay=0.0)
    assert torch.equal(got["emb.weight"][6:], INITIAL["emb.weight"][6:])
    assert not torch.allclose(got["emb.weight"][:6], INITIAL["emb.weight"][:6])
