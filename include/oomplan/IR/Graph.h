//===- Graph.h - the oomplan graph IR ---------------------------*- C++ -*-===//
//
// The graph every analysis reads: nodes in a valid topological order, values
// with stable ids, weights as their own kind of value, and the table of
// symbols (ONNX dim_params). A Graph is immutable after import: transforms edit
// a Schedule, never the Graph. Only GraphBuilder creates one, and it checks
// that every use is defined exactly once and that there is no cycle.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_GRAPH_H
#define OOMPLAN_IR_GRAPH_H

#include "oomplan/IR/ElementType.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringRef.h"
#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <vector>

namespace oomplan {

using ValueId = uint32_t;
using NodeId = uint32_t;
using SymbolId = uint32_t;
/// Marks an omitted optional input (ONNX's empty name) or "no producer".
constexpr uint32_t NoId = UINT32_MAX;

/// Largest dimension the importer accepts. No real tensor has a dimension of
/// 2^48 elements; larger numbers are corrupt files and would overflow sizes.
constexpr int64_t MaxDimSize = int64_t(1) << 48;

/// A dimension as the model file declares it.
struct DeclaredDim {
  enum class Kind : uint8_t { Static, Symbol, Unknown };
  Kind K = Kind::Unknown;
  int64_t Size = 0;       ///< Valid when K == Static; 0 <= Size <= MaxDimSize.
  SymbolId Symbol = NoId; ///< Valid when K == Symbol: index in Graph::Symbols.

  static DeclaredDim fixed(int64_t S) { return {Kind::Static, S, NoId}; }
  static DeclaredDim symbol(SymbolId Id) { return {Kind::Symbol, 0, Id}; }
  static DeclaredDim unknown() { return {}; }
};

/// Contents of a small tensor (a Constant, or an initializer of at most
/// MaxKeptElements elements). Integer and bool types fill Ints, floating types
/// fill Floats; shape computations need the integers.
struct TensorData {
  ElementType Type = ElementType::Undefined;
  std::vector<int64_t> Dims;
  std::vector<int64_t> Ints;
  std::vector<double> Floats;
  /// Number of elements (product of Dims; 1 for a scalar).
  uint64_t numElements() const;
};

/// Initializers and constants larger than this keep only dims and type.
constexpr uint64_t MaxKeptElements = 1024;

enum class AttrKind : uint8_t {
  Float,
  Int,
  String,
  Tensor,
  Floats,
  Ints,
  Strings,
  Graph,
  Other
};

/// A node attribute. Graph-valued attributes are not kept: the frontend
/// flattens If into guarded nodes (Node::Guards) and unrolls Loop and Scan.
struct Attribute {
  std::string Name;
  AttrKind Kind = AttrKind::Other;
  double F = 0;
  int64_t I = 0;
  std::string S;
  std::vector<double> Floats;
  std::vector<int64_t> Ints;
  std::vector<std::string> Strings;
  std::shared_ptr<const TensorData> T;
};

enum class ValueKind : uint8_t {
  GraphInput, ///< Fed by the caller.
  Weight,     ///< An initializer: its bytes exist before the first step.
  NodeOutput, ///< Produced by a node.
};

/// A tensor-valued edge of the graph.
struct Value {
  std::string Name;
  ValueKind Kind = ValueKind::NodeOutput;
  ElementType Type = ElementType::Undefined; ///< Undefined when not declared.
  bool HasDeclaredShape = false;  ///< The file gave a rank for this value.
  std::vector<DeclaredDim> Shape; ///< Declared dims, when HasDeclaredShape.
  NodeId Producer = NoId;         ///< For NodeOutput.
  std::vector<NodeId>
      Users; ///< Nodes reading it, in schedule order, once each.
  bool IsGraphOutput = false;
  /// Contents, only for small tensors (see MaxKeptElements); else null.
  std::shared_ptr<const TensorData> Data;
  /// For weights stored outside the model file: the location, relative to the
  /// model's folder. Recorded, never read.
  std::string ExternalLocation;
};

/// An opset import of the model.
struct OpsetImport {
  std::string Domain; ///< "" is the default ONNX domain.
  int64_t Version = 0;
};

/// A condition under which a node runs: the node runs only when the bool
/// scalar Cond equals WhenTrue. The frontend flattens an ONNX If into the
/// outer graph: each branch's nodes carry the If's condition (and those of
/// any If around it), and an OomplanIf node selects the taken branch's
/// results. Planning counts both branches (each guarded node is a step
/// whose buffers are planned); a run skips the steps of the branch not
/// taken.
struct Guard {
  ValueId Cond = NoId;
  bool WhenTrue = true;
};

/// The op that ends a flattened If: inputs (cond, then_1..then_k,
/// else_1..else_k), outputs the If's k results, a copy of the taken
/// branch's.
constexpr llvm::StringLiteral IfSelectOp = "OomplanIf";

/// One operator application.
struct Node {
  std::string Name; ///< May be empty in the file; see Graph::describeNode.
  std::string OpType;
  std::string Domain;
  std::vector<ValueId> Inputs;  ///< NoId for an omitted optional input.
  std::vector<ValueId> Outputs; ///< NoId for an omitted optional output.
  std::vector<Attribute> Attrs;
  /// Empty for an unconditional node; else all must hold for it to run.
  /// The conditions also order the node after their producers and keep them
  /// live until it runs (GraphBuilder, makeDefaultSchedule).
  std::vector<Guard> Guards;
  /// A Constant inside an If branch: its node as the frontend read it
  /// (serialized), so the runtime's weight loader, which finds the
  /// top-level graph's Constants in the file by name, can load one whose
  /// name the flattening changed. Null otherwise.
  std::shared_ptr<const std::string> SourceNode;

  /// The attribute called Name, or null.
  const Attribute *attr(llvm::StringRef AttrName) const;
  int64_t getInt(llvm::StringRef AttrName, int64_t Default) const;
  double getFloat(llvm::StringRef AttrName, double Default) const;
  std::string getString(llvm::StringRef AttrName,
                        llvm::StringRef Default) const;
  /// The ints attribute, or std::nullopt when absent.
  std::optional<std::vector<int64_t>> getInts(llvm::StringRef AttrName) const;
  /// Inputs (NoId for an omitted one) then the guard conditions: every
  /// value the node must wait for.
  std::vector<ValueId> reads() const;
  /// Input I, or NoId when absent or omitted.
  ValueId input(size_t I) const { return I < Inputs.size() ? Inputs[I] : NoId; }
};

/// An imported model. Nodes are in a valid topological order, which is the
/// default schedule.
class Graph {
public:
  std::string Name;
  std::string SourcePath; ///< The file it came from, for error messages.
  int64_t IrVersion = 0;
  std::string ProducerName;
  std::vector<OpsetImport> Opsets;
  std::vector<Node> Nodes;
  std::vector<Value> Values;
  std::vector<ValueId> Inputs;  ///< Graph inputs that are not weights.
  std::vector<ValueId> Outputs; ///< Graph outputs, in file order.
  std::vector<ValueId> Weights; ///< Initializers, in file order.
  std::vector<std::string> Symbols;

  /// The value called Name, or NoId.
  ValueId findValue(llvm::StringRef ValueName) const;
  /// The symbol called Name, or NoId.
  SymbolId findSymbol(llvm::StringRef SymbolName) const;
  /// The default-domain opset version (0 if not imported).
  int64_t defaultOpset() const;
  /// "node 'name' (OpType)", or "node #12 (OpType)" when unnamed.
  std::string describeNode(NodeId Id) const;

private:
  friend class GraphBuilder;
  llvm::StringMap<ValueId> ValueByName;
  llvm::StringMap<SymbolId> SymbolByName;
};

} // namespace oomplan

#endif
