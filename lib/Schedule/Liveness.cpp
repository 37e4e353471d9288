//===- Liveness.cpp - buffers and their lifetimes -------------------------===//
//
// One pass over the steps in order. Each written tensor either joins an
// existing buffer (view of a read, or in-place over a read that dies here) or
// starts a new one. A buffer's last use is the last read of any member, so a
// view extends the life of the bytes it shares.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Schedule/Liveness.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/Support/Format.h"
#include <algorithm>

using namespace oomplan;

static constexpr uint64_t NoStep = UINT64_MAX;

// Persistence rank: a buffer shared by tensors of several kinds takes the
// most persistent kind (a view of a weight is a weight, a view of an
// activation that is a graph output is an output).
static int rank(TensorKind K) {
  switch (K) {
  case TensorKind::Weight:
    return 6;
  case TensorKind::Constant:
    return 5;
  case TensorKind::OptimizerState:
    return 4;
  case TensorKind::GraphInput:
    return 3;
  case TensorKind::GraphOutput:
    return 2;
  case TensorKind::Gradient:
    return 1;
  case TensorKind::Activation:
    return 0;
  }
  return 0;
}

static bool isResident(TensorKind K) {
  return K == TensorKind::Weight || K == TensorKind::Constant;
}

namespace {
struct Builder {
  const Schedule &S;
  Lifetimes L;
  std::vector<uint64_t> LastUse; // per tensor; NoStep if never read
  std::vector<uint64_t> BufLastUse;
  std::vector<bool> BufReturned; // a member is a graph output

  explicit Builder(const Schedule &S) : S(S) {
    L.NumSteps = S.Steps.size();
    L.BufferOf.assign(S.Tensors.size(), UINT32_MAX);
    LastUse.assign(S.Tensors.size(), NoStep);
    for (uint64_t I = 0; I < S.Steps.size(); ++I)
      for (TensorId T : S.Steps[I].Reads)
        LastUse[T] = I;
  }

  BufferId newBuffer(TensorId T, uint64_t Start) {
    BufferId B = static_cast<BufferId>(L.Buffers.size());
    LiveBuffer Buf;
    Buf.Root = T;
    Buf.Members.push_back(T);
    Buf.Kind = S.Tensors[T].Kind;
    Buf.SizeBytes = S.Tensors[T].SizeBytes;
    Buf.StartStep = Start;
    L.Buffers.push_back(std::move(Buf));
    BufLastUse.push_back(LastUse[T]);
    BufReturned.push_back(isReturned(T));
    L.BufferOf[T] = B;
    return B;
  }

  bool isReturned(TensorId T) const {
    return S.Tensors[T].IsGraphOutput ||
           S.Tensors[T].Kind == TensorKind::GraphOutput;
  }

  void join(TensorId T, BufferId B) {
    if (isReturned(T))
      BufReturned[B] = true;
    LiveBuffer &Buf = L.Buffers[B];
    Buf.Members.push_back(T);
    if (rank(S.Tensors[T].Kind) > rank(Buf.Kind))
      Buf.Kind = S.Tensors[T].Kind;
    Buf.SizeBytes = std::max(Buf.SizeBytes, S.Tensors[T].SizeBytes);
    if (LastUse[T] != NoStep &&
        (BufLastUse[B] == NoStep || LastUse[T] > BufLastUse[B]))
      BufLastUse[B] = LastUse[T];
    L.BufferOf[T] = B;
  }

  // A read whose buffer dies at this step, is an activation of the same
  // size, and is not already taken by another output of this step.
  BufferId findInPlace(uint64_t StepIdx, TensorId Out, TensorId &Over) {
    const Step &St = S.Steps[StepIdx];
    if (S.Tensors[Out].Kind != TensorKind::Activation &&
        S.Tensors[Out].Kind != TensorKind::Gradient)
      return UINT32_MAX;
    for (size_t R = 0; R < St.Reads.size(); ++R) {
      if (St.InPlaceRead >= 0 && R != static_cast<size_t>(St.InPlaceRead))
        continue; // only the named read may be overwritten
      TensorId In = St.Reads[R];
      BufferId B = L.BufferOf[In];
      const LiveBuffer &Buf = L.Buffers[B];
      // A fused op reads its other inputs after its first write: the named
      // read must not share bytes with them (y = conv(x) + x).
      bool SharedWithOther =
          St.InPlaceRead >= 0 &&
          llvm::any_of(llvm::enumerate(St.Reads), [&](auto Other) {
            return Other.index() != R && L.BufferOf[Other.value()] == B;
          });
      if (!SharedWithOther &&
          (Buf.Kind == TensorKind::Activation ||
           Buf.Kind == TensorKind::Gradient) &&
          Buf.SizeBytes == S.Tensors[Out].SizeBytes &&
          BufLastUse[B] == StepIdx) {
        Over = In;
        return B;
      }
    }
    return UINT32_MAX;
  }

  void run(const LivenessOptions &Opts) {
    // Tensors that exist before the first step.
    for (TensorId T = 0; T < S.Tensors.size(); ++T) {
      TensorKind K = S.Tensors[T].Kind;
      if (S.Tensors[T].HostHome)
        continue; // on the device only once a Prefetch writes it
      if (isResident(K) || K == TensorKind::GraphInput ||
          K == TensorKind::OptimizerState)
        newBuffer(T, 0);
    }
    for (uint64_t I = 0; I < S.Steps.size(); ++I) {
      const Step &St = S.Steps[I];
      for (size_t W = 0; W < St.Writes.size(); ++W) {
        TensorId Out = St.Writes[W];
        if (L.BufferOf[Out] != UINT32_MAX)
          continue; // already defined (a transform re-writing it)
        if (W == 0 && St.ViewOf >= 0) {
          join(Out, L.BufferOf[St.Reads[St.ViewOf]]);
          continue;
        }
        if (W == 0 && St.MayWriteInPlace && Opts.InPlace) {
          TensorId Over = 0;
          BufferId B = findInPlace(I, Out, Over);
          if (B != UINT32_MAX) {
            L.InPlace.push_back({Out, Over});
            join(Out, B);
            continue;
          }
        }
        newBuffer(Out, I);
      }
    }
    // Tensors nothing writes or holds (unused graph values) still need a
    // buffer so that every tensor has one; a host-home one (optimizer state
    // kept on the host) has no device bytes.
    for (TensorId T = 0; T < S.Tensors.size(); ++T)
      if (L.BufferOf[T] == UINT32_MAX) {
        BufferId B = newBuffer(T, 0);
        if (S.Tensors[T].HostHome)
          L.Buffers[B].SizeBytes = 0;
      }
    for (BufferId B = 0; B < L.Buffers.size(); ++B) {
      LiveBuffer &Buf = L.Buffers[B];
      uint64_t End =
          BufLastUse[B] == NoStep ? Buf.StartStep + 1 : BufLastUse[B] + 1;
      End = std::max(End, Buf.StartStep + 1);
      // A graph input returned as an output (itself or through a view) must
      // survive to the end too, not just to its last read.
      if (isResident(Buf.Kind) || BufReturned[B] ||
          Buf.Kind == TensorKind::OptimizerState)
        End = std::max<uint64_t>(L.NumSteps, Buf.StartStep + 1);
      Buf.EndStep = End;
    }
  }
};
} // namespace

Lifetimes oomplan::computeLifetimes(const Schedule &S,
                                    const LivenessOptions &Opts) {
  Builder B(S);
  B.run(Opts);
  return std::move(B.L);
}

void oomplan::printLifetimes(llvm::raw_ostream &OS, const Schedule &S,
                             const Lifetimes &L) {
  std::vector<BufferId> Order(L.Buffers.size());
  for (BufferId B = 0; B < Order.size(); ++B)
    Order[B] = B;
  std::stable_sort(Order.begin(), Order.end(), [&](BufferId A, BufferId B) {
    return L.Buffers[A].StartStep < L.Buffers[B].StartStep;
  });
  OS << "lifetimes: " << L.Buffers.size() << " buffers over " << L.NumSteps
     << " steps\n";
  for (BufferId B : Order) {
    const LiveBuffer &Buf = L.Buffers[B];
    OS << "buffer " << S.Tensors[Buf.Root].Name << ": "
       << tensorKindName(Buf.Kind) << ' ' << Buf.SizeBytes << " bytes ["
       << Buf.StartStep << ',' << Buf.EndStep << ')';
    if (Buf.Members.size() > 1) {
      OS << " shared by";
      for (size_t I = 1; I < Buf.Members.size(); ++I)
        OS << (I > 1 ? ", " : " ") << S.Tensors[Buf.Members[I]].Name;
    }
    OS << '\n';
  }
  for (auto [Out, In] : L.InPlace)
    OS << "in-place: " << S.Tensors[Out].Name << " overwrites "
       << S.Tensors[In].Name << '\n';
}
