//===- ValueLayout.cpp - tracked contents through Slice and Transpose -----===//
//
// Value propagation through the data-movement ops that exporters use on
// small shape tensors of rank 2 and up. torch.onnx writes F.pad's pads
// (computed from the input's shape in Swin's window attention) as
// Concat -> Reshape [-1, 2] -> Slice (rows reversed, step -1) -> Transpose
// -> Reshape -> Cast: the 1-D cases the rules handled lose the contents at
// the 2-D Slice and Transpose, and "pads must be known" follows. These
// helpers move the tracked elements (symbolic expressions) by index, for
// constant dims only.
//
//===----------------------------------------------------------------------===//
#include "ShapeRules.h"

using namespace oomplan;
using namespace oomplan::shapes;

namespace {
/// Row-major strides of constant dims.
std::vector<int64_t> stridesOf(llvm::ArrayRef<int64_t> Dims) {
  std::vector<int64_t> S(Dims.size(), 1);
  for (size_t A = Dims.size(); A-- > 1;)
    S[A - 1] = S[A] * Dims[A];
  return S;
}
} // namespace

std::optional<std::vector<SymExpr>>
shapes::transposeValues(llvm::ArrayRef<SymExpr> Vals,
                        llvm::ArrayRef<SymExpr> InDims,
                        llvm::ArrayRef<size_t> Perm) {
  std::optional<std::vector<int64_t>> In = constantDims(InDims);
  if (!In || Perm.size() != In->size())
    return std::nullopt;
  std::vector<int64_t> Out, InStride = stridesOf(*In);
  for (size_t P : Perm)
    Out.push_back((*In)[P]);
  std::optional<int64_t> N = constantNumElements(InDims);
  if (!N || size_t(*N) != Vals.size())
    return std::nullopt;
  std::vector<SymExpr> R;
  R.reserve(Vals.size());
  for (int64_t F = 0; F < *N; ++F) {
    // Output coordinates of flat index F, mapped to the input's offset.
    int64_t Rest = F, Src = 0;
    for (size_t A = Out.size(); A-- > 0;) {
      Src += (Rest % Out[A]) * InStride[Perm[A]];
      Rest /= Out[A];
    }
    R.push_back(Vals[Src]);
  }
  return R;
}

std::optional<std::vector<SymExpr>> shapes::sliceValues(
    llvm::ArrayRef<SymExpr> Vals, llvm::ArrayRef<SymExpr> InDims,
    llvm::ArrayRef<SymExpr> OutDims, llvm::ArrayRef<int64_t> Starts,
    llvm::ArrayRef<int64_t> Steps) {
  std::optional<std::vector<int64_t>> In = constantDims(InDims),
                                      Out = constantDims(OutDims);
  std::optional<int64_t> N = constantNumElements(OutDims);
  if (!In || !Out || !N || In->size() != Out->size() ||
      Starts.size() != In->size() || Steps.size() != In->size() ||
      constantNumElements(InDims) != int64_t(Vals.size()))
    return std::nullopt;
  std::vector<int64_t> InStride = stridesOf(*In);
  std::vector<SymExpr> R;
  for (int64_t F = 0; F < *N; ++F) {
    int64_t Rest = F, Src = 0;
    for (size_t A = Out->size(); A-- > 0;) {
      int64_t C = Starts[A] + (Rest % (*Out)[A]) * Steps[A];
      Rest /= (*Out)[A];
      if (C < 0 || C >= (*In)[A])
        return std::nullopt;
      Src += C * InStride[A];
    }
    R.push_back(Vals[Src]);
  }
  return R;
}
