//===- DriverBackend.cpp - --backend: a runtime's library workspaces ------===//
//
// `oomplan --backend=cuda` plans what `oomplan-run --backend=cuda` would
// allocate, on a machine that has no GPU to ask. The runtime's plan adds
// each kernel's workspace (DriverExecutable.cpp, from the kernels'
// queries); here the CUDA kernels' workspaces come from their bounds
// (Runtime/CUDAWorkspaces.h): a convolution gets cuDNN's limit and a
// product cuBLAS's Hopper size, the most the backend ever plans for such a
// step, a recurrent op its gates and states (a formula of its shapes)
// plus cuBLAS's, and MatMulNBits its tile of W (none for a decode step) plus
// cuBLAS's. Every step's workspace is then at least the run's, so the peak
// of live bytes in a given order is too; the arena, placed by heuristics in an
// order chosen for these sizes, is a bound in practice (gpu-check compares it
// with the run's allocations). OomplanAttention's scratch is already counted by
// the planner-only path (DriverFusion.cpp), with the formula the CUDA kernel
// declares. Steps of ops CUDA has no kernel for are counted by op: the run
// takes them to the host (no device bytes), which the output says.
//
//===----------------------------------------------------------------------===//
#include "Workspace.h"
#include "oomplan/Driver/Session.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/Runtime/CUDAWorkspaces.h"
#include "oomplan/Runtime/HalfInFloat.h"
#include "oomplan/Support/ByteSize.h"
#include "oomplan/Support/Error.h"
#include "llvm/Support/JSON.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

// The float copies a half step of a kernel that computes in float gets
// on CUDA (HalfInFloat.h): when the node's first input is float16 or
// bfloat16, one per half input and output. The step's reads are the
// node's present inputs in order, its writes its present outputs.
static uint64_t halfCopies(const Schedule &Sched, const ShapeInfo &Shapes,
                           const Step &St, const Node &N) {
  // A tensor's counted type: its own, else its graph value's.
  auto TypeOf = [&](const ScheduleTensor &T) {
    if (T.Type != ElementType::Undefined || T.Value == NoId ||
        T.Value >= Shapes.Values.size())
      return T.Type;
    return Shapes.Values[T.Value].Type;
  };
  if (!runtime::cuda::halfInFloat(N.OpType) || N.Inputs.empty() ||
      N.Inputs[0] == NoId || St.Reads.empty() ||
      !runtime::isHalfType(TypeOf(Sched.Tensors[St.Reads[0]])))
    return 0;
  uint64_t Bytes = 0;
  auto Add = [&](ArrayRef<ValueId> Values, ArrayRef<TensorId> Tensors) {
    size_t K = 0;
    for (ValueId V : Values) {
      if (V == NoId || K >= Tensors.size())
        continue;
      const ScheduleTensor &T = Sched.Tensors[Tensors[K++]];
      if (runtime::isHalfType(TypeOf(T)))
        Bytes += runtime::halfCopyBytes(T.SizeBytes / 2);
    }
  };
  Add(N.Inputs, St.Reads);
  Add(N.Outputs, St.Writes);
  return Bytes;
}

// The CUDA recurrent kernel's workspace at these bindings: its gates and
// states for X's batch and R's hidden size, and cuBLAS's Hopper size
// (CUDAWorkspaces.h's recurrentWorkspace, which the kernel plans with the
// device's). 0 for operands the kernel would refuse (not 3-D).
static Expected<uint64_t> recurrentBound(const ShapeInfo &Shapes,
                                         ArrayRef<std::optional<int64_t>> B,
                                         const Node &N) {
  if (N.Inputs.size() < 3 || N.Inputs[0] == NoId || N.Inputs[2] == NoId)
    return 0;
  auto X = dimsAt(Shapes, B, N.Inputs[0]);
  if (!X)
    return X.takeError();
  auto R = dimsAt(Shapes, B, N.Inputs[2]);
  if (!R)
    return R.takeError();
  if (X->size() != 3 || R->size() != 3)
    return 0;
  const uint64_t Batch = (*X)[N.getInt("layout", 0) == 1 ? 0 : 1];
  return runtime::cuda::recurrentWorkspace(N.OpType, Batch, (*R)[2],
                                           runtime::cuda::blasWorkspaceFor(9));
}

// MatMulNBits' CUDA workspace at these bindings (CUDAWorkspaces.h's
// nbitsWorkspace): none for up to 8 rows of A, else a tile of W in float and
// cuBLAS's Hopper size.
static Expected<uint64_t> nbitsBound(const ShapeInfo &Shapes,
                                     ArrayRef<std::optional<int64_t>> B,
                                     const Node &N) {
  const int64_t K = N.getInt("K", 0), NOut = N.getInt("N", 0);
  if (N.Inputs.empty() || N.Inputs[0] == NoId || K <= 0 || NOut <= 0)
    return 0;
  auto A = dimsAt(Shapes, B, N.Inputs[0]);
  if (!A)
    return A.takeError();
  uint64_t Elements = 1;
  for (int64_t D : *A)
    Elements = saturatingMul(Elements, uint64_t(D));
  return runtime::cuda::nbitsWorkspace(Elements / uint64_t(K), uint64_t(NOut),
                                       uint64_t(K),
                                       runtime::cuda::blasWorkspaceFor(9));
}

Error driver::installBackend(Session &S) {
  if (!S.Req.Backend)
    return Error::success();
  if (*S.Req.Backend != "cuda")
    return makeInputError("--backend=" + *S.Req.Backend +
                          ": expected cuda (the CPU backend's plan is "
                          "oomplan-run's own)");
  if (S.training())
    return makeInputError("--backend=cuda plans a run of oomplan-run, which "
                          "runs inference plans; drop --train (with --train, "
                          "--runtime says whose kernels to predict)");
  if (StringRef(S.Req.ModelPath).endswith(".csv"))
    return makeInputError("--backend applies to models, not to CSV "
                          "instances of placement");
  std::shared_ptr<BackendRecord> Rec = S.Backend;
  Rec->Cuda = true;
  // The CUDA backend has no OomplanConvDepthwise kernel, so its runs keep
  // the pointwise and depthwise convolutions apart (DriverExecutable.cpp
  // fuses only what the kernel table has): so does the plan of one.
  S.FusedSupported = [Prev = S.FusedSupported](StringRef Op) {
    return Op != fused::ConvDepthwiseOp && (!Prev || Prev(Op));
  };
  S.appendScheduleEdit([=](const Graph &G, const ShapeInfo &Shapes,
                           ArrayRef<std::optional<int64_t>> Bindings,
                           Schedule &Sched) -> Error {
    unsigned Convs = 0, Products = 0, Recurrent = 0, NBitsTiles = 0;
    std::map<std::string, unsigned> HostOps;
    for (Step &St : Sched.Steps) {
      if (St.Kind != StepKind::Compute || St.Node == NoId)
        continue;
      const Node &N = G.Nodes[St.Node];
      if (runtime::cuda::hostStepOp(N.OpType))
        ++HostOps[N.OpType];
      const bool Rec = runtime::cuda::isRecurrent(N.OpType);
      uint64_t Library = runtime::cuda::workspaceBound(N.OpType);
      if (Rec || N.OpType == "MatMulNBits") {
        auto Bytes = Rec ? recurrentBound(Shapes, Bindings, N)
                         : nbitsBound(Shapes, Bindings, N);
        if (!Bytes)
          return Bytes.takeError();
        Library = *Bytes;
      }
      uint64_t Copies = halfCopies(Sched, Shapes, St, N);
      St.ComputesInFloat = Copies > 0;
      uint64_t Bytes = saturatingAdd(Library, Copies);
      uint64_t Scratch = 0;
      if (Bytes == 0)
        continue;
      if (Rec && Library) {
        ++Recurrent;
      } else if (N.OpType == "MatMulNBits" && Library) {
        ++NBitsTiles;
      } else if (Library) { // float copies alone are no library workspace
        bool Conv = N.OpType == "Conv" || N.OpType == "ConvTranspose" ||
                    N.OpType == fused::ConvOp;
        ++(Conv ? Convs : Products);
        Scratch = Library;
      }
      // cuDNN's and cuBLAS's workspace is room at its limit, not traffic;
      // float copies, recurrent gates and dequantized tiles are written
      // and read.
      addWorkspaceWrite(Sched, St, N, Bytes, Scratch);
    }
    // The first plan is the main one; later calls re-plan at other
    // bindings or for a fit's candidates.
    if (!Rec->Recorded) {
      Rec->Recorded = true;
      Rec->Convs = Convs;
      Rec->Products = Products;
      Rec->Recurrent = Recurrent;
      Rec->NBitsTiles = NBitsTiles;
      Rec->HostOps = std::move(HostOps);
    }
    return Error::success();
  });
  return Error::success();
}

void driver::writeBackendJSON(Session &S, json::OStream &J) {
  const BackendRecord &R = *S.Backend;
  if (!R.Cuda) {
    J.attribute("backend", nullptr);
    return;
  }
  J.attributeObject("backend", [&] {
    J.attribute("name", "cuda");
    J.attribute("workspaces", "bounds"); // no GPU asked: each at its limit
    J.attribute("convolutions", int64_t(R.Convs));
    J.attribute("conv_workspace_bytes",
                int64_t(runtime::cuda::ConvWorkspaceLimit));
    J.attribute("products", int64_t(R.Products));
    J.attribute("product_workspace_bytes",
                int64_t(runtime::cuda::blasWorkspaceFor(9)));
    J.attribute("recurrent", int64_t(R.Recurrent));
    J.attribute("nbits_tiles", int64_t(R.NBitsTiles));
    // Steps of ops CUDA has no kernel for, by op: oomplan-run runs them on
    // the host (no device memory; a wait and copies each).
    J.attributeObject("host_steps", [&] {
      for (const auto &[Op, Count] : R.HostOps)
        J.attribute(Op, int64_t(Count));
    });
  });
}

void driver::printBackendSettings(Session &S) {
  const BackendRecord &R = *S.Backend;
  if (!R.Cuda)
    return;
  S.OS << "backend: cuda, library workspaces at the most the backend asks "
          "(no GPU asked): "
       << R.Convs << " convolution" << (R.Convs == 1 ? "" : "s") << " x "
       << formatBytes(runtime::cuda::ConvWorkspaceLimit) << " (cuDNN), "
       << R.Products << " MatMul/Gemm x "
       << formatBytes(runtime::cuda::blasWorkspaceFor(9)) << " (cuBLAS)";
  if (R.Recurrent)
    S.OS << ", " << R.Recurrent << " RNN/GRU/LSTM x their gates and states + "
         << formatBytes(runtime::cuda::blasWorkspaceFor(9)) << " (cuBLAS)";
  if (R.NBitsTiles)
    S.OS << ", " << R.NBitsTiles << " MatMulNBits x a tile of "
         << runtime::cuda::NBitsTileRows << " rows of W in float + "
         << formatBytes(runtime::cuda::blasWorkspaceFor(9))
         << " (cuBLAS; none up to " << runtime::cuda::NBitsGemvRows
         << " rows of A)";
  S.OS << ", each live during its step\n";
  if (R.HostOps.empty())
    return;
  unsigned Steps = 0;
  std::string Ops;
  for (const auto &[Op, Count] : R.HostOps) {
    Steps += Count;
    Ops += (Ops.empty() ? "" : ", ") + Op + " x" + std::to_string(Count);
  }
  S.OS
      << "backend: cuda has no kernel for " << Steps << " step"
      << (Steps == 1 ? "" : "s") << " (" << Ops
      << "): oomplan-run runs them on the host with the CPU kernel, a wait "
         "and copies each, no device memory (oomplan-run --backend=cuda-on-cpu "
         "lists every host step)\n";
}
