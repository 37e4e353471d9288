//===- PlanHost.cpp - the host region: where host-home tensors live -------===//
//
// Fitting moves bytes to host memory: streamed weights, offloaded saved
// activations, optimizer state updated on the host (Schedule.h's HostHome).
// Each such tensor has a home in the host region, at an offset an executor
// allocates once. Homes are laid out end to end in tensor order, each
// aligned, and live for the whole run: no reuse, so no two homes overlap,
// which the check below confirms independently of the layout. Copies of one
// graph value (a weight streamed in twice, "W" and "W#2") share one home. A
// host-home tensor's device copy stays an arena buffer from its Prefetch; a
// buffer with no device bytes at all (state the host updates in place) is a
// host buffer (Region::Host) at its home's offset.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Plan/Plan.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include <algorithm>
#include <map>

using namespace oomplan;

llvm::Error oomplan::layOutHostRegion(Plan &P) {
  const Schedule &S = P.Sched;
  P.HostOffsetOf.assign(S.Tensors.size(), NoHostOffset);
  P.HostBytes = 0;
  std::map<ValueId, uint64_t> HomeOfValue;
  for (TensorId T = 0; T < S.Tensors.size(); ++T) {
    const ScheduleTensor &X = S.Tensors[T];
    if (!X.HostHome)
      continue;
    if (X.Value != NoId) {
      auto It = HomeOfValue.find(X.Value);
      if (It != HomeOfValue.end()) {
        P.HostOffsetOf[T] = It->second;
        continue;
      }
    }
    uint64_t Rounded;
    if (!checkedAlignUp(X.SizeBytes, P.AlignBytes, Rounded) ||
        Rounded > MaxSizeBytes)
      return makeOverflowError("host tensor '" + X.Name + "' needs " +
                               llvm::Twine(X.SizeBytes) +
                               " bytes, more than 2^63 - 1");
    P.HostOffsetOf[T] = P.HostBytes;
    if (X.Value != NoId)
      HomeOfValue[X.Value] = P.HostBytes;
    if (!checkedAdd(P.HostBytes, Rounded, P.HostBytes) ||
        P.HostBytes > MaxSizeBytes)
      return makeOverflowError("the host region needs more than 2^63 - 1 "
                               "bytes (reached at tensor '" +
                               X.Name + "')");
  }
  // Buffers without device bytes whose tensors all live on the host.
  for (BufferId B = 0; B < P.Life.Buffers.size(); ++B) {
    const LiveBuffer &Buf = P.Life.Buffers[B];
    if (Buf.SizeBytes != 0 || P.HostOffsetOf[Buf.Root] == NoHostOffset)
      continue;
    P.RegionOf[B] = Region::Host;
    P.OffsetOf[B] = P.HostOffsetOf[Buf.Root];
  }
  return verifyHostRegion(P);
}

// Independent of the layout above: homes sorted by offset must not overlap
// unless they are one home (same offset and size), and must end within
// HostBytes. Every home is live for the whole run, so any overlap is a bug.
llvm::Error oomplan::verifyHostRegion(const Plan &P) {
  const Schedule &S = P.Sched;
  std::map<ValueId, TensorId> Owner; // The first tensor of each value.
  std::vector<std::pair<uint64_t, TensorId>> Homes;
  for (TensorId T = 0; T < P.HostOffsetOf.size(); ++T) {
    if (P.HostOffsetOf[T] == NoHostOffset)
      continue;
    ValueId V = S.Tensors[T].Value;
    if (V != NoId && !Owner.emplace(V, T).second) {
      if (P.HostOffsetOf[Owner[V]] != P.HostOffsetOf[T])
        return makeInternalError("internal error: copies of one value ('" +
                                 S.Tensors[T].Name +
                                 "') have different host homes");
      continue; // Shares its owner's home.
    }
    if (S.Tensors[T].SizeBytes != 0)
      Homes.push_back({P.HostOffsetOf[T], T});
  }
  std::sort(Homes.begin(), Homes.end());
  uint64_t End = 0;
  const ScheduleTensor *Last = nullptr;
  for (auto &[Off, T] : Homes) {
    const ScheduleTensor &X = S.Tensors[T];
    uint64_t Hi = saturatingAdd(Off, X.SizeBytes);
    if (Hi > P.HostBytes)
      return makeInternalError("internal error: host home of '" + X.Name +
                               "' ends at " + llvm::Twine(Hi) +
                               ", past the host region (" +
                               llvm::Twine(P.HostBytes) + " bytes)");
    if (Last && Off < End)
      return makeInternalError("internal error: host homes of '" + Last->Name +
                               "' and '" + X.Name + "' overlap");
    End = std::max(End, Hi);
    Last = &X;
  }
  return llvm::Error::success();
}
