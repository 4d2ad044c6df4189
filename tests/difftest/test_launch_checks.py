"""Launch-time checks of what the compiler relies on but cannot prove: an `le(N)` dimension
longer than N and slices whose lengths differ at run time are errors, never truncation."""
import numpy as np
import pytest
import torch

from test_samples import gen_dir, generated_module  # noqa: F401 (gen_dir is a fixture)


def test_le_dimension_longer_than_declared(gen_dir):
    gen = generated_module("softmax_tensor", 128, gen_dir)
    a = torch.randn(3, 1030)
    b = torch.empty_like(a)
    with pytest.raises(ValueError, match=r"softmax_tensor\.py:\d+: a dimension of length 1030 exceeds its le\(1024\)"):
        gen.softmax_short_rows(a, b, 3, 1030)
    # Within the bound it runs.
    a = torch.randn(3, 1000)
    b = torch.empty_like(a)
    gen.softmax_short_rows(a, b, 3, 1000)
    ref = np.exp(a.numpy() - a.numpy().max(axis=1, keepdims=True))
    np.testing.assert_allclose(b.numpy(), ref / ref.sum(axis=1, keepdims=True), rtol=1e-4, atol=1e-6)


def test_open_slices_of_different_arrays_must_match(gen_dir):
    gen = generated_module("heat_3d", 128, gen_dir)
    with pytest.raises(ValueError, match="do not broadcast"):
        gen.laplace_open_bounds(torch.randn(9, 11), torch.randn(9, 12))
