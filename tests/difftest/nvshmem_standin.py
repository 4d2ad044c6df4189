"""A CPU stand-in for NVSHMEM, to run generated multi-GPU modules under Triton's interpreter.

One process per PE (as on the GPU, where torchrun starts one per GPU). Each PE's symmetric heap
is a file of fixed size that every PE maps (`HEAP_BYTES`); symmetric tensors are bump-allocated
from it in the order the program asks for them, so the same allocation has the same offset on
every PE, as on NVSHMEM's heap; like NVSHMEM's, an allocation is collective (a barrier across the
PEs after each one initialises its copy). The generated module's shim (`_appyc_nvshmem_use`) is replaced by
Python functions that the interpreted kernels call with interpreter tensors:

* puts copy bytes to the same offset of the target PE's heap (ctypes.memmove); strided puts
  copy element by element; the flag is then increased under a lock shared by the processes;
* the generated module's bounded wait runs as written, on the stand-in's primitives: `acquire`
  reads the word (after a short sleep, so a spinning PE leaves the CPU to its peers), `clock` is
  the host's monotonic clock in ns and `any` (the program's barrier-OR) returns its argument;
  a deadlock then fails with the module's own error, after APPYC_NVSHMEM_TIMEOUT seconds;
* `signal_wait_until`, which the module calls when its bounds are compiled out (`--unbounded`:
  `_APPYC_NVSHMEM_BOUNDED` false), polls the local flag word and raises `StandInDeadlock` after
  `timeout` seconds, naming the flag and its value, so a deadlock fails instead of hanging;
* fence/quiet do nothing (copies are complete when the call returns); the thread-0 guard is
  true (the interpreter runs a program as one thread).

Under the interpreter a persistent kernel runs one launch per phase (the generated launcher does
that), so a program never waits for another program of its own launch; PEs run concurrently.

Usage (by test_nvshmem.py): python nvshmem_standin.py MODULE FUNCTION CASE PE N_PES DIR TIMEOUT
[--unbounded] writes DIR/out{PE}.npz with the function's array arguments after the call.
"""
import ctypes
import fcntl
import importlib.util
import mmap
import os
import sys
import time
from pathlib import Path

os.environ["TRITON_INTERPRET"] = "1"

import numpy as np  # noqa: E402
import torch  # noqa: E402
from triton.runtime import interpreter as _interp  # noqa: E402

HEAP_BYTES = 16 << 20


class StandInDeadlock(RuntimeError):
    pass


def heap_path(directory, pe):
    return Path(directory) / f"heap{pe}"


def create_heaps(directory, n_pes):
    for pe in range(n_pes):
        with open(heap_path(directory, pe), "wb") as f:
            f.truncate(HEAP_BYTES)
    # The lock file also holds the barrier's counter (8 bytes).
    (Path(directory) / "lock").write_bytes(bytes(8))


def _int64(v):
    """An int64 scalar of the interpreter, as the device primitives return on the GPU."""
    import triton.language as tl

    return tl.core.tensor(_interp.TensorHandle(np.array([v], dtype=np.int64), tl.int64), tl.int64)


def _value(x):
    """A Python int from an interpreter tensor, a constexpr or an int."""
    if hasattr(x, "handle"):
        return int(np.asarray(x.handle.data).reshape(-1)[0])
    if hasattr(x, "value"):
        return int(x.value)
    return int(x)


class Runtime:
    """The shim and host runtime of one PE (attribute names as in _APPYC_NVSHMEM_SHIM)."""

    def __init__(self, directory, pe, n_pes, timeout):
        self.pe, self.n, self.timeout = pe, n_pes, timeout
        self.maps = []
        for p in range(n_pes):
            f = open(heap_path(directory, p), "r+b")
            self.maps.append(mmap.mmap(f.fileno(), HEAP_BYTES))
            f.close()
        self.bases = [ctypes.addressof(ctypes.c_char.from_buffer(m)) for m in self.maps]
        self.lock_file = open(Path(directory) / "lock", "r+b")
        self.arrivals = ctypes.c_int64.from_buffer(mmap.mmap(self.lock_file.fileno(), 8))
        self.barriers = 0
        self.next = 0
        # APPYC_STANDIN_SLOW="PE:SECONDS": that PE sleeps before each put and after each wait,
        # so its neighbours run ahead of it (a missing wait or acknowledgement then shows).
        slow = os.environ.get("APPYC_STANDIN_SLOW", "")
        self.slow = float(slow.split(":")[1]) if slow and int(slow.split(":")[0]) == pe else 0.0
        # How often each way of putting ran (written beside the arrays as calls_NAME).
        self.calls = {}

    def _count(self, name):
        self.calls[name] = self.calls.get(name, 0) + 1

    # --- host -------------------------------------------------------------------------------
    def my_pe(self):
        return self.pe

    def n_pes(self):
        return self.n

    def symmetric(self, t):
        t = torch.as_tensor(t)
        nbytes = t.numel() * t.element_size()
        offset = self.next
        self.next = (offset + nbytes + 255) // 256 * 256
        if self.next > HEAP_BYTES:
            raise MemoryError("the stand-in's symmetric heap is full")
        out = torch.frombuffer(self.maps[self.pe], dtype=t.dtype, count=t.numel(), offset=offset)
        out = out.view(tuple(t.shape))
        out.copy_(t)
        # Symmetric allocation is collective on NVSHMEM: no PE goes on (and puts or signals
        # into this allocation on another PE) before every PE has initialised its copy.
        # Without this a fast PE's first signal could land before a slow PE zeroed its flags,
        # and be wiped.
        self._barrier()
        return out

    def _barrier(self):
        self.barriers += 1
        fcntl.flock(self.lock_file, fcntl.LOCK_EX)
        try:
            self.arrivals.value += 1
        finally:
            fcntl.flock(self.lock_file, fcntl.LOCK_UN)
        deadline = time.monotonic() + self.timeout
        while self.arrivals.value < self.barriers * self.n:
            if time.monotonic() > deadline:
                raise StandInDeadlock(
                    f"PE {self.pe}: barrier {self.barriers} waited {self.timeout:g} s "
                    f"({self.arrivals.value} of {self.barriers * self.n} arrivals)")
            time.sleep(0.0005)

    def distributed(self):
        return True

    def host_barrier(self):
        self._barrier()

    def gather(self, t):
        """Every PE's copy of the symmetric tensor `t` (same offset on every heap), stacked in PE
        order; collective, like NCCL's all-gather on the GPU: every PE has finished writing its
        copy (its kernel returned) before any reads, and every PE has read before any goes on."""
        self._barrier()
        off = self._offset(t.data_ptr())
        if off is None or not t.is_contiguous():
            raise RuntimeError(f"PE {self.pe}: gather of a tensor that is not a contiguous symmetric one")
        nbytes = t.numel() * t.element_size()
        parts = []
        for pe in range(self.n):
            raw = bytes(self.maps[pe][off:off + nbytes])
            parts.append(torch.frombuffer(bytearray(raw), dtype=t.dtype).view(tuple(t.shape)))
        self._barrier()
        return torch.stack(parts)

    def check_symmetric(self, *arrays):
        for a in arrays:
            if self._offset(a.data_ptr()) is None:
                raise ValueError("an nvshmem array is not on the (stand-in) symmetric heap")

    # --- device -----------------------------------------------------------------------------
    def _offset(self, addr):
        off = addr - self.bases[self.pe]
        return off if 0 <= off < HEAP_BYTES else None

    def _remote(self, addr, pe):
        off = self._offset(addr)
        if off is None:
            raise RuntimeError(f"PE {self.pe}: address {addr:#x} is not on the symmetric heap")
        if not 0 <= pe < self.n:
            raise RuntimeError(f"PE {self.pe}: put to PE {pe}, outside [0, {self.n})")
        return self.bases[pe] + off

    def _signal(self, sig, value, op, pe):
        target = ctypes.c_int64.from_address(self._remote(sig, pe))
        fcntl.flock(self.lock_file, fcntl.LOCK_EX)
        try:
            if op == 10:    # SIGNAL_ADD
                target.value += value
            elif op == 9:   # SIGNAL_SET
                target.value = value
            else:
                raise RuntimeError(f"unknown signal op {op}")
        finally:
            fcntl.flock(self.lock_file, fcntl.LOCK_UN)

    def putmem_block(self, d, s, nbytes, pe):
        self._count("putmem")
        time.sleep(self.slow)
        ctypes.memmove(self._remote(_value(d), _value(pe)), _value(s), _value(nbytes))

    putmem_nbi_block = putmem_block

    def putmem_signal_block(self, d, s, nbytes, sig, value, op, pe):
        self.putmem_block(d, s, nbytes, pe)
        self._signal(_value(sig), _value(value), _value(op), _value(pe))

    putmem_signal_nbi_block = putmem_signal_block

    def _iput(self, d, s, ds, ss, n, pe, size):
        self._count("iput")
        time.sleep(self.slow)
        d, s, ds, ss, n, pe = map(_value, (d, s, ds, ss, n, pe))
        remote = self._remote(d, pe)
        for i in range(n):
            ctypes.memmove(remote + i * ds * size, s + i * ss * size, size)

    def iput32_block(self, d, s, ds, ss, n, pe):
        self._iput(d, s, ds, ss, n, pe, 4)

    def iput64_block(self, d, s, ds, ss, n, pe):
        self._iput(d, s, ds, ss, n, pe, 8)

    def signal_op(self, sig, value, op, pe):
        self._signal(_value(sig), _value(value), _value(op), _value(pe))

    def p2p(self):
        # Every stand-in PE maps every heap, as NVSHMEM does for the GPUs of one node; the
        # variable picks NVSHMEM's put calls instead, as on the GPU.
        return os.environ.get("APPYC_NVSHMEM_P2P", "1") != "0"

    def ptr(self, addr, pe):
        # nvshmem_ptr: the same offset in PE pe's heap, mapped in this process. A P2P put's
        # stores run in the interpreted kernel; the slow PE sleeps before them.
        self._count("ptr")
        time.sleep(self.slow)
        return _int64(self._remote(_value(addr), _value(pe)))

    def signal_p2p(self, far_sig):
        # The add of a P2P put-with-signal, on an address ptr() gave (any PE's heap).
        self._count("signal_p2p")
        far_sig = _value(far_sig)
        if not any(0 <= far_sig - b < HEAP_BYTES for b in self.bases):
            raise RuntimeError(f"PE {self.pe}: a P2P signal outside every heap ({far_sig:#x})")
        target = ctypes.c_int64.from_address(far_sig)
        fcntl.flock(self.lock_file, fcntl.LOCK_EX)
        try:
            target.value += 1
        finally:
            fcntl.flock(self.lock_file, fcntl.LOCK_UN)
        return 0

    def signal_wait_until(self, sig, cmp, value):
        sig, cmp, value = _value(sig), _value(cmp), _value(value)
        if cmp != 5:
            raise RuntimeError(f"the stand-in knows NVSHMEM_CMP_GE (5) only, not {cmp}")
        if self._offset(sig) is None:
            raise RuntimeError(f"PE {self.pe}: a wait on an address outside the symmetric heap")
        word = ctypes.c_int64.from_address(sig)
        deadline = time.monotonic() + self.timeout
        while word.value < value:
            if time.monotonic() > deadline:
                raise StandInDeadlock(
                    f"PE {self.pe}: signal_wait_until(heap+{self._offset(sig)}, >= {value}) waited "
                    f"{self.timeout:g} s; the flag is {word.value} (deadlock)")
            time.sleep(0.0005)
        time.sleep(self.slow)
        return value

    def acquire(self, addr, system_scope=True):
        # A poll that finds the word not yet there is repeated: a short sleep keeps a PE that
        # waits from taking the CPU its peers need to get there.
        time.sleep(0.0002)
        return _int64(ctypes.c_int64.from_address(_value(addr)).value)

    def clock(self):
        return _int64(time.monotonic_ns())

    def any(self, x):
        return x

    def fence(self):
        return 0

    quiet = fence

    def thread0(self):
        return True


def _load(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def main(argv):
    unbounded = "--unbounded" in argv
    argv = [a for a in argv if a != "--unbounded"]
    module_path, function, case_name, pe, n_pes, directory, timeout = argv
    pe, n_pes, timeout = int(pe), int(n_pes), float(timeout)
    # The interpreter copies each argument's storage back after a launch; for CPU tensors that
    # storage is the tensor's own, so the copy is a no-op, except that it would rewrite bytes a
    # peer put there meanwhile. Skip it.
    _interp.GridExecutor._restore_args_dev = lambda self, *a, **k: None
    sys.path.insert(0, str(Path(__file__).resolve().parent))
    from nvshmem_cases import CASES, DIST_CASES

    case = {**CASES, **DIST_CASES}[case_name]
    mod = _load(module_path, f"appyc_nvshmem_gen_{pe}")
    if unbounded:
        import triton.language as tl

        mod._APPYC_NVSHMEM_BOUNDED = tl.constexpr(False)
    rt = Runtime(directory, pe, n_pes, timeout)
    mod._appyc_nvshmem_use(rt)
    args = []
    # A `#pragma distribute` case takes the global arrays (plain tensors): the module cuts its
    # blocks onto the heap itself.
    symmetric = getattr(case, "symmetric_args", True)
    for a in case.make_args(pe, n_pes):
        if isinstance(a, np.ndarray):
            a = torch.from_numpy(np.ascontiguousarray(a).copy())
            if getattr(case, "blocks", False):
                # Called with this PE's block of each global array (the module's helpers).
                r0, r1 = mod.appyc_rows(a.shape[0])
                a = mod.appyc_block(a[r0:r1].clone(), a.shape[0])
            args.append(rt.symmetric(a) if symmetric else a)
        else:
            args.append(a)
    for _ in range(getattr(case, "calls", 1)):
        returned = getattr(mod, function)(*args)
    args = [a.block if hasattr(a, "block") else a for a in args]
    out = {f"a{i}": a.numpy().copy() for i, a in enumerate(args) if isinstance(a, torch.Tensor)}
    if isinstance(returned, (int, float)):
        out["returned"] = np.array(returned)  # a host scalar the function returns
    out.update({f"calls_{k}": np.array(v) for k, v in rt.calls.items()})
    np.savez(Path(directory) / f"out{pe}.npz", **out)


if __name__ == "__main__":
    main(sys.argv[1:])
