//===- Gather.cpp - CPU kernels: gathers and scatters by index ------------===//
//
// Gather, GatherElements, GatherND and their inverses ScatterElements (and
// the deprecated Scatter) and ScatterND. Every index is checked against its
// axis and a bad one is an input error naming it: an index from the model's
// data must never read or write outside a planned buffer. Gathers move
// element bytes; scatters with a reduction dispatch on the element type.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <algorithm>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

/// Index V on an axis of length D, negative counting from the end; false
/// when out of range.
bool fixIndex(int64_t &V, int64_t D) {
  if (V < 0)
    V += D;
  return V >= 0 && V < D;
}

llvm::Error badIndex(const KernelContext &C, int64_t V, int64_t D) {
  return C.badInput("index " + llvm::Twine(V) +
                    " is out of range for an axis "
                    "of length " +
                    llvm::Twine(D));
}

llvm::Error runGather(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1], &Out = C.Outputs[0];
  const int64_t R = int64_t(In.Dims.size());
  int64_t Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, R))
    return C.badInput("axis out of range");
  const uint64_t EB = elemBytes(In.Type);
  const int64_t Outer = productOf(In.Dims, 0, size_t(Axis));
  const int64_t D = In.Dims[Axis];
  const int64_t Inner = productOf(In.Dims, size_t(Axis) + 1, size_t(R));
  const int64_t NIdx = int64_t(Idx.numElements());
  if (int64_t(Out.numElements()) != Outer * NIdx * Inner)
    return C.badInput("output size disagrees with data and indices");
  DimVector Ids;
  if (!readInts(Idx, Ids))
    return C.badInput("indices must be integers");
  for (int64_t &V : Ids)
    if (!fixIndex(V, D))
      return badIndex(C, V, D);
  const uint64_t Row = uint64_t(Inner) * EB;
  auto Work = [&](int64_t Begin, int64_t End) {
    for (int64_t K = Begin; K < End; ++K) {
      int64_t O = K / NIdx, J = K % NIdx;
      std::memcpy(Out.data<char>() + uint64_t(K) * Row,
                  In.data<const char>() + uint64_t(O * D + Ids[J]) * Row, Row);
    }
  };
  C.Pool.parallelFor(Outer * NIdx,
                     std::max<int64_t>(1, 8192 / std::max<int64_t>(1, Inner)),
                     Work);
  return llvm::Error::success();
}

/// Calls Fn(flat index into indices, flat index into data with the axis
/// coordinate replaced by the index) for every element of an index tensor
/// shaped IdxDims (GatherElements and ScatterElements).
template <typename F>
llvm::Error forEachElementIndex(const KernelContext &C,
                                llvm::ArrayRef<int64_t> DataDims,
                                const TensorRef &Idx, int64_t Axis, F &&Fn) {
  const int64_t R = int64_t(DataDims.size());
  if (int64_t(Idx.Dims.size()) != R)
    return C.badInput("indices and data differ in rank");
  // Off the axis an index element names data at its own coordinates: an
  // index dim past data's would read or write outside it.
  for (int64_t K = 0; K < R; ++K)
    if (K != Axis && Idx.Dims[K] > DataDims[K])
      return C.badInput("indices dim " + llvm::Twine(K) + " (" +
                        llvm::Twine(Idx.Dims[K]) + ") exceeds data's (" +
                        llvm::Twine(DataDims[K]) + ")");
  DimVector DS = stridesOf(DataDims);
  DimVector Coord(R, 0);
  const uint64_t N = Idx.numElements();
  for (uint64_t I = 0; I < N; ++I) {
    int64_t V = intAt(Idx, I);
    if (!fixIndex(V, DataDims[Axis]))
      return badIndex(C, V, DataDims[Axis]);
    int64_t Off = 0;
    for (int64_t K = 0; K < R; ++K)
      Off += (K == Axis ? V : Coord[K]) * DS[K];
    Fn(I, uint64_t(Off));
    for (int64_t K = R - 1; K >= 0; --K) {
      if (++Coord[K] < Idx.Dims[K])
        break;
      Coord[K] = 0;
    }
  }
  return llvm::Error::success();
}

llvm::Error runGatherElements(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1], &Out = C.Outputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, int64_t(In.Dims.size())))
    return C.badInput("axis out of range");
  const uint64_t EB = elemBytes(In.Type);
  return forEachElementIndex(
      C, In.Dims, Idx, Axis, [&](uint64_t I, uint64_t Src) {
        std::memcpy(Out.data<char>() + I * EB, In.data<const char>() + Src * EB,
                    EB);
      });
}

/// Reduction of a scatter: 0 none, 1 add, 2 mul, 3 max, 4 min; -1 unknown.
int reductionOf(const KernelContext &C) {
  std::string R = C.N.getString("reduction", "none");
  return R == "none"  ? 0
         : R == "add" ? 1
         : R == "mul" ? 2
         : R == "max" ? 3
         : R == "min" ? 4
                      : -1;
}

template <typename T> void reduceInto(T *Dst, const T *Src, int64_t N, int Op) {
  for (int64_t I = 0; I < N; ++I) {
    switch (Op) {
    case 0:
      Dst[I] = Src[I];
      break;
    case 1:
      Dst[I] = T(Dst[I] + Src[I]);
      break;
    case 2:
      Dst[I] = T(Dst[I] * Src[I]);
      break;
    case 3:
      Dst[I] = std::max(Dst[I], Src[I]);
      break;
    default:
      Dst[I] = std::min(Dst[I], Src[I]);
    }
  }
}

/// Applies Src to Dst (N elements) with reduction Op, dispatching on Type.
bool reduceElems(ElementType Type, void *Dst, const void *Src, int64_t N,
                 int Op) {
  if (Op == 0) {
    std::memcpy(Dst, Src, uint64_t(N) * elemBytes(Type));
    return true;
  }
  return visitNumeric(Type, [&](auto Tag) {
    using T = decltype(Tag);
    reduceInto(static_cast<T *>(Dst), static_cast<const T *>(Src), N, Op);
  });
}

llvm::Error runScatterElements(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 3))
    return E;
  const TensorRef &In = C.Inputs[0], &Idx = C.Inputs[1], &Upd = C.Inputs[2],
                  &Out = C.Outputs[0];
  int64_t Axis = C.N.getInt("axis", 0);
  if (!normAxis(Axis, int64_t(In.Dims.size())))
    return C.badInput("axis out of range");
  int Op = reductionOf(C);
  if (Op < 0)
    return C.unsupported("reduction '" + C.N.getString("reduction", "") + "'");
  if (Upd.numElements() != Idx.numElements())
    return C.badInput("updates and indices differ in size");
  if (Op && !visitNumeric(In.Type, [](auto) {}))
    return C.unsupported("reduction on type " + elementTypeName(In.Type));
  copyUnlessAliased(C);
  const uint64_t EB = elemBytes(In.Type);
  return forEachElementIndex(
      C, In.Dims, Idx, Axis, [&](uint64_t I, uint64_t Dst) {
        reduceElems(In.Type, Out.data<char>() + Dst * EB,
                    Upd.data<const char>() + I * EB, 1, Op);
      });
}

} // namespace

llvm::Error ndShape(const KernelContext &C, const TensorRef &Data,
                    const TensorRef &Idx, int64_t Batch, NDShape &S) {
  const int64_t R = int64_t(Data.Dims.size()), Q = int64_t(Idx.Dims.size());
  if (Q < 1 || Batch < 0 || Batch >= std::min(R, Q))
    return C.badInput("indices rank or batch_dims out of range");
  S.Batch = Batch;
  S.K = Idx.Dims[Q - 1];
  if (Batch + S.K > R)
    return C.badInput("index tuples are longer than data's rank");
  for (int64_t I = 0; I < Batch; ++I)
    if (Data.Dims[I] != Idx.Dims[I])
      return C.badInput("batch dims of data and indices differ");
  S.Batches = productOf(Data.Dims, 0, size_t(Batch));
  S.Tuples = productOf(Idx.Dims, size_t(Batch), size_t(Q - 1));
  S.Slice = productOf(Data.Dims, size_t(Batch + S.K), size_t(R));
  S.DataBatch = productOf(Data.Dims, size_t(Batch), size_t(R));
  return llvm::Error::success();
}

namespace {

/// The flat offset (in elements) of the slice that an index tuple of
/// GatherND/ScatterND names in data, or -1 (badIndex already returned).
struct NDIndexer : NDShape {
  const KernelContext &C;
  const TensorRef &Data, &Idx;

  NDIndexer(const KernelContext &C, const TensorRef &Data, const TensorRef &Idx)
      : C(C), Data(Data), Idx(Idx) {}
  llvm::Error init(int64_t BatchDims) {
    return ndShape(C, Data, Idx, BatchDims, *this);
  }
  /// Offset in data of tuple T (over all batches) into Off.
  llvm::Error offset(int64_t T, int64_t &Off) const {
    DimVector S = stridesOf(Data.Dims);
    Off = (T / Tuples) * DataBatch;
    for (int64_t J = 0; J < K; ++J) {
      int64_t V = intAt(Idx, uint64_t(T * K + J));
      int64_t D = Data.Dims[Batch + J];
      if (!fixIndex(V, D))
        return badIndex(C, V, D);
      Off += V * S[Batch + J];
    }
    return llvm::Error::success();
  }
};

llvm::Error runGatherND(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  const TensorRef &In = C.Inputs[0], &Out = C.Outputs[0];
  NDIndexer X(C, In, C.Inputs[1]);
  if (llvm::Error E = X.init(C.N.getInt("batch_dims", 0)))
    return E;
  if (int64_t(Out.numElements()) != X.Batches * X.Tuples * X.Slice)
    return C.badInput("output size disagrees with data and indices");
  const uint64_t EB = elemBytes(In.Type);
  for (int64_t T = 0; T < X.Batches * X.Tuples; ++T) {
    int64_t Off;
    if (llvm::Error E = X.offset(T, Off))
      return E;
    std::memcpy(Out.data<char>() + uint64_t(T * X.Slice) * EB,
                In.data<const char>() + uint64_t(Off) * EB,
                uint64_t(X.Slice) * EB);
  }
  return llvm::Error::success();
}

llvm::Error runScatterND(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 3))
    return E;
  const TensorRef &In = C.Inputs[0], &Upd = C.Inputs[2], &Out = C.Outputs[0];
  int Op = reductionOf(C);
  if (Op < 0)
    return C.unsupported("reduction '" + C.N.getString("reduction", "") + "'");
  if (Op && !visitNumeric(In.Type, [](auto) {}))
    return C.unsupported("reduction on type " + elementTypeName(In.Type));
  NDIndexer X(C, In, C.Inputs[1]);
  if (llvm::Error E = X.init(0))
    return E;
  if (int64_t(Upd.numElements()) != X.Tuples * X.Slice)
    return C.badInput("updates size disagrees with data and indices");
  copyUnlessAliased(C);
  const uint64_t EB = elemBytes(In.Type);
  for (int64_t T = 0; T < X.Tuples; ++T) {
    int64_t Off;
    if (llvm::Error E = X.offset(T, Off))
      return E;
    reduceElems(In.Type, Out.data<char>() + uint64_t(Off) * EB,
                Upd.data<const char>() + uint64_t(T * X.Slice) * EB, X.Slice,
                Op);
  }
  return llvm::Error::success();
}

} // namespace

void registerGatherKernels(CPUKernelTable &T) {
  addKernel(T, "Gather", Kernel{&runGather, nullptr, {}});
  addKernel(T, "GatherElements", Kernel{&runGatherElements, nullptr, {}});
  addKernel(T, "GatherND", Kernel{&runGatherND, nullptr, {}});
  addKernel(T, "ScatterElements", Kernel{&runScatterElements, nullptr, {}});
  addKernel(T, "Scatter", Kernel{&runScatterElements, nullptr, {}});
  addKernel(T, "ScatterND", Kernel{&runScatterND, nullptr, {}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
