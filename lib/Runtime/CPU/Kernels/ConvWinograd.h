//===- ConvWinograd.h - 3x3 convolutions as Winograd F(2x2, 3x3) -*- C++ -*-=//
//
// A 3x3, stride-1 convolution computes each 2x2 block of outputs from a 4x4
// patch of input with 16 products per (output, input) channel pair where
// the direct form needs 36: both operands are transformed into 16
// "positions" (U = G g G^T for the weights, V = B^T d B for each patch),
// the 16 positions multiply as 16 GEMMs over the channels, and A^T m A
// turns each 4x4 result back into 2x2 outputs (Lavin and Gray, "Fast
// Algorithms for Convolutional Neural Networks", 2016). ResNet's 3x3
// layers were 80% of its run, at the GEMM's speed, on im2col.
//
// The path is taken only where its workspace (the transformed weights and,
// per slot, a block of transformed patches and products) is no larger than
// the im2col workspace it replaces, so that a plan's arena never grows for
// it: in practice the wide, shallow layers (64 and 128 channels), whose
// weights are small next to their maps. Deeper layers (ResNet's 256
// channels on 14x14 maps: 4.2 MB of U against 1.8 MB of im2col) take it
// only in a roomy plan (Kernel::RoomyWorkspace), and on 7x7 maps (9.4 MB
// of weights, 16.8 MB of U at 512 channels) in a roomier one
// (Kernel::RoomierWorkspace), each kept where the arena does not grow.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVWINOGRAD_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_CONVWINOGRAD_H

#include "ConvEntry.h"
#include "ConvGeometry.h"
#include <cstdint>

namespace oomplan {
namespace runtime {
namespace cpu {

/// How a convolution runs on this path.
struct WinogradPlan {
  bool Use = false;
  int64_t Slots = 0;  ///< Blocks of tiles in flight at once.
  uint64_t Bytes = 0; ///< Workspace: U, then Slots x (V, M) blocks.
};

/// The plan for a float convolution of geometry G, Batch images, C input
/// and M output channels, Group groups, whose im2col workspace would be
/// Im2colBytes: Use only for 2-D 3x3 windows at stride 1, undilated, one
/// group, and a workspace within Im2colBytes.
WinogradPlan winogradPlan(const WindowGeometry &G, int64_t Batch, int64_t C,
                          int64_t M, int64_t Group, uint64_t Im2colBytes);

/// Output maps below this many positions an image are small (7x7: a
/// quarter of the tiles' outputs fall outside the map).
constexpr int64_t WinogradSmallMap = 128;

/// The plan where the workspace may be larger than im2col's (a roomy
/// plan): the same conditions but the workspace's, on maps of at least
/// WinogradSmallMap positions, and on smaller ones when SmallMaps and
/// there are two blocks of tiles or more (one block is one thread's: the
/// batched im2col path it would replace runs on every thread).
WinogradPlan roomyWinogradPlan(const WindowGeometry &G, int64_t Batch,
                               int64_t C, int64_t M, int64_t Group,
                               bool SmallMaps);

/// The convolution of KC (inputs X, W, optional B; output Y, float) on this
/// path, with P's workspace: Y = conv + B, or Y += conv + B when
/// Accumulate. Post and Clamp as runConvInto's.
void winogradConv(const KernelContext &KC, const WindowGeometry &G,
                  const WinogradPlan &P, bool Accumulate, ConvTileFn Post,
                  const ConvClamp *Clamp);

} // namespace cpu
} // namespace runtime
} // namespace oomplan

#endif
