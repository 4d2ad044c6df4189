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


def test_persistent_work_hint_counts_every_virtual_program(gen_dir, monkeypatch):
    """The persistent launcher's `work` (the widest region's program count, which caps the grid
    on the GPU) is the product of the grid dimensions' trip counts. It once lost the parentheses
    around `int(M - 1) - int(1)`, which made the product 0 and ran heat_3d on one program, and a
    ceiling division `(n + w - 1) // w` needs its own parentheses as a factor."""
    gen = generated_module("time_loops", 16, gen_dir)
    seen = []
    real = gen._appyc_persistent

    def recording(kernel, phases, work, args, mvl, num_warps, one_launch):
        seen.append((work, mvl))
        return real(kernel, phases, work, args, mvl, num_warps, one_launch)

    monkeypatch.setattr(gen, "_appyc_persistent", recording)
    for M, N in ((7, 37), (5, 300)):
        a, b = torch.randn(M, N, dtype=torch.float64), torch.zeros(M, N, dtype=torch.float64)
        seen.clear()
        gen.smooth_2d(a, b, M, N, 2)
        ((work, mvl),) = seen
        assert work == (M - 2) * -(-(N - 2) // mvl), (M, N, mvl)
