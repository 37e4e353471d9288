//===- DriverImport.cpp - the importer's DimOracle is the shape pass ------===//
//
// The oracle infers the shapes of the graph imported so far and reports,
// for each value, the dims that are constants and the element type. A prefix
// whose shapes fail to infer answers with that error, which the importer quotes
// when it refuses what needed the count.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Driver/Import.h"

using namespace llvm;
using namespace oomplan;

/// What S says of the values From on: their constant dims (-1 for the
/// others) and their element types.
static std::vector<PrefixValue> prefixValues(const ShapeInfo &S, ValueId From) {
  std::vector<PrefixValue> Out(S.Values.size() > From ? S.Values.size() - From
                                                      : 0);
  for (size_t V = From; V < S.Values.size(); ++V) {
    const ValueShape &VS = S.Values[V];
    PrefixValue &P = Out[V - From];
    if (!VS.Known)
      continue;
    P.Type = VS.Type;
    if (VS.UpperBound)
      continue;
    for (const SymExpr &D : VS.Dims) {
      std::optional<int64_t> C = D.getConstant();
      P.Dims.push_back(C && *C >= 0 ? *C : -1);
    }
  }
  return Out;
}

ImportOptions driver::importOptions() {
  ImportOptions O;
  // One inference state per import: each prefix extends the last, so each
  // call infers only the nodes added since (IncrementalShapeInference).
  auto Inference = std::make_shared<IncrementalShapeInference>();
  O.Dims = [Inference](const Graph &Prefix,
                       ValueId From) -> Expected<PrefixAnswer> {
    auto S = Inference->infer(Prefix);
    if (!S)
      return S.takeError();
    return PrefixAnswer{prefixValues(**S, From),
                        Inference->lastNodesInferred()};
  };
  return O;
}

Expected<std::unique_ptr<Graph>>
driver::importModel(StringRef Path, std::optional<StringRef> Bytes) {
  ImportOptions O = importOptions();
  if (!Bytes)
    return importModelFile(Path, O);
  if (Path.endswith(".onnxtxt"))
    return importModelText(*Bytes, Path, O);
  return importModelBinary(*Bytes, Path, O);
}

Expected<std::unique_ptr<Graph>> driver::importModel(const api::Request &R) {
  std::optional<StringRef> Bytes;
  if (R.ModelBytes)
    Bytes = *R.ModelBytes;
  return importModel(R.ModelPath, Bytes);
}
