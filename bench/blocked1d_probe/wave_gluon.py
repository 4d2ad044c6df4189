"""The hand-written Gluon kernel of bench/gpu_blocked1d_probe.py: wave_decay's blocked loop with
each chunk in registers and a shared buffer (the design codegen/triton/blocked.rs now emits),
with the signature of appyc's blocked twin (fb8f071) plus R, the guard."""
import triton  # noqa: F401
import triton.language as tl
from triton.experimental import gluon
from triton.experimental.gluon import language as gl


@gluon.jit(do_not_specialize=["_group_lo", "_group_hi", "dt"])
def wave_gluon(v, u, _scratch_v, _scratch_u, N, decay: "fp64", _n, _steps, _chunk, _chunks, _group_lo, _group_hi, _sync, dt: "fp64", _carried, G: gl.constexpr, W: gl.constexpr, HALO: gl.constexpr, R: gl.constexpr, COMPUTE: gl.constexpr, WRITE: gl.constexpr, GRID_SYNC: gl.constexpr):
    _NW: gl.constexpr = gl.num_warps()
    _L: gl.constexpr = gl.BlockedLayout([1], [32], [_NW], [0])
    _SL: gl.constexpr = gl.SwizzledSharedLayout(1, 1, 1, [0])
    _WL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[W, 1]], [W], [0])
    _PL: gl.constexpr = gl.PaddedSharedLayout.with_identity_for([[W // 2, 2 * R]], [W], [0])
    _dt_v = v.dtype.element_ty
    _dt_u = u.dtype.element_ty
    _sm_v = gl.allocate_shared_memory(_dt_v, [W], _PL)._reinterpret(_dt_v, [W + 2 * R, 1], _SL)
    _sm_u = gl.allocate_shared_memory(_dt_u, [W], _PL)._reinterpret(_dt_u, [W + 2 * R, 1], _SL)
    _pid = gl.program_id(0)
    _nprog = gl.num_programs(0)
    _x = gl.arange(0, W, layout=_L)
    _arrived = gl.full((), 0, gl.int64, None)
    dt = gl.full((), -0.0, gl.float64, None) + dt
    for _group in range(_group_lo, _group_hi):
        _count = gl.minimum(G, _steps - _group * G)
        if COMPUTE:
            _dt_at_group = dt
            for _c in range(_pid, _chunks, _nprog):
                dt = _dt_at_group
                _lo = _c * _chunk
                _gi = _lo - HALO + _x
                _inside = (_gi >= 0) & (_gi < _n)
                _s_v = _scratch_v + _c * W
                _s_u = _scratch_u + _c * W
                _r_v = gl.load(v + _gi, mask=_inside, other=0)
                _r_u = gl.load(u + _gi, mask=_inside, other=0)
                _sm_v.index(R)._reinterpret(_dt_v, [W], _WL).store(_r_v)
                _sm_u.index(R)._reinterpret(_dt_u, [W], _WL).store(_r_u)
                gl.thread_barrier()
                for _step in range(_count):
                    _ok = _inside & (_x >= 1) & (_x < W - 1) & (_gi >= 1) & (_gi < (N - 1))
                    _v = (_r_v + (dt * ((_sm_u.index(R - 1)._reinterpret(_dt_u, [W], _WL).load(_L) - (2.0 * _r_u)) + _sm_u.index(R + 1)._reinterpret(_dt_u, [W], _WL).load(_L))))
                    _r_v = gl.where(_ok, _v.to(_dt_v), _r_v)
                    _sm_v.index(R)._reinterpret(_dt_v, [W], _WL).store(_r_v)
                    gl.thread_barrier()
                    _ok = _inside & (_x >= 1) & (_x < W - 1) & (_gi >= 0) & (_gi < N)
                    _v = (_r_u + (dt * _r_v))
                    _r_u = gl.where(_ok, _v.to(_dt_u), _r_u)
                    _sm_u.index(R)._reinterpret(_dt_u, [W], _WL).store(_r_u)
                    gl.thread_barrier()
                    dt = (dt * decay)
                gl.store(_s_v + _x, _r_v)
                gl.store(_s_u + _x, _r_u)
            dt = _dt_at_group
            for _step in range(_count):
                dt = (dt * decay)
            if GRID_SYNC:
                _arrived += _nprog
                gl.thread_barrier()
                gl.atomic_add(_sync, 1, sem="release")
                while gl.atomic_add(_sync, 0, sem="acquire") < _arrived:
                    pass
                gl.thread_barrier()
            else:
                gl.thread_barrier()
        if WRITE:
            for _c in range(_pid, _chunks, _nprog):
                _lo = _c * _chunk
                _gi = _lo - HALO + _x
                _owned = (_gi >= _lo) & (_gi < gl.minimum(_lo + _chunk, _n))
                _s_v = _scratch_v + _c * W
                _s_u = _scratch_u + _c * W
                gl.store(v + _gi, gl.load(_s_v + _x), mask=_owned)
                gl.store(u + _gi, gl.load(_s_u + _x), mask=_owned)
            if GRID_SYNC:
                _arrived += _nprog
                gl.thread_barrier()
                gl.atomic_add(_sync, 1, sem="release")
                while gl.atomic_add(_sync, 0, sem="acquire") < _arrived:
                    pass
                gl.thread_barrier()
            else:
                gl.thread_barrier()
    if _pid == _nprog - 1:
        tl.store(_carried + 0, (dt).to(tl.float64))
