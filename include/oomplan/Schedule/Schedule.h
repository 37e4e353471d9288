//===- Schedule.h - the order of steps and the tensors they touch -*- C++
//-*-===//
//
// Liveness, placement and the executors work on a Schedule, not on the Graph:
// transforms (training's backward pass, recompute, offload, reordering) add or
// move steps and add tensors without touching the immutable Graph. The first
// tensors of a schedule built from a graph are its values, in ValueId order;
// transforms append synthetic tensors (gradients, recomputed copies) after
// them.
//
// Host memory and re-materialisation are part of this IR although only the
// fit transforms (Fit/) create them: ScheduleTensor::HostHome, Step::OnHost
// and the Recompute, Offload and Prefetch step kinds. They stay here because
// the layers below Fit must read them: liveness starts a host-home tensor's
// buffer at its Prefetch, the schedule verifier (ScheduleVerifier.h) checks
// host-resident reads and re-writes, the cost model prices host steps and
// copies, and the executors will run them.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_SCHEDULE_SCHEDULE_H
#define OOMPLAN_SCHEDULE_SCHEDULE_H

#include "oomplan/Analysis/SymExpr.h"
#include "oomplan/IR/Graph.h"
#include "llvm/ADT/ArrayRef.h"
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {

using TensorId = uint32_t;

/// Memory class of a tensor, as the report breaks memory down.
enum class TensorKind : uint8_t {
  Weight,         ///< Initializer: resident for the whole run.
  Constant,       ///< Output of a Constant node: folded at import, resident.
  GraphInput,     ///< Fed by the caller.
  GraphOutput,    ///< Returned to the caller: live until the end.
  Activation,     ///< Intermediate: the arena's business.
  Gradient,       ///< Training: gradient of an activation or weight.
  OptimizerState, ///< Training: optimizer moments and master weights.
};

/// Lower-case name ("weight", "activation", ...).
llvm::StringRef tensorKindName(TensorKind K);

struct ScheduleTensor {
  std::string Name;
  ValueId Value = NoId; ///< The graph value, or NoId for synthetic tensors.
  uint64_t SizeBytes = 0;
  /// Element type of the bytes counted; Undefined: the graph value's type.
  /// Set where a transform stores a value in another type (16-bit copies
  /// under mixed precision, a mask kept in its input's type), so reports
  /// print the type that was counted and costs use that precision.
  ElementType Type = ElementType::Undefined;
  TensorKind Kind = TensorKind::Activation;
  /// Returned to the caller: a graph output, also when Kind says otherwise
  /// (a graph input or weight listed as an output). Lives to the end.
  bool IsGraphOutput = false;
  /// The tensor's home copy is in host memory (a streamed weight, offloaded
  /// state): on the device it is an arena buffer from the Prefetch step that
  /// writes it to its last use. Kind is then Activation (Fit/).
  bool HostHome = false;
  /// Of SizeBytes, room a kernel may use (cuDNN's and cuBLAS's workspace
  /// at its limit, the fused attention's scratch) rather than bytes a step
  /// streams through memory: the plan places all of SizeBytes, the cost
  /// model moves the rest.
  uint64_t ScratchBytes = 0;
  /// SizeBytes as a formula of the model's symbols, set where a transform
  /// computes a synthetic tensor's size from the bound dims (a recurrent
  /// layer's saved states, a loss's fp32 copy): the number alone would make
  /// the report's formulas constant in batch and sequence. Unset: the size
  /// follows the graph value the tensor describes (Plan/TensorInfo.h).
  std::optional<SymExpr> SizeFormula;
};

enum class StepKind : uint8_t {
  Compute,
  Recompute,
  Offload,
  Prefetch,
  Backward,
  Optimizer
};

/// One step of the schedule; steps run in order, one per index.
struct Step {
  StepKind Kind = StepKind::Compute;
  NodeId Node = NoId;          ///< The graph node it runs, if any.
  std::string Op;              ///< Op type, for reports.
  std::vector<TensorId> Reads; ///< Omitted optional inputs are left out.
  std::vector<TensorId> Writes;
  /// Writes[0] is a view of Reads[ViewOf] (same bytes); -1 if not a view.
  int ViewOf = -1;
  /// Writes[0] may reuse the bytes of any read that dies here (elementwise).
  bool MayWriteInPlace = false;
  /// With MayWriteInPlace: the index in Reads of the only read Writes[0]
  /// may reuse (a fused conv's residual, OpInfo::InPlaceInput), or -1 for
  /// any read of its size.
  int InPlaceRead = -1;
  /// Runs on the host CPU, not the device (an optimizer step with its state
  /// on the host, Fit/OptimizerOffload.h): it reads host-home tensors only
  /// and costs its bytes over the host's memory bandwidth.
  bool OnHost = false;
  /// Computes on float copies of its 16-bit operands (the CUDA backend's
  /// HalfInFloat.h: a convolution, a normalisation): it runs at the FP32
  /// peak whatever type it writes.
  bool ComputesInFloat = false;
};

struct Schedule {
  std::vector<ScheduleTensor> Tensors;
  std::vector<Step> Steps;
};

/// True for ops whose first output is a view of their first input: the op
/// table's AliasClass View (Reshape, Flatten, ...), and ViewInInference
/// (Dropout) when N does not run in training mode.
bool isViewOp(const Graph &G, const Node &N);

/// True for elementwise ops that may write their output over an input (the
/// op table's AliasClass InPlace).
bool isElementwiseOp(llvm::StringRef OpType);

/// The model's node order as a schedule: step I runs node I. ValueBytes gives
/// every value's size in bytes, indexed by ValueId.
Schedule makeDefaultSchedule(const Graph &G,
                             llvm::ArrayRef<uint64_t> ValueBytes);

} // namespace oomplan

#endif
