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

static Expected<std::vector<PrefixValue>> constantDims(const Graph &Prefix) {
  auto S = inferShapes(Prefix);
  if (!S)
    return S.takeError();
  std::vector<PrefixValue> Out(S->Values.size());
  for (size_t V = 0; V < S->Values.size(); ++V) {
    const ValueShape &VS = S->Values[V];
    if (!VS.Known)
      continue;
    Out[V].Type = VS.Type;
    if (VS.UpperBound)
      continue;
    for (const SymExpr &D : VS.Dims) {
      std::optional<int64_t> C = D.getConstant();
      Out[V].Dims.push_back(C && *C >= 0 ? *C : -1);
    }
  }
  return Out;
}

ImportOptions driver::importOptions() {
  ImportOptions O;
  O.Dims = constantDims;
  return O;
}

Expected<std::unique_ptr<Graph>> driver::importModel(const api::Request &R) {
  ImportOptions O = importOptions();
  if (!R.ModelBytes)
    return importModelFile(R.ModelPath, O);
  if (StringRef(R.ModelPath).endswith(".onnxtxt"))
    return importModelText(*R.ModelBytes, R.ModelPath, O);
  return importModelBinary(*R.ModelBytes, R.ModelPath, O);
}
