//===- TrainingAutocast.cpp - torch.autocast's types in a training step ---===//
//
// The copy of a weight is made once per forward (autocast's cast cache) and
// kept while a backward step reads it; the copy of an fp32 activation, once
// per op, and so the fp32 copy an fp32-list op makes of a 16-bit input. A
// parameter promotes an elementwise op (a layer scale) as any tensor does,
// except the bias add of a product (one F.linear in the module); constants
// (Python scalars) never do, nor the parameters of other ops (a batch norm runs
// in its input's type).
//
//===----------------------------------------------------------------------===//
#include "TrainingAutocast.h"
#include "llvm/ADT/STLExtras.h"
#include <map>

using namespace oomplan;
using namespace oomplan::training;

// Products and convolutions: 16 bits on 16-bit copies of their operands.
static bool autocastLow(llvm::StringRef Op) {
  return Op == "MatMul" || Op == "Gemm" || Op == "Conv" ||
         Op == "ConvTranspose" || Op == "Einsum";
}

// autocast's fp32 list, as ONNX spells its ops.
static bool autocastFP32(llvm::StringRef Op) {
  return Op == "Softmax" || Op == "LogSoftmax" || Op == "LayerNormalization" ||
         Op == "GroupNormalization" || Op == "InstanceNormalization" ||
         Op == "Exp" || Op == "Log" || Op == "Pow" || Op == "ReduceSum" ||
         Op == "ReduceLogSumExp" || Op == "CumSum" || Op == "Reciprocal" ||
         Op == "Softplus" || Op == "ReduceL2" || Op == "LpNormalization";
}

// Which fp32-list ops read an fp32 copy of a 16-bit input. The fp32 policy
// (cached_cast(kFloat, ...)) copies every 16-bit argument, and the op's
// backward keeps the copy where it saves the input: a LayerNorm after a
// 16-bit depthwise convolution (ConvNeXt) keeps its input in fp32. The
// fp32_set_opt_dtype ops pass dtype=float instead: sum and cumsum reduce
// 16-bit data into fp32 without a copy, and softmax and log_softmax copy a
// bf16 input (SoftMax.cpp's toType; fp16 has a half-to-float kernel) but
// keep only their output, so that copy lives for the op alone.
static bool copiesToFP32(llvm::StringRef Op, ElementType Half) {
  if (Op == "ReduceSum" || Op == "CumSum")
    return false;
  if (Op == "Softmax" || Op == "LogSoftmax")
    return Half == ElementType::BFloat16;
  return autocastFP32(Op);
}

namespace {
struct Autocast {
  const Graph &G;
  const ShapeInfo &Shapes;
  llvm::ArrayRef<ValueId> GradRoot;
  ElementType Half;
  Schedule &S;
  std::vector<bool> Low;
  std::map<ValueId, TensorId> WeightCopy;
  std::vector<std::vector<TensorId>> CastOf;

  // The inferred type (the file declares types only for some values).
  ElementType typeOf(ValueId V) const {
    ElementType T = Shapes.Values[V].Type;
    return T == ElementType::Undefined ? G.Values[V].Type : T;
  }
  bool isParam(ValueId V) const {
    return G.Values[V].Kind == ValueKind::Weight ||
           G.Values[GradRoot[V]].Kind == ValueKind::Weight;
  }
  bool producedBy(ValueId V, bool (*Pred)(llvm::StringRef)) const {
    return V != NoId && G.Values[V].Kind == ValueKind::NodeOutput &&
           Pred(G.Nodes[G.Values[V].Producer].OpType);
  }

  // Node N computes on 16-bit copies of its fp32 inputs.
  void addCopies(NodeId N) {
    const Node &Nd = G.Nodes[N];
    CastOf[N].assign(Nd.Inputs.size(), UINT32_MAX);
    for (size_t I = 0; I < Nd.Inputs.size(); ++I) {
      ValueId In = Nd.Inputs[I];
      if (In == NoId || typeOf(In) != ElementType::Float || Low[In])
        continue;
      bool W = isParam(In);
      ValueId Key = W ? GradRoot[In] : In;
      auto It = W ? WeightCopy.find(Key) : WeightCopy.end();
      if (It != WeightCopy.end()) {
        S.Steps[N].Reads.push_back(It->second);
        CastOf[N][I] = It->second;
        continue;
      }
      ScheduleTensor T;
      T.Name = "autocast(" + G.Values[Key].Name + ")";
      T.SizeBytes = (S.Tensors[Key].SizeBytes + 1) / 2;
      T.Kind = TensorKind::Activation;
      T.Type = Half;
      S.Tensors.push_back(std::move(T));
      TensorId Id = static_cast<TensorId>(S.Tensors.size() - 1);
      S.Steps[N].Writes.push_back(Id);
      if (W)
        WeightCopy[Key] = Id;
      CastOf[N][I] = Id;
    }
  }

  // Node N, on autocast's fp32 list, computes on fp32 copies of its 16-bit
  // inputs (copiesToFP32).
  void addWideCopies(NodeId N) {
    const Node &Nd = G.Nodes[N];
    CastOf[N].assign(Nd.Inputs.size(), UINT32_MAX);
    for (size_t I = 0; I < Nd.Inputs.size(); ++I) {
      ValueId In = Nd.Inputs[I];
      if (In == NoId || !Low[In])
        continue;
      ScheduleTensor T;
      T.Name = "autocast(" + G.Values[In].Name + ")";
      T.SizeBytes = S.Tensors[In].SizeBytes * 2;
      T.Kind = TensorKind::Activation;
      T.Type = ElementType::Float;
      S.Tensors.push_back(std::move(T));
      TensorId Id = static_cast<TensorId>(S.Tensors.size() - 1);
      S.Steps[N].Writes.push_back(Id);
      CastOf[N][I] = Id;
    }
  }

  // An op outside both lists: 16 bits when every tensor input that counts
  // is 16-bit.
  bool promotesToLow(const Node &Nd) const {
    bool Elementwise = isElementwiseOp(Nd.OpType);
    bool BiasAdd =
        Nd.OpType == "Add" && llvm::any_of(Nd.Inputs, [&](ValueId In) {
          return producedBy(In, autocastLow);
        });
    bool Any = false, All = true;
    for (ValueId In : Nd.Inputs) {
      if (In == NoId || !isFloatingPoint(typeOf(In)) ||
          (isParam(In) && (!Elementwise || BiasAdd)) ||
          producedBy(In, [](llvm::StringRef Op) { return Op == "Constant"; }))
        continue;
      Any = true;
      All = All && Low[In];
    }
    return Any && All;
  }

  void run() {
    Low.assign(G.Values.size(), false);
    CastOf.assign(G.Nodes.size(), {});
    for (NodeId N = 0; N < G.Nodes.size(); ++N) {
      const Node &Nd = G.Nodes[N];
      bool LowOut = false;
      if (autocastLow(Nd.OpType)) {
        addCopies(N);
        LowOut = true;
      } else if (!autocastFP32(Nd.OpType)) {
        LowOut = promotesToLow(Nd);
      } else if (copiesToFP32(Nd.OpType, Half)) {
        addWideCopies(N);
      }
      if (!LowOut)
        continue;
      for (ValueId O : Nd.Outputs)
        if (O != NoId && typeOf(O) == ElementType::Float) {
          Low[O] = true;
          S.Tensors[O].SizeBytes = (S.Tensors[O].SizeBytes + 1) / 2;
          S.Tensors[O].Type = Half;
        }
    }
    // An op whose output is now wider than its inputs (a 16-bit tensor
    // times an fp32 one) cannot write over either.
    for (Step &St : S.Steps) {
      if (!St.MayWriteInPlace || St.Writes.empty())
        continue;
      uint64_t Out = S.Tensors[St.Writes[0]].SizeBytes;
      if (llvm::none_of(St.Reads, [&](TensorId T) {
            return S.Tensors[T].SizeBytes == Out;
          }))
        St.MayWriteInPlace = false;
    }
  }
};
} // namespace

std::vector<std::vector<TensorId>>
training::applyAutocastTypes(const Graph &G, const ShapeInfo &Shapes,
                             llvm::ArrayRef<ValueId> GradRoot, ElementType Half,
                             Schedule &S) {
  Autocast A{G, Shapes, GradRoot, Half, S, {}, {}, {}};
  A.run();
  return std::move(A.CastOf);
}
