//===- StepShapes.cpp - operands checked against the plan before a kernel -===//
//
// Kernels trust their TensorRefs: a broadcasting Add walks its output and
// reads each input at the broadcast offset, a MatMul reads M*K and K*N
// elements. Planning refuses dims that disagree at the bindings
// (checkDimsAtBindings), but the runtime is the last line: dims that reach
// a kernel come from formulas, from data-dependent sizes the kernels
// reported, from the taken branch of an If. So before each kernel call the
// executor checks what the kernel will touch: every operand fits the
// buffer the plan gave it, and for the ops whose kernels index one operand
// by another's dims (broadcasting, products), the dims agree. A mismatch is
// an error naming the node and the tensor, never a read past a buffer.
//
//===----------------------------------------------------------------------===//
#include "ExecutorImpl.h"
#include "oomplan/IR/OpTable.h"
#include "oomplan/Runtime/Executor.h"
#include "oomplan/Support/Error.h"
#include "llvm/ADT/StringExtras.h"

using namespace oomplan;
using namespace oomplan::runtime;

static std::string dimsStr(llvm::ArrayRef<int64_t> D) {
  std::string S = "[";
  for (size_t I = 0; I < D.size(); ++I)
    S += (I ? "," : "") + std::to_string(D[I]);
  return S + "]";
}

// True when In broadcasts to Out (numpy: right-aligned, each dim equal or 1).
static bool broadcastsTo(llvm::ArrayRef<int64_t> In,
                         llvm::ArrayRef<int64_t> Out) {
  if (In.size() > Out.size())
    return false;
  size_t Lead = Out.size() - In.size();
  for (size_t I = 0; I < In.size(); ++I)
    if (In[I] != 1 && In[I] != Out[Lead + I])
      return false;
  return true;
}

llvm::Error Executor::Impl::checkStepShapes(uint64_t S) const {
  const Step &St = P.Sched.Steps[S];
  const StepCall &C = Calls[S];
  const Node &Nd = G.Nodes[St.Node];
  auto Where = [&](const llvm::Twine &What) -> std::string {
    return (G.SourcePath + ": " + G.describeNode(St.Node) + ": " + What).str();
  };
  auto Name = [&](TensorId T) { return P.Sched.Tensors[T].Name; };
  // Every operand within its planned buffer.
  for (auto [Refs, Ids] :
       {std::make_pair(&C.In, &C.InIds), std::make_pair(&C.Out, &C.OutIds)})
    for (size_t I = 0; I < Refs->size() && I < Ids->size(); ++I) {
      const TensorRef &R = (*Refs)[I];
      TensorId T = (*Ids)[I];
      if (!R.present() || T == NoId)
        continue;
      if (llvm::any_of(R.Dims, [](int64_t D) { return D < 0; }))
        return makeInputError(Where("tensor '" + Name(T) +
                                    "' has a negative dim " + dimsStr(R.Dims)));
      // A type of no fixed size (undefined, string) plans 0 bytes, and a
      // kernel would read it in another operand's type, past its buffer.
      if (elementBits(R.Type) == 0 && R.numElements() > 0)
        return makeInputError(Where(
            "tensor '" + Name(T) + "' has no element type a kernel can read (" +
            elementTypeName(R.Type) + "; the model declares none that " +
            "inference can complete)"));
      uint64_t Planned = P.Sched.Tensors[T].SizeBytes;
      if (R.bytes() > Planned)
        return makeInputError(
            Where("tensor '" + Name(T) + "' " + dimsStr(R.Dims) + " needs " +
                  llvm::Twine(R.bytes()) + " bytes, its planned buffer has " +
                  llvm::Twine(Planned)));
    }
  const ops::OpInfo *Op = ops::lookupOp(Nd.OpType);
  bool DefaultDomain = Nd.Domain.empty() || Nd.Domain == "ai.onnx";
  if (!Op || !DefaultDomain || C.Out.empty() || !C.Out[0].present())
    return llvm::Error::success();
  const TensorRef &Y = C.Out[0];
  switch (Op->Shape) {
  case ops::ShapeRuleId::Broadcast:
  case ops::ShapeRuleId::Where:
    // Each input is read at its broadcast offset into the output.
    for (size_t I = 0; I < C.In.size() && I < C.InIds.size(); ++I)
      if (C.In[I].present() && !broadcastsTo(C.In[I].Dims, Y.Dims))
        return makeInputError(Where(
            "input tensor '" + Name(C.InIds[I]) + "' " + dimsStr(C.In[I].Dims) +
            " does not broadcast to the output " + dimsStr(Y.Dims)));
    break;
  case ops::ShapeRuleId::MatMul:
    // MatMul: a's last dim and b's second to last are the contraction.
    if (Nd.OpType == "MatMul" && C.In.size() >= 2 && C.In[0].present() &&
        C.In[1].present()) {
      llvm::ArrayRef<int64_t> A = C.In[0].Dims, B = C.In[1].Dims;
      if (A.empty() || B.empty())
        break;
      int64_t KA = A.back(), KB = B.size() == 1 ? B[0] : B[B.size() - 2];
      if (KA != KB)
        return makeInputError(Where("inner dims differ: tensor '" +
                                    Name(C.InIds[0]) + "' " + dimsStr(A) +
                                    " and tensor '" + Name(C.InIds[1]) + "' " +
                                    dimsStr(B)));
    }
    break;
  case ops::ShapeRuleId::Gemm:
    if (C.In.size() >= 2 && C.In[0].Dims.size() == 2 &&
        C.In[1].Dims.size() == 2) {
      bool TA = Nd.getInt("transA", 0), TB = Nd.getInt("transB", 0);
      int64_t KA = C.In[0].Dims[TA ? 0 : 1], KB = C.In[1].Dims[TB ? 1 : 0];
      if (KA != KB)
        return makeInputError(
            Where("inner dims differ: tensor '" + Name(C.InIds[0]) + "' " +
                  dimsStr(C.In[0].Dims) + " and tensor '" + Name(C.InIds[1]) +
                  "' " + dimsStr(C.In[1].Dims)));
    }
    break;
  default:
    break;
  }
  return llvm::Error::success();
}
