//===- ConvGemm.h - the float convolution's own GEMM ----------*- C++ -*-===//
//
// A convolution's product Y = W * columns, W row-major as ONNX stores it
// (Cout x Cin*KH*KW) and the columns row-major (the input itself for a
// pointwise convolution, an im2col tile otherwise), each output tile
// written once with its bias or residual folded in. OpenBLAS starts from a
// C that a separate pass filled with the bias and packs both whole
// operands on every call; on the short, wide products of pointwise
// convolutions convGemm is the faster, on deep ones OpenBLAS
// (docs/runtime.md has the measurements; Conv.cpp chooses by depth).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVGEMM_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVGEMM_H

#include "ConvEntry.h"
#include <cstdint>

namespace oomplan {
namespace runtime {
namespace cpu {

/// C (M x N, row stride Ldc) = Init + A (M x K, Lda) * B (K x N, Ldb), all
/// row-major, on the calling thread. Init is C's own values plus Bias[m]
/// when Accumulate, else Bias[m] (0 without Bias). Each element's sum runs
/// over k in order, whatever the tiling, so results do not depend on how
/// callers split C. Clamp, when given, clamps each element of C as it is
/// stored the last time (ConvEntry.h).
inline void convGemm(int64_t M, int64_t N, int64_t K, const float *A,
                     int64_t Lda, const float *B, int64_t Ldb, float *C,
                     int64_t Ldc, const float *Bias, bool Accumulate,
                     const ConvClamp *Clamp = nullptr);

/// convGemm of the same A against Images products at once: image i's B at
/// B + i * BStride and its C at C + i * CStride, each element's value the
/// same as convGemm's. Each block of A is packed once for all of them,
/// where convGemm image by image packs it (and reads it from beyond L2)
/// once per image: the small maps' pointwise products, whose few columns
/// repay little.
void convGemmImages(int64_t M, int64_t N, int64_t K, const float *A,
                    int64_t Lda, const float *B, int64_t Ldb, float *C,
                    int64_t Ldc, const float *Bias, bool Accumulate,
                    const ConvClamp *Clamp, int64_t Images, int64_t BStride,
                    int64_t CStride);

inline void convGemm(int64_t M, int64_t N, int64_t K, const float *A,
                     int64_t Lda, const float *B, int64_t Ldb, float *C,
                     int64_t Ldc, const float *Bias, bool Accumulate,
                     const ConvClamp *Clamp) {
  convGemmImages(M, N, K, A, Lda, B, Ldb, C, Ldc, Bias, Accumulate, Clamp, 1, 0,
                 0);
}

/// Conv of C's inputs (X, W, optional B) into its output 0 when the
/// convolution is pointwise and float: Batch images of Group groups, Cg
/// input and Mg output channels a group, OutSize positions. Accumulate and
/// Post and Clamp as runConvInto's (ConvPointwise.cpp).
void pointwiseConvFloat(const KernelContext &C, int64_t Batch, int64_t Group,
                        int64_t Cg, int64_t Mg, int64_t OutSize,
                        bool Accumulate, ConvTileFn Post,
                        const ConvClamp *Clamp);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
