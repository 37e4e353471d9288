//===- CUDAKernelTest.cpp - the CUDA kernels against the CPU backend ------===//
//
// Each case is a small model in ONNX text whose nodes together use a family
// of CUDA kernels (every op the CUDA table registers appears in some case
// here or in CUDAKernelOpsTest.cpp), compared with the CPU backend by
// CUDAKernelCompare.h. Without a GPU each test skips after its CPU side.
//
//===----------------------------------------------------------------------===//
#include "CUDAKernelCompare.h"
#include "oomplan/Runtime/HalfInFloat.h"
#include "llvm/Support/FileSystem.h"
#include <cstdlib>

using namespace oomplan;
using namespace oomplan::runtime;
using namespace oomplan::runtime::unit;

namespace {

TEST(CUDAKernels, Unary) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[3,5,7] x) => (float[3,5,7] relu, float[3,5,7] sig, float[3,5,7] th,
    float[3,5,7] erf, float[3,5,7] ex, float[3,5,7] lg, float[3,5,7] sq,
    float[3,5,7] neg, float[3,5,7] rec, float[3,5,7] fl, float[3,5,7] ce,
    float[3,5,7] sn, float[3,5,7] cs, float[3,5,7] lr, float[3,5,7] hs,
    float[3,5,7] sp, float[3,5,7] sg, float[3,5,7] clip, float[3,5,7] id)
    <float lo = {-0.5}, float hi = {0.75}> {
  relu = Relu(x)
  sig = Sigmoid(x)
  th = Tanh(x)
  erf = Erf(x)
  ex = Exp(x)
  ax = Abs(x)
  one = Constant<value = float {1}>()
  pos = Add(ax, one)
  lg = Log(pos)
  sq = Sqrt(pos)
  neg = Neg(x)
  rec = Reciprocal(pos)
  fl = Floor(x)
  ce = Ceil(x)
  sn = Sin(x)
  cs = Cos(x)
  lr = LeakyRelu<alpha = 0.1>(x)
  hs = HardSigmoid<alpha = 0.3, beta = 0.4>(x)
  sp = Softplus(x)
  sg = Sign(x)
  clip = Clip(x, lo, hi)
  id = Identity(x)
})");
}

TEST(CUDAKernels, BinaryBroadcastWhereCast) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] a, float[3,1] b) => (float[2,3,4] add, float[2,3,4] sub,
    float[2,3,4] mul, float[2,3,4] div, float[2,3,4] pw, float[2,3,4] mx,
    float[2,3,4] mn, bool[2,3,4] eq, bool[2,3,4] gt, bool[2,3,4] le,
    bool[2,3,4] both, float[2,3,4] sel, int64[2,3,4] ints,
    float[2,3,4] back, float[2,3,4] pr) <float[4] slope = {0.1, 0.2, 0.3, 0.4}> {
  add = Add(a, b)
  sub = Sub(a, b)
  mul = Mul(a, b)
  bb = Abs(b)
  one = Constant<value = float {1}>()
  den = Add(bb, one)
  div = Div(a, den)
  aa = Abs(a)
  base = Add(aa, one)
  pw = Pow(base, b)
  mx = Max(a, b)
  mn = Min(a, b)
  ra = Floor(a)
  rb = Floor(b)
  eq = Equal(ra, rb)
  gt = Greater(a, b)
  le = LessOrEqual(a, b)
  nt = Not(gt)
  both = And(nt, le)
  sel = Where(gt, a, b)
  ints = Cast<to = 7>(mul)
  back = Cast<to = 1>(ints)
  pr = PRelu(a, slope)
})");
}

TEST(CUDAKernels, LayoutAndShapeOps) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,4] x, float[2,1,4] y) => (float[4,2,3] tr, float[2,3,4] ex,
    float[2,4,4] cat, float[2,2,2] sl, float[2,2,4] ga, float[2,5,6] pd,
    int64[3] sh, int64 sz, float[2,3] cos, float[5] rg, float[6,4] rs,
    float[2,12] fl, float[2,4] sq, float[2,1,3,4] us)
    <int64[2] idx = {2, -3}, int64[3] st = {1, 3, 0}, int64[3] en = {2, -100, 4},
     int64[3] ax = {0, 2, 1}, int64[3] sp = {1, -2, 2},
     int64[6] pads = {0, 1, 0, 0, 1, 2}, int64[2] ts = {6, 4},
     int64[1] one = {1}> {
  tr = Transpose<perm = [2, 0, 1]>(x)
  ex = Expand(y, sh)
  cat = Concat<axis = 1>(x, y)
  sl = Slice(x, st, en, ax, sp)
  ga = Gather<axis = 1>(x, idx)
  pd = Pad(x, pads)
  sh = Shape(x)
  sz = Size(x)
  cshape = Shape<end = 2>(x)
  cos = ConstantOfShape<value = float[1] {0.5}>(cshape)
  start = Constant<value = float {1.5}>()
  limit = Constant<value = float {4}>()
  delta = Constant<value = float {0.5}>()
  rg = Range(start, limit, delta)
  rs = Reshape(x, ts)
  fl = Flatten<axis = 1>(x)
  sq = Squeeze(y, one)
  us = Unsqueeze(x, one)
})");
}

TEST(CUDAKernels, SoftmaxNormsReductions) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,8,8] x) => (float[2,3,8,8] sm, float[2,3,8,8] sm1,
    float[2,3,8,8] lsm, float[2,3,8,8] ln, float[2,3,8,8] bn,
    float[2,3,1,1] gap, float[2,3,1,1] gmp, float[2,1,1,8] rm, float[2,8] rs,
    float[2,3,8] rx)
    <float[8] s = {1, 2, 3, 4, 5, 6, 7, 8}, float[8] b = {0, 1, 0, 1, 0, 1, 0, 1},
     float[3] g = {1, 0.5, 2}, float[3] c = {0, 1, -1},
     float[3] mu = {0.1, 0.2, 0.3}, float[3] var = {1, 2, 0.5},
     int64[2] axes = {1, 2}> {
  sm = Softmax(x)
  sm1 = Softmax<axis = 1>(x)
  lsm = LogSoftmax<axis = 2>(x)
  ln = LayerNormalization<axis = -1, epsilon = 1e-5>(x, s, b)
  bn = BatchNormalization<epsilon = 1e-5>(x, g, c, mu, var)
  gap = GlobalAveragePool(x)
  gmp = GlobalMaxPool(x)
  rm = ReduceMean<axes = [1, 2]>(x)
  rs = ReduceSum<keepdims = 0>(x, axes)
  rx = ReduceMax<axes = [3], keepdims = 0>(x)
})");
}

// The forms the CPU kernels take that a first CUDA version refused: Pow
// of a float base and an int64 exponent (exporters write x ** 2 so), a
// LayerNormalization whose scale and bias are one value each, and Dropout
// with a training_mode input that is false.
TEST(CUDAKernels, MixedPowOneValueLayerNormDropout) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3,8] x) => (float[2,3,8] sq, float[2,3,8] cu, float[2,3,8] ln,
    float[2,3,8] dr, bool[2,3,8] mask)
    <int64 two = {2}, int64 three = {3}, float[1] s = {1.5}, float[1] b = {-0.25},
     float ratio = {0.3}, bool off = {0}> {
  sq = Pow(x, two)
  cu = Pow(x, three)
  ln = LayerNormalization<axis = -1, epsilon = 1e-5>(x, s, b)
  dr, mask = Dropout(x, ratio, off)
})");
}

// Pad's int64 constant past 2^53 (2^53 + 1 has no double): copied as an
// integer, as the CPU copies its bytes.
TEST(CUDAKernels, PadKeepsAnExactInt64Constant) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,3] x) => (int64[2,5] pd)
    <int64[4] pads = {0, 1, 0, 1}, int64 big = {9007199254740993}> {
  ints = Cast<to = 7>(x)
  pd = Pad(ints, pads, big)
})");
}

// A flattened If on data (docs/shapes.md): the condition is copied back
// before each guarded step, the branch not taken is skipped (its Gather
// would index x[sum] out of range), and OomplanIf copies the taken
// branch's result; nested, with a condition known from shapes inside.
TEST(CUDAKernels, IfOnDataAndOnShapes) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4] x) => (float[2,4] y) {
  s = ReduceSum<keepdims = 0>(x)
  zero = Constant<value = float {0}>()
  c = Greater(s, zero)
  y = If(c) <
    then_branch = g1 () => (float[2,4] t) {
      sh = Shape(x)
      k = Constant<value = int64 {0}>()
      d = Gather<axis = 0>(sh, k)
      one = Constant<value = int64 {1}>()
      c2 = Equal(d, one)
      t = If(c2) <
        then_branch = g3 () => (float[2,4] u) { ax = Constant<value = int64[1] {0}>()  q = Squeeze(x, ax)  u = Identity(x) },
        else_branch = g4 () => (float[2,4] v) { two = Constant<value = float {2}>()  v = Mul(x, two) }
      >
    },
    else_branch = g2 () => (float[2,4] e) {
      i = Cast<to = 7>(s)
      ax0 = Constant<value = int64[1] {0}>()
      i1 = Unsqueeze(i, ax0)
      g = Gather<axis = 1>(x, i1)
      e = Mul(x, g)
    }
  >
})");
}

// Training-mode Dropout draws random numbers no reference could match:
// both backends refuse it rather than run the identity.
TEST(CUDAKernels, TrainingDropoutIsRefused) {
  Model M(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[4] x) => (float[4] y) <float ratio = {0.5}, bool on = {1}> {
  y = Dropout(x, ratio, on)
})");
  auto Refused = [&](const Backend &B) {
    Plan P = M.plan(M.schedule(*B.Kernels));
    RunInfo I = M.info(P);
    ExecOptions O;
    O.Dev = B.Dev;
    auto E = makeExec(M, P, I, *B.Kernels, O);
    std::string Msg = llvm::toString(E->run());
    EXPECT_NE(Msg.find("training-mode Dropout"), std::string::npos) << Msg;
  };
  Refused(*openBackend("cpu"));
  std::string Why;
  std::optional<Backend> G = gpu(Why);
  if (!G)
    GTEST_SKIP() << "no CUDA device: " << Why;
  Refused(*G);
}

TEST(CUDAKernels, MatMulAndGemm) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[5,7] a, float[7,3] b, float[2,5,7] a3, float[2,7,3] b3,
   float[2,1,5,7] a4, float[1,3,7,4] b4, float[7,5] at, float[3,7] bt,
   float[3] c) => (float[5,3] mm, float[2,5,3] bm, float[2,5,3] bs,
   float[2,3,5,4] bc, float[5,3] ge, float[5,3] gt) {
  mm = MatMul(a, b)
  bm = MatMul(a3, b)
  bs = MatMul(a3, b3)
  bc = MatMul(a4, b4)
  ge = Gemm<alpha = 0.5, beta = 2.0>(a, b, c)
  gt = Gemm<transA = 1, transB = 1>(at, bt, c)
})");
}

TEST(CUDAKernels, ConvAndPools) {
  compareBackends(R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[2,4,9,9] x, float[8,4,3,3] w, float[8] wb, float[4,1,3,3] dw,
   float[2,4,16] x1, float[6,4,5] w1) => (float[2,8,5,5] conv,
   float[2,4,9,9] dconv, float[2,6,16] conv1, float[2,4,5,5] mp,
   float[2,4,4,4] ap) {
  conv = Conv<pads = [1, 1, 1, 1], strides = [2, 2]>(x, w, wb)
  dconv = Conv<group = 4, pads = [2, 2, 2, 2], dilations = [2, 2]>(x, dw)
  conv1 = Conv<pads = [2, 2]>(x1, w1)
  mp = MaxPool<kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]>(x)
  ap = AveragePool<kernel_shape = [3, 3], pads = [1, 1, 1, 1], strides = [2, 2]>(x)
})");
}

} // namespace

namespace {
// A test model (weights stripped: seeded ones) planned through the driver,
// which fuses what the kernel table has, then run.
struct Planned {
  driver::Executable X;
  std::unique_ptr<Executor> E;
};
std::unique_ptr<Planned> planAndRun(const api::Request &R, const Backend &B) {
  auto X = driver::planExecutable(R, *B.Kernels);
  oomplan::test::stopOnError(X, "plan");
  auto P = std::make_unique<Planned>();
  P->X = std::move(*X);
  ExecOptions O;
  O.Dev = B.Dev;
  auto E = Executor::create(*P->X.G, P->X.P, P->X.Info, *B.Kernels, O);
  oomplan::test::stopOnError(E, "executor");
  P->E = std::move(*E);
  EXPECT_FALSE(llvm::errorToBool(P->E->loadWeights(R.ModelPath, {}, 11)));
  for (size_t I = 0; I < P->X.G->Inputs.size(); ++I) {
    TensorRef T = P->E->tensor(P->X.G->Inputs[I]);
    for (uint64_t K = 0; K < T.numElements(); ++K) {
      if (T.Type == ElementType::Float)
        T.data<float>()[K] = float(K % 13) / 13.f - 0.5f;
      else if (T.Type == ElementType::Int64)
        T.data<int64_t>()[K] = int64_t(K % 7 + 1);
    }
  }
  llvm::Error Err = P->E->run();
  EXPECT_FALSE(bool(Err)) << llvm::toString(std::move(Err));
  return P;
}

// Every float output of GPU within Atol + 1e-3 |CPU| of CPU's; What names
// the case in a failure.
void expectSameOutputs(const Planned &CPU, const Planned &GPU, float Atol,
                       const std::string &What) {
  for (ValueId V : CPU.X.G->Outputs) {
    TensorRef A = CPU.E->tensor(V), B = GPU.E->tensor(V);
    ASSERT_EQ(A.Dims, B.Dims);
    for (uint64_t K = 0; K < A.numElements(); ++K) {
      float P = A.data<float>()[K], Q = B.data<float>()[K];
      if (std::isnan(P) && std::isnan(Q))
        continue;
      ASSERT_LE(std::fabs(P - Q), Atol + 1e-3 * std::fabs(P))
          << What << ": " << CPU.X.G->Values[V].Name << "[" << K << "]: CPU "
          << P << ", CUDA " << Q;
    }
  }
}

// Text in a temporary .onnxtxt file; its path, or "" (a failure noted).
std::string writeModel(llvm::StringRef Text, const char *Stem) {
  llvm::SmallString<128> Path;
  int FD = -1;
  std::error_code EC =
      llvm::sys::fs::createTemporaryFile(Stem, "onnxtxt", FD, Path);
  EXPECT_FALSE(EC) << EC.message();
  if (EC)
    return "";
  llvm::raw_fd_ostream OS(FD, /*shouldClose=*/true);
  OS << Text;
  return std::string(Path);
}

// R on G with each CUDA attention kernel (rows, then tiles), against CPU.
void expectBothAttentionKernels(const api::Request &R, const Planned &CPU,
                                const Backend &G) {
  for (const char *Kernel : {"rows", "tiles"}) {
    ::setenv("OOMPLAN_CUDA_ATTENTION", Kernel, 1);
    auto GPU = planAndRun(R, G);
    expectSameOutputs(CPU, *GPU, 1e-5f, Kernel);
    if (::testing::Test::HasFatalFailure())
      break;
  }
  ::unsetenv("OOMPLAN_CUDA_ATTENTION");
}

size_t countOp(const Planned &P, llvm::StringRef Op) {
  size_t N = 0;
  for (const Step &St : P.X.P.Sched.Steps)
    if (St.Node != NoId && P.X.G->Nodes[St.Node].OpType == Op)
      ++N;
  return N;
}
} // namespace

// The fused ops on the test models: resnet50 (b1) fuses its convolutions
// with bias, residual and Relu into OomplanConv; gpt_like (b1, s16) its
// attention into OomplanAttention and its MLP and projections into
// OomplanMatMul. The CUDA table has all three, so the CUDA plan fuses as
// the CPU's does (same op counts); on a GPU the outputs must match the
// CPU's within rtol 1e-3.
TEST(CUDAKernels, FusedOpsOnTestModels) {
  struct Case {
    const char *Model;
    std::optional<int64_t> Seq;
    const char *Fused;
  } Cases[] = {{"resnet50", std::nullopt, "OomplanConv"},
               {"gpt_like", 16, "OomplanAttention"},
               {"gpt_like", 16, "OomplanMatMul"}};
  std::string Why;
  std::optional<Backend> G = gpu(Why);
  for (const Case &C : Cases) {
    api::Request R;
    R.ModelPath = std::string(OOMPLAN_TEST_MODELS_DIR "/") + C.Model + ".onnx";
    R.Batch = 1;
    R.Seq = C.Seq;
    auto CPU = planAndRun(R, *openBackend("cpu"));
    // The CUDA plan's fusion, without a device: the table decides.
    auto X = driver::planExecutable(R, cuda::cudaKernelTable());
    oomplan::test::stopOnError(X, "plan");
    size_t Fused = 0;
    for (const Step &St : X->P.Sched.Steps)
      if (St.Node != NoId && X->G->Nodes[St.Node].OpType == C.Fused)
        ++Fused;
    EXPECT_GT(Fused, 0u) << C.Model << " " << C.Fused;
    EXPECT_EQ(Fused, countOp(*CPU, C.Fused)) << C.Model << " " << C.Fused;
    auto Check = Executor::create(*X->G, X->P, X->Info, cuda::cudaKernelTable(),
                                  ExecOptions());
    ASSERT_TRUE(bool(Check)) << llvm::toString(Check.takeError());
    if (!G)
      continue;
    auto GPU = planAndRun(R, *G);
    expectSameOutputs(*CPU, *GPU, 1e-4f, C.Model);
    if (HasFatalFailure())
      return;
  }
  if (!G)
    GTEST_SKIP() << "fusion and kernel coverage checked; no CUDA device to "
                    "compare outputs: "
                 << Why;
}

// `oomplan --backend=cuda` plans each library workspace at its bound
// (CUDAWorkspaces.h) without a GPU: every CUDA kernel that declares a
// workspace must have one there, or the planner-only plan would be smaller
// than the run's. OomplanAttention's scratch is the CPU formula, which the
// planner counts itself. Runs without a GPU (in builds with CUDA, as CI's).
// The planner's list of CUDA kernels that run halves on float copies
// (CUDAWorkspaces.h's halfInFloat) is the table's: a kernel missing from it
// would make `oomplan --backend=cuda` smaller than the run.
TEST(CUDAWorkspaceBounds, HalfInFloatListIsTheTables) {
  const KernelTable &K = cuda::cudaKernelTable();
  for (const ops::OpInfo &Op : ops::allOps()) {
    const auto &Kern = K.get(ops::opCode(Op));
    bool Table = Kern && (widensHalf(*Kern, ElementType::Float16) ||
                          widensHalf(*Kern, ElementType::BFloat16));
    EXPECT_EQ(cuda::halfInFloat(Op.Name), Table) << Op.Name;
  }
}

// The planner's list of the ops that run as host steps on CUDA
// (CUDAWorkspaces.h's hostStepOp) is the tables': the CPU has a kernel and
// CUDA none (Constant needs neither: it is loaded with the weights).
TEST(CUDAWorkspaceBounds, HostStepOpsAreTheTables) {
  const KernelTable &K = cuda::cudaKernelTable();
  unsigned Listed = 0;
  for (const ops::OpInfo &Op : ops::allOps()) {
    const bool Host = cpu().get(ops::opCode(Op)) && !K.get(ops::opCode(Op)) &&
                      llvm::StringRef(Op.Name) != "Constant";
    EXPECT_EQ(cuda::hostStepOp(Op.Name), Host) << Op.Name;
    Listed += Host;
  }
  EXPECT_GT(Listed, 0u);
}

TEST(CUDAWorkspaceBounds, EveryKernelWithAWorkspaceHasABound) {
  const KernelTable &K = cuda::cudaKernelTable();
  unsigned WithWorkspace = 0;
  for (const ops::OpInfo &Op : ops::allOps()) {
    const auto &Kern = K.get(ops::opCode(Op));
    std::string Name = Op.Name;
    uint64_t Bound = cuda::workspaceBound(Name);
    if (!Kern || !Kern->Workspace) {
      EXPECT_EQ(Bound, 0u) << Name << " has a bound but no CUDA workspace";
      continue;
    }
    ++WithWorkspace;
    if (Name == fused::AttentionOp || cuda::isRecurrent(Name) ||
        Name == "MatMulNBits") // formulas of shapes
      continue;
    EXPECT_GT(Bound, 0u) << Name << " has a CUDA workspace and no bound";
    // Without a device a query answers what it can (conv: 0, nothing to
    // ask; cuBLAS: the pre-Hopper 4 MiB): never above the bound.
    EXPECT_LE(Kern->Workspace(Node(), {}, {}), Bound) << Name;
  }
  // Conv, ConvTranspose, MatMul, Gemm, the three fused ops, the three
  // recurrent ops and MatMulNBits.
  EXPECT_EQ(WithWorkspace, 11u);
  EXPECT_EQ(cuda::workspaceBound("Conv"), uint64_t(64) << 20);
  EXPECT_EQ(cuda::workspaceBound("ConvTranspose"), uint64_t(64) << 20);
  EXPECT_EQ(cuda::workspaceBound("MatMul"), uint64_t(32) << 20);
}

// A recurrent op's CUDA workspace is a formula of its shapes, which
// `oomplan --backend=cuda` evaluates with cuBLAS's Hopper size: an LSTM
// over X [5, 3, 4] with hidden size 6 plans its gates (3 x 24) and four
// [3, 6] states, (72 + 72) floats = 576 bytes, rounded up to 768, then
// cuBLAS's; batch-major X [3, 5, 4] the same; a GRU (3 gates) 504 bytes,
// 512 rounded; an RNN (1 gate) 360, 512 rounded. Without a device the
// kernel asks for the pre-Hopper 4 MiB.
TEST(CUDAWorkspaceBounds, RecurrentWorkspaceIsItsFormula) {
  const KernelTable &K = cuda::cudaKernelTable();
  EXPECT_EQ(cuda::recurrentWorkspace("LSTM", 3, 6, 0), 768u);
  EXPECT_EQ(cuda::recurrentWorkspace("GRU", 3, 6, 0), 512u);
  EXPECT_EQ(cuda::recurrentWorkspace("RNN", 3, 6, 0), 512u); // 360 bytes
  EXPECT_EQ(cuda::recurrentWorkspace("LSTM", 3, 6, 100), 868u);
  EXPECT_EQ(
      cuda::recurrentWorkspace("LSTM", uint64_t(1) << 40, uint64_t(1) << 40, 0),
      UINT64_MAX);
  auto Ref = [](std::vector<int64_t> Dims) {
    TensorRef T;
    T.Type = ElementType::Float;
    T.Dims.assign(Dims.begin(), Dims.end());
    return T;
  };
  for (bool BatchMajor : {false, true}) {
    Node N;
    N.OpType = "LSTM";
    if (BatchMajor) {
      Attribute A;
      A.Name = "layout";
      A.Kind = AttrKind::Int;
      A.I = 1;
      N.Attrs.push_back(A);
    }
    std::vector<TensorRef> In = {Ref(BatchMajor
                                         ? std::vector<int64_t>{3, 5, 4}
                                         : std::vector<int64_t>{5, 3, 4}),
                                 Ref({1, 24, 4}), Ref({1, 24, 6})};
    const auto &Kern = K.get(ops::opCode(*ops::lookupOp("LSTM")));
    ASSERT_TRUE(Kern && Kern->Workspace);
    // cuBLAS's part: 4 MiB without a device or before Hopper, else 32.
    uint64_t Run = Kern->Workspace(N, In, {});
    EXPECT_TRUE(Run == 768 + cuda::blasWorkspaceFor(8) ||
                Run == 768 + cuda::blasWorkspaceFor(9))
        << Run << (BatchMajor ? " batch-major" : "");
    EXPECT_LE(
        Run, cuda::recurrentWorkspace("LSTM", 3, 6, cuda::blasWorkspaceFor(9)));
  }
}

// OomplanAttention on both CUDA kernels, a block per query row and query
// tiles sharing K and V (OOMPLAN_CUDA_ATTENTION=tiles), against the CPU's.
// The graph is the unfused pattern, which --fuse=auto makes into two fused
// ops: 19 queries against 37 keys (Transpose of K folded, Mul scale, a bias,
// a key mask through Where), and against 300 keys given transposed (Div
// scale, a query-by-key mask): sizes that fill no tile or chunk evenly, an
// odd D (7: the tiled kernel's K rows get an odd stride) and D != Dv (5). The
// inputs are planAndRun's pattern, K % 13 / 13 - 0.5, so Greater(m, 0.3) masks
// 2 keys in 13.
TEST(CUDAKernels, AttentionRowsAndTiles) {
  const char *Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,3,19,7] q, float[1,3,37,7] k, float[1,3,37,5] v,
   float[1,1,19,37] b, float[1,1,1,37] m, float[1,3,19,8] q2,
   float[1,3,8,300] kt2, float[1,3,300,5] v2, float[1,1,19,300] m2)
    => (float[1,3,19,5] y, float[1,3,19,5] y2) {
  c = Constant<value = float {0.35}>()
  kt = Transpose<perm = [0, 1, 3, 2]>(k)
  s = MatMul(q, kt)
  sc = Mul(s, c)
  sb = Add(sc, b)
  cut = Constant<value = float {0.3}>()
  mask = Greater(m, cut)
  fill = Constant<value = float {-10000}>()
  sm = Where(mask, fill, sb)
  p = Softmax<axis = -1>(sm)
  y = MatMul(p, v)
  s2 = MatMul(q2, kt2)
  d = Constant<value = float {2.8284271}>()
  sc2 = Div(s2, d)
  mask2 = Greater(m2, cut)
  sm2 = Where(mask2, fill, sc2)
  p2 = Softmax<axis = -1>(sm2)
  y2 = MatMul(p2, v2)
})";
  std::string Path = writeModel(Text, "attention");
  ASSERT_FALSE(Path.empty());
  api::Request R;
  R.ModelPath = Path;
  auto CPU = planAndRun(R, *openBackend("cpu"));
  EXPECT_EQ(countOp(*CPU, "OomplanAttention"), 2u) << "the pattern fuses";
  auto X = driver::planExecutable(R, cuda::cudaKernelTable());
  oomplan::test::stopOnError(X, "plan");
  auto Check = Executor::create(*X->G, X->P, X->Info, cuda::cudaKernelTable(),
                                ExecOptions());
  ASSERT_TRUE(bool(Check)) << llvm::toString(Check.takeError());
  std::string Why;
  std::optional<Backend> G = gpu(Why);
  if (!G) {
    llvm::sys::fs::remove(Path);
    GTEST_SKIP() << "fusion and kernel coverage checked; no CUDA device: "
                 << Why;
  }
  expectBothAttentionKernels(R, *CPU, *G);
  llvm::sys::fs::remove(Path);
}

// A NaN score among -inf ones makes the row NaN on both CUDA kernels, as
// on the CPU and in the unfused Softmax: the bias is Log of a constant (0
// gives -inf, -1 NaN, 1 a score of 0). Every row's only finite score is key
// 299's; row 0 has a NaN at key 100 (the rows kernel's first chunk of 256
// and the tiled kernel's tile [96, 128), all else -inf there), row 1 at key
// 0 and 260, row 2 none: rows 0 and 1 are NaN, row 2 is V's key 299.
TEST(CUDAKernels, AttentionNaNAmongMaskedScores) {
  std::string Bias;
  for (int Row = 0; Row < 3; ++Row)
    for (int Key = 0; Key < 300; ++Key) {
      const bool NaN =
          (Row == 0 && Key == 100) || (Row == 1 && (Key == 0 || Key == 260));
      Bias += (Row || Key ? ", " : "");
      Bias += Key == 299 ? "1" : NaN ? "-1" : "0";
    }
  const std::string Text = R"(<ir_version: 8, opset_import: ["" : 17]>
g (float[1,2,3,8] q, float[1,2,8,300] kt, float[1,2,300,5] v)
    => (float[1,2,3,5] y) {
  c = Constant<value = float[1,1,3,300] {)" +
                           Bias + R"(}>()
  b = Log(c)
  s = MatMul(q, kt)
  d = Constant<value = float {2.8284271}>()
  sc = Div(s, d)
  sb = Add(sc, b)
  p = Softmax<axis = -1>(sb)
  y = MatMul(p, v)
})";
  std::string Path = writeModel(Text, "attention-nan");
  ASSERT_FALSE(Path.empty());
  api::Request R;
  R.ModelPath = Path;
  auto CPU = planAndRun(R, *openBackend("cpu"));
  EXPECT_EQ(countOp(*CPU, "OomplanAttention"), 1u) << "the pattern fuses";
  TensorRef Y = CPU->E->tensor(CPU->X.G->Outputs[0]);
  ASSERT_EQ(Y.numElements(), 30u);
  for (uint64_t K = 0; K < 30; ++K) // [head][row][5]
    EXPECT_EQ(std::isnan(Y.data<float>()[K]), K % 15 < 10) << K;
  std::string Why;
  std::optional<Backend> G = gpu(Why);
  if (!G) {
    llvm::sys::fs::remove(Path);
    GTEST_SKIP() << "the CPU's NaN rows checked; no CUDA device: " << Why;
  }
  expectBothAttentionKernels(R, *CPU, *G);
  llvm::sys::fs::remove(Path);
}
