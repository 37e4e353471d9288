//===- Diagnosis.cpp - why a plan does not fit ----------------------------===//
//
// Applies the four rules of Diagnosis.h. Every number in the evidence comes
// from a plan: the plan being reported, the plan at batch 1 and sequence 1,
// the capacity searches, or a re-plan of a resized schedule.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Report/Diagnosis.h"
#include "oomplan/Report/Formulas.h"
#include "oomplan/Report/Rescale.h"
#include "llvm/Support/Format.h"
#include <map>

using namespace oomplan;
using namespace oomplan::report;

llvm::StringRef report::causeName(Cause C) {
  static const char *Names[] = {"model too large", "sequence too long",
                                "batch too large", "activation explosion",
                                "fragmentation"};
  return Names[static_cast<unsigned>(C)];
}

llvm::StringRef report::causeKey(Cause C) {
  static const char *Keys[] = {"model_too_large", "sequence_too_long",
                               "batch_too_large", "activation_explosion",
                               "fragmentation"};
  return Keys[static_cast<unsigned>(C)];
}

static std::string percent(double Part, double Whole) {
  std::string S;
  llvm::raw_string_ostream OS(S);
  OS << llvm::format("%.1f%%", Whole > 0 ? 100.0 * Part / Whole : 0.0);
  return OS.str();
}

llvm::Expected<std::optional<unsigned>>
report::devicesNeeded(const Plan &P, const PlanContext &C,
                      const PipelineOptions &Opts, const Budget &Limit) {
  auto FitsOn = [&](unsigned N) -> llvm::Expected<bool> {
    auto Sharded = replanSharded(P, C, N, Opts);
    if (!Sharded)
      return Sharded.takeError();
    return fits(Limit, Sharded->figures());
  };
  if (fits(Limit, P.figures()))
    return std::optional<unsigned>(1);
  unsigned Lo = 1, Hi = 2; // Lo does not fit; find a Hi that does.
  for (;; Lo = Hi, Hi *= 2) {
    if (Hi > 4096)
      return std::optional<unsigned>();
    auto F = FitsOn(Hi);
    if (!F)
      return F.takeError();
    if (*F)
      break;
  }
  while (Hi - Lo > 1) {
    unsigned Mid = Lo + (Hi - Lo) / 2;
    auto F = FitsOn(Mid);
    if (!F)
      return F.takeError();
    (*F ? Hi : Lo) = Mid;
  }
  return std::optional<unsigned>(Hi);
}

// Weights, gradients and optimizer state of the model state in P (aligned).
static std::vector<uint64_t> modelStateByClass(const Plan &P,
                                               const PlanContext &C) {
  std::vector<uint64_t> Out(NumMemoryClasses, 0);
  for (const LiveBuffer &L : P.Life.Buffers)
    if (isModelState(P, C, L.Root))
      Out[static_cast<unsigned>(memoryClassOf(L.Kind))] +=
          (L.SizeBytes + P.AlignBytes - 1) / P.AlignBytes * P.AlignBytes;
  return Out;
}

// The model state's classes that hold bytes: "weights" for inference,
// "weights, gradients and optimizer state" in training (an inference plan
// has no gradients to name).
static std::vector<MemoryClass> stateClasses(const std::vector<uint64_t> &S) {
  std::vector<MemoryClass> Out;
  for (MemoryClass K : {MemoryClass::Weights, MemoryClass::Gradients,
                        MemoryClass::OptimizerState})
    if (S[unsigned(K)] || K == MemoryClass::Weights)
      Out.push_back(K);
  return Out;
}

static std::string stateClassNames(const std::vector<uint64_t> &S) {
  std::vector<MemoryClass> Ks = stateClasses(S);
  std::string Out;
  for (size_t I = 0; I < Ks.size(); ++I)
    Out += (I == 0               ? ""
            : I + 1 == Ks.size() ? " and "
                                 : ", ") +
           memoryClassName(Ks[I]).str();
  return Out;
}

// "weights 1.00 GiB (...), gradients 1.00 GiB (...)".
static std::string stateClassBytes(const std::vector<uint64_t> &S) {
  std::string Out;
  for (MemoryClass K : stateClasses(S))
    Out += (Out.empty() ? "" : ", ") + memoryClassName(K).str() + " " +
           describeBytes(S[unsigned(K)]);
  return Out;
}

static void addRemedies(Finding &F, const Plan &Min, const PlanContext &CMin,
                        const DiagnosisInput &In, llvm::StringRef Where,
                        std::optional<unsigned> Devices) {
  if (Devices) {
    F.Value = *Devices;
    F.Evidence.push_back("sharding the model state over " +
                         std::to_string(*Devices) + " devices" + Where.str() +
                         " fits (ZeRO-3/FSDP style, planned)");
  } else {
    F.Evidence.push_back("no sharding over up to 4096 devices fits" +
                         Where.str());
  }
  // The same plan as the "lower precision" remedy and --precision=bf16-mixed
  // (fp32 master weights and moments included in training).
  if (!In.PlanAtPrecision || !*In.PlanAtPrecision ||
      usesHalfPrecision(Min, CMin))
    return;
  auto Half = (*In.PlanAtPrecision)(CMin.Bindings, LowerPrecisionName);
  if (!Half) {
    // The 16-bit line is optional evidence: when the half-precision re-plan
    // fails (sizes overflow, an op has no 16-bit form), the finding stands
    // without it rather than failing the whole report.
    llvm::consumeError(Half.takeError());
    return;
  }
  bool Training = llvm::any_of(Min.Sched.Steps, [](const Step &S) {
    return S.Kind == StepKind::Optimizer;
  });
  uint64_t HalfBytes = neededBytes(In.Limit, Half->figures());
  F.Evidence.push_back(
      (Training ? std::string("--precision=") + LowerPrecisionName +
                      " (16-bit activations and gradients, fp32 master "
                      "weights and optimizer state)"
                : std::string("--precision=bf16 (16-bit weights and "
                              "activations)")) +
      Where.str() + " need " + describeBytes(HalfBytes) +
      (fits(In.Limit, Half->figures()) ? ": fits" : ": still does not fit"));
}

static llvm::Expected<std::optional<Finding>>
modelTooLarge(const DiagnosisInput &In) {
  std::vector<std::optional<int64_t>> MinB = withSymbols(
      withSymbols(In.C.Bindings, In.Roles.Batch, 1), In.Roles.Seq, 1);
  auto Min = In.PlanAt(MinB);
  if (!Min)
    return Min.takeError();
  if (fits(In.Limit, Min->figures()))
    return std::nullopt;
  PlanContext CMin{In.C.G, In.C.Shapes, MinB};
  std::vector<uint64_t> State = modelStateByClass(*Min, CMin);
  uint64_t StateBytes = 0;
  for (uint64_t B : State)
    StateBytes += B;
  uint64_t MinBytes = neededBytes(In.Limit, Min->figures());
  Finding F;
  F.Kind = Cause::ModelTooLarge;
  // Name only the roles the model has: "at batch 1" for a CNN.
  bool HasBatch = !In.Roles.Batch.empty(), HasSeq = !In.Roles.Seq.empty();
  std::string Where = HasBatch && HasSeq ? " at batch 1, sequence 1"
                      : HasBatch         ? " at batch 1"
                      : HasSeq           ? " at sequence 1"
                                         : "";
  uint64_t BudgetBytes = In.Limit.CapacityBytes.value_or(0);
  if (!fits(In.Limit, Figures{StateBytes, {}}))
    F.Summary = "the model state alone (" + stateClassNames(State) +
                ", all of it) needs " + describeBytes(StateBytes) +
                ", over the budget of " + describeBytes(BudgetBytes) +
                ": no batch or sequence change can fix it";
  else
    F.Summary = "even" + Where + " the plan needs " + describeBytes(MinBytes) +
                ", over the budget of " + describeBytes(BudgetBytes) +
                ": no batch or sequence change can fix it";
  F.Evidence.push_back(
      "model state, all of it (the class table counts the arena's share at "
      "the peak step only): " +
      stateClassBytes(State));
  F.Evidence.push_back("plan" + Where + ": " + describeBytes(MinBytes) +
                       " with " + describeBytes(In.Limit.OverheadBytes) +
                       " fixed overhead");
  auto Devices = devicesNeeded(*Min, CMin, In.Opts, In.Limit);
  if (!Devices)
    return Devices.takeError();
  addRemedies(F, *Min, CMin, In, Where, *Devices);
  return F;
}

static void capacityEvidence(Finding &F, const CapacityResult &R,
                             llvm::StringRef Other) {
  if (!R.Max) {
    F.Evidence.push_back("no " + R.Role + " fits" + Other.str() + ": at " +
                         R.Role + "=1 the plan needs " +
                         describeBytes(*R.BytesAbove));
    return;
  }
  F.Value = *R.Max;
  F.Evidence.push_back(R.Role + "=" + std::to_string(*R.Max) + Other.str() +
                       " needs " + describeBytes(R.BytesAtMax) +
                       (R.AtLeast ? " (the search cap; larger may fit)" : ""));
  if (R.BytesAbove)
    F.Evidence.push_back(R.Role + "=" + std::to_string(*R.Max + 1) + " needs " +
                         describeBytes(*R.BytesAbove) + ": does not fit");
}

static std::optional<Finding> sequenceTooLong(const DiagnosisInput &In,
                                              uint64_t Total) {
  const PeakReport &Pk = In.Peak;
  if (In.Roles.Seq.empty() || !In.Seq ||
      uint64_t(Pk.QuadraticBytes) * 2 < Pk.LiveBytes ||
      uint64_t(Pk.QuadraticBytes) * 5 < Total)
    return std::nullopt;
  Finding F;
  F.Kind = Cause::SequenceTooLong;
  int64_t Batch = boundValue(In.C.Bindings, In.Roles.Batch);
  std::string Other = Batch ? " at batch " + std::to_string(Batch) : "";
  F.Evidence.push_back("terms quadratic in seq hold " +
                       describeBytes(uint64_t(Pk.QuadraticBytes)) +
                       " of the arena's peak " + describeBytes(Pk.LiveBytes) +
                       " (" + percent(Pk.QuadraticBytes, Pk.LiveBytes) +
                       ") at step " + std::to_string(Pk.Step) + ", " +
                       percent(Pk.QuadraticBytes, Total) + " of the total");
  // Name the tensors that are mostly quadratic and hold at least 1% of the
  // quadratic bytes; [..., seq, seq] ones are attention scores and the like.
  unsigned Scores = 0;
  for (const PeakBuffer &B : Pk.Buffers)
    if (B.QuadraticBytes * 2 >= int64_t(B.Bytes) && B.Bytes > 0 &&
        B.QuadraticBytes * 100 >= Pk.QuadraticBytes) {
      F.Tensors.push_back(B.Name);
      Scores += B.SeqBySeq;
      if (F.Tensors.size() > 4)
        continue; // listed in F.Tensors (and the JSON), not in the text
      F.Evidence.push_back(
          "  " + B.Name + "  " + B.Type + "  " +
          B.Formula.str(In.C.Shapes.SymbolNames) + " = " +
          describeBytes(B.Bytes) +
          (B.SeqBySeq ? "  (seq x seq: attention scores)" : ""));
    }
  if (F.Tensors.size() > 4)
    F.Evidence.push_back("  ... and " + std::to_string(F.Tensors.size() - 4) +
                         " more");
  capacityEvidence(F, *In.Seq, Other);
  std::string What = Scores ? std::to_string(Scores) +
                                  " seq x seq attention-score tensor" +
                                  (Scores > 1 ? "s" : "")
                            : std::to_string(F.Tensors.size()) + " tensor" +
                                  (F.Tensors.size() > 1 ? "s" : "");
  F.Summary = "terms quadratic in the sequence length (" + What + ", " +
              (F.Tensors.empty() ? "" : F.Tensors.front()) +
              (F.Tensors.size() > 1 ? " and others" : "") +
              ") dominate the peak; " +
              (In.Seq->Max ? "the longest sequence that fits" + Other + " is " +
                                 std::to_string(*In.Seq->Max)
                           : "no sequence length fits" + Other);
  return F;
}

static std::optional<Finding> batchTooLarge(const DiagnosisInput &In) {
  int64_t Batch = boundValue(In.C.Bindings, In.Roles.Batch);
  if (!In.Batch || !In.Batch->Max || *In.Batch->Max >= Batch)
    return std::nullopt;
  int64_t Seq = boundValue(In.C.Bindings, In.Roles.Seq);
  std::string Other = Seq ? " at seq " + std::to_string(Seq) : "";
  Finding F;
  F.Kind = Cause::BatchTooLarge;
  F.Summary = "the plan fits at batch 1; the largest batch that fits" + Other +
              " is " + std::to_string(*In.Batch->Max) +
              " (asked: " + std::to_string(Batch) + ")";
  capacityEvidence(F, *In.Batch, Other);
  return F;
}

static std::optional<Finding> activationExplosion(const DiagnosisInput &In,
                                                  const Finding *Seq) {
  const PeakReport &Pk = In.Peak;
  uint64_t Sum = 0;
  size_t K = 0;
  while (K < Pk.Buffers.size() && K < 3 && Sum * 2 < Pk.LiveBytes)
    Sum += Pk.Buffers[K++].Bytes;
  if (Sum * 2 < Pk.LiveBytes || Pk.LiveBytes == 0)
    return std::nullopt;
  Finding F;
  F.Kind = Cause::ActivationExplosion;
  bool AllQuadratic = Seq != nullptr;
  for (size_t I = 0; I < K; ++I) {
    const PeakBuffer &B = Pk.Buffers[I];
    F.Tensors.push_back(B.Name);
    F.Evidence.push_back("  " + B.Name + "  " + B.Type + "  from " +
                         B.Producer + "  " + describeBytes(B.Bytes) + ", " +
                         percent(B.Bytes, Pk.LiveBytes) + " of the peak");
    if (Seq && llvm::find(Seq->Tensors, B.Name) == Seq->Tensors.end())
      AllQuadratic = false;
  }
  if (AllQuadratic)
    return std::nullopt; // Already named, as quadratic in seq.
  F.Summary = std::to_string(K) + " tensor" + (K > 1 ? "s" : "") + " hold " +
              percent(Sum, Pk.LiveBytes) + " of the arena's peak at step " +
              std::to_string(Pk.Step) + ": " + F.Tensors.front() +
              (K > 1 ? " and others" : "");
  return F;
}

llvm::Expected<std::vector<Finding>>
report::diagnose(const DiagnosisInput &In) {
  std::vector<Finding> Out;
  if (fits(In.Limit, In.P.figures()))
    return Out;
  uint64_t Total = neededBytes(In.Limit, In.P.figures());
  auto Model = modelTooLarge(In);
  if (!Model)
    return Model.takeError();
  if (*Model)
    Out.push_back(std::move(**Model));
  std::optional<Finding> Seq = sequenceTooLong(In, Total);
  if (Seq)
    Out.push_back(*Seq);
  if (std::optional<Finding> B = batchTooLarge(In))
    Out.push_back(std::move(*B));
  if (std::optional<Finding> E = activationExplosion(In, Seq ? &*Seq : nullptr))
    Out.push_back(std::move(*E));
  return Out;
}
