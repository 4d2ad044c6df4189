"""Differential tests: every sample, compiled by appyc and run under the Triton interpreter,
must do exactly what the NumPy source does.

For each case: compile the sample (once per session), import the generated module with
APPYC_MVL set, run the NumPy function on copies of the inputs and the compiled function on torch
tensors over other copies (views built the same way on both sides), then compare every array
argument (whole base arrays for views) and the return value. At least one kernel must launch per
call of a function that has pragmas.

Only the NumPy reference sees the `appy` shim (appy.py beside this file): the generated modules
are imported and called `without_appy()`, as on a machine without APPy, so an output that
imports appy fails here.
"""
import ast
import contextlib
import importlib.abc
import importlib.util
import inspect
import os
import subprocess
import sys
import zlib
from pathlib import Path

import numpy as np
import pytest

from cases import CASES, FP64_STRICT_TOL, Case, View, default_tol

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "samples"


def appyc_bin() -> Path:
    p = Path(os.environ.get("APPYC_BIN", "target/release/appyc"))
    return p if p.is_absolute() else REPO / p


DEVICE = os.environ.get("APPYC_TEST_DEVICE", "cpu")  # see conftest.py
SAMPLE_FILES = sorted(SAMPLES.glob("*.py"))
SAMPLE_NAMES = [p.stem for p in SAMPLE_FILES]


# ------------------------------------------------------------------------------------ helpers

def load_module(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


SHIM_DIR = Path(__file__).resolve().parent  # holds the `appy` shim of the reference run


class _NoAppy(importlib.abc.MetaPathFinder):
    """Finds no `appy` (nor `appy.*`) anywhere, as on a machine where APPy is not installed."""

    def find_spec(self, name, path=None, target=None):
        if name == "appy" or name.startswith("appy."):
            raise ModuleNotFoundError(f"No module named {name!r} (appyc's output must not "
                                      "import appy)", name=name)
        return None


def _is_appy(module_name: str) -> bool:
    return module_name == "appy" or module_name.startswith("appy.")


@contextlib.contextmanager
def without_appy():
    """The environment of generated code: no `appy` in sys.modules, the shim's directory off
    sys.path, and a finder first on sys.meta_path that finds no `appy` (so neither an installed
    APPy nor any other copy can stand in). Everything is restored afterwards, for the reference
    run."""
    saved_modules = {n: m for n, m in sys.modules.items() if _is_appy(n)}
    for n in saved_modules:
        del sys.modules[n]
    saved_path = sys.path[:]
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != SHIM_DIR]
    blocker = _NoAppy()
    sys.meta_path.insert(0, blocker)
    try:
        yield
    finally:
        sys.meta_path.remove(blocker)
        sys.path[:] = saved_path
        for n in [n for n in sys.modules if _is_appy(n)]:
            del sys.modules[n]
        sys.modules.update(saved_modules)


def load_generated(path: Path, name: str):
    """Imports a module appyc generated, `without_appy()`."""
    with without_appy():
        return load_module(path, name)


def compile_source(text: str, out_dir: Path, stem: str):
    """`text` (a NumPy source drawn by a test) written to out_dir/stem.py and compiled by appyc:
    (its NumPy module, the generated module imported `without_appy()`, the generated text)."""
    source = out_dir / f"{stem}.py"
    source.write_text(text)
    gen = out_dir / f"{stem}_gen.py"
    proc = subprocess.run([str(appyc_bin()), str(source), "-o", str(gen)], capture_output=True, text=True,
                          timeout=120)
    assert proc.returncode == 0, proc.stderr[-4000:]
    return (load_module(source, f"appyc_ref_{stem}"), load_generated(gen, f"appyc_gen_{stem}"),
            gen.read_text())


_ref_modules = {}


def reference_module(sample: str):
    if sample not in _ref_modules:
        _ref_modules[sample] = load_module(SAMPLES / f"{sample}.py", f"appyc_ref_{sample}")
    return _ref_modules[sample]


_compiled = {}


def compile_sample(sample: str, out_dir: Path) -> Path:
    """Run appyc on samples/<sample>.py once per session; fail the test with its stderr."""
    if sample in _compiled:
        ok, payload = _compiled[sample]
        if not ok:
            pytest.fail(payload, pytrace=False)
        return payload
    exe = appyc_bin()
    if not exe.exists():
        pytest.fail(f"appyc binary not found at {exe} (build it, or set APPYC_BIN)", pytrace=False)
    out = out_dir / f"{sample}_gen.py"
    proc = subprocess.run([str(exe), str(SAMPLES / f"{sample}.py"), "-o", str(out)],
                          capture_output=True, text=True, timeout=120)
    if proc.returncode != 0 or not out.exists():
        msg = (f"appyc failed on samples/{sample}.py (exit {proc.returncode})\n"
               f"stdout:\n{proc.stdout}\nstderr:\n{proc.stderr}")
        _compiled[sample] = (False, msg)
        pytest.fail(msg, pytrace=False)
    _compiled[sample] = (True, out)
    return out


@pytest.fixture(scope="session")
def gen_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("appyc_out")


_gen_modules = {}


def generated_module(sample: str, mvl: int, gen_dir: Path):
    """Import the compiled sample with APPYC_MVL=mvl (set for the import and the calls)."""
    path = compile_sample(sample, gen_dir)
    key = (sample, mvl)
    if key not in _gen_modules:
        _gen_modules[key] = load_generated(path, f"appyc_gen_{sample}_mvl{mvl}")
    return _gen_modules[key]


def pragma_functions(path: Path):
    """Names of the top-level functions of a sample whose body has a `#pragma` line."""
    src = path.read_text()
    lines = src.splitlines()
    names = []
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef):
            body = lines[node.lineno - 1:node.end_lineno]
            if any(line.strip().startswith("#pragma") for line in body):
                names.append(node.name)
    return names


def materialize(args, side: str):
    """Fresh copies of the case's arguments for one side ('numpy' or 'torch').

    Returns (call_args, bases): bases[k] is the array whose final contents are compared for
    argument k (the base of a view), or None for scalars.
    """
    import torch

    call, bases = [], []
    for a in args:
        if isinstance(a, View):
            base = a.base.copy()
            if side == "torch":
                base = torch.from_numpy(base).to(DEVICE)
            call.append(a.how(base))
            bases.append(base)
        elif isinstance(a, np.ndarray):
            c = a.copy()
            if side == "torch":
                c = torch.from_numpy(c).to(DEVICE)
            call.append(c)
            bases.append(c)
        else:
            call.append(a)
            bases.append(None)
    return call, bases


def to_numpy(x):
    import torch

    if isinstance(x, torch.Tensor):
        return x.detach().cpu().numpy()
    return np.asarray(x)


def assert_same(expected, actual, what: str, case: Case, note: str = ""):
    expected = np.asarray(expected)
    actual = to_numpy(actual)
    assert actual.shape == expected.shape, f"{what}: shape {actual.shape} != {expected.shape}"
    assert actual.dtype == expected.dtype, f"{what}: dtype {actual.dtype} != {expected.dtype}"
    tol = case.tol.get(expected.dtype.name, default_tol(expected.dtype))
    if case.fp64_strict and expected.dtype == np.float64:
        tol = FP64_STRICT_TOL
    if tol is None:
        np.testing.assert_array_equal(actual, expected, err_msg=what)
    else:
        rtol, atol = tol
        if expected.dtype != np.float64:
            note = ""
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=atol, err_msg=what + note)


def seed_for(case: Case, size) -> int:
    return zlib.crc32(f"{case.id}/{size}".encode())


def case_params():
    params = []
    for case in CASES:
        for size in case.sizes:
            sz = "x".join(map(str, size)) if isinstance(size, tuple) else str(size)
            for mvl in case.mvls:
                marks = [pytest.mark.xfail(reason=case.xfail, strict=False)] if case.xfail else []
                params.append(pytest.param(case, size, mvl, id=f"{case.id}-n{sz}-mvl{mvl}",
                                           marks=marks))
    return params


def kernel_named(pattern, kernel):
    """`pattern` within the kernel's name; one ending in `$` must end it (the plain persistent
    kernel `_f_persistent0$`, not its blocked twin)."""
    return kernel.endswith(pattern[:-1]) if pattern.endswith("$") else pattern in kernel


# ------------------------------------------------------------------------------------ tests

@pytest.mark.parametrize("case,size,mvl", case_params())
def test_sample(case: Case, size, mvl: int, gen_dir, launch_counter, monkeypatch):
    monkeypatch.setenv("APPYC_MVL", str(mvl))
    for name, value in case.env.items():
        monkeypatch.setenv(name, value)
    gen = generated_module(case.sample, mvl, gen_dir)
    ref = reference_module(case.sample)
    args = case.make(np.random.default_rng(seed_for(case, size)), size)

    np_args, np_bases = materialize(args, "numpy")
    t_args, t_bases = materialize(args, "torch")

    expected_ret = getattr(ref, case.func)(*np_args)
    if DEVICE != "cpu" and hasattr(gen, "_APPYC_COMPILED"):
        # On a GPU a repeated launch goes to the compiled kernel's launcher (`_appyc_launch`),
        # past the counter on JITFunction.run: each call's first launch of a kernel goes
        # through Triton again (later ones in the call may still take the fast path).
        gen._APPYC_COMPILED.clear()
    launch_counter.count = 0
    with without_appy():
        actual_ret = getattr(gen, case.func)(*t_args)

    # Python floats reach GPU kernels as fp32 (the harness rounds them the same way, see
    # conftest._as_gpu_scalar); name them when an fp64 comparison then fails.
    fp32_note = "".join(f"\n  note: kernel {k} got Python float {p}={v!r}, fp32 on a GPU"
                        for k, p, v in launch_counter.float_args)
    if case.expect_launch:
        assert launch_counter.count >= 1, "no Triton kernel was launched"
    else:  # no pragma, or an empty iteration space
        assert launch_counter.count == 0, f"unexpected launches: {launch_counter.kernels}"
    for name in case.launches:
        assert any(kernel_named(name, k) for k in launch_counter.kernels), \
            f"no kernel named *{name}* launched: {launch_counter.kernels}"
    for name in case.no_launches:
        assert not any(kernel_named(name, k) for k in launch_counter.kernels), \
            f"a kernel named *{name}* launched: {launch_counter.kernels}"

    names = list(inspect.signature(getattr(ref, case.func)).parameters)
    for k, (e, a) in enumerate(zip(np_bases, t_bases)):
        if e is None:
            continue
        label = args[k].label if isinstance(args[k], View) else names[k]
        assert_same(e, a, f"argument {names[k]} ({label})", case, fp32_note)

    assert_same_return(expected_ret, actual_ret, "return value", case, fp32_note)


def assert_same_return(expected, actual, what: str, case: Case, note: str):
    """A return value: None, a tuple of them, a Python number of Python's own type (a float stays
    a float, an int an int, a bool a bool: a loop's counters and flags come back as Python
    leaves them), a NumPy scalar as a number of its kind, or an array as a torch tensor."""
    if expected is None:
        assert actual is None, f"{what}: expected None, got {type(actual)}"
    elif isinstance(expected, tuple):
        assert isinstance(actual, tuple) and len(actual) == len(expected), \
            f"{what}: expected a tuple of {len(expected)}, got {actual!r}"
        for k, (e, a) in enumerate(zip(expected, actual)):
            assert_same_return(e, a, f"{what}[{k}]", case, note)
    elif isinstance(expected, (bool, np.bool_)):
        assert isinstance(actual, bool), f"{what} is {type(actual).__name__}, expected a bool"
        assert actual == expected, f"{what}: {actual} != {expected}"
    elif isinstance(expected, (np.generic, int, float)):
        # A scalar result (a shared(x) reduction, a loop's counter): a Python number on the
        # torch side, equal to NumPy's value at the tolerance of NumPy's dtype.
        assert isinstance(actual, (int, float)) and not isinstance(actual, bool), \
            f"{what} is {type(actual).__name__}, expected a Python number"
        if type(expected) in (int, float):
            assert type(actual) is type(expected), \
                f"{what} is {type(actual).__name__}, Python gives {type(expected).__name__}"
        expected_arr = np.asarray(expected)
        assert_same(expected_arr, np.asarray(actual, dtype=expected_arr.dtype), what, case, note)
        if expected_arr.dtype.kind in "iu":
            assert isinstance(actual, int), f"{what}: an integer came back as a float"
    else:
        import torch

        assert isinstance(actual, torch.Tensor), \
            f"{what} is {type(actual).__name__}, expected a torch tensor"
        assert_same(expected, actual, what, case, note)


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_generated_imports_only_triton_torch_stdlib(sample, gen_dir):
    out = compile_sample(sample, gen_dir)
    tree = ast.parse(out.read_text())
    allowed = {"triton", "torch"} | set(sys.stdlib_module_names)
    bad = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            mods = [a.name for a in node.names]
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                bad.append(f"line {node.lineno}: relative import")
                continue
            mods = [node.module]
        else:
            continue
        bad += [f"line {node.lineno}: import {m}" for m in mods if m.split(".")[0] not in allowed]
    assert not bad, "generated module imports more than triton/torch/stdlib:\n" + "\n".join(bad)


@pytest.mark.parametrize("sample", SAMPLE_NAMES)
def test_generated_keeps_signatures(sample, gen_dir):
    """The output module has the source's top-level functions with the same parameters."""
    out = compile_sample(sample, gen_dir)

    def sigs(tree):
        return {n.name: [a.arg for a in n.args.args] for n in tree.body
                if isinstance(n, ast.FunctionDef)}

    src = sigs(ast.parse((SAMPLES / f"{sample}.py").read_text()))
    gen = sigs(ast.parse(out.read_text()))
    for name, params in src.items():
        assert name in gen, f"function {name} missing from the generated module"
        assert gen[name] == params, f"{name}: parameters {gen[name]} != {params}"


# ------------------------------------------------------------ harness self-checks (no appyc)

def test_every_sample_function_has_a_case():
    from nvshmem_cases import CASES as MULTI_PE_CASES

    covered = {(c.sample, c.func) for c in CASES}
    # The multi-PE samples run in test_nvshmem.py, on the CPU stand-in of NVSHMEM.
    covered |= {(c.module, c.function) for c in MULTI_PE_CASES.values()}
    missing = [f"{p.stem}.{f}" for p in SAMPLE_FILES for f in pragma_functions(p)
               if (p.stem, f) not in covered]
    assert not missing, "functions with pragmas but no difftest case: " + ", ".join(missing)
    assert len(SAMPLE_FILES) >= 14


def test_cases_refer_to_existing_functions():
    for c in CASES:
        assert (SAMPLES / f"{c.sample}.py").exists(), c.id
        assert callable(getattr(reference_module(c.sample), c.func, None)), c.id


def test_sizes_are_not_multiples_of_16():
    for c in CASES:
        assert len(c.sizes) >= 1
        for size in c.sizes:
            dims = size if isinstance(size, tuple) else (size,)
            assert all(d % 16 != 0 for d in dims), f"{c.id}: size {size}"
    # at least two sizes per function (a function may be split over several cases)
    per_func = {}
    for c in CASES:
        per_func.setdefault((c.sample, c.func), set()).update(map(str, c.sizes))
    few = [k for k, v in per_func.items() if len(v) < 2]
    assert not few, f"functions tested with a single size: {few}"
    assert any(16 in c.mvls for c in CASES)


@pytest.mark.parametrize("case", CASES, ids=lambda c: c.id)
def test_reference_is_meaningful(case: Case):
    """The NumPy run itself: it terminates, writes something, and gives finite numbers
    (except where the sample stores infinities on purpose)."""
    for size in case.sizes:
        args = case.make(np.random.default_rng(seed_for(case, size)), size)
        call, bases = materialize(args, "numpy")
        before = [None if b is None else b.copy() for b in bases]
        ret = getattr(reference_module(case.sample), case.func)(*call)
        changed = [not np.array_equal(b0, b1) for b0, b1 in zip(before, bases) if b0 is not None]
        if case.variant != "empty":
            assert ret is not None or any(changed), f"{case.id}: the reference changed nothing"
        for b in [ret] + bases:
            if b is None or case.func == "inf_cap":
                continue
            arr = np.asarray(b)
            if arr.dtype.kind == "f":
                assert np.isfinite(arr).all(), f"{case.id}: non-finite reference output"
            assert np.any(arr != 0), f"{case.id}: all-zero array"


def test_generated_code_runs_without_appy(tmp_path):
    """The harness's check itself: under `without_appy()` an import of appy fails, at module
    level and inside a function, even with the shim's directory first on sys.path; the
    reference run still gets the shim afterwards."""
    import appy as shim  # the reference's, from the shim's directory

    bad = tmp_path / "imports_appy.py"
    bad.write_text("import appy\n")
    with pytest.raises(ModuleNotFoundError, match="appy"):
        load_generated(bad, "appyc_check_imports_appy")
    late = tmp_path / "imports_appy_late.py"
    late.write_text("def f():\n    from appy import jit\n    return jit\n")
    mod = load_generated(late, "appyc_check_imports_appy_late")
    with without_appy():
        assert "appy" not in sys.modules
        assert all(Path(p or ".").resolve() != SHIM_DIR for p in sys.path)
        sys.path.insert(0, str(SHIM_DIR))  # the finder refuses the shim even so
        with pytest.raises(ModuleNotFoundError, match="appy"):
            mod.f()
    import appy

    assert appy is shim and mod.f() is shim.jit


def test_fp64_check_is_sensitive():
    """axpby with beta rounded to fp32 differs from the fp64 reference by far more than 1e-12,
    so the strict comparison would catch a kernel that passes Python floats as fp32."""
    ref = reference_module("fp64_axpby")
    rng = np.random.default_rng(1)
    x, y = rng.standard_normal(1000), rng.standard_normal(1000)
    y64, y32 = y.copy(), y.copy()
    ref.axpby(0.7, x, 1.2, y64, 1000)
    ref.axpby(float(np.float32(0.7)), x, float(np.float32(1.2)), y32, 1000)
    err = np.max(np.abs(y64 - y32) / (np.abs(y64) + FP64_STRICT_TOL[1]))
    assert err > 1e3 * FP64_STRICT_TOL[0], err
    assert any(c.fp64_strict for c in CASES if c.sample == "fp64_axpby")


# A loop that runs no iteration binds nothing: a name it would bind and the function reads after
# it stays unbound (Python's UnboundLocalError), compiled or not, and nothing is launched.
UNBOUND_AFTER_NO_ITERATION = [
    ("strided_last_step", lambda a, b, n: [a, n, 1]),          # range(1, 1, 3): t unbound
    ("steps_until_small", lambda a, b, n: [a, b, n, 0.1, 0]),  # range(0): it unbound
    ("counters_until_small", lambda a, b, n: [a, b, n, 0.1, 0]),  # while test false: no flag
]


@pytest.mark.parametrize("func,make", UNBOUND_AFTER_NO_ITERATION,
                         ids=[f for f, _ in UNBOUND_AFTER_NO_ITERATION])
def test_a_loop_of_no_iteration_leaves_its_names_unbound(func, make, gen_dir, launch_counter,
                                                         monkeypatch):
    import torch

    monkeypatch.setenv("APPYC_MVL", "128")
    gen = generated_module("natural_loops", 128, gen_dir)
    ref = reference_module("natural_loops")
    rng = np.random.default_rng(7)
    a, b, n = rng.standard_normal(37), rng.standard_normal(37), 37
    with pytest.raises(UnboundLocalError):
        getattr(ref, func)(*make(a.copy(), b.copy(), n))
    launch_counter.count = 0
    with without_appy(), pytest.raises(UnboundLocalError):
        getattr(gen, func)(*make(torch.from_numpy(a.copy()), torch.from_numpy(b.copy()), n))
    assert launch_counter.count == 0, f"unexpected launches: {launch_counter.kernels}"


# Samples with a kernel of several dimensions on its own grid (triton::grid::flat_grid).
AXES_SAMPLES = ("accumulation_loops", "column_reductions", "heat_3d", "host_alloc", "host_tensor",
                "host_updates", "index_exprs", "inplace_shift", "matmul_loops", "nested_parallel_2d",
                "outer_product", "reduction_clause", "reductions_axes", "slice_rows", "square_slices",
                "strided_views")


def _grid_forms(gen, monkeypatch):
    """Records, launch by launch, whether `_appyc_grid_axes` chose the flat form."""
    forms, real = [], gen._appyc_grid_axes

    def grid_axes(counts):
        grid, flat = real(counts)
        forms.append(flat)
        return grid, flat
    monkeypatch.setattr(gen, "_appyc_grid_axes", grid_axes)
    return forms


@pytest.mark.parametrize("case,size,mvl", [
    pytest.param(c, c.sizes[0], c.mvls[0], id=f"{c.id}-axes")
    for c in CASES if c.sample in AXES_SAMPLES and c.expect_launch and not c.xfail])
def test_sample_with_one_axis_a_dimension(case, size, mvl, gen_dir, launch_counter, monkeypatch):
    """The interpreter numbers a several-dimension kernel's programs on axis 0 (the flat form,
    `_APPYC_GRID_AXIS_MAX` 0), which every other case checks; a GPU launches a grid that fits
    Triton's caps one axis a dimension. The same case on that form, and proof that it ran
    (a case whose function launches no such kernel records nothing and passes)."""
    gen = generated_module(case.sample, mvl, gen_dir)
    monkeypatch.setattr(gen, "_APPYC_GRID_AXIS_MAX", 65535)
    forms = _grid_forms(gen, monkeypatch)
    test_sample(case, size, mvl, gen_dir, launch_counter, monkeypatch)
    assert not any(forms), forms


def test_the_interpreter_takes_the_flat_form(gen_dir, launch_counter, monkeypatch):
    case = next(c for c in CASES if (c.sample, c.func) == ("nested_parallel_2d", "add_transpose"))
    gen = generated_module(case.sample, case.mvls[0], gen_dir)
    forms = _grid_forms(gen, monkeypatch)
    test_sample(case, case.sizes[0], case.mvls[0], gen_dir, launch_counter, monkeypatch)
    assert forms and all(forms), forms
