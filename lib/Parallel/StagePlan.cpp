//===- StagePlan.cpp - one configuration's per-stage plans ----------------===//
//
// ParallelPlanner::plan: for every pipeline stage, copies the base schedule,
// resizes each tensor to what one device of that stage holds (the rules are
// listed in DevicePlan.cpp and docs/multi-device.md), appends the engine's
// buffers, and computes liveness; placed and verified by buildPlan when
// asked. The stage with the largest peak binds.
//
//===----------------------------------------------------------------------===//
#include "ParallelInternal.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include <algorithm>

using namespace oomplan;
using namespace oomplan::parallel;

llvm::Expected<ParallelPlanner>
ParallelPlanner::create(const ParallelInput &In) {
  ParallelPlanner P(In);
  P.Layers = analyzeLayers(In.G, In.Shapes);
  auto Params = trainableParameters(In.G, In.Train);
  if (!Params)
    return Params.takeError();
  for (ValueId W : *Params) {
    uint64_t E = 1;
    for (const DeclaredDim &D : In.G.Values[W].Shape)
      E = saturatingMul(E, D.K == DeclaredDim::Kind::Static ? D.Size : 1);
    P.Params = saturatingAdd(P.Params, E);
  }
  return std::move(P);
}

llvm::Expected<const Base *> ParallelPlanner::base(RecomputeKind K,
                                                   bool Accumulate) {
  unsigned I = unsigned(K) * 2 + (Accumulate ? 1 : 0);
  if (!Bases[I]) {
    auto B = buildBase(*In, Layers, K, Accumulate);
    if (!B)
      return B.takeError();
    Bases[I] = std::move(*B);
  }
  return Bases[I].get();
}

static uint64_t divUp(uint64_t A, uint64_t B) {
  return B ? (A + B - 1) / B : A;
}

namespace {
// Sizes of one stage's tensors.
struct StageSizer {
  const Base &B;
  const LayerStructure &L;
  const ParallelSpec &Spec;
  int First, Last; ///< Layer positions of the stage.
  unsigned InFlight;

  bool inStage(int Pos) const { return Pos >= First && Pos <= Last; }

  // Bytes of tensor T on one device of the stage; Host receives what an
  // offload moves to host memory.
  uint64_t size(TensorId T, uint64_t &Host) const {
    uint64_t Bytes = B.S.Tensors[T].SizeBytes;
    switch (B.Class[T]) {
    case TensorClass::OptimizerScratch:
      // The training step has it when its optimizer makes it (PyTorch's
      // foreach Adam on CUDA: an fp32 copy of each second moment, all at
      // once); the device that updates a partition copies that partition,
      // and an optimizer on the host makes none on the device.
      if (Spec.OffloadOptimizer || B.Weight[T] == NoId)
        return Spec.OffloadOptimizer ? 0 : Bytes;
      if (!inStage(B.HomePos[T]))
        return 0;
      if (L.WeightTPSplit[B.Weight[T]])
        Bytes = divUp(Bytes, Spec.TP);
      return Spec.Zero >= 1 ? divUp(Bytes, Spec.DP) : Bytes;
    case TensorClass::Other:
      return Bytes;
    case TensorClass::Activation:
      return activation(T, Bytes);
    default:
      break;
    }
    if (!inStage(B.HomePos[T]))
      return 0;
    ValueId W = B.Weight[T];
    if (W != NoId && L.WeightTPSplit[W])
      Bytes = divUp(Bytes, Spec.TP);
    unsigned D = Spec.DP;
    switch (B.Class[T]) {
    case TensorClass::Weight:
      if (Spec.Zero < 3)
        return Bytes;
      Bytes = divUp(Bytes, D);
      if (Spec.OffloadParams)
        return Host += Bytes, 0;
      return Bytes;
    case TensorClass::WeightGrad:
      // Stage 2 and 3 reduce each gradient as it is made (it lives only
      // until its bucket is reduced: the grad's reads are cut below).
      return Bytes;
    case TensorClass::OptimizerState:
      Bytes = Spec.Zero >= 1 ? divUp(Bytes, D) : Bytes;
      if (Spec.OffloadOptimizer)
        return Host += Bytes, 0;
      return Bytes;
    default:
      return Bytes;
    }
  }

  uint64_t activation(TensorId T, uint64_t Bytes) const {
    bool Mine = inStage(B.HomePos[T]) ||
                (B.MaxReadPos[T] >= First && B.MinReadPos[T] <= Last);
    if (!Mine)
      return 0;
    ValueId V = B.Value[T];
    if (V != NoId && Spec.TP > 1 &&
        (L.TPSplit[V] || (Spec.SP && L.DataPath[V])))
      Bytes = divUp(Bytes, Spec.TP);
    if (B.Saved[T])
      Bytes = saturatingMul(Bytes, InFlight);
    return Bytes;
  }
};
} // namespace

// A resident buffer read by the optimizer step (DeepSpeed's partitions).
static TensorId addResident(Schedule &S, size_t OptStep, std::string Name,
                            uint64_t Bytes) {
  TensorId T = TensorId(S.Tensors.size());
  ScheduleTensor ST;
  ST.Name = std::move(Name);
  ST.SizeBytes = Bytes;
  ST.Type = ElementType::Float;
  ST.Kind = TensorKind::OptimizerState;
  S.Tensors.push_back(std::move(ST));
  S.Steps[OptStep].Reads.push_back(T);
  return T;
}

// A transient buffer written at step From and last read at step To.
static TensorId addTransient(Schedule &S, size_t From, size_t To,
                             std::string Name, uint64_t Bytes) {
  TensorId T = TensorId(S.Tensors.size());
  ScheduleTensor ST;
  ST.Name = std::move(Name);
  ST.SizeBytes = Bytes;
  ST.Kind = TensorKind::Activation;
  S.Tensors.push_back(std::move(ST));
  S.Steps[From].Writes.push_back(T);
  if (To != From)
    S.Steps[To].Reads.push_back(T);
  return T;
}

// Max over steps of the bytes live (resident buffers included): the plan's
// size before fragmentation.
static uint64_t liveLowerBound(const Lifetimes &L, uint64_t Align) {
  std::vector<int64_t> Delta(L.NumSteps + 1, 0);
  for (const LiveBuffer &LB : L.Buffers) {
    if (!LB.SizeBytes)
      continue;
    int64_t Sz = int64_t(divUp(LB.SizeBytes, Align) * Align);
    Delta[std::min<uint64_t>(LB.StartStep, L.NumSteps)] += Sz;
    Delta[std::min<uint64_t>(std::max(LB.EndStep, LB.StartStep + 1),
                             L.NumSteps)] -= Sz;
  }
  int64_t Cur = 0, Max = 0;
  for (int64_t D : Delta)
    Max = std::max(Max, Cur += D);
  return uint64_t(Max);
}

// A view shares its source's bytes: it follows the source's new size (as
// report::replanResized does), in step order so that views of views follow.
static void followViews(Schedule &S, const Schedule &Old) {
  for (const Step &St : S.Steps) {
    if (St.ViewOf < 0 || St.Writes.empty() ||
        size_t(St.ViewOf) >= St.Reads.size())
      continue;
    TensorId Src = St.Reads[St.ViewOf], View = St.Writes[0];
    uint64_t OldSrc = Old.Tensors[Src].SizeBytes;
    uint64_t NewSrc = S.Tensors[Src].SizeBytes;
    if (OldSrc == 0 || OldSrc == NewSrc)
      continue;
    unsigned __int128 Scaled =
        ((unsigned __int128)Old.Tensors[View].SizeBytes * NewSrc + OldSrc - 1) /
        OldSrc;
    S.Tensors[View].SizeBytes =
        uint64_t(std::min<unsigned __int128>(Scaled, NewSrc));
  }
}

// The gradient partition each data-parallel rank keeps for its optimizer
// step, resident from the first reduction to the step. The schedule's own
// weight gradients cover it only where they are kept whole to the step
// (zero <= 1: the partition is a slice of them); from zero=2 on they live
// only until reduced, so the partition is a buffer of its own whatever the
// precision:
//   - mixed precision, zero >= 1: DeepSpeed's fp32 copy for the fp32
//     optimizer (the estimator's "4_grads_32bit"), 4 bytes / D;
//   - mixed precision, zero=2: also the 16-bit partition
//     (averaged_gradients), 2 bytes / D; zero=3 reduces straight into the
//     fp32 copy;
//   - fp32, zero >= 2: the fp32 gradients themselves, 4 bytes / D (zero=1
//     keeps them whole: counted as gradients).
// ZeRO's paper counts the gradient term as (bytes per gradient) x psi / D
// from stage 2 on; keying the fp32 copy on "mixed" alone lost it for fp32
// zero=3.
static uint64_t gradientPartitionBytes(const ParallelSpec &Spec, bool Mixed,
                                       uint64_t StageParams) {
  uint64_t Shard = divUp(StageParams, Spec.DP);
  if (Mixed)
    return Shard * 4 + (Spec.Zero == 2 ? Shard * 2 : 0);
  return Spec.Zero >= 2 ? Shard * 4 : 0;
}

namespace {
struct StageExtras {
  uint64_t Gather = 0, Comm = 0, Partition = 0, Host = 0;
};
} // namespace

// The engine's buffers of one stage, appended to S.
static StageExtras addEngineBuffers(Schedule &S, const Base &B,
                                    const LayerStructure &L,
                                    const ParallelSpec &Spec,
                                    uint64_t StageParams, size_t OptStep,
                                    const EngineOptions &E) {
  StageExtras X;
  uint64_t PElems = divUp(StageParams, 1); // already / T
  unsigned Half = B.Mixed ? 2 : 4;
  size_t LastBwd = OptStep > 0 ? OptStep - 1 : 0;
  size_t Fwd0 = 0;
  if (Spec.DP > 1 && Spec.Zero == 0) {
    X.Comm = std::min<uint64_t>(E.DDPBucketBytes, PElems * Half);
    addTransient(S, B.FwdEnd, LastBwd, "ddp.bucket", X.Comm);
  }
  if (Spec.Zero >= 1) {
    X.Partition = gradientPartitionBytes(Spec, B.Mixed, PElems);
    if (Spec.OffloadOptimizer)
      X.Host += X.Partition, X.Partition = 0;
    if (X.Partition)
      addResident(S, OptStep, "zero.grad_partition", X.Partition);
    uint64_t Reduce = std::min<uint64_t>(E.ReduceBucketElems, PElems) * Half;
    addTransient(S, B.FwdEnd, LastBwd, "zero.reduce_bucket", Reduce);
    X.Comm += Reduce;
    if (Spec.Zero < 3) {
      uint64_t Gather =
          std::min<uint64_t>(E.AllgatherBucketElems, PElems) * Half;
      addTransient(S, OptStep, OptStep, "zero.allgather_bucket", Gather);
      X.Comm += Gather;
    }
  }
  if (Spec.Zero == 3) {
    // The running layer's and the prefetched one's gathered 16-bit
    // parameters (DeepSpeed's "largest layer" term).
    uint64_t Largest = divUp(L.LargestWeightElems, Spec.TP);
    uint64_t Elems = std::min<uint64_t>(2 * Largest, E.MaxLiveParams);
    X.Gather = Elems * Half;
    addTransient(S, Fwd0, LastBwd, "zero3.gathered_params", X.Gather);
  }
  return X;
}

llvm::Error ParallelPlanner::checkTP(unsigned TP) const {
  if (TP <= 1)
    return llvm::Error::success();
  if (!Layers.Found)
    return makeInputError(In->G.SourcePath + ": --parallel: tp and pp need " +
                          "the model's repeated layers, and " + Layers.Why);
  if (Layers.ColumnLinears == 0)
    return makeInputError(In->G.SourcePath + ": --parallel: tp needs " +
                          "weight MatMul/Gemm layers in the repeated blocks " +
                          "(Megatron's column/row split); none found");
  for (ValueId W : In->G.Weights) {
    if (!Layers.WeightTPSplit[W])
      continue;
    bool Divides = false;
    for (const DeclaredDim &D : In->G.Values[W].Shape)
      Divides |= D.K == DeclaredDim::Kind::Static && D.Size % TP == 0;
    if (!Divides)
      return makeInputError("--parallel: tp=" + llvm::Twine(TP) +
                            " does not divide weight '" + In->G.Values[W].Name +
                            "'");
  }
  return llvm::Error::success();
}

llvm::Expected<ParallelPlan> ParallelPlanner::plan(const ParallelSpec &Spec,
                                                   bool Place) {
  if (Spec.PP > 1 && !Layers.Found)
    return makeInputError(In->G.SourcePath + ": --parallel: tp and pp need " +
                          "the model's repeated layers, and " + Layers.Why);
  if (llvm::Error E = checkTP(Spec.TP))
    return std::move(E);
  if (Spec.PP > Layers.NumBlocks && Spec.PP > 1)
    return makeInputError("--parallel: pp=" + llvm::Twine(Spec.PP) +
                          " is more than the " + llvm::Twine(Layers.NumBlocks) +
                          " layers found");
  bool Accumulate = Spec.Zero < 2 && Spec.MicroBatches > 1;
  auto BOr = base(Spec.Recompute, Accumulate);
  if (!BOr)
    return BOr.takeError();
  const Base &B = **BOr;
  ParallelPlan Out;
  Out.Spec = Spec;
  auto Ranges = partitionStages(B, Layers, Spec);
  size_t OptStep = B.S.Steps.size() - 1;
  for (size_t I = 0; I < B.S.Steps.size(); ++I)
    if (B.S.Steps[I].Kind == StepKind::Optimizer && I >= B.FwdEnd)
      OptStep = I;
  uint64_t MaxState = 0;
  for (unsigned St = 0; St < Ranges.size(); ++St) {
    StagePlan SP;
    SP.Stage = St;
    auto [First, Last] = Ranges[St];
    SP.FirstBlock = std::max(First, 1) - 1;
    SP.LastBlock = std::min<int>(Last, Layers.NumBlocks) - 1;
    SP.InFlight = std::min(Spec.PP - St, Spec.MicroBatches);
    StageSizer Sizer{B, Layers, Spec, First, Last, SP.InFlight};
    Schedule S = B.S;
    uint64_t StageParams = 0;
    for (TensorId T = 0; T < S.Tensors.size(); ++T) {
      uint64_t Host = 0;
      S.Tensors[T].SizeBytes = Sizer.size(T, Host);
      SP.Bytes.HostBytes += Host;
      if (B.Class[T] == TensorClass::Weight && Sizer.inStage(B.HomePos[T]) &&
          B.Weight[T] != NoId) {
        uint64_t Full = B.S.Tensors[T].SizeBytes / (B.Mixed ? 2 : 4);
        StageParams +=
            Layers.WeightTPSplit[B.Weight[T]] ? divUp(Full, Spec.TP) : Full;
      }
    }
    followViews(S, B.S);
    // At a stage boundary an in-place write and its read may now differ in
    // size (one is another stage's): the write then gets its own buffer.
    for (Step &St : S.Steps)
      if (St.MayWriteInPlace && !St.Writes.empty()) {
        uint64_t W = S.Tensors[St.Writes[0]].SizeBytes;
        bool Same = false;
        for (TensorId R : St.Reads)
          Same |= S.Tensors[R].SizeBytes == W;
        St.MayWriteInPlace = Same;
      }
    if (Spec.Zero >= 2) // gradients live until reduced, not to the step
      for (TensorId &R : S.Steps[OptStep].Reads)
        if (B.Class[R] == TensorClass::WeightGrad)
          R = NoId;
    if (Spec.Zero >= 2)
      llvm::erase_value(S.Steps[OptStep].Reads, NoId);
    StageExtras X =
        addEngineBuffers(S, B, Layers, Spec, StageParams, OptStep, In->Engine);
    SP.Bytes.GatherBuffers = X.Gather;
    SP.Bytes.CommBuffers = X.Comm;
    SP.Bytes.HostBytes += X.Host;
    Lifetimes Life = computeLifetimes(S, In->Pipeline.Liveness);
    // Class sums per buffer (a view shares its source's bytes).
    for (const LiveBuffer &LB : Life.Buffers) {
      if (LB.Root >= B.Class.size())
        continue;
      switch (B.Class[LB.Root]) {
      case TensorClass::Weight:
        SP.Bytes.Weights += LB.SizeBytes;
        break;
      case TensorClass::WeightGrad:
        // The gradients kept for the optimizer step, not the partial
        // contributions summed into them.
        if (Spec.Zero < 2 && LB.EndStep > OptStep)
          SP.Bytes.Gradients += LB.SizeBytes;
        break;
      case TensorClass::OptimizerState:
        SP.Bytes.OptimizerState += LB.SizeBytes;
        break;
      default:
        break;
      }
    }
    SP.Bytes.OptimizerState += X.Partition;
    MaxState = std::max(MaxState, SP.Bytes.modelStates());
    // One micro-batch's saved activations per block (views and in-place
    // writes share a buffer: counted once).
    if (Layers.Found && SP.FirstBlock >= 0) {
      SP.BlockActivationBytes.assign(SP.LastBlock - SP.FirstBlock + 1, 0);
      for (const LiveBuffer &LB : Life.Buffers) {
        bool AnySaved = false;
        for (TensorId M : LB.Members)
          AnySaved |= M < B.Saved.size() && B.Saved[M];
        int Pos = LB.Root < B.HomePos.size() ? B.HomePos[LB.Root] : -1;
        if (AnySaved && Pos - 1 >= SP.FirstBlock && Pos - 1 <= SP.LastBlock)
          SP.BlockActivationBytes[Pos - 1 - SP.FirstBlock] +=
              LB.SizeBytes / SP.InFlight;
      }
    }
    uint64_t Align = In->Pipeline.Placement.AlignBytes;
    SP.LowerBound = liveLowerBound(Life, Align);
    if (Place) {
      if (llvm::Error E = verifySchedule(S))
        return std::move(E);
      PlanOptions PO = In->Pipeline.Placement;
      PO.Limit = In->Limit;
      auto P = buildPlan(std::move(S), std::move(Life), PO);
      if (!P)
        return P.takeError();
      SP.PeakBytes = P->totalBytes();
      SP.P = std::move(*P);
    }
    Out.Stages.push_back(std::move(SP));
  }
  uint64_t Peak = 0;
  for (const StagePlan &SP : Out.Stages) {
    uint64_t V = SP.PeakBytes ? SP.PeakBytes : SP.LowerBound;
    if (V > Peak)
      Peak = V, Out.Binding = SP.Stage;
  }
  Out.Fits = fits(In->Limit, Figures{Peak, {}});
  Out.StepSeconds = estimateStepSeconds(B, Layers, Spec, Ranges, MaxState, *In);
  Out.SampleSeconds = Out.StepSeconds / double(Spec.DP * Spec.MicroBatches);
  return Out;
}
