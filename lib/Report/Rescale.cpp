//===- Rescale.cpp - re-planning with tensors resized ---------------------===//
//
// Resizes schedule tensors and re-plans. Sizes change consistently for every
// tensor of a type, and views follow their sources, so in-place and view
// decisions (which need equal sizes) stay as they were; only the placement
// and the peak move.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Rescale.h"
#include "oomplan/Report/Formulas.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::report;

llvm::Expected<Plan> report::replanResized(const Plan &P, ResizeFn Resize,
                                           const PipelineOptions &Opts) {
  Schedule S = P.Sched;
  for (TensorId T = 0; T < S.Tensors.size(); ++T)
    S.Tensors[T].SizeBytes = Resize(T, S.Tensors[T].SizeBytes);
  // A view shares its source's bytes, so it follows the source's new size
  // (a transposed weight of a sharded parameter is a view of the shard),
  // whatever the resize said of its own kind. In step order, so a view of a
  // view follows too.
  for (const Step &St : S.Steps) {
    if (St.ViewOf < 0 || St.Writes.empty() ||
        size_t(St.ViewOf) >= St.Reads.size())
      continue;
    TensorId Src = St.Reads[St.ViewOf], View = St.Writes[0];
    uint64_t OldSrc = P.Sched.Tensors[Src].SizeBytes;
    uint64_t NewSrc = S.Tensors[Src].SizeBytes;
    uint64_t OldView = P.Sched.Tensors[View].SizeBytes;
    if (OldSrc == 0 || OldSrc == NewSrc)
      continue;
    unsigned __int128 Scaled =
        ((unsigned __int128)OldView * NewSrc + OldSrc - 1) / OldSrc;
    S.Tensors[View].SizeBytes =
        uint64_t(std::min<unsigned __int128>(Scaled, NewSrc));
  }
  Lifetimes L = computeLifetimes(S, Opts.Liveness);
  PlanOptions PO = Opts.Placement;
  PO.Limit.CapacityBytes = P.Limit.CapacityBytes;
  return buildPlan(std::move(S), std::move(L), PO);
}

bool report::usesHalfPrecision(const Plan &P, const PlanContext &C) {
  for (TensorId T = 0; T < P.Sched.Tensors.size(); ++T) {
    ElementType Ty = P.Sched.Tensors[T].Type;
    ValueId V = P.Sched.Tensors[T].Value;
    if (Ty == ElementType::Undefined && V != NoId && V < C.Shapes.Values.size())
      Ty = C.Shapes.Values[V].Type;
    if (Ty == ElementType::Float16 || Ty == ElementType::BFloat16)
      return true;
  }
  return false;
}

bool report::isModelState(const Plan &P, const PlanContext &C, TensorId T) {
  switch (P.Sched.Tensors[T].Kind) {
  case TensorKind::Weight:
  case TensorKind::Constant:
  case TensorKind::OptimizerState:
    return true;
  case TensorKind::Gradient: {
    ValueId V = describedValue(P, C, T);
    return V != NoId && C.G.Values[V].Kind == ValueKind::Weight;
  }
  default:
    return false;
  }
}

llvm::Expected<Plan> report::replanSharded(const Plan &P, const PlanContext &C,
                                           unsigned Devices,
                                           const PipelineOptions &Opts) {
  auto Resize = [&](TensorId T, uint64_t Size) -> uint64_t {
    if (Devices <= 1 || !isModelState(P, C, T))
      return Size;
    return (Size + Devices - 1) / Devices;
  };
  return replanResized(P, Resize, Opts);
}
