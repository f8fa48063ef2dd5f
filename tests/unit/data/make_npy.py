"""Writes the .npy files npy_test.cpp reads; run with /usr/bin/python3 from this folder."""
import numpy as np
from numpy.lib import format as npy_format

np.save("numpy_f4_2x3.npy", (np.arange(6, dtype=np.float32).reshape(2, 3) * 0.5 - 1))
np.save("numpy_i8_scalar.npy", np.int64(-7))
np.save("numpy_b1_4.npy", np.array([True, False, False, True]))
np.save("numpy_fortran.npy", np.asfortranarray(np.arange(6, dtype=np.float32).reshape(2, 3)))
np.save("numpy_big_endian.npy", np.arange(3, dtype=">f4"))
with open("numpy_f2_v2.npy", "wb") as f:
    npy_format.write_array(f, np.array([1.5, -2.0, 65504.0], dtype=np.float16), version=(2, 0))
with open("numpy_u2_v3.npy", "wb") as f:
    npy_format.write_array(f, np.array([[1, 65535]], dtype=np.uint16), version=(3, 0))
