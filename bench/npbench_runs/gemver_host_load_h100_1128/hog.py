# A NumPy process streaming 256 MiB arrays on the host for argv[1] seconds: the load a
# reference run puts beside the timed cases.
import sys
import time
import numpy as np
a = np.random.rand(1 << 25)
b = np.empty_like(a)
end = time.time() + float(sys.argv[1])
while time.time() < end:
    np.copyto(b, a)
    a, b = b, a
