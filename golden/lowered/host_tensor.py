# appyc 0.1.0 --emit lowered: samples/host_tensor.py after the high-level passes (assembly APPy).
"""Host tensor code around a kernel: what stays in torch at function level.

Exercises: unannotated function-level tensor statements (a slice update, `np.sum(..., axis=1)`,
`np.maximum` with a scalar) and a matrix-matrix product `@`, all left as torch operations on the
device, next to a dimension-pragma kernel that uses their results.
"""
import numpy as np


def scale_product(A, B, w, M, N):
    s = torch.sum(A, dim=1) + 1.0
    s[1:-1] = 0.5 * (s[2:] + s[:-2])
    C = A @ B
    C = _appyc_maximum(C, -1.0)
    # _scale_product_kernel0
    #pragma parallel for simd
    for _p0 in range(0, M, 1):
        _p0 = appy.vidx(_p0, appy.ROW_BLOCK, M)
        #pragma parallel for simd
        for _i in range(0, N, 1):
            _i = appy.vidx(_i, appy.MVL // appy.ROW_BLOCK, N)
            C[_p0, _i] = C[_p0, _i] / np.abs(s[_p0]) + w[_i]
    return C
