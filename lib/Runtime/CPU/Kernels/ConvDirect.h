//===- ConvDirect.h - convolutions of few input channels, direct -*- C++
//-*-===//
//
// A network's first convolution reads an image: 3 channels (1 or 4 at
// times), a 3x3 to 7x7 window at stride 2 on the largest map of the model.
// im2col writes its product's whole right operand, 27 to 147 rows of every
// output position, and reads it back, for a product only 27 to 147 deep.
// This path forms the taps of one output row in a small buffer instead and
// sums them straight into the output, with the window's column stride
// split into phases so that every tap is a contiguous load.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVDIRECT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVDIRECT_H

#include "ConvEntry.h"
#include "ConvGeometry.h"

namespace oomplan {
namespace runtime {
namespace cpu {

/// Whether the direct path takes a float 2-D convolution of Channels input
/// channels (group 1) into OutChannels: at most DirectMaxChannels inputs,
/// undilated, a column stride of at most 4, at least 16 outputs a row (one
/// whole tile), at most 256 taps, and the rows of taps and the packed
/// weights within the path's stack buffers.
bool directConvApplies(const WindowGeometry &G, ElementType Type, int64_t Group,
                       int64_t Channels, int64_t OutChannels);

/// Input channels up to which the path applies: images (gray, RGB, RGBA).
constexpr int64_t DirectMaxChannels = 4;

/// The convolution of C (inputs X, W, optional B; output Y): Y = conv + B,
/// or Y += conv + B when Accumulate, each output's sum taken in im2col's
/// order of taps from the same start as convGemm's, so the values are that
/// path's. Post sees each output row of all channels once, when final; with
/// Clamp the clamp is applied as the outputs are stored and Post is not
/// called. Call only where directConvApplies.
void directConv(const KernelContext &C, const WindowGeometry &G,
                bool Accumulate, ConvTileFn Post, const ConvClamp *Clamp);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
