//===- CUDAHostStepsTest.cpp - what CUDA lacks runs as host steps --------===//
//
// Without a GPU: the CPU's kernels limited to the op types the CUDA table
// has, on the logging device (host memory the executor must not touch),
// stand in for a CUDA run, so the ops CUDA lacks, and the step deciding a
// data-dependent size, go through the host steps exactly as they would on
// CUDA (HostSteps.cpp). Outputs must be bit-identical to the CPU backend's
// run, and the host steps exactly the model's ops the table lacks (NonZero,
// which decides a size, runs on the device: its kernel reads it back).
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"
#include "LoggingDevice.h"
#include "oomplan/Runtime/CUDA.h"
#include <map>
#include <set>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// The CPU's kernels for the op types CUDA has kernels for; where CUDA's
// kernel reads a data-dependent size back itself (NonZero), so does the
// CPU's here (it writes the dims from host memory).
KernelTable cpuAsCUDA() {
  const KernelTable &CUDA = cuda::cudaKernelTable();
  KernelTable T;
  for (const ops::OpInfo &Op : ops::allOps())
    if (const auto &C = CUDA.get(ops::opCode(Op)))
      if (const auto &K = cpu().get(ops::opCode(Op))) {
        Kernel Copy = *K;
        Copy.ReportsSizes = C->ReportsSizes;
        T.set(ops::opCode(Op), Copy);
      }
  return T;
}

// x = [0, 2, 0, -1]: nz = [[1, 3]], t = [[1], [3]], v = x[1], x[3] = [2,
// -1], y = v * v = [4, 1] (data-dependent: [n] with n = 2). r = Relu(x) =
// [0, 2, 0, 0] as indices, depth 3: oh = [[1, 0, 0], [0, 0, 1], [1, 0, 0],
// [1, 0, 0]]; mi = Hardmax(x) = [0, 1, 0, 0]. The determinants of s's
// leading 2 x 2 blocks: compared with the CPU run only. NonZero decides
// y's size; Det has no CUDA kernel; GatherND (on CUDA since session 15)
// reads NonZero's output at its reported size on the device.
const char *Lacking = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x, float[5, 2, 3] s) => (float[?] y, float[4, 3] oh, float[5] dt, float[4] mi) {
  nz = NonZero(x)
  t = Transpose(nz)
  v = GatherND(x, t)
  y = Mul(v, v)
  r = Relu(x)
  ri = Cast<to = 7>(r)
  depth = Constant<value = int64 {3}>()
  onoff = Constant<value = float[2] {0, 1}>()
  oh = OneHot(ri, depth, onoff)
  s0 = Constant<value = int64[1] {0}>()
  s2 = Constant<value = int64[1] {2}>()
  ax = Constant<value = int64[1] {2}>()
  sq = Slice(s, s0, s2, ax)
  dt = Det(sq)
  mi = Hardmax(x)
})";

// Runs: 0 the CPU backend, 1 the CPU's kernels as CUDA's on the logging
// device, 2 the CUDA backend where there is a GPU. The CUDA kernels on
// this model's device steps (Transpose, GatherND, Mul, Relu, Cast, OneHot)
// move or compute exactly, so all three give the same bytes.
TEST(CUDAHostSteps, WhatCUDALacksRunsOnTheHost) {
  Model M(Lacking);
  api::Request R;
  R.ModelPath = M.Path;
  KernelTable AsCUDA = cpuAsCUDA();
  std::vector<std::vector<char>> Outs[3];
  std::map<std::string, unsigned> HostOps[3];
  LoggingDevice D;
  std::string Why;
  std::optional<Backend> GPU = gpu(Why);
  for (int Run = 0; Run < (GPU ? 3 : 2); ++Run) {
    const KernelTable &K = Run == 2 ? *GPU->Kernels : Run ? AsCUDA : cpu();
    auto X = driver::planExecutable(R, K);
    oomplan::test::stopOnError(X, "plan");
    ExecOptions O;
    O.Dev = Run == 2 ? GPU->Dev : Run ? &D : nullptr;
    O.Poison = true;
    auto E = Executor::create(*X->G, X->P, X->Info, K, O);
    oomplan::test::stopOnError(E, "executor");
    ASSERT_FALSE(llvm::errorToBool((*E)->loadWeights(R.ModelPath)));
    std::vector<float> XIn = {0, 2, 0, -1};
    setFloats(**E, X->G->findValue("x"), XIn);
    TensorRef S = (*E)->tensor(X->G->findValue("s"));
    for (uint64_t I = 0; I < S.numElements(); ++I)
      S.data<float>()[I] = float(int(I % 7) - 3) / 4;
    llvm::Error Err = (*E)->run();
    ASSERT_FALSE(bool(Err))
        << "run " << Run << ": " << llvm::toString(std::move(Err));
    for (ValueId V : X->G->Outputs) {
      TensorRef T = (*E)->tensor(V);
      Outs[Run].emplace_back(T.data<char>(), T.data<char>() + T.bytes());
    }
    EXPECT_EQ(floats(**E, X->G->findValue("y")), (std::vector<float>{4, 1}));
    EXPECT_EQ(floats(**E, X->G->findValue("oh")),
              (std::vector<float>{1, 0, 0, 0, 0, 1, 1, 0, 0, 1, 0, 0}));
    EXPECT_EQ(floats(**E, X->G->findValue("mi")),
              (std::vector<float>{0, 1, 0, 0}));
    if (Run)
      for (auto &[Op, N] : (*E)->deviceUse().HostOps)
        HostOps[Run][Op] = N;
  }
  EXPECT_EQ(Outs[0], Outs[1]);
  // The host steps: the model's run-time ops the CUDA table lacks, and
  // NonZero, which decides y's size, unless CUDA's kernel reads the size
  // back itself (since session 16 it does: no host step).
  std::map<std::string, unsigned> Want;
  for (const char *Op : {"NonZero", "Transpose", "GatherND", "Mul", "Relu",
                         "Cast", "OneHot", "Det", "Hardmax"}) {
    const auto &K =
        cuda::cudaKernelTable().get(ops::opCode(*ops::lookupOp(Op)));
    if (!K || (llvm::StringRef(Op) == "NonZero" && !K->ReportsSizes))
      Want[Op] = 1;
  }
  EXPECT_FALSE(Want.count("NonZero")) << "CUDA's NonZero reports its size";
  EXPECT_EQ(HostOps[1], Want);
  EXPECT_TRUE(Want.count("Det"))
      << "CUDA has kernels for these now: pick ops it still lacks";
  if (!GPU)
    GTEST_SKIP() << "host steps checked on the logging device; no CUDA "
                    "device to run them on: "
                 << Why;
  EXPECT_EQ(Outs[2], Outs[0]);
  EXPECT_EQ(HostOps[2], Want);
}

} // namespace
