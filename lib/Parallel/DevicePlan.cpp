//===- DevicePlan.cpp - per-device plans of one configuration -------------===//
//
// The single-device training schedule (recompute applied) is built once per
// recompute kind; each configuration then copies it, resizes every tensor to
// the part one device of one pipeline stage holds, appends the buffers the
// engine adds, and runs liveness (and, when asked, placement and the
// verifier). The sizing rules, per tensor class:
//   - activations and their gradients: / T when Megatron's rules split the
//     value (every data-path value with sequence parallelism); 0 outside the
//     stage unless a stage step reads it (a received boundary activation);
//     saved ones (written forward, read backward) x the stage's in-flight
//     micro-batches, min(P - i, M) under 1F1B;
//   - weights, their gradients, optimizer state: / T when the weight is
//     split, then by ZeRO stage over the data-parallel group (DeepSpeed's
//     partitioning: stage 1 the optimizer state and its fp32 gradient
//     partition, 2 also the 16-bit gradients, which then live only until
//     reduced, 3 also the weights), 0 on the device when offloaded.
// docs/multi-device.md gives the reasons and the published formulas.
//
//===----------------------------------------------------------------------===//
#include "ParallelInternal.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Fit/Recompute.h"
#include "oomplan/Parallel/Parallel.h"
#include "oomplan/Plan/TrainingPipeline.h"
#include "oomplan/Support/CheckedMath.h"
#include "oomplan/Support/Error.h"
#include <algorithm>
#include <cmath>

using namespace oomplan;
using namespace oomplan::parallel;

uint64_t ParallelPlan::peakBytes() const {
  uint64_t Max = 0;
  for (const StagePlan &S : Stages)
    Max = std::max(Max, S.PeakBytes ? S.PeakBytes : S.LowerBound);
  return Max;
}

// The value a schedule tensor describes: its own, or the one its name wraps
// ("grad(x)+1", "saved(x:mean)", "adam.m(w)").
static ValueId valueOfTensor(const Schedule &S, const Graph &G, TensorId T) {
  const ScheduleTensor &ST = S.Tensors[T];
  if (ST.Value != NoId)
    return ST.Value;
  llvm::StringRef Name = ST.Name;
  for (unsigned Guard = 0; Guard < 8; ++Guard) {
    size_t Plus = Name.rfind(")+");
    if (Plus != llvm::StringRef::npos)
      Name = Name.take_front(Plus + 1);
    if (!Name.endswith(")"))
      break;
    size_t Open = Name.find('(');
    if (Open == llvm::StringRef::npos)
      break;
    Name = Name.slice(Open + 1, Name.size() - 1);
    ValueId V = G.findValue(Name);
    if (V == NoId && Name.contains(':'))
      V = G.findValue(Name.take_front(Name.rfind(':')));
    if (V != NoId)
      return V;
  }
  return NoId;
}

// Position of a node in the layer order: 0 prologue, 1..N blocks, N+1 after.
static int positionOf(const LayerStructure &L, NodeId N) {
  if (N == NoId)
    return int(L.NumBlocks) + 1;
  int B = L.BlockOfNode[N];
  return B == Prologue ? 0 : B == Epilogue ? int(L.NumBlocks) + 1 : B + 1;
}

llvm::Expected<std::shared_ptr<Base>>
parallel::buildBase(const ParallelInput &In, const LayerStructure &L,
                    RecomputeKind K, bool Accumulate) {
  auto Bytes = evaluateValueBytes(In.G, In.Shapes, In.Bindings);
  if (!Bytes)
    return Bytes.takeError();
  TrainingOptions T = In.Train;
  T.GradAccum = Accumulate ? std::max(2u, T.GradAccum) : 1;
  std::vector<std::string> Warnings;
  auto Sched = makeTrainingSchedule(In.G, In.Shapes, *Bytes, T, Warnings,
                                    nullptr, In.Bindings);
  if (!Sched)
    return Sched.takeError();
  auto B = std::make_shared<Base>();
  B->Warnings = std::move(Warnings);
  B->Mixed = T.Precision != TrainPrecision::FP32;
  const Graph &G = In.G;
  if (K != RecomputeKind::None) {
    size_t FE = forwardEnd(*Sched);
    std::vector<bool> Mark(FE, false);
    for (size_t I = 0; I < FE; ++I) {
      NodeId N = Sched->Steps[I].Node;
      if (N == NoId || Sched->Steps[I].Kind != StepKind::Compute ||
          L.BlockOfNode[N] < 0)
        continue;
      if (K == RecomputeKind::Selective) {
        Mark[I] = L.AttentionCore[N];
        continue;
      }
      // Full: keep the outputs a later block reads (the checkpoints).
      bool ReadLater = false;
      for (ValueId Out : G.Nodes[N].Outputs)
        if (Out != NoId)
          for (NodeId U : G.Values[Out].Users)
            ReadLater |= L.BlockOfNode[U] != L.BlockOfNode[N];
      Mark[I] = !ReadLater;
    }
    *Sched = applyRecompute(*Sched, Mark);
  }
  B->S = std::move(*Sched);
  const Schedule &S = B->S;
  B->FwdEnd = forwardEnd(S);
  size_t NT = S.Tensors.size(), NS = S.Steps.size();
  B->Value.assign(NT, NoId);
  B->Class.assign(NT, TensorClass::Activation);
  B->Weight.assign(NT, NoId);
  B->HomePos.assign(NT, -1);
  B->MinReadPos.assign(NT, INT32_MAX);
  B->MaxReadPos.assign(NT, -1);
  B->FirstRead.assign(NT, SIZE_MAX);
  B->LastRead.assign(NT, 0);
  B->Saved.assign(NT, false);
  B->StepPos.assign(NS, 0);
  std::vector<size_t> Writer(NT, SIZE_MAX);
  for (size_t I = 0; I < NS; ++I) {
    const Step &St = S.Steps[I];
    B->StepPos[I] =
        St.Kind == StepKind::Optimizer ? -1 : positionOf(L, St.Node);
    for (TensorId W : St.Writes)
      if (Writer[W] == SIZE_MAX)
        Writer[W] = I;
    for (TensorId R : St.Reads) {
      B->FirstRead[R] = std::min(B->FirstRead[R], I);
      B->LastRead[R] = std::max(B->LastRead[R], I);
      if (B->StepPos[I] >= 0) {
        B->MinReadPos[R] = std::min(B->MinReadPos[R], B->StepPos[I]);
        B->MaxReadPos[R] = std::max(B->MaxReadPos[R], B->StepPos[I]);
      }
    }
  }
  for (TensorId T = 0; T < NT; ++T) {
    const ScheduleTensor &ST = S.Tensors[T];
    ValueId V = valueOfTensor(S, G, T);
    B->Value[T] = V;
    bool OfWeight = V != NoId && G.Values[V].Kind == ValueKind::Weight;
    if (ST.Kind == TensorKind::Weight || ST.Kind == TensorKind::Constant)
      B->Class[T] = OfWeight ? TensorClass::Weight : TensorClass::Other;
    else if (ST.Kind == TensorKind::OptimizerState)
      B->Class[T] = TensorClass::OptimizerState;
    else if (ST.Kind == TensorKind::Gradient && OfWeight)
      B->Class[T] = TensorClass::WeightGrad;
    else if (Writer[T] != SIZE_MAX && Writer[T] >= B->FwdEnd &&
             S.Steps[Writer[T]].Kind == StepKind::Optimizer &&
             ST.Kind == TensorKind::Activation)
      // "Adam.scratch", or one "Adam.scratch(w)" per parameter (foreach).
      B->Class[T] = TensorClass::OptimizerScratch;
    else if (V != NoId && weightBehind(G, V) != NoId)
      B->Class[T] = TensorClass::Other; // a view of a weight: its bytes
    // Optimizer scratch (foreach Adam's fp32 copy of each second moment)
    // belongs where its parameter does, and shards as its state does.
    if (B->Class[T] == TensorClass::OptimizerScratch && V != NoId &&
        weightBehind(G, V) != NoId)
      V = weightBehind(G, V), OfWeight = true;
    if (B->Class[T] != TensorClass::Activation &&
        (B->Class[T] != TensorClass::OptimizerScratch || OfWeight) &&
        B->Class[T] != TensorClass::Other) {
      B->Weight[T] = OfWeight ? V : NoId;
      NodeId U = OfWeight ? L.FirstUser[V] : NoId;
      B->HomePos[T] = U == NoId ? 0 : positionOf(L, U);
      continue;
    }
    size_t W = Writer[T];
    B->HomePos[T] =
        W == SIZE_MAX || B->StepPos[W] < 0
            ? (ST.Kind == TensorKind::GraphInput ? 0 : L.NumBlocks + 1)
            : B->StepPos[W];
    B->Saved[T] = W != SIZE_MAX && W < B->FwdEnd &&
                  B->LastRead[T] >= B->FwdEnd && B->FirstRead[T] < SIZE_MAX;
  }
  // A buffer is saved when any of its tensors is (a saved view of a
  // forward value keeps the value's bytes).
  Lifetimes Life = computeLifetimes(S, In.Pipeline.Liveness);
  for (const LiveBuffer &LB : Life.Buffers) {
    bool Any = false;
    for (TensorId M : LB.Members)
      Any |= B->Saved[M];
    for (TensorId M : LB.Members)
      B->Saved[M] = Any && B->Class[M] == TensorClass::Activation;
  }
  // Per-position sums for the pipeline partition and the time estimate.
  unsigned NP = L.NumBlocks + 2;
  B->PosSeconds.assign(NP, 0);
  B->PosSavedBytes.assign(NP, 0);
  B->PosStateBytes.assign(NP, 0);
  for (TensorId T = 0; T < NT; ++T) {
    int P = std::max(0, B->HomePos[T]);
    if (B->Saved[T])
      B->PosSavedBytes[P] += S.Tensors[T].SizeBytes;
    else if (B->Class[T] != TensorClass::Activation &&
             B->Class[T] != TensorClass::OptimizerScratch)
      B->PosStateBytes[P] += S.Tensors[T].SizeBytes;
  }
  CostModel CM(G, evaluateDims(G, In.Shapes, In.Bindings), In.Device);
  std::vector<double> Times = CM.stepTimes(S);
  for (size_t I = 0; I < NS; ++I) {
    if (B->StepPos[I] >= 0)
      B->PosSeconds[B->StepPos[I]] += Times[I];
    else
      B->OptimizerSeconds += Times[I];
  }
  // The hidden state one tensor-parallel all-reduce moves: the input of the
  // LM head (the graph output's producer), at the training precision.
  if (!G.Outputs.empty() && G.Values[G.Outputs[0]].Producer != NoId) {
    const Node &Head = G.Nodes[G.Values[G.Outputs[0]].Producer];
    for (ValueId V : Head.Inputs)
      if (V != NoId && weightBehind(G, V) == NoId)
        B->HiddenBytes = S.Tensors[V].SizeBytes;
  }
  return B;
}
