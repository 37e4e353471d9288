//===- InferencePrecision.cpp - an fp32 model run in 16 bits --------------===//
#include "oomplan/Transforms/InferencePrecision.h"
#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringSwitch.h"

using namespace oomplan;

bool oomplan::keptInFloat(llvm::StringRef Op) {
  return llvm::StringSwitch<bool>(Op)
      .Cases("Resize", "Upsample", "Range", "CumSum", "Min", "Max", true)
      .Cases("TopK", "RoiAlign", "NonMaxSuppression", "RandomUniformLike", true)
      .Default(false);
}

// The element type S counts for T.
static ElementType typeOf(const Schedule &S, const ShapeInfo &Shapes,
                          TensorId T) {
  const ScheduleTensor &ST = S.Tensors[T];
  if (ST.Type != ElementType::Undefined || ST.Value == NoId ||
      ST.Value >= Shapes.Values.size())
    return ST.Type;
  return Shapes.Values[ST.Value].Type;
}

unsigned oomplan::applyInferencePrecision(const ShapeInfo &Shapes,
                                          ElementType Half, Schedule &S) {
  // Tensors the kept ops write stay fp32; every other fp32 tensor halves
  // (a view of a kept op's output reads the 16-bit cast, below).
  std::vector<bool> KeptOut(S.Tensors.size(), false);
  for (const Step &St : S.Steps)
    if (St.Kind == StepKind::Compute && keptInFloat(St.Op))
      for (TensorId T : St.Writes)
        KeptOut[T] = true;
  std::vector<bool> Low(S.Tensors.size(), false);
  for (TensorId T = 0; T < S.Tensors.size(); ++T) {
    if (KeptOut[T] || S.Tensors[T].Value == NoId ||
        typeOf(S, Shapes, T) != ElementType::Float)
      continue;
    Low[T] = true;
    S.Tensors[T].SizeBytes = (S.Tensors[T].SizeBytes + 1) / 2;
    S.Tensors[T].Type = Half;
  }

  unsigned Kept = 0;
  std::vector<Step> Out;
  Out.reserve(S.Steps.size());
  // A kept op's fp32 output -> its 16-bit cast, which later steps read.
  std::vector<TensorId> CastOf(S.Tensors.size(), UINT32_MAX);
  for (Step St : S.Steps) {
    for (TensorId &T : St.Reads)
      if (T < CastOf.size() && CastOf[T] != UINT32_MAX)
        T = CastOf[T];
    if (St.Kind != StepKind::Compute || !keptInFloat(St.Op)) {
      Out.push_back(std::move(St));
      continue;
    }
    ++Kept;
    // fp32 copies of its 16-bit inputs, made for this op and freed after.
    std::vector<TensorId> Copies;
    for (TensorId T : St.Reads) {
      if (!Low[T])
        continue;
      ScheduleTensor C;
      C.Name = "float(" + S.Tensors[T].Name + ")";
      C.SizeBytes = S.Tensors[T].SizeBytes * 2;
      C.Type = ElementType::Float;
      C.Kind = TensorKind::Activation;
      S.Tensors.push_back(std::move(C));
      Copies.push_back(TensorId(S.Tensors.size() - 1));
    }
    llvm::append_range(St.Writes, Copies);
    St.MayWriteInPlace = false;
    std::vector<TensorId> Outs = St.Writes;
    Out.push_back(std::move(St));
    // Each fp32 output cast back to 16 bits right after.
    for (TensorId O : Outs) {
      if (!KeptOut[O] || typeOf(S, Shapes, O) != ElementType::Float)
        continue;
      ScheduleTensor C;
      C.Name = S.Tensors[O].Name;
      C.Value = S.Tensors[O].Value;
      C.SizeBytes = (S.Tensors[O].SizeBytes + 1) / 2;
      C.Type = Half;
      C.Kind = S.Tensors[O].Kind;
      C.IsGraphOutput = S.Tensors[O].IsGraphOutput;
      S.Tensors[O].IsGraphOutput = false;
      S.Tensors[O].Name += " (fp32)";
      S.Tensors.push_back(std::move(C));
      TensorId Id = TensorId(S.Tensors.size() - 1);
      CastOf.resize(S.Tensors.size(), UINT32_MAX);
      CastOf[O] = Id;
      Step Cast;
      Cast.Kind = StepKind::Compute;
      Cast.Op = "Cast";
      Cast.Reads = {O};
      Cast.Writes = {Id};
      Out.push_back(std::move(Cast));
    }
  }
  S.Steps = std::move(Out);
  // An op whose output is now another size than its inputs (a Cast, an op
  // reading a kept op's fp32 output) cannot write over them.
  for (Step &St : S.Steps) {
    if (!St.MayWriteInPlace || St.Writes.empty())
      continue;
    uint64_t Size = S.Tensors[St.Writes[0]].SizeBytes;
    if (llvm::none_of(St.Reads, [&](TensorId T) {
          return S.Tensors[T].SizeBytes == Size;
        }))
      St.MayWriteInPlace = false;
  }
  return Kept;
}
