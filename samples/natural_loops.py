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
        ey[0, :] = fict[t]
        #pragma 1:ey.shape[0]=>parallel :ey.shape[1]=>parallel
        ey[1:, :] = ey[1:, :] - 0.5 * (hz[1:, :] - hz[:-1, :])
        #pragma :ex.shape[0]=>parallel 1:ex.shape[1]=>parallel
        ex[:, 1:] = ex[:, 1:] - 0.5 * (hz[:, 1:] - hz[:, :-1])
        #pragma :hz.shape[0]-1=>parallel :hz.shape[1]-1=>parallel
        hz[:-1, :-1] = hz[:-1, :-1] - 0.7 * (ex[:-1, 1:] - ex[:-1, :-1] + ey[1:, :-1] - ey[:-1, :-1])


def reflecting_ends(A, B, N, T):
    # A 1-D smoothing whose ends copy their neighbours each step (bare element assignments),
    # and a bare slice copy back.
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        B[0] = B[1]
        B[N - 1] = B[N - 2]
        A[:] = B


def decaying_wave(u, v, N, T, dt, decay):
    # A 1-D wave whose time step shrinks every step; the last step size is returned.
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        #pragma parallel for simd
        for i in range(N):
            u[i] = u[i] + dt * v[i]
        dt = dt * decay
    return dt


def wave_with_clock(u, v, N, T, dt):
    # The step size follows the loop variable, which the blocked kernel does not count: the
    # loop stays one plain persistent kernel.
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        #pragma parallel for simd
        for i in range(N):
            u[i] = u[i] + dt * v[i]
        dt = 0.1 / (t + 2)
    return dt


def swap_smooth(A, B, N, T):
    # Ping-pong buffers: the result is in whichever array `A` names after the loop.
    for t in range(T):
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = (A[i - 1] + A[i] + A[i + 1]) / 3.0
        B[0] = A[0]
        B[N - 1] = A[N - 1]
        A, B = B, A
    return A


def counted_steps(A, N, T):
    # A counter and a scalar only one step uses (`w`, computed before the region that reads
    # it, from the loop variable and the counter).
    steps = 0
    for t in range(T):
        w = 1.0 / (t + 1 + steps)
        #pragma parallel for simd
        for i in range(N):
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
        #pragma parallel for simd shared(diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
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
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        diff = np.max(np.abs(B[1:-1] - A[1:-1]))
        A, B = B, A
        it += 1
    return it


def relax_until_small(A, B, N, tol, max_iter):
    # The same with a bounded for loop that breaks, OpenMP's reduction clause and a copy back.
    for it in range(max_iter):
        diff = 0.0
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
        #pragma parallel for simd
        for i in range(1, N - 1):
            A[i] = B[i]
        if diff < tol:
            break
    return diff


def gemver_loops(alpha, beta, A, u1, v1, u2, v2, w, x, y, z):
    # gemver in loop form: the update of A runs inside the column reduction that reads it
    # (passes/fuse_into_reduction.rs), so A crosses memory once less.
    N = A.shape[0]
    #pragma parallel for
    for i in range(N):
        #pragma simd
        for j in range(N):
            A[i, j] = A[i, j] + u1[i] * v1[j] + u2[i] * v2[j]
    #pragma parallel for simd
    for j in range(N):
        s = 0.0
        for i in range(N):
            s += A[i, j] * y[i]
        x[j] = x[j] + beta * s
        x[j] = x[j] + z[j]
    #pragma parallel for
    for i in range(N):
        s = 0.0
        #pragma simd
        for j in range(N):
            s += A[i, j] * x[j]
        w[i] = w[i] + alpha * s


def smooth_2d_swap(A, B, T):
    # A 2-D smoothing as users write it: extents unpacked from a shape, edge rows and columns
    # copied by bare lines that use them, the buffers swapped.
    M, N = A.shape
    for t in range(T):
        #pragma parallel for
        for i in range(1, M - 1):
            #pragma simd
            for j in range(1, N - 1):
                B[i, j] = 0.25 * (A[i - 1, j] + A[i + 1, j] + A[i, j - 1] + A[i, j + 1])
        B[0, :] = A[0, :]
        B[M - 1, :] = A[M - 1, :]
        B[:, 0] = A[:, 0]
        B[:, N - 1] = A[:, N - 1]
        A, B = B, A
    return A


def last_step(A, N, T):
    # The loop variable read after the loop: its last value, or the value it had before when
    # the loop runs no iteration.
    t = -1
    for t in range(T):
        #pragma parallel for simd
        for i in range(N):
            A[i] = 0.5 * A[i] + t
    return t


def strided_last_step(A, N, T):
    # The same over a strided range, the variable unbound before the loop (reading it after a
    # loop of no iteration is Python's UnboundLocalError, compiled or not).
    for t in range(1, T, 3):
        #pragma parallel for simd
        for i in range(N):
            A[i] = 0.5 * A[i] + t
    return t


def steps_until_small(A, B, N, tol, max_iter):
    # A bounded convergence loop that breaks: the loop variable after it is the step it broke
    # at, or the last one.
    for it in range(max_iter):
        diff = 0.0
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
        #pragma parallel for simd
        for i in range(1, N - 1):
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
        #pragma parallel for simd shared(diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
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
        #pragma parallel for simd
        for i in range(N):
            A[i] = A[i] * s + k + m
    return s, k, m


def counted_from(A, N, T, k):
    # A counter started from a parameter: its type is the caller's (an int stays an int, a
    # float holding an integer stays a float).
    for t in range(T):
        k += 1
        #pragma parallel for simd
        for i in range(N):
            A[i] = 0.5 * A[i] + k
    return k


def offset_counter(A, N, T):
    # A counter started from a float with a fraction: it counts in floats, as Python does.
    c = 0.5
    for t in range(T):
        c += 1
        #pragma parallel for simd
        for i in range(N):
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
        #pragma parallel for simd
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
        diff = 0.0
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            R[i] = B[i] - A[i]
            diff = max(diff, abs(R[i]))
        #pragma parallel for simd
        for i in range(1, N - 1):
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
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
        B[0] = A[0]
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
        #pragma parallel for simd shared(speed)
        for i in range(1, N - 1):
            v[i] = 0.5 * v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
            speed = max(speed, abs(v[i]))
        if speed < tol:
            break
        dt = dt * decay
        #pragma parallel for simd
        for i in range(N):
            u[i] = u[i] + dt * v[i]
    return it, dt, speed


def within_budget(A, N, budget, max_iter):
    # The break as the body's first statement: an iteration past the budget does nothing.
    spent = 0
    for it in range(max_iter):
        if spent >= budget:
            break
        #pragma parallel for simd
        for i in range(N):
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
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
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
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
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
        #pragma parallel for reduction(max:diff)
        for i in range(1, n - 1):
            y[i] = 0.5 * (x[i - 1] + x[i + 1])
            diff = max(diff, abs(y[i] - x[i]))
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
        #pragma parallel for simd
        for i in range(1, N - 1):
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        #pragma parallel for simd
        for i in range(N):
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
        #pragma parallel for simd
        for i in range(N):
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
        #pragma parallel for simd reduction(max:diff)
        for i in range(1, N - 1):
            B[i] = 0.25 * A[i - 1] + 0.5 * A[i] + 0.25 * A[i + 1]
            diff = max(diff, abs(B[i] - A[i]))
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
        #pragma parallel for simd
        for i in range(1, N - 1):
            v[i] = v[i] + dt * (u[i - 1] - 2.0 * u[i] + u[i + 1])
        #pragma parallel for simd
        for i in range(N):
            u[i] = u[i] + dt * v[i]
        if dt > floor:
            dt = dt * decay
    return dt


def int_counter(x, T):
    # A host int the loop reads and never assigns: the counter stays an int, as Python keeps it.
    step = 3
    hits = 0
    for t in range(T):
        #pragma parallel for
        for i in range(x.shape[0]):
            x[i] = x[i] + 1.0
        hits = hits + step
    return hits
