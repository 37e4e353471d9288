//===- HalfInFloatTest.cpp - float16/bfloat16 steps of float kernels ------===//
//
// A half model through the planner and the executor on the CPU kernels,
// which compute in float only: the plan gives each such step a workspace
// for the float copies of its half operands (sizes worked out below), and
// the outputs are the float results rounded once. Bits are written and
// read by this file's own encoder and decoder, not the runtime's.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Runtime/HalfInFloat.h"
#include "RuntimeTestModel.h"
#include <cmath>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// IEEE half: 1 sign, 5 exponent (bias 15), 10 mantissa bits; normal
// numbers only (all this test uses).
float fromHalf(uint16_t B) {
  int E = (B >> 10) & 31, M = B & 1023;
  float V = std::ldexp(1.0f + float(M) / 1024, E - 15);
  return (B & 0x8000) ? -V : V;
}
// bfloat16: the top half of a float's bits.
float fromBF16(uint16_t B) {
  uint32_t U = uint32_t(B) << 16;
  float F;
  std::memcpy(&F, &U, 4);
  return F;
}

void setBits(const Executor &E, TensorId T, std::vector<uint16_t> V) {
  TensorRef R = E.tensor(T);
  ASSERT_EQ(R.numElements(), V.size());
  std::memcpy(R.Data, V.data(), V.size() * 2);
}
std::vector<uint16_t> bits(const Executor &E, TensorId T) {
  TensorRef R = E.tensor(T);
  const uint16_t *P = R.data<uint16_t>();
  return std::vector<uint16_t>(P, P + R.numElements());
}

// The workspace tensor step S writes after its outputs, or NoId.
TensorId workspaceOf(const Schedule &S, size_t At, size_t Outputs) {
  const Step &St = S.Steps[At];
  return St.Writes.size() > Outputs ? St.Writes[Outputs] : NoId;
}

// a = [[1, 2, 3], [4, 5, 6]], b = [[1, 0], [0, 1], [1, 1]]:
// y = a b = [[4, 5], [10, 11]], exact in half.
// Each row of a has mean m and variance 2/3, so LayerNormalization gives
// (x - m) / sqrt(2/3 + 1e-5) = [-1.224735, 0, 1.224735] per row, times
// scale 2 plus bias 0.5: [-1.949470, 0.5, 2.949470].
// Softmax of [1, 2, 3] (and of [4, 5, 6]): e^k / (e + e^2 + e^3) =
// [0.0900306, 0.2447285, 0.6652410].
// c = Cast(ConstantOfShape(shape of y), value 1.5) to float16: 0x3E00
// (the Cast is float16-native; ONNX 1.12's text parser takes no float16
// literal).
const char *HalfModel = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float16[2,3] a, float16[3,2] b, float16[3] scale, float16[3] bias)
    => (float16[2,2] y, float16[2,3] n, float16[2,3] s, float16[2,2] c) {
  y = MatMul(a, b)
  n = LayerNormalization<axis = -1>(a, scale, bias)
  s = Softmax<axis = -1>(a)
  shape = Shape(y)
  cf = ConstantOfShape<value = float[1] {1.5}>(shape)
  c = Cast<to = 10>(cf)
})";

TEST(HalfInFloat, HalfStepsRunInFloatWithPlannedCopies) {
  Model M(HalfModel);
  const KernelTable &K = cpu();
  Schedule S = M.schedule(K);
  // Each float copy is its elements times 4, rounded up to 256: MatMul
  // copies a (24 bytes), b (24) and y (16): 3 x 256.
  TensorId MW = workspaceOf(S, 0, 1);
  ASSERT_NE(MW, NoId);
  EXPECT_EQ(S.Tensors[MW].SizeBytes, 768u);
  // LayerNormalization: a, scale, bias and n; Mean and InvStdDev are not
  // outputs of the node. 4 x 256.
  TensorId LW = workspaceOf(S, 1, 1);
  ASSERT_NE(LW, NoId);
  EXPECT_EQ(S.Tensors[LW].SizeBytes, 1024u);
  Plan P = M.plan(std::move(S));
  RunInfo I = M.info(P);
  auto E = makeExec(M, P, I, K);
  // 1..6 in half: 0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600.
  setBits(*E, M.G->findValue("a"),
          {0x3C00, 0x4000, 0x4200, 0x4400, 0x4500, 0x4600});
  setBits(*E, M.G->findValue("b"), {0x3C00, 0, 0, 0x3C00, 0x3C00, 0x3C00});
  setBits(*E, M.G->findValue("scale"), {0x4000, 0x4000, 0x4000});
  setBits(*E, M.G->findValue("bias"), {0x3800, 0x3800, 0x3800});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  // 4, 5, 10, 11.
  EXPECT_EQ(bits(*E, M.G->findValue("y")),
            (std::vector<uint16_t>{0x4400, 0x4500, 0x4900, 0x4980}));
  EXPECT_EQ(bits(*E, M.G->findValue("c")),
            (std::vector<uint16_t>{0x3E00, 0x3E00, 0x3E00, 0x3E00}));
  // Rounded once from float: within half an ulp (2^-11 relative).
  const float Norm[3] = {-1.949470f, 0.5f, 2.949470f};
  const float Soft[3] = {0.0900306f, 0.2447285f, 0.6652410f};
  std::vector<uint16_t> N = bits(*E, M.G->findValue("n")),
                        Sm = bits(*E, M.G->findValue("s"));
  for (int I = 0; I < 6; ++I) {
    EXPECT_NEAR(fromHalf(N[I]), Norm[I % 3], std::fabs(Norm[I % 3]) / 2048)
        << I;
    EXPECT_NEAR(fromHalf(Sm[I]), Soft[I % 3], Soft[I % 3] / 2048) << I;
  }
  for (const RegionUse &U : E->regionUse())
    EXPECT_EQ(U.HighWaterAligned, U.PlannedBytes) << regionName(U.R).str();
}

// bfloat16 [[1, 2, 3], [4, 5, 6]] as a 1x1x2x3 image. ReduceMean over the
// last axis: [2, 5], by the CPU's native bfloat16 kernel (no copies).
// MaxPool 1x2, stride 1: [[2, 3], [5, 6]] with indices [1, 2, 4, 5] (flat
// in the image; int64, passed through uncopied), by the float kernel.
const char *BF16Model = R"(<ir_version: 8, opset_import: ["" : 17]>
g (bfloat16[1,1,2,3] a) => (bfloat16[1,1,2] m, bfloat16[1,1,2,2] p,
                            int64[1,1,2,2] i) {
  m = ReduceMean<axes = [3], keepdims = 0>(a)
  p, i = MaxPool<kernel_shape = [1, 2]>(a)
})";

TEST(HalfInFloat, BFloat16NativeAndWidenedWithIndexOutput) {
  Model M(BF16Model);
  const KernelTable &K = cpu();
  Schedule S = M.schedule(K);
  EXPECT_EQ(workspaceOf(S, 0, 1), NoId);
  // MaxPool: a (24 bytes) and p (16): 2 x 256; i is not copied.
  TensorId PW = workspaceOf(S, 1, 2);
  ASSERT_NE(PW, NoId);
  EXPECT_EQ(S.Tensors[PW].SizeBytes, 512u);
  Plan P = M.plan(std::move(S));
  RunInfo I = M.info(P);
  auto E = makeExec(M, P, I, K);
  setBits(*E, M.G->findValue("a"),
          {0x3F80, 0x4000, 0x4040, 0x4080, 0x40A0, 0x40C0});
  ASSERT_FALSE(llvm::errorToBool(E->run()));
  std::vector<uint16_t> Mean = bits(*E, M.G->findValue("m"));
  EXPECT_EQ(fromBF16(Mean[0]), 2.0f);
  EXPECT_EQ(fromBF16(Mean[1]), 5.0f);
  EXPECT_EQ(bits(*E, M.G->findValue("p")),
            (std::vector<uint16_t>{0x4000, 0x4040, 0x40A0, 0x40C0}));
  TensorRef Idx = E->tensor(M.G->findValue("i"));
  EXPECT_EQ(std::vector<int64_t>(Idx.data<int64_t>(), Idx.data<int64_t>() + 4),
            (std::vector<int64_t>{1, 2, 4, 5}));
}

TEST(HalfInFloat, RuleTakesFloatKernelsOnly) {
  Kernel FloatOnly{nullptr, nullptr, {ElementType::Float}};
  Kernel Native{nullptr, nullptr, {ElementType::Float, ElementType::Float16}};
  Kernel AnyType{nullptr, nullptr, {}};
  Kernel IntOnly{nullptr, nullptr, {ElementType::Int64}};
  EXPECT_TRUE(widensHalf(FloatOnly, ElementType::Float16));
  EXPECT_TRUE(widensHalf(FloatOnly, ElementType::BFloat16));
  EXPECT_FALSE(widensHalf(FloatOnly, ElementType::Float));
  EXPECT_FALSE(widensHalf(Native, ElementType::Float16));
  EXPECT_TRUE(widensHalf(Native, ElementType::BFloat16));
  EXPECT_FALSE(widensHalf(AnyType, ElementType::Float16));
  EXPECT_FALSE(widensHalf(IntOnly, ElementType::Float16));
}

} // namespace
