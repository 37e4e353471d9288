//===- TensorScatter.cpp - CPU kernel: TensorScatter (opset 24) -----------===//
//
// A KV cache written at each batch row's write index: present = past with
// update's sequence positions copied in at write_indices[b] (0 when absent)
// along the axis, wrapping modulo the cache length in "circular" mode. The
// op is in place by design (OpTable: the output may take past's bytes), so
// the copy of past is skipped when the plan aliases them; rows along the
// axis move with one memcpy each, any element type.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cstring>

namespace oomplan {
namespace runtime {
namespace cpu {

llvm::Error tensorScatterShape(const KernelContext &C, ScatterGeometry &G) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &Past = C.Inputs[0], &Upd = C.Inputs[1], &Out = C.Outputs[0];
  const int64_t R = int64_t(Past.Dims.size());
  int64_t Axis = C.N.getInt("axis", -2);
  if (!normAxis(Axis, R) || Axis == 0)
    return C.badInput("axis must name a dim other than the batch's");
  const std::string Mode = C.N.getString("mode", "linear");
  if (Mode != "linear" && Mode != "circular")
    return C.unsupported("mode '" + Mode + "'");
  if (int64_t(Upd.Dims.size()) != R || Upd.Type != Past.Type ||
      Out.Type != Past.Type || Out.numElements() != Past.numElements())
    return C.badInput("update must have past_cache's rank and type");
  for (int64_t A = 0; A < R; ++A)
    if (A != Axis && Upd.Dims[A] != Past.Dims[A])
      return C.badInput("update and past_cache differ in dim " +
                        llvm::Twine(A));
  G = ScatterGeometry();
  G.Max = Past.Dims[Axis];
  G.Seq = Upd.Dims[Axis];
  if (G.Seq > G.Max)
    return C.badInput("update is longer than the cache");
  G.Row = productOf(Past.Dims, size_t(Axis) + 1, size_t(R));
  G.Prefix = productOf(Past.Dims, 0, size_t(Axis));
  G.PerBatch = productOf(Past.Dims, 1, size_t(Axis));
  G.Circular = Mode == "circular";
  if (hasInput(C, 2) && int64_t(C.Inputs[2].numElements()) != Past.Dims[0])
    return C.badInput("write_indices must hold one integer per batch row");
  return llvm::Error::success();
}

namespace {

llvm::Error runTensorScatter(const KernelContext &C) {
  ScatterGeometry G;
  if (llvm::Error E = tensorScatterShape(C, G))
    return E;
  const TensorRef &Past = C.Inputs[0], &Upd = C.Inputs[1], &Out = C.Outputs[0];
  DimVector Index(size_t(Past.Dims[0]), 0);
  if (hasInput(C, 2) && !readInts(C.Inputs[2], Index))
    return C.badInput("write_indices must hold one integer per batch row");
  copyUnlessAliased(C);
  const uint64_t Row = uint64_t(G.Row) * elemBytes(Past.Type);
  const int64_t Max = G.Max, Seq = G.Seq;
  for (int64_t P = 0; P < G.Prefix && Seq > 0; ++P) {
    // Reduced first, so that W + S cannot overflow (Seq <= Max here).
    int64_t W = Index[size_t(P / G.PerBatch)];
    if (G.Circular)
      W = ((W % Max) + Max) % Max;
    else if (W < 0 || W > Max - Seq)
      return C.badInput(
          "write index " + llvm::Twine(W) + " + " + llvm::Twine(Seq) +
          " positions exceed the cache length " + llvm::Twine(Max));
    for (int64_t S = 0; S < Seq; ++S) {
      const int64_t Pos = G.Circular ? (W + S) % Max : W + S;
      std::memcpy(Out.data<char>() + uint64_t(P * Max + Pos) * Row,
                  Upd.data<const char>() + uint64_t(P * Seq + S) * Row, Row);
    }
  }
  return llvm::Error::success();
}

} // namespace

void registerTensorScatterKernels(CPUKernelTable &T) {
  addKernel(T, "TensorScatter", Kernel{&runTensorScatter, nullptr, {}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
