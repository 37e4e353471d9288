//===- ScheduleVerifier.cpp - the rules every schedule obeys --------------===//
//
// One pass over the steps in order, keeping per tensor whether it is defined
// on the device, whether it is offloaded, and whether a step wrote it; a
// first pass finds, for rule 4, the tensors a Recompute step re-makes and
// each tensor's last read by an ordinary (non-Recompute) device step. Linear in
// the size of the schedule, so it runs after every transform. The rules and
// their terms are in ScheduleVerifier.h.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/DenseMap.h"
#include "llvm/ADT/Twine.h"

using namespace oomplan;

llvm::StringRef oomplan::scheduleRuleName(ScheduleRule R) {
  switch (R) {
  case ScheduleRule::ReadBeforeWrite:
    return "read-before-write";
  case ScheduleRule::ViewInPlace:
    return "view/in-place";
  case ScheduleRule::HostResident:
    return "host-resident";
  case ScheduleRule::RecomputeLive:
    return "recompute-live";
  case ScheduleRule::WriteOnce:
    return "write-once";
  }
  return "?";
}

static bool isResident(const ScheduleTensor &T) {
  if (T.HostHome)
    return false;
  switch (T.Kind) {
  case TensorKind::Weight:
  case TensorKind::Constant:
  case TensorKind::GraphInput:
  case TensorKind::OptimizerState:
    return true;
  default:
    return false;
  }
}

static bool livesToEnd(const ScheduleTensor &T) {
  return T.IsGraphOutput || T.Kind == TensorKind::GraphOutput;
}

namespace {
class Verifier {
  const Schedule &S;
  static constexpr size_t Never = SIZE_MAX;
  /// Per tensor: defined on the device (resident, or written), offloaded
  /// now, and written by a step (Constants are resident yet written once).
  std::vector<bool> Defined, Offloaded, Written;
  /// Per tensor: a Recompute step re-runs the step that wrote it, so the
  /// original is dead after its last ordinary read.
  std::vector<bool> Superseded;
  std::vector<size_t> LastPlainRead;
  size_t I = 0; ///< The step being checked.

public:
  explicit Verifier(const Schedule &S) : S(S) {}

  llvm::Error run() {
    size_t NT = S.Tensors.size();
    Defined.assign(NT, false);
    Offloaded.assign(NT, false);
    Written.assign(NT, false);
    Superseded.assign(NT, false);
    LastPlainRead.assign(NT, Never);
    for (TensorId T = 0; T < NT; ++T)
      Defined[T] = isResident(S.Tensors[T]);
    for (I = 0; I < S.Steps.size(); ++I)
      if (llvm::Error E = checkIds(S.Steps[I]))
        return E;
    findSuperseded();
    for (size_t J = 0; J < S.Steps.size(); ++J) {
      const Step &St = S.Steps[J];
      if (St.Kind != StepKind::Recompute && !St.OnHost)
        for (TensorId R : St.Reads)
          LastPlainRead[R] = J;
    }
    for (I = 0; I < S.Steps.size(); ++I) {
      const Step &St = S.Steps[I];
      if (llvm::Error E = checkViewInPlace(St))
        return E;
      for (TensorId R : St.Reads)
        if (llvm::Error E = checkRead(St, R))
          return E;
      if (llvm::Error E = checkWrites(St))
        return E;
    }
    return llvm::Error::success();
  }

private:
  // A Recompute step of node N re-runs the first Compute step of N: its
  // writes are copies of that step's writes, position by position.
  void findSuperseded() {
    llvm::DenseMap<NodeId, size_t> FirstCompute;
    for (size_t J = 0; J < S.Steps.size(); ++J) {
      const Step &St = S.Steps[J];
      if (St.Node == NoId)
        continue;
      if (St.Kind == StepKind::Compute)
        FirstCompute.try_emplace(St.Node, J);
      if (St.Kind != StepKind::Recompute)
        continue;
      auto It = FirstCompute.find(St.Node);
      if (It == FirstCompute.end())
        continue;
      const Step &F = S.Steps[It->second];
      for (size_t W = 0; W < F.Writes.size() && W < St.Writes.size(); ++W)
        if (F.Writes[W] != St.Writes[W])
          Superseded[F.Writes[W]] = true;
    }
  }

  llvm::Error fail(ScheduleRule Rule, const llvm::Twine &Msg) const {
    const Step &St = S.Steps[I];
    return makeInternalError("schedule step " + llvm::Twine(I) + " (" +
                             (St.Op.empty() ? "?" : St.Op) + "): [" +
                             scheduleRuleName(Rule) + "] " + Msg);
  }

  std::string name(TensorId T) const { return "'" + S.Tensors[T].Name + "'"; }

  llvm::Error checkIds(const Step &St) const {
    for (const std::vector<TensorId> *L : {&St.Reads, &St.Writes})
      for (TensorId T : *L)
        if (T >= S.Tensors.size())
          return fail(ScheduleRule::ReadBeforeWrite,
                      "tensor id " + llvm::Twine(T) + " out of range (" +
                          llvm::Twine(S.Tensors.size()) + " tensors)");
    return llvm::Error::success();
  }

  llvm::Error checkViewInPlace(const Step &St) const {
    if (St.ViewOf < -1 || St.ViewOf >= static_cast<int>(St.Reads.size()))
      return fail(ScheduleRule::ViewInPlace,
                  "ViewOf " + llvm::Twine(St.ViewOf) + " is not an index of " +
                      llvm::Twine(St.Reads.size()) + " reads");
    if (St.ViewOf >= 0) {
      if (St.Writes.empty())
        return fail(ScheduleRule::ViewInPlace, "a view that writes nothing");
      TensorId Src = St.Reads[St.ViewOf], Out = St.Writes[0];
      if (S.Tensors[Out].SizeBytes > S.Tensors[Src].SizeBytes)
        return fail(ScheduleRule::ViewInPlace,
                    "view " + name(Out) + " (" +
                        llvm::Twine(S.Tensors[Out].SizeBytes) +
                        " bytes) is larger than " + name(Src) + " (" +
                        llvm::Twine(S.Tensors[Src].SizeBytes) +
                        " bytes) that it views");
    }
    if (!St.MayWriteInPlace)
      return llvm::Error::success();
    bool Compute = St.Kind == StepKind::Compute ||
                   St.Kind == StepKind::Recompute ||
                   St.Kind == StepKind::Backward;
    if (!Compute || St.OnHost || St.ViewOf >= 0)
      return fail(ScheduleRule::ViewInPlace,
                  "in-place write allowed on a step that is not a device "
                  "compute step, or is a view");
    if (St.Writes.empty() || St.Reads.empty())
      return fail(ScheduleRule::ViewInPlace,
                  "in-place write allowed on a step without reads or writes");
    uint64_t Size = S.Tensors[St.Writes[0]].SizeBytes;
    if (St.InPlaceRead >= static_cast<int>(St.Reads.size()))
      return fail(ScheduleRule::ViewInPlace,
                  "InPlaceRead " + llvm::Twine(St.InPlaceRead) +
                      " is not an index of " + llvm::Twine(St.Reads.size()) +
                      " reads");
    if (St.InPlaceRead >= 0 &&
        S.Tensors[St.Reads[St.InPlaceRead]].SizeBytes != Size)
      return fail(ScheduleRule::ViewInPlace,
                  "in-place write of " + name(St.Writes[0]) + " over " +
                      name(St.Reads[St.InPlaceRead]) + " of another size");
    for (TensorId R : St.Reads)
      if (S.Tensors[R].SizeBytes == Size)
        return llvm::Error::success();
    return fail(ScheduleRule::ViewInPlace,
                "in-place write of " + name(St.Writes[0]) + " (" +
                    llvm::Twine(Size) + " bytes) but no read has that size");
  }

  llvm::Error checkRead(const Step &St, TensorId R) const {
    const ScheduleTensor &T = S.Tensors[R];
    if (St.OnHost) {
      if (!T.HostHome)
        return fail(ScheduleRule::HostResident,
                    "host step reads " + name(R) +
                        ", which has no host copy (not HostHome)");
      return llvm::Error::success();
    }
    if (T.HostHome && !Defined[R])
      return fail(ScheduleRule::HostResident,
                  "device step reads host-resident " + name(R) +
                      " before a Prefetch brings it to the device");
    if (Offloaded[R] && St.Kind == StepKind::Recompute)
      return fail(ScheduleRule::RecomputeLive,
                  "recompute reads " + name(R) +
                      ", which an Offload moved to the host (dead on the "
                      "device), with no Prefetch since");
    if (Offloaded[R])
      return fail(ScheduleRule::HostResident,
                  "device step reads " + name(R) +
                      " after an Offload moved it to the host, with no "
                      "Prefetch since");
    if (!Defined[R])
      return fail(ScheduleRule::ReadBeforeWrite,
                  "reads " + name(R) + " before any step writes it");
    if (St.Kind == StepKind::Recompute && Superseded[R] && !isResident(T) &&
        !livesToEnd(T) && (LastPlainRead[R] == Never || LastPlainRead[R] < I))
      return fail(ScheduleRule::RecomputeLive,
                  "recompute reads " + name(R) +
                      ", which is recomputed itself and so dead here (" +
                      (LastPlainRead[R] == Never
                           ? llvm::Twine("no ordinary step reads it")
                           : "its last ordinary read is step " +
                                 llvm::Twine(LastPlainRead[R])) +
                      ")");
    return llvm::Error::success();
  }

  llvm::Error checkWrites(const Step &St) {
    if (St.Kind == StepKind::Offload)
      for (TensorId R : St.Reads)
        Offloaded[R] = true;
    for (size_t W = 0; W < St.Writes.size(); ++W) {
      TensorId Out = St.Writes[W];
      const ScheduleTensor &T = S.Tensors[Out];
      for (size_t V = 0; V < W; ++V)
        if (St.Writes[V] == Out)
          return fail(ScheduleRule::WriteOnce,
                      "writes " + name(Out) + " twice in one step");
      if (St.OnHost) {
        if (!T.HostHome)
          return fail(ScheduleRule::HostResident,
                      "host step writes " + name(Out) +
                          ", a device tensor (not HostHome)");
        continue;
      }
      bool Prefetch = St.Kind == StepKind::Prefetch;
      if (T.HostHome && !Prefetch)
        return fail(ScheduleRule::HostResident,
                    "writes host-resident " + name(Out) +
                        " on the device; only a Prefetch may");
      // Constants are resident for reads, yet their Constant step writes
      // them once.
      bool PreDefined =
          Written[Out] || (isResident(T) && T.Kind != TensorKind::Constant);
      if (PreDefined && !Prefetch && St.Kind != StepKind::Recompute)
        return fail(ScheduleRule::WriteOnce,
                    "writes " + name(Out) + ", which " +
                        (isResident(T) ? "is resident (defined before step 0)"
                                       : "an earlier step already wrote") +
                        "; only Prefetch and Recompute steps re-write");
      Defined[Out] = true;
      Offloaded[Out] = false;
      Written[Out] = true;
    }
    return llvm::Error::success();
  }
};
} // namespace

llvm::Error oomplan::verifySchedule(const Schedule &S) {
  return Verifier(S).run();
}

llvm::Error oomplan::verifyScheduleAfter(llvm::StringRef Pass,
                                         const Schedule &S) {
  if (llvm::Error E = verifySchedule(S))
    return prependContext(std::move(E), "after the " + Pass + " transform: ");
  return llvm::Error::success();
}
