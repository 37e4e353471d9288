//===- Layers.h - transformer layers found in a graph -----------*- C++ -*-===//
//
// Tensor and pipeline parallelism split a model by its repeated layers, so
// the multi-device planner first finds them in the graph itself: the nodes
// that read a trainable weight, each signed by op type and weight dims, form
// a sequence whose longest periodic run is the stack of identical blocks.
// Within each block Megatron-LM's rules say which values a tensor-parallel
// group splits: a weight MatMul whose input is whole is column-parallel (its
// output is split by T), one whose input is split is row-parallel (its output
// is whole again after the all-reduce), and any other op's output is split
// when an input is. The attention core (the scores' MatMul through the
// Dropout of the probabilities) is what selective recompute re-runs.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_PARALLEL_LAYERS_H
#define OOMPLAN_PARALLEL_LAYERS_H

#include "oomplan/Analysis/ShapeInference.h"
#include "oomplan/IR/Graph.h"
#include <string>
#include <vector>

namespace oomplan {
namespace parallel {

/// Where a node sits: before the first block, in block I, or after the last.
constexpr int Prologue = -1;
constexpr int Epilogue = -2;

struct LayerStructure {
  bool Found = false;
  /// Why no stack of repeated blocks was found (when !Found).
  std::string Why;
  unsigned NumBlocks = 0;
  /// Weight-reading nodes per block (the period found).
  unsigned WeightNodesPerBlock = 0;
  /// Per node: its block, Prologue or Epilogue.
  std::vector<int> BlockOfNode;
  /// Per value: split by T under tensor parallelism (Megatron's rules).
  std::vector<bool> TPSplit;
  /// Per weight value: split by T (column/row linears, their column biases,
  /// the vocabulary-parallel embedding and LM head).
  std::vector<bool> WeightTPSplit;
  /// Per value: on the data path (downstream of an embedding or a weight),
  /// so split along the sequence by sequence parallelism; masks and rotary
  /// tables computed from shapes alone are not.
  std::vector<bool> DataPath;
  /// Per node: part of an attention core (selective recompute re-runs it).
  std::vector<bool> AttentionCore;
  /// Column- and row-parallel weight MatMuls found in the blocks.
  unsigned ColumnLinears = 0, RowLinears = 0;
  /// Per weight value: the node that first reads it (through views).
  std::vector<NodeId> FirstUser;
  /// Elements of the largest single weight (DeepSpeed's largest layer).
  uint64_t LargestWeightElems = 0;
};

/// The repeated blocks of G and Megatron's split of its values. Never fails:
/// a graph without repeated blocks gets Found = false and a reason, and no
/// value is split.
LayerStructure analyzeLayers(const Graph &G, const ShapeInfo &Shapes);

/// The weight W is (through Transpose/Reshape-like views), or NoId.
ValueId weightBehind(const Graph &G, ValueId V);

} // namespace parallel
} // namespace oomplan

#endif
