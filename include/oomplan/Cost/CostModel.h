//===- CostModel.h - predicted time of every schedule step ------*- C++ -*-===//
//
// A roofline model: a step takes max(FLOPs / peak FLOP/s, bytes moved /
// memory bandwidth), the peaks scaled by what the device's kernels reach
// (DeviceProfile's efficiencies), and at least the device's kernel floor;
// shape arithmetic computed on the host takes none. FLOPs come from the
// node's shapes at the bound symbols (2*M*N*K for a matmul,
// 2*Cout*Hout*Wout*Cin/group*kh*kw per image for a convolution, a few per
// element for normalisations, one per element for elementwise ops); bytes
// are what the step reads and writes. Backward steps
// of matmuls and convolutions cost twice the forward FLOPs (two products:
// the input's and the weight's gradient); recompute steps cost their forward
// step. Transfers (offload, prefetch) take bytes / host-link bandwidth on
// their own copy engine; whether they delay compute is the transform's
// business (Fit/Simulate.h).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_COST_COSTMODEL_H
#define OOMPLAN_COST_COSTMODEL_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/Cost/DeviceProfile.h"
#include "oomplan/Schedule/Schedule.h"
#include <optional>
#include <vector>

namespace oomplan {

/// Every value's dims at the bound symbols, indexed by ValueId; empty for a
/// value whose dims cannot be evaluated (unknown or unbound).
using ConcreteDims = std::vector<std::vector<int64_t>>;

ConcreteDims evaluateDims(const Graph &G, const ShapeInfo &Shapes,
                          llvm::ArrayRef<std::optional<int64_t>> Bindings);

/// Floating-point operations of one forward run of node N.
double nodeFlops(const Graph &G, const ConcreteDims &Dims, NodeId N);

/// Per node: shape arithmetic a GPU runtime computes on the host, not on
/// the device (every input a small constant or weight, the dims of a
/// tensor, or another such value; every output at most 512 bytes).
/// lib/Cost/HostShapeSteps.cpp.
std::vector<bool> hostShapeNodes(const Graph &G, const ConcreteDims &Dims);

/// True for ops whose cost is dominated by FLOPs (MatMul, Gemm, Conv,
/// ConvTranspose, Einsum): the ones the chooser avoids recomputing.
bool isComputeIntensiveOp(llvm::StringRef OpType);

struct CostOptions {
  /// Use tensor-core TF32 for fp32 matmuls and convolutions (PyTorch's
  /// torch.backends.cuda.matmul.allow_tf32).
  bool TF32 = false;
  /// Arithmetic precision of every step; unset: the type of what each step
  /// writes (so a training schedule under --precision=bf16-mixed computes
  /// its forward and backward products in bf16, its optimizer step in fp32).
  std::optional<ElementType> ComputeType;
};

class CostModel {
public:
  CostModel(const Graph &G, ConcreteDims Dims, DeviceProfile Device,
            CostOptions Opts = {});

  /// Predicted seconds of step St of S on the compute stream; 0 for views
  /// and for Offload/Prefetch (they run on the copy engine).
  double stepSeconds(const Schedule &S, const Step &St) const;
  /// stepSeconds of every step.
  std::vector<double> stepTimes(const Schedule &S) const;
  /// Seconds to move Bytes over the host link, one direction.
  double transferSeconds(uint64_t Bytes) const;
  /// Peak FLOP/s an op of node N runs at, in its output's precision.
  double peakFor(NodeId N) const;
  /// The precision step St computes in (see CostOptions::ComputeType;
  /// float for a step on float copies, Step::ComputesInFloat).
  ElementType stepType(const Schedule &S, const Step &St) const;
  const DeviceProfile &device() const { return Device; }
  const Graph &graph() const { return G; }

private:
  /// Peak FLOP/s of node N's op computing in type T.
  double peakAt(NodeId N, ElementType T) const;
  /// What node N's kernels reach against the roofline the efficiencies
  /// give: DeviceProfile::ConvEfficiency for a convolution (the op table's
  /// Conv FLOPs class), GroupedConvEfficiency when group > 1,
  /// AttentionEfficiency for the fused attention, else 1.
  double classEfficiency(NodeId N) const;
  /// Bytes of the pass after the product that adds a Conv's bias or
  /// applies a fused op's epilogue (OomplanConv, OomplanMatMul): its output
  /// read and written; 0 for other steps and for backward ones.
  double epilogueBytes(const Schedule &S, const Step &St) const;

  const Graph &G;
  ConcreteDims Dims;
  DeviceProfile Device;
  CostOptions Opts;
  std::vector<double> FlopsOf; ///< Per node, forward.
  std::vector<bool> HostShape; ///< Per node: hostShapeNodes().
};

} // namespace oomplan

#endif
