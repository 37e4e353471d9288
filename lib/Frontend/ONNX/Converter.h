//===- Converter.h - the ModelProto to Graph converter (internal) -*- C++
//-*-===//
//
// One Converter turns one ModelProto into a GraphBuilder's graph. Its
// methods live in two files: ConvertProto.cpp (values, tensors, attributes,
// nodes) and ConvertIf.cpp (the flattening of If into guarded nodes, with
// the name scopes that flattening needs).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_CONVERTER_H
#define OOMPLAN_LIB_FRONTEND_ONNX_CONVERTER_H

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "oomplan/IR/GraphBuilder.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <map>
#include <string>
#include <utility>
#include <vector>

namespace oomplan {

class Converter {
public:
  Converter(llvm::StringRef Name, std::string &CurrentNode)
      : Name(Name), CurrentNode(CurrentNode), B(Name.str()) {}
  llvm::Expected<std::unique_ptr<Graph>> run(const onnx::ModelProto &M);

private:
  llvm::Error err(const llvm::Twine &Msg) {
    return makeInputError(Name + ": " + Msg);
  }
  llvm::Error unsupported(const llvm::Twine &Msg) {
    return makeUnsupportedError(Name + ": " + Msg);
  }
  llvm::Error overflow(const llvm::Twine &Msg) {
    return makeOverflowError(Name + ": " + Msg);
  }
  llvm::Error convertType(const std::string &What, int32_t Number,
                          ElementType &Out);
  llvm::Error convertDims(const std::string &What,
                          const google::protobuf::RepeatedField<int64_t> &Dims,
                          std::vector<int64_t> &Out);
  llvm::Expected<ValueDesc> convertValueInfo(const onnx::ValueInfoProto &VI,
                                             bool RequireTensor);
  llvm::Expected<std::shared_ptr<TensorData>>
  convertTensor(const std::string &What, const onnx::TensorProto &T,
                std::string *ExternalLocation);
  llvm::Error checkDataLength(const std::string &What,
                              const onnx::TensorProto &T, ElementType Type,
                              uint64_t N);
  llvm::Error extractValues(const onnx::TensorProto &T, TensorData &D);
  llvm::Error convertWeights(const onnx::GraphProto &GP);
  llvm::Error convertNode(const onnx::NodeProto &N, size_t Index);
  llvm::Error checkArity(const onnx::NodeProto &N, const onnx::OpSchema &Schema,
                         const std::string &Where);
  llvm::Expected<Attribute> convertAttr(const onnx::AttributeProto &A,
                                        const std::string &Where);

  // ConvertIf.cpp.
  /// Flattens If node N (described as Where) into B: both branches' nodes,
  /// guarded by its condition, then an OomplanIf node that selects.
  /// Index: N's place in its graph, for the name of an unnamed If.
  llvm::Error convertIf(const onnx::NodeProto &N, size_t Index,
                        const std::string &Where);
  llvm::Error convertBranch(const onnx::GraphProto &Branch,
                            llvm::StringRef Attr, const std::string &Where,
                            const std::string &IfLabel, size_t NumOutputs,
                            std::vector<std::string> &Outs);
  /// The name an unnamed node of the current branch gets (messages name
  /// nodes; a flat index would not say which branch): "<If>/<branch>/#I".
  std::string branchNodeName(size_t Index) const;
  /// Records every name the top-level graph defines, so that no branch
  /// value is renamed onto one of them.
  void reserveTopLevelNames(const onnx::GraphProto &GP);
  /// The flattened graph's name of a value the current scope reads: the
  /// innermost branch that defines it, else the name itself.
  std::string resolve(const std::string &Local) const;
  /// The flattened graph's name for a value the current scope defines: the
  /// name itself at the top level, in a branch the name or, when taken, the
  /// name with a ".N" suffix.
  std::string define(const std::string &Local);
  /// True when the current scope may read Local: a branch around it (or
  /// the current one) defines it, or the top level does.
  bool visible(const std::string &Local) const;
  /// An error naming Where when Local is defined but not visible here (or,
  /// in a branch, not defined at all).
  llvm::Error checkVisible(const std::string &Local, const std::string &Where);

  llvm::StringRef Name;
  std::string &CurrentNode;
  GraphBuilder B;
  std::map<std::string, int64_t> OpsetByDomain;
  /// One map per branch being converted, innermost last: local name to the
  /// flattened graph's name.
  std::vector<llvm::StringMap<std::string>> Scopes;
  /// The conditions of the branches being converted, outermost first: the
  /// guards of every node added now.
  std::vector<std::pair<std::string, bool>> Guards;
  /// " in then_branch of node 'X' (If)" while converting a branch, for
  /// messages.
  std::string ScopeWhere;
  /// "If_3/then_branch" (nested: "If_3/then_branch/If#2/else_branch")
  /// while converting a branch; empty at the top level.
  std::string ScopeName;
  /// Every name of the flattened graph so far, and the top-level graph's
  /// own.
  llvm::StringSet<> Taken, TopLevel;
};

} // namespace oomplan

#endif
