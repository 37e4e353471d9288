//===- Converter.h - the ModelProto to Graph converter (internal) -*- C++
//-*-===//
//
// One Converter turns one ModelProto into a GraphBuilder's graph. Its
// methods live in seven files: ConvertProto.cpp (values, tensors, attributes,
// nodes), ConvertFunction.cpp (model-local functions inlined), ConvertIf.cpp
// (the flattening of If into guarded nodes, with the name scopes that
// flattening needs), ConvertLoop.cpp and ConvertScan.cpp (Loop and Scan
// unrolled), ConvertSequence.cpp (sequences resolved to lists of tensors) and
// ConvertKnown.cpp (the small integer values known when importing, which
// trip counts, loop conditions and sequence positions need).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_FRONTEND_ONNX_CONVERTER_H
#define OOMPLAN_LIB_FRONTEND_ONNX_CONVERTER_H

#include "onnx/defs/schema.h"
#include "onnx/onnx_pb.h"
#include "oomplan/Frontend/ONNXImporter.h"
#include "oomplan/IR/GraphBuilder.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringMap.h"
#include "llvm/ADT/StringSet.h"
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

namespace oomplan {

struct NewerOpVersion;
class FunctionBody;

class Converter {
public:
  Converter(llvm::StringRef Name, std::string &CurrentNode,
            const ImportOptions &Opts)
      : Name(Name), CurrentNode(CurrentNode), B(Name.str()), Opts(Opts) {}
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
  llvm::Error checkNewerArity(const onnx::NodeProto &N, const NewerOpVersion &V,
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

  // ConvertFunction.cpp.
  /// Indexes the model's functions by domain and name.
  void recordFunctions(const onnx::ModelProto &M);
  /// The model's function Op of Domain, or null.
  const onnx::FunctionProto *findFunction(const std::string &Domain,
                                          const std::string &Op);
  /// Inlines call N (at Index, described as Where) of function F.
  llvm::Error convertCall(const onnx::NodeProto &N,
                          const onnx::FunctionProto &F, size_t Index,
                          const std::string &Where);
  /// The call's attribute that body attribute A refers to (ref_attr_name);
  /// null when the call leaves it out.
  llvm::Expected<const onnx::AttributeProto *>
  referencedAttr(const onnx::AttributeProto &A, const std::string &Where);
  /// N with every attribute it takes by reference replaced by the call's
  /// (dropped when the call leaves it out).
  llvm::Expected<onnx::NodeProto>
  resolveAttributeRefs(const onnx::NodeProto &N, const std::string &Where);

  // StandardFunctions.cpp.
  /// Imports N (at Index, described as Where) as its ONNX function body.
  llvm::Error convertStandardFunction(const onnx::NodeProto &N, size_t Index,
                                      const std::string &Where);
  llvm::Expected<FunctionBody> attentionBody(const onnx::NodeProto &N,
                                             int64_t Opset,
                                             const std::string &Where);
  /// The axes [axis, rank) of a normalization of flat value XFlat by N's
  /// axis attribute (default -1).
  llvm::Expected<std::vector<int64_t>> normAxes(const onnx::NodeProto &N,
                                                const std::string &XFlat,
                                                const std::string &Where);
  /// N's stash_type (default float), checked to be a float type.
  llvm::Expected<int64_t> stashType(const onnx::NodeProto &N,
                                    const std::string &Where);
  /// RMSNormalization, and ONNX Runtime's SimplifiedLayerNormalization
  /// (the same, with an inv_std_var output and models before opset 15).
  llvm::Expected<FunctionBody> rmsNormBody(const onnx::NodeProto &N,
                                           int64_t Opset,
                                           const std::string &Where);
  llvm::Expected<FunctionBody>
  rotaryBody(const onnx::NodeProto &N, int64_t Opset, const std::string &Where);
  FunctionBody swishBody(const onnx::NodeProto &N, int64_t Opset);

  // ContribFunctions.cpp.
  /// Imports ONNX Runtime contrib op N (ContribOps.h, a Function row) as a
  /// body of standard ops.
  llvm::Error convertContribOp(const onnx::NodeProto &N, size_t Index,
                               const std::string &Where);
  llvm::Expected<FunctionBody> skipNormBody(const onnx::NodeProto &N,
                                            int64_t Opset,
                                            const std::string &Where);
  llvm::Expected<FunctionBody> geluBody(const onnx::NodeProto &N, int64_t Opset,
                                        const std::string &Where);
  llvm::Expected<FunctionBody> fusedMatMulBody(const onnx::NodeProto &N,
                                               int64_t Opset,
                                               const std::string &Where);
  // ContribAttention.cpp (and embedLayerNormBody: ContribFunctions.cpp).
  /// The part of an attention body after Q, K and V: scores, mask, causal
  /// frontier, bias, softmax, the values, and Out [B, S, OutWidth].
  struct AttentionTail {
    std::string Q, K, V; ///< [B, N, S, H], [B, N, T, H], [B, N, T, Hv]
    int64_t HeadSize, OutWidth;
    ElementType Type;
    int MaskInput;    ///< the node's input holding the mask
    int64_t MaskRank; ///< 0: none; 1: lengths; 2, 3: raw
    std::string Bias; ///< the attention bias's formal name, or ""
    std::string MaskName = "mask";
  };
  llvm::Error appendAttentionTail(FunctionBody &B, const onnx::NodeProto &N,
                                  const std::string &Where,
                                  const AttentionTail &A);
  /// The rank of N's mask input MaskInput (0 when absent), refusing the
  /// forms the bodies do not read.
  llvm::Expected<int64_t> maskRank(const onnx::NodeProto &N, int MaskInput,
                                   const std::string &InFlat,
                                   const std::string &Where);
  // ContribRotary.cpp.
  llvm::Expected<FunctionBody> contribRotaryBody(const onnx::NodeProto &N,
                                                 int64_t Opset,
                                                 const std::string &Where);
  llvm::Expected<FunctionBody> multiHeadAttentionBody(const onnx::NodeProto &N,
                                                      int64_t Opset,
                                                      const std::string &Where);
  llvm::Expected<FunctionBody> contribAttentionBody(const onnx::NodeProto &N,
                                                    int64_t Opset,
                                                    const std::string &Where);
  llvm::Expected<FunctionBody> embedLayerNormBody(const onnx::NodeProto &N,
                                                  int64_t Opset,
                                                  const std::string &Where);

  // ConvertLoop.cpp.
  /// Unrolls Loop node N: the body's nodes once per iteration, each
  /// iteration a scope of its own, then the outputs (the last carried
  /// values, the scan outputs stacked). Needs the trip count and every
  /// condition known when importing.
  llvm::Error convertLoop(const onnx::NodeProto &N, size_t Index,
                          const std::string &Where);
  /// Converts iteration K of Body (of the Loop or Scan described as Where,
  /// named Label) in a scope of its own: Bind maps the body's inputs to flat
  /// names, Outs gets its outputs'. Counts against MaxUnrolledNodes.
  llvm::Error convertIteration(
      const onnx::GraphProto &Body, const std::string &Label,
      const std::string &Where, uint64_t K,
      llvm::function_ref<void(llvm::StringMap<std::string> &)> Bind,
      std::vector<std::string> &Outs);
  /// Adds Out = Concat of Values each unsqueezed at Axis (nodes named after
  /// Base): the iterations' values stacked on a new axis.
  std::string stackAlong(const std::vector<std::string> &Values, int64_t Axis,
                         const std::string &Base, const std::string &Out);
  // ConvertScan.cpp.
  /// Unrolls Scan node N (opset 9 on) when its scan length is known: a
  /// declared dim of a graph input or an initializer.
  llvm::Error convertScan(const onnx::NodeProto &N, size_t Index,
                          const std::string &Where);
  /// The name of node N (at Index in its graph) in the flat graph: its own
  /// plus the iteration suffix inside an unrolled Loop, or one saying where
  /// it is when it has none.
  std::string nodeName(const onnx::NodeProto &N, size_t Index) const;

  // ConvertSequence.cpp.
  static bool isSequenceOp(llvm::StringRef Op);
  /// Resolves sequence op N into Sequences, adding the tensor nodes it
  /// stands for (Identity for SequenceAt, Concat for ConcatFromSequence,
  /// Split for SplitToSequence, a Constant for SequenceLength).
  llvm::Error convertSequenceOp(const onnx::NodeProto &N, size_t Index,
                                const std::string &Where);
  /// A name nothing in the flat graph has, from Base.
  std::string freshName(llvm::StringRef Base);
  /// Adds a Constant node called NodeName with the given integer or bool
  /// tensor, writing Out (a fresh name when empty); returns its output.
  std::string addConstant(const std::string &NodeName, ElementType Type,
                          std::vector<int64_t> Dims,
                          std::vector<int64_t> Values, std::string Out = "");
  /// Adds Op(In, axes=[Axis]) (Unsqueeze or Squeeze) in the model's
  /// opset's form; returns its output.
  std::string addAxesOp(llvm::StringRef Op, const std::string &In, int64_t Axis,
                        const std::string &NodeName);
  /// Flat = the flat name of input I of N, after checking it is visible.
  llvm::Error readInput(const onnx::NodeProto &N, int I,
                        const std::string &Where, std::string &Flat);
  /// Adds NodeName: Out = Identity(In).
  void addIdentity(const std::string &NodeName, const std::string &In,
                   const std::string &Out);
  /// Defines the Loop or Scan output Local as the last iteration's Flat: the
  /// same list for a sequence, else an Identity called NodeName.
  void defineResult(const std::string &Local, const std::string &Flat,
                    const std::string &NodeName);
  /// Adds D with the current guards, recording what it makes known.
  void addNode(NodeDesc D);
  int64_t defaultOpset() const;
  static Attribute intAttr(std::string Name, int64_t V);
  static Attribute intsAttr(std::string Name, std::vector<int64_t> V);

  // ConvertKnown.cpp.
  /// A 0-d or 1-d integer or bool value the importer knows.
  struct KnownValue {
    std::vector<int64_t> Values;
    bool Scalar = false;
    /// Per element, true where unknown (a Shape's symbolic dims: Values
    /// holds -1 there); empty when every element is known. Only Gather
    /// and Cast see through it; known() hides such values.
    std::vector<bool> Missing;
  };
  /// Records the value of D's output when D is a small integer Constant or
  /// integer arithmetic, a comparison, a cast or a reshape of known values.
  void noteKnown(const NodeDesc &D);
  /// D's value into Known when its inputs are known (evaluating deferred
  /// ones first).
  void evaluate(const NodeDesc &D);
  /// Records the value of a top-level integer initializer.
  void noteKnownWeight(const std::string &Name, const TensorData &T);
  /// Null when not known; evaluates a deferred recipe on first ask.
  const KnownValue *known(const std::string &Flat);
  /// The same, also for values with Missing elements.
  const KnownValue *partial(const std::string &Flat);
  /// The single value of a known one-element value.
  std::optional<int64_t> knownScalar(const std::string &Flat);
  /// The dims of flat value X known when importing (-1 where not a
  /// constant; empty when its rank is unknown): a graph input's declared
  /// ones or an initializer's, else what the importer's DimOracle says of
  /// the graph built so far. One oracle call answers for every value built
  /// before it (PrefixValues), within the budget below.
  std::vector<int64_t> dimsOf(const std::string &X);
  /// The element type of flat value X as the shape pass infers it over the
  /// graph so far; Undefined when it cannot tell (or there is no oracle).
  ElementType typeOf(const std::string &X);
  /// The oracle's answer for X (asking it when X is not cached), or null.
  const PrefixValue *prefixValue(const std::string &X);
  /// For a refusal after dimsOf found nothing: " (the shapes of the graph
  /// before it do not infer: ...)" when the last oracle call failed.
  std::string prefixFailure() const;

  llvm::StringRef Name;
  std::string &CurrentNode;
  GraphBuilder B;
  const ImportOptions &Opts;
  /// The oracle's answers, by flat name.
  std::map<std::string, PrefixValue> PrefixValues;
  /// Each oracle call runs the shape pass over the nodes added since the
  /// last (over the whole graph so far when it cannot go on from there, as
  /// for a graph with If guards): bounded in calls and in nodes inferred
  /// (all calls together), so that a crafted model asking at every node
  /// cannot make the import slow.
  static constexpr unsigned MaxDimQueries = 1 << 16;
  static constexpr uint64_t MaxDimQueryNodes = uint64_t(1) << 22;
  unsigned DimQueries = 0;
  uint64_t DimQueryNodes = 0;
  /// The prefix's values at the last oracle call: the oracle answers only
  /// for the values added since (and the driver's infers only the nodes
  /// added since, IncrementalShapeInference).
  ValueId PrefixValuesAsked = 0;
  /// The last oracle call's error, for refusals.
  std::string PrefixFailure;
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
  /// freshName's last ".K" suffix, by base name.
  llvm::StringMap<unsigned> NextSuffix;
  /// The declared dims of the top-level graph's inputs (-1 where symbolic)
  /// and the dims of its initializers.
  std::map<std::string, std::vector<int64_t>> InputDims;
  /// "@3" inside iteration 3 of an unrolled Loop ("@3@0" nested): named
  /// nodes of a body get it, so that each iteration's nodes have names of
  /// their own.
  std::string NameSuffix;
  /// Body nodes times iterations, all Loops and Scans of a model together:
  /// beyond this an unrolled graph would be slow to plan and read, and the
  /// model is not what unrolling is for.
  static constexpr uint64_t MaxUnrolledNodes = 1 << 17;
  /// Body nodes converted by unrolling so far, all Loops together.
  uint64_t UnrolledNodes = 0;
  /// Values known when importing, by flat name.
  std::map<std::string, KnownValue> Known;
  /// Values that may be known once asked: Shape and Size, and evaluable
  /// nodes reading them (ConvertKnown.cpp), by flat name.
  std::map<std::string, NodeDesc> Deferred;
  /// Sequence values, by flat name: the tensors they hold, in order.
  std::map<std::string, std::vector<std::string>> Sequences;
  /// The model's functions, by (domain, name).
  std::map<std::pair<std::string, std::string>, const onnx::FunctionProto *>
      Functions;
  /// The function calls being inlined, innermost last, with the call's
  /// attributes by name.
  struct CallFrame {
    const onnx::FunctionProto *F;
    std::map<std::string, const onnx::AttributeProto *> Attrs;
  };
  std::vector<CallFrame> Calls;
  static constexpr size_t MaxCallDepth = 64;
};

} // namespace oomplan

#endif
