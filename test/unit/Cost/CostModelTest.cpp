//===- CostModelTest.cpp - FLOPs and roofline times by hand ---------------===//
//
// Every expected number is worked out in the comment above it from the op's
// definition, not taken from the program's output.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/CostModel.h"
#include "TestExpected.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/Plan/Pipeline.h"
#include "gtest/gtest.h"

using namespace oomplan;

namespace {
std::string values(const std::string &Decl, unsigned N) {
  std::string S = Decl + " = {";
  for (unsigned I = 0; I < N; ++I)
    S += I ? ", 0.5" : "0.5";
  return S + "}";
}

struct Model {
  std::unique_ptr<Graph> G;
  ShapeInfo Shapes;
  ConcreteDims Dims;
};

Model load(const std::string &Text) {
  Model M;
  auto G = importModelText(Text, "test.onnxtxt");
  test::stopOnError(G, "G");
  M.G = std::move(*G);
  auto Shapes = inferShapes(*M.G);
  test::stopOnError(Shapes, "Shapes");
  M.Shapes = std::move(*Shapes);
  std::vector<std::optional<int64_t>> Bind(M.Shapes.SymbolNames.size(), 4);
  M.Dims = evaluateDims(*M.G, M.Shapes, Bind);
  return M;
}

// M's default schedule with every symbol bound to 4 (as load()'s dims).
Schedule schedule(const Model &M) {
  std::vector<std::optional<int64_t>> Bind(M.Shapes.SymbolNames.size(), 4);
  auto Bytes = evaluateValueBytes(*M.G, M.Shapes, Bind);
  test::stopOnError(Bytes, "Bytes");
  return makeDefaultSchedule(*M.G, *Bytes);
}

NodeId nodeWithOp(const Graph &G, llvm::StringRef Op) {
  for (NodeId N = 0; N < G.Nodes.size(); ++N)
    if (G.Nodes[N].OpType == Op)
      return N;
  ADD_FAILURE() << "no " << Op.str();
  return 0;
}
} // namespace

// x[4,8] @ W[8,16]: 4*16 outputs, each 8 multiply-adds = 2*4*16*8 = 1024.
// Gemm(y[4,16], V[2,16], transB): 4*2 outputs of 16 multiply-adds = 256.
TEST(CostModel, MatMulAndGemmFlops) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,8] x) => (float[N,2] z) <)" +
                 values("float[8,16] W", 128) + ", " +
                 values("float[2,16] V", 32) + R"(> {
  y = MatMul(x, W)
  z = Gemm<transB=1>(y, V)
}
)");
  EXPECT_DOUBLE_EQ(nodeFlops(*M.G, M.Dims, nodeWithOp(*M.G, "MatMul")), 1024);
  EXPECT_DOUBLE_EQ(nodeFlops(*M.G, M.Dims, nodeWithOp(*M.G, "Gemm")), 256);
}

// Conv x[4,3,8,8] with W[6,3,3,3], pads 1: out [4,6,8,8] = 1536 elements,
// each a dot product of 3*3*3 = 27: 2*1536*27 = 82944. Grouped (group 3,
// W[6,1,3,3]): each output sees 1*3*3 = 9 inputs: 2*1536*9 = 27648.
TEST(CostModel, ConvFlops) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,3,8,8] x) => (float[N,6,8,8] y, float[N,6,8,8] g) <)" +
                 values("float[6,3,3,3] W", 162) + ", " +
                 values("float[6,1,3,3] V", 54) + R"(> {
  y = Conv<pads=[1,1,1,1]>(x, W)
  g = Conv<pads=[1,1,1,1], group=3>(x, V)
}
)");
  EXPECT_DOUBLE_EQ(nodeFlops(*M.G, M.Dims, 0), 82944);
  EXPECT_DOUBLE_EQ(nodeFlops(*M.G, M.Dims, 1), 27648);
}

// Attention counts each query row's keys: per key 2*D (Q.K) + 2*Dv (P.V)
// + 5 (softmax). OomplanAttention Q [2,4,6,8], K [2,4,10,8], V [2,4,10,5]:
// 2*4*6 = 48 rows, 10 keys each, 2*8 + 2*5 + 5 = 31: 48*10*31 = 14880.
// GroupQueryAttention, 4 query heads of 8 over 2 KV heads, 3 new tokens,
// total_sequence_length 8 beside a past of 5: present [1,2,8,8]; 12 rows
// (1*3*4), causal keys 8 - 3 + (3 + 1) / 2 = 7 on average, 4*8 + 5 = 37 a
// key: 12*7*37 = 3108; with local_window_size 4 at most 4 keys: 1776.
TEST(CostModel, AttentionFlops) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[2,4,6,8] q, float[2,4,10,8] k, float[2,4,10,5] v) => (float[2,4,6,8] y) {
  y = Identity(q)
}
)");
  // No text names OomplanAttention (fusion makes it): the node becomes one.
  Node &N = M.G->Nodes[0];
  N.OpType = "OomplanAttention";
  N.Inputs = {M.G->Inputs[0], M.G->Inputs[1], M.G->Inputs[2]};
  auto Shapes = inferShapes(*M.G);
  test::stopOnError(Shapes, "Shapes");
  M.Dims = evaluateDims(*M.G, *Shapes, {});
  EXPECT_DOUBLE_EQ(nodeFlops(*M.G, M.Dims, 0), 14880);

  const char *GQA =
      R"(<ir_version: 8, opset_import: ["" : 17, "com.microsoft" : 1]>
m (float[1,3,32] q, float[1,3,16] k, float[1,3,16] v, float[1,2,5,8] pk,
   float[1,2,5,8] pv) => (float[1,3,32] o, float[1,2,8,8] ck, float[1,2,8,8] cv)
    <int32[1] sl = {7}, int32[1] tl = {8}> {
  o, ck, cv = com.microsoft.GroupQueryAttention <num_heads = 4, kv_num_heads = 2%s> (q, k, v, pk, pv, sl, tl)
}
)";
  for (bool Window : {false, true}) {
    std::string Text = GQA;
    Text.replace(Text.find("%s"), 2, Window ? ", local_window_size = 4" : "");
    Model G = load(Text);
    EXPECT_DOUBLE_EQ(nodeFlops(*G.G, G.Dims, 0), Window ? 1776 : 3108);
  }
}

// The roofline on a made-up device: 1 TFLOP/s, 1 GB/s memory, 0.5 GB/s link.
// MatMul x[4,8] @ W[8,16]: 1024 FLOPs -> 1.024e-9 s; bytes 128 + 512 + 256
// = 896 -> 8.96e-7 s: memory-bound. 1000 bytes over the link: 2e-6 s.
TEST(CostModel, RooflineAndTransfer) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,8] x) => (float[N,16] y) <)" +
                 values("float[8,16] W", 128) + R"(> {
  y = MatMul(x, W)
}
)");
  auto Dev = parseDeviceJSON(R"({"name": "toy", "peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 0.5, "memory_gb": 1})",
                             "toy.json");
  ASSERT_TRUE(!!Dev) << llvm::toString(Dev.takeError());
  Schedule S = schedule(M);
  CostModel C(*M.G, M.Dims, *Dev);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 8.96e-7, 1e-15);
  EXPECT_NEAR(C.transferSeconds(1000), 2e-6, 1e-15);
  EXPECT_EQ(Dev->MemoryBytes, 1073741824u); // "memory_gb": 1 is 1 GiB
}

// The same MatMul on a device whose kernels reach half the peaks and take
// at least 2 us: 8.96e-7 s at the full 1 GB/s is 1.792e-6 s at 0.5 GB/s,
// under the floor, so 2e-6 s. A Relu on the 4x16 output (256 + 256 bytes,
// 5.12e-7 s at 0.5 GB/s) also takes the floor. Transfers are unchanged.
TEST(CostModel, EfficiencyAndKernelFloor) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,8] x) => (float[N,16] z) <)" +
                 values("float[8,16] W", 128) + R"(> {
  y = MatMul(x, W)
  z = Relu(y)
}
)");
  auto Dev = parseDeviceJSON(R"({"name": "toy", "peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 0.5, "memory_gib": 1,
      "compute_efficiency": 0.5, "memory_efficiency": 0.5, "kernel_us": 2})",
                             "toy.json");
  ASSERT_TRUE(!!Dev) << llvm::toString(Dev.takeError());
  EXPECT_DOUBLE_EQ(Dev->ComputeEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(Dev->KernelSeconds, 2e-6);
  Schedule S = schedule(M);
  CostModel C(*M.G, M.Dims, *Dev);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 2e-6, 1e-15);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[1]), 2e-6, 1e-15);
  EXPECT_NEAR(C.transferSeconds(1000), 2e-6, 1e-15);
  // Half the bandwidth without a floor: 896 bytes / 0.5 GB/s = 1.792e-6 s.
  Dev->KernelSeconds = 0;
  CostModel NoFloor(*M.G, M.Dims, *Dev);
  EXPECT_NEAR(NoFloor.stepSeconds(S, S.Steps[0]), 1.792e-6, 1e-15);
  // An efficiency is a fraction: above 1 is refused.
  auto Over = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1,
      "memory_efficiency": 1.5})",
                              "over.json");
  ASSERT_FALSE(!!Over);
  EXPECT_NE(llvm::toString(Over.takeError()).find("at most 1"),
            std::string::npos);
  // A floor of 0 is the pure roofline, spelled out; a negative one is not.
  auto Zero = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1,
      "kernel_us": 0})",
                              "zero.json");
  ASSERT_TRUE(!!Zero) << llvm::toString(Zero.takeError());
  EXPECT_EQ(Zero->KernelSeconds, 0.0);
  auto Negative = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1,
      "kernel_us": -1})",
                                  "neg.json");
  ASSERT_FALSE(!!Negative);
  EXPECT_NE(llvm::toString(Negative.takeError()).find("0 or more"),
            std::string::npos);
}

// The FP32 units' efficiency is their own: on a device of 1000 FLOP/s in
// fp32 and 2000 in bf16 (memory 1000 GB/s, never the bound here), the fp32
// MatMul's 1024 FLOPs take 1024 / (1000 * 0.5) = 2.048 s at fp32_efficiency
// 0.5, where compute_efficiency 0.8 alone gives 1024 / 800 = 1.28 s; the
// bf16 MatMul keeps 0.8 either way: 1024 / (2000 * 0.8) = 0.64 s.
TEST(CostModel, FP32EfficiencyIsItsOwn) {
  auto Matmul = [](const char *Type) {
    std::string T = Type;
    return load(R"(<ir_version: 8, opset_import: ["" : 17]>
m ()" + T + "[N,8] x, " +
                T + "[8,16] w) => (" + T + R"([N,16] y) {
  y = MatMul(x, w)
}
)");
  };
  const char *Toy = R"({"name": "toy", "peak_fp32_tflops": 1e-9,
      "peak_bf16_tflops": 2e-9, "mem_bandwidth_gbps": 1000,
      "host_link_gbps": 1, "memory_gib": 1, "compute_efficiency": 0.8)";
  auto Both = parseDeviceJSON(std::string(Toy) + R"(, "fp32_efficiency": 0.5})",
                              "toy.json");
  auto One = parseDeviceJSON(std::string(Toy) + "}", "toy.json");
  ASSERT_TRUE(!!Both) << llvm::toString(Both.takeError());
  ASSERT_TRUE(!!One) << llvm::toString(One.takeError());
  EXPECT_DOUBLE_EQ(One->FP32Efficiency, 0.8); // compute_efficiency's
  Model F = Matmul("float"), B = Matmul("bfloat16");
  Schedule SF = schedule(F), SB = schedule(B);
  EXPECT_NEAR(CostModel(*F.G, F.Dims, *Both).stepSeconds(SF, SF.Steps[0]),
              2.048, 1e-12);
  EXPECT_NEAR(CostModel(*F.G, F.Dims, *One).stepSeconds(SF, SF.Steps[0]), 1.28,
              1e-12);
  EXPECT_NEAR(CostModel(*B.G, B.Dims, *Both).stepSeconds(SB, SB.Steps[0]), 0.64,
              1e-12);
  EXPECT_NEAR(CostModel(*B.G, B.Dims, *One).stepSeconds(SB, SB.Steps[0]), 0.64,
              1e-12);
  // The bf16 MatMul on float copies (the CUDA backend's HalfInFloat) runs on
  // the FP32 units: 1024 / (1000 * 0.5) = 2.048 s, as the fp32 one.
  SB.Steps[0].ComputesInFloat = true;
  EXPECT_NEAR(CostModel(*B.G, B.Dims, *Both).stepSeconds(SB, SB.Steps[0]),
              2.048, 1e-12);
}

// The built-in H200 row is the profile the second GPU run measured
// (gpu-check's section 4b, kept verbatim in docs/h200-calibrated.json):
// a change to either without the other fails here.
TEST(CostModel, H200RowIsTheCalibratedProfile) {
  auto Row = findDevice("H200");
  ASSERT_TRUE(!!Row) << llvm::toString(Row.takeError());
  auto File = loadDevice(OOMPLAN_SOURCE_DIR "/docs/h200-calibrated.json");
  ASSERT_TRUE(!!File) << llvm::toString(File.takeError());
  EXPECT_EQ(File->Name, "H200-calibrated");
  EXPECT_DOUBLE_EQ(Row->PeakFP32, File->PeakFP32);
  EXPECT_DOUBLE_EQ(Row->PeakBF16, File->PeakBF16);
  EXPECT_DOUBLE_EQ(Row->MemBandwidth, File->MemBandwidth);
  EXPECT_DOUBLE_EQ(Row->ComputeEfficiency, File->ComputeEfficiency);
  EXPECT_DOUBLE_EQ(Row->FP32Efficiency, File->FP32Efficiency);
  EXPECT_DOUBLE_EQ(Row->MemoryEfficiency, File->MemoryEfficiency);
  EXPECT_DOUBLE_EQ(Row->ConvEfficiency, File->ConvEfficiency);
  EXPECT_DOUBLE_EQ(Row->GroupedConvEfficiency, File->GroupedConvEfficiency);
  EXPECT_DOUBLE_EQ(Row->AttentionEfficiency, File->AttentionEfficiency);
  EXPECT_NEAR(Row->KernelSeconds, File->KernelSeconds, 1e-15);
  EXPECT_EQ(Row->OverheadBytes, File->OverheadBytes);
  // The values themselves, as the run's results file prints them.
  EXPECT_DOUBLE_EQ(Row->FP32Efficiency, 0.7621);
  EXPECT_DOUBLE_EQ(Row->AttentionEfficiency, 0.09678);
}

// A profile's measured overhead: the H200's, 607 MiB (its CUDA context and
// library handles on the first GPU run, docs/gpu-results.md), and a JSON
// profile's "overhead_mib" (1.5 MiB = 1572864 bytes; none by default).
TEST(CostModel, DeviceOverhead) {
  auto H200 = findDevice("H200");
  ASSERT_TRUE(!!H200) << llvm::toString(H200.takeError());
  EXPECT_EQ(H200->OverheadBytes, 607u * 1048576);
  auto H100 = findDevice("H100");
  ASSERT_TRUE(!!H100) << llvm::toString(H100.takeError());
  EXPECT_EQ(H100->OverheadBytes, 0u); // not measured: none assumed
  const char *Base = R"({"peak_fp32_tflops": 1, "mem_bandwidth_gbps": 1,
      "host_link_gbps": 1, "memory_gib": 1)";
  auto J = parseDeviceJSON(std::string(Base) + R"(, "overhead_mib": 1.5})",
                           "o.json");
  ASSERT_TRUE(!!J) << llvm::toString(J.takeError());
  EXPECT_EQ(J->OverheadBytes, 1572864u);
  auto None = parseDeviceJSON(std::string(Base) + "}", "o.json");
  ASSERT_TRUE(!!None) << llvm::toString(None.takeError());
  EXPECT_EQ(None->OverheadBytes, 0u);
  auto Neg =
      parseDeviceJSON(std::string(Base) + R"(, "overhead_mib": -1})", "o.json");
  ASSERT_FALSE(!!Neg);
  EXPECT_NE(llvm::toString(Neg.takeError()).find("0 or more"),
            std::string::npos);
  auto Huge = parseDeviceJSON(std::string(Base) + R"(, "overhead_mib": 1e300})",
                              "o.json");
  ASSERT_FALSE(!!Huge);
  EXPECT_NE(llvm::toString(Huge.takeError()).find("too large"),
            std::string::npos);
}

// Shape arithmetic: Shape(x) -> Gather(s, 0) -> Unsqueeze -> Concat with a
// constant [-1] is the reshape target of x, fixed once N is bound, so a GPU
// runtime computes it on the host: those four nodes (and the Constants) are
// host steps and cost nothing. The Reshape reads x (a graph input) and the
// Mul reads x and a small constant: both are device kernels, at the floor.
TEST(CostModel, ShapeArithmeticIsOnTheHost) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[N,8] x) => (float[N,8] y) <float[1] two = {2.0}> {
  s = Shape(x)
  i0 = Constant<value_int = 0>()
  axes = Constant<value = int64[1] {0}>()
  d = Gather<axis=0>(s, i0)
  du = Unsqueeze(d, axes)
  rest = Constant<value = int64[1] {-1}>()
  target = Concat<axis=0>(du, rest)
  r = Reshape(x, target)
  y = Mul(r, two)
}
)");
  std::vector<bool> Host = hostShapeNodes(*M.G, M.Dims);
  for (NodeId N = 0; N < M.G->Nodes.size(); ++N) {
    llvm::StringRef Op = M.G->Nodes[N].OpType;
    EXPECT_EQ(Host[N], Op != "Reshape" && Op != "Mul") << Op.str();
  }
  auto Dev = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1,
      "kernel_us": 5})",
                             "toy.json");
  ASSERT_TRUE(!!Dev);
  Schedule S = schedule(M);
  CostModel C(*M.G, M.Dims, *Dev);
  for (const Step &St : S.Steps) {
    llvm::StringRef Op = M.G->Nodes[St.Node].OpType;
    // Mul: 128 + 4 + 128 bytes at 1 GB/s is 2.6e-7 s, under the 5 us floor;
    // the Reshape is a view of x (no time).
    double Want = Op == "Mul" ? 5e-6 : 0;
    EXPECT_NEAR(C.stepSeconds(S, St), Want, 1e-15) << Op.str();
  }
}

TEST(CostModel, DeviceErrors) {
  auto Bad = findDevice("tpu-v9");
  ASSERT_FALSE(!!Bad);
  EXPECT_NE(llvm::toString(Bad.takeError()).find("unknown device 'tpu-v9'"),
            std::string::npos);
  auto Missing = parseDeviceJSON(R"({"peak_fp32_tflops": 1})", "d.json");
  ASSERT_FALSE(!!Missing);
  EXPECT_NE(llvm::toString(Missing.takeError()).find("missing number"),
            std::string::npos);
  // Aliases: "h100" is the SXM part; case and punctuation do not matter.
  auto H = findDevice("h100");
  ASSERT_TRUE(!!H);
  EXPECT_EQ(H->Name, "H100-SXM");
}

// A convolution's kernels have their own efficiency against the roofline
// the other efficiencies give, a grouped one (group > 1) another. On a
// device of 1000 FLOP/s in fp32 at fp32_efficiency 0.5 (memory 1000 GB/s:
// the few hundred bytes take under a nanosecond):
// - dense: y[1,3,4,4] from x[1,2,4,4] and w[3,2,3,3], 48 outputs of
//   2*3*3 multiply-adds = 2 * 48 * 18 = 1728 FLOPs: 1728 / 500 = 3.456 s,
//   / conv_efficiency 0.4 = 8.64 s;
// - depthwise: y[1,4,4,4] from x[1,4,4,4] and w[4,1,3,3], group 4: 64
//   outputs of 9 = 2 * 64 * 9 = 1152 FLOPs: 1152 / 500 = 2.304 s,
//   / grouped_conv_efficiency 0.25 = 9.216 s (conv_efficiency not used);
// - a MatMul of the same profile keeps the product's 1024 / 500 = 2.048 s.
TEST(CostModel, ConvolutionsHaveTheirOwnEfficiency) {
  Model Dense = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[1,2,4,4] x, float[3,2,3,3] w) => (float[1,3,4,4] y) {
  y = Conv<pads = [1, 1, 1, 1]>(x, w)
}
)");
  Model Depthwise = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[1,4,4,4] x, float[4,1,3,3] w) => (float[1,4,4,4] y) {
  y = Conv<pads = [1, 1, 1, 1], group = 4>(x, w)
}
)");
  Model Product = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[4,8] x, float[8,16] w) => (float[4,16] y) {
  y = MatMul(x, w)
}
)");
  const char *Toy = R"({"peak_fp32_tflops": 1e-9, "mem_bandwidth_gbps": 1000,
      "host_link_gbps": 1, "memory_gib": 1, "fp32_efficiency": 0.5)";
  auto Measured = parseDeviceJSON(std::string(Toy) + R"(,
      "conv_efficiency": 0.4, "grouped_conv_efficiency": 0.25})",
                                  "toy.json");
  auto Plain = parseDeviceJSON(std::string(Toy) + "}", "toy.json");
  ASSERT_TRUE(!!Measured) << llvm::toString(Measured.takeError());
  ASSERT_TRUE(!!Plain) << llvm::toString(Plain.takeError());
  EXPECT_EQ(Plain->ConvEfficiency, 1.0); // unless measured
  auto Seconds = [](const Model &M, const DeviceProfile &D) {
    Schedule S = schedule(M);
    return CostModel(*M.G, M.Dims, D).stepSeconds(S, S.Steps[0]);
  };
  EXPECT_NEAR(Seconds(Dense, *Plain), 3.456, 1e-9);
  EXPECT_NEAR(Seconds(Dense, *Measured), 8.64, 1e-9);
  EXPECT_NEAR(Seconds(Depthwise, *Plain), 2.304, 1e-9);
  EXPECT_NEAR(Seconds(Depthwise, *Measured), 9.216, 1e-9);
  EXPECT_NEAR(Seconds(Product, *Measured), 2.048, 1e-9);
  auto Over = parseDeviceJSON(std::string(Toy) + R"(, "conv_efficiency": 2})",
                              "toy.json");
  ASSERT_FALSE(!!Over);
  EXPECT_NE(llvm::toString(Over.takeError()).find("at most 1"),
            std::string::npos);
}

// A library's workspace is room, not traffic: an Add of two float[4,8]
// (3 * 128 = 384 bytes at 1 GB/s: 384 ns; its 32 FLOPs at 1 TFLOP/s take
// 32 ps) writing a 1,000,000-byte workspace as well takes
// 1,000,384 / 1e9 s when the bytes are moved, and still 384 ns when they
// are the room cuDNN or cuBLAS may use (ScratchBytes).
TEST(CostModel, LibraryWorkspaceIsRoomNotTraffic) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[4,8] a, float[4,8] b) => (float[4,8] y) {
  y = Add(a, b)
}
)");
  auto D = parseDeviceJSON(R"({"peak_fp32_tflops": 1,
      "mem_bandwidth_gbps": 1, "host_link_gbps": 1, "memory_gib": 1})",
                           "toy.json");
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  Schedule S = schedule(M);
  CostModel C(*M.G, M.Dims, *D);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 384e-9, 1e-15);
  ScheduleTensor W;
  W.Name = "add.workspace";
  W.SizeBytes = 1000000;
  S.Steps[0].Writes.push_back(TensorId(S.Tensors.size()));
  S.Tensors.push_back(W);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 1000384e-9, 1e-15);
  S.Tensors.back().ScratchBytes = 1000000;
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 384e-9, 1e-15);
}

// PyTorch eager's efficiency and floor price a training plan (the driver
// takes eagerProfile for --runtime=pytorch-*): the same Add of 384 bytes
// at 1 GB/s takes 384 ns / 0.25 = 1536 ns with the profile's memory
// efficiency, 384 / 0.5 = 768 ns with the eager one; floors of 1 us and
// 0.5 us are below each, then an eager one of 0.1 ms is above: 100 us. A
// profile without eager values is left as it is; the H200's are 0.90 and 3 us.
TEST(CostModel, EagerProfileIsWhatPyTorchRuns) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[4,8] a, float[4,8] b) => (float[4,8] y) {
  y = Add(a, b)
}
)");
  const char *Base = R"({"peak_fp32_tflops": 1, "mem_bandwidth_gbps": 1,
      "host_link_gbps": 1, "memory_gib": 1, "memory_efficiency": 0.25,
      "kernel_us": 1, "eager_memory_efficiency": 0.5, )";
  auto D = parseDeviceJSON(std::string(Base) + R"("eager_kernel_us": 0.5})",
                           "toy.json");
  ASSERT_TRUE(!!D) << llvm::toString(D.takeError());
  EXPECT_DOUBLE_EQ(D->EagerMemoryEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(D->EagerKernelSeconds, 0.5e-6);
  Schedule S = schedule(M);
  EXPECT_NEAR(CostModel(*M.G, M.Dims, *D).stepSeconds(S, S.Steps[0]), 1536e-9,
              1e-15);
  DeviceProfile E = eagerProfile(*D);
  EXPECT_DOUBLE_EQ(E.MemoryEfficiency, 0.5);
  EXPECT_DOUBLE_EQ(E.KernelSeconds, 0.5e-6);
  EXPECT_EQ(E.EagerMemoryEfficiency, 0.0); // the result is the eager one
  EXPECT_LT(E.EagerKernelSeconds, 0.0);
  EXPECT_NEAR(CostModel(*M.G, M.Dims, E).stepSeconds(S, S.Steps[0]), 768e-9,
              1e-15);
  auto Slow = parseDeviceJSON(std::string(Base) + R"("eager_kernel_us": 100})",
                              "toy.json");
  ASSERT_TRUE(!!Slow) << llvm::toString(Slow.takeError());
  EXPECT_NEAR(
      CostModel(*M.G, M.Dims, eagerProfile(*Slow)).stepSeconds(S, S.Steps[0]),
      100e-6, 1e-15);
  auto Over = parseDeviceJSON(
      std::string(Base) +
          R"("eager_kernel_us": 4, "eager_memory_efficiency": 1.5})",
      "toy.json");
  EXPECT_FALSE(!!Over);
  llvm::consumeError(Over.takeError());
  auto H100 = findDevice("H100");
  ASSERT_TRUE(!!H100) << llvm::toString(H100.takeError());
  DeviceProfile Same = eagerProfile(*H100);
  EXPECT_DOUBLE_EQ(Same.MemoryEfficiency, H100->MemoryEfficiency);
  EXPECT_DOUBLE_EQ(Same.KernelSeconds, H100->KernelSeconds);
  auto H200 = findDevice("H200");
  ASSERT_TRUE(!!H200) << llvm::toString(H200.takeError());
  DeviceProfile T = eagerProfile(*H200);
  EXPECT_DOUBLE_EQ(T.MemoryEfficiency, 0.90);
  EXPECT_DOUBLE_EQ(T.KernelSeconds, 3e-6);
  EXPECT_DOUBLE_EQ(T.FP32Efficiency, H200->FP32Efficiency); // cuBLAS's
  EXPECT_DOUBLE_EQ(T.ConvEfficiency, H200->ConvEfficiency); // cuDNN's
}

// writeDeviceJSON writes what parseDeviceJSON reads: every built-in
// profile comes back with the same numbers (rates to 12 digits, which the
// datasheet figures have fewer of; sizes exact).
TEST(CostModel, DeviceJSONRoundTrips) {
  for (const DeviceProfile &P : deviceProfiles()) {
    std::string Text;
    llvm::raw_string_ostream OS(Text);
    llvm::json::OStream J(OS);
    writeDeviceJSON(J, P);
    OS.flush();
    auto Q = parseDeviceJSON(Text, "round-trip.json");
    ASSERT_TRUE(!!Q) << P.Name << ": " << llvm::toString(Q.takeError());
    EXPECT_EQ(Q->Name, P.Name);
    for (auto [A, B] : {std::pair{Q->PeakFP32, P.PeakFP32},
                        {Q->PeakTF32, P.PeakTF32},
                        {Q->PeakFP16, P.PeakFP16},
                        {Q->PeakBF16, P.PeakBF16},
                        {Q->MemBandwidth, P.MemBandwidth},
                        {Q->HostLinkBandwidth, P.HostLinkBandwidth},
                        {Q->HostMemBandwidth, P.HostMemBandwidth},
                        {Q->ComputeEfficiency, P.ComputeEfficiency},
                        {Q->FP32Efficiency, P.FP32Efficiency},
                        {Q->MemoryEfficiency, P.MemoryEfficiency},
                        {Q->ConvEfficiency, P.ConvEfficiency},
                        {Q->GroupedConvEfficiency, P.GroupedConvEfficiency},
                        {Q->AttentionEfficiency, P.AttentionEfficiency},
                        {Q->KernelSeconds, P.KernelSeconds},
                        {Q->EagerMemoryEfficiency, P.EagerMemoryEfficiency},
                        {Q->EagerKernelSeconds, P.EagerKernelSeconds}})
      EXPECT_DOUBLE_EQ(A, B) << P.Name << ": " << Text;
    EXPECT_EQ(Q->MemoryBytes, P.MemoryBytes) << P.Name;
    EXPECT_EQ(Q->OverheadBytes, P.OverheadBytes) << P.Name;
  }
}

// A Conv's bias is a pass of its own over the output (the CUDA executor's
// bias kernel, PyTorch's bias add): y[1,1,4,4] from x[1,1,4,4], a 1x1
// w[1,1,1,1] and b[1] moves x 64 + w 4 + b 4 + y 64 = 136 bytes, then the
// bias pass reads and writes y, 128 more: at 1 GB/s 264 ns without a
// kernel floor (the 32 FLOPs at 1 TFLOP/s take 32 ps); without the bias
// 132 ns, one pass. With a floor of 1 us each kernel takes the floor: 2 us
// and 1 us.
TEST(CostModel, BiasIsAPassOfItsOwn) {
  auto Conv = [](bool Bias) {
    return load(std::string(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[1,1,4,4] x, float[1,1,1,1] w, float[1] b) => (float[1,1,4,4] y) {
  y = Conv()") + (Bias ? "x, w, b" : "x, w") +
                R"()
}
)");
  };
  const char *Toy = R"({"peak_fp32_tflops": 1, "mem_bandwidth_gbps": 1,
      "host_link_gbps": 1, "memory_gib": 1)";
  auto NoFloor = parseDeviceJSON(std::string(Toy) + "}", "toy.json");
  auto Floor =
      parseDeviceJSON(std::string(Toy) + R"(, "kernel_us": 1})", "toy.json");
  ASSERT_TRUE(!!NoFloor) << llvm::toString(NoFloor.takeError());
  ASSERT_TRUE(!!Floor) << llvm::toString(Floor.takeError());
  auto Seconds = [](const Model &M, const DeviceProfile &D) {
    Schedule S = schedule(M);
    return CostModel(*M.G, M.Dims, D).stepSeconds(S, S.Steps[0]);
  };
  Model WithBias = Conv(true), Without = Conv(false);
  EXPECT_NEAR(Seconds(WithBias, *NoFloor), 264e-9, 1e-12);
  EXPECT_NEAR(Seconds(Without, *NoFloor), 132e-9, 1e-12);
  EXPECT_NEAR(Seconds(WithBias, *Floor), 2e-6, 1e-12);
  EXPECT_NEAR(Seconds(Without, *Floor), 1e-6, 1e-12);
}

// The fused attention has its own efficiency too (oomplan's own kernel):
// AttentionFlops' OomplanAttention (Q [2,4,6,8], K [2,4,10,8], V
// [2,4,10,5]: 14880 FLOPs) on a device of 1000 FLOP/s at fp32_efficiency
// 0.5 takes 14880 / 500 = 29.76 s, / attention_efficiency 0.25 = 119.04 s
// (q, k, v and y, 7,232 bytes at 1000 GB/s: 7 ns).
TEST(CostModel, FusedAttentionHasItsOwnEfficiency) {
  Model M = load(R"(<ir_version: 8, opset_import: ["" : 17]>
m (float[2,4,6,8] q, float[2,4,10,8] k, float[2,4,10,5] v) => (float[2,4,6,8] y) {
  y = Identity(q)
}
)");
  Node &N = M.G->Nodes[0]; // as in AttentionFlops: fusion makes the node
  N.OpType = "OomplanAttention";
  N.Inputs = {M.G->Inputs[0], M.G->Inputs[1], M.G->Inputs[2]};
  auto Shapes = inferShapes(*M.G);
  test::stopOnError(Shapes, "Shapes");
  M.Shapes = std::move(*Shapes);
  M.Dims = evaluateDims(*M.G, M.Shapes, {});
  const char *Toy = R"({"peak_fp32_tflops": 1e-9, "mem_bandwidth_gbps": 1000,
      "host_link_gbps": 1, "memory_gib": 1, "fp32_efficiency": 0.5)";
  auto Measured = parseDeviceJSON(
      std::string(Toy) + R"(, "attention_efficiency": 0.25})", "toy.json");
  auto Plain = parseDeviceJSON(std::string(Toy) + "}", "toy.json");
  ASSERT_TRUE(!!Measured) << llvm::toString(Measured.takeError());
  ASSERT_TRUE(!!Plain) << llvm::toString(Plain.takeError());
  Schedule S = schedule(M);
  EXPECT_NEAR(CostModel(*M.G, M.Dims, *Plain).stepSeconds(S, S.Steps[0]), 29.76,
              1e-9);
  EXPECT_NEAR(CostModel(*M.G, M.Dims, *Measured).stepSeconds(S, S.Steps[0]),
              119.04, 1e-9);
}
