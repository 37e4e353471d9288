//===- ConvertScan.cpp - Scan unrolled into the flat graph ----------------===//
//
// Scan (opset 9 on) is a loop over slices: iteration t reads slice t of
// each scan input along its axis (from the end when its direction is 1),
// carries its state values, and stacks its scan outputs along their axes
// (in reverse for direction 1). Like Loop (ConvertLoop.cpp), it is
// unrolled: the body once per iteration in a scope of its own, each scan
// slice a Gather with a constant index (which drops the axis, as the body
// expects), each scan output the iterations' values unsqueezed and
// concatenated. The number of iterations is the scan inputs' length, which
// must be known when importing: a declared dim of a top-level graph input
// (the runtime checks inputs against it) or an initializer's dim. Opset 8's
// Scan (a batch axis and sequence_lens) is refused.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"
#include <algorithm>

using namespace oomplan;

static std::vector<int64_t> intsAttrOf(const onnx::NodeProto &N,
                                       llvm::StringRef Name, size_t Count,
                                       int64_t Default) {
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == Name) {
      std::vector<int64_t> V(A.ints().begin(), A.ints().end());
      V.resize(std::max(V.size(), Count), Default);
      return V;
    }
  return std::vector<int64_t>(Count, Default);
}

llvm::Error Converter::convertScan(const onnx::NodeProto &N, size_t Index,
                                   const std::string &Where) {
  if (defaultOpset() < 9)
    return unsupported(Where + ": unsupported: Scan before opset 9 (a batch "
                               "axis and sequence_lens); re-export at opset 9 "
                               "or later");
  std::string Label = !N.name().empty() || !Scopes.empty()
                          ? nodeName(N, Index)
                          : "Scan#" + std::to_string(Index);
  const onnx::GraphProto *Body = nullptr;
  int64_t NumScanIn = -1;
  for (const onnx::AttributeProto &A : N.attribute()) {
    if (A.name() == "body" && A.type() == onnx::AttributeProto::GRAPH)
      Body = &A.g();
    if (A.name() == "num_scan_inputs")
      NumScanIn = A.i();
  }
  if (!Body || NumScanIn < 1 || NumScanIn > N.input_size())
    return err(Where +
               ": needs the graph attribute 'body' and "
               "'num_scan_inputs' between 1 and its " +
               llvm::Twine(N.input_size()) + " inputs");
  size_t M = static_cast<size_t>(NumScanIn);
  size_t NumState = N.input_size() - M;
  if (size_t(Body->input_size()) != NumState + M ||
      size_t(Body->output_size()) < NumState ||
      N.output_size() != Body->output_size())
    return err(Where + ": its body takes " + llvm::Twine(Body->input_size()) +
               " inputs and returns " + llvm::Twine(Body->output_size()) +
               "; with " + llvm::Twine(NumState) + " state values, " +
               llvm::Twine(M) + " scan inputs and " +
               llvm::Twine(N.output_size()) + " outputs it needs " +
               llvm::Twine(NumState + M) + " and " +
               llvm::Twine(N.output_size()));
  size_t K = N.output_size() - NumState;
  std::vector<int64_t> InAxes = intsAttrOf(N, "scan_input_axes", M, 0);
  std::vector<int64_t> InDirs = intsAttrOf(N, "scan_input_directions", M, 0);
  std::vector<int64_t> OutAxes = intsAttrOf(N, "scan_output_axes", K, 0);
  std::vector<int64_t> OutDirs = intsAttrOf(N, "scan_output_directions", K, 0);

  std::vector<std::string> In(N.input_size());
  for (int I = 0; I < N.input_size(); ++I) {
    if (N.input(I).empty())
      return err(Where + ": input " + llvm::Twine(I) + " is empty");
    if (llvm::Error E = readInput(N, I, Where, In[I]))
      return E;
  }
  // The length: every scan input's dim along its axis, where known.
  int64_t Length = -1;
  for (size_t J = 0; J < M; ++J) {
    std::vector<int64_t> Dims = dimsOf(In[NumState + J]);
    if (Dims.empty())
      continue;
    int64_t Rank = Dims.size();
    int64_t A = InAxes[J] < 0 ? InAxes[J] + Rank : InAxes[J];
    if (A < 0 || A >= Rank)
      return err(Where + ": scan_input_axes " + llvm::Twine(InAxes[J]) +
                 " is out of range for scan input '" + N.input(NumState + J) +
                 "' of rank " + llvm::Twine(Rank));
    InAxes[J] = A;
    int64_t L = Dims[A];
    if (L < 0)
      continue;
    if (Length >= 0 && L != Length)
      return err(Where + ": its scan inputs have lengths " +
                 llvm::Twine(Length) + " and " + llvm::Twine(L));
    Length = L;
  }
  if (Length < 0)
    return unsupported(
        Where +
        ": unsupported: the length of its scan inputs is not known "
        "when importing (a graph input's declared dim, an "
        "initializer's, or a dim the shape pass finds constant says "
        "it); oomplan plans a Scan by unrolling it" +
        prefixFailure());
  uint64_t BodySize = std::max(1, Body->node_size());
  if (uint64_t(Length) > (MaxUnrolledNodes - UnrolledNodes) / BodySize)
    return unsupported(Where + ": unsupported: unrolling its " +
                       llvm::Twine(Length) + " iterations of " +
                       llvm::Twine(BodySize) + " nodes would add more than " +
                       llvm::Twine(MaxUnrolledNodes) +
                       " nodes (all Loops of the model together)");

  std::vector<std::string> State(In.begin(), In.begin() + NumState);
  std::vector<std::vector<std::string>> Scans(K);
  for (int64_t T = 0; T < Length; ++T) {
    std::vector<std::string> Outs;
    auto Bind = [&](llvm::StringMap<std::string> &Scope) {
      for (size_t J = 0; J < NumState; ++J)
        if (!Body->input(J).name().empty())
          Scope[Body->input(J).name()] = State[J];
      for (size_t J = 0; J < M; ++J) {
        int64_t At = InDirs[J] ? Length - 1 - T : T;
        std::string Base = ScopeName + "/slice#" + std::to_string(J);
        NodeDesc D;
        D.Name = Base;
        D.OpType = "Gather";
        D.Inputs = {In[NumState + J],
                    addConstant(Base + "/index", ElementType::Int64, {}, {At})};
        D.Attrs.push_back(intAttr("axis", InAxes[J]));
        D.Outputs.push_back(freshName(Base + "_output"));
        Scope[Body->input(NumState + J).name()] = D.Outputs[0];
        addNode(std::move(D));
      }
    };
    if (llvm::Error E = convertIteration(*Body, Label, Where, T, Bind, Outs))
      return E;
    for (size_t J = 0; J < NumState; ++J)
      State[J] = Outs[J];
    for (size_t J = 0; J < K; ++J)
      Scans[J].push_back(Outs[NumState + J]);
  }
  CurrentNode = Where;
  for (size_t J = 0; J < NumState; ++J)
    if (!N.output(J).empty())
      defineResult(N.output(J), State[J],
                   Label + "/state_final#" + std::to_string(J));
  for (size_t J = 0; J < K; ++J) {
    const std::string &Out = N.output(NumState + J);
    if (Out.empty())
      continue;
    if (Scans[J].empty())
      return unsupported(Where +
                         ": unsupported: its scan inputs are empty, "
                         "so the shape of scan output '" +
                         Out + "' is not known");
    if (OutDirs[J])
      std::reverse(Scans[J].begin(), Scans[J].end());
    stackAlong(Scans[J], OutAxes[J], Label + "/scan#" + std::to_string(J),
               define(Out));
  }
  return llvm::Error::success();
}
