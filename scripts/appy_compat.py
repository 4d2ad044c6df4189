#!/usr/bin/env python3
"""APPy compatibility: compiles the original APPy project's annotated examples and integration
tests with appyc, unchanged, and runs each file's own test functions against the compiled code.

    python3 scripts/appy_compat.py --collect APPY_CHECKOUT DIR   # copy the files to check into DIR
    python3 scripts/appy_compat.py DIR [--appyc BIN] [--out FILE.md]

APPy (habanero-lab/APPy, MIT) is not part of this repository: `--collect` copies its
`examples/*.py` and `tests/integration/triton/**/*.py` from a checkout into a scratch directory
(gitignored `gen_appy/` by convention), which the second form reads.

For every file: appyc compiles it (status `error` with appyc's first diagnostic line when it
does not). Then the file's `test*` functions run against the compiled module, where each
compiled function takes the test's NumPy arrays as torch tensors on the device (CUDA when
there is one, else the CPU under TRITON_INTERPRET=1) and copies results back into them. A
test's own assertions compare with its NumPy (or torch) reference: `pass` when they all hold.
Files whose host code needs CUDA are `gpu only` on a machine without one.

The compiled modules run as they would where APPy is not installed: no `appy` module is
provided, and an import of it fails (appyc's output never imports appy; a file that needs it
is `fail` with the ModuleNotFoundError).
"""
import argparse
import ast
import functools
import importlib.abc
import importlib.util
import os
import shutil
import subprocess
import sys
import time
import traceback
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent


def collect(checkout: Path, dest: Path):
    dest.mkdir(parents=True, exist_ok=True)
    picked = sorted((checkout / "examples").glob("[0-9]*.py"))
    picked += sorted((checkout / "tests/integration/triton").rglob("test_*.py"))
    for f in picked:
        rel = f.relative_to(checkout)
        shutil.copy(f, dest / "__".join(rel.parts))
    helper = checkout / "examples/benchmark_utils.py"
    if helper.exists():
        shutil.copy(helper, dest / "benchmark_utils.py")
    print(f"copied {len(picked)} files into {dest}")


def annotated_functions(path: Path):
    src = path.read_text()
    lines = src.splitlines()
    names = []
    for node in ast.parse(src).body:
        if isinstance(node, ast.FunctionDef):
            body = lines[node.lineno - 1:node.end_lineno]
            if any(line.strip().startswith("#pragma") for line in body):
                names.append(node.name)
    return names


class NoAppy(importlib.abc.MetaPathFinder):
    """Finds no `appy` (nor `appy.*`), even where APPy is installed: the compiled modules must
    run without it."""

    def find_spec(self, name, path=None, target=None):
        if name == "appy" or name.startswith("appy."):
            raise ModuleNotFoundError(f"No module named {name!r} (appyc's output must not "
                                      "import appy)", name=name)
        return None


def to_device(x, device):
    import numpy as np
    import torch

    if isinstance(x, np.ndarray):
        return torch.from_numpy(x).to(device)
    if isinstance(x, torch.Tensor):
        return x.to(device)
    return x


def back_to_numpy(x):
    import numpy as np
    import torch

    if isinstance(x, torch.Tensor):
        return x.cpu().numpy() if x.dim() else x.item()
    if isinstance(x, tuple):
        return tuple(back_to_numpy(v) for v in x)
    return x


def on_device(fn, device):
    """Calls a compiled function with NumPy arguments as device tensors; arrays the kernel
    wrote are copied back, the result comes back as NumPy (a torch caller gets torch)."""
    import numpy as np
    import torch

    @functools.wraps(fn)
    def call(*args, **kwargs):
        was_numpy = any(isinstance(a, np.ndarray) for a in args)
        dev_args = [to_device(a, device) for a in args]
        out = fn(*dev_args, **{k: to_device(v, device) for k, v in kwargs.items()})
        for a, d in zip(args, dev_args):
            if isinstance(a, np.ndarray):
                a[...] = d.cpu().numpy()
            elif isinstance(a, torch.Tensor) and a.device != d.device:
                a.copy_(d)
        return back_to_numpy(out) if was_numpy else out

    return call


def load(path: Path, name: str):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def check_file(path: Path, appyc: str, out_dir: Path, device):
    out = out_dir / path.name
    r = subprocess.run([appyc, str(path), "-o", str(out)], capture_output=True, text=True)
    if r.returncode != 0:
        first = r.stderr.strip().splitlines()[0] if r.stderr.strip() else f"exit {r.returncode}"
        return "error", first.split(": error: ", 1)[-1]
    names = annotated_functions(path)
    try:
        mod = load(out, f"compiled_{path.stem}")
    except Exception as e:  # noqa: BLE001 - reported, not raised
        if any(w in str(e).lower() for w in ("cuda", "nvidia driver")):
            return "gpu only", "its host code needs CUDA"
        return "fail", f"import: {type(e).__name__}: {e}"
    for n in names:
        setattr(mod, n, on_device(getattr(mod, n), device))
    tests = [n for n in dir(mod) if n.startswith("test") and callable(getattr(mod, n))]
    if not tests:
        return "compiles", "no test function"
    for t in tests:
        try:
            getattr(mod, t)()
        except Exception as e:  # noqa: BLE001
            text = f"{type(e).__name__}: {e}".strip().splitlines()[0]
            needs_gpu = any(w in text.lower() for w in ("cuda", "nvidia driver"))
            if needs_gpu and device == "cpu":
                return "gpu only", "its host code needs CUDA"
            tb = traceback.extract_tb(e.__traceback__)
            where = f" ({tb[-1].name}:{tb[-1].lineno})" if tb else ""
            return "fail", f"{t}: {text[:160]}{where}"
    return "pass", ", ".join(tests)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--collect", nargs=2, metavar=("APPY_CHECKOUT", "DIR"))
    ap.add_argument("dir", nargs="?", type=Path)
    ap.add_argument("--appyc", default=os.environ.get("APPYC_BIN",
                                                      str(REPO / "target/release/appyc")))
    ap.add_argument("--out", type=Path)
    a = ap.parse_args()
    if a.collect:
        collect(Path(a.collect[0]), Path(a.collect[1]))
        return
    if a.dir is None:
        ap.error("give the directory --collect filled")
    import torch

    device = "cuda" if torch.cuda.is_available() else "cpu"
    if device == "cpu":
        os.environ.setdefault("TRITON_INTERPRET", "1")
    for name in [n for n in sys.modules if n == "appy" or n.startswith("appy.")]:
        del sys.modules[name]
    sys.meta_path.insert(0, NoAppy())
    sys.path.insert(0, str(a.dir))  # benchmark_utils
    out_dir = a.dir / "compiled"
    out_dir.mkdir(exist_ok=True)
    rows = []
    for path in sorted(a.dir.glob("*.py")):
        if path.name == "benchmark_utils.py":
            continue
        start = time.time()
        status, detail = check_file(path, a.appyc, out_dir, device)
        rows.append((path.name.replace("__", "/"), status, detail))
        print(f"{status:9} {path.name} ({time.time() - start:.1f} s): {detail}", flush=True)
    table = [f"APPy files checked on {device} ({torch.__version__}):", "",
             "| file | status | detail |", "|---|---|---|"]
    table += [f"| `{f}` | {s} | {d.replace('|', '/')} |" for f, s, d in rows]
    counts = {s: sum(1 for _, t, _ in rows if t == s) for s in dict.fromkeys(r[1] for r in rows)}
    table += ["", ", ".join(f"{n} {s}" for s, n in counts.items())]
    text = "\n".join(table) + "\n"
    print(text)
    if a.out:
        a.out.write_text(text)


if __name__ == "__main__":
    main()
