//===- GraphBuilder.h - building and checking a Graph ------------*- C++
//-*-===//
//
// Frontends describe values and nodes by name; finish() resolves the names,
// checks that every value used is defined exactly once, orders the nodes
// topologically (keeping the file's order where it is already valid) and
// rejects cycles, naming a node on the cycle.
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_IR_GRAPHBUILDER_H
#define OOMPLAN_IR_GRAPHBUILDER_H

#include "oomplan/IR/Graph.h"
#include "llvm/Support/Error.h"

namespace oomplan {

/// A node before name resolution: inputs and outputs are value names ("" for
/// an omitted optional one).
struct NodeDesc {
  std::string Name, OpType, Domain;
  std::vector<std::string> Inputs, Outputs;
  std::vector<Attribute> Attrs;
  /// Node::Guards by condition name.
  std::vector<std::pair<std::string, bool>> Guards;
  std::shared_ptr<const std::string> SourceNode; ///< Node::SourceNode.
};

/// Type and declared shape of a value, from a graph input, output or
/// value_info entry.
struct ValueDesc {
  std::string Name;
  ElementType Type = ElementType::Undefined;
  bool HasShape = false;
  std::vector<DeclaredDim> Shape;
};

class GraphBuilder {
public:
  /// SourcePath names the model in every error message.
  explicit GraphBuilder(std::string SourcePath);

  /// The symbol called Name, added if new.
  SymbolId getOrAddSymbol(llvm::StringRef Name);

  /// A graph input (not an initializer). Errors on a duplicate name.
  llvm::Error addInput(ValueDesc Desc);
  /// An initializer. When a graph input has the same name (older exporters
  /// list weights as inputs too), the weight wins.
  llvm::Error addWeight(ValueDesc Desc, std::shared_ptr<const TensorData> Data,
                        std::string ExternalLocation);
  void addNode(NodeDesc Desc);
  /// Type and shape the file declares for an intermediate or output value.
  void addValueInfo(ValueDesc Desc);
  void addOutput(ValueDesc Desc);
  void setModelInfo(std::string Name, int64_t IrVersion, std::string Producer,
                    std::vector<OpsetImport> Opsets);

  /// Resolves names and checks the graph; the builder is spent afterwards.
  llvm::Expected<std::unique_ptr<Graph>> finish();
  /// The graph as built so far (no outputs; the value_info given so far
  /// applies), checked as finish() checks it; the builder goes on.
  llvm::Expected<std::unique_ptr<Graph>> snapshot() const;
  /// snapshot()'s graph, kept between calls: the nodes added since the last
  /// call are appended to it when each reads only values defined before it
  /// (an exporter's topological order) and nothing else was added; else it
  /// is made anew. So asking after every few nodes costs time linear in the
  /// nodes added, not in the graph. Valid until the next call.
  llvm::Expected<const Graph *> prefix();

private:
  /// Appends PendingNodes from PrefixNodes on to Prefix; false when one
  /// reads a value not yet defined or defines one twice (snapshot() then
  /// orders or reports it).
  bool appendToPrefix();
  llvm::Error error(const llvm::Twine &Msg) const;
  llvm::Error resolveNodes(std::vector<std::vector<ValueId>> &Ins);
  llvm::Error orderNodes(const std::vector<std::vector<ValueId>> &Ins);

  std::unique_ptr<Graph> G;
  std::vector<NodeDesc> PendingNodes;
  std::vector<std::vector<Guard>> GuardIns;
  std::vector<ValueDesc> ValueInfos;
  std::vector<ValueDesc> PendingOutputs;
  std::unique_ptr<Graph> Prefix;
  /// What Prefix holds: the pending nodes, the builder's values (inputs and
  /// weights) and symbols when it was made or extended.
  size_t PrefixNodes = 0, PrefixBaseValues = 0, PrefixSymbols = 0;
};

} // namespace oomplan

#endif
