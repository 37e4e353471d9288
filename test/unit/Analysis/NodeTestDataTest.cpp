//===- NodeTestDataTest.cpp - shape rules against ONNX's node tests -------===//
//
// Runs shape inference on every ONNX backend node test in Debian's
// libonnx-testdata and compares the inferred output dims with the dims of
// the expected outputs (test_data_set_0/output_<i>.pb). Small integer inputs
// (Reshape targets, axes, ...) are attached as contents, as a Constant would
// be in a real model; dynamic input dims are bound from input_<i>.pb.
//
// A test whose op has no rule, or that the importer or a rule rejects, is
// "unsupported"; only a wrong shape fails. The summary line gives the
// numbers. ONNX headers are used here only, to read TensorProto files.
//
//===----------------------------------------------------------------------===//
#include "onnx/onnx_pb.h"
#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/MemoryBuffer.h"
#include "llvm/Support/Path.h"
#include "gtest/gtest.h"
#include <map>
#include <set>

using namespace oomplan;

namespace {

const char *NodeTestDir = "/usr/share/libonnx-testdata/data/node";

std::optional<onnx::TensorProto> readTensor(const std::string &Path) {
  auto Buf = llvm::MemoryBuffer::getFile(Path);
  if (!Buf)
    return std::nullopt;
  onnx::TensorProto T;
  if (!T.ParseFromArray((*Buf)->getBufferStart(), int((*Buf)->getBufferSize())))
    return std::nullopt;
  return T;
}

/// Contents of a small float TensorProto (Resize scales, OneHot depth).
void floatContents(const onnx::TensorProto &T, TensorData &D) {
  if (T.float_data_size())
    D.Floats.assign(T.float_data().begin(), T.float_data().end());
  else if (T.double_data_size())
    D.Floats.assign(T.double_data().begin(), T.double_data().end());
  else if (T.has_raw_data() && D.Type == ElementType::Float)
    for (size_t I = 0; I + 4 <= T.raw_data().size(); I += 4) {
      float V;
      memcpy(&V, T.raw_data().data() + I, 4);
      D.Floats.push_back(V);
    }
  else if (T.has_raw_data() && D.Type == ElementType::Double)
    for (size_t I = 0; I + 8 <= T.raw_data().size(); I += 8) {
      double V;
      memcpy(&V, T.raw_data().data() + I, 8);
      D.Floats.push_back(V);
    }
}

/// Contents of a small integer or float TensorProto, or null.
std::shared_ptr<TensorData> smallContents(const onnx::TensorProto &T) {
  ElementType Type;
  if (!elementTypeFromNumber(T.data_type(), Type))
    return nullptr;
  if (Type == ElementType::Float || Type == ElementType::Double) {
    auto D = std::make_shared<TensorData>();
    D->Type = Type;
    D->Dims.assign(T.dims().begin(), T.dims().end());
    if (D->numElements() > 1024)
      return nullptr;
    floatContents(T, *D);
    return D->Floats.size() == D->numElements() ? D : nullptr;
  }
  if (!isIntegerLike(Type))
    return nullptr;
  auto D = std::make_shared<TensorData>();
  D->Type = Type;
  D->Dims.assign(T.dims().begin(), T.dims().end());
  if (D->numElements() > 1024)
    return nullptr;
  if (T.int64_data_size())
    D->Ints.assign(T.int64_data().begin(), T.int64_data().end());
  else if (T.int32_data_size())
    D->Ints.assign(T.int32_data().begin(), T.int32_data().end());
  else if (T.has_raw_data() && Type == ElementType::Int64) {
    const std::string &R = T.raw_data();
    for (size_t I = 0; I + 8 <= R.size(); I += 8) {
      int64_t V;
      memcpy(&V, R.data() + I, 8);
      D->Ints.push_back(V);
    }
  } else if (T.has_raw_data() && Type == ElementType::Int32) {
    const std::string &R = T.raw_data();
    for (size_t I = 0; I + 4 <= R.size(); I += 4) {
      int32_t V;
      memcpy(&V, R.data() + I, 4);
      D->Ints.push_back(V);
    }
  }
  if (D->Ints.size() != D->numElements())
    return nullptr;
  return D;
}

enum class Outcome { Passed, Mismatch, Unsupported };

struct Result {
  Outcome O = Outcome::Unsupported;
  std::string OpType, Detail;
};

Result runOne(const std::string &Dir) {
  Result R;
  auto G = importModelFile(Dir + "/model.onnx");
  if (!G) {
    R.Detail = llvm::toString(G.takeError());
    return R;
  }
  Graph &Gr = **G;
  if (Gr.Nodes.size() == 1)
    R.OpType = Gr.Nodes[0].OpType;
  std::string Data = Dir + "/test_data_set_0";
  std::vector<std::optional<int64_t>> Bind(Gr.Symbols.size());
  for (size_t I = 0; I < Gr.Inputs.size(); ++I) {
    auto T = readTensor(Data + "/input_" + std::to_string(I) + ".pb");
    if (!T)
      continue;
    Value &V = Gr.Values[Gr.Inputs[I]];
    if (std::shared_ptr<TensorData> D = smallContents(*T))
      V.Data = D;
    if (!V.HasDeclaredShape) {
      V.HasDeclaredShape = true;
      for (int64_t Dim : T->dims())
        V.Shape.push_back(DeclaredDim::fixed(Dim));
    }
    for (size_t A = 0; A < V.Shape.size() && int(A) < T->dims_size(); ++A)
      if (V.Shape[A].K == DeclaredDim::Kind::Symbol)
        Bind[V.Shape[A].Symbol] = T->dims(int(A));
  }
  auto S = inferShapes(Gr);
  if (!S) {
    R.Detail = llvm::toString(S.takeError());
    return R;
  }
  for (const std::string &W : S->Warnings)
    if (W.find("no shape rule") != std::string::npos) {
      R.Detail = W; // Declared shapes used: not our rule.
      return R;
    }
  Bind.resize(S->SymbolNames.size());
  // Unnamed dynamic input dims: bind the created unk_<input>_<axis> symbols.
  for (size_t I = 0; I < Gr.Inputs.size(); ++I) {
    auto T = readTensor(Data + "/input_" + std::to_string(I) + ".pb");
    const ValueShape &V = S->Values[Gr.Inputs[I]];
    for (size_t A = 0; T && A < V.Dims.size() && int(A) < T->dims_size(); ++A)
      if (std::optional<SymbolId> Sym = V.Dims[A].getSymbol())
        Bind[*Sym] = T->dims(int(A));
  }
  R.O = Outcome::Passed;
  for (size_t I = 0; I < Gr.Outputs.size(); ++I) {
    auto T = readTensor(Data + "/output_" + std::to_string(I) + ".pb");
    if (!T)
      continue;
    const ValueShape &V = S->Values[Gr.Outputs[I]];
    std::string Got, Want;
    bool Ok = int(V.Dims.size()) == T->dims_size();
    for (size_t A = 0; A < V.Dims.size(); ++A) {
      llvm::Expected<int64_t> D = V.Dims[A].evaluate(Bind, S->SymbolNames);
      int64_t Val = D ? *D : -1;
      if (!D)
        Got += "<" + llvm::toString(D.takeError()) + ">";
      Got += std::to_string(Val) + " ";
      if (int(A) < T->dims_size())
        Ok &= V.UpperBound ? Val >= T->dims(int(A)) : Val == T->dims(int(A));
    }
    for (int64_t D : T->dims())
      Want += std::to_string(D) + " ";
    if (!Ok) {
      R.O = Outcome::Mismatch;
      R.Detail += "output " + std::to_string(I) + ": got [" + Got + "] want [" +
                  Want + "] ";
    }
  }
  return R;
}

TEST(NodeTestDataTest, InferredShapesMatchExpectedOutputs) {
  if (!llvm::sys::fs::is_directory(NodeTestDir))
    GTEST_SKIP() << NodeTestDir << " not installed";
  std::error_code EC;
  std::vector<std::string> Dirs;
  for (llvm::sys::fs::directory_iterator It(NodeTestDir, EC), End;
       It != End && !EC; It.increment(EC))
    Dirs.push_back(It->path());
  std::sort(Dirs.begin(), Dirs.end());
  size_t Passed = 0, Mismatch = 0, Unsupported = 0;
  std::set<std::string> PassedOps;
  std::map<std::string, int> UnsupportedOps;
  bool Verbose = getenv("OOMPLAN_NODE_TESTS_VERBOSE") != nullptr;
  for (const std::string &Dir : Dirs) {
    Result R = runOne(Dir);
    std::string Name = llvm::sys::path::filename(Dir).str();
    switch (R.O) {
    case Outcome::Passed:
      ++Passed;
      PassedOps.insert(R.OpType);
      break;
    case Outcome::Mismatch:
      ++Mismatch;
      ADD_FAILURE() << Name << ": " << R.Detail;
      break;
    case Outcome::Unsupported:
      ++Unsupported;
      ++UnsupportedOps[R.OpType];
      if (Verbose)
        std::printf("unsupported %s: %s\n", Name.c_str(), R.Detail.c_str());
      break;
    }
  }
  std::printf("[ node tests ] %zu tests: %zu passed (%zu op types), %zu "
              "mismatched, %zu unsupported; %zu op types have rules\n",
              Dirs.size(), Passed, PassedOps.size(), Mismatch, Unsupported,
              numShapeRules());
  EXPECT_EQ(Mismatch, 0u);
}

} // namespace
