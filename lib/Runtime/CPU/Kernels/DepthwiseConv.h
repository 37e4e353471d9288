//===- DepthwiseConv.h - depthwise convolutions ----------------*- C++ -*-===//
//
// Conv with one input channel per group (MobileNet's and EfficientNet's
// depthwise layers), float and double, called by Conv.cpp's kernel.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEPTHWISECONV_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEPTHWISECONV_H

#include "ConvEntry.h"
#include "ConvGeometry.h"

namespace oomplan {
namespace runtime {
namespace cpu {

/// Conv of C's inputs (X, W, optional B) into output 0 for a depthwise
/// convolution (group == channels, one weight plane per output channel,
/// any channel multiplier): the channel-blocked path where
/// depthwiseBlockedApplies, else a direct loop per output plane. T is
/// float or double; Accumulate, Post and Clamp as runConvInto's (the plane
/// loops leave the clamp to Post).
template <typename T>
void depthwiseConv(const KernelContext &C, const WindowGeometry &G,
                   bool Accumulate, ConvTileFn Post, const ConvClamp *Clamp);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
