//===- RuntimeTestModel.h - tiny models planned and run in tests -*- C++
//-*-===//
//
// Shared by the executor tests and the CUDA kernel tests: a model in ONNX
// text written to a temporary file (the weight loader reads the file),
// planned by the pipeline with a backend's workspaces, and helpers to make
// an executor and to set and read float tensors through tensor().
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIME_RUNTIMETESTMODEL_H
#define OOMPLAN_TEST_UNIT_RUNTIME_RUNTIMETESTMODEL_H

#include "TestExpected.h"
#include "oomplan/Driver/Executable.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Runtime/Backend.h"
#include "oomplan/Schedule/ScheduleVerifier.h"
#include "llvm/Support/FileSystem.h"
#include "llvm/Support/raw_ostream.h"
#include "gtest/gtest.h"
#include <cstring>

namespace oomplan {
namespace runtime {
namespace unit {

// A model written to a temporary file (the weight loader reads the file),
// imported, with its shapes inferred; every dim is static.
struct Model {
  std::string Path;
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  std::vector<std::optional<int64_t>> Bindings;

  explicit Model(const char *Text) {
    llvm::SmallString<128> P;
    EXPECT_FALSE(llvm::sys::fs::createTemporaryFile("runtime", "onnxtxt", P));
    Path = P.str().str();
    {
      std::error_code EC;
      llvm::raw_fd_ostream OS(Path, EC);
      OS << Text;
    }
    auto Imported = importModelFile(Path);
    oomplan::test::stopOnError(Imported, "import");
    G = std::move(*Imported);
    auto S = inferShapes(*G);
    oomplan::test::stopOnError(S, "shapes");
    Shapes = std::move(*S);
    Bindings.resize(Shapes.SymbolNames.size());
  }
  ~Model() { llvm::sys::fs::remove(Path); }

  /// The default schedule, with workspaces from K, edited by Edit.
  Schedule schedule(const KernelTable &K) const {
    auto Bytes = evaluateValueBytes(*G, Shapes, Bindings);
    oomplan::test::stopOnError(Bytes, "bytes");
    Schedule S = makeDefaultSchedule(*G, *Bytes);
    EXPECT_FALSE(
        llvm::errorToBool(driver::addWorkspaces(K, *G, Shapes, Bindings, S)));
    return S;
  }
  Plan plan(Schedule S, bool InPlace = true) const {
    EXPECT_FALSE(llvm::errorToBool(verifySchedule(S)));
    LivenessOptions LO;
    LO.InPlace = InPlace;
    Lifetimes L = computeLifetimes(S, LO);
    auto P = buildPlan(std::move(S), std::move(L), PlanOptions());
    oomplan::test::stopOnError(P, "plan");
    return std::move(*P);
  }
  RunInfo info(const Plan &P) const {
    auto I = driver::makeRunInfo(*G, Shapes, Bindings, P.Sched);
    oomplan::test::stopOnError(I, "run info");
    return std::move(*I);
  }
};

// a = Neg(x); b = Relu(a); c = Add(b, b); y = Sub(c, a). For x = [1, -2, 3,
// -4]: a = [-1, 2, -3, 4], b = [0, 2, 0, 4], c = [0, 4, 0, 8], y = c - a =
// [1, 2, 3, 4]; for x = [-1, -1, -1, -1]: a = b = [1, 1, 1, 1], c = [2, 2,
// 2, 2], y = [1, 1, 1, 1]. a is read at steps 1 and 3: a long-lived value.
inline const char *const Chain = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) {
  a = Neg(x)
  b = Relu(a)
  c = Add(b, b)
  y = Sub(c, a)
})";

inline const KernelTable &cpu() {
  auto K = backendKernels("cpu");
  oomplan::test::stopOnError(K, "backend");
  return **K;
}

inline std::unique_ptr<Executor> makeExec(const Model &M, const Plan &P,
                                          const RunInfo &I,
                                          const KernelTable &K,
                                          ExecOptions O = ExecOptions()) {
  auto E = Executor::create(*M.G, P, I, K, O);
  oomplan::test::stopOnError(E, "executor");
  EXPECT_FALSE(llvm::errorToBool((*E)->loadWeights(M.Path)));
  return std::move(*E);
}

inline void setFloats(const Executor &E, TensorId T, std::vector<float> V) {
  TensorRef R = E.tensor(T);
  ASSERT_EQ(R.numElements(), V.size());
  std::memcpy(R.Data, V.data(), V.size() * 4);
}

inline std::vector<float> floats(const Executor &E, TensorId T) {
  TensorRef R = E.tensor(T);
  return std::vector<float>(R.data<float>(), R.data<float>() + R.numElements());
}

} // namespace unit
} // namespace runtime
} // namespace oomplan

#endif
