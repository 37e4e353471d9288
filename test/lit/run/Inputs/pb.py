#!/usr/bin/env python3
"""TensorProto files for oomplan-run's lit tests, through onnx.numpy_helper
(the reader ONNX's own test data is made for), independent of oomplan.

  pb.py write OUT.pb NAME DTYPE D0xD1 V0,V1,...   (DTYPE: a numpy name)
  pb.py print FILE.pb...                         name dtype [dims] values, a line each
  pb.py round N FILE.pb...                       the same, values rounded to N decimals
"""
import sys

import numpy as np
from onnx import TensorProto, numpy_helper

if sys.argv[1] == "write":
    out, name, dtype, dims, values = sys.argv[2:7]
    shape = [int(d) for d in dims.split("x")] if dims != "scalar" else []
    vals = [float(v) for v in values.split(",")] if values else []
    arr = np.array(vals, dtype=dtype).reshape(shape)
    with open(out, "wb") as f:
        f.write(numpy_helper.from_array(arr, name).SerializeToString())
else:
    digits = int(sys.argv[2]) if sys.argv[1] == "round" else None
    for path in sys.argv[3:] if digits is not None else sys.argv[2:]:
        t = TensorProto()
        with open(path, "rb") as f:
            t.ParseFromString(f.read())
        arr = numpy_helper.to_array(t)
        if digits is None:
            vals = ",".join(repr(v.item()) for v in arr.reshape(-1))
        else:  # "-0.00000" reads as 0: a sign of zero is not a value to check
            vals = ",".join(f"{v.item():.{digits}f}".replace(f"-0.{'0' * digits}", f"0.{'0' * digits}")
                            for v in arr.reshape(-1))
        print(t.name, arr.dtype, list(arr.shape), vals)
