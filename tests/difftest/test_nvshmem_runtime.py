"""The generated NVSHMEM host runtime's GPU path, run on the CPU with its device calls stubbed:
the CPU stand-in (test_nvshmem.py) replaces `_appyc_nvshmem_persistent`, so this is where its
own logic is checked. Every compiled specialisation of a kernel must get NVSHMEM's module init
before its first launch (a second shape once launched a module without it and faulted), once.
"""
import importlib.util
import types

import torch

from test_samples import compile_sample


class FakeKernel:
    """Stands in for a @triton.jit kernel: `warmup` returns one compiled object per
    specialisation (here: per value of the first integer argument), launches are recorded."""

    def __init__(self):
        self.compiled = {}
        self.launches = []
        self.fn = types.SimpleNamespace(__name__="fake")

    def warmup(self, *args, grid, **options):
        key = next(a for a in args if isinstance(a, int))
        if key not in self.compiled:
            self.compiled[key] = types.SimpleNamespace(module=f"module{key}", inits=0,
                                                       _init_handles=lambda: None)
        return self.compiled[key]

    def __getitem__(self, grid):
        def launch(*args, **options):
            self.launches.append((grid, options["maxnreg"], options["launch_cooperative_grid"]))
            self.options = options
        return launch


def test_every_new_specialisation_is_initialised_once(tmp_path, monkeypatch):
    path = compile_sample("nvshmem_jacobi2d_l8", tmp_path)
    spec = importlib.util.spec_from_file_location("nvshmem_runtime_l8", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    # The GPU path, on the CPU: no interpreter, device queries and the device library stubbed.
    monkeypatch.setattr(mod, "_APPYC_INTERPRET", False)
    monkeypatch.setattr(mod, "_appyc_programs_per_sm", lambda compiled, warps, props: 2)
    monkeypatch.setattr(mod, "_appyc_nvshmem_lib", lambda: {})
    monkeypatch.setattr(torch.cuda, "get_device_properties",
                        lambda device: types.SimpleNamespace(multi_processor_count=3))
    inits = []
    import torch._C._distributed_c10d as c10d
    monkeypatch.setattr(c10d, "_nvshmemx_cumodule_init", inits.append, raising=False)

    kernel = FakeKernel()
    flag = torch.zeros(2)
    for size in (5, 5, 16, 5, 16):  # two specialisations, each launched more than once
        mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, size), 128, 4)
    assert inits == ["module5", "module16"]
    # Every launch is cooperative, under the register cap, on programs/SM x SMs programs.
    assert kernel.launches == [((6,), mod._APPYC_NVSHMEM_MAXNREG, True)] * 5
    # Work smaller than the resident grid launches only as many programs.
    mod._appyc_nvshmem_persistent(kernel, 4, 4, (flag, 5), 128, 4)
    assert kernel.launches[-1][0] == (4,)
    # The kernel's other constexprs (a strip loop's ONE_STRIP switch) reach the launch.
    mod._appyc_nvshmem_persistent(kernel, 4, None, (flag, 5), 128, 4, {"ONE_STRIP": True})
    assert kernel.options["ONE_STRIP"] is True and kernel.options["MVL"] == 128
