//===- Shape.cpp - CPU kernels: views, layout and shape-valued ops --------===//
//
// Reshape, Flatten, Squeeze and Unsqueeze are views: the planner usually
// aliases their output to their input, and the kernel then has nothing to
// do (a copy otherwise). Transpose and Expand are strided copies. Shape,
// Size, Constant, ConstantOfShape, Range and EyeLike write values that do
// not depend on input bytes (or only on a few scalars); Trilu masks a copy.
// Output dims were fixed by shape inference before the run, so the kernels
// read them from the output refs instead of recomputing them.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

llvm::Error runView(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  if (C.Inputs[0].numElements() != C.Outputs[0].numElements())
    return C.badInput("input has " + llvm::Twine(C.Inputs[0].numElements()) +
                      " elements, output " +
                      llvm::Twine(C.Outputs[0].numElements()));
  copyUnlessAliased(C);
  return llvm::Error::success();
}

llvm::Error runTranspose(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  const int64_t R = int64_t(In.Dims.size());
  DimVector Perm;
  if (auto P = C.N.getInts("perm"))
    Perm.assign(P->begin(), P->end());
  else
    for (int64_t I = R - 1; I >= 0; --I)
      Perm.push_back(I);
  if (int64_t(Perm.size()) != R || int64_t(Out.Dims.size()) != R)
    return C.badInput("perm has " + llvm::Twine(Perm.size()) +
                      " entries for a rank-" + llvm::Twine(R) + " input");
  DimVector InStrides = stridesOf(In.Dims), Src(R);
  llvm::SmallVector<bool, 6> Seen(R, false);
  for (int64_t I = 0; I < R; ++I) {
    int64_t A = Perm[I];
    if (!normAxis(A, R) || Seen[A] || Out.Dims[I] != In.Dims[A])
      return C.badInput("perm is not a permutation matching the output");
    Seen[A] = true;
    Src[I] = InStrides[A];
  }
  stridedCopy(Out.Data, In.Data, Out.Dims, Src, elemBytes(In.Type), &C.Pool);
  return llvm::Error::success();
}

/// Strides of In read as if broadcast to OutDims (numpy rules): 0 where In
/// has a 1 or lacks the dim.
bool broadcastStrides(llvm::ArrayRef<int64_t> InDims,
                      llvm::ArrayRef<int64_t> OutDims, DimVector &Src) {
  const int64_t R = int64_t(OutDims.size()), IR = int64_t(InDims.size());
  if (IR > R)
    return false;
  DimVector S = stridesOf(InDims);
  Src.assign(R, 0);
  for (int64_t I = 0; I < IR; ++I) {
    int64_t O = R - IR + I;
    if (InDims[I] == OutDims[O])
      Src[O] = InDims[I] == 1 ? 0 : S[I];
    else if (InDims[I] != 1)
      return false;
  }
  return true;
}

llvm::Error runExpand(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  DimVector Src;
  if (!broadcastStrides(In.Dims, Out.Dims, Src))
    return C.badInput("input does not broadcast to the output shape");
  stridedCopy(Out.Data, In.Data, Out.Dims, Src, elemBytes(In.Type), &C.Pool);
  return llvm::Error::success();
}

/// Whether storeValue can write an element of type T.
bool storable(ElementType T) {
  return T == ElementType::Float16 || T == ElementType::BFloat16 ||
         visitNumericOrBool(T, [](auto) {});
}

/// Writes V (an integer or a floating value) to element I of Out.
void storeValue(const TensorRef &Out, uint64_t I, double F, int64_t Int,
                bool IsInt) {
  // The 16-bit floats: rounded to nearest even from the double.
  double D = IsInt ? double(Int) : F;
  if (Out.Type == ElementType::Float16) {
    Out.data<uint16_t>()[I] = toHalf(D).Bits;
    return;
  }
  if (Out.Type == ElementType::BFloat16) {
    Out.data<uint16_t>()[I] = toBFloat16(D).Bits;
    return;
  }
  visitNumericOrBool(Out.Type, [&](auto Tag) {
    using T = decltype(Tag);
    if constexpr (std::is_same<T, bool>::value)
      Out.data<uint8_t>()[I] = IsInt ? Int != 0 : F != 0;
    else
      Out.data<T>()[I] = IsInt ? T(Int) : T(F);
  });
}

llvm::Error runShape(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  auto [Start, End] = shapeRange(C.N, int64_t(In.Dims.size()));
  if (Out.Type != ElementType::Int64 ||
      int64_t(Out.numElements()) != End - Start)
    return C.badInput("output is not int64[" + llvm::Twine(End - Start) + "]");
  for (int64_t I = Start; I < End; ++I)
    Out.data<int64_t>()[I - Start] = In.Dims[I];
  return llvm::Error::success();
}

llvm::Error runSize(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  if (C.Outputs[0].Type != ElementType::Int64)
    return C.badInput("output is not int64");
  *C.Outputs[0].data<int64_t>() = int64_t(C.Inputs[0].numElements());
  return llvm::Error::success();
}

llvm::Error runConstant(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  const uint64_t N = Out.numElements();
  for (const Attribute &A : C.N.Attrs) {
    if (A.Name == "value") {
      if (!A.T)
        return C.badInput("attribute 'value' holds no tensor");
      const TensorData &D = *A.T;
      bool IsInt = !D.Ints.empty();
      uint64_t Have = IsInt ? D.Ints.size() : D.Floats.size();
      if (N && Have != N)
        return C.unsupported(
            "a Constant of " + llvm::Twine(N) +
            " elements: the importer keeps only tensors of at most " +
            llvm::Twine(MaxKeptElements) +
            " elements (or it is float16/"
            "string)");
      if (Out.Type != D.Type)
        return C.badInput("output type differs from the constant's");
      if (elemBytes(Out.Type) == 0 || !storable(Out.Type))
        return C.unsupported("Constant of type " + elementTypeName(Out.Type));
      for (uint64_t I = 0; I < N; ++I)
        storeValue(Out, I, IsInt ? 0 : D.Floats[I], IsInt ? D.Ints[I] : 0,
                   IsInt);
      return llvm::Error::success();
    }
    bool IsFloat = A.Name == "value_float" || A.Name == "value_floats";
    bool IsInt = A.Name == "value_int" || A.Name == "value_ints";
    if (!IsFloat && !IsInt)
      continue;
    bool Scalar = A.Name == "value_float" || A.Name == "value_int";
    uint64_t Have = Scalar ? 1 : (IsFloat ? A.Floats.size() : A.Ints.size());
    if (Have != N)
      return C.badInput("attribute '" + A.Name + "' has " + llvm::Twine(Have) +
                        " values for " + llvm::Twine(N) + " elements");
    for (uint64_t I = 0; I < N; ++I) {
      double F = Scalar ? A.F : (IsFloat ? A.Floats[I] : 0);
      int64_t V = Scalar ? A.I : (IsInt ? A.Ints[I] : 0);
      storeValue(Out, I, F, V, IsInt);
    }
    return llvm::Error::success();
  }
  return C.unsupported("Constant without a value, value_float(s) or "
                       "value_int(s) attribute (sparse or string constant)");
}

llvm::Error runConstantOfShape(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  double F = 0;
  int64_t I = 0;
  bool IsInt = false;
  if (const Attribute *A = C.N.attr("value")) {
    if (!A->T || A->T->numElements() != 1)
      return C.badInput("attribute 'value' is not a one-element tensor");
    IsInt = !A->T->Ints.empty();
    if (IsInt)
      I = A->T->Ints[0];
    else if (!A->T->Floats.empty())
      F = A->T->Floats[0];
    else
      return C.unsupported("value of type " + elementTypeName(A->T->Type));
  }
  if (!storable(Out.Type))
    return C.unsupported("output type " + elementTypeName(Out.Type));
  const uint64_t N = Out.numElements();
  if (N == 0)
    return llvm::Error::success();
  storeValue(Out, 0, F, I, IsInt);
  const uint64_t EB = elemBytes(Out.Type);
  char *D = Out.data<char>();
  for (uint64_t K = 1; K < N; ++K)
    std::memcpy(D + K * EB, D, EB);
  return llvm::Error::success();
}

llvm::Error runRange(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  for (unsigned I = 0; I < 3; ++I)
    if (!hasInput(C, I) || C.Inputs[I].numElements() != 1)
      return C.badInput("start, limit and delta must be scalars");
  bool Done = visitNumeric(Out.Type, [&](auto Tag) {
    using T = decltype(Tag);
    T *D = Out.data<T>();
    if constexpr (std::is_floating_point<T>::value) {
      T Start = T(numberAt(C.Inputs[0], 0)),
        Delta = T(numberAt(C.Inputs[2], 0));
      for (uint64_t I = 0; I < Out.numElements(); ++I)
        D[I] = T(Start + T(I) * Delta);
    } else {
      int64_t Start = intAt(C.Inputs[0], 0), Delta = intAt(C.Inputs[2], 0);
      for (uint64_t I = 0; I < Out.numElements(); ++I)
        D[I] = T(Start + int64_t(I) * Delta);
    }
  });
  if (!Done)
    return C.unsupported("Range of type " + elementTypeName(Out.Type));
  return llvm::Error::success();
}

llvm::Error runEyeLike(const KernelContext &C) {
  const TensorRef &Out = C.Outputs[0];
  if (Out.Dims.size() != 2)
    return C.badInput("EyeLike needs a 2-D input");
  if (!storable(Out.Type))
    return C.unsupported("output type " + elementTypeName(Out.Type));
  std::memset(Out.Data, 0, Out.bytes());
  const int64_t K = C.N.getInt("k", 0), Rows = Out.Dims[0], Cols = Out.Dims[1];
  for (int64_t R = 0; R < Rows; ++R)
    if (R + K >= 0 && R + K < Cols)
      storeValue(Out, uint64_t(R * Cols + R + K), 1, 1, true);
  return llvm::Error::success();
}

llvm::Error runTrilu(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  if (In.Dims.size() < 2)
    return C.badInput("Trilu needs a tensor of rank 2 or more");
  int64_t K = hasInput(C, 1) ? intAt(C.Inputs[1], 0) : 0;
  const bool Upper = C.N.getInt("upper", 1) != 0;
  copyUnlessAliased(C);
  const int64_t Rows = In.Dims[In.Dims.size() - 2],
                Cols = In.Dims[In.Dims.size() - 1];
  const uint64_t EB = elemBytes(In.Type);
  const int64_t Mats = productOf(In.Dims, 0, In.Dims.size() - 2);
  char *D = Out.data<char>();
  for (int64_t M = 0; M < Mats; ++M)
    for (int64_t R = 0; R < Rows; ++R) {
      char *Row = D + uint64_t((M * Rows + R) * Cols) * EB;
      // Upper keeps columns j >= r + k; lower keeps j <= r + k.
      int64_t Edge =
          std::max<int64_t>(0, std::min(Cols, R + K + (Upper ? 0 : 1)));
      if (Upper)
        std::memset(Row, 0, uint64_t(Edge) * EB);
      else
        std::memset(Row + uint64_t(Edge) * EB, 0, uint64_t(Cols - Edge) * EB);
    }
  return llvm::Error::success();
}

} // namespace

void registerShapeKernels(CPUKernelTable &T) {
  for (const char *Op : {"Reshape", "Flatten", "Squeeze", "Unsqueeze"})
    addKernel(T, Op, Kernel{&runView, nullptr, {}});
  addKernel(T, "Transpose", Kernel{&runTranspose, nullptr, {}});
  addKernel(T, "Expand", Kernel{&runExpand, nullptr, {}});
  addKernel(T, "Shape", Kernel{&runShape, nullptr, {}});
  addKernel(T, "Size", Kernel{&runSize, nullptr, {}});
  addKernel(T, "Constant", Kernel{&runConstant, nullptr, {}});
  addKernel(T, "ConstantOfShape", Kernel{&runConstantOfShape, nullptr, {}});
  addKernel(T, "Range", Kernel{&runRange, nullptr, numericTypes()});
  addKernel(T, "EyeLike", Kernel{&runEyeLike, nullptr, {}});
  addKernel(T, "Trilu", Kernel{&runTrilu, nullptr, {}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
