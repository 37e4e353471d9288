"""Compares two TensorProto files elementwise: |a - b| <= tol * max(1, |b|).

Usage: compare_outputs.py A.pb B.pb TOL; prints "equal within TOL: N values"
or the first difference, exit 1.
"""
import sys

import numpy as np
import onnx
from onnx import numpy_helper

a = numpy_helper.to_array(onnx.load_tensor(sys.argv[1])).astype(np.float64)
b = numpy_helper.to_array(onnx.load_tensor(sys.argv[2])).astype(np.float64)
tol = float(sys.argv[3])
if a.shape != b.shape:
    sys.exit(f"shapes differ: {a.shape} vs {b.shape}")
bad = np.abs(a - b) > tol * np.maximum(1.0, np.abs(b))
if bad.any():
    i = int(np.flatnonzero(bad)[0])
    sys.exit(f"{int(bad.sum())} values differ; first at {i}: {a.flat[i]} vs {b.flat[i]}")
print(f"equal within {tol:g}: {a.size} values")
