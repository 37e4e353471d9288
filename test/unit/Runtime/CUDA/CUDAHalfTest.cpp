//===- CUDAHalfTest.cpp - float16 and bfloat16 steps on CUDA --------------===//
//
// A model cast to float16 (and one to bfloat16) inside: MatMul, the
// elementwise ops and IsNaN run natively on half storage (cublasGemmEx,
// Elementwise.cu's Store); Gemm, LayerNormalization, Softmax, Conv,
// MaxPool and a linear Resize run their float kernels on float copies
// (HalfInFloat.h). Both backends round float results once, so the outputs
// (cast back to float) agree to an ulp or two of the half type.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"
#include "oomplan/Runtime/HalfInFloat.h"

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

// TO is 10 (float16) or 16 (bfloat16).
std::string halfModel(int To) {
  std::string T = To == 10 ? "float16" : "bfloat16";
  std::string M = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4,8] x, float[8,6] w, float[6] s, float[6] b, float[2,4,6] r,
   float[1,2,5,5] im, float[3,2,3,3] k, float[8,6] gw)
    => (float[2,4,6] mm, float[2,4,6] ln, float[2,4,6] ge, float[2,4,6] sm,
        float[2,4,6] cl, bool[2,4,6] nan, float[1,3,2,2] pool,
        float[1,3,4,4] up, float[8,8] gm) <int64[2] shp = {8, 6},
     float lo = {-0.5}, float hi = {0.7}, float[0] noroi = {},
     float[4] sc = {1, 1, 2, 2}> {
  xh = Cast<to = TO>(x)
  wh = Cast<to = TO>(w)
  sh = Cast<to = TO>(s)
  bh = Cast<to = TO>(b)
  rh = Cast<to = TO>(r)
  mh = MatMul(xh, wh)
  lh = LayerNormalization<axis = -1>(mh, sh, bh)
  ah = Add(lh, rh)
  gh = Erf(ah)
  smh = Softmax<axis = -1>(ah)
  loh = Cast<to = TO>(lo)
  hih = Cast<to = TO>(hi)
  ch = Clip(ah, loh, hih)
  lg = Log(ah)
  nan = IsNaN(lg)
  imh = Cast<to = TO>(im)
  kh = Cast<to = TO>(k)
  cv = Conv<pads = [1, 1, 1, 1]>(imh, kh)
  ph = MaxPool<kernel_shape = [2, 2], strides = [2, 2]>(cv)
  uh = Resize<mode = "linear">(ph, noroi, sc)
  m2 = Reshape(mh, shp)
  gwh = Cast<to = TO>(gw)
  gh2 = Gemm<transB = 1>(m2, gwh)
  mm = Cast<to = 1>(mh)
  ln = Cast<to = 1>(lh)
  ge = Cast<to = 1>(gh)
  sm = Cast<to = 1>(smh)
  cl = Cast<to = 1>(ch)
  pool = Cast<to = 1>(ph)
  up = Cast<to = 1>(uh)
  gm = Cast<to = 1>(gh2)
})";
  for (size_t P; (P = M.find("TO")) != std::string::npos;)
    M.replace(P, 2, std::to_string(To));
  return M;
}

TEST(CUDAHalf, Float16) { compareBackends(halfModel(10).c_str(), 2e-3); }
TEST(CUDAHalf, BFloat16) { compareBackends(halfModel(16).c_str(), 1.6e-2); }

// Which steps of the float16 model run on float copies with the CUDA
// table: the ops named above, and no others.
TEST(CUDAHalf, NativeAndWidenedSteps) {
  Model M(halfModel(10).c_str());
  const KernelTable &K = cuda::cudaKernelTable();
  std::vector<std::string> Widened;
  for (const Node &N : M.G->Nodes) {
    const ops::OpInfo *Op = ops::lookupOp(N.OpType);
    ASSERT_TRUE(Op && K.get(ops::opCode(*Op))) << N.OpType;
    ValueId In = N.Inputs.empty() ? NoId : N.Inputs[0];
    if (In != NoId &&
        widensHalf(*K.get(ops::opCode(*Op)), M.Shapes.Values[In].Type))
      Widened.push_back(N.OpType);
  }
  EXPECT_EQ(Widened,
            (std::vector<std::string>{"LayerNormalization", "Softmax", "Conv",
                                      "MaxPool", "Resize", "Gemm"}));
}

} // namespace
