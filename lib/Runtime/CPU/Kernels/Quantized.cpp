//===- Quantized.cpp - CPU kernels: integer and QLinear MatMul/Conv -------===//
//
// MatMulInteger, ConvInteger, QLinearMatMul and QLinearConv subtract their
// zero points (per tensor, per row/column or per output channel), widen the
// operands to double in the step's workspace, and run the double MatMul or
// Conv kernel of this backend on those copies: every product of 8-bit
// values and every sum up to 2^53 is exact in double, so the int32 results
// equal an integer loop's while GEMM still goes through OpenBLAS. The QLinear
// ops then requantize: round half to even of acc * scale_a * scale_b /
// scale_y, plus the output zero point, saturated to the output type.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

enum class QOp { MatMulInteger, ConvInteger, QLinearMatMul, QLinearConv };

QOp qopOf(const Node &N) {
  if (N.OpType == "MatMulInteger")
    return QOp::MatMulInteger;
  if (N.OpType == "ConvInteger")
    return QOp::ConvInteger;
  if (N.OpType == "QLinearMatMul")
    return QOp::QLinearMatMul;
  return QOp::QLinearConv;
}
bool isConv(QOp Q) { return Q == QOp::ConvInteger || Q == QOp::QLinearConv; }
bool isQLinear(QOp Q) {
  return Q == QOp::QLinearMatMul || Q == QOp::QLinearConv;
}

/// Input positions of each op's operands, zero points and scales (-1:
/// none). The output is always Outputs[0].
struct QLayout {
  int A, AZp, AScale, B, BZp, BScale, YScale, YZp, Bias;
};
QLayout layoutOf(QOp Q) {
  switch (Q) {
  case QOp::MatMulInteger:
  case QOp::ConvInteger:
    return {0, 2, -1, 1, 3, -1, -1, -1, -1};
  case QOp::QLinearMatMul:
    return {0, 2, 1, 3, 5, 4, 6, 7, -1};
  case QOp::QLinearConv:
    return {0, 2, 1, 3, 5, 4, 6, 7, 8};
  }
  return {};
}

const TensorRef *optIn(llvm::ArrayRef<TensorRef> In, int I) {
  return I >= 0 && size_t(I) < In.size() && In[I].present() ? &In[size_t(I)]
                                                            : nullptr;
}

/// The kernel that runs the widened operands: double MatMul or Conv.
const Kernel &innerKernel(QOp Q) {
  const ops::OpInfo *Info = ops::lookupOp(isConv(Q) ? "Conv" : "MatMul");
  return *cpuKernels().get(ops::opCode(*Info));
}

/// The double refs the inner kernel sees (Data filled in by the caller).
void innerRefs(QOp Q, llvm::ArrayRef<TensorRef> In, const TensorRef &Out,
               llvm::SmallVectorImpl<TensorRef> &Ins, TensorRef &Y) {
  QLayout L = layoutOf(Q);
  for (int I : {L.A, L.B}) {
    TensorRef R = In[size_t(I)];
    R.Type = ElementType::Double;
    R.Data = nullptr;
    Ins.push_back(R);
  }
  Y = Out;
  Y.Type = ElementType::Double;
  Y.Data = nullptr;
}

uint64_t quantWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                        llvm::ArrayRef<TensorRef> Outputs) {
  QOp Q = qopOf(N);
  QLayout L = layoutOf(Q);
  if (Outputs.empty() || Inputs.size() <= size_t(std::max(L.A, L.B)))
    return 0;
  llvm::SmallVector<TensorRef, 3> Ins;
  TensorRef Y;
  innerRefs(Q, Inputs, Outputs[0], Ins, Y);
  const Kernel &K = innerKernel(Q);
  uint64_t Inner = K.Workspace ? K.Workspace(N, Ins, Y) : 0;
  return 8 * (Ins[0].numElements() + Ins[1].numElements() + Y.numElements()) +
         Inner;
}

/// Out[i] = Q[i] - zero point, the zero point per tensor or along Axis.
llvm::Error widen(const KernelContext &C, const TensorRef &Q,
                  const TensorRef *Zp, int64_t Axis, double *Out) {
  const uint64_t N = Q.numElements();
  quant::Axis Z;
  if (llvm::Error E = zeroPointAxis(C, Q, Zp, Axis, Z))
    return E;
  for (uint64_t I = 0; I < N; ++I)
    Out[I] = double(intAt(Q, I)) -
             (Zp ? double(intAt(*Zp, uint64_t(Z(int64_t(I))))) : 0.0);
  return llvm::Error::success();
}

/// Element I of a scale tensor (per tensor or per Index).
double scaleAt(const TensorRef &S, int64_t Index) {
  return numberAt(S, S.numElements() == 1 ? 0 : uint64_t(Index));
}

llvm::Error runQuantized(const KernelContext &C) {
  const QOp Q = qopOf(C.N);
  const QLayout L = layoutOf(Q);
  if (C.Inputs.size() <= size_t(std::max(L.A, L.B)) ||
      (isQLinear(Q) && C.Inputs.size() <= size_t(L.YZp)))
    return C.badInput("missing inputs");
  const TensorRef &A = C.Inputs[size_t(L.A)], &B = C.Inputs[size_t(L.B)],
                  &Y = C.Outputs[0];
  for (const TensorRef *T : {&A, &B})
    if (T->Type != ElementType::UInt8 && T->Type != ElementType::Int8)
      return C.unsupported("operands of type " + elementTypeName(T->Type));
  llvm::SmallVector<TensorRef, 3> Ins;
  TensorRef Yd;
  innerRefs(Q, C.Inputs, Y, Ins, Yd);
  const uint64_t NA = A.numElements(), NB = B.numElements(),
                 NY = Y.numElements();
  const uint64_t Need = quantWorkspace(C.N, C.Inputs, C.Outputs);
  if (C.WorkspaceBytes < Need)
    return C.badInput("the plan gave too little workspace");
  double *Buf = static_cast<double *>(C.Workspace);
  Ins[0].Data = Buf;
  Ins[1].Data = Buf + NA;
  Yd.Data = Buf + NA + NB;
  // A's zero point follows its rows (MatMul) or is per tensor (Conv); B's
  // follows its columns (MatMul) or output channels (Conv's W, axis 0).
  const int64_t RA = int64_t(A.Dims.size()), RB = int64_t(B.Dims.size());
  if (llvm::Error E =
          widen(C, A, optIn(C.Inputs, L.AZp), isConv(Q) ? -1 : RA - 2, Buf))
    return E;
  if (llvm::Error E =
          widen(C, B, optIn(C.Inputs, L.BZp), isConv(Q) ? 0 : RB - 1, Buf + NA))
    return E;
  const Kernel &K = innerKernel(Q);
  KernelContext Inner{C.G,
                      C.N,
                      Ins,
                      llvm::ArrayRef<TensorRef>(Yd),
                      Buf + NA + NB + NY,
                      C.WorkspaceBytes - 8 * (NA + NB + NY),
                      C.Pool};
  if (llvm::Error E = K.Run(Inner))
    return E;
  const double *Acc = static_cast<const double *>(Yd.Data);
  if (!isQLinear(Q)) {
    if (Y.Type != ElementType::Int32)
      return C.badInput("output must be int32");
    for (uint64_t I = 0; I < NY; ++I)
      Y.data<int32_t>()[I] = int32_t(Acc[I]);
    return llvm::Error::success();
  }
  const TensorRef &SA = C.Inputs[size_t(L.AScale)],
                  &SB = C.Inputs[size_t(L.BScale)],
                  &SY = C.Inputs[size_t(L.YScale)];
  const TensorRef *ZY = optIn(C.Inputs, L.YZp);
  const TensorRef *Bias = optIn(C.Inputs, L.Bias);
  const double YZero = ZY ? double(intAt(*ZY, 0)) : 0.0;
  const double Lo = Y.Type == ElementType::UInt8 ? 0 : -128,
               Hi = Y.Type == ElementType::UInt8 ? 255 : 127;
  if (Y.Type != ElementType::UInt8 && Y.Type != ElementType::Int8)
    return C.badInput("output must be uint8 or int8");
  const int64_t RY = int64_t(Y.Dims.size());
  const int64_t Cols = Y.Dims.empty() ? 1 : Y.Dims[RY - 1];
  const int64_t Rows = RY >= 2 ? Y.Dims[RY - 2] : 1;
  const int64_t Plane = isConv(Q) ? productOf(Y.Dims, 2, Y.Dims.size()) : 1;
  const int64_t Channels = isConv(Q) ? Y.Dims[1] : 1;
  if (llvm::Error E = isConv(Q) ? qlinearParams(C, true, 1, Channels)
                                : qlinearParams(C, false, Rows, Cols))
    return E;
  for (uint64_t I = 0; I < NY; ++I) {
    double Scale, Add = 0;
    if (isConv(Q)) {
      int64_t M = int64_t(I) / Plane % Channels;
      Scale = scaleAt(SA, 0) * scaleAt(SB, M);
      if (Bias)
        Add = double(intAt(*Bias, uint64_t(M)));
    } else {
      int64_t Col = int64_t(I) % Cols, Row = int64_t(I) / Cols % Rows;
      Scale = scaleAt(SA, Row) * scaleAt(SB, Col);
    }
    double V = std::nearbyint((Acc[I] + Add) * Scale / scaleAt(SY, 0)) + YZero;
    V = std::max(Lo, std::min(Hi, V));
    if (Y.Type == ElementType::UInt8)
      Y.data<uint8_t>()[I] = uint8_t(V);
    else
      Y.data<int8_t>()[I] = int8_t(V);
  }
  return llvm::Error::success();
}

} // namespace

llvm::Error zeroPointAxis(const KernelContext &C, const TensorRef &Q,
                          const TensorRef *Zp, int64_t Axis, quant::Axis &Out) {
  Out = {1, 1};
  if (!Zp || Zp->numElements() == 1)
    return llvm::Error::success();
  if (Axis < 0 || Axis >= int64_t(Q.Dims.size()) ||
      int64_t(Zp->numElements()) != Q.Dims[Axis])
    return C.badInput("a zero point has " + llvm::Twine(Zp->numElements()) +
                      " values, which fits no axis it may follow");
  Out = {productOf(Q.Dims, size_t(Axis) + 1, Q.Dims.size()), Q.Dims[Axis]};
  return llvm::Error::success();
}

llvm::Error qlinearParams(const KernelContext &C, bool Conv, int64_t Rows,
                          int64_t Cols) {
  const QLayout L = layoutOf(Conv ? QOp::QLinearConv : QOp::QLinearMatMul);
  auto Count = [&](int I) {
    return int64_t(C.Inputs[size_t(I)].numElements());
  };
  auto OneOr = [&](int I, int64_t N, const char *What) -> llvm::Error {
    const int64_t Got = Count(I);
    if (Got == 1 || Got == N)
      return llvm::Error::success();
    return C.badInput(llvm::Twine(What) + " has " + llvm::Twine(Got) +
                      " values for " + llvm::Twine(N) +
                      (Conv ? " channels" : " rows or columns"));
  };
  if (Conv && Count(L.AScale) != 1)
    return C.badInput("x_scale has " + llvm::Twine(Count(L.AScale)) +
                      " values, not one");
  if (llvm::Error E =
          Conv ? llvm::Error::success() : OneOr(L.AScale, Rows, "a_scale"))
    return E;
  if (llvm::Error E = OneOr(L.BScale, Cols, Conv ? "w_scale" : "b_scale"))
    return E;
  if (Count(L.YScale) < 1)
    return C.badInput("y_scale is empty");
  if (optIn(C.Inputs, L.YZp) && Count(L.YZp) < 1)
    return C.badInput("y_zero_point is empty");
  if (Conv && optIn(C.Inputs, L.Bias) && Count(L.Bias) != Cols)
    return C.badInput("the bias has " + llvm::Twine(Count(L.Bias)) +
                      " values for " + llvm::Twine(Cols) + " channels");
  return llvm::Error::success();
}

void registerQuantizedKernels(CPUKernelTable &T) {
  for (const char *Op :
       {"MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv"})
    addKernel(T, Op,
              Kernel{&runQuantized,
                     &quantWorkspace,
                     {ElementType::UInt8, ElementType::Int8}});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
