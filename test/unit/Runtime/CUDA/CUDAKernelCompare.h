//===- CUDAKernelCompare.h - run a model on both backends, compare -*- C++
//-*-===//
//
// The CUDA kernel tests' harness (CUDAKernelTest.cpp, CUDAKernelOpsTest.cpp):
// a small model in ONNX text is planned twice, with each backend's
// workspaces, run on both backends with the same seeded inputs, and every
// float or double output must match the CPU's within rtol 1e-3 (atol
// 1e-5); integer and bool outputs must be equal, NaN matches NaN. The CPU
// backend is the reference: its kernels are checked against ONNX's own test
// data (the conformance suite). Without a GPU the CPU side still runs and the
// plan made with the CUDA table must find a CUDA kernel for every step and
// type; then the test skips.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_TEST_UNIT_RUNTIMECUDA_CUDAKERNELCOMPARE_H
#define OOMPLAN_TEST_UNIT_RUNTIMECUDA_CUDAKERNELCOMPARE_H

#include "RuntimeTestModel.h"
#include "oomplan/Runtime/CUDA.h"
#include "oomplan/Runtime/CUDAWorkspaces.h"
#include <cmath>
#include <cstring>
#include <random>

namespace oomplan {
namespace runtime {
namespace unit {

inline std::optional<Backend> gpu(std::string &Why) {
  auto B = cuda::openCUDABackend();
  if (!B) {
    Why = llvm::toString(B.takeError());
    return std::nullopt;
  }
  return *B;
}

struct Run {
  Plan P;
  RunInfo I;
  std::unique_ptr<Executor> E;
};

// Plans M with B's workspaces and runs it on B with inputs from Seed.
inline std::unique_ptr<Run> runOn(const Model &M, const Backend &B,
                                  uint64_t Seed) {
  auto R = std::make_unique<Run>();
  R->P = M.plan(M.schedule(*B.Kernels));
  R->I = M.info(R->P);
  ExecOptions O;
  O.Dev = B.Dev;
  R->E = makeExec(M, R->P, R->I, *B.Kernels, O);
  std::mt19937_64 Rng(Seed);
  std::uniform_real_distribution<float> U(-2.f, 2.f);
  for (ValueId V : M.G->Inputs) {
    TensorRef T = R->E->tensor(V);
    EXPECT_EQ(T.Type, ElementType::Float) << "test inputs are float";
    for (uint64_t K = 0; K < T.numElements(); ++K)
      T.data<float>()[K] = U(Rng);
  }
  llvm::Error Err = R->E->run();
  EXPECT_FALSE(bool(Err)) << llvm::toString(std::move(Err));
  return R;
}

// Runs Text on both backends and compares every output. Without a GPU it
// still runs the CPU side and checks that every step of the plan made with
// the CUDA table has a CUDA kernel for its types (Executor::create checks
// kernels before anything runs), then skips.
// Rtol is wider for models that compute in float16 or bfloat16: the two
// backends round the same float results, summed in another order, so they
// may differ by an ulp of the half type (2^-10, 2^-7 relative).
inline void compareBackends(const char *Text, double Rtol = 1e-3) {
  Model M(Text);
  auto CPU = runOn(M, *openBackend("cpu"), 7);
  {
    const KernelTable &K = cuda::cudaKernelTable();
    Plan P = M.plan(M.schedule(K));
    RunInfo I = M.info(P);
    auto E = Executor::create(*M.G, P, I, K, ExecOptions());
    ASSERT_TRUE(bool(E)) << llvm::toString(E.takeError());
  }
  std::string Why;
  std::optional<Backend> G = gpu(Why);
  if (!G)
    GTEST_SKIP() << "no CUDA device: " << Why;
  auto GPU = runOn(M, *G, 7);
  for (ValueId V : M.G->Outputs) {
    const std::string &Name = M.G->Values[V].Name;
    TensorRef A = CPU->E->tensor(V), B = GPU->E->tensor(V);
    ASSERT_EQ(A.Type, B.Type) << Name;
    ASSERT_EQ(A.Dims, B.Dims) << Name;
    for (uint64_t K = 0; K < A.numElements(); ++K) {
      if (A.Type == ElementType::Float || A.Type == ElementType::Double) {
        // Doubles too: the device's exp and log may differ from the host's
        // in the last bit.
        double X = A.Type == ElementType::Float ? A.data<float>()[K]
                                                : A.data<double>()[K],
               Y = A.Type == ElementType::Float ? B.data<float>()[K]
                                                : B.data<double>()[K];
        if ((std::isnan(X) && std::isnan(Y)) || X == Y) // NaN, infinities
          continue;
        ASSERT_LE(std::fabs(X - Y), 1e-5 + Rtol * std::fabs(X))
            << Name << "[" << K << "]: CPU " << X << ", CUDA " << Y;
      } else {
        uint64_t EB = elementBits(A.Type) / 8;
        ASSERT_EQ(
            std::memcmp(A.data<char>() + K * EB, B.data<char>() + K * EB, EB),
            0)
            << Name << "[" << K << "]";
      }
    }
  }
  // The device allocations are the plan's device regions, to the byte.
  DeviceUse U = GPU->E->deviceUse();
  EXPECT_EQ(U.AllocatedBytes,
            GPU->P.WeightBytes + GPU->P.IOBytes + GPU->P.ArenaBytes);
}

} // namespace unit
} // namespace runtime
} // namespace oomplan

#endif
