//===- QuantizePoint.h - one element of linear (de)quantization -*- C++ -*-===//
//
// QuantizeLinear's and DequantizeLinear's arithmetic at one element, as
// ONNX's reference computes it: x / scale in float32, rounded half to even
// (numpy.rint; rintf in the default rounding mode, on the host as on the
// device), plus the zero point, saturated to the integer type (NaN to 0);
// and (x - zero point) * scale. A per-axis scale and zero point are
// indexed by the element's position along the axis. In plain types, so
// that the CPU kernels (Quantize.cpp) and the CUDA kernels (CUDA/Kernels/
// Quantize.cu) share one definition.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_QUANTIZEPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_QUANTIZEPOINT_H

#include <cstdint>
#include <math.h>

#ifdef __CUDACC__
#define OOMPLAN_QUANT_HD __host__ __device__
#else
#define OOMPLAN_QUANT_HD
#endif

namespace oomplan {
namespace runtime {
namespace quant {

/// Which element of a per-axis parameter applies to element I: Size
/// elements along the axis, Inner elements after it; {1, 1} per tensor.
struct Axis {
  int64_t Inner = 1, Size = 1;
  /// Opset 21's block_size: Block consecutive elements along the axis
  /// share a parameter, which is then a tensor of the input's rank with
  /// ceil(Size / Block) on the axis. 0: one parameter per axis element.
  int64_t Block = 0;
  OOMPLAN_QUANT_HD int64_t operator()(int64_t I) const {
    if (Block == 0)
      return (I / Inner) % Size;
    const int64_t Row = I / Inner, Blocks = (Size + Block - 1) / Block;
    return ((Row / Size) * Blocks + (Row % Size) / Block) * Inner + I % Inner;
  }
};

/// V rounded half to even, clamped to [Lo, Hi]; NaN gives 0.
OOMPLAN_QUANT_HD inline float saturate(float V, float Lo, float Hi) {
  float R = rintf(V);
  if (!(R == R))
    return 0.0f;
  return R < Lo ? Lo : R > Hi ? Hi : R;
}

/// QuantizeLinear of X with Scale and zero point Zero, into [Lo, Hi] (the
/// output type's range), as a float holding an integer.
OOMPLAN_QUANT_HD inline float quantize(float X, float Scale, float Zero,
                                       float Lo, float Hi) {
  return saturate(rintf(X / Scale) + Zero, Lo, Hi);
}

/// DequantizeLinear of X with Scale and zero point Zero.
OOMPLAN_QUANT_HD inline float dequantize(int64_t X, int64_t Zero, float Scale) {
  return float(X - Zero) * Scale;
}

} // namespace quant
} // namespace runtime
} // namespace oomplan

#endif
