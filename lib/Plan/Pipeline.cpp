//===- Pipeline.cpp - from an analysed graph to a verified plan -----------===//
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Analysis/SymbolBinding.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace oomplan;

// The first graph input with an unbound declared dim, as --input-shape
// would give it: " (input 'x' is 1xSx16)".
static std::string
inputShapeExample(const Graph &G, const ShapeInfo &Shapes,
                  llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  for (ValueId In : G.Inputs) {
    const Value &V = G.Values[In];
    bool Unbound = false;
    std::vector<std::string> Dims;
    for (const DeclaredDim &D : V.Shape) {
      if (D.K == DeclaredDim::Kind::Static) {
        Dims.push_back(std::to_string(D.Size));
        continue;
      }
      if (D.K != DeclaredDim::Kind::Symbol || D.Symbol >= Bindings.size())
        return ""; // An unnamed dim: no example to give.
      if (Bindings[D.Symbol]) {
        Dims.push_back(std::to_string(*Bindings[D.Symbol]));
        continue;
      }
      Unbound = true;
      Dims.push_back(Shapes.SymbolNames[D.Symbol]);
    }
    if (Unbound)
      return " (input '" + V.Name + "' is " + llvm::join(Dims, "x") + ")";
  }
  return "";
}

llvm::Expected<std::vector<uint64_t>>
oomplan::evaluateValueBytes(const Graph &G, const ShapeInfo &Shapes,
                            llvm::ArrayRef<std::optional<int64_t>> Bindings) {
  // The symbols a user must bind: those of the graph inputs' declared dims.
  // A symbol that only an output declares is bound by inference once they
  // are, so naming it would only send the user after a derived size.
  std::vector<std::string> Unbound;
  for (ValueId In : G.Inputs)
    for (const DeclaredDim &D : G.Values[In].Shape)
      if (D.K == DeclaredDim::Kind::Symbol && D.Symbol < Bindings.size() &&
          !Bindings[D.Symbol] &&
          !llvm::is_contained(Unbound, Shapes.SymbolNames[D.Symbol]))
        Unbound.push_back(Shapes.SymbolNames[D.Symbol]);
  if (Unbound.empty())
    Unbound = unboundSymbols(Bindings, Shapes.SymbolNames);
  if (llvm::Error E = checkDimsAtBindings(G, Shapes, Bindings))
    return std::move(E);
  std::vector<uint64_t> Bytes(G.Values.size(), 0);
  for (ValueId Id = 0; Id < G.Values.size(); ++Id) {
    const Value &V = G.Values[Id];
    const ValueShape &VS = Shapes.Values[Id];
    if (!VS.Known) {
      if (V.Users.empty() && !V.IsGraphOutput)
        continue; // unused and unreachable: nothing allocates it
      return makeInputError(G.SourcePath + ": value '" + V.Name +
                            "' has no known size");
    }
    if (VS.Type == ElementType::String)
      return makeUnsupportedError(
          G.SourcePath + ": value '" + V.Name +
          "' is a string tensor: its size depends on the strings "
          "and cannot be planned");
    llvm::SmallVector<SymbolId, 4> Syms;
    VS.Bytes.collectSymbols(Syms);
    std::vector<std::string> Missing;
    for (SymbolId S : Syms)
      if (S >= Bindings.size() || !Bindings[S])
        Missing.push_back(Shapes.SymbolNames[S]);
    if (!Missing.empty())
      return makeInputError(
          G.SourcePath + ": unbound symbols: " + llvm::join(Unbound, ", ") +
          " (value '" + V.Name + "' needs " + llvm::join(Missing, ", ") +
          "); bind them with --batch, --seq, --dim NAME=VALUE or "
          "--input-shape NAME=D0xD1x..." +
          inputShapeExample(G, Shapes, Bindings));
    auto B = VS.Bytes.evaluate(Bindings, Shapes.SymbolNames);
    if (!B)
      return prependContext(B.takeError(),
                            G.SourcePath + ": value '" + V.Name + "': ");
    if (*B < 0)
      return makeInputError(G.SourcePath + ": value '" + V.Name +
                            "' has a negative size at these bindings (" +
                            llvm::Twine(*B) + " bytes)");
    Bytes[Id] = static_cast<uint64_t>(*B);
  }
  // A view shares its input's buffer, so it cannot be larger. Shape rules
  // cannot always prove a Reshape target's element count wrong (N vs 8*N),
  // but at the bindings it is a number: a bad model, not a bad schedule
  // (found by the fuzzer, test/lit/errors/fuzz-reshape-count.onnxtxt).
  for (NodeId N = 0; N < G.Nodes.size(); ++N) {
    const Node &Nd = G.Nodes[N];
    if (Nd.Inputs.empty() || Nd.Outputs.empty() || Nd.input(0) == NoId ||
        Nd.Outputs[0] == NoId || !isViewOp(G, Nd))
      continue;
    ValueId In = Nd.input(0), Out = Nd.Outputs[0];
    if (Bytes[Out] > Bytes[In])
      return makeInputError(
          G.SourcePath + ": " + G.describeNode(N) + ": output '" +
          G.Values[Out].Name + "' (" + llvm::Twine(Bytes[Out]) +
          " bytes) is larger than input '" + G.Values[In].Name + "' (" +
          llvm::Twine(Bytes[In]) +
          " bytes) at these bindings; the target shape does not keep the "
          "element count");
  }
  return Bytes;
}

llvm::Expected<Plan>
oomplan::planGraph(const Graph &G, const ShapeInfo &Shapes,
                   llvm::ArrayRef<std::optional<int64_t>> Bindings,
                   const PipelineOptions &Opts) {
  auto Bytes = evaluateValueBytes(G, Shapes, Bindings);
  if (!Bytes)
    return Bytes.takeError();
  Schedule S = makeDefaultSchedule(G, *Bytes);
  if (Opts.EditSchedule)
    if (llvm::Error E = Opts.EditSchedule(G, Shapes, Bindings, S))
      return std::move(E);
  if (llvm::Error E = verifySchedule(S))
    return prependContext(std::move(E), G.SourcePath + ": default schedule: ");
  Lifetimes L = computeLifetimes(S, Opts.Liveness);
  return buildPlan(std::move(S), std::move(L), Opts.Placement);
}
