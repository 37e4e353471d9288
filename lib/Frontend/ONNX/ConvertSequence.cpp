//===- ConvertSequence.cpp - sequences resolved to lists of tensors -------===//
//
// oomplan plans tensors. A sequence whose layout is known when importing
// (how many tensors, which one is where) is only a list of names: exporters
// write such sequences for torch.split and list appends in scripted code
// and in unrolled loops. So the importer keeps each sequence as the list of
// the tensors it holds, and a sequence op becomes what it stands for on
// tensors: SequenceAt an Identity of the element, ConcatFromSequence a
// Concat (with an Unsqueeze of each element for new_axis), SplitToSequence
// a Split, SequenceLength a Constant; SequenceEmpty, SequenceConstruct,
// SequenceInsert and SequenceErase change the list and add no node.
// Positions must be known when importing (ConvertKnown.cpp); a sequence
// that is a graph input or output, or that any other op reads, is refused.
//
//===----------------------------------------------------------------------===//
#include "Converter.h"

using namespace oomplan;

bool Converter::isSequenceOp(llvm::StringRef Op) {
  return Op == "SequenceEmpty" || Op == "SequenceConstruct" ||
         Op == "SequenceInsert" || Op == "SequenceAt" ||
         Op == "SequenceErase" || Op == "SequenceLength" ||
         Op == "ConcatFromSequence" || Op == "SplitToSequence";
}

int64_t Converter::defaultOpset() const {
  auto It = OpsetByDomain.find("");
  return It == OpsetByDomain.end() ? 1 : It->second;
}

std::string Converter::freshName(llvm::StringRef Base) {
  std::string Name = Base.str();
  // The search for a free ".K" resumes where the last one for Base ended:
  // an unrolled Loop defines each body name once per iteration, and
  // starting at 1 each time would be quadratic in the iterations.
  unsigned &K = NextSuffix[Base];
  while (Taken.count(Name))
    Name = Base.str() + "." + std::to_string(++K);
  Taken.insert(Name);
  return Name;
}

llvm::Error Converter::readInput(const onnx::NodeProto &N, int I,
                                 const std::string &Where, std::string &Flat) {
  if (llvm::Error E = checkVisible(N.input(I), Where))
    return E;
  Flat = resolve(N.input(I));
  return llvm::Error::success();
}

void Converter::addIdentity(const std::string &NodeName, const std::string &In,
                            const std::string &Out) {
  NodeDesc D;
  D.Name = NodeName;
  D.OpType = "Identity";
  D.Inputs.push_back(In);
  D.Outputs.push_back(Out);
  addNode(std::move(D));
}

void Converter::defineResult(const std::string &Local, const std::string &Flat,
                             const std::string &NodeName) {
  auto Seq = Sequences.find(Flat);
  if (Seq == Sequences.end()) {
    addIdentity(NodeName, Flat, define(Local));
    return;
  }
  std::vector<std::string> List = Seq->second;
  Sequences[define(Local)] = std::move(List);
}

void Converter::addNode(NodeDesc D) {
  D.Guards = Guards;
  noteKnown(D);
  B.addNode(std::move(D));
}

std::string Converter::addConstant(const std::string &NodeName,
                                   ElementType Type, std::vector<int64_t> Dims,
                                   std::vector<int64_t> Values,
                                   std::string Out) {
  if (Out.empty())
    Out = freshName(NodeName + "_output");
  auto T = std::make_shared<TensorData>();
  T->Type = Type;
  T->Dims = Dims;
  T->Ints = Values;
  // The runtime loads a Constant from its NodeProto (Node::SourceNode):
  // this one is in no file.
  onnx::NodeProto P;
  P.set_op_type("Constant");
  P.add_output(Out);
  onnx::AttributeProto *A = P.add_attribute();
  A->set_name("value");
  A->set_type(onnx::AttributeProto::TENSOR);
  onnx::TensorProto *TP = A->mutable_t();
  TP->set_data_type(Type == ElementType::Bool ? onnx::TensorProto::BOOL
                                              : onnx::TensorProto::INT64);
  for (int64_t Dim : Dims)
    TP->add_dims(Dim);
  for (int64_t V : Values) {
    if (Type == ElementType::Bool)
      TP->add_int32_data(V != 0);
    else
      TP->add_int64_data(V);
  }
  NodeDesc D;
  D.Name = NodeName;
  D.OpType = "Constant";
  D.Outputs.push_back(Out);
  Attribute Value;
  Value.Name = "value";
  Value.Kind = AttrKind::Tensor;
  Value.T = std::move(T);
  D.Attrs.push_back(std::move(Value));
  D.SourceNode = std::make_shared<const std::string>(P.SerializeAsString());
  addNode(std::move(D));
  return Out;
}

std::string Converter::addAxesOp(llvm::StringRef Op, const std::string &In,
                                 int64_t Axis, const std::string &NodeName) {
  NodeDesc D;
  D.Name = NodeName;
  D.OpType = Op.str();
  D.Inputs.push_back(In);
  if (defaultOpset() >= 13) {
    D.Inputs.push_back(
        addConstant(NodeName + "/axes", ElementType::Int64, {1}, {Axis}));
  } else {
    D.Attrs.push_back(intsAttr("axes", {Axis}));
  }
  std::string Out = freshName(NodeName + "_output");
  D.Outputs.push_back(Out);
  addNode(std::move(D));
  return Out;
}

Attribute Converter::intAttr(std::string Name, int64_t V) {
  Attribute A;
  A.Name = std::move(Name);
  A.Kind = AttrKind::Int;
  A.I = V;
  return A;
}

Attribute Converter::intsAttr(std::string Name, std::vector<int64_t> V) {
  Attribute A;
  A.Name = std::move(Name);
  A.Kind = AttrKind::Ints;
  A.Ints = std::move(V);
  return A;
}

static const onnx::AttributeProto *findAttr(const onnx::NodeProto &N,
                                            llvm::StringRef Name) {
  for (const onnx::AttributeProto &A : N.attribute())
    if (A.name() == Name)
      return &A;
  return nullptr;
}

llvm::Error Converter::convertSequenceOp(const onnx::NodeProto &N, size_t Index,
                                         const std::string &Where) {
  llvm::StringRef Op = N.op_type();
  std::string Label = nodeName(N, Index);
  auto Input = [&](int I, std::string &Flat) {
    return readInput(N, I, Where, Flat);
  };

  auto Seq = [&](int I, std::vector<std::string> &List) -> llvm::Error {
    std::string Flat;
    if (llvm::Error E = Input(I, Flat))
      return E;
    auto It = Sequences.find(Flat);
    if (It == Sequences.end())
      return unsupported(Where + ": unsupported: input '" + N.input(I) +
                         "' is not a sequence oomplan knows the layout of "
                         "(one made by SequenceEmpty, SequenceConstruct, "
                         "SequenceInsert or SplitToSequence)");
    List = It->second;
    return llvm::Error::success();
  };
  auto Tensor = [&](int I, std::string &Flat) -> llvm::Error {
    if (llvm::Error E = Input(I, Flat))
      return E;
    if (Sequences.count(Flat))
      return err(Where + ": input '" + N.input(I) +
                 "' is a sequence; a tensor is expected there");
    return llvm::Error::success();
  };
  // Position input I into a sequence of Size tensors: Default when absent;
  // End allows Size (an insert at the back).
  auto Position = [&](int I, int64_t Size, bool End, int64_t Default,
                      int64_t &P) -> llvm::Error {
    if (I >= N.input_size() || N.input(I).empty()) {
      P = Default;
    } else {
      std::string Flat;
      if (llvm::Error E = Tensor(I, Flat))
        return E;
      std::optional<int64_t> K = knownScalar(Flat);
      if (!K)
        return unsupported(
            Where + ": unsupported: position '" + N.input(I) +
            "' is not a constant when importing (oomplan keeps a sequence "
            "only where which tensor is where is known before running)");
      P = *K;
    }
    if (P < -Size || P > (End ? Size : Size - 1))
      return err(Where + ": position " + llvm::Twine(P) +
                 " is out of range for a sequence of " + llvm::Twine(Size) +
                 " tensors");
    if (P < 0)
      P += Size;
    return llvm::Error::success();
  };
  auto DefineSeq = [&](std::vector<std::string> List) {
    if (!N.output(0).empty())
      Sequences[define(N.output(0))] = std::move(List);
    return llvm::Error::success();
  };
  auto Out = [&] {
    return N.output(0).empty() ? freshName(Label + "_output")
                               : define(N.output(0));
  };

  if (Op == "SequenceEmpty")
    return DefineSeq({});
  if (Op == "SequenceConstruct") {
    std::vector<std::string> List(N.input_size());
    for (int I = 0; I < N.input_size(); ++I)
      if (llvm::Error E = Tensor(I, List[I]))
        return E;
    return DefineSeq(std::move(List));
  }
  std::vector<std::string> List;
  if (Op != "SplitToSequence")
    if (llvm::Error E = Seq(0, List))
      return E;
  int64_t Size = static_cast<int64_t>(List.size()), P = 0;
  if (Op == "SequenceInsert") {
    std::string T;
    if (llvm::Error E = Tensor(1, T))
      return E;
    if (llvm::Error E = Position(2, Size, /*End=*/true, Size, P))
      return E;
    List.insert(List.begin() + P, T);
    return DefineSeq(std::move(List));
  }
  if (Op == "SequenceErase") {
    if (Size == 0)
      return err(Where + ": erases from an empty sequence");
    if (llvm::Error E = Position(1, Size, /*End=*/false, Size - 1, P))
      return E;
    List.erase(List.begin() + P);
    return DefineSeq(std::move(List));
  }
  if (Op == "SequenceLength") {
    addConstant(Label, ElementType::Int64, {}, {Size}, Out());
    return llvm::Error::success();
  }
  if (Op == "SequenceAt") {
    if (Size == 0)
      return err(Where + ": reads from an empty sequence");
    if (llvm::Error E = Position(1, Size, /*End=*/false, 0, P))
      return E;
    addIdentity(Label, List[P], Out());
    return llvm::Error::success();
  }
  if (Op == "ConcatFromSequence") {
    const onnx::AttributeProto *Axis = findAttr(N, "axis");
    const onnx::AttributeProto *NewAxis = findAttr(N, "new_axis");
    if (!Axis)
      return err(Where + ": needs the attribute 'axis'");
    if (Size == 0)
      return unsupported(Where + ": unsupported: concatenates an empty "
                                 "sequence, whose shape is not known");
    NodeDesc D;
    D.Name = Label;
    D.OpType = "Concat";
    for (int64_t I = 0; I < Size; ++I)
      D.Inputs.push_back(
          NewAxis && NewAxis->i() != 0
              ? addAxesOp("Unsqueeze", List[I], Axis->i(),
                          Label + "/Unsqueeze#" + std::to_string(I))
              : List[I]);
    D.Attrs.push_back(intAttr("axis", Axis->i()));
    D.Outputs.push_back(Out());
    addNode(std::move(D));
    return llvm::Error::success();
  }
  // SplitToSequence: as many pieces as a constant 1-D split says; a scalar
  // split or none cuts by the input's dim, which a graph input's declared
  // shape gives when importing (the runtime checks inputs against it), or
  // the shape pass over the graph so far when that dim is a constant
  // (torch's repeat_interleave splits a computed value by its dim).
  std::string X, SplitName;
  if (llvm::Error E = Tensor(0, X))
    return E;
  const KnownValue *Split = nullptr;
  if (N.input_size() > 1 && !N.input(1).empty()) {
    if (llvm::Error E = Tensor(1, SplitName))
      return E;
    Split = known(SplitName);
  }
  const onnx::AttributeProto *AxisAttr = findAttr(N, "axis");
  const onnx::AttributeProto *KeepAttr = findAttr(N, "keepdims");
  int64_t Axis = AxisAttr ? AxisAttr->i() : 0;
  bool Squeeze = !Split && KeepAttr && KeepAttr->i() == 0;
  std::vector<int64_t> Sizes;
  if (Split && !Split->Scalar) {
    Sizes = Split->Values;
  } else {
    std::vector<int64_t> Dims = dimsOf(X);
    int64_t Rank = Dims.size();
    int64_t A = Axis < 0 ? Axis + Rank : Axis;
    int64_t Dim = A >= 0 && A < Rank ? Dims[A] : -1;
    int64_t Piece = Split ? Split->Values[0] : 1;
    if (Dim < 0 || Piece <= 0)
      return unsupported(
          Where + ": unsupported: SplitToSequence " +
          (Split ? "with a scalar 'split'" : "without a constant 1-D 'split'") +
          " makes as many tensors as the input's dim, which is not a "
          "constant when importing; oomplan keeps a sequence only where its "
          "length is" +
          prefixFailure());
    for (int64_t Done = 0; Done < Dim; Done += Piece)
      Sizes.push_back(std::min(Piece, Dim - Done));
  }
  NodeDesc D;
  D.Name = Label;
  D.OpType = "Split";
  D.Inputs.push_back(X);
  D.Attrs.push_back(intAttr("axis", Axis));
  if (defaultOpset() >= 13) {
    D.Inputs.push_back(Split && !Split->Scalar
                           ? SplitName
                           : addConstant(Label + "/split", ElementType::Int64,
                                         {static_cast<int64_t>(Sizes.size())},
                                         Sizes));
  } else {
    D.Attrs.push_back(intsAttr("split", Sizes));
  }
  for (size_t I = 0; I < Sizes.size(); ++I)
    D.Outputs.push_back(freshName(Label + "_output_" + std::to_string(I)));
  List = D.Outputs;
  addNode(std::move(D));
  if (Squeeze)
    for (size_t I = 0; I < List.size(); ++I)
      List[I] = addAxesOp("Squeeze", List[I], Axis,
                          Label + "/Squeeze#" + std::to_string(I));
  return DefineSeq(std::move(List));
}
