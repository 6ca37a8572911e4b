"""pack_signs / unpack_signs against numpy.packbits, and the fast paths against the plain one."""

import numpy as np
import pytest
import torch

import lionsim
from lionsim.packing import (
    pack_bools,
    pack_bools_reference,
    pack_codes,
    packed_size,
    pack_codes_reference,
    unpack_bools,
    unpack_bools_reference,
    unpack_codes,
    unpack_codes_reference,
)


@pytest.mark.parametrize("shape", [(1,), (7,), (8,), (9,), (1001,), (3, 17), (2, 5, 64), (4, 0), (2, 3 * (1 << 20) + 8)])
def test_pack_signs_matches_numpy_packbits(shape):
    x = torch.randn(*shape)
    x.view(-1)[::5] = 0.0  # zeros pack as clear bits: only x > 0 sets a bit
    packed = lionsim.pack_signs(x)
    expected = np.packbits((x > 0).numpy(), axis=-1)
    assert packed.dtype == torch.uint8
    assert packed.shape == expected.shape
    assert np.array_equal(packed.numpy(), expected)


@pytest.mark.parametrize("n", [1, 8, 13, 64, 1000, (1 << 20) + 24])
def test_fast_pack_equals_plain_pack(n):
    bits = torch.rand(3, n) > 0.5
    assert torch.equal(pack_bools(bits), pack_bools_reference(bits))
    assert torch.equal(lionsim.pack_signs(bits.float() - 0.5), pack_bools_reference(bits))


@pytest.mark.parametrize("shape", [(5,), (3, 17), (2, 4, 64)])
def test_unpack_signs_inverts_pack(shape):
    x = torch.randn(*shape)
    n = shape[-1]
    values = lionsim.unpack_signs(lionsim.pack_signs(x), n)
    assert torch.equal(values, torch.where(x > 0, 1.0, -1.0))
    ints = lionsim.unpack_signs(lionsim.pack_signs(x), n, torch.int8)
    assert ints.dtype == torch.int8 and torch.equal(ints.float(), values)
    bits = np.unpackbits(lionsim.pack_signs(x).numpy(), axis=-1)[..., :n]
    assert np.array_equal(unpack_bools(lionsim.pack_signs(x), n).numpy(), bits.astype(bool))


@pytest.mark.parametrize("shape", [(1,), (7,), (9,), (3, 17), (2, 3, 64), (2, 0), (2, (1 << 20) + 13)])
@pytest.mark.parametrize("dtype", [torch.float32, torch.float64, torch.bfloat16, torch.int8, torch.int32])
def test_fast_unpack_equals_plain_unpack(shape, dtype):
    """The CPU paths (numpy.unpackbits, the sign table) against shifting each bit out."""
    packed = torch.randint(0, 256, (*shape[:-1], packed_size(shape[-1])), dtype=torch.uint8)
    n = shape[-1]
    bits = unpack_bools_reference(packed, n)
    assert torch.equal(unpack_bools(packed, n), bits)
    signs = lionsim.unpack_signs(packed, n, dtype)
    assert signs.dtype == dtype and signs.shape == shape and signs.is_contiguous()
    assert torch.equal(signs, bits.to(dtype) * 2 - 1)
    strided = packed[..., ::2]  # a non-contiguous view unpacks the same as its copy
    assert torch.equal(unpack_bools(strided, 2 * strided.shape[-1]), unpack_bools_reference(strided.contiguous(), 2 * strided.shape[-1]))


def test_unpack_rejects_too_few_bytes():
    with pytest.raises(ValueError):
        unpack_bools(torch.zeros(2, dtype=torch.uint8), 17)


@pytest.mark.parametrize("bits", [1, 2, 3, 5, 8, 11])
def test_pack_codes_matches_a_bit_string(bits):
    codes = torch.randint(0, 2**bits, (2, 37))
    packed = pack_codes(codes, bits)
    assert packed.shape == (2, packed_size(37, bits))
    for row in range(2):  # brute force: concatenate each code's binary digits, MSB first
        stream = "".join(format(int(c), f"0{bits}b") for c in codes[row])
        stream += "0" * ((-len(stream)) % 8)
        expected = [int(stream[i : i + 8], 2) for i in range(0, len(stream), 8)]
        assert packed[row].tolist() == expected
    assert torch.equal(unpack_codes(packed, 37, bits), codes)


@pytest.mark.parametrize("shape", [(1,), (5,), (3, 17), (2, 3, 9), (0, 5), (4, 8), (2, (1 << 18) + 3), (300, 1001)])
@pytest.mark.parametrize("bits", [1, 2, 3, 5, 7, 8, 9, 17, 32])
def test_fast_codes_equal_plain_codes(shape, bits):
    """The CPU word-group codec against one bit plane per field bit, both ways."""
    codes = torch.randint(0, 2**bits, shape, dtype=torch.int64)
    packed = pack_codes(codes, bits)
    assert torch.equal(packed, pack_codes_reference(codes, bits))
    assert torch.equal(unpack_codes(packed, shape[-1], bits), codes)
    assert torch.equal(unpack_codes_reference(packed, shape[-1], bits), codes)


def test_reference_paths_run_the_torch_codecs_a_device_runs():
    """A modelled device's kernels are counted inside reference_paths: there the codecs are torch
    ops (the numpy fast paths launch nothing torch can count), with the same results."""
    from lionsim.packing import reference_paths
    from lionsim.training.counting import KernelCounter

    x = torch.randn(3, 1001)
    packed = lionsim.pack_signs(x)
    with KernelCounter() as fast:
        fast_signs = lionsim.unpack_signs(packed, 1001)
    with reference_paths(), KernelCounter() as plain:
        plain_signs = lionsim.unpack_signs(packed, 1001)
        plain_packed = lionsim.pack_signs(x)
    assert torch.equal(fast_signs, plain_signs) and torch.equal(plain_packed, packed)
    assert plain.kernels["all"] > fast.kernels["all"]
