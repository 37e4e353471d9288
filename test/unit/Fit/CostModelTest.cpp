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
  std::vector<std::optional<int64_t>> Bind(M.Shapes.SymbolNames.size(), 4);
  auto Bytes = evaluateValueBytes(*M.G, M.Shapes, Bind);
  ASSERT_TRUE(!!Bytes);
  Schedule S = makeDefaultSchedule(*M.G, *Bytes);
  CostModel C(*M.G, M.Dims, *Dev);
  EXPECT_NEAR(C.stepSeconds(S, S.Steps[0]), 8.96e-7, 1e-15);
  EXPECT_NEAR(C.transferSeconds(1000), 2e-6, 1e-15);
  EXPECT_EQ(Dev->MemoryBytes, 1073741824u); // "memory_gb": 1 is 1 GiB
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
