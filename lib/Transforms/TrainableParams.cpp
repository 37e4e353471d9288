//===- TrainableParams.cpp - which weights train, and option parsing ------===//
//
// A weight trains when it is a floating-point initializer that some node
// reads in a position a gradient flows into (per the saved-tensor table), is
// not a scalar (exporters store constants such as 1/sqrt(2) as scalar
// initializers), is not frozen, and is not the second of a tied pair.
// BatchNorm running statistics are inputs 3 and 4, which receive no
// gradient, so they stay resident weights without optimizer state.
//
// Also here: parsing of the training options, the eval-export warning, and
// the --emit=shapes listing of the tensors the transform adds.
//
//===----------------------------------------------------------------------===//
#include "SavedTensorRules.h"
#include "TrainingPatterns.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "oomplan/Transforms/Training.h"
#include "llvm/ADT/StringExtras.h"
#include "llvm/ADT/StringSwitch.h"
#include "llvm/Support/GlobPattern.h"
#include "llvm/Support/Regex.h"

using namespace oomplan;
using namespace oomplan::training;

llvm::Expected<OptimizerKind> oomplan::parseOptimizer(llvm::StringRef Name) {
  std::optional<OptimizerKind> K =
      llvm::StringSwitch<std::optional<OptimizerKind>>(Name)
          .Case("sgd", OptimizerKind::SGD)
          .Case("momentum", OptimizerKind::Momentum)
          .Case("adam", OptimizerKind::Adam)
          .Case("adamw", OptimizerKind::AdamW)
          .Default(std::nullopt);
  if (!K)
    return makeInputError("unknown optimizer '" + Name +
                          "' (expected sgd, momentum, adam or adamw)");
  return *K;
}

llvm::Expected<TrainPrecision> oomplan::parsePrecision(llvm::StringRef Name) {
  std::optional<TrainPrecision> P =
      llvm::StringSwitch<std::optional<TrainPrecision>>(Name)
          .Case("fp32", TrainPrecision::FP32)
          .Case("fp16-mixed", TrainPrecision::FP16Mixed)
          .Case("bf16-mixed", TrainPrecision::BF16Mixed)
          .Case("bf16-autocast", TrainPrecision::BF16Autocast)
          .Case("fp16-autocast", TrainPrecision::FP16Autocast)
          .Default(std::nullopt);
  if (!P && (Name == "fp16" || Name == "bf16"))
    return makeInputError("--precision=" + Name +
                          " is for inference (without --train); a training "
                          "step in 16 bits is " +
                          Name + "-mixed (fp32 master weights) or " + Name +
                          "-autocast");
  if (!P)
    return makeInputError("unknown precision '" + Name +
                          "' (expected fp32, fp16-mixed, bf16-mixed, "
                          "bf16-autocast or fp16-autocast)");
  return *P;
}

llvm::Expected<std::pair<std::string, std::string>>
oomplan::parseTiedPair(llvm::StringRef Text) {
  auto [A, B] = Text.split(',');
  A = A.trim();
  B = B.trim();
  if (A.empty() || B.empty() || B.contains(','))
    return makeInputError("--tied expects two weight names A,B; got '" + Text +
                          "'");
  return std::make_pair(A.str(), B.str());
}

// Pattern: a glob, or a regular expression after "re:".
static llvm::Expected<bool> matchesPattern(llvm::StringRef Pattern,
                                           llvm::StringRef Name) {
  if (Pattern.consume_front("re:")) {
    llvm::Regex R(Pattern);
    std::string Err;
    if (!R.isValid(Err))
      return makeInputError("--freeze: bad regular expression '" + Pattern +
                            "': " + Err);
    return R.match(Name);
  }
  auto Glob = llvm::GlobPattern::create(Pattern);
  if (!Glob)
    return makeInputError("--freeze: bad pattern '" + Pattern +
                          "': " + llvm::toString(Glob.takeError()));
  return Glob->match(Name);
}

// True when some node reads W where a gradient can flow.
static bool usedAsDifferentiable(const Graph &G, ValueId W) {
  for (NodeId U : G.Values[W].Users) {
    const Node &N = G.Nodes[U];
    const SavedRule *R = findSavedRule(N.OpType);
    uint32_t Diff = R ? R->DiffInputs : fallbackSavedRule().DiffInputs;
    for (size_t I = 0; I < N.Inputs.size() && I < 32; ++I)
      if (N.Inputs[I] == W && (Diff & bit(I)))
        return true;
  }
  return false;
}

// Element count of a weight with a fully static shape.
static std::optional<int64_t> staticElements(const Value &V) {
  int64_t N = 1;
  for (const DeclaredDim &D : V.Shape)
    if (D.K != DeclaredDim::Kind::Static ||
        __builtin_mul_overflow(N, D.Size, &N))
      return std::nullopt;
  return N;
}

static std::string describeCount(std::optional<int64_t> N) {
  return N ? std::to_string(*N) : "unknown";
}

llvm::Expected<std::vector<ValueId>>
oomplan::trainableParameters(const Graph &G, const TrainingOptions &Opts) {
  std::vector<bool> Secondary(G.Values.size(), false);
  for (const auto &[A, B] : Opts.Tied) {
    for (const std::string &Name : {A, B}) {
      ValueId V = G.findValue(Name);
      if (V == NoId || G.Values[V].Kind != ValueKind::Weight)
        return makeInputError("--tied: '" + Name + "' is not a weight of " +
                              G.SourcePath);
    }
    // B is dropped in favour of A, so a tie must name two distinct weights
    // of the same size, and A must not itself be dropped by another tie.
    ValueId VA = G.findValue(A), VB = G.findValue(B);
    if (VA == VB)
      return makeInputError("--tied: '" + A + "' is tied to itself");
    std::optional<int64_t> NA = staticElements(G.Values[VA]),
                           NB = staticElements(G.Values[VB]);
    if (!NA || !NB || *NA != *NB)
      return makeInputError("--tied: '" + A + "' and '" + B +
                            "' differ in element count (" + describeCount(NA) +
                            " and " + describeCount(NB) + ")");
    if (Secondary[VB])
      return makeInputError("--tied: '" + B + "' is the second of two ties");
    Secondary[VB] = true;
  }
  for (const auto &[A, B] : Opts.Tied)
    if (Secondary[G.findValue(A)])
      return makeInputError("--tied: '" + A +
                            "' is the second of another tie; tie to its first "
                            "weight instead");
  // A pattern that names no weight is a typo, and planning on as if it
  // froze something would answer a question nobody asked.
  for (const std::string &P : Opts.Freeze) {
    bool Any = false;
    for (ValueId W : G.Weights) {
      auto M = matchesPattern(P, G.Values[W].Name);
      if (!M)
        return M.takeError();
      Any |= *M;
    }
    if (!Any) {
      std::vector<std::string> Some;
      for (ValueId W : G.Weights)
        if (Some.size() < 3)
          Some.push_back("'" + G.Values[W].Name + "'");
      return makeInputError("--freeze '" + P + "' matches no weight of " +
                            G.SourcePath +
                            (Some.empty() ? std::string(" (it has none)")
                                          : " (its weights are named like " +
                                                llvm::join(Some, ", ") + ")"));
    }
  }
  std::vector<ValueId> Params;
  for (ValueId W : G.Weights) {
    const Value &V = G.Values[W];
    if (!isFloatingPoint(V.Type) || V.Shape.empty() || Secondary[W] ||
        !usedAsDifferentiable(G, W))
      continue;
    bool Frozen = false;
    for (const std::string &P : Opts.Freeze) {
      auto M = matchesPattern(P, V.Name);
      if (!M)
        return M.takeError();
      Frozen |= *M;
    }
    if (!Frozen)
      Params.push_back(W);
  }
  return Params;
}

// Warns only on evidence of an eval-mode export, never on the mere absence
// of Dropout or BatchNorm: most modern models (Llama: RMSNorm, SwiGLU, no
// dropout; diffusion UNets: GroupNorm) train without either. The evidence:
//  - a BatchNormalization in inference mode (training_mode 0; a training
//    export writes 1 and the two running-statistics outputs);
//  - a Dropout in inference mode (training_mode absent or constant false);
//  - convolutions that all carry a bias with no normalization anywhere and
//    no Dropout: what folding batch norms into the convolutions leaves
//    (a training export of a BatchNorm CNN has bias-free convolutions).
std::string oomplan::evalExportWarning(const Graph &G) {
  unsigned Conv = 0, ConvBias = 0, Norm = 0, Dropout = 0, EvalBN = 0,
           EvalDropout = 0;
  for (const Node &N : G.Nodes) {
    llvm::StringRef Op = N.OpType;
    if (Op == "Conv") {
      ++Conv;
      ConvBias += N.input(2) != NoId;
    }
    Norm += Op == "BatchNormalization" || Op == "InstanceNormalization" ||
            Op == "LayerNormalization" || Op == "GroupNormalization" ||
            Op == "ReduceMean"; // decomposed LayerNorm / RMSNorm
    if (Op == "BatchNormalization" && N.getInt("training_mode", 0) == 0 &&
        G.defaultOpset() >= 14)
      ++EvalBN;
    if (Op == "Dropout") {
      ++Dropout;
      std::optional<double> Train =
          N.input(2) == NoId ? std::optional<double>(0)
                             : training::scalarConstant(G, N.input(2));
      EvalDropout += Train && *Train == 0;
    }
  }
  std::string Evidence;
  if (EvalBN)
    Evidence = std::to_string(EvalBN) +
               " BatchNormalization nodes in inference mode (training_mode 0)";
  else if (EvalDropout)
    Evidence = std::to_string(EvalDropout) +
               " Dropout nodes in inference mode (no training_mode input, "
               "or false)";
  else if (Conv >= 3 && ConvBias == Conv && !Norm && !Dropout)
    Evidence = std::to_string(Conv) +
               " convolutions, all with a bias, and no normalization or "
               "Dropout anywhere: batch norms folded into convolutions look "
               "like this";
  if (Evidence.empty())
    return "";
  return G.SourcePath + " looks like an eval-mode export (" + Evidence +
         "): folded batch norms and removed or inactive dropouts keep no "
         "tensors here, so the training estimate may be low. Export for "
         "training with torch.onnx.export(..., "
         "training=torch.onnx.TrainingMode.TRAINING, "
         "do_constant_folding=False)";
}

void oomplan::printTrainingTensors(llvm::raw_ostream &OS, const Graph &G,
                                   const Schedule &S,
                                   const TrainingSummary &Sum) {
  OS << "training: " << Sum.TrainableParams << " trainable parameters ("
     << Sum.FrozenParams << " frozen), weights " << Sum.WeightBytes
     << " bytes, gradients " << Sum.GradBytes << " bytes, optimizer state "
     << Sum.OptimizerBytes << " bytes, optimizer scratch "
     << Sum.OptimizerScratch << " bytes\n";
  OS << "training tensors: " << (S.Tensors.size() - G.Values.size()) << '\n';
  for (TensorId T = G.Values.size(); T < S.Tensors.size(); ++T) {
    const ScheduleTensor &St = S.Tensors[T];
    OS << St.Name << ": " << tensorKindName(St.Kind) << ' ' << St.SizeBytes
       << " bytes (" << formatBytes(St.SizeBytes) << ")\n";
  }
}
