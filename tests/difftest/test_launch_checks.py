"""Launch-time checks of what the compiler relies on but cannot prove: an `le(N)` dimension
longer than N and slices whose lengths differ at run time are errors, never truncation."""
import numpy as np
import pytest
import torch

from test_samples import gen_dir, generated_module, reference_module  # noqa: F401 (gen_dir is a fixture)


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


def test_a_bare_reduction_s_open_slices_of_different_arrays_must_match(gen_dir):
    """`diff = np.max(np.abs(B[1:-1] - A[1:-1]))` runs as a reduction loop inside the persistent
    kernel; NumPy would raise on arrays of different lengths, and so does the launch."""
    gen = generated_module("natural_loops", 128, gen_dir)
    a = torch.randn(40, dtype=torch.float64)
    with pytest.raises(ValueError, match=r"natural_loops\.py:\d+: slices of lengths (39 and 38|38 and 39) do not broadcast"):
        gen.relax_open_slices(a, torch.randn(41, dtype=torch.float64), 0.1, 5)
    assert gen.relax_open_slices(a, a.clone(), 0.1, 5) >= 1


def test_persistent_work_hint_counts_every_virtual_program(gen_dir, monkeypatch):
    """The persistent launcher's `work` (the widest region's program count, which caps the grid
    on the GPU) is the product of the grid dimensions' trip counts. It once lost the parentheses
    around `int(M - 1) - int(1)`, which made the product 0 and ran heat_3d on one program, and a
    ceiling division `(n + w - 1) // w` needs its own parentheses as a factor. smooth_2d's region
    is a row block: rows of (N - 2) lanes rounded up to a power of two (at most 256) share MVL."""
    gen = generated_module("time_loops", 16, gen_dir)
    # smooth_2d is a float64 stencil loop, which the interpreter runs temporally blocked at every
    # size; this test is about the persistent kernel, so it asks for that one.
    monkeypatch.setenv("APPYC_TEMPORAL_2D", "0")
    seen = []
    real = gen._appyc_persistent

    def recording(kernel, phases, work, args, mvl, num_warps, warps_per_sm, constants=None):
        seen.append((work, mvl))
        return real(kernel, phases, work, args, mvl, num_warps, warps_per_sm, constants)

    monkeypatch.setattr(gen, "_appyc_persistent", recording)
    for M, N in ((7, 37), (5, 300)):
        a, b = torch.randn(M, N, dtype=torch.float64), torch.zeros(M, N, dtype=torch.float64)
        seen.clear()
        gen.smooth_2d(a, b, M, N, 2)
        ((work, mvl),) = seen
        lanes = min(1 << (N - 3).bit_length(), 256)
        rows = max(1, mvl // lanes)
        assert work == -(-(M - 2) // rows) * -(-(N - 2) // (mvl // rows)), (M, N, mvl)


def test_persistent_grid_follows_the_warps_per_sm_of_its_configuration(gen_dir, monkeypatch):
    """The persistent launcher's GPU path, on the CPU with the device stubbed (the sm_90 compile
    check replaces `_appyc_persistent`, so its grid is decided here): a configuration's third item
    caps the programs at that many warps an SM (64: all the SM holds, 32: half), the widest
    region's work caps them too, 0 runs one launch per phase, and the old `True`/`False` flag is
    refused rather than read as a warp count."""
    gen = generated_module("time_loops", 16, gen_dir)
    launches = []
    monkeypatch.setattr(gen, "_APPYC_INTERPRET", False)
    monkeypatch.setattr(gen, "_appyc_resident", lambda *a: 10 * 132)  # 10 programs an SM fit
    monkeypatch.setattr(gen, "_appyc_sm_count", lambda device: 132)
    monkeypatch.setattr(gen, "_appyc_launch", lambda kernel, grid, args, constants, **options:
                        launches.append((grid, args[-3:-1], constants["GRID_SYNC"],
                                         options.get("launch_cooperative_grid", False))))
    a = torch.zeros(4)

    def programs(warps, warps_per_sm, work=None, phases=6):
        launches.clear()
        gen._appyc_persistent("kernel", phases, work, (a,), 128, warps, warps_per_sm)
        return launches

    assert programs(4, 64) == [((1320,), (0, 6), True, True)]  # all resident: 10 an SM
    assert programs(4, 32) == [((8 * 132,), (0, 6), True, True)]  # 32 warps: 8 programs an SM
    assert programs(8, 32) == [((4 * 132,), (0, 6), True, True)]
    assert programs(8, 4) == [((132,), (0, 6), True, True)]  # at least one program an SM
    assert programs(4, 32, work=100) == [((100,), (0, 6), True, True)]
    # One launch per phase, each over its phase only, without grid barriers.
    assert programs(4, 0, work=7, phases=3) == [((7,), (p, p + 1), False, False) for p in range(3)]
    for flag in (True, False):
        with pytest.raises(TypeError, match="warps per SM"):
            programs(4, flag)
    # The kernel's other constexprs (a strip loop's ONE_STRIP switch) reach every launch and the
    # occupancy query, which compiles the same specialisation the launch will use.
    seen = []
    monkeypatch.setattr(gen, "_appyc_launch", lambda kernel, grid, args, constants, **options:
                        seen.append(constants))
    monkeypatch.setattr(gen, "_appyc_resident", lambda *a: seen.append(a[4]) or 1320)
    for warps_per_sm in (32, 0):
        seen.clear()
        gen._appyc_persistent("kernel", 2, None, (a,), 128, 4, warps_per_sm, {"ONE_STRIP": True})
        assert seen and all(c["ONE_STRIP"] is True and c["MVL"] == 128 for c in seen), seen


def recorded_launches(gen, monkeypatch, record):
    """Makes every launch of the generated module `gen` append `record(grid, constants)` to the
    returned list before it launches, with the interpreter's vector length set to 16 lanes."""
    seen = []
    real = gen._appyc_launch

    def recording(kernel, grid, args, constants, **options):
        seen.append(record(grid, constants))
        return real(kernel, grid, args, constants, **options)

    monkeypatch.setattr(gen, "_appyc_launch", recording)
    monkeypatch.setenv("APPYC_MVL", "16")  # the interpreter's vector length (128 otherwise)
    return seen


def test_one_strip_is_switched_on_exactly_when_the_row_fits_one_strip(gen_dir, monkeypatch):
    """The launchers' ONE_STRIP (a strip loop over host bounds that fits one strip runs as
    straight code): on for a row within MVL, off for a longer one and for an empty one, in a
    kernel of its own and in a persistent loop. The difftests check the results either way; this
    checks that the switch is taken at all, which results alone cannot show."""
    gen = generated_module("fp64_axpby", 16, gen_dir)
    seen = recorded_launches(gen, monkeypatch, lambda grid, constants: constants.get("ONE_STRIP"))
    for n, on in ((15, True), (16, True), (17, False), (40, False), (0, False)):
        seen.clear()
        a, x, y = torch.randn(5, n, dtype=torch.float64), torch.randn(n, dtype=torch.float64), torch.randn(5, dtype=torch.float64)
        want = 0.5 * y.numpy() + a.numpy() @ x.numpy()
        gen.gemv_fp64(a, x, y, 5, n, 0.5)
        assert seen == [on], (n, seen)  # a row's reduction strip of N elements against 16 lanes
        assert np.allclose(y.numpy(), want), n

    loops = generated_module("time_loops", 16, gen_dir)
    monkeypatch.setattr(loops, "_appyc_persistent", lambda *a: seen.append(a[7]))
    for n, on in ((16, True), (17, False)):
        seen.clear()
        loops.floyd_warshall(torch.zeros(n, n, dtype=torch.int32), n)
        assert seen == [{"ONE_STRIP": on}], (n, seen)


def test_row_block_takes_as_many_rows_as_share_mvl_lanes(gen_dir, monkeypatch):
    """A row block's launcher (passes::row_block) gives each program MVL // w rows, w the strip's
    extent rounded up to a power of two, and counts blocks of rows on the grid. The difftests
    check results at the sizes they pick; this checks that rows are blocked at all and how
    many, and the results at each block size, which results at one size cannot show."""
    gen = generated_module("heat_3d", 16, gen_dir)
    seen = recorded_launches(gen, monkeypatch, lambda grid, constants: (constants["ROW_BLOCK"], grid))
    L, M = 4, 7
    for n, rows in ((19, 1), (18, 1), (10, 2), (7, 2), (6, 4), (4, 8), (3, 16)):
        seen.clear()
        a = torch.randn(L, M, n, dtype=torch.float64)
        b = torch.zeros_like(a)
        gen.heat_3d(a, b, L, M, n)
        # M - 2 = 5 rows of each plane: the last block is partly past the rows.
        # One grid axis (codegen::triton::virtual_grid): strips of each block's rows, blocks of
        # each plane's rows, planes.
        strips = -(-(n - 2) // (16 // rows))
        assert seen == [(rows, (strips * -(-(M - 2) // rows) * (L - 2),))], (n, seen)
        x = a.numpy()
        ref = np.zeros_like(x)
        ref[1:-1, 1:-1, 1:-1] = (0.125 * (x[2:, 1:-1, 1:-1] - 2.0 * x[1:-1, 1:-1, 1:-1] + x[:-2, 1:-1, 1:-1])
                                 + 0.125 * (x[1:-1, 2:, 1:-1] - 2.0 * x[1:-1, 1:-1, 1:-1] + x[1:-1, :-2, 1:-1])
                                 + 0.125 * (x[1:-1, 1:-1, 2:] - 2.0 * x[1:-1, 1:-1, 1:-1] + x[1:-1, 1:-1, :-2])
                                 + x[1:-1, 1:-1, 1:-1])
        np.testing.assert_allclose(b.numpy(), ref, rtol=1e-12, atol=1e-12)


def test_row_block_of_vectorised_lanes_blocks_the_loop_outside(gen_dir, monkeypatch):
    """The second shape of a row block: a `parallel for` vectorised as lanes inside another
    `parallel for` takes ROW_BLOCK iterations of the outer loop as rows of one tile, its lanes
    the inner extent rounded up to a power of two (at most 256); the grid counts blocks of rows
    times strips of lanes, numbered on one axis. Results at each block size against NumPy."""
    gen = generated_module("nested_parallel_2d", 16, gen_dir)
    seen = recorded_launches(gen, monkeypatch, lambda grid, constants: (constants["ROW_BLOCK"], grid))
    M = 7
    for n, rows in ((20, 1), (16, 1), (9, 1), (5, 2), (3, 4), (1, 16)):
        seen.clear()
        a, b = torch.randn(M, n, dtype=torch.float64), torch.randn(n, M, dtype=torch.float64)
        c = torch.zeros(M, n, dtype=torch.float64)
        gen.add_transpose(a, b, c, M, n, 1.5)
        lanes = 16 // rows
        assert seen == [(rows, (-(-n // lanes) * -(-M // rows),))], (n, seen)  # on one axis
        np.testing.assert_allclose(c.numpy(), 1.5 * a.numpy() + b.numpy().T, rtol=1e-12, atol=1e-12)


def test_float_registers_are_tensors_without_the_harness(gen_dir):
    """Under the interpreter a Python float argument stays a Python float; the difftests' launch
    counter types it (conftest._TypedFloat, to show a GPU's precision), which once hid this: a
    persistent launch whose phases never assign a float register (one phase a launch there)
    stored it with `.to` and raised. Called here as a user would, without the launch counter."""
    gen = generated_module("natural_loops", 16, gen_dir)
    natural_reference = reference_module("natural_loops")
    for n in (37, 1000):
        rng = np.random.default_rng(n)
        arrays = [rng.standard_normal(n) for _ in range(3)]
        want_arrays = [x.copy() for x in arrays]
        want = natural_reference.smooth_then_measure(*want_arrays, n, 0.1, 12)
        got_arrays = [torch.tensor(x) for x in arrays]
        got = gen.smooth_then_measure(*got_arrays, n, 0.1, 12)
        assert got[0] == want[0] and got[0] < 12, (got, want)   # stopped on tol, at the same step
        np.testing.assert_allclose(got[1], want[1], rtol=1e-12)
        for g, w in zip(got_arrays, want_arrays):
            np.testing.assert_allclose(g.numpy(), w, rtol=1e-12, atol=1e-14)



def test_a_folded_update_leaves_a_scalar_to_the_kernel_and_an_array_to_the_host(gen_dir, monkeypatch):
    """`C *= beta` before a region that stores all of C (passes/fold_host_update.rs): a number,
    a 0-d or a one-element tensor reaches the kernel, which scales C as it stores it (the host has
    not touched C when the kernel launches); an array NumPy would broadcast is applied on the host
    and the kernel gets the identity 1.0. The difftests check the results either way; this checks
    that the fold is taken for a scalar, which results alone cannot show."""
    gen = generated_module("host_updates", 16, gen_dir)
    seen = []
    real = gen._appyc_launch

    def recording(kernel, grid, args, constants, **options):
        seen.append((args[0].clone(), args[2]))  # C as the kernel finds it, the operand
        return real(kernel, grid, args, constants, **options)

    monkeypatch.setattr(gen, "_appyc_launch", recording)
    monkeypatch.setenv("APPYC_MVL", "16")
    c0, b = torch.randn(5, 7, dtype=torch.float64), torch.randn(5, 7, dtype=torch.float64)
    scalars = (0.5, torch.tensor(0.5, dtype=torch.float64), torch.full((1, 1), 0.5, dtype=torch.float64))
    arrays = (torch.randn(5, 7, dtype=torch.float64), torch.randn(7, dtype=torch.float64))
    for beta in scalars + arrays:
        seen.clear()
        c = c0.clone()
        gen.scale_then_update(1.5, beta, c, b)
        [(at_launch, operand)] = seen
        if any(beta is a for a in arrays):
            assert operand == 1.0 and torch.equal(at_launch, c0 * beta), beta
        else:
            assert operand == 0.5 and torch.equal(at_launch, c0), beta
        assert torch.allclose(c, c0 * beta + 1.5 * b, rtol=1e-12, atol=1e-12), beta
