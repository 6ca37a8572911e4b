"""int32 field words against Python integers: each word is sum(field_i << i p), and a sum of words
whose fields cannot carry unpacks to the fields' sums."""

import pytest
import torch

from lionsim.transports.int32_fields import pack_words, unpack_words, word_shifts


@pytest.mark.parametrize("bits", [1, 3, 4, 7, 15, 31])
def test_words_are_the_fields_shifted_into_place(bits):
    k = 31 // bits
    gen = torch.Generator().manual_seed(bits)
    fields = torch.randint(0, 2**bits, (3, 5 * k), generator=gen, dtype=torch.int64).to(torch.int32)
    shifts = word_shifts(bits, fields.device)
    words = pack_words(fields, shifts)
    expected = [[sum(int(f) << (i * bits) for i, f in enumerate(row[j * k : (j + 1) * k])) for j in range(5)]
                for row in fields.tolist()]
    assert words.tolist() == expected
    assert all(0 <= w < 2**31 for row in expected for w in row)  # the sign bit stays free
    assert torch.equal(unpack_words(words, shifts, bits), fields)


def test_a_sum_of_words_unpacks_to_the_sums_of_the_fields():
    bits, workers = 4, 15  # 15 workers' 0/1 fields sum to at most 15 < 2^4
    k = 31 // bits
    fields = torch.randint(0, 2, (workers, 3 * k), generator=torch.Generator().manual_seed(0)).to(torch.int32)
    shifts = word_shifts(bits, fields.device)
    total = pack_words(fields, shifts).sum(0, keepdim=True, dtype=torch.int32)
    assert torch.equal(unpack_words(total, shifts, bits), fields.sum(0, keepdim=True, dtype=torch.int32))
