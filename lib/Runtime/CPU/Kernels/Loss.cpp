//===- Loss.cpp - CPU kernels: NegativeLogLikelihoodLoss, SCE ---*- C++ -*-===//
//
// NegativeLogLikelihoodLoss and SoftmaxCrossEntropyLoss, following ONNX's
// reference: the input is viewed as [N, C, D] (D the product of the dims
// after the class axis), each (n, d) contributes -weight[t] * logp[n, t, d]
// with t = target[n, d], ignore_index contributes nothing, and 'mean'
// divides by the sum of the weights used (by N * D when neither weights nor
// ignore_index are given). SCE computes log-softmax over the class axis per
// (n, d) without scratch, writing it to the optional log_prob output.
// Registered by the Reduce family (CPUKernels.h).
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "Elementwise.h"
#include <cmath>
#include <optional>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

struct LossShape {
  int64_t N = 0, C = 0, D = 1;
};

/// The loss given logp(n, c, d) for the input's layout; writes output 0.
template <typename T, typename LogPFn>
llvm::Error lossFrom(const KernelContext &C, const LossShape &S, LogPFn LogP) {
  const TensorRef &Target = C.Inputs[1];
  const TensorRef *Weight =
      C.Inputs.size() > 2 && C.Inputs[2].present() ? &C.Inputs[2] : nullptr;
  // A weight is read at every target class: it must have one per class
  // (ONNX), and the target one per (n, d).
  if (Weight && (Weight->Dims.size() != 1 || Weight->Dims[0] != S.C))
    return C.badInput("weight has " + llvm::Twine(Weight->numElements()) +
                      " elements; it must be 1-D with one per class (" +
                      llvm::Twine(S.C) + ")");
  if (Target.numElements() != uint64_t(S.N * S.D))
    return C.badInput("target has " + llvm::Twine(Target.numElements()) +
                      " elements; the input has " + llvm::Twine(S.N * S.D) +
                      " (N x d1 x ...)");
  std::string Reduction = C.N.getString("reduction", "mean");
  if (Reduction != "mean" && Reduction != "sum" && Reduction != "none")
    return C.badInput("reduction '" + Reduction + "'");
  std::optional<int64_t> Ignore;
  if (C.N.attr("ignore_index"))
    Ignore = C.N.getInt("ignore_index", 0);
  T *Out = C.Outputs[0].data<T>();
  double Sum = 0, WeightSum = 0;
  for (int64_t N = 0; N < S.N; ++N) {
    for (int64_t D = 0; D < S.D; ++D) {
      int64_t I = N * S.D + D, Tgt = 0;
      if (!readInt(Target, uint64_t(I), Tgt))
        return C.unsupported("target of type " + elementTypeName(Target.Type));
      double L = 0, W = 1;
      if (Ignore && Tgt == *Ignore) {
        W = 0;
      } else {
        if (Tgt < 0 || Tgt >= S.C)
          return C.badInput("target " + llvm::Twine(Tgt) + " outside [0, " +
                            llvm::Twine(S.C) + ")");
        double V = 0;
        if (Weight && !readDouble(*Weight, uint64_t(Tgt), V))
          return C.unsupported("weights of type " +
                               elementTypeName(Weight->Type));
        if (Weight)
          W = V;
        L = -W * LogP(N, Tgt, D);
      }
      if (Reduction == "none")
        Out[I] = store<T>(ComputeT<T>(L));
      Sum += L;
      WeightSum += W;
    }
  }
  if (Reduction == "sum")
    Out[0] = store<T>(ComputeT<T>(Sum));
  else if (Reduction == "mean")
    Out[0] = store<T>(ComputeT<T>(
        (Weight || Ignore) ? Sum / WeightSum : Sum / double(S.N * S.D)));
  return llvm::Error::success();
}

llvm::Error shapeOf(const KernelContext &C, LossShape &S) {
  const TensorRef &X = C.Inputs[0];
  if (X.Dims.size() < 2 || C.Inputs.size() < 2 || !C.Inputs[1].present())
    return C.badInput("input must be [N, C, ...] with a target");
  S.N = X.Dims[0];
  S.C = X.Dims[1];
  for (size_t I = 2; I < X.Dims.size(); ++I)
    S.D *= X.Dims[I];
  if (int64_t(C.Inputs[1].numElements()) != S.N * S.D)
    return C.badInput("target size does not match the input");
  return llvm::Error::success();
}

llvm::Error runNLL(const KernelContext &C) {
  LossShape S;
  if (llvm::Error E = shapeOf(C, S))
    return E;
  llvm::Error Result = llvm::Error::success();
  if (!dispatchType<FloatTypes>(C.Inputs[0].Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        const T *X = C.Inputs[0].data<T>();
        Result = lossFrom<T>(C, S, [&](int64_t N, int64_t Cls, int64_t D) {
          return double(load(X[(N * S.C + Cls) * S.D + D]));
        });
      }))
    return C.unsupported("element type " + elementTypeName(C.Inputs[0].Type));
  return Result;
}

llvm::Error runSCE(const KernelContext &C) {
  LossShape S;
  if (llvm::Error E = shapeOf(C, S))
    return E;
  llvm::Error Result = llvm::Error::success();
  if (!dispatchType<FloatTypes>(C.Inputs[0].Type, [&](auto Tag) {
        using T = typename decltype(Tag)::type;
        const T *X = C.Inputs[0].data<T>();
        T *LogProb = C.Outputs.size() > 1 && C.Outputs[1].present()
                         ? C.Outputs[1].data<T>()
                         : nullptr;
        auto At = [&](int64_t N, int64_t Cls, int64_t D) {
          return (N * S.C + Cls) * S.D + D;
        };
        // log-softmax over the classes of (n, d): x - max - log(sum exp).
        auto Shift = [&](int64_t N, int64_t D) {
          double Max = -INFINITY;
          for (int64_t Cls = 0; Cls < S.C; ++Cls)
            Max = std::max(Max, double(load(X[At(N, Cls, D)])));
          double Sum = 0;
          for (int64_t Cls = 0; Cls < S.C; ++Cls)
            Sum += std::exp(double(load(X[At(N, Cls, D)])) - Max);
          return Max + std::log(Sum);
        };
        if (LogProb)
          for (int64_t N = 0; N < S.N; ++N)
            for (int64_t D = 0; D < S.D; ++D) {
              double Sh = Shift(N, D);
              for (int64_t Cls = 0; Cls < S.C; ++Cls)
                LogProb[At(N, Cls, D)] =
                    store<T>(ComputeT<T>(double(load(X[At(N, Cls, D)])) - Sh));
            }
        Result = lossFrom<T>(C, S, [&](int64_t N, int64_t Cls, int64_t D) {
          return double(load(X[At(N, Cls, D)])) - Shift(N, D);
        });
      }))
    return C.unsupported("element type " + elementTypeName(C.Inputs[0].Type));
  return Result;
}

} // namespace

void registerLossKernels(CPUKernelTable &T) {
  addKernel(T, "NegativeLogLikelihoodLoss",
            Kernel{runNLL, nullptr, typesOf(FloatTypes)});
  addKernel(T, "SoftmaxCrossEntropyLoss",
            Kernel{runSCE, nullptr, typesOf(FloatTypes)});
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
