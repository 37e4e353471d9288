//===- PrecisionCostTest.cpp - device memory and costs per precision ------===//
//
// The built-in profiles' memory is the card's memory in GiB, as vendors quote
// it; a training step under mixed precision computes its products at the
// device's 16-bit tensor peak and its optimizer step at fp32; --tf32 moves
// fp32 products to the TF32 peak. Every expected time is worked out by hand
// in the comment above it.
//
//===----------------------------------------------------------------------===//
#include "TestExpected.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "oomplan/Transforms/Training.h"
#include "gtest/gtest.h"

using namespace oomplan;

// 80 GiB = 80 * 2^30 = 85899345920 bytes, 24 GiB = 25769803776, the H200's
// 143771 MiB (nvidia-smi) = 143771 * 2^20 = 150754820096, 40 GiB =
// 42949672960.
TEST(DeviceProfile, MemoryInGiBAsVendorsQuoteIt) {
  struct {
    const char *Name;
    uint64_t Bytes;
  } Want[] = {{"A100-80GB", 85899345920ull}, {"RTX-4090", 25769803776ull},
              {"L4", 25769803776ull},        {"H200", 150754820096ull},
              {"H100-SXM", 85899345920ull},  {"H100-PCIe", 85899345920ull},
              {"A100-40GB", 42949672960ull}};
  for (const auto &W : Want) {
    auto D = findDevice(W.Name);
    ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
    EXPECT_EQ(D->MemoryBytes, W.Bytes) << W.Name;
  }
}

// Dense datasheet figures (TFLOPS): bf16 989.4 on an H100 SXM, 312 on an
// A100, 165.2 on a 4090 (fp32 accumulate); TF32 494.7, 156, 82.6.
TEST(DeviceProfile, TensorThroughputs) {
  auto H = findDevice("H100-SXM");
  auto A = findDevice("A100-80GB");
  auto R = findDevice("RTX-4090");
  ASSERT_TRUE(H && A && R);
  EXPECT_DOUBLE_EQ(H->PeakBF16, 989.4e12);
  EXPECT_DOUBLE_EQ(H->PeakFP16, 989.4e12);
  EXPECT_DOUBLE_EQ(H->PeakTF32, 494.7e12);
  EXPECT_DOUBLE_EQ(A->PeakBF16, 312e12);
  EXPECT_DOUBLE_EQ(A->PeakTF32, 156e12);
  EXPECT_DOUBLE_EQ(R->PeakBF16, 165.2e12);
  EXPECT_DOUBLE_EQ(R->PeakTF32, 82.6e12);
}

TEST(DeviceProfile, JSONMemoryInGiB) {
  auto D = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 24})",
                           "d.json");
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  EXPECT_EQ(D->MemoryBytes, 25769803776u);
  auto Huge = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1e12})",
                              "d.json");
  ASSERT_FALSE(!!Huge);
  EXPECT_NE(llvm::toString(Huge.takeError()).find("too large"),
            std::string::npos);
}

namespace {
std::string values(const std::string &Decl, unsigned N) {
  std::string S = Decl + " = {";
  for (unsigned I = 0; I < N; ++I)
    S += I ? ", 0.5" : "0.5";
  return S + "}";
}

// y[4,16] = x[4,8] @ W[8,16]: 2*4*16*8 = 1024 FLOPs forward.
const std::string Linear = R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,8] x) => (float[N,16] y) <)" +
                           values("float[8,16] W", 128) +
                           R"(> {
  y = MatMul(x, W)
}
)";

// A device slow enough at arithmetic that every product is compute-bound:
// fp32 1 TFLOP/s, TF32 2, fp16 3, bf16 4, memory 1e6 GB/s (896 bytes take
// 9e-13 s, far below any compute time here).
DeviceProfile toyDevice() {
  auto D = parseDeviceJSON(R"({"name": "toy", "peak_fp32_tflops": 1,
      "peak_tf32_tflops": 2, "peak_fp16_tflops": 3, "peak_bf16_tflops": 4,
      "mem_bandwidth_gbps": 1000000, "host_link_gbps": 1, "memory_gib": 1})",
                           "toy.json");
  test::stopOnError(D, "D");
  return *D;
}

struct Step3 {
  double Forward = 0, Backward = 0, Optimizer = 0;
};

// The training step of Linear at batch 4 under Precision, costed on the toy
// device: the forward MatMul, its backward and the optimizer step.
Step3 trainingTimes(TrainPrecision Precision, bool TF32) {
  auto G = importModelText(Linear, "linear.onnxtxt");
  test::stopOnError(G, "G");
  auto Shapes = inferShapes(**G);
  test::stopOnError(Shapes, "Shapes");
  std::vector<std::optional<int64_t>> Bind(Shapes->SymbolNames.size(), 4);
  auto Bytes = evaluateValueBytes(**G, *Shapes, Bind);
  test::stopOnError(Bytes, "Bytes");
  TrainingOptions TO;
  TO.Precision = Precision;
  std::vector<std::string> Warnings;
  auto S = makeTrainingSchedule(**G, *Shapes, *Bytes, TO, Warnings);
  test::stopOnError(S, "S");
  CostOptions CO;
  CO.TF32 = TF32;
  CostModel C(**G, evaluateDims(**G, *Shapes, Bind), toyDevice(), CO);
  Step3 Out;
  for (const Step &St : S->Steps) {
    double T = C.stepSeconds(*S, St);
    if (St.Kind == StepKind::Compute && St.Op == "MatMul")
      Out.Forward = T;
    else if (St.Op == "MatMul.grad")
      Out.Backward = T;
    else if (St.Kind == StepKind::Optimizer)
      Out.Optimizer = T;
  }
  return Out;
}
} // namespace

// fp32: forward 1024 FLOPs / 1e12 = 1.024e-9 s; backward two products,
// 2048 / 1e12 = 2.048e-9 s. Adam reads W 512 B, grad(W) 512, m 512, v 512
// (twice: read and written back) and writes its scratch 2*4*128 = 1024 B:
// 4096 + 1024 = 5120 bytes, 2 FLOPs per 4 bytes = 2560 FLOPs at fp32:
// 2.56e-9 s.
TEST(PrecisionCost, FP32) {
  Step3 T = trainingTimes(TrainPrecision::FP32, false);
  EXPECT_NEAR(T.Forward, 1.024e-9, 1e-15);
  EXPECT_NEAR(T.Backward, 2.048e-9, 1e-15);
  EXPECT_NEAR(T.Optimizer, 2.56e-9, 1e-15);
}

// --tf32: the products at 2e12: 5.12e-10 and 1.024e-9 s; the optimizer step
// is no product and stays at the fp32 peak.
TEST(PrecisionCost, TF32) {
  Step3 T = trainingTimes(TrainPrecision::FP32, true);
  EXPECT_NEAR(T.Forward, 5.12e-10, 1e-15);
  EXPECT_NEAR(T.Backward, 1.024e-9, 1e-15);
  EXPECT_NEAR(T.Optimizer, 2.56e-9, 1e-15);
}

// bf16-mixed: the products at the bf16 peak, 4e12: 2.56e-10 and 5.12e-10 s.
// The optimizer step runs on fp32 master weights at the fp32 peak: W and
// grad(W) are 256 B each in bf16, m, v and master(W) 512 each: reads 2048
// B twice + scratch 1024 = 5120 bytes, 2560 FLOPs: 2.56e-9 s.
TEST(PrecisionCost, BF16Mixed) {
  Step3 T = trainingTimes(TrainPrecision::BF16Mixed, false);
  EXPECT_NEAR(T.Forward, 2.56e-10, 1e-15);
  EXPECT_NEAR(T.Backward, 5.12e-10, 1e-15);
  EXPECT_NEAR(T.Optimizer, 2.56e-9, 1e-15);
}

// fp16-mixed at the fp16 peak, 3e12: 1024/3e12 and 2048/3e12 s. --tf32 does
// not apply to 16-bit products.
TEST(PrecisionCost, FP16Mixed) {
  Step3 T = trainingTimes(TrainPrecision::FP16Mixed, true);
  EXPECT_NEAR(T.Forward, 1024 / 3e12, 1e-15);
  EXPECT_NEAR(T.Backward, 2048 / 3e12, 1e-15);
  EXPECT_NEAR(T.Optimizer, 2.56e-9, 1e-15);
}
