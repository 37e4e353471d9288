//===- Batching.cpp - slices of the batch for micro-batch passes ----------===//
//
// Row-major: the slice is Outer blocks of Part.Dims[Axis] * Inner bytes,
// strided by Whole.Dims[Axis] * Inner bytes in the whole tensor.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/Batching.h"
#include <cstring>

using namespace oomplan;
using namespace oomplan::runtime;

void runtime::copyBatchSlice(const TensorRef &Whole, const TensorRef &Part,
                             int Axis, uint64_t Index, bool ToWhole) {
  if (Axis < 0) {
    if (ToWhole)
      std::memcpy(Whole.Data, Part.Data, Part.bytes());
    else
      std::memcpy(Part.Data, Whole.Data, Part.bytes());
    return;
  }
  uint64_t Outer = 1, Inner = elementBits(Part.Type) / 8;
  for (int I = 0; I < Axis; ++I)
    Outer *= uint64_t(Part.Dims[I]);
  for (size_t I = size_t(Axis) + 1; I < Part.Dims.size(); ++I)
    Inner *= uint64_t(Part.Dims[I]);
  uint64_t Block = uint64_t(Part.Dims[Axis]) * Inner;
  uint64_t Stride = uint64_t(Whole.Dims[Axis]) * Inner;
  char *W = static_cast<char *>(Whole.Data) + Index * Block;
  char *P = static_cast<char *>(Part.Data);
  for (uint64_t O = 0; O < Outer; ++O, W += Stride, P += Block) {
    if (ToWhole)
      std::memcpy(W, P, Block);
    else
      std::memcpy(P, W, Block);
  }
}
