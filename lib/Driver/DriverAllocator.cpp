//===- DriverAllocator.cpp - PyTorch's caching allocator for a plan -------===//
//
// The simulation's inputs are the request's: PYTORCH_CUDA_ALLOC_CONF
// (--cuda-alloc-conf), the device's cuBLAS workspace, the step simulated
// (--step), and each convolution's unfolded input at the plan's bindings
// for cuDNN's workspace rule.
//
//===----------------------------------------------------------------------===//
#include "AllocatorInternal.h"
#include "oomplan/Cost/CostModel.h"
#include "oomplan/Report/CudaLibraries.h"
#include "oomplan/Support/CheckedMath.h"

using namespace llvm;
using namespace oomplan;
using namespace oomplan::driver;

bool driver::reservedDecides(const Session &S) {
  return S.Limit.Decides == DecidingFigure::Reserved;
}

// A convolution's unfolded input: batch x input channels x window x output
// positions, in its element type; 0 where a dim is unknown.
static std::vector<uint64_t> convUnfoldedBytes(const PlanContext &C) {
  ConcreteDims D = evaluateDims(C.G, C.Shapes, C.Bindings);
  std::vector<uint64_t> Out(C.G.Nodes.size(), 0);
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N) {
    const Node &Nd = C.G.Nodes[N];
    if (Nd.OpType != "Conv" || Nd.Inputs.size() < 2 || Nd.Outputs.empty())
      continue;
    ValueId X = Nd.Inputs[0], W = Nd.Inputs[1], Y = Nd.Outputs[0];
    if (X == NoId || W == NoId || Y == NoId || D[X].size() < 3 ||
        D[W].size() != D[X].size() || D[Y].size() != D[X].size())
      continue;
    uint64_t E = std::max(1u, elementBits(C.Shapes.Values[X].Type) / 8);
    uint64_t U =
        saturatingMul(saturatingMul(uint64_t(D[X][0]), E), uint64_t(D[X][1]));
    for (size_t I = 2; I < D[X].size(); ++I)
      U = saturatingMul(U, saturatingMul(uint64_t(D[W][I]), uint64_t(D[Y][I])));
    Out[N] = U;
  }
  return Out;
}

// The convolutions on a graph input (a network's stem on the image): their
// input takes no gradient, so the backward computes only the weight's, on
// the whole unfolded input (CudaLibraries.h). Its size is counted in the
// type the convolution computes in, its output's in the plan: 16 bits
// under a 16-bit --precision (and for each remedy's plan, which keeps the
// request's session).
static void markWeightGradOnly(const PlanContext &C, const Plan &P,
                               report::CudaLibraryConfig &Lib) {
  Lib.ConvWeightGradOnly.assign(C.G.Nodes.size(), false);
  for (NodeId N = 0; N < C.G.Nodes.size(); ++N) {
    const Node &Nd = C.G.Nodes[N];
    if (Nd.OpType != "Conv" || Nd.Inputs.empty() || Nd.Inputs[0] == NoId ||
        Nd.Outputs.empty() || Nd.Outputs[0] == NoId ||
        C.G.Values[Nd.Inputs[0]].Kind != ValueKind::GraphInput)
      continue;
    Lib.ConvWeightGradOnly[N] = true;
    ValueId Y = Nd.Outputs[0];
    bool Sixteen = Y < P.Sched.Tensors.size() &&
                   elementBits(P.Sched.Tensors[Y].Type) == 16 &&
                   elementBits(C.Shapes.Values[Nd.Inputs[0]].Type) == 32;
    if (Sixteen)
      Lib.ConvUnfoldedBytes[N] /= 2;
  }
}

static std::vector<report::LibraryAllocation>
libraries(const Session &S, const PlanContext &C, const Plan &P) {
  report::CudaLibraryConfig Lib;
  Lib.CublasWorkspaceBytes = S.Device.CublasWorkspaceBytes;
  Lib.ConvUnfoldedBytes = convUnfoldedBytes(C);
  markWeightGradOnly(C, P, Lib);
  return report::pytorchCudaLibraryAllocations(P, Lib);
}

// Steady state: the first step, then the one measured.
static unsigned iterations(const Session &S) {
  return S.Train.Step == TrainStep::First ? 1 : 2;
}

Error driver::setRuntimeReserved(const Session &S, const PlanContext &C,
                                 Plan &P) {
  if (!reservedDecides(S))
    return Error::success();
  auto Conf =
      report::parseCudaAllocConf(S.Req.Train.CudaAllocConf.value_or(""));
  if (!Conf)
    return Conf.takeError();
  std::vector<report::AllocEvent> Events =
      report::allocationEvents(P, iterations(S), libraries(S, C, P));
  report::AllocatorResult Free =
      report::simulateCachingAllocator(Events, *Conf);
  // Under a cap (a smaller GPU, set_per_process_memory_fraction) PyTorch
  // releases its free cached segments when a cudaMalloc would pass it and
  // retries: a step runs in less than its uncapped max_memory_reserved.
  // The figure that decides is the smallest cap it runs under, found by
  // bisection between the peak allocated (no cap runs below it) and the
  // uncapped reserved (which always runs), to 2 MiB, PyTorch's segment
  // granularity.
  uint64_t Lo = Free.PeakAllocated, Hi = Free.PeakReserved;
  while (Hi > Lo && Hi - Lo > (2u << 20)) {
    uint64_t Mid = Lo + (Hi - Lo) / 2;
    if (report::simulateCachingAllocator(Events, *Conf, Mid).OOMEvent)
      Lo = Mid;
    else
      Hi = Mid;
  }
  // The simulation packs a capped run more tightly than PyTorch does: on the
  // H200, resnet50 under a 24 GiB cap ran out at batch 290, where the
  // simulation still ran at 291 with 0.8% of the cap to spare. Two percent
  // of the peak allocated above it is kept as the cap's own fragmentation
  // (the largest batch then lands at 286 there).
  uint64_t Margin = Free.PeakAllocated / 50;
  P.RuntimeReservedBytes =
      std::max(Hi, saturatingAdd(Free.PeakAllocated, Margin));
  return Error::success();
}

Expected<std::optional<report::AllocatorReport>>
driver::simulateAllocator(const Session &S, const PlanContext &C,
                          const Plan &P) {
  if (!reservedDecides(S))
    return std::nullopt;
  std::string Text = S.Req.Train.CudaAllocConf.value_or("");
  auto Conf = report::parseCudaAllocConf(Text);
  if (!Conf)
    return Conf.takeError();
  report::AllocatorReport A = report::buildAllocatorReport(
      P, *Conf, Text, iterations(S), P.Limit, libraries(S, C, P));
  return std::optional<report::AllocatorReport>(std::move(A));
}
