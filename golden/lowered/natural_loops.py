# appyc 0.1.0 --emit lowered: samples/natural_loops.py after the high-level passes (assembly APPy).
"""Time loops written the way APPy users write them, each run as one persistent kernel.

Exercises: bare host slice and element assignments in a time loop (fdtd_2d's `ey[0, :] =
fict[t]`, boundary copies), which become regions (passes/device_statements.rs) so the loop stays
on the device; host scalars updated every step (a decaying time step, a counter, a value one step
uses), `if`s of them (nested, `elif`/`else`, a break after an assignment in a branch) and buffers
swapped with `A, B = B, A`, which every program of the persistent kernel computes alike
(schedule/host_steps.rs), with the values the function reads after the loop returned: the
loop variable's last value (also where a loop breaks, anywhere in the body: what follows a break
runs only in iterations that go on), counters in the type Python gives them (a float counter
stays a float), `a or b` as the operand Python picks, nothing bound or changed by no iteration.
"""
import numpy as np


def yee_natural(ex, ey, hz, fict, T):
    # fdtd_2d as APPy's port writes it: the source row is a bare line.
    for t in range(T):
        # _yee_natural_kernel0
        #pragma parallel for simd
        for _p0 in range(0, ey.shape[1], 1):
            _p0 = appy.vidx(_p0, appy.MVL, ey.shape[1])
            ey[0, _p0] = fict[t]
        # _yee_natural_kernel1
        #pragma parallel for simd
        for _p0 in range(1, ey.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, ey.shape[0])
            #pragma parallel for simd
            for _p1 in range(0, ey.shape[1], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, ey.shape[1])
                ey[_p0, _p1] = ey[_p0, _p1] - 0.5 * (hz[_p0, _p1] - hz[_p0 - 1, _p1])
        # _yee_natural_kernel2
        #pragma parallel for simd
        for _p0 in range(0, ex.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, ex.shape[0])
            #pragma parallel for simd
            for _p1 in range(1, ex.shape[1], 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, ex.shape[1])
                ex[_p0, _p1] = ex[_p0, _p1] - 0.5 * (hz[_p0, _p1] - hz[_p0, _p1 - 1])
        # _yee_natural_kernel3
        #pragma parallel for simd
        for _p0 in range(0, hz.shape[0] - 1, 1):
            _p0 = appy.vidx(_p0, appy.ROW_BLOCK, hz.shape[0] - 1)
            #pragma parallel for simd
            for _p1 in range(0, hz.shape[1] - 1, 1):
                _p1 = appy.vidx(_p1, appy.MVL // appy.ROW_BLOCK, hz.shape[1] - 1)
                hz[_p0, _p1] = hz[_p0, _p1] - 0.7 * (ex[_p0, _p1 + 1] - ex[_p0, _p1] + ey[_p0 + 1, _p1] - ey[_p0, _p1])


def reflecting_ends(A, B, N, T):
    # A 1-D smoothing whose ends copy their neighbours each step (bare element assignments),
    # and a bare slice copy back.
    for t in range(T):
        # _reflecting_ends_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        # _reflecting_ends_kernel1
        #pragma sequential for
        for _once in range(0, 1, 1):
            appy.syncthreads()
            B[0] = B[1]
            appy.syncthreads()
        # _reflecting_ends_kernel2
        #pragma sequential for
        for _once1 in range(0, 1, 1):
            appy.syncthreads()
            B[N - 1] = B[N - 2]
            appy.syncthreads()
        # _reflecting_ends_kernel3
        #pragma parallel for simd
        for _p0 in range(0, A.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.MVL, A.shape[0])
            A[_p0] = B[_p0]


def decaying_wave(u, v, N, T, dt, decay):
    # A 1-D wave whose time step shrinks every step; the last step size is returned.
    for t in range(T):
        # _decaying_wave_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        # _decaying_wave_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            u[i] = u[i] + dt * v[i]
        dt = dt * decay
    return dt


def wave_with_clock(u, v, N, T, dt):
    # The step size follows the loop variable, which the blocked kernel does not count: the
    # loop stays one plain persistent kernel.
    for t in range(T):
        # _wave_with_clock_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        # _wave_with_clock_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            u[i] = u[i] + dt * v[i]
        dt = 0.1 / (t + 2)
    return dt


def swap_smooth(A, B, N, T):
    # Ping-pong buffers: the result is in whichever array `A` names after the loop.
    for t in range(T):
        # _swap_smooth_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0
        # _swap_smooth_kernel1
        #pragma sequential for
        for _once in range(0, 1, 1):
            B[0] = A[0]
        # _swap_smooth_kernel2
        #pragma sequential for
        for _once1 in range(0, 1, 1):
            B[N - 1] = A[N - 1]
        A, B = B, A
    return A


def counted_steps(A, N, T):
    # A counter and a scalar only one step uses (`w`, computed before the region that reads
    # it, from the loop variable and the counter).
    steps = 0
    for t in range(T):
        w = 1.0 / (t + 1 + steps)
        # _counted_steps_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = A[i] * (1.0 - w) + w * i
        steps += 1
    return steps


def relax_to_tolerance(A, B, N, tol, max_iter):
    # A convergence loop: iterate until the largest change is below `tol` (or `max_iter`), the
    # change reduced on the device each iteration, the buffers swapped.
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        diff = 0.0
        # _relax_to_tolerance_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        A, B = B, A
        it += 1
    return it


def relax_open_slices(A, B, tol, max_iter):
    # The convergence test as NumPy code with open slice bounds, `B[1:-1] - A[1:-1]`: its
    # lengths (each array's less two) are checked equal at the launch, as NumPy's broadcasting
    # requires, and the loop stays one persistent kernel (it ran on the host before).
    N = A.shape[0]
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _relax_open_slices_kernel0 below
        # _relax_open_slices_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(np.abs(_B_stored - A[i])))
        A, B = B, A
        it += 1
    return it


def relax_until_small(A, B, N, tol, max_iter):
    # The same with a bounded for loop that breaks, OpenMP's reduction clause and a copy back.
    for it in range(max_iter):
        diff = 0.0
        # _relax_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        # _relax_until_small_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = B[i]
        if diff < tol:
            break
    return diff


def gemver_loops(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    # gemver in loop form: the update of A runs inside the column reduction that reads it
    # (passes/fuse_into_reduction.rs), so A crosses memory once less.
    N = A.shape[0]
    # appyc: this region runs inside _gemver_loops_kernel1 below
    # _gemver_loops_kernel1
    #pragma parallel for simd
    for j in range(0, N, 1):
        j = appy.vidx(j, appy.MVL, N)
        s = 0.0
        for _i_base in range(0, N, 32):
            i = appy.vidx(_i_base, 32, N)
            _A_ij = A.dtype.type(A[i, j] + u1[i] * v1[j] + u2[i] * v2[j])
            A[i, j] = _A_ij
            s = s + sum(_A_ij * y[i], axis=0)
        _x_stored = x.dtype.type(x[j] + beta * s)
        x[j] = _x_stored
        x[j] = _x_stored + z[j]
    # _gemver_loops_kernel2
    #pragma parallel for
    for i in range(0, N, 1):
        s = 0.0
        for _j_base in range(0, N, appy.MVL):
            j = appy.vidx(_j_base, appy.MVL, N)
            s = s + sum(A[i, j] * x[j])
        w[i] = w[i] + alpha * s


def smooth_2d_swap(A, B, T):
    # A 2-D smoothing as users write it: extents unpacked from a shape, edge rows and columns
    # copied by bare lines that use them, the buffers swapped.
    M, N = A.shape
    for t in range(T):
        # _smooth_2d_swap_kernel0
        #pragma parallel for simd
        for i in range(1, M - 1, 1):
            i = appy.vidx(i, appy.ROW_BLOCK, M - 1)
            #pragma parallel for simd
            for j in range(1, N - 1, 1):
                j = appy.vidx(j, appy.MVL // appy.ROW_BLOCK, N - 1)
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        # _smooth_2d_swap_kernel1
        #pragma parallel for simd
        for _p0 in range(0, B.shape[1], 1):
            _p0 = appy.vidx(_p0, appy.MVL, B.shape[1])
            B[0, _p0] = A[0, _p0]
        # _smooth_2d_swap_kernel2
        #pragma parallel for simd
        for _p0 in range(0, B.shape[1], 1):
            _p0 = appy.vidx(_p0, appy.MVL, B.shape[1])
            B[M - 1, _p0] = A[M - 1, _p0]
        # _smooth_2d_swap_kernel3
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.MVL, B.shape[0])
            B[_p0, 0] = A[_p0, 0]
        # _smooth_2d_swap_kernel4
        #pragma parallel for simd
        for _p0 in range(0, B.shape[0], 1):
            _p0 = appy.vidx(_p0, appy.MVL, B.shape[0])
            B[_p0, N - 1] = A[_p0, N - 1]
        A, B = B, A
    return A


def last_step(A, N, T):
    # The loop variable read after the loop: its last value, or the value it had before when
    # the loop runs no iteration.
    t = -1
    for t in range(T):
        # _last_step_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = 0.5 * A[i] + t
    return t


def strided_last_step(A, N, T):
    # The same over a strided range, the variable unbound before the loop (reading it after a
    # loop of no iteration is Python's UnboundLocalError, compiled or not).
    for t in range(1, T, 3):
        # _strided_last_step_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = 0.5 * A[i] + t
    return t


def steps_until_small(A, B, N, tol, max_iter):
    # A bounded convergence loop that breaks: the loop variable after it is the step it broke
    # at, or the last one.
    for it in range(max_iter):
        diff = 0.0
        # _steps_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        # _steps_until_small_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = B[i]
        if diff < tol:
            break
    return it


def counters_until_small(A, B, N, tol, max_iter):
    # Counters as users write them: a float one stays a float and an int one an int (Python's
    # types), a flag is a bool, and a while loop that breaks.
    sweeps = 0.0
    pairs = 0
    diff = tol + 1.0
    while sweeps < max_iter:
        diff = 0.0
        # _counters_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        A, B = B, A
        sweeps += 1
        pairs = pairs + 2
        small = diff < tol
        if small:
            break
    return sweeps, pairs, small


def or_defaults(A, N, T, scale):
    # `a or b` and `a and b` on numbers give an operand, as Python's: a zero scale falls back to
    # a default, and the first step adds nothing.
    for t in range(T):
        s = scale or 0.5
        k = t and t + 2
        m = t or -1
        # _or_defaults_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = A[i] * s + k + m
    return s, k, m


def counted_from(A, N, T, k):
    # A counter started from a parameter: its type is the caller's (an int stays an int, a
    # float holding an integer stays a float).
    for t in range(T):
        k += 1
        # _counted_from_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = 0.5 * A[i] + k
    return k


def offset_counter(A, N, T):
    # A counter started from a float with a fraction: it counts in floats, as Python does.
    c = 0.5
    for t in range(T):
        c += 1
        # _offset_counter_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = 0.5 * A[i] + c
    return c


def smooth_then_measure(A, B, R, N, tol, max_iter):
    # The reduced change comes from a phase after one that does not touch it, so the first
    # phase of an iteration keeps `diff` as the last iteration left it (the interpreter runs a
    # phase a launch, and a launch of the first phase alone once stored `diff` as a Python
    # float, which failed).
    diff = tol + 1.0
    it = 0
    while diff > tol and it < max_iter:
        # appyc: this region runs inside _smooth_then_measure_kernel0 below
        diff = 0.0
        # _smooth_then_measure_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            _R_stored = R.dtype.type(_B_stored - A[i])
            R[i] = _R_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_R_stored)))
        # _smooth_then_measure_kernel1
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            A[i] = B[i]
        it += 1
    return it, diff


def swap_until_small(A, B, N, tol, max_iter):
    # A convergence loop whose break more statements follow: the buffers swap and the counter
    # steps only after an iteration that goes on, so after a break `A` still names the last
    # input (read after the loop), `B` the newest values, and `sweeps` counts the swaps (`it`
    # where it broke).
    sweeps = 0
    for it in range(max_iter):
        diff = 0.0
        # _swap_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        # _swap_until_small_kernel1
        #pragma sequential for
        for _once in range(0, 1, 1):
            B[0] = A[0]
        # _swap_until_small_kernel2
        #pragma sequential for
        for _once1 in range(0, 1, 1):
            B[N - 1] = A[N - 1]
        if diff < tol:
            break
        A, B = B, A
        sweeps += 1
    return float(A[1]), it, sweeps, diff


def damped_until_small(u, v, N, tol, max_iter, dt, decay):
    # A break between two regions: the step size shrinks and `u` moves only in an iteration
    # that goes on; the step size after the loop is the last one used.
    for it in range(max_iter):
        speed = 0.0
        # _damped_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _v_stored = v.dtype.type(0.5 * v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1]))
            v[i] = _v_stored
            #pragma atomic
            _speed_shared[0] = max(_speed_shared[0], max(abs(_v_stored)))
        if speed < tol:
            break
        dt = dt * decay
        # _damped_until_small_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            u[i] = u[i] + dt * v[i]
    return it, dt, speed


def within_budget(A, N, budget, max_iter):
    # The break as the body's first statement: an iteration past the budget does nothing.
    spent = 0
    for it in range(max_iter):
        if spent >= budget:
            break
        # _within_budget_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = 0.5 * A[i] + it
        spent += it + 1
    return it, spent, float(A[0])


def until_done(A, B, N, tol, cap):
    # A while loop on a flag with a cap checked mid-body: after a break the loop must not
    # resume because `not done` still holds, and `done` keeps the host's False when the cap
    # is 0.
    done = False
    it = 0
    while not done:
        diff = 0.0
        # _until_done_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        if it >= cap:
            break
        A, B = B, A
        done = diff < tol
        it += 1
    return it, done, diff


def marks_until_small(A, B, N, tol, max_iter):
    # Names first assigned after the break keep their values from before the loop when the
    # loop breaks at once: a flag and the last step that went on.
    small = False
    last = -1
    for it in range(max_iter):
        diff = 0.0
        # _marks_until_small_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        if diff < tol:
            break
        small = diff < 4.0 * tol
        last = it
        A, B = B, A
    return small, last, diff


def relax_converged(x, y, tol, max_iter):
    # A convergence loop as users write it: the flag is set in the iteration that breaks, and
    # the buffers swap and the counter steps before the test.
    n = x.shape[0]
    it = 0
    converged = False
    while it < max_iter:
        diff = 0.0
        # _relax_converged_kernel0
        #pragma parallel for simd
        for i in range(1, n - 1, 1):
            i = appy.vidx(i, appy.MVL, n - 1)
            _y_stored = y.dtype.type(0.5 * (x[i - 1] + x[i + 1]))
            y[i] = _y_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_y_stored - x[i])))
        x, y = y, x
        it += 1
        if diff < tol:
            converged = True
            break
    return it, converged


def rescale_every(u, v, N, T, dt, k):
    # An `if`/`else` on the loop variable: the step size halves every k-th step and grows a
    # little on the others, through a factor both branches assign (unbound before the loop,
    # so it needs no value from the host).
    for t in range(T):
        # _rescale_every_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        # _rescale_every_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            u[i] = u[i] + dt * v[i]
        if t % k == 0:
            scale = 0.5
        else:
            scale = 1.05
        dt = dt * scale
    return dt, scale


def nested_gain(A, N, T, lo, hi):
    # Nested ifs of scalars before the region that reads the gain: on even steps it grows (and
    # counts) below `hi` and falls back to `lo` above it; on odd steps it shrinks while above 1.
    gain = 1.0
    ups = 0
    for t in range(T):
        if t % 2 == 0:
            if gain < hi:
                gain = gain * 1.5
                ups += 1
            else:
                gain = lo
        elif gain > 1.0:
            gain = gain - 0.25
        # _nested_gain_kernel0
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            A[i] = A[i] * 0.5 + gain
    return gain, ups


def watch_change(A, B, N, tol, start, max_iter):
    # The largest change so far (`if diff > largest`), a break after an assignment in an
    # `elif` (the reason is set in the iteration that breaks), the quiet steps counted in the
    # `else`; the swap after the `if` runs only in iterations that go on.
    largest = float(start)
    reason = 0
    quiet = 0
    for it in range(max_iter):
        diff = 0.0
        # _watch_change_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            _B_stored = B.dtype.type(0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1])
            B[i] = _B_stored
            #pragma atomic
            _diff_shared[0] = max(_diff_shared[0], max(abs(_B_stored - A[i])))
        if diff > largest:
            largest = diff
        elif diff < tol:
            reason = 1
            break
        else:
            quiet += 1
        A, B = B, A
    return largest, reason, quiet, it


def floored_wave(u, v, N, T, dt, decay, floor):
    # The step size shrinks until it reaches a floor: an `if` of host scalars that reads no loop
    # variable, so the loop is still temporally blocked.
    for t in range(T):
        # _floored_wave_kernel0
        #pragma parallel for simd
        for i in range(1, N - 1, 1):
            i = appy.vidx(i, appy.MVL, N - 1)
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        # _floored_wave_kernel1
        #pragma parallel for simd
        for i in range(0, N, 1):
            i = appy.vidx(i, appy.MVL, N)
            u[i] = u[i] + dt * v[i]
        if dt > floor:
            dt = dt * decay
    return dt


def int_counter(x, T):
    # A host int the loop reads and never assigns: the counter stays an int, as Python keeps it.
    step = 3
    hits = 0
    for t in range(T):
        # _int_counter_kernel0
        #pragma parallel for simd
        for i in range(0, x.shape[0], 1):
            i = appy.vidx(i, appy.MVL, x.shape[0])
            x[i] = x[i] + 1.0
        hits = hits + step
    return hits
