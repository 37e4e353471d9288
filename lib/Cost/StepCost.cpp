//===- StepCost.cpp - roofline time of a schedule step --------------------===//
//
// time = max(FLOPs / peak, bytes / memory bandwidth). Bytes are the sizes of
// the distinct tensors a step reads and writes (less a library workspace's
// room, ScheduleTensor::ScratchBytes); an optimizer step reads and
// writes back its state, so its reads count twice. The peak is chosen by the
// precision the step computes in: CostOptions::ComputeType when set, else
// the element type of what the step writes (the schedule's tensor type: a
// 16-bit activation or gradient under mixed precision makes its matmul a
// 16-bit tensor-core product), else its node's output type. Products in
// fp32 run at the TF32 peak when CostOptions::TF32 is set; an optimizer step
// (no node) stays fp32, as its update runs on the fp32 master weights.
// The peaks are scaled by the device's measured efficiencies (the FP32
// units' own for a step at the FP32 peak), a convolution's time by its
// kernels' against a product's (grouped ones apart), and a kernel
// step takes at least the device's kernel floor (DeviceProfile.h); shape
// arithmetic that a GPU runtime computes on the host (HostShapeSteps.cpp)
// takes no time. A convolution's bias and a fused op's epilogue (bias,
// activation) run as oomplan-run's CUDA executor runs them, and PyTorch
// eager its bias add and activation: a kernel of its own after the product,
// reading and writing the output again.
//
//===----------------------------------------------------------------------===//
#include "oomplan/Cost/CostModel.h"
#include "oomplan/IR/FusedOps.h"
#include "oomplan/IR/OpTable.h"
#include <algorithm>

using namespace oomplan;

CostModel::CostModel(const Graph &G, ConcreteDims D, DeviceProfile Dev,
                     CostOptions O)
    : G(G), Dims(std::move(D)), Device(std::move(Dev)), Opts(O) {
  FlopsOf.resize(G.Nodes.size());
  for (NodeId N = 0; N < G.Nodes.size(); ++N)
    FlopsOf[N] = nodeFlops(G, Dims, N);
  HostShape = hostShapeNodes(G, this->Dims);
}

// The node's first output type, Float when there is none.
static ElementType nodeType(const Graph &G, NodeId N) {
  if (N < G.Nodes.size() && !G.Nodes[N].Outputs.empty() &&
      G.Nodes[N].Outputs[0] != NoId)
    return G.Values[G.Nodes[N].Outputs[0]].Type;
  return ElementType::Float;
}

double CostModel::peakFor(NodeId N) const {
  return peakAt(N, Opts.ComputeType.value_or(nodeType(G, N)));
}

ElementType CostModel::stepType(const Schedule &S, const Step &St) const {
  if (St.ComputesInFloat) // on float copies of 16-bit operands
    return ElementType::Float;
  if (Opts.ComputeType)
    return *Opts.ComputeType;
  // The step's result: its first write (outputs come before the fp32
  // statistics a normalisation saves).
  if (!St.Writes.empty() && St.Writes[0] < S.Tensors.size() &&
      isFloatingPoint(S.Tensors[St.Writes[0]].Type))
    return S.Tensors[St.Writes[0]].Type;
  return nodeType(G, St.Node);
}

double CostModel::peakAt(NodeId N, ElementType T) const {
  bool Product = N < G.Nodes.size() && isComputeIntensiveOp(G.Nodes[N].OpType);
  switch (T) {
  case ElementType::Float16:
    return Product ? Device.PeakFP16 : Device.PeakFP32;
  case ElementType::BFloat16:
    return Product ? Device.PeakBF16 : Device.PeakFP32;
  default:
    return Product && Opts.TF32 ? Device.PeakTF32 : Device.PeakFP32;
  }
}

static double bytesMoved(const Schedule &S, const Step &St) {
  std::vector<TensorId> Seen;
  double Bytes = 0;
  auto Add = [&](TensorId T, double Times) {
    if (std::find(Seen.begin(), Seen.end(), T) != Seen.end())
      return;
    Seen.push_back(T);
    const ScheduleTensor &Ten = S.Tensors[T];
    Bytes +=
        Times * static_cast<double>(Ten.SizeBytes -
                                    std::min(Ten.ScratchBytes, Ten.SizeBytes));
  };
  double ReadTimes = St.Kind == StepKind::Optimizer ? 2 : 1;
  for (TensorId T : St.Reads)
    Add(T, ReadTimes);
  for (TensorId T : St.Writes)
    Add(T, 1);
  return Bytes;
}

double CostModel::stepSeconds(const Schedule &S, const Step &St) const {
  if (St.ViewOf >= 0 || St.Kind == StepKind::Offload ||
      St.Kind == StepKind::Prefetch)
    return 0;
  // The host is memory-bound on an optimizer update (a few FLOPs a byte).
  if (St.OnHost)
    return Device.HostMemBandwidth > 0
               ? bytesMoved(S, St) / Device.HostMemBandwidth
               : 0;
  // An op whose output is folded at import (Constant) moves no bytes: the
  // op table's bytes column.
  if (St.Node != NoId && St.Node < G.Nodes.size())
    if (const ops::OpInfo *Op = ops::lookupOp(G.Nodes[St.Node].OpType))
      if (Op->Cost.Bytes == ops::BytesClass::None)
        return 0;
  // Shape arithmetic runs on the host, once (HostShapeSteps.cpp).
  if (St.Node != NoId && St.Node < HostShape.size() && HostShape[St.Node] &&
      St.Kind != StepKind::Backward)
    return 0;
  double Flops = 0;
  if (St.Node != NoId && St.Node < FlopsOf.size()) {
    Flops = FlopsOf[St.Node];
    // Backward of a product computes two products (dX and dW); of other ops,
    // about the forward's work again.
    if (St.Kind == StepKind::Backward)
      Flops *= isComputeIntensiveOp(G.Nodes[St.Node].OpType) ? 2 : 1;
  } else if (St.Kind == StepKind::Optimizer) {
    Flops = bytesMoved(S, St) / 4 * 2; // a few FLOPs per fp32 element
  }
  double Peak =
      St.Node != NoId ? peakAt(St.Node, stepType(S, St)) : Device.PeakFP32;
  // A step at the FP32 rate runs on the FP32 units, whose measured
  // efficiency is its own (a device without tensor cores has only these).
  Peak *= Peak == Device.PeakFP32 ? Device.FP32Efficiency
                                  : Device.ComputeEfficiency;
  double Bandwidth = Device.MemBandwidth * Device.MemoryEfficiency;
  double Compute = Peak > 0 ? Flops / Peak : 0;
  double Memory = Bandwidth > 0 ? bytesMoved(S, St) / Bandwidth : 0;
  // The floor is per kernel; an optimizer's per-weight updates are not one
  // kernel each (PyTorch's foreach and fused optimizers batch them).
  double Floor = St.Node != NoId ? Device.KernelSeconds : 0;
  double Seconds =
      std::max(std::max(Compute, Memory) / classEfficiency(St.Node), Floor);
  // The epilogue is a kernel of its own after the product's.
  if (double Epilogue = epilogueBytes(S, St))
    Seconds += std::max(Bandwidth > 0 ? Epilogue / Bandwidth : 0, Floor);
  return Seconds;
}

double CostModel::epilogueBytes(const Schedule &S, const Step &St) const {
  if ((St.Kind != StepKind::Compute && St.Kind != StepKind::Recompute) ||
      St.Node == NoId || St.Node >= G.Nodes.size() || St.Writes.empty() ||
      St.Writes[0] >= S.Tensors.size())
    return 0;
  const Node &N = G.Nodes[St.Node];
  bool Pass = N.OpType == fused::ConvOp || N.OpType == fused::MatMulOp ||
              (N.OpType == "Conv" && N.input(2) != NoId);
  return Pass ? 2 * static_cast<double>(S.Tensors[St.Writes[0]].SizeBytes) : 0;
}

double CostModel::classEfficiency(NodeId N) const {
  if (N == NoId || N >= G.Nodes.size())
    return 1;
  const Node &Nd = G.Nodes[N];
  if (Nd.OpType == fused::AttentionOp)
    return Device.AttentionEfficiency;
  const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
  if (!Op || Op->Cost.Flops != ops::FlopsClass::Conv)
    return 1;
  return Nd.getInt("group", 1) > 1 ? Device.GroupedConvEfficiency
                                   : Device.ConvEfficiency;
}

std::vector<double> CostModel::stepTimes(const Schedule &S) const {
  std::vector<double> Out;
  Out.reserve(S.Steps.size());
  for (const Step &St : S.Steps)
    Out.push_back(stepSeconds(S, St));
  return Out;
}

double CostModel::transferSeconds(uint64_t Bytes) const {
  return Device.HostLinkBandwidth > 0
             ? static_cast<double>(Bytes) / Device.HostLinkBandwidth
             : 0;
}
