"""fdtd_2d (PolyBench / NPBench), written as APPy users write it: 2-D FDTD (Yee) update.

Math per step t: ey row 0 = fict[t]; ey -= 0.5 * d(hz)/dx (rows 1..); ex -= 0.5 * d(hz)/dy
(columns 1..); hz -= 0.7 * (d(ex)/dy + d(ey)/dx) on all but the last row and column.
The source row is a bare host line (no pragma), as a user leaves a one-row copy; the three
updates are the same tensor statements as scripts/npbench/fdtd_2d.py.
NPBench `paper` preset: TMAX = 500, NX = 1000, NY = 1200 (float64).
"""
import numpy as np


def fdtd_2d(TMAX, ex, ey, hz, _fict_):
    NX, NY = ex.shape
    for t in range(TMAX):
        ey[0, :] = _fict_[t]
        #pragma 1:NX=>parallel :NY=>parallel
        ey[1:NX, :NY] -= 0.5 * (hz[1:NX, :NY] - hz[0:NX-1, :NY])
        #pragma :NX=>parallel 1:NY=>parallel
        ex[:NX, 1:NY] -= 0.5 * (hz[:NX, 1:NY] - hz[:NX, 0:NY-1])
        #pragma :NX-1=>parallel :NY-1=>parallel
        hz[:NX-1, :NY-1] -= 0.7 * (ex[:NX-1, 1:NY] - ex[:NX-1, :NY-1]
                                   + ey[1:NX, :NY-1] - ey[:NX-1, :NY-1])
