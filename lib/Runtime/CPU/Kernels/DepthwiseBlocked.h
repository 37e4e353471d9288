//===- DepthwiseBlocked.h - depthwise Conv, 8 channels a vector -*- C++ -*-===//
//
// The plane-at-a-time depthwise loops of Conv.cpp vectorize along a row, so
// a row narrower than a vector (the 7x7 and 14x14 maps at the end of every
// mobile network) runs scalar, and a 5x5 window reads and writes each output
// row 25 times. This path puts eight channels in the lanes of one vector
// instead: a tile of the eight planes is copied into a channel-interleaved,
// zero-padded buffer on the stack, every output sums all its taps in
// registers, and the tile is copied back into the planes. The vector width
// no longer depends on the map, and there are no edge cases in the loop.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEPTHWISEBLOCKED_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DEPTHWISEBLOCKED_H

#include "ConvEntry.h"
#include "ConvGeometry.h"

namespace oomplan {
namespace runtime {
namespace cpu {

/// Whether the channel-blocked path takes this depthwise convolution (one
/// input channel per group, one output per input channel, float, 2-D) and
/// pays off over the plane loops: windows of 5 and more at any map size, any
/// window on rows narrower than CompactRowLimit outputs.
bool depthwiseBlockedApplies(const WindowGeometry &G, ElementType Type,
                             int64_t Channels, int64_t OutChannels);

/// Rows narrower than this take the blocked path for any window: measured
/// on MobileNetV2 3x3 layers, faster up to 28 wide, even at 56 and slower
/// at 112.
constexpr int64_t CompactRowLimit = 32;

/// The convolution of C (inputs X, W, optional B; output Y) on this path:
/// Y = conv + B, or Y += conv + B when Accumulate. Post sees each group of
/// up to eight planes once, when they are final; with Clamp (ConvEntry.h)
/// the clamp is applied as the outputs are stored instead, and Post is not
/// called. Call only where depthwiseBlockedApplies.
void depthwiseBlocked(const KernelContext &C, const WindowGeometry &G,
                      bool Accumulate, ConvTileFn Post, const ConvClamp *Clamp);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
