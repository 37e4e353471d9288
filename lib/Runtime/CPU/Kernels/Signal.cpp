//===- Signal.cpp - CPU kernels: windows, STFT, MelWeightMatrix -----------===//
//
// The signal-processing ops of opset 17 besides DFT: the Hann, Hamming and
// Blackman windows (periodic or symmetric), STFT (windowed frames, each
// transformed by the direct DFT sum in double: DFTPoint.h, shared with the
// CUDA kernel) and MelWeightMatrix (the
// triangular filter bank, computed as ONNX's reference does, including its
// integer bin rounding). Sizes come from the output refs; the scalar inputs
// give the values.
//
//===----------------------------------------------------------------------===//
#include "../CPUKernels.h"
#include "TensorUtil.h"
#include <cmath>

namespace oomplan {
namespace runtime {
namespace cpu {

namespace {

const double Pi = 3.14159265358979323846;

/// Stores V at element I of a float or double output.
void storeReal(const TensorRef &Out, uint64_t I, double V) {
  if (Out.Type == ElementType::Double)
    Out.data<double>()[I] = V;
  else
    Out.data<float>()[I] = float(V);
}

bool isReal(ElementType T) {
  return T == ElementType::Float || T == ElementType::Double;
}

llvm::Error runWindow(const KernelContext &C) {
  const TensorRef &Y = C.Outputs[0];
  if (!isReal(Y.Type))
    return C.unsupported("a window of type " + elementTypeName(Y.Type));
  const int64_t N = int64_t(Y.numElements());
  const bool Periodic = C.N.getInt("periodic", 1) != 0;
  const double Den = Periodic ? double(N) : double(N - 1);
  for (int64_t I = 0; I < N; ++I) {
    const double A = Den > 0 ? 2 * Pi * double(I) / Den : 0;
    double V;
    if (C.N.OpType == "HannWindow")
      V = 0.5 - 0.5 * std::cos(A);
    else if (C.N.OpType == "HammingWindow")
      V = 25.0 / 46.0 - 21.0 / 46.0 * std::cos(A);
    else
      V = 0.42 - 0.5 * std::cos(A) + 0.08 * std::cos(2 * A);
    storeReal(Y, uint64_t(I), V);
  }
  return llvm::Error::success();
}

llvm::Error runSTFT(const KernelContext &C) {
  if (llvm::Error E = requireInputs(C, 1))
    return E;
  if (!hasInput(C, 1))
    return C.badInput("frame_step is required");
  dft::STFTParams S;
  if (llvm::Error E = stftParams(C, intAt(C.Inputs[1], 0),
                                 hasInput(C, 3) ? intAt(C.Inputs[3], 0) : 0, S))
    return E;
  for (int64_t Bi = 0; Bi < S.B; ++Bi)
    for (int64_t F = 0; F < S.Frames; ++F)
      for (int64_t K = 0; K < S.Bins; ++K) {
        double Re, Im;
        if (S.Double)
          dft::stftBin<double>(S, Bi, F, K, Re, Im);
        else
          dft::stftBin<float>(S, Bi, F, K, Re, Im);
        const uint64_t O = uint64_t(((Bi * S.Frames + F) * S.Bins + K) * 2);
        storeReal(C.Outputs[0], O, Re);
        storeReal(C.Outputs[0], O + 1, Im);
      }
  return llvm::Error::success();
}

llvm::Error runMelWeightMatrix(const KernelContext &C) {
  const TensorRef &Y = C.Outputs[0];
  if (C.Inputs.size() < 5 || Y.Dims.size() != 2)
    return C.badInput("needs five scalar inputs and a 2-D output");
  if (!isReal(Y.Type))
    return C.unsupported("output type " + elementTypeName(Y.Type));
  const int64_t Mel = intAt(C.Inputs[0], 0), Dft = intAt(C.Inputs[1], 0);
  const int64_t Rate = intAt(C.Inputs[2], 0);
  const double Lo = numberAt(C.Inputs[3], 0), Hi = numberAt(C.Inputs[4], 0);
  const int64_t Spec = Dft / 2 + 1;
  if (Y.Dims[0] != Spec || Y.Dims[1] != Mel || Rate <= 0)
    return C.badInput("output must be [dft_length/2 + 1, num_mel_bins]");
  // Mel points evenly spaced over num_mel_bins + 2 steps, then mapped back
  // to Hz and to (truncated) spectrogram bins, as the reference does.
  llvm::SmallVector<int64_t, 64> Bin(size_t(Mel + 2));
  const double LoMel = 2595 * std::log10(1 + Lo / 700);
  const double HiMel = 2595 * std::log10(1 + Hi / 700);
  const double StepMel = (HiMel - LoMel) / double(Mel + 2);
  for (int64_t I = 0; I < Mel + 2; ++I) {
    double Hz =
        700 * (std::pow(10.0, (double(I) * StepMel + LoMel) / 2595) - 1);
    Bin[size_t(I)] = int64_t(std::floor(double(Dft + 1) * Hz / double(Rate)));
  }
  for (uint64_t I = 0; I < Y.numElements(); ++I)
    storeReal(Y, I, 0);
  auto Set = [&](int64_t Row, int64_t Col, double V) {
    if (Row >= 0 && Row < Spec)
      storeReal(Y, uint64_t(Row * Mel + Col), V);
  };
  for (int64_t I = 0; I < Mel; ++I) {
    const int64_t L = Bin[size_t(I)], Cn = Bin[size_t(I + 1)],
                  R = Bin[size_t(I + 2)];
    if (Cn == L)
      Set(Cn, I, 1);
    else
      for (int64_t J = L; J <= Cn; ++J)
        Set(J, I, double(J - L) / double(Cn - L));
    if (R > Cn)
      for (int64_t J = Cn; J < R; ++J)
        Set(J, I, double(R - J) / double(R - Cn));
  }
  return llvm::Error::success();
}

} // namespace

void registerSignalKernels(CPUKernelTable &T) {
  for (const char *Op : {"HannWindow", "HammingWindow", "BlackmanWindow"})
    addKernel(T, Op, Kernel{&runWindow, nullptr, {}});
  addKernel(T, "STFT", Kernel{&runSTFT, nullptr, floatTypes()});
  addKernel(T, "MelWeightMatrix", Kernel{&runMelWeightMatrix, nullptr, {}});
}

llvm::Error stftParams(const KernelContext &C, int64_t Step,
                       int64_t FrameLength, dft::STFTParams &S) {
  const TensorRef &X = C.Inputs[0], &Y = C.Outputs[0];
  if (X.Dims.size() != 3 || Y.Dims.size() != 4 || Y.Dims[3] != 2 ||
      (X.Dims[2] != 1 && X.Dims[2] != 2))
    return C.badInput("signal must be [batch, length, 1 or 2]");
  if (!isReal(X.Type) || X.Type != Y.Type)
    return C.unsupported("STFT of type " + elementTypeName(X.Type));
  const TensorRef *Win = hasInput(C, 2) ? &C.Inputs[2] : nullptr;
  if (Win && Win->Type != X.Type)
    return C.badInput("the window must be of the signal's type");
  S = dft::STFTParams();
  S.Len = Win ? int64_t(Win->numElements()) : FrameLength;
  S.B = X.Dims[0], S.SigLen = X.Dims[1], S.Comp = X.Dims[2];
  S.Frames = Y.Dims[1], S.Bins = Y.Dims[2];
  S.Step = Step;
  if (S.Step <= 0 || S.Len <= 0 ||
      (S.Frames > 0 && (S.Frames - 1) * S.Step + S.Len > S.SigLen))
    return C.badInput("frames run past the signal");
  S.Double = X.Type == ElementType::Double;
  S.X = X.Data;
  S.Win = Win ? Win->Data : nullptr;
  S.Y = Y.Data;
  return llvm::Error::success();
}

} // namespace cpu
} // namespace runtime
} // namespace oomplan
