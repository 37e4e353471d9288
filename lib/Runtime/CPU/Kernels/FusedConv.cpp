//===- FusedConv.cpp - CPU kernel: OomplanConv, act(Conv + residual) ------===//
//
// act(Conv(X, W, B) + Residual) through Conv.cpp's own im2col/GEMM path with
// Accumulate set: the output holds the residual, the bias is added into it
// and every GEMM accumulates with beta 1, then the activation runs in the
// output. When the planner made the output the residual's buffer (the
// in-place write that saves one activation tensor per residual block), the
// residual is consumed where it lies; otherwise (--check=unplanned, or a
// residual still read later) it is copied into the output first.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "ConvEntry.h"
#include "FusedKernels.h"
#include "oomplan/IR/FusedOps.h"
#include <cmath>
#include <cstring>
#include <limits>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

uint64_t fusedConvWorkspace(const Node &N, llvm::ArrayRef<TensorRef> Inputs,
                            llvm::ArrayRef<TensorRef> Outputs) {
  return convWorkspaceBytes(N, Inputs, Outputs);
}

/// The per-channel affine (fused::ConvAffineFeature): a BatchNormalization
/// (inputs 4 to 7) and post_scale, post_shift; for channel M, y * S + T.
struct ChannelAffine {
  const TensorRef *Bn = nullptr; ///< inputs 4..7, or null
  double Eps = 1e-5, A = 1, B = 0;

  bool any() const { return Bn || A != 1 || B != 0; }
  template <typename T> void at(int64_t M, T &S, T &Shift) const {
    double Sc = 1, Sh = 0;
    if (Bn) {
      auto V = [&](int I) { return double(Bn[I].data<const T>()[M]); };
      Sc = V(0) / std::sqrt(V(3) + Eps);
      Sh = V(1) - V(2) * Sc;
    }
    S = T(Sc * A);
    Shift = T(Sh * A + B);
  }
};

llvm::Error readAffine(const KernelContext &C, ChannelAffine &Aff) {
  Aff.A = C.N.getFloat("post_scale", 1);
  Aff.B = C.N.getFloat("post_shift", 0);
  if (C.Inputs.size() <= 4)
    return llvm::Error::success();
  if (C.Inputs.size() != 8)
    return C.badInput("a batch normalization needs inputs 4 to 7");
  const int64_t M = C.Outputs[0].Dims.size() > 1 ? C.Outputs[0].Dims[1] : 0;
  for (unsigned I = 4; I < 8; ++I)
    if (!C.Inputs[I].present() || C.Inputs[I].Type != C.Outputs[0].Type ||
        int64_t(C.Inputs[I].numElements()) != M)
      return C.badInput("batch normalization input " + llvm::Twine(I) +
                        " must hold one value per output channel (" +
                        llvm::Twine(M) + ")");
  Aff.Bn = &C.Inputs[4];
  Aff.Eps = C.N.getFloat("epsilon", 1e-5);
  return llvm::Error::success();
}

/// The epilogue on planes [P0, P1) (image * channels + channel) of Y,
/// columns [N0, N1) of each: act(y * S_m + T_m) with the affine, act(y)
/// without. Called by the conv as each tile of Y becomes final
/// (ConvTileFn), so that the epilogue reads it from cache.
template <typename T>
void epilogueTile(const Epilogue &E, const ChannelAffine &Aff,
                  const TensorRef &Y, int64_t P0, int64_t P1, int64_t N0,
                  int64_t N1) {
  const int64_t M = Y.Dims[1], Planes = Y.Dims[0] * M;
  const int64_t Size = Planes ? int64_t(Y.numElements()) / Planes : 0;
  const bool Affine = Aff.any();
  visitActivation(E.Act, [&](auto Tag) {
    constexpr Activation A = decltype(Tag)::value;
    for (int64_t P = P0; P < P1; ++P) {
      T *Row = Y.data<T>() + P * Size + N0;
      if (Affine) {
        T S, Shift;
        Aff.at<T>(P % M, S, Shift);
        affineActivateRun<A>(E, Row, N1 - N0, S, Shift);
      } else if (A != Activation::None) {
        activateRun<A>(E, Row, N1 - N0);
      }
    }
  });
}

llvm::Error runFusedConv(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 2))
    return E;
  Epilogue Ep;
  if (!readEpilogue(C.N, Ep))
    return C.unsupported("activation '" + C.N.getString("activation", "") +
                         "'");
  const TensorRef &Y = C.Outputs[0];
  ChannelAffine Aff;
  if (llvm::Error E = readAffine(C, Aff))
    return E;
  const bool Residual = hasInput(C, 3);
  if (Residual && Aff.any())
    return C.badInput("a residual and a channel affine together (the "
                      "fusion never makes one)");
  if (Residual) {
    const TensorRef &R = C.Inputs[3];
    if (R.Type != Y.Type || R.Dims != Y.Dims)
      return C.badInput("the residual's type or dims differ from the output's");
    if (R.Data != Y.Data)
      std::memcpy(Y.Data, R.Data, Y.bytes());
  }
  if (Y.Dims.size() < 3)
    return C.badInput("the output has no channel axis");
  auto Post = [&](int64_t P0, int64_t P1, int64_t N0, int64_t N1) {
    if (Y.Type == ElementType::Double)
      epilogueTile<double>(Ep, Aff, Y, P0, P1, N0, N1);
    else
      epilogueTile<float>(Ep, Aff, Y, P0, P1, N0, N1);
  };
  const bool Any = Aff.any() || Ep.Act != Activation::None;
  // Relu and Clip alone are a clamp that convGemm applies as it stores a
  // tile (4% of MobileNetV2's run was the Clip pass over each tile).
  ConvClamp Clamp{0.0f, std::numeric_limits<float>::infinity()};
  if (Ep.Act == Activation::Clip)
    Clamp = {float(Ep.Min), float(Ep.Max)};
  const bool IsClamp =
      !Aff.any() && (Ep.Act == Activation::Relu || Ep.Act == Activation::Clip);
  return runConvInto(C, Residual, Any ? ConvTileFn(Post) : ConvTileFn(),
                     IsClamp ? &Clamp : nullptr);
}

} // namespace

void registerFusedConvKernel(CPUKernelTable &T) {
  Kernel K{&runFusedConv, &fusedConvWorkspace, floatTypes()};
  K.Features.push_back(fused::ConvAffineFeature);
  K.RoomyWorkspace = &convRoomyWorkspaceBytes;
  K.RoomierWorkspace = &convRoomierWorkspaceBytes;
  addKernel(T, fused::ConvOp, K);
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
