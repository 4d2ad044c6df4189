"""The reference semantics of appyc's `nvshmem` calls: N PEs of an unchanged program, NumPy only.

A program written for appyc's multi-GPU model calls `nvshmem.Putmem`, `nvshmem.SignalWait`,
`nvshmem.my_pe()` and `nvshmem.n_pes()` (pragma-spec/library-calls.yaml). Compiled, it runs as one
process per GPU; here it runs as one thread per PE, each with its own arrays:

    from appyc_aot import nvshmem

    def make_args(pe, n_pes):          # called once per PE, in PE order, before any PE starts
        A = ...; B = ...               # this PE's arrays (NumPy)
        return (A, B, M, N, T)

    per_pe = nvshmem.run(jacobi_2d, 4, make_args)   # runs jacobi_2d(*make_args(pe, 4)) on 4 PEs
    A0 = per_pe[0][0]                               # PE 0's A after the run

The generated module is launched the same way, once per rank (see the README's multi-GPU
section): each process builds its own arguments and calls the function.

Semantics (the compiler's contract; this module checks what it can):

* `Putmem(dest, src, pe, flag=None, signal=None)` copies `src` (a view of a local array) into the
  same view of PE `pe`'s array of the same name: `dest` is written as an expression of a local
  array (`A[M - 1, 1:N - 1]`, `A_prev[t % 2, 0]`), and the same expression, with the index
  values evaluated here, is applied to the target PE's variable of that name. The copy happens
  at once (the most eager of the behaviours the relaxed model allows). With a flag (an element
  `flags[k]` of an integer array), the target's `flags[k]` then grows by one; `signal` must be
  the value it reaches (the k-th put on a flag carries k), or `SignalMismatch` is raised.
* `SignalWait(flag, signal)` blocks until the local flag element is >= signal. A wait that is not
  satisfied within the timeout of `run` raises `Deadlock`, naming every PE's state; the other
  PEs' waits then fail too, so `run` never hangs.
* `my_pe()`, `n_pes()`: this thread's PE and the number of PEs.

Names are resolved in the caller's frame (its locals, then globals), so a symmetric array must be
bound to the same name on every PE and not rebound while puts to it may be in flight.
"""
import ast
import linecache
import sys
import threading
import time

import numpy as np

__all__ = ["Putmem", "SignalWait", "my_pe", "n_pes", "run", "Deadlock", "SignalMismatch", "NvshmemError"]


class NvshmemError(RuntimeError):
    """A communication call used against the model (bad PE, shapes, flag, outside `run`)."""


class Deadlock(NvshmemError):
    """A `SignalWait` (or a put to a PE that never reaches its first call) timed out."""


class SignalMismatch(NvshmemError):
    """A put's `signal` is not the value its flag reaches (flags count puts from 0)."""


class _World:
    def __init__(self, n, timeout):
        self.n = n
        self.timeout = timeout
        self.cond = threading.Condition()
        self.frames = [None] * n      # each PE's frame of the program, set at each call
        self.where = ["starting"] * n  # what each PE is doing, for deadlock messages
        self.failed = None             # the first error: every other PE stops waiting


_local = threading.local()


def _me():
    world = getattr(_local, "world", None)
    if world is None:
        raise NvshmemError("nvshmem calls run inside nvshmem.run(fn, n_pes, make_args)")
    return world, _local.pe


def my_pe():
    """This PE's number, 0 <= my_pe() < n_pes()."""
    return _me()[1]


def n_pes():
    """The number of PEs in this run."""
    return _me()[0].n


# --- reading the call's own text: names and index expressions of its arguments ---------------

_CALLS = {}
# PEs are threads, and CPython 3.11's ast.parse and compile of an AST are not safe to run in two
# threads at once: they fail now and then with "AST constructor recursion depth mismatch" (seen
# in the test run on 3.11.7), so each call's text is parsed, and each index compiled, once under
# a lock.
_PARSE_LOCK = threading.Lock()


def _call_node(frame):
    """The AST of the call being executed in `frame` (from the bytecode's source positions)."""
    code, lasti = frame.f_code, frame.f_lasti
    key = (code, lasti)
    node = _CALLS.get(key)
    if node is not None:
        return node
    with _PARSE_LOCK:
        return _parse_call(code, lasti, frame, key)


def _parse_call(code, lasti, frame, key):
    node = _CALLS.get(key)
    if node is None:
        positions = list(code.co_positions())
        line, end_line, col, end_col = positions[lasti // 2]
        lines = linecache.getlines(code.co_filename, frame.f_globals)
        if line is None or not lines:
            raise NvshmemError(f"cannot read the source of the call at {code.co_filename}")
        text = "".join(lines[line - 1:end_line])
        # Cut the call out of its lines (columns are byte offsets).
        raw = text.encode()
        last_start = len("".join(lines[line - 1:end_line - 1]).encode())
        raw = raw[:last_start + end_col][col:]
        node = ast.parse(raw.decode().strip(), mode="eval").body
        if not isinstance(node, ast.Call):
            raise NvshmemError(f"cannot read the call at {code.co_filename}:{line}")
        _CALLS[key] = node
    return node


_INDEX_CODE = {}  # id of an index node (kept alive in _CALLS) -> its compiled expression


def _index_code(node):
    code = _INDEX_CODE.get(id(node))
    if code is None:
        with _PARSE_LOCK:  # compiling an AST has the same thread-unsafe depth count as parsing
            code = _INDEX_CODE[id(node)] = compile(ast.Expression(node), "<nvshmem index>", "eval")
    return code


def _arg_nodes(frame, names):
    call = _call_node(frame)
    bound = dict(zip(names, call.args))
    bound.update({k.arg: k.value for k in call.keywords})
    return bound


def _split(node, frame):
    """`A[idx]` -> ("A", idx evaluated in the frame); `A` -> ("A", None)."""
    if isinstance(node, ast.Name):
        return node.id, None
    if isinstance(node, ast.Subscript) and isinstance(node.value, ast.Name):
        return node.value.id, eval(_index_code(node.slice), frame.f_globals, frame.f_locals)
    raise NvshmemError(f"an nvshmem argument must be an array or a subscript of one, not `{ast.unparse(node)}`")


def _lookup(frame, name):
    if name in frame.f_locals:
        return frame.f_locals[name]
    if name in frame.f_globals:
        return frame.f_globals[name]
    raise KeyError(name)


def _peer_array(world, pe, name):
    """PE `pe`'s array `name`; waits (bounded) until that PE has reached its first call."""
    deadline = time.monotonic() + world.timeout
    with world.cond:
        while True:
            if world.failed is not None:
                raise NvshmemError("another PE failed") from world.failed
            frame = world.frames[pe]
            if frame is not None:
                try:
                    return _lookup(frame, name)
                except KeyError:
                    pass
            left = deadline - time.monotonic()
            if left <= 0:
                raise _deadlock(world, f"a put to PE {pe} found no array `{name}` there")
            world.cond.wait(min(left, 0.05))


def _deadlock(world, what):
    states = "; ".join(f"PE {p}: {w}" for p, w in enumerate(world.where))
    err = Deadlock(f"deadlock after {world.timeout:g} s: {what} ({states})")
    world.failed = world.failed or err
    world.cond.notify_all()
    return err


def _enter(what):
    world, pe = _me()
    frame = sys._getframe(2)
    with world.cond:
        world.frames[pe] = frame
        world.where[pe] = what
        world.cond.notify_all()
    return world, pe, frame


def _flag_element(name, index, arr):
    if index is None or not isinstance(arr, np.ndarray) or np.ndim(arr[index]) != 0:
        raise NvshmemError(f"a flag is one element of an integer array (`flags[k]`), not `{name}`")
    if not np.issubdtype(arr.dtype, np.integer):
        raise NvshmemError(f"flag array `{name}` must be integer, not {arr.dtype}")
    return arr


def Putmem(dest, src, pe, flag=None, signal=None):
    """Copies `src` into PE `pe`'s view `dest`; with a flag, counts one put on the target's flag."""
    world, me, frame = _enter(f"Putmem to PE {pe}")
    args = _arg_nodes(frame, ["dest", "src", "pe", "flag", "signal"])
    pe = int(pe)
    if not 0 <= pe < world.n:
        raise NvshmemError(f"PE {me}: Putmem to PE {pe}, outside [0, {world.n})")
    if (flag is None) != (signal is None):
        raise NvshmemError("Putmem takes flag and signal together or neither")
    src = np.asarray(src)
    name, index = _split(args["dest"], frame)
    target = _peer_array(world, pe, name)
    view = target if index is None else target[index]
    if not isinstance(view, np.ndarray) or view.shape != src.shape or view.dtype != src.dtype:
        raise NvshmemError(
            f"PE {me}: Putmem of {src.shape} {src.dtype} into `{ast.unparse(args['dest'])}` of "
            f"shape {getattr(view, 'shape', ())} {getattr(view, 'dtype', type(view).__name__)}")
    with world.cond:
        view[...] = src
        if flag is not None:
            fname, findex = _split(args["flag"], frame)
            flags = _flag_element(fname, findex, _peer_array(world, pe, fname))
            flags[findex] += 1
            reached = int(flags[findex])
            if reached != int(signal):
                err = SignalMismatch(
                    f"PE {me}: Putmem signals {fname}[{findex}] of PE {pe} with {int(signal)}, but it "
                    f"is put number {reached} on that flag (signals count the puts on a flag from 0)")
                world.failed = world.failed or err
                world.cond.notify_all()
                raise err
        world.where[me] = "running"
        world.cond.notify_all()


def SignalWait(flag, signal):
    """Blocks until the local flag element has reached `signal`."""
    world, me, frame = _enter("SignalWait")
    args = _arg_nodes(frame, ["flag", "signal"])
    fname, findex = _split(args["flag"], frame)
    flags = _flag_element(fname, findex, _lookup(frame, fname))
    want = int(signal)
    deadline = time.monotonic() + world.timeout
    with world.cond:
        world.where[me] = f"SignalWait({fname}[{findex}], {want}), flag at {int(flags[findex])}"
        while int(flags[findex]) < want:
            if world.failed is not None:
                raise NvshmemError(f"PE {me}: stopped waiting, another PE failed") from world.failed
            left = deadline - time.monotonic()
            if left <= 0:
                world.where[me] = f"SignalWait({fname}[{findex}], {want}), flag at {int(flags[findex])}"
                raise _deadlock(world, f"PE {me} waits for {fname}[{findex}] >= {want}")
            world.cond.wait(min(left, 0.05))
        world.where[me] = "running"


def run(fn, n_pes, make_args, timeout=30.0):
    """Runs `fn(*make_args(pe, n_pes))` on `n_pes` PEs (threads) and returns each PE's argument
    tuple after the run (in PE order). Arguments are built in PE order before any PE starts.
    Raises the first PE's error; a wait longer than `timeout` seconds is a `Deadlock`."""
    world = _World(int(n_pes), float(timeout))
    args = [tuple(make_args(pe, world.n)) for pe in range(world.n)]
    errors = [None] * world.n

    def body(pe):
        _local.world, _local.pe = world, pe
        try:
            fn(*args[pe])
        except BaseException as e:  # noqa: BLE001 - reported below
            errors[pe] = e
            with world.cond:
                world.failed = world.failed or e
                world.cond.notify_all()
        finally:
            with world.cond:
                world.where[pe] = "returned" if errors[pe] is None else f"failed: {errors[pe]!r}"
                world.cond.notify_all()
            _local.world = None

    threads = [threading.Thread(target=body, args=(pe,), name=f"nvshmem-pe{pe}", daemon=True)
               for pe in range(world.n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(world.timeout * 4 + 10)
        if t.is_alive():
            raise Deadlock(f"{t.name} did not finish ({'; '.join(world.where)})")
    # The root cause first: a Deadlock or SignalMismatch over "another PE failed".
    primary = [e for e in errors if e is not None and type(e) is not NvshmemError]
    first = primary[0] if primary else next((e for e in errors if e is not None), None)
    if first is not None:
        raise first
    return args
