//===- OpTable.h - one record of facts per operator type --------*- C++ -*-===//
//
// Everything oomplan knows about an ONNX op type lives in one record of one
// table (lib/IR/OpTable.cpp), in the manner of LLVM's hand-written
// instruction info or TVM's per-op attributes: the shape rule, whether the
// output may alias an input, what the op keeps for its backward step, and how
// its cost is counted. The records hold only enums and small descriptors, so
// the table sits in IR, below every layer that reads it; each layer
// interprets its own column (Analysis maps ShapeRuleId to a rule function,
// Schedule reads AliasClass, Transforms reads GradRule, Cost reads OpCost).
// Every column starts "Undecided" and the unit test rejects a record that
// leaves one so: "unknown" and "not differentiable" are written down.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_OPTABLE_H
#define OOMPLAN_IR_OPTABLE_H

#include "llvm/ADT/ArrayRef.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <optional>
#include <vector>

namespace oomplan {
namespace ops {

/// The shape relation of an op's outputs to its inputs. Analysis holds one
/// rule function per id (lib/Analysis/ShapeRules/, one family per file);
/// many ops share one (every activation is SameAsInput).
enum class ShapeRuleId : uint8_t {
  Undecided = 0,
  /// No rule: the shapes the model declares are used, as for an op outside
  /// the table.
  Declared,
  // Elementwise.cpp
  SameAsInput,
  NegOrAbs,
  Identity,
  BoolOfInput,
  Cast,
  CastLike,
  Dropout,
  // Broadcast.cpp
  Broadcast,
  Where,
  PRelu,
  // Normalization.cpp
  BatchNorm,
  LayerNorm,
  InstanceNorm,
  // ShapeOps.cpp
  Shape,
  Size,
  Constant,
  ConstantOfShape,
  Range,
  EyeLike,
  RandomWithShape,
  Multinomial,
  LikeWithDtype,
  // Reshape.cpp
  Reshape,
  Flatten,
  Squeeze,
  Unsqueeze,
  Expand,
  Transpose,
  DepthSpace,
  // Indexing.cpp
  Gather,
  GatherBlockQuantized,
  GatherElements,
  GatherND,
  LikeData,
  Slice,
  Concat,
  Split,
  Tile,
  Pad,
  CenterCropPad,
  OneHot,
  // MatMul.cpp
  MatMul,
  MatMulNBits,
  GroupQueryAttention,
  Gemm,
  Einsum,
  Det,
  FusedMatMul,
  FusedAttention,
  // ConvPool.cpp
  Conv,
  ConvTranspose,
  ConvDepthwise,
  Pool,
  GlobalPool,
  RoiPool,
  MaxUnpool,
  Resize,
  Col2Im,
  // Reduce.cpp, Recurrent.cpp
  Reduce,
  Recurrent,
  // DataDependent.cpp
  NonZero,
  Compress,
  Unique,
  TopK,
  NonMaxSuppression,
  // Misc.cpp
  Quantize,
  Dequantize,
  DynamicQuantize,
  Loss,
  GridSample,
  AffineGrid,
  Window,
  MelWeightMatrix,
  DFT,
  STFT,
  // ControlFlow.cpp
  IfSelect,
};
/// Number of ShapeRuleId values (for arrays indexed by it).
constexpr unsigned NumShapeRuleIds = unsigned(ShapeRuleId::IfSelect) + 1;

/// Whether output 0 may share the bytes of an input.
enum class AliasClass : uint8_t {
  Undecided = 0,
  /// Output 0 is a new tensor.
  None,
  /// Output 0 is a view of input 0 (Reshape, Flatten, Squeeze, ...).
  View,
  /// A view in inference only: Dropout in training mode writes a new tensor
  /// and a mask (Schedule.cpp reads the node's training_mode/is_test).
  ViewInInference,
  /// A view when input 0 is a trainable parameter, a copy otherwise:
  /// Transpose, as PyTorch's weight.t() (its gradient is the weight's).
  ParamView,
  /// Elementwise: output 0 may reuse the bytes of an input that dies here.
  InPlace,
};

/// Tensors an op keeps for its backward step that are not values of the
/// forward graph.
enum class AuxKind : uint8_t {
  None,
  DropoutMask,    ///< Mask of the input's size (width: a training option).
  BatchNormStats, ///< save_mean and save_invstd: two fp32 per channel.
  NormStats,      ///< LayerNorm mean and rstd: two fp32 per normalized row.
  PoolIndices,    ///< MaxPool argmax: one int64 per output element.
  /// GRU, LSTM, RNN: the states of every time step (PyTorch's CPU
  /// recurrence runs cell by cell, and autograd keeps each step's gates,
  /// cell state and hidden state).
  RecurrentStates,
};

/// Bit I stands for input (or output) I; bit 31 for 31 and every one after
/// it (variadic ops: Concat, Sum, OomplanIf), so no shift overflows.
constexpr uint32_t bit(unsigned I) { return uint32_t(1) << (I < 31 ? I : 31); }
constexpr uint32_t AllInputs = ~uint32_t(0);

/// What decides an op's backward step.
enum class GradClass : uint8_t {
  Undecided = 0,
  /// Nobody has written the rule yet: training assumes every input is
  /// differentiable and kept, and warns (lib/Transforms).
  Unknown,
  /// No gradient flows back through the op (Shape, Equal, Ceil, ...).
  NotDifferentiable,
  /// The fields of GradRule say it.
  Rule,
};

/// The saved-tensor rule of an op for training, following PyTorch 1.13's
/// derivatives.yaml (lib/Transforms/SavedTensorRules.h interprets it).
struct GradRule {
  GradClass Class = GradClass::Undecided;
  /// Inputs that can receive a gradient.
  uint32_t DiffInputs = 0;
  /// Inputs kept whenever the node runs a backward step.
  uint32_t SaveAlways = 0;
  /// Inputs 0 and 1 kept only when the other of the two needs a gradient
  /// (products: MatMul, Gemm, Conv, Mul; Div's numerator).
  uint32_t SaveIfPartnerGrad = 0;
  /// Outputs kept (ReLU, Softmax, Sigmoid, Tanh, Exp, Sqrt: the result).
  uint32_t SaveOutputs = 0;
  AuxKind Aux = AuxKind::None;
  /// Inputs whose gradient is the incoming gradient itself (a view, no
  /// bytes) when it has the same size: views, Add, Sub's left operand.
  uint32_t GradViewInputs = 0;
  /// Temporaries of the backward step, in multiples of the bytes of input 0
  /// and of output 0 (measured on PyTorch 1.13's CPU kernels).
  uint8_t ScratchOfInput = 0;
  uint8_t ScratchOfOutput = 0;
  /// Of input 1 (a convolution's weight: oneDNN's backward reorders it and
  /// keeps the copy while it writes dW, after the input and gradient
  /// reorders are freed): the step's temporaries are the larger of this and
  /// the two terms above.
  uint8_t ScratchOfInput1 = 0;
};

/// How one forward run's floating-point operations are counted.
enum class FlopsClass : uint8_t {
  Undecided = 0,
  /// PerElement operations per element of output 0 (0 for data movement:
  /// the roofline's bytes term prices it).
  PerOutputElement,
  /// PerElement operations per element of input 0 (reductions).
  PerInputElement,
  /// 2 * elements(output) * K, K the contracted dim (MatMul, Gemm).
  MatMul,
  /// 2 * elements(output) * Cin/group * kernel (ConvTranspose: per input).
  Conv,
  /// elements(output) * kernel_shape's product (MaxPool, AveragePool).
  PoolWindow,
  /// Attention: per query row, a dot product with each key it attends to
  /// (2 * head size), one with each value row (2 * value width) and the
  /// softmax's few operations per key (OomplanAttention: every key;
  /// GroupQueryAttention: the causal keys of its cache, on average).
  Attention,
};

/// Which bytes a step of the op moves.
enum class BytesClass : uint8_t {
  Undecided = 0,
  /// The distinct tensors it reads and writes.
  ReadsAndWrites,
  /// None: its output is folded at import and resident (Constant).
  None,
};

struct OpCost {
  FlopsClass Flops = FlopsClass::Undecided;
  uint8_t PerElement = 0;
  /// Runs at the tensor-core peak and its backward is two products (MatMul,
  /// Conv, Einsum, ...): the ops a rematerialization avoids recomputing.
  bool ComputeIntensive = false;
  BytesClass Bytes = BytesClass::Undecided;
  /// Rematerialization keeps the output rather than replaying the op:
  /// Constant (resident) and random generators (cheap to keep, and a replay
  /// would need their random state).
  bool NeverRecompute = false;
};

/// Dense number of a record, its index in the table. Executors key their
/// per-backend kernels by it (KernelTable), as LLVM targets key theirs by
/// opcode; the table itself stays constant.
using OpCode = uint16_t;

/// One op type's record.
struct OpInfo {
  const char *Name; ///< ONNX op type (default domain).
  ShapeRuleId Shape = ShapeRuleId::Undecided;
  AliasClass Alias = AliasClass::Undecided;
  GradRule Grad;
  OpCost Cost;
  /// With AliasClass InPlace: the one input output 0 may overwrite (the
  /// residual of OomplanConv), or -1 for any input of its size (elementwise
  /// ops). A fused node must not write over its other inputs, which it still
  /// reads after its first write.
  int8_t InPlaceInput = -1;
};

/// Every record, in table order.
llvm::ArrayRef<OpInfo> allOps();
/// The record of OpType (domain not checked), or null when there is none.
const OpInfo *lookupOp(llvm::StringRef OpType);
/// The record's OpCode (its index in allOps()).
OpCode opCode(const OpInfo &Op);
/// Columns a record leaves Undecided, named ("shape", "alias", "grad",
/// "flops", "bytes"); empty for a complete record.
std::vector<llvm::StringRef> undecidedColumns(const OpInfo &Op);

/// The kernel slot: one backend's kernels (KernelT is a function pointer or
/// a small handle), indexed by OpCode and filled by that backend's executor.
template <typename KernelT> class KernelTable {
public:
  KernelTable() : Kernels(allOps().size()) {}
  void set(OpCode Code, KernelT K) { Kernels[Code] = std::move(K); }
  /// The kernel of Code, or std::nullopt when this backend has none.
  const std::optional<KernelT> &get(OpCode Code) const { return Kernels[Code]; }

private:
  std::vector<std::optional<KernelT>> Kernels;
};

} // namespace ops
} // namespace oomplan

#endif
