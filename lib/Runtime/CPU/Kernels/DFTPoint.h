//===- DFTPoint.h - one bin of DFT and STFT, in plain types -----*- C++ -*-===//
//
// The direct O(n^2) sums of DFT (one axis of a real [..., 1] or complex
// [..., 2] signal; dft_length pads with zeros or truncates; inverse divides
// by the length) and STFT (windowed frames of a [batch, length, 1 or 2]
// signal), one output bin at a time, in double. Shared by the CPU kernels
// (DFT.cpp, Signal.cpp) and the CUDA kernel (CUDA/Kernels/Signal.cu,
// compiled without contraction; the device's cos and sin may differ from
// the host's in the last bit of a double).
//
//===----------------------------------------------------------------------===//
#ifndef OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DFTPOINT_H
#define OOMPLAN_LIB_RUNTIME_CPU_KERNELS_DFTPOINT_H

#include <cmath>
#include <cstdint>

#ifdef __CUDACC__
#define OOMPLAN_DFT_HD __host__ __device__
#else
#define OOMPLAN_DFT_HD
#endif

namespace oomplan {
namespace runtime {
namespace dft {

constexpr double Pi = 3.14159265358979323846;

/// DFT of X [Outer, InLen, InInner] along the middle axis into Y [Outer,
/// OutLen, OutInner]; Points signal positions per sample, Last (1 or 2)
/// values each in X, 2 in Y.
struct Params {
  const void *X = nullptr;
  void *Y = nullptr;
  bool Double = false, Inverse = false;
  int64_t Outer = 0, Points = 0, InLen = 0, OutLen = 0, InInner = 0,
          OutInner = 0, Last = 1, Len = 0;
};

/// Bin K of position P of sample O: its real and imaginary parts.
template <typename T>
OOMPLAN_DFT_HD inline void bin(const Params &D, int64_t O, int64_t P, int64_t K,
                               double &Re, double &Im) {
  const double Sign = D.Inverse ? 1 : -1;
  Re = 0, Im = 0;
  const int64_t Count = D.InLen < D.Len ? D.InLen : D.Len;
  for (int64_t N = 0; N < Count; ++N) {
    const T *S = static_cast<const T *>(D.X) + (O * D.InLen + N) * D.InInner +
                 P * D.Last;
    const double A = double(S[0]), B = D.Last == 2 ? double(S[1]) : 0.0;
    const double Ang = Sign * 2 * Pi * double(K) * double(N) / double(D.Len);
    const double Cs = cos(Ang), Sn = sin(Ang);
    Re += A * Cs - B * Sn;
    Im += A * Sn + B * Cs;
  }
  if (D.Inverse) {
    Re /= double(D.Len);
    Im /= double(D.Len);
  }
}

/// Where bin K of position P of sample O goes in Y (its real part; the
/// imaginary part follows).
OOMPLAN_DFT_HD inline int64_t binAt(const Params &D, int64_t O, int64_t P,
                                    int64_t K) {
  return (O * D.OutLen + K) * D.OutInner + P * 2;
}

/// STFT of X [B, SigLen, Comp] into Y [B, Frames, Bins, 2]: frame F starts
/// at F * Step and is Len long, times Win (Len values of X's type, or none).
struct STFTParams {
  const void *X = nullptr, *Win = nullptr;
  void *Y = nullptr;
  bool Double = false;
  int64_t B = 0, SigLen = 0, Comp = 1, Frames = 0, Bins = 0, Step = 1, Len = 0;
};

template <typename T>
OOMPLAN_DFT_HD inline void stftBin(const STFTParams &S, int64_t Bi, int64_t F,
                                   int64_t K, double &Re, double &Im) {
  const T *X = static_cast<const T *>(S.X);
  const T *W = static_cast<const T *>(S.Win);
  Re = 0, Im = 0;
  for (int64_t N = 0; N < S.Len; ++N) {
    const int64_t At = ((Bi * S.SigLen) + F * S.Step + N) * S.Comp;
    const double Wt = W ? double(W[N]) : 1.0;
    const double A = double(X[At]) * Wt,
                 Bv = S.Comp == 2 ? double(X[At + 1]) * Wt : 0.0;
    const double Ang = -2 * Pi * double(K) * double(N) / double(S.Len);
    Re += A * cos(Ang) - Bv * sin(Ang);
    Im += A * sin(Ang) + Bv * cos(Ang);
  }
}

} // namespace dft
} // namespace runtime
} // namespace oomplan

#endif
