//===- DriverFusion.cpp - --fuse and --order for a model ------------------===//
//
// Both lower the plan below the file's lower bound and both default on for
// inference only (training graphs keep their ops and their order: the
// saved-tensor rules are per ONNX op, and the backward order follows the
// forward one). Fusion rewrites the graph once, before planning, so every
// re-plan (capacity searches, sweeps, micro-batches) plans the fused graph;
// the order and the fused attention's scratch are schedule edits run on each
// plan. The main plan's lower bound in the file's order and in the chosen
// order are kept for the report.
//
//===----------------------------------------------------------------------===//
#include "Workspace.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/Fit/Reorder.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/Report/Breakdown.h"
#include "oomplan/Report/Capacity.h"
#include "oomplan/Schedule/PassRegistry.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

// fused::attentionWorkspaceBytes over the dims' formulas: the same blocks,
// tasks and workers, so the workspace follows batch and sequence in the
// report's formulas. The empty case (a zero dim) is left out: no workspace
// is added there.
static SymExpr attentionWorkspaceFormula(const ShapeInfo &Shapes,
                                         const Node &N) {
  const std::vector<SymExpr> &Out = Shapes.Values[N.Outputs[0]].Dims;
  const std::vector<SymExpr> &V = Shapes.Values[N.Inputs[2]].Dims;
  auto K = [](uint64_t C) { return SymExpr::constant(int64_t(C)); };
  SymExpr BatchHeads = K(1);
  for (size_t I = 0; I + 2 < Out.size(); ++I)
    BatchHeads *= Out[I];
  SymExpr Br = SymExpr::min(K(fused::AttentionBlockRows), Out[Out.size() - 2]);
  SymExpr Bc = SymExpr::min(K(fused::AttentionBlockCols), V[V.size() - 2]);
  SymExpr Tasks = BatchHeads * SymExpr::ceilDiv(Out[Out.size() - 2], Br);
  SymExpr Workers = SymExpr::min(K(fused::AttentionMaxWorkers), Tasks);
  return Workers * K(4) * (Br * Bc + Br * Out.back() + K(2) * Br);
}

// The planner-only path's count of OomplanAttention's scratch: the formula
// the CPU kernel declares (IR/FusedOps.h), as the write after its output.
static Error addAttentionWorkspaces(const Graph &G, const ShapeInfo &Shapes,
                                    ArrayRef<std::optional<int64_t>> B,
                                    Schedule &S) {
  for (Step &St : S.Steps) {
    if (St.Kind != StepKind::Compute || St.Node == NoId ||
        G.Nodes[St.Node].OpType != fused::AttentionOp)
      continue;
    const Node &N = G.Nodes[St.Node];
    auto Out = dimsAt(Shapes, B, N.Outputs[0]);
    if (!Out)
      return Out.takeError();
    auto V = dimsAt(Shapes, B, N.Inputs[2]);
    if (!V)
      return V.takeError();
    uint64_t BatchHeads = 1;
    for (size_t I = 0; I + 2 < Out->size(); ++I)
      BatchHeads = saturatingMul(BatchHeads, (*Out)[I]);
    uint64_t Bytes = fused::attentionWorkspaceBytes(
        BatchHeads, (*Out)[Out->size() - 2], (*V)[V->size() - 2], Out->back());
    if (Bytes == 0)
      continue;
    // Room, not traffic: the CUDA kernel keeps its tiles in shared memory,
    // the CPU kernel's are per worker and stay in its caches.
    driver::addWorkspaceWrite(S, St, N, Bytes, /*Scratch=*/Bytes,
                              attentionWorkspaceFormula(Shapes, N));
  }
  return Error::success();
}

static Expected<bool> choice(const std::optional<std::string> &Given,
                             StringRef Option, StringRef On, StringRef Off,
                             bool Default) {
  if (!Given)
    return Default;
  if (*Given == On)
    return true;
  if (*Given == Off)
    return false;
  return makeInputError("--" + Option + "=" + *Given + ": expected " + On +
                        " or " + Off);
}

// Order (and the attention's scratch) as an edit of every planned schedule.
static void installScheduleEdit(Session &S) {
  std::shared_ptr<FusionRecord> Rec = S.Fusion;
  bool AddScratch = !S.KernelWorkspaces && Rec->Stats.Attention > 0;
  EstimateOptions EO;
  EO.Liveness.InPlace = S.Req.InPlace;
  EO.AlignBytes = S.Req.AlignBytes.value_or(256);
  EO.IOInArena = S.Req.IOInArena;
  S.appendScheduleEdit([=](const Graph &G, const ShapeInfo &Shapes,
                           ArrayRef<std::optional<int64_t>> B,
                           Schedule &Sched) -> Error {
    if (AddScratch)
      if (Error E = addAttentionWorkspaces(G, Shapes, B, Sched))
        return E;
    // The first plan is the main one (runModel, planModel plan it before
    // any search); later calls are re-plans at other bindings.
    bool First = !Rec->Recorded;
    Rec->Recorded = true;
    if (First && Rec->Stats.total())
      Rec->Passes.push_back({passName(PassId::Fusion).str(), Sched});
    if (!Rec->MemoryOrder)
      return Error::success();
    Schedule R = reorderForMemory(Sched, EO);
    if (First) {
      Rec->FileOrderBound = estimateMemory(Sched, EO).ArenaPeak;
      Rec->ChosenOrderBound = estimateMemory(R, EO).ArenaPeak;
      Rec->Passes.push_back({passName(PassId::Reorder).str(), R});
    }
    Sched = std::move(R);
    return Error::success();
  });
}

Error driver::prepareModel(Session &S, std::unique_ptr<Graph> &G,
                           ShapeInfo &Shapes) {
  bool Train = S.training();
  auto Fuse = choice(S.Req.Fuse, "fuse", "auto", "none", !Train);
  if (!Fuse)
    return Fuse.takeError();
  auto Memory = choice(S.Req.Order, "order", "memory", "file", !Train);
  if (!Memory)
    return Memory.takeError();
  if (Train && *Fuse)
    return makeUnsupportedError(
        "--fuse=auto with --train: the fused ops have no backward rules; "
        "the report's \"what would help\" models fused attention instead");
  if (Train && *Memory)
    return makeUnsupportedError("--order=memory with --train: use --reorder "
                                "(a fit transform)");
  S.Fusion->Fuse = *Fuse;
  S.Fusion->MemoryOrder = *Memory;
  if (*Fuse) {
    FusionOptions O;
    O.Supported = S.FusedSupported;
    auto F = fuseGraph(*G, Shapes, O);
    if (!F)
      return F.takeError();
    // The report's "lower precision" remedy plans what --precision=bf16
    // plans: the graph fused without the fp32-only convolutions.
    if ((F->Stats.Conv || F->Stats.ConvDepthwise) && !S.InferenceHalf &&
        !Train) {
      FusionOptions H = O;
      H.Supported = [Sup = O.Supported](StringRef Op) {
        return Op != fused::ConvOp && Op != fused::ConvDepthwiseOp &&
               (!Sup || Sup(Op));
      };
      auto HF = fuseGraph(*G, Shapes, H);
      if (!HF)
        return HF.takeError();
      std::shared_ptr<const Graph> HG(HF->G ? std::move(HF->G)
                                            : std::make_unique<Graph>(*G));
      auto HS = inferShapes(*HG);
      if (!HS)
        return makeInternalError("shape inference of the fused graph: " +
                                 toString(HS.takeError()));
      S.HalfGraph = std::move(HG);
      S.HalfShapes = std::make_shared<const ShapeInfo>(std::move(*HS));
    }
    S.Fusion->Stats = F->Stats;
    if (F->G) {
      auto NS = inferShapes(*F->G);
      if (!NS)
        return makeInternalError("shape inference of the fused graph: " +
                                 toString(NS.takeError()));
      G = std::move(F->G);
      Shapes = std::move(*NS);
    }
  }
  installScheduleEdit(S);
  return Error::success();
}

static Error adviseFusedAttention(Session &S, const Graph &G,
                                  const ShapeInfo &Shapes,
                                  ArrayRef<std::optional<int64_t>> Bindings,
                                  const PipelineOptions &PO) {
  // On PyTorch's CUDA runtime the plan has the fused attention already
  // where the graph shows it (--attention), and its attention line gives
  // the other mode's total.
  if (S.training() && S.Train.Runtime == TrainRuntime::PyTorchCUDA)
    return Error::success();
  const std::vector<SymbolId> &Seq = S.Roles.Seq;
  if (Seq.empty() || !S.Limit.given() || Seq[0] >= Bindings.size() ||
      !Bindings[Seq[0]])
    return Error::success();
  FusionOptions O;
  O.Supported = [](StringRef Op) { return Op == fused::AttentionOp; };
  O.AttentionLogSumExp = true;
  auto F = fuseGraph(G, Shapes, O);
  if (!F)
    return F.takeError();
  if (!F->G)
    return Error::success(); // no attention to fuse
  auto FS = inferShapes(*F->G);
  if (!FS)
    return FS.takeError();
  std::vector<std::optional<int64_t>> B(Bindings.begin(), Bindings.end());
  B.resize(FS->SymbolNames.size());
  report::PlanFn PlanAt = [&](ArrayRef<std::optional<int64_t>> At) {
    return planTraining(S, *F->G, *FS, At, PO, /*Quiet=*/true);
  };
  auto Now = PlanAt(B);
  if (!Now)
    return Now.takeError();
  auto Cap = report::findCapacity(PlanAt, B, Seq, "seq", S.Limit);
  if (!Cap)
    return Cap.takeError();
  int64_t Len = *Bindings[Seq[0]];
  std::string Text;
  raw_string_ostream OS(Text);
  OS << "fused attention (PyTorch 2.0+ scaled_dot_product_attention, flash "
        "backend: output and log-sum-exp kept, scores recomputed in the "
        "backward; "
     << F->Stats.Attention << " attention blocks): seq " << Len << " needs "
     << formatBytes(neededBytes(S.Limit, Now->figures()));
  if (!Cap->Max)
    OS << "; not even seq 1 fits the budget";
  else if (Cap->AtLeast)
    OS << "; the longest sequence that fits is at least " << *Cap->Max;
  else
    OS << "; the longest sequence that fits the budget: " << *Cap->Max
       << " (seq " << *Cap->Max << " needs " << formatBytes(Cap->BytesAtMax)
       << " = " << Cap->BytesAtMax << " bytes, seq " << *Cap->Max + 1
       << " needs " << formatBytes(Cap->BytesAbove.value_or(0)) << " = "
       << Cap->BytesAbove.value_or(0) << " bytes)";
  S.Fusion->TrainingAdvice = OS.str();
  return Error::success();
}

void driver::fusedAttentionAdvice(Session &S, const Graph &G,
                                  const ShapeInfo &Shapes,
                                  ArrayRef<std::optional<int64_t>> Bindings,
                                  const PipelineOptions &PO, bool AsNote) {
  if (Error E = adviseFusedAttention(S, G, Shapes, Bindings, PO))
    S.warn("fused attention estimate: " + toString(std::move(E)));
  if (AsNote && !S.Fusion->TrainingAdvice.empty()) {
    S.note(S.Fusion->TrainingAdvice);
    S.Fusion->TrainingAdvice.clear();
  }
}

void driver::printFusionSettings(Session &S) {
  const FusionRecord &R = *S.Fusion;
  if (!R.TrainingAdvice.empty())
    S.OS << R.TrainingAdvice << '\n';
  if (R.Fuse) {
    const FusionStats &F = R.Stats;
    S.OS << "fusion: auto, " << F.Attention << " attention, " << F.MatMul
         << " matmul epilogue, " << F.Conv << " conv (" << F.ConvResidual
         << " adding a residual in place)";
    if (F.ConvDepthwise)
      S.OS << ", " << F.ConvDepthwise << " pointwise + depthwise conv";
    S.OS << " fused ops replace " << F.NodesRemoved << " nodes\n";
  }
  if (R.MemoryOrder && R.Recorded)
    S.OS << "order: memory-aware; arena lower bound "
         << formatBytes(R.FileOrderBound) << " in the file's order, "
         << formatBytes(R.ChosenOrderBound) << " in the chosen order\n";
}
